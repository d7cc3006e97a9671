# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""The data sections of the acceptance report (delivery guide §6.2): GPU, network and storage test data, stability
records, remediation, with their pictures (``_svg``), and the history sections (changes since the previous run,
fleet outliers, KPIs). Pure functions of the results document (and the history); a section with no data is None,
so the templates leave it out.
"""

from __future__ import annotations

import statistics

from ansible_collections.zhisuan.ops.plugins.module_utils._text import natural_key
from ansible_collections.zhisuan.ops.plugins.plugin_utils import _svg
from ansible_collections.zhisuan.ops.plugins.plugin_utils._history import compare_runs, fleet_outliers, nccl_entries, previous_run
from ansible_collections.zhisuan.ops.plugins.plugin_utils._kpi import kpis

MAX_COLUMNS = 10
MAX_LINKS = 200
NETWORK_FACTS = ("nic", "rdma", "cabling", "nccl")


def _scalar(value):
    return value is None or isinstance(value, (str, int, float, bool))


def _hosts(results):
    hosts = results.get("hosts") or {}
    return [(name, hosts[name] or {}) for name in sorted(hosts, key=natural_key)]


def _row(data, columns, fmt, nested=False):
    """The scalar fields of ``data`` (lists of scalars too; small dicts as text when ``nested``), as text."""
    row = {}
    for field, value in data.items():
        if _scalar(value) or (isinstance(value, list) and all(_scalar(v) for v in value)) or \
                (nested and isinstance(value, dict) and all(_scalar(v) for v in value.values())):
            row[field] = fmt(value)
            if field not in columns:
                columns.append(field)
    return row


def _table(key, label, item_label, rows, columns, fmt):
    if not rows:
        return None
    columns = columns[:MAX_COLUMNS]
    return {"key": key, "label": label, "item_label": item_label, "columns": columns,
            "rows": [{"host": host, "item": item, "cells": [row.get(c, fmt(None)) for c in columns]} for host, item, row in rows]}


def facts_table(results, key, fmt):
    """One row per host holding a dict ``facts[key]``: its scalar fields (and lists of scalars) as columns."""
    rows, columns = [], []
    for name, record in _hosts(results):
        facts = (record.get("facts") or {}).get(key)
        if isinstance(facts, dict):
            row = _row(facts, columns, fmt)
            if row:
                rows.append((name, None, row))
    return _table(key, key, None, rows, columns, fmt)


def items_table(results, key, sub, item_label, fmt):
    """One row per host and item of a dict of dicts ``facts[key][sub]`` (a NIC's interfaces, fio's jobs)."""
    rows, columns = [], []
    for name, record in _hosts(results):
        items = ((record.get("facts") or {}).get(key) or {})
        items = items.get(sub) if isinstance(items, dict) else None
        if not isinstance(items, dict):
            continue
        for item in sorted(items, key=natural_key):
            if isinstance(items[item], dict):
                rows.append((name, item, _row(items[item], columns, fmt, nested=True)))
    return _table(key, "%s %s" % (key, sub), item_label, rows, columns, fmt)


def gpu_section(results, fmt):
    rows = []
    for name, record in _hosts(results):
        facts = record.get("facts") or {}
        gpu, burn, dcgm = (facts.get(key) if isinstance(facts.get(key), dict) else {} for key in ("gpu", "burn", "dcgm"))
        if not (gpu or burn or dcgm):
            continue
        rows.append({"host": name, "cells": [fmt(gpu.get("model")), fmt(gpu.get("count")), fmt(gpu.get("driver_version")),
                                             fmt(gpu.get("cuda_version")), fmt(burn.get("gflops_median")),
                                             fmt(burn.get("gflops_min")), fmt(burn.get("gflops_floor")),
                                             fmt(burn.get("errors")), fmt(dcgm.get("level")), fmt(dcgm.get("overall")),
                                             fmt(dcgm.get("failed") or None)]})
    if not rows:
        return None
    columns = ["GPU model", "GPUs", "driver", "CUDA", "burn Gflop/s median", "burn Gflop/s min",
               "burn floor", "burn errors", "DCGM level", "DCGM result", "DCGM failed tests"]
    return drop_empty_columns({"columns": columns, "rows": rows}, fmt(None))


def drop_empty_columns(table, empty):
    """The table without the columns that hold nothing in any row (burn-in columns in an acceptance run)."""
    keep = [i for i in range(len(table["columns"])) if any(row["cells"][i] != empty for row in table["rows"])]
    table["columns"] = [table["columns"][i] for i in keep]
    for row in table["rows"]:
        row["cells"] = [row["cells"][i] for i in keep]
    return table


def _rdma(fabric, fmt):
    data = fabric.get("rdma_pairs")
    if not isinstance(data, dict) or not data.get("pairs"):
        return None
    pairs = [p for p in data["pairs"] if isinstance(p, dict)]
    nodes = list(data.get("nodes") or sorted(set([p.get("a") for p in pairs] + [p.get("b") for p in pairs]), key=natural_key))
    values = [p["value"] for p in pairs if isinstance(p.get("value"), (int, float))]
    floor = data.get("floor")
    below = sorted((p for p in pairs if p.get("status") in ("fail", "error", "warn")
                    or (floor is not None and isinstance(p.get("value"), (int, float)) and p["value"] < floor)),
                   key=lambda p: (p.get("value") is not None, p.get("value") or 0))
    return {"test": data.get("test"), "unit": data.get("unit") or "Gb/s", "floor": floor, "schedule": data.get("schedule"),
            "rounds": data.get("rounds"), "nodes": len(nodes), "pairs": len(pairs),
            "min": fmt(min(values)) if values else fmt(None), "median": fmt(statistics.median(values)) if values else fmt(None),
            "max": fmt(max(values)) if values else fmt(None),
            "below": [{"a": p.get("a"), "b": p.get("b"), "value": fmt(p.get("value")), "status": p.get("status") or ""}
                      for p in below[:50]],
            "svg": _svg.heatmap_svg(nodes, pairs, floor=floor, unit=data.get("unit") or "Gb/s")}


def _nccl(entries, fmt):
    if not entries:
        return None
    charts = []
    groups = {}
    for entry in entries:
        groups.setdefault((entry.get("op") or "nccl", entry.get("scope") == "cluster"), []).append(entry)
    for (op, cluster), group in sorted(groups.items(), key=lambda item: (not item[0][1], item[0][0])):
        group.sort(key=lambda e: natural_key(e.get("scope")))
        floor = group[0].get("floor")
        unit = group[0].get("unit") or "GB/s"
        series = [{"label": ("cluster (%d nodes)" % len(e.get("nodes") or [])) if cluster else str(e.get("scope")),
                   "points": [(p.get("bytes"), p.get("busbw")) for p in e["points"] if isinstance(p, dict)]}
                  for e in group]
        rows = []
        for entry in group:
            points = [p for p in entry["points"] if isinstance(p, dict) and p.get("busbw") is not None]
            judged = [p for p in points if p.get("bytes") == entry.get("judged_bytes")]
            at = judged[0] if judged else (max(points, key=lambda p: p.get("bytes") or 0) if points else {})
            rows.append({"scope": entry.get("scope"), "nodes": len(entry.get("nodes") or []),
                         "bytes": _svg.human_bytes(at["bytes"]) if at.get("bytes") else fmt(None),
                         "busbw": fmt(at.get("busbw")), "peak": fmt(max([p["busbw"] for p in points] or [None], key=lambda v: v or 0)),
                         "floor": fmt(entry.get("floor")),
                         "below": entry.get("floor") is not None and at.get("busbw") is not None and at["busbw"] < entry["floor"],
                         "wrong": sum(p.get("wrong") or 0 for p in points)})
        charts.append({"op": op, "scope": "cluster" if cluster else "per node", "unit": unit, "floor": floor, "rows": rows,
                       "svg": _svg.nccl_curve_svg(series, floor=floor, unit=unit, judged_bytes=group[0].get("judged_bytes"))})
    return charts


def _cabling(fabric, fmt):
    links = [link for link in (fabric.get("cabling") or {}).get("links") or [] if isinstance(link, dict)]
    if not links:
        return None
    links.sort(key=lambda link: (link.get("status") == "ok", natural_key(link.get("node")), natural_key(link.get("port"))))
    bad = sum(1 for link in links if link.get("status") != "ok")
    return {"total": len(links), "bad": bad, "shown": len(links[:MAX_LINKS]),
            "links": [{"node": link.get("node"), "port": link.get("port"), "switch": link.get("switch"),
                       "switch_port": link.get("switch_port"), "status": link.get("status") or "",
                       "observed": fmt(link.get("observed"))} for link in links[:MAX_LINKS]]}


def network_section(results, fmt):
    fabric = (results.get("cluster") or {}).get("fabric") or {}
    section = {"rdma": _rdma(fabric, fmt), "nccl": _nccl(nccl_entries(results), fmt), "cabling": _cabling(fabric, fmt),
               "facts": [t for t in [items_table(results, "nic", "interfaces", "interface", fmt)]
                         + [facts_table(results, key, fmt) for key in NETWORK_FACTS] if t]}
    return section if any(section.values()) else None


def storage_section(results, fmt):
    aggregate = ((results.get("cluster") or {}).get("storage") or {}).get("aggregate")
    tables = [t for t in (items_table(results, "storage", "jobs", "fio job", fmt), facts_table(results, "storage", fmt)) if t]
    if not aggregate and not tables:
        return None
    aggregate = aggregate if isinstance(aggregate, dict) else {}
    pairs = [(k.replace("_", " "), fmt(v)) for k, v in aggregate.items() if _scalar(v) or
             (isinstance(v, list) and all(_scalar(i) for i in v))]
    jobs = aggregate.get("jobs") if isinstance(aggregate.get("jobs"), dict) else {}
    job_rows, columns = [], []
    for name in sorted(jobs, key=natural_key):
        if isinstance(jobs[name], dict):
            job_rows.append(("cluster", name, _row(jobs[name], columns, fmt)))
    return {"aggregate": pairs, "jobs": _table("storage-aggregate", "aggregate jobs", "fio job", job_rows, columns, fmt),
            "tables": tables}


def _stability_of(facts):
    burn = facts.get("burn") if isinstance(facts.get("burn"), dict) else {}
    for candidate in (burn.get("stability"), facts.get("stability")):
        if isinstance(candidate, dict):
            return candidate
    return None


def stability_section(results, fmt):
    rows, traces, highlight = [], [], []
    for name, record in _hosts(results):
        stab = _stability_of(record.get("facts") or {})
        if stab is None:
            continue
        failed = any(c.get("status") in ("fail", "error") and str(c.get("id", "")).startswith("burn.stability.")
                     for c in record.get("checks") or [])
        if failed:
            highlight.append(name)
        trace = [p for p in stab.get("trace") or [] if isinstance(p, dict) and "t" in p]
        if trace:
            traces.append((name, trace))
        rows.append({"host": name, "failed": failed, "samples": fmt(stab.get("samples")),
                     "max_temperature_c": fmt(stab.get("max_temperature_c")),
                     "gpus": "%s lost of %s" % (len(stab.get("gpus_lost") or []), fmt(stab.get("gpus_before"))),
                     "lost": fmt(stab.get("gpus_lost") or None), "xid": fmt(stab.get("new_xid_codes") or None)})
    if not rows:
        return None
    return {"rows": rows, "svg": _svg.trace_svg(traces, highlight=highlight) if traces else None}


def remediation_section(results, fmt):
    rows = []
    for name, record in _hosts(results):
        items = (record.get("facts") or {}).get("remediation")
        if isinstance(items, dict):
            items = items.get("actions") if isinstance(items.get("actions"), list) else [items]
        for item in items or []:
            if isinstance(item, dict):
                rows.append({"host": name, "action": fmt(item.get("action")), "why": fmt(item.get("why")),
                             "outcome": fmt(item.get("outcome")), "mode": fmt(item.get("mode"))})
    return rows or None


def grid_svg(hosts_view, families):
    return _svg.status_grid_svg([(h["name"], h["status"], dict((f, c["status"]) for f, c in h["cells"].items()))
                                 for h in hosts_view], families)


def data_sections(results, fmt):
    """{gpu, network, storage, stability, remediation}: each None when the run has no such data."""
    return {"gpu_data": gpu_section(results, fmt), "network": network_section(results, fmt),
            "storage": storage_section(results, fmt), "stability": stability_section(results, fmt),
            "remediation": remediation_section(results, fmt)}


def _identity(text):
    return text


def kpi_notes(block, fmt=str, gettext=_identity):
    """What each KPI means and counts, and why a value is missing: {availability, availability_definition, mttr,
    mttr_definition, mtbf_definition, classes: {class: (mttr text, mtbf text)}, repeat_offenders: [one text per
    node and cause: node (cause: tries per step -> next step)]}. ``gettext`` is the report language's."""
    av = block.get("availability") or {}
    den = av.get("denominator") or {}
    if den.get("bom_hosts") and den["bom_hosts"] == den.get("hosts"):
        base = gettext("%d GPUs from the bill of materials (zhisuan_expected.gpu_count, or the GPU profile) of %d "
                       "hosts") % (den["gpus"], den["hosts"])
    elif den.get("bom_hosts"):
        base = gettext("%d GPUs: the bill of materials of %d hosts, the most GPUs seen on the other %d (no expected "
                       "count judged there)") % (den["gpus"], den["bom_hosts"], den["hosts"] - den["bom_hosts"])
    else:
        base = gettext("%d GPUs: the most seen on each of %d hosts (no bill of materials count was judged)") \
            % (den.get("gpus", 0), den.get("hosts", 0))
    if av.get("pct") is None:
        value = gettext("\u2014 (no run recorded a GPU count, so there is nothing to count against)")
    elif av.get("method") == "time-weighted":
        value = gettext("%s %% (%s of %s GPU-hours healthy)") \
            % (fmt(av["pct"]), fmt(av["gpu_hours_healthy"]), fmt(av["gpu_hours_total"]))
    else:
        value = gettext("%s %% (%s of %s GPUs healthy in the one run so far)") \
            % (fmt(av["pct"]), av["gpus_healthy"], av["gpus_total"])
    definition = gettext(
        "Healthy GPU-hours / GPU-hours between the first and the last run, each interval counted as its first run "
        "found it; a GPU is unhealthy while a gpu, xid, dcgm or burn check fails or errors on it (all of a host's GPUs "
        "when the host is unreachable or the failure names no GPU). Denominator: %s.") % base
    if block.get("mttr_h") is not None:
        mttr = "%s h" % fmt(block["mttr_h"])
    elif not block.get("faults_total"):
        mttr = gettext("\u2014 (no fault seen in the history yet, so nothing to repair)")
    elif block["faults_total"] == 1:
        mttr = gettext("\u2014 (no repair yet: the fault was not found fixed by a later run or logged as repaired)")
    else:
        mttr = gettext("\u2014 (no repair yet: none of the %d faults was found fixed by a later run or logged as "
                       "repaired)") % block["faults_total"]
    classes = {}
    for row in block.get("classes") or []:
        mttr_c = fmt(row["mttr_h"]) if row.get("mttr_h") is not None else gettext("\u2014 (no repair yet)")
        if row.get("mtbf_h") is not None:
            mtbf_c = fmt(row["mtbf_h"])
        elif not row.get("faults"):
            mtbf_c = gettext("\u2014 (no fault of this class)")
        else:
            mtbf_c = gettext("\u2014 (one run only: no time between runs yet)")
        classes[row["class"]] = (mttr_c, mtbf_c)
    repeat = block.get("repeat_offenders") or {}
    offenders = []
    for row in repeat.get("rows") or []:
        tries = ", ".join("%s \u00d7 %d" % (step, row["tries"][step]) for step in repeat["ladder"] if row["tries"].get(step))
        offenders.append("%s (%s: %s \u2192 %s)" % (row["node"], row["cause"], tries, row["to"]))
    return {"repeat_offenders": offenders, "availability": value, "availability_definition": definition, "mttr": mttr,
            "mttr_definition": gettext("Mean hours from the run that first found a fault (or its detection time in "
                                       "the remediation log) to the run that found it gone (or its logged repair)."),
            "mtbf_definition": gettext("Host-hours observed (hosts x hours between the first and the last run) less "
                                       "the hours spent in a fault of the class, per fault of the class."),
            "classes": classes}


def history_sections(results, history=None, remediation=None, fmt=str):
    """{changes, outliers, kpis}: changes is None without a previous run of the same kind in ``history``; kpis is
    None without a history."""
    previous = previous_run(history or [], results) if history is not None else None
    changes = compare_runs(previous, results) if previous else None
    outliers = [dict(o, value_text=fmt(o["value"]), median_text=fmt(o["peer_median"])) for o in fleet_outliers(results)]
    runs = list(history or [])
    run_id = (results.get("run") or {}).get("id")
    if history is not None and not any((doc.get("run") or {}).get("id") == run_id for doc in runs):
        runs.append(results)
    block = kpis(runs, remediation, current=results) if history is not None else None
    return {"changes": changes, "outliers": outliers or None, "kpis": block,
            "kpi_notes": kpi_notes(block, fmt) if block else None}
