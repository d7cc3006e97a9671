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
``job.memory.oom``        CUDA out of memory (PyTorch's, or NCCL's own ``Cuda failure 'out of memory'``): fail +
                          restart_app (the job's batch or parallelism, not the node). The NCCL warnings, errors and
                          watchdog timeouts of a job that ran out of memory are its consequences: they are still
                          reported, as warn + restart_app, and send no node to the node diagnosis (an IB work
                          completion error, an ECC error or an Xid still does).
``job.nccl.ras``          NCCL's RAS report: the outlier node it names and the processes/ranks an ``INCOMPLETE``
                          block misses (their nodes go to the node diagnosis); ``MISMATCH`` ranks are named (RAS lists
                          the minority, which may be ahead as well as behind: no node diagnosis). fail + investigate.
``job.sched.node_failures`` from ``sacct`` over a window (``accounting``): a node on which ``node_failures_max``
                          (default 3) or more jobs ended FAILED / NODE_FAIL / BOOT_FAIL / REQUEUED (Slurm's
                          ``failed_node`` when it names one, else every node of the job): fail + investigate, and it
                          goes to the node diagnosis; TIMEOUT and OUT_OF_MEMORY are counted and shown, never blamed
                          on the node. ``job.sched.accounting``: the window's counts per node (pass; warn when the
                          sacct output had lines it could not read).
``job.progress.hang``     the job runs and its log has been silent longer than ``hang_after_s`` (default 1800 s, the
                          NCCL watchdog's default): fail + investigate on all its nodes.
``job.log.signature``     pass when the log holds none of these (with the number of lines read).

``suspects``: inventory hosts to hand to the node diagnosis - the hosts the NCCL lines name (the one that saw the
error and its peer, mapped through ``hostmap``: address or scheduler name -> inventory host), else the job's nodes.
"""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check

HANG_AFTER_S = 1800
NODE_FAILURES_MAX = 3
FAILED_STATES = ("FAILED", "NODE_FAIL", "TIMEOUT", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE")
ORDER = ("nccl_timeout", "ib_completion", "nccl_error", "nccl_warn", "ras", "ecc", "xid", "cuda_error", "oom", "hang")
# what a job's OOM does not explain: these keep their own classification when both are in the log
NOT_OOM = ("ib_completion", "ecc", "xid")
# the sacct end states put on the node (the job's own TIMEOUT / OUT_OF_MEMORY / CANCELLED are not)
NODE_BLAMED = ("FAILED", "NODE_FAIL", "BOOT_FAIL", "REQUEUED")
WORDS = {"nccl_timeout": "an NCCL timeout", "ib_completion": "an InfiniBand completion error",
         "nccl_error": "an NCCL error", "nccl_warn": "an NCCL warning", "ras": "an NCCL RAS report naming a process",
         "ecc": "an uncorrectable ECC error",
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
                                 remedy="restart_app" if state == "OUT_OF_MEMORY" else "investigate",
                                 evidence="state %s, reason %s" % (state, facts.get("reason"))))
    elif state == "PENDING" and facts.get("restarts"):
        checks.append(make_check("job.scheduler.state", "cluster", "warn", comp, state, "RUNNING",
                                 "%s was requeued %s time(s) and waits to run again" % (comp, facts["restarts"]),
                                 remedy="monitor"))
    else:
        checks.append(make_check("job.scheduler.state", "cluster", "pass", comp, state, "RUNNING or COMPLETED",
                                 "%s is %s" % (comp, state)))
    suspects = []
    kinds = []
    oom = by_kind.get("oom", [])
    timeouts = by_kind.get("nccl_timeout", [])
    net = by_kind.get("ib_completion", []) + by_kind.get("nccl_error", []) + by_kind.get("nccl_warn", [])
    net_hosts, pairs = _involved(net, hostmap)
    if oom and not by_kind.get("ib_completion"):
        # the NCCL warnings, errors and timeouts of a job that ran out of memory follow from it: reported, with no node
        # sent to the node diagnosis for an application fault
        _consequences(checks, comp, oom, timeouts, net, pairs)
        kinds += ["nccl_timeout"] * bool(timeouts) + ([net[0]["kind"]] if net else [])
        timeouts, net, net_hosts = [], [], []
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
    ras_hosts = _ras(checks, comp, by_kind, hostmap)
    if ras_hosts is not None:
        kinds.append("ras")
        suspects += [h for h in ras_hosts if h not in suspects]
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
    if oom:
        kinds.append("oom")
        where = sorted(set(_map_host(e.get("host"), hostmap) or e["host"] for e in oom if e.get("host")))
        checks.append(make_check(
            "job.memory.oom", "cluster", "fail", comp, "CUDA out of memory", "no OOM",
            "%s ran out of GPU memory%s: a job setting (batch size, sequence length, parallelism), not a node fault"
            % (comp, " (on %s)" % ", ".join(where) if where else ""), remedy="restart_app", evidence=_lines(oom)))
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
    accounting_hosts = judge_accounting(checks, facts.get("accounting"), thresholds, hostmap)
    if facts.get("accounting_error"):
        checks.append(make_check("job.collect.sacct", "cluster", "error", "sacct", "not read",
                                 "sacct answers with readable accounting", str(facts["accounting_error"])[:400],
                                 remedy="investigate"))
    suspects += [h for h in accounting_hosts if h not in suspects]
    if "oom" in kinds and not any(kind in kinds for kind in NOT_OOM):
        primary = "oom"
        # the job's own fault: its end is the job's to restart, not a node's to investigate
        for check in checks:
            if check["id"] == "job.scheduler.state" and check["status"] == "fail":
                check["remedy"] = "restart_app"
    else:
        primary = next((kind for kind in ORDER if kind in kinds), None)
    summary = {"id": job_id, "name": facts.get("name"), "state": state, "classification": primary,
               "classification_text": WORDS.get(primary, "no failure signature"), "kinds": kinds,
               "ranks": facts.get("ranks") or [], "hosts": facts.get("hosts") or [], "peers": facts.get("peers") or [],
               "nodes": nodes, "suspects": suspects}
    return checks, summary


def _consequences(checks, comp, oom, timeouts, net, pairs):
    """The NCCL checks of a job that ran out of memory: warn + restart_app, naming the OOM line they follow."""
    first = oom[0]
    after = "they follow the CUDA out of memory at line %s%s" % (first.get("line"), " on %s" % first["host"]
                                                                 if first.get("host") else "")
    if timeouts:
        checks.append(make_check(
            "job.nccl.timeout", "cluster", "warn", comp, "%d rank(s) timed out" % len(timeouts), "no collective timeout",
            "%s: NCCL watchdog timeout(s) after the job ran out of GPU memory: %s; no node fault" % (comp, after),
            remedy="restart_app", evidence=_lines(oom[:1] + timeouts)))
    if net:
        classes = sorted(set(e.get("error_class") or "unknown" for e in net))
        checks.append(make_check(
            "job.nccl.error", "cluster", "warn", comp, ", ".join(classes), "no NCCL error",
            "%s: NCCL %s warning(s)/error(s) between %s: %s; the job's memory, not the nodes (no node diagnosis)"
            % (comp, "/".join(classes), "; ".join(pairs) or "unnamed hosts", after), remedy="restart_app",
            evidence=_lines(oom[:1] + net)))


def _ras(checks, comp, by_kind, hostmap):
    """The ``job.nccl.ras`` check of the RAS report's lines; the inventory hosts to diagnose (None: no RAS line)."""
    outliers = by_kind.get("ras_outlier", [])
    missing = [e for e in by_kind.get("ras_rank", []) + by_kind.get("ras_process", []) if e.get("status") != "MISMATCH"]
    mismatch = [e for e in by_kind.get("ras_rank", []) if e.get("status") == "MISMATCH"]
    groups = by_kind.get("ras_group", [])
    if not (outliers or missing or mismatch or groups):
        return None
    named = []
    for event in outliers + missing:
        if event["host"] not in named:
            named.append(event["host"])
    hosts = [h for h in (_map_host(n, hostmap) for n in named) if h]
    parts = []
    if outliers:
        parts.append("the outlier node %s" % ", ".join(
            "%s (processes %s)" % (_map_host(e["host"], hostmap) or e["host"], ",".join(str(p) for p in e["pids"]))
            for e in outliers))
    if missing:
        parts.append("%s %s" % ("/".join(sorted(set(e["status"] for e in missing))), "; ".join(sorted(set(
            "%s %s on %s" % ("rank" if e["kind"] == "ras_rank" else "process",
                             e["rank"] if e["kind"] == "ras_rank" else e["pid"],
                             _map_host(e["host"], hostmap) or e["host"]) for e in missing)))))
    if mismatch:
        parts.append("MISMATCH (%s): rank(s) %s on %s - the minority RAS lists, ahead or behind; no node diagnosis"
                     % (mismatch[0].get("detail") or "operation counts differ",
                        ",".join(str(e["rank"]) for e in mismatch),
                        ", ".join(sorted(set(_map_host(e["host"], hostmap) or e["host"] for e in mismatch)))))
    if groups and not parts:
        parts.append("communicator group(s) %s with %s" % (
            ", ".join(str(g["group"]) for g in groups), "/".join(sorted(set(x for g in groups for x in g["errors"])))))
    unmapped = [n for n in named if not _map_host(n, hostmap)]
    checks.append(make_check(
        "job.nccl.ras", "cluster", "fail", comp, "; ".join(parts)[:300], "RAS: every rank present and in step",
        "%s: NCCL's RAS report names %s.%s%s" % (
            comp, "; ".join(parts), " Node diagnosis of %s in this run." % ", ".join(hosts) if hosts else "",
            " Not in the inventory (add it to zhisuan_ib_addresses or ansible_host): %s." % ", ".join(unmapped)
            if unmapped else ""),
        remedy="investigate", evidence=_lines(outliers + missing + mismatch + groups, limit=10)))
    return hosts


def judge_accounting(checks, accounting, thresholds, hostmap):
    """The checks of ``sacct`` over a window (``accounting``: {jobs, warnings, truncated, window, form, version});
    the inventory hosts whose node took jobs down ``node_failures_max`` times or more. Appends to ``checks``."""
    if not isinstance(accounting, dict) or not isinstance(accounting.get("jobs"), list):
        return []
    limit = (thresholds or {}).get("node_failures_max", NODE_FAILURES_MAX)
    per = {}
    for job in accounting["jobs"]:
        if not isinstance(job, dict) or not job.get("state"):
            continue
        failed = job.get("failed_node")
        for node in ([failed] if failed else job.get("nodes") or []):
            entry = per.setdefault(node, {})
            entry[job["state"]] = entry.get(job["state"], [])
            entry[job["state"]].append(str(job.get("id")))
    window = accounting.get("window") or {}
    span = "%s .. %s" % (window.get("since") or "?", window.get("until") or "now")
    source = "sacct %s%s" % (accounting.get("form") or "", " (Slurm %s)" % accounting["version"]
                             if accounting.get("version") else "")
    flagged = []
    for node in sorted(per):
        states = per[node]
        blamed = sorted(set(i for state in NODE_BLAMED for i in states.get(state, [])))
        if limit is not None and len(blamed) >= limit:
            host = _map_host(node, hostmap)
            flagged.append((node, host))
            checks.append(make_check(
                "job.sched.node_failures", "cluster", "fail", "node %s" % node,
                "%d job(s) taken down" % len(blamed), "< %s in %s" % (limit, span),
                "%s took down %d job(s) in %s (%s): %s; diagnose it%s" % (
                    host or node, len(blamed), span, ", ".join("%s %d" % (s, len(states[s])) for s in NODE_BLAMED
                                                               if states.get(s)),
                    ", ".join(blamed[:10]), " in this run" if host else " (not in the inventory)"),
                remedy="investigate", evidence="from %s; per state: %s" % (source, states)))
    warnings = accounting.get("warnings") or []
    rows = ["%s: %s" % (node, ", ".join("%s %d" % (s, len(ids)) for s, ids in sorted(per[node].items())))
            for node in sorted(per)]
    checks.append(make_check(
        "job.sched.accounting", "cluster", "warn" if warnings or accounting.get("truncated") else "pass",
        "sacct", "%d job record(s) on %d node(s)" % (len(accounting["jobs"]), len(per)), "readable accounting",
        "%s: %d job record(s) in %s on %d node(s); %d node(s) took down %s or more%s" % (
            source, len(accounting["jobs"]), span, len(per), len(flagged), limit,
            "; %d line(s) not read: %s" % (len(warnings), warnings[0]) if warnings else ""),
        remedy="monitor" if warnings else None, evidence="\n".join(rows[:40] + warnings[:10])))
    return [host for node, host in flagged if host]


def collect_error(family, tool, host, collected):
    """The one ``error`` check of a collect task that failed (the k8s/slurm/job collectors run on the controller)."""
    msg = (collected or {}).get("msg") or "the collect task failed without a message"
    return make_check("%s.collect.%s" % (family, tool.replace("-", "_")), host, "error", component=tool,
                      observed=((collected or {}).get("error_kind") or "failed").replace("_", " "),
                      expected="%s answers with readable output" % tool, message=msg, remedy="investigate",
                      evidence="\n".join("%s: %s" % (k, str(collected.get(k))[:300]) for k in ("cmd", "rc", "stderr")
                                         if (collected or {}).get(k) not in (None, "")))
