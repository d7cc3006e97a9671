# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""O&M KPIs (O&M quality report 2024: cluster compute availability, MTTR, MTBF, faults by class) from a sequence of
results documents (the run history, oldest first) and, when there is one, the remediation log (JSON lines).

Pure functions. How the numbers are made:

* A fault is an *episode*: a (host, class) that is failing from the run where it is first seen (``detected``) to
  the first later run that looked at it again and found it gone (``repaired``); one still failing in the last run
  is open. The class is the check id's ``<family>.<subject>`` (``gpu.ecc``), ``host.reachable`` for an unreachable
  host. A host or family a run did not look at neither opens nor closes an episode.
* Time between runs is credited to the state seen at the start of the interval (the state holds until the next
  observation), so the resolution of every figure is the interval between runs.
* GPU availability: GPU-hours healthy / GPU-hours observed. A GPU is unhealthy in a run when a fail/error check of
  the gpu, xid, dcgm or burn family names it (``GPU n``); such a check naming no GPU, or an unreachable host, makes
  all the host's GPUs unhealthy. A host's GPU count is the largest seen in the history. With one run (no interval)
  the figure is that run's snapshot.
* MTTR per class: mean detected -> repaired time of the repaired episodes. MTBF per class: host-hours observed
  outside an episode of that class / episodes of that class.
* Remediation log records (docs/remediation.md: ``{time, run_id, node, cause, action, outcome, detected, started,
  finished, resumed, durations}``) of a repair add their detection -> repair time (source ``remediation``) to the
  list and to MTTR of the cause's class: ``repaired`` when the record has it, else ``resumed`` of a record whose
  outcome is ``repaired`` (the node went back into service).
* Repeat offenders: the nodes that the escalation rule of the remediation policy (``module_utils/_remediate/
  escalate.py``, docs/remediation.md) moves up the ladder for one cause, from the remediation log as of the end of
  the history (the last run's time, or the newest log record's when later). The rule's ``repeats``, ``window_days``
  and ``ladder`` are the caller's, else those the reported run or the newest remediation run in the history recorded
  (``cluster.remediation.escalation``), else the policy's defaults.
"""

from __future__ import annotations

import re

from ansible_collections.zhisuan.ops.plugins.module_utils._family import table as family_table
from ansible_collections.zhisuan.ops.plugins.module_utils._remediate.escalate import repeat_offenders
from ansible_collections.zhisuan.ops.plugins.module_utils._remediate.policy import PolicyError, normalize
from ansible_collections.zhisuan.ops.plugins.plugin_utils._history import checked_families, family_of, parse_time, run_key

GPU_FAMILIES = family_table.gpu_families()
_GPU_RE = re.compile(r"\bGPU (\d+)\b")


def fault_class(check_id):
    """``gpu.ecc.volatile_uncorrectable`` -> ``gpu.ecc``; a dotted id of two parts or fewer is its own class."""
    parts = str(check_id).split(".")
    return ".".join(parts[:2])


def _hours(start, end):
    return (end - start).total_seconds() / 3600.0


def run_faults(results):
    """{(host, class)} failing in one run, and {host: set of families looked at} (unreachable hosts: none)."""
    failing = set()
    looked = {}
    for host, record in (results.get("hosts") or {}).items():
        record = record or {}
        looked[host] = checked_families(results, host)
        if record.get("status") == "unreachable":
            failing.add((host, "host.reachable"))
            looked[host] = set(["host"])
            continue
        looked[host].add("host")
        for check in record.get("checks") or []:
            if check.get("status") in ("fail", "error"):
                failing.add((host, fault_class(check.get("id"))))
    return failing, looked


def episodes(history):
    """Fault episodes over the history: [{host, class, detected, repaired (or None), detected_run, repaired_run}]."""
    open_eps = {}
    closed = []
    for results in history:
        run = results.get("run") or {}
        when = run.get("started")
        failing, looked = run_faults(results)
        for key in sorted(failing):
            if key not in open_eps:
                open_eps[key] = {"host": key[0], "class": key[1], "detected": when, "detected_run": run.get("id"),
                                 "repaired": None, "repaired_run": None}
        for key in sorted(set(open_eps) - failing):
            host, klass = key
            if family_of(klass) in looked.get(host, set()):
                episode = open_eps.pop(key)
                episode.update(repaired=when, repaired_run=run.get("id"))
                closed.append(episode)
    eps = closed + list(open_eps.values())
    eps.sort(key=lambda e: (str(e["detected"]), e["host"], e["class"]))
    return eps


_BOM_RE = re.compile(r"^==\s*(\d+)$")


def bom_gpu_count(record):
    """A host's GPU count from its bill of materials: the expected value of its ``gpu.count.present`` check
    (``== 8``; kept by ``slim`` as ``facts.gpu.bom_count``), or None."""
    gpu = ((record or {}).get("facts") or {}).get("gpu")
    if isinstance(gpu, dict) and isinstance(gpu.get("bom_count"), int) and not isinstance(gpu.get("bom_count"), bool):
        return gpu["bom_count"]
    for check in (record or {}).get("checks") or []:
        if check.get("id") == "gpu.count.present":
            found = _BOM_RE.match(str(check.get("expected") or "").strip())
            if found:
                return int(found.group(1))
    return None


def _gpu_counts(history, sources=None):
    """{host: GPUs}: the bill of materials' count where a run judged it, else the most GPUs any run saw. ``sources``
    (a dict) gets {host: "bom" | "seen"}."""
    counts = {}
    for results in history:
        for host, record in (results.get("hosts") or {}).items():
            bom = bom_gpu_count(record)
            gpu = ((record or {}).get("facts") or {}).get("gpu") or {}
            count = gpu.get("count") if isinstance(gpu, dict) else None
            if bom is not None:
                counts[host] = bom
                if sources is not None:
                    sources[host] = "bom"
            elif isinstance(count, int) and not isinstance(count, bool) and (sources or {}).get(host) != "bom":
                counts[host] = max(counts.get(host, 0), count)
                if sources is not None:
                    sources[host] = "seen"
    return counts


def unhealthy_gpus(record, total):
    """How many of a host's ``total`` GPUs are unhealthy in one run."""
    if (record or {}).get("status") == "unreachable":
        return total
    named = set()
    for check in (record or {}).get("checks") or []:
        if check.get("status") in ("fail", "error") and family_of(check.get("id")) in GPU_FAMILIES:
            found = _GPU_RE.findall(str(check.get("component") or ""))
            if not found:
                return total
            named.update(found)
    return min(len(named), total)


def gpu_availability(history):
    """{"pct", "gpu_hours_healthy", "gpu_hours_total", "span_h", "runs", "method"}; None without GPU counts."""
    sources = {}
    counts = _gpu_counts(history, sources)
    if not history or not counts:
        return None
    denominator = {"gpus": sum(counts.values()), "hosts": len(counts),
                   "bom_hosts": sum(1 for source in sources.values() if source == "bom")}
    snaps = []
    for results in history:
        total = healthy = 0
        for host, record in (results.get("hosts") or {}).items():
            if host not in counts:
                continue
            total += counts[host]
            healthy += counts[host] - unhealthy_gpus(record, counts[host])
        snaps.append((parse_time((results.get("run") or {}).get("started")), healthy, total))
    weighted_h = weighted_t = 0.0
    for (start, healthy, total), (end, _h, _t) in zip(snaps, snaps[1:]):
        if start is None or end is None or end <= start:
            continue
        hours = _hours(start, end)
        weighted_h += healthy * hours
        weighted_t += total * hours
    span = _hours(snaps[0][0], snaps[-1][0]) if snaps[0][0] and snaps[-1][0] else 0.0
    if weighted_t > 0:
        return {"pct": round(100.0 * weighted_h / weighted_t, 2), "gpu_hours_healthy": round(weighted_h, 3),
                "gpu_hours_total": round(weighted_t, 3), "span_h": round(span, 3), "runs": len(history),
                "method": "time-weighted", "denominator": denominator}
    _when, healthy, total = snaps[-1]
    return {"pct": round(100.0 * healthy / total, 2) if total else None, "gpu_hours_healthy": None,
            "gpu_hours_total": None, "span_h": round(span, 3), "runs": len(history), "method": "snapshot",
            "gpus_healthy": healthy, "gpus_total": total, "denominator": denominator}


def _mean(values):
    return round(sum(values) / len(values), 3) if values else None


def escalation_rules(history, escalation=None, current=None):
    """``(rules, source)``: the escalation rule to count repeat offenders by — ``escalation`` (a mapping of the
    policy's shape) when given, else the one ``current`` (the run being reported, as written) recorded in
    ``cluster.remediation.escalation``, else the newest run in ``history`` (oldest first) that recorded one, else the
    policy defaults. ``source`` says which (``given``, ``run <id>``, ``default``). A recorded rule that is not a
    valid one is passed over."""
    if escalation is not None:
        return normalize({"escalation": escalation})["escalation"], "given"
    for results in ([current] if current else []) + list(reversed(history or [])):
        recorded = ((results.get("cluster") or {}).get("remediation") or {})
        recorded = recorded.get("escalation") if isinstance(recorded, dict) else None
        if isinstance(recorded, dict):
            try:
                return normalize({"escalation": recorded})["escalation"], "run %s" % (results.get("run") or {}).get("id")
            except PolicyError:
                continue
    return normalize({})["escalation"], "default"


def _as_of(history, remediation):
    """The end of the history: the last run's finish (or start), or the newest log record's time when later."""
    run = (history[-1].get("run") or {}) if history else {}
    times = [parse_time(run.get("finished")) or parse_time(run.get("started"))]
    for record in remediation or []:
        if isinstance(record, dict):
            times.append(parse_time(record.get("finished")) or parse_time(record.get("time")))
    times = [when for when in times if when is not None]
    return max(times) if times else None


def repeat_block(history, remediation=None, escalation=None, current=None):
    """{count, nodes, rows, repeats, window_days, ladder, as_of, source}: the repeat offenders (count: nodes) of
    the remediation log, by the escalation rule (``escalation_rules``), as of ``_as_of``."""
    rules, source = escalation_rules(history, escalation, current)
    now = _as_of(history, remediation)
    rows = repeat_offenders(remediation, rules, now) if now is not None else []
    nodes = sorted(set(row["node"] for row in rows))
    return {"count": len(nodes), "nodes": nodes, "rows": rows, "repeats": rules["repeats"],
            "window_days": rules["window_days"], "ladder": list(rules["ladder"]),
            "as_of": now.isoformat() if now is not None else None, "source": source}


def kpis(history, remediation=None, escalation=None, current=None):
    """The KPI block of the report from the history (oldest first; the current run included) and the remediation
    log records; ``escalation`` (optional) is the policy's escalation rule for the repeat offenders, ``current``
    (optional) the reported run as written (the history's copies may be slimmed). Returns None for an empty
    history."""
    if not history:
        return None
    history = sorted(history, key=run_key)
    eps = episodes(history)
    first = parse_time((history[0].get("run") or {}).get("started"))
    last = parse_time((history[-1].get("run") or {}).get("started"))
    span = _hours(first, last) if first and last else 0.0
    hosts = set(host for results in history for host in (results.get("hosts") or {}))
    repairs = []
    for ep in eps:
        start, end = parse_time(ep["detected"]), parse_time(ep["repaired"])
        if start and end:
            repairs.append({"host": ep["host"], "class": ep["class"], "detected": ep["detected"],
                            "repaired": ep["repaired"], "hours": round(_hours(start, end), 4), "source": "runs"})
    for record in remediation or []:
        repaired = record.get("repaired") or (record.get("resumed") if record.get("outcome") == "repaired" else None)
        start, end = parse_time(record.get("detected")), parse_time(repaired)
        if start and end and end >= start:
            repairs.append({"host": record.get("node"), "class": fault_class(record.get("cause") or "unknown"),
                            "detected": record.get("detected"), "repaired": repaired,
                            "hours": round(_hours(start, end), 4), "source": "remediation",
                            "action": record.get("action"), "outcome": record.get("outcome")})
    classes = {}
    for ep in eps:
        item = classes.setdefault(ep["class"], {"class": ep["class"], "faults": 0, "open": 0, "repaired": 0,
                                                "down_h": 0.0})
        item["faults"] += 1
        start = parse_time(ep["detected"])
        end = parse_time(ep["repaired"]) or last
        if ep["repaired"] is None:
            item["open"] += 1
        else:
            item["repaired"] += 1
        if start and end:
            item["down_h"] += _hours(start, end)
    for repair in repairs:
        classes.setdefault(repair["class"], {"class": repair["class"], "faults": 0, "open": 0, "repaired": 0,
                                             "down_h": 0.0})
    rows = []
    for klass in sorted(classes):
        item = classes[klass]
        hours = [r["hours"] for r in repairs if r["class"] == klass]
        uptime = max(span * len(hosts) - item["down_h"], 0.0)
        rows.append({"class": klass, "faults": item["faults"], "open": item["open"], "repaired": item["repaired"],
                     "mttr_h": _mean(hours), "mtbf_h": round(uptime / item["faults"], 3) if item["faults"] and span > 0 else None})
    return {
        "runs": len(history),
        "first": (history[0].get("run") or {}).get("started"),
        "last": (history[-1].get("run") or {}).get("started"),
        "span_h": round(span, 3),
        "hosts": len(hosts),
        "availability": gpu_availability(history),
        "classes": rows,
        "faults_total": len(eps),
        "faults_open": sum(1 for ep in eps if ep["repaired"] is None),
        "mttr_h": _mean([r["hours"] for r in repairs]),
        "repeat_offenders": repeat_block(history, remediation, escalation, current),
        "repairs": repairs,
        "episodes": eps,
    }
