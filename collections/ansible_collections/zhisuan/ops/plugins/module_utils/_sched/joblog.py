# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""A training job's log, read into events: pure parsers, standard library only.

The lines this reads are the ones PyTorch, NCCL and CUDA print (tests/fixtures/joblog holds real ones with where each
came from):

* ``[rank1]:[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout:
  WorkNCCL(SeqNum=808, OpType=ALLREDUCE, ..., Timeout(ms)=600000) ran for 600020 milliseconds before timing out.``
  (and the older ``[E ProcessGroupNCCL.cpp:458] [Rank 0] Watchdog ...``) -> ``nccl_timeout``;
* ``host:pid:tid [dev] file.cc:line NCCL WARN <text>`` -> ``nccl_warn`` (the host is the one that printed it); a
  ``NET/IB : Got completion from peer <addr><port> with error 12`` (or ``status=12``) inside it -> ``ib_completion``
  with the work completion status by name (ibv_wc_status) and the peer's address;
* ``NCCL error ...: unhandled system error`` / ``internal error`` / ``remote process exited or there was a network
  error`` / ``unhandled cuda error`` / ``invalid usage`` -> ``nccl_error`` with its class (system, internal, remote,
  cuda, usage);
* ``CUDA error: <text>`` -> ``cuda_error``; an uncorrectable ECC error -> ``ecc``; ``CUDA out of memory`` -> ``oom``;
  ``Xid`` in a CUDA error text -> ``xid``;
* a CUDA out of memory NCCL reports (``NCCL WARN Cuda failure 'out of memory'``, ``NCCL WARN Failed to CUDA calloc
  N bytes``, ``unhandled cuda error ... Cuda failure 'out of memory'``) -> ``oom`` with the host that printed it (not
  an NCCL warning: the job's memory, not the node);
* NCCL's RAS report (NCCL 2.24+, ``ncclras`` or the job's own output): ``The outlier node:`` / ``Node <addr>
  running processes <pids>`` -> ``ras_outlier``; in an ``INCOMPLETE`` / ``MISMATCH`` block (``#0-0 (hash) STATUS``
  or the job-level ``INCOMPLETE``), ``Rank N -- GPU g managed by process p on node <addr>`` -> ``ras_rank`` and
  ``Process p on node <addr> managing GPU g`` -> ``ras_process``, each with the block's status; a communicator
  group row whose ``Errors`` column is not ``OK`` -> ``ras_group``.

``parse_log(text)`` returns ``{"lines": n, "events": [...], "ranks": [...], "hosts": [...], "peers": [...]}``.
Every event is ``{kind, line (1-based), text (the line, clipped), rank, host, peer, ...}``; a line matches at most one
event kind, the most specific.
"""

import re

MAX_TEXT = 400
MAX_EVENTS = 500

# ibv_wc_status (libibverbs verbs.h): what a work completion's status number means
WC_STATUS = {
    0: "IBV_WC_SUCCESS", 1: "IBV_WC_LOC_LEN_ERR", 2: "IBV_WC_LOC_QP_OP_ERR", 3: "IBV_WC_LOC_EEC_OP_ERR",
    4: "IBV_WC_LOC_PROT_ERR", 5: "IBV_WC_WR_FLUSH_ERR", 6: "IBV_WC_MW_BIND_ERR", 7: "IBV_WC_BAD_RESP_ERR",
    8: "IBV_WC_LOC_ACCESS_ERR", 9: "IBV_WC_REM_INV_REQ_ERR", 10: "IBV_WC_REM_ACCESS_ERR", 11: "IBV_WC_REM_OP_ERR",
    12: "IBV_WC_RETRY_EXC_ERR", 13: "IBV_WC_RNR_RETRY_EXC_ERR", 14: "IBV_WC_LOC_RDD_VIOL_ERR",
    15: "IBV_WC_REM_INV_RD_REQ_ERR", 16: "IBV_WC_REM_ABORT_ERR", 17: "IBV_WC_INV_EECN_ERR",
    18: "IBV_WC_INV_EEC_STATE_ERR", 19: "IBV_WC_FATAL_ERR", 20: "IBV_WC_RESP_TIMEOUT_ERR", 21: "IBV_WC_GENERAL_ERR",
}
# what each status usually says about the fabric (NCCL troubleshooting guide: 12 = the peer's port or the link is gone)
WC_MEANING = {
    12: "transport retry counter exceeded: the peer did not acknowledge (its port or link down, or a fabric fault)",
    13: "receiver-not-ready retries exceeded: the peer process is stuck or gone",
    5: "work request flushed: the queue pair went to error after an earlier failure",
    4: "local protection error: a memory registration problem on this host",
    10: "remote access error: the peer refused the access (memory registration or key)",
}

_RANK_PREFIX = re.compile(r"^\[rank(?P<rank>\d+)\]:|\[(?:PG [^\]]*)?Rank (?P<rank2>\d+)\]")
_WATCHDOG = re.compile(
    r"\[Rank (?P<rank>\d+)\] Watchdog caught collective operation timeout: WorkNCCL\((?P<work>.*?)\) ran for "
    r"(?P<ran>\d+) milliseconds")
_WORK_FIELD = re.compile(r"(\w+(?:\(ms\))?)=([^,\s)]+)")
_NCCL_LINE = re.compile(
    r"^\s*(?P<host>[A-Za-z0-9][\w.-]*):(?P<pid>\d+):(?P<tid>\d+)\s+\[(?P<dev>\d+)\]\s+(?:(?P<src>\S+:\d+)\s+)?"
    r"NCCL (?P<level>WARN|INFO|ERROR) (?P<msg>.*)$")
_IB_COMPLETION = re.compile(
    r"NET/IB ?: Got completion from peer (?P<peer>\S+?)<(?P<port>\d+)> with (?:error (?P<err>\d+)|status=(?P<st>\d+))"
    r"(?:.*?vendor err (?P<vendor>\d+))?(?: \((?P<dir>Send|Recv)\))?")
_NCCL_ERROR = re.compile(
    r"NCCL error[^,]*,? (?P<what>unhandled system error|internal error|remote process exited or there was a network "
    r"error|unhandled cuda error|invalid usage|invalid argument)", re.IGNORECASE)
_NCCL_CLASS = {"unhandled system error": "system", "internal error": "internal",
               "remote process exited or there was a network error": "remote", "unhandled cuda error": "cuda",
               "invalid usage": "usage", "invalid argument": "usage"}
# ncclResult_t: the code NCCL's INFO trace prints after "->" and a proxy's "retcode"
NCCL_RESULT = {1: "cuda", 2: "system", 3: "internal", 4: "usage", 5: "usage", 6: "remote", 7: "in_progress"}
_RET = re.compile(r"(?:-> |retcode )(?P<code>\d)\b")
_CUDA_ERROR = re.compile(r"CUDA error: (?P<what>[^\n.]+)")
_OOM = re.compile(r"CUDA out of memory|OutOfMemoryError|Cuda failure (?:\d+ )?'out of memory'")
# NCCL's own words for a CUDA allocation that failed (include/alloc.h): the job's memory, not an NCCL fault
_NCCL_OOM = re.compile(r"Cuda failure (?:\d+ )?'out of memory'|Failed to CUDA [cm]alloc|cudaErrorMemoryAllocation")
# NCCL RAS report (src/ras/client_support.cc): the lines that name a process, a rank or a node
_RAS_OUTLIER_HEAD = re.compile(r"^\s*The outlier nodes?:\s*$")
_RAS_NODE = re.compile(r"^\s+Node (?P<host>\S+) running process(?:es)? (?P<pids>[\d,]+)\s*$")
_RAS_BLOCK = re.compile(r"^\s*#(?P<group>\d+)-(?P<comm>\d+) \((?P<hash>[0-9a-fA-F]+)\) (?P<status>[A-Z][A-Z_,]*)\s*$")
_RAS_TOP = re.compile(r"^(?P<status>INCOMPLETE|MISMATCH|ERROR|TIMEOUT)\s*$")
_RAS_RANK = re.compile(r"^\s+Rank (?P<rank>\d+) -- GPU (?P<gpu>\d+) managed by process (?P<pid>\d+) on node "
                       r"(?P<host>\S+)\s*$")
_RAS_PROCESS = re.compile(r"^\s+Process (?P<pid>\d+) on node (?P<host>\S+) managing GPUs? (?P<gpu>[\d,]+)\s*$")
_RAS_GROUP = re.compile(r"^\s*(?P<group>\d+)(?:\s+\d+){5}\s+(?P<state>[A-Z]+)\s+(?P<errors>[A-Z][A-Z_,]*)\s*$")
_RAS_DETAIL = re.compile(r"^\s+(?P<detail>Missing communicator data from .*|Communicator ranks have .*|"
                         r"\d+ ranks? ha(?:s|ve) .*)$")
_ECC = re.compile(r"uncorrectable ECC error", re.IGNORECASE)
_XID = re.compile(r"\bXid\b[^0-9]*(?P<code>\d+)", re.IGNORECASE)
_ADDR_PEER = re.compile(r"(?:Connect to|from|peer) (?P<peer>[0-9A-Fa-f:.%\w-]+?)<(?P<port>\d+)>")
_TORCH_GPU = re.compile(r"GPU (?P<gpu>\d+) has a total capacit")


def _clip(line):
    return line if len(line) <= MAX_TEXT else line[:MAX_TEXT] + "..."


def _work(text):
    fields = dict(_WORK_FIELD.findall(text))
    out = {"op": fields.get("OpType"), "seq": None, "timeout_ms": None}
    for key, name in (("SeqNum", "seq"), ("Timeout(ms)", "timeout_ms")):
        value = fields.get(key)
        if value is not None and value.isdigit() and len(value) < 19:
            out[name] = int(value)
    return out


def _int(text):
    return int(text) if text is not None and text.isdigit() and len(text) < 19 else None


def classify_line(line):
    """The event a line is, or None. Pure; never raises on any text."""
    rank_prefix = _RANK_PREFIX.search(line)
    rank = _int(rank_prefix.group("rank") or rank_prefix.group("rank2")) if rank_prefix else None
    match = _WATCHDOG.search(line)
    if match:
        event = {"kind": "nccl_timeout", "rank": _int(match.group("rank")), "ran_ms": _int(match.group("ran"))}
        event.update(_work(match.group("work")))
        return event
    nccl = _NCCL_LINE.match(line)
    if nccl:
        msg = nccl.group("msg")
        if nccl.group("level") != "INFO" and _NCCL_OOM.search(msg):
            return {"kind": "oom", "rank": rank, "gpu": None, "host": nccl.group("host"),
                    "device": _int(nccl.group("dev")), "source": nccl.group("src"),
                    "thread": "%s:%s:%s" % (nccl.group("host"), nccl.group("pid"), nccl.group("tid"))}
        ib = _IB_COMPLETION.search(msg)
        if ib:
            status = _int(ib.group("err") or ib.group("st"))
            return {"kind": "ib_completion", "host": nccl.group("host"), "device": _int(nccl.group("dev")),
                    "thread": "%s:%s:%s" % (nccl.group("host"), nccl.group("pid"), nccl.group("tid")), "error_class": "remote",
                    "peer": ib.group("peer"), "status": status, "status_name": WC_STATUS.get(status),
                    "vendor_err": _int(ib.group("vendor")), "direction": ib.group("dir"),
                    "meaning": WC_MEANING.get(status)}
        ret = _RET.search(msg)
        thread = "%s:%s:%s" % (nccl.group("host"), nccl.group("pid"), nccl.group("tid"))
        if nccl.group("level") == "INFO":
            # the result code NCCL passes up after a WARN: it names the WARN's class (parse_log joins them)
            return {"kind": "_result", "thread": thread, "code": _int(ret.group("code"))} if ret else None
        peer = _ADDR_PEER.search(msg)
        return {"kind": "nccl_warn", "host": nccl.group("host"), "device": _int(nccl.group("dev")), "thread": thread,
                "source": nccl.group("src"), "message": _clip(msg), "peer": peer.group("peer") if peer else None,
                "error_class": NCCL_RESULT.get(_int(ret.group("code"))) if ret else None}
    error = _NCCL_ERROR.search(line)
    if error and _NCCL_OOM.search(line):
        return {"kind": "oom", "rank": rank, "gpu": None}
    if error:
        event = {"kind": "nccl_error", "rank": rank, "error_class": _NCCL_CLASS.get(error.group("what").lower(), "other")}
        ib = _IB_COMPLETION.search(line)
        if ib:
            status = _int(ib.group("err") or ib.group("st"))
            event.update(peer=ib.group("peer"), status=status, status_name=WC_STATUS.get(status),
                         meaning=WC_MEANING.get(status))
        return event
    if _ECC.search(line):
        return {"kind": "ecc", "rank": rank}
    if _OOM.search(line):
        gpu = _TORCH_GPU.search(line)
        return {"kind": "oom", "rank": rank, "gpu": _int(gpu.group("gpu")) if gpu else None}
    cuda = _CUDA_ERROR.search(line)
    if cuda:
        xid = _XID.search(cuda.group("what"))
        if xid:
            return {"kind": "xid", "rank": rank, "code": _int(xid.group("code")), "message": _clip(cuda.group("what"))}
        return {"kind": "cuda_error", "rank": rank, "message": _clip(cuda.group("what").strip())}
    return None


class _Ras(object):
    """The context of a RAS report's lines: which block (and its status) a ``Rank``/``Process`` line belongs to."""

    def __init__(self):
        self.status = None
        self.block = None
        self.outlier = False
        self.detail = None

    def classify(self, line):
        """The RAS event of a line, or None (and the context updated). Pure on the line and the context."""
        if not line.strip():
            self.outlier = False
            self.status = self.block = self.detail = None
            return None
        if _RAS_OUTLIER_HEAD.match(line):
            self.outlier = True
            return None
        if self.outlier:
            node = _RAS_NODE.match(line)
            if node:
                return {"kind": "ras_outlier", "host": node.group("host"),
                        "pids": [int(p) for p in node.group("pids").split(",") if p.isdigit() and len(p) < 12]}
            self.outlier = False
        block = _RAS_BLOCK.match(line)
        if block:
            self.status, self.block, self.detail = block.group("status"), "#%s-%s" % (
                block.group("group"), block.group("comm")), None
            return None
        top = _RAS_TOP.match(line)
        if top:
            self.status, self.block, self.detail = top.group("status"), "job", None
            return None
        group = _RAS_GROUP.match(line)
        if group:
            errors = [e for e in group.group("errors").split(",") if e]
            if errors and errors != ["OK"]:
                return {"kind": "ras_group", "group": _int(group.group("group")), "state": group.group("state"),
                        "errors": errors}
            return None
        if self.status is None:
            return None
        detail = _RAS_DETAIL.match(line)
        if detail:
            self.detail = detail.group("detail")[:200] if self.detail is None else self.detail
            return None
        rank = _RAS_RANK.match(line)
        if rank:
            return {"kind": "ras_rank", "rank": _int(rank.group("rank")), "gpu": _int(rank.group("gpu")),
                    "pid": _int(rank.group("pid")), "host": rank.group("host"), "status": self.status,
                    "block": self.block, "detail": self.detail}
        process = _RAS_PROCESS.match(line)
        if process:
            return {"kind": "ras_process", "pid": _int(process.group("pid")), "host": process.group("host"),
                    "gpu": _int(process.group("gpu").split(",")[0]), "status": self.status, "block": self.block,
                    "detail": self.detail}
        return None


def parse_log(text):
    """A job's log text -> ``{lines, events, ranks, hosts, peers, truncated}`` (events in log order, at most
    MAX_EVENTS; ``truncated`` counts those left out)."""
    text = text if isinstance(text, str) else ""
    events = []
    truncated = 0
    lines = text.splitlines()
    last_warn = {}
    ras = _Ras()
    for number, line in enumerate(lines, 1):
        event = ras.classify(line) or classify_line(line)
        if event is None:
            continue
        if event["kind"] == "_result":
            warn = last_warn.pop(event["thread"], None)
            if warn is not None and warn.get("error_class") is None and warn["kind"] != "oom":
                warn["error_class"] = NCCL_RESULT.get(event["code"])
            continue
        if event["kind"] in ("nccl_warn", "ib_completion") or (event["kind"] == "oom" and event.get("thread")):
            # the result code after a WARN belongs to that WARN (an OOM's '-> 1' is the OOM's, not the next WARN's)
            last_warn[event.get("thread") or event.get("host")] = event
        if len(events) >= MAX_EVENTS:
            truncated += 1
            continue
        event["line"] = number
        event["text"] = _clip(line)
        events.append(event)
    ranks = sorted(set(e["rank"] for e in events if e.get("rank") is not None))
    hosts = sorted(set(e["host"] for e in events if e.get("host")))
    peers = sorted(set(e["peer"] for e in events if e.get("peer")))
    return {"lines": len(lines), "events": events, "ranks": ranks, "hosts": hosts, "peers": peers,
            "truncated": truncated}
