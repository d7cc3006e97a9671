# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""NCCL judgement rules: ``nccl`` facts (zhisuan.ops.nccl_test) + model profile + site thresholds -> checks.

Pure functions, no I/O, standard library only. Checks, for the test's ``<op>`` (``all_reduce_perf``, …):

* ``nccl.<op>.busbw`` — bus bandwidth at a LARGE message against the floor: the largest size >= ``judge_bytes``
  (default 8 GiB: NCCL's maintainers note 256 MB is too small to reach peak, nccl-tests#212; AzNHC judges at 16 GiB),
  or, when the run measured no size that large, the largest size it measured. The lower of the out-of-place and
  in-place figures is judged. NEVER the ``Avg bus bandwidth`` line: it averages every size from 1 byte up and says
  nothing about the link (68 GB/s on the healthy 8x A100 capture whose 8 GiB point is 235 GB/s).
* ``nccl.<op>.wrong`` — data validation: an ``Out of bounds values`` count above 0, a ``#wrong`` count above 0 or
  a ``FAILED`` point fails (remedy ``investigate``: wrong results from a collective are a hardware or software
  fault a person must isolate); a run without validation (``-c 0``) is ``skip``.
* ``nccl.<op>.coverage`` — warns when no size >= ``judge_bytes`` was measured (the busbw verdict then rests on a
  message too small to reach peak).

A run over several nodes (``nodes`` > 1) is a cluster check: host ``cluster``, the floor ``nccl.cluster_busbw_floor_gbs``
of the profile (a fabric figure, e.g. a 2-node RoCE/IB pair floor). A single node's floor is the profile's
``nccl.busbw_floor_gbs.<op>``, for ``all_reduce_perf`` falling back to ``nccl_allreduce_busbw_floor_gbs``.
Thresholds (``thresholds``, overriding the profile): ``nccl_busbw_floor_gbs``, ``nccl_cluster_busbw_floor_gbs``,
``nccl_judge_bytes``.
"""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import guarded, make_check
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._util import clean_facts, evidence_of, fmt, plural, profile_get, to_number
from ansible_collections.zhisuan.ops.plugins.module_utils._net.nccl import point_busbw, point_wrong

DEFAULT_JUDGE_BYTES = 8 * 1024 ** 3
CLUSTER_HOST = "cluster"


def _size(value):
    if value is None:
        return "N/A"
    for unit, scale in (("GiB", 1024 ** 3), ("MiB", 1024 ** 2), ("KiB", 1024)):
        if value >= scale and value % scale == 0:
            return "%d %s" % (value // scale, unit)
    return "%d B" % value


def is_cluster(facts):
    return len((facts or {}).get("nodes") or []) > 1


def judge_bytes(profile, thresholds=None):
    value = (thresholds or {}).get("nccl_judge_bytes")
    if value is None:
        value = profile_get(profile, "nccl", "judge_bytes")
    return int(to_number(value, "nccl judge_bytes")) if value is not None else DEFAULT_JUDGE_BYTES


def floor_for(profile, op, cluster, thresholds=None):
    """``(floor GB/s or None, where it came from)``."""
    key = "nccl_cluster_busbw_floor_gbs" if cluster else "nccl_busbw_floor_gbs"
    if (thresholds or {}).get(key) is not None:
        return to_number(thresholds[key], "threshold %s" % key), "threshold %s" % key
    name = (profile or {}).get("name")
    section = "cluster_busbw_floor_gbs" if cluster else "busbw_floor_gbs"
    value = (profile_get(profile, "nccl", section) or {}).get(op)
    if value is not None:
        return to_number(value, "profile nccl.%s.%s" % (section, op)), "profile %s nccl.%s.%s" % (name, section, op)
    if not cluster and op == "all_reduce_perf" and profile_get(profile, "nccl_allreduce_busbw_floor_gbs") is not None:
        return (to_number(profile["nccl_allreduce_busbw_floor_gbs"], "profile nccl_allreduce_busbw_floor_gbs"),
                "profile %s nccl_allreduce_busbw_floor_gbs" % name)
    return None, None


def judged_point(facts, size):
    """The point judged: the largest size >= ``size``, else the largest measured; ``(point, covered)``."""
    points = [point for point in (facts or {}).get("points") or [] if point_busbw(point)[0] is not None]
    if not points:
        return None, False
    largest = max(points, key=lambda point: point["bytes"])
    return largest, largest["bytes"] >= size


def is_slow(facts, profile=None, thresholds=None):
    """Whether a run is below its floor at the judged size (the bisection's question). ``None``: no floor."""
    op = (facts or {}).get("op") or "all_reduce_perf"
    floor, dummy = floor_for(profile, op, is_cluster(facts), thresholds)
    point, dummy = judged_point(facts, judge_bytes(profile, thresholds))
    if floor is None:
        return None
    return point is None or point_busbw(point)[0] < floor


def _nvlink_down(gpu_facts):
    down = []
    for gpu in (gpu_facts or {}).get("gpus") or []:
        link = gpu.get("nvlink") or {}
        if link.get("total") and link.get("active") is not None and link["active"] < link["total"]:
            down.append("GPU %s %s/%s links up" % (gpu.get("index"), link["active"], link["total"]))
    return down


def _busbw_check(host, op, facts, profile, thresholds, gpu_facts, component):
    cluster = is_cluster(facts)
    size = judge_bytes(profile, thresholds)
    point, covered = judged_point(facts, size)
    check_id = "nccl.%s.busbw" % op
    if point is None:
        return make_check(check_id, host, "error", component=component, expected="a measured bus bandwidth",
                          message="%s printed no bus bandwidth for any message size" % op, remedy="investigate",
                          evidence=evidence_of(("points", len(facts.get("points") or []))))
    busbw, placement = point_busbw(point)
    floor, source = floor_for(profile, op, cluster, thresholds)
    evidence = evidence_of(("bytes", point["bytes"]), ("busbw", busbw), ("placement", placement),
                           ("avg_busbw (not judged)", facts.get("avg_busbw")))
    at = "at %s" % _size(point["bytes"])
    nodes = facts.get("nodes") or []
    what = "%s over %s" % (op, plural(len(nodes), "node")) if cluster else op
    if floor is None:
        return make_check(check_id, host, "skip", component=component, observed=busbw,
                          message="%s reached %s GB/s bus bandwidth %s; no %sfloor for this model, so it is not judged "
                                  "(set thresholds.%s)" % (what, fmt(busbw), at, "cluster " if cluster else "",
                                                           "nccl_cluster_busbw_floor_gbs" if cluster else "nccl_busbw_floor_gbs"),
                          evidence=evidence)
    evidence += ", floor=%s (%s)" % (fmt(floor), source)
    expected = ">= %s GB/s %s" % (fmt(floor), at)
    if busbw >= floor:
        return make_check(check_id, host, "pass", component=component, observed=busbw, expected=expected,
                          message="%s reached %s GB/s bus bandwidth %s (floor %s GB/s)" % (what, fmt(busbw), at, fmt(floor)),
                          evidence=evidence)
    pct = 100.0 * busbw / floor if floor else 0
    if cluster:
        message = ("%s reached only %s GB/s bus bandwidth %s, %s%% of the %s GB/s floor: one slow node drags the "
                   "whole collective down; bisect the node set (nccl.bisect checks) and look at the slow node's "
                   "NICs and links, else at the fabric" % (what, fmt(busbw), at, fmt(round(pct, 1)), fmt(floor)))
        return make_check(check_id, host, "fail", component=component, observed=busbw, expected=expected,
                          message=message, remedy="investigate", evidence=evidence)
    down = _nvlink_down(gpu_facts)
    if down:
        return make_check(check_id, host, "fail", component=component, observed=busbw, expected=expected,
                          message="%s reached only %s GB/s bus bandwidth %s, %s%% of the %s GB/s floor, and NVLinks are "
                                  "down (%s): drain the node and reset the GPUs; reseat or RMA if the links stay down"
                                  % (what, fmt(busbw), at, fmt(round(pct, 1)), fmt(floor), "; ".join(down)),
                          remedy="reset_gpu", evidence=evidence + ", nvlink: " + "; ".join(down))
    return make_check(check_id, host, "fail", component=component, observed=busbw, expected=expected,
                      message="%s reached only %s GB/s bus bandwidth %s, %s%% of the %s GB/s floor: check the GPUs' "
                              "NVLink state, Fabric Manager, PCIe ACS and clocks (gpu and tuning checks), then rerun"
                              % (what, fmt(busbw), at, fmt(round(pct, 1)), fmt(floor)),
                      remedy="investigate", evidence=evidence)


def _wrong_check(host, op, facts, component):
    check_id = "nccl.%s.wrong" % op
    points = facts.get("points") or []
    wrong = [(point["bytes"], point_wrong(point)) for point in points if point_wrong(point)]
    failed = [point["bytes"] for point in points if point.get("failed")]
    oob = facts.get("out_of_bounds")
    validation = (facts.get("params") or {}).get("validation")
    evidence = evidence_of(("out_of_bounds", oob), ("validation", validation))
    if wrong:
        evidence += ", #wrong: " + ", ".join("%s=%s" % (_size(size), count) for size, count in wrong[:8])
    if failed:
        evidence += ", FAILED at: " + ", ".join(_size(size) for size in failed[:8])
    if oob or wrong or failed or facts.get("out_of_bounds_ok") is False:
        observed = oob if oob is not None else sum(count for dummy, count in wrong)
        return make_check(check_id, host, "fail", component=component, observed=observed, expected="== 0",
                          message="%s returned wrong data (%s out-of-bounds values%s): a GPU, NVLink or NIC corrupts "
                                  "data in flight or NCCL is broken; find the node and GPU before anything runs on it"
                                  % (op, fmt(observed), ", #wrong at %s" % plural(len(wrong), "size") if wrong else ""),
                          remedy="investigate", evidence=evidence)
    if validation == 0:
        return make_check(check_id, host, "skip", component=component, observed=oob,
                          message="%s ran without data validation (-c 0): wrong results would go unseen" % op,
                          evidence=evidence)
    return make_check(check_id, host, "pass", component=component, observed=oob or 0, expected="== 0",
                      message="%s validated its data: no wrong value" % op, evidence=evidence)


def _coverage_check(host, op, facts, profile, thresholds, component):
    size = judge_bytes(profile, thresholds)
    point, covered = judged_point(facts, size)
    largest = point["bytes"] if point else None
    evidence = evidence_of(("largest_bytes", largest), ("judge_bytes", size), ("points", len(facts.get("points") or [])))
    if covered:
        return make_check("nccl.%s.coverage" % op, host, "pass", component=component, observed=largest,
                          expected=">= %d" % size, message="%s measured up to %s (judged at >= %s)"
                          % (op, _size(largest), _size(size)), evidence=evidence)
    return make_check("nccl.%s.coverage" % op, host, "warn", component=component, observed=largest, expected=">= %d" % size,
                      message="%s measured only up to %s, below the %s that reaches peak bus bandwidth: rerun with "
                              "-e %dG or more" % (op, _size(largest), _size(size), max(1, size // 1024 ** 3)),
                      remedy="investigate", evidence=evidence)


def judge_nccl(host, facts, profile, thresholds=None, gpu_facts=None):
    """Judge one host's ``nccl`` facts (see ``_judge_nccl``); facts of an unexpected shape give one ``error`` check."""
    return guarded(
        "nccl.facts.readable", host, "nccl-tests", "nccl", _judge_nccl, host, clean_facts(facts), profile,
        thresholds=thresholds, gpu_facts=clean_facts(gpu_facts))


def _judge_nccl(host, facts, profile, thresholds=None, gpu_facts=None):
    """Judge one nccl-tests run. A run over several nodes yields cluster checks (host ``cluster``)."""
    if not isinstance(facts, dict) or not isinstance(facts.get("points"), list):
        return [make_check("nccl.collect.nccl_tests", host, "error", component="nccl-tests", expected="nccl-tests facts",
                           message="No nccl-tests facts were collected, so no NCCL check could run",
                           remedy="investigate", evidence="nccl facts: %s" % fmt(facts))]
    op = facts.get("op") or "all_reduce_perf"
    nodes = facts.get("nodes") or []
    if is_cluster(facts):
        host, component = CLUSTER_HOST, "%s nodes: %s" % (len(nodes), ", ".join(nodes))
    else:
        component = "%s GPUs" % len(facts.get("devices") or []) if facts.get("devices") else "GPUs"
    return [_busbw_check(host, op, facts, profile, thresholds, gpu_facts, component),
            _wrong_check(host, op, facts, component),
            _coverage_check(host, op, facts, profile, thresholds, component)]


def judge_bisection(plan, nodes=None):
    """Checks for a finished bisection (``{"done": [...], "unresolved": [...], "reason": ...}``): one
    ``nccl.bisect.suspect`` per node, ``fail`` (drain) for a node named alone, ``warn`` (investigate) for the nodes
    only slow together; a ``warn`` when no node is named."""
    suspects = list(plan.get("done") or [])
    unresolved = [node for node in plan.get("unresolved") or [] if node not in suspects]
    steps = (plan.get("state") or {}).get("steps")
    reason = plan.get("reason") or ""
    evidence = evidence_of(("suspects", ", ".join(suspects) or "none"), ("unresolved", ", ".join(unresolved) or "none"),
                           ("runs", steps))
    if not suspects and not unresolved:
        return [make_check("nccl.bisect.suspect", CLUSTER_HOST, "warn", component="nodes: %s" % ", ".join(nodes or []),
                           observed="none", message="Bisection named no slow node after %s: %s" % (plural(steps, "run"), reason),
                           remedy="investigate", evidence=evidence)]
    checks = [make_check("nccl.bisect.suspect", CLUSTER_HOST, "fail", component=node, observed=node, expected="no slow node",
                         message="Bisection names %s as the node that slows the collective (%s, after %s): drain it and "
                                 "check its NICs, links and GPUs" % (node, reason, plural(steps, "run")),
                         remedy="drain", evidence=evidence)
              for node in suspects]
    checks += [make_check("nccl.bisect.suspect", CLUSTER_HOST, "warn", component=node, observed=node, expected="no slow node",
                          message="Bisection could not clear %s: %s (after %s); test it against nodes known to be good"
                                  % (node, reason, plural(steps, "run")),
                          remedy="investigate", evidence=evidence)
               for node in unresolved]
    return checks


def summarize_nccl(facts, profile=None, thresholds=None):
    """The report's curve for one run, in the shape of results.json ``cluster.fabric.nccl`` (docs/results.md)."""
    if not isinstance(facts, dict):
        return {}
    op = facts.get("op") or "all_reduce_perf"
    cluster = is_cluster(facts)
    points = []
    for point in facts.get("points") or []:
        busbw, placement = point_busbw(point)
        group = point.get(placement) or {}
        points.append({"bytes": point["bytes"], "algbw": group.get("algbw"), "busbw": busbw, "time_us": group.get("time_us"),
                       "wrong": point_wrong(point)})
    judged, dummy = judged_point(facts, judge_bytes(profile, thresholds))
    return {
        "op": op,
        "scope": "cluster" if cluster else ((facts.get("nodes") or [None])[0]),
        "nodes": list(facts.get("nodes") or []),
        "unit": "GB/s",
        "floor": floor_for(profile, op, cluster, thresholds)[0],
        "judged_bytes": judged["bytes"] if judged else None,
        "busbw": point_busbw(judged)[0] if judged else None,
        "avg_busbw": facts.get("avg_busbw"),
        "out_of_bounds": facts.get("out_of_bounds"),
        "points": points,
        "profile": profile.get("name") if profile else None,
    }


# Adapters for the judge's family registry (plugin_utils/_judging.py): ``ctx`` is its Context.

def family_rules(host, facts, ctx):
    profile = ctx.profile_for(ctx.gpu_facts)
    return profile, judge_nccl(host, facts, profile, thresholds=ctx.thresholds, gpu_facts=ctx.gpu_facts)


def family_summary(facts, profile, ctx):
    return summarize_nccl(facts, profile, thresholds=ctx.thresholds)


def bisect_rules(host, facts, ctx):
    return None, judge_bisection(facts or {}, nodes=(facts or {}).get("nodes"))


def bisect_summary(facts, profile, ctx):
    facts = facts or {}
    return {"suspects": list(facts.get("done") or []), "unresolved": list(facts.get("unresolved") or []),
            "reason": facts.get("reason"),
            "runs": (facts.get("state") or {}).get("steps"), "nodes": list(facts.get("nodes") or [])}
