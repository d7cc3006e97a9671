# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Job judgement rules: from a job's log events (job_log) to what happened to it, who was involved, and which nodes the
node diagnosis (gpu, xid, rdma) must look at. Pure functions; the checks are cluster checks (host ``cluster``).

``job.scheduler.state``   the job's state: FAILED / NODE_FAIL / TIMEOUT / OUT_OF_MEMORY / BOOT_FAIL fail; a requeued
                          job waiting to restart warn; RUNNING, COMPLETED pass.
``job.nccl.timeout``      PyTorch's NCCL watchdog timed out a collective: fail + investigate, with the ranks, the
                          operation, its sequence number and the timeout.
``job.nccl.error``        ``NCCL WARN`` lines and NCCL errors by class (system, internal, remote, cuda, usage); an IB
                          work completion error names its status (IBV_WC_RETRY_EXC_ERR...), the host that saw it and
                          the peer: fail + investigate (the rdma checks of the named nodes say cable or optic).
``job.cuda.ecc``          an uncorrectable ECC error: fail + reset_gpu (the gpu and xid checks of the job's nodes).
``job.cuda.error``        any other CUDA error (an Xid in it is named): fail + investigate.
``job.memory.oom``        CUDA out of memory: fail + restart_app (the job's batch or parallelism, not the node).
``job.progress.hang``     the job runs and its log has been silent longer than ``hang_after_s`` (default 1800 s, the
                          NCCL watchdog's default): fail + investigate on all its nodes.
``job.log.signature``     pass when the log holds none of these (with the number of lines read).

``suspects``: inventory hosts to hand to the node diagnosis - the hosts the NCCL lines name (the one that saw the
error and its peer, mapped through ``hostmap``: address or scheduler name -> inventory host), else the job's nodes.
"""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check

HANG_AFTER_S = 1800
FAILED_STATES = ("FAILED", "NODE_FAIL", "TIMEOUT", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE")
ORDER = ("nccl_timeout", "ib_completion", "nccl_error", "nccl_warn", "ecc", "xid", "cuda_error", "oom", "hang")
WORDS = {"nccl_timeout": "an NCCL timeout", "ib_completion": "an InfiniBand completion error",
         "nccl_error": "an NCCL error", "nccl_warn": "an NCCL warning", "ecc": "an uncorrectable ECC error",
         "xid": "a GPU Xid", "cuda_error": "a CUDA error", "oom": "CUDA out of memory", "hang": "a hang (no log progress)"}


def _map_host(name, hostmap):
    if not name:
        return None
    name = str(name).split("%", 1)[0]
    return hostmap.get(name) or hostmap.get(name.split(".", 1)[0])


def _lines(events, limit=6):
    return "\n".join("line %s: %s" % (e.get("line"), e.get("text")) for e in events[:limit])


def _involved(events, hostmap):
    """(hosts named by the lines mapped to inventory hosts, texts 'host -> peer' for the message)."""
    hosts, pairs = [], []
    for event in events:
        seen = _map_host(event.get("host"), hostmap)
        peer = _map_host(event.get("peer"), hostmap)
        for host in (seen, peer):
            if host and host not in hosts:
                hosts.append(host)
        if event.get("host") or event.get("peer"):
            pairs.append("%s%s%s" % (seen or event.get("host") or "?", " -> peer ", peer or event.get("peer"))
                         if event.get("peer") else (seen or event.get("host")))
    return hosts, sorted(set(pairs))


def judge_job(facts, thresholds=None, hostmap=None):
    """``(checks, summary)`` for one job's facts (job_log's ``job``)."""
    thresholds = thresholds or {}
    hostmap = dict(hostmap or {})
    hang_after = thresholds.get("hang_after_s", HANG_AFTER_S)
    job_id = facts.get("id")
    comp = "job %s%s" % (job_id, " (%s)" % facts["name"] if facts.get("name") else "")
    events = facts.get("events") or []
    by_kind = {}
    for event in events:
        by_kind.setdefault(event.get("kind"), []).append(event)
    nodes = [_map_host(n, hostmap) or n for n in facts.get("nodes") or []]
    checks = []
    state = facts.get("state") or "UNKNOWN"
    if state in FAILED_STATES:
        checks.append(make_check("job.scheduler.state", "cluster", "fail", comp, state, "RUNNING or COMPLETED",
                                 "%s ended %s (exit %s) on %s" % (comp, state, facts.get("exit_code"), ", ".join(nodes) or "no node"),
                                 remedy="investigate", evidence="state %s, reason %s" % (state, facts.get("reason"))))
    elif state == "PENDING" and facts.get("restarts"):
        checks.append(make_check("job.scheduler.state", "cluster", "warn", comp, state, "RUNNING",
                                 "%s was requeued %s time(s) and waits to run again" % (comp, facts["restarts"]),
                                 remedy="monitor"))
    else:
        checks.append(make_check("job.scheduler.state", "cluster", "pass", comp, state, "RUNNING or COMPLETED",
                                 "%s is %s" % (comp, state)))
    suspects = []
    kinds = []
    timeouts = by_kind.get("nccl_timeout", [])
    net = by_kind.get("ib_completion", []) + by_kind.get("nccl_error", []) + by_kind.get("nccl_warn", [])
    net_hosts, pairs = _involved(net, hostmap)
    if timeouts:
        kinds.append("nccl_timeout")
        ranks = sorted(set(e["rank"] for e in timeouts if e.get("rank") is not None))
        first = timeouts[0]
        where = (" The NCCL lines name %s." % "; ".join(pairs)) if pairs else ""
        checks.append(make_check(
            "job.nccl.timeout", "cluster", "fail", comp, "%d rank(s) timed out" % len(ranks or timeouts),
            "no collective timeout",
            "%s hung on an NCCL timeout: rank(s) %s, %s SeqNum=%s after %s ms (timeout %s ms).%s"
            % (comp, ", ".join(str(r) for r in ranks) or "?", first.get("op"), first.get("seq"), first.get("ran_ms"),
               first.get("timeout_ms"), where), remedy="investigate", evidence=_lines(timeouts + net)))
        suspects += net_hosts
    if net:
        classes = sorted(set(e.get("error_class") or "unknown" for e in net))
        kinds.append(net[0]["kind"])
        ib = by_kind.get("ib_completion", []) + [e for e in by_kind.get("nccl_error", []) if e.get("status") is not None]
        detail = ""
        if ib:
            first = ib[0]
            detail = " IB work completion status %s (%s)%s." % (first.get("status"), first.get("status_name"),
                                                                ": " + first["meaning"] if first.get("meaning") else "")
        checks.append(make_check(
            "job.nccl.error", "cluster", "fail", comp, ", ".join(classes), "no NCCL error",
            "%s: NCCL %s error(s) between %s.%s Run the rdma and gpu checks on these nodes"
            % (comp, "/".join(classes), "; ".join(pairs) or "unnamed hosts", detail), remedy="investigate",
            evidence=_lines(net)))
        suspects += [h for h in net_hosts if h not in suspects]
    ecc = by_kind.get("ecc", [])
    if ecc:
        kinds.append("ecc")
        checks.append(make_check(
            "job.cuda.ecc", "cluster", "fail", comp, "uncorrectable ECC", "no ECC error",
            "%s stopped on an uncorrectable ECC error (rank %s): reset the GPU; the gpu and xid checks of %s name it"
            % (comp, ", ".join(sorted(set(str(e["rank"]) for e in ecc if e.get("rank") is not None))) or "?",
               ", ".join(nodes) or "its nodes"), remedy="reset_gpu", evidence=_lines(ecc)))
        suspects += [n for n in nodes if n not in suspects]
    cuda = by_kind.get("xid", []) + by_kind.get("cuda_error", [])
    if cuda:
        kinds.append(cuda[0]["kind"])
        checks.append(make_check(
            "job.cuda.error", "cluster", "fail", comp, cuda[0].get("message"), "no CUDA error",
            "%s: CUDA error '%s'%s" % (comp, cuda[0].get("message"),
                                       " (Xid %s)" % cuda[0]["code"] if cuda[0].get("code") is not None else ""),
            remedy="investigate", evidence=_lines(cuda)))
        suspects += [n for n in nodes if n not in suspects]
    if by_kind.get("oom"):
        kinds.append("oom")
        checks.append(make_check(
            "job.memory.oom", "cluster", "fail", comp, "CUDA out of memory", "no OOM",
            "%s ran out of GPU memory: a job setting (batch size, sequence length, parallelism), not a node fault"
            % comp, remedy="restart_app", evidence=_lines(by_kind["oom"])))
    silent = facts.get("silent_s")
    if facts.get("running") and silent is not None and hang_after is not None and silent > hang_after:
        kinds.append("hang")
        checks.append(make_check(
            "job.progress.hang", "cluster", "fail", comp, "%s s without a log line" % int(silent), "<= %s s" % hang_after,
            "%s runs but its log has been silent for %s s (last line at %s): it hangs; check its nodes %s"
            % (comp, int(silent), facts.get("last_write"), ", ".join(nodes)), remedy="investigate",
            evidence="last lines:\n" + "\n".join((facts.get("tail") or [])[-5:])))
        suspects += [n for n in nodes if n not in suspects]
    if not kinds:
        checks.append(make_check("job.log.signature", "cluster", "pass", comp, "none", "none",
                                 "no failure signature in the %s lines of %s's log" % (facts.get("lines") or 0, comp)))
    primary = next((kind for kind in ORDER if kind in kinds), None)
    summary = {"id": job_id, "name": facts.get("name"), "state": state, "classification": primary,
               "classification_text": WORDS.get(primary, "no failure signature"), "kinds": kinds,
               "ranks": facts.get("ranks") or [], "hosts": facts.get("hosts") or [], "peers": facts.get("peers") or [],
               "nodes": nodes, "suspects": suspects}
    return checks, summary


def collect_error(family, tool, host, collected):
    """The one ``error`` check of a collect task that failed (the k8s/slurm/job collectors run on the controller)."""
    msg = (collected or {}).get("msg") or "the collect task failed without a message"
    return make_check("%s.collect.%s" % (family, tool.replace("-", "_")), host, "error", component=tool,
                      observed=((collected or {}).get("error_kind") or "failed").replace("_", " "),
                      expected="%s answers with readable output" % tool, message=msg, remedy="investigate",
                      evidence="\n".join("%s: %s" % (k, str(collected.get(k))[:300]) for k in ("cmd", "rc", "stderr")
                                         if (collected or {}).get(k) not in (None, "")))
