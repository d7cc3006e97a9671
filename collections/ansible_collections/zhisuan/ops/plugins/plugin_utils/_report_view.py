# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""The report's view model: everything the templates and the other formats show, built once from the results
document in one pass over its hosts and checks (``build_view``). Pure functions; no I/O."""

from __future__ import annotations

import math

from markupsafe import Markup

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import SEVERITY
from ansible_collections.zhisuan.ops.plugins.plugin_utils._report_errors import ReportError
from ansible_collections.zhisuan.ops.plugins.plugin_utils._report_fold import retest_rows
from ansible_collections.zhisuan.ops.plugins.plugin_utils._report_time import in_zone, zone
from ansible_collections.zhisuan.ops.plugins.plugin_utils._report_i18n import (
    KIND_NAMES,
    localise,
    overview_words,
    translations,
    verdict_text,
)
from ansible_collections.zhisuan.ops.plugins.plugin_utils._report_ops import ops_sections
from ansible_collections.zhisuan.ops.plugins.plugin_utils._report_sections import (
    data_sections,
    history_sections,
    kpi_notes,
)
from ansible_collections.zhisuan.ops.plugins.plugin_utils._stages import SITE_KIND, STAGES, known_elsewhere, stage_rows
from ansible_collections.zhisuan.ops.plugins.plugin_utils._svg_overview import rack_groups, status_overview_svg
from ansible_collections.zhisuan.ops.plugins.plugin_utils._report_tables import (  # noqa: F401  (re-exported)
    _assets_view,
    _baseline_view,
    _facts_summary,
    fleet_skips,
    skip_groups,
)
from ansible_collections.zhisuan.ops.plugins.plugin_utils._report_values import (  # noqa: F401  (re-exported)
    NONE_TEXT,
    count_statuses,
    counts_line,
    family_of,
    family_sort_key,
    format_value,
    iso_time,
    natural_key,
    plural,
    results_digest,
    worst_of,
)
from ansible_collections.zhisuan.ops.plugins.plugin_utils._svg_racks import elevation_view, topology_view

__all__ = ["NONE_TEXT", "ReportError", "build_view", "family_of", "format_value", "iso_time", "natural_key", "plural",
           "results_digest", "verdict_summary", "_facts_summary"]
# Host rank for the open-issues table: a host that could not be checked is as bad as a failed one.
ISSUE_RANK = {"fail": 0, "unreachable": 1, "error": 2, "warn": 3}
HOST_STATUSES = ("pass", "warn", "fail", "error", "unreachable")
CHECK_STATUSES = ("pass", "warn", "fail", "error", "skip")
BLOCKING = ("fail", "error", "unreachable")
PROBLEMS = ("fail", "error", "warn")
_FAMILIES = {}


def _check_view(check):
    view = dict(check)
    get = check.get
    check_id = get("id", "")
    family = _FAMILIES.get(check_id)
    if family is None:
        family = family_of(check_id)
        if len(_FAMILIES) < 100000:
            _FAMILIES[check_id] = family
    view["family"] = family
    view["observed_text"] = format_value(get("observed"))
    view["expected_text"] = format_value(get("expected"))
    view["status"] = get("status", "error")
    view["remedy"] = get("remedy") or "none"
    view["message"] = get("message") or ""
    view["evidence"] = get("evidence") or ""
    view["component"] = get("component") or ""
    return view


def _dedupe(checks):
    """The checks with identical records (same id, component, status, observed, expected and message) kept once: a
    family that reports the same error twice (a missing tool seen by two collectors) is one open issue."""
    seen, kept = set(), []
    for check in checks:
        key = (check["id"], check["component"], check["status"], check["observed_text"], check["expected_text"],
               check["message"])
        if key not in seen:
            seen.add(key)
            kept.append(check)
    return kept


def _timing(facts):
    """Seconds each family took on the node, as the run measured them (``facts.timing``: {family: seconds})."""
    timing = facts.get("timing") if isinstance(facts, dict) else None
    if not isinstance(timing, dict):
        return None
    return dict((str(family), float(seconds)) for family, seconds in timing.items()
                if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and math.isfinite(seconds)
                and seconds >= 0) or None


def _site_name(run):
    """The site's name for the title: ``run.site.name`` (docs/report.md, operations appendix), else a ``run.cluster``
    name; "" without one."""
    site = run.get("site")
    name = site.get("name") if isinstance(site, dict) else None
    if not isinstance(name, str) or not name:
        name = run.get("cluster")
    return name if isinstance(name, str) else ""


def _sorted_checks(checks):
    """Non-passing first (fail, error, warn), then pass and skip; id and component keep the order stable."""
    return sorted(checks, key=lambda c: (-SEVERITY.get(c["status"], 0) if c["status"] in PROBLEMS else 1,
                                         natural_key(c["id"]), natural_key(c["component"])))


# ---------------------------------------------------------------------------------------------------------------
# the view model


def build_view(results, history=None, remediation=None, language="en", timezone=None):
    """Everything the templates show, derived from the results document (and, for the history sections, the
    run history: results documents oldest first, and the remediation log records). ``timezone`` (an IANA name):
    the zone the report shows its times in; None: as recorded."""
    if timezone:
        zone(timezone)  # an unknown zone is refused before anything is built
    try:
        view = _build_view(results)
        view.update(data_sections(results, format_value))
        view.update(history_sections(results, history, remediation, format_value))
        racks = dict((name, (((record or {}).get("facts") or {}).get("location") or {}).get("rack"))
                     for name, record in (results.get("hosts") or {}).items())
        view["grid_svg"] = None
        if view["hosts"]:
            view["grid_svg"] = Markup(status_overview_svg(rack_groups(view["hosts"], racks), overview_words(language)))
        statuses = dict((h["name"], h["status"]) for h in view["hosts"])
        view["retests"] = [dict(r, status=statuses.get(r["host"], "error")) for r in retest_rows(results)]
        # where each node stands in the delivery (stages.csv always for a stage's run; the section once another run
        # than this one has something to say)
        kind = (results.get("run") or {}).get("kind")
        view["stage_rows"] = stage_rows(results, history) if kind in STAGES or kind == SITE_KIND else None
        view["stages"] = view["stage_rows"] if view["stage_rows"] and known_elsewhere(view["stage_rows"], results) \
            else None
        view["stage_names"] = dict((stage, KIND_NAMES[stage]) for stage in STAGES)
        view["elevation"] = elevation_view(results, view["hosts"])
        view["topology"] = topology_view(results)
        for key in ("network", "stability", "elevation"):
            _mark_svgs(view.get(key))
        if view["outliers"] and view["verdict"]["grade"] == "pass":
            view["verdict"].update(grade="conditional", text=verdict_text(view["run"]["kind"], "conditional"),
                                   detail=view["verdict"]["detail"] + "; %s below the fleet"
                                   % plural(len(view["outliers"]), "measurement"))
        view = localise(view, language)
        view["timezone"] = timezone or None
        if timezone:
            run_in = results.get("run") or {}
            view["run"]["started"] = in_zone(run_in.get("started", ""), timezone)
            view["run"]["finished"] = in_zone(run_in.get("finished", ""), timezone)
        if view.get("kpis") and language != "en":
            view["kpi_notes"] = kpi_notes(view["kpis"], format_value, translations(language).gettext)
        view.update(ops_sections(results, view, translations(language), format_value))
        return view
    except (AttributeError, TypeError, KeyError, ValueError) as exc:
        raise ReportError("zhisuan.ops.report: the results do not have the zhisuan.ops/results/v1 shape (%s: %s)"
                          % (type(exc).__name__, exc))


def _mark_svgs(section):
    """SVG markup built by _svg (every text escaped there) is passed to the autoescaping template as Markup."""
    if isinstance(section, dict):
        for key, value in section.items():
            if key == "svg" and isinstance(value, str):
                section[key] = Markup(value)
            else:
                _mark_svgs(value)
    elif isinstance(section, list):
        for item in section:
            _mark_svgs(item)


def _build_view(results):
    run = results.get("run") or {}
    hosts_in = results.get("hosts") or {}
    cluster_in = (results.get("cluster") or {}).get("checks") or []

    host_names = sorted(hosts_in, key=natural_key)
    families = set(run.get("families") or [])
    hosts = []
    issues = []
    all_check_statuses = []
    for name in host_names:
        record = hosts_in[name] or {}
        status = record.get("status", "error")
        checks = _dedupe([_check_view(c) for c in record.get("checks") or []])
        all_check_statuses.extend(c["status"] for c in checks)
        by_family = {}
        for check in checks:
            by_family.setdefault(check["family"], []).append(check)
            families.add(check["family"])
        cells = {}
        for family, fam_checks in by_family.items():
            statuses = [c["status"] for c in fam_checks]
            counts = count_statuses(statuses, CHECK_STATUSES)
            cells[family] = {
                "status": worst_of(statuses),
                "total": len(statuses),
                "counts": [(s, counts[s]) for s in ("fail", "error", "warn", "pass", "skip") if counts[s]],
            }
        ordered = _sorted_checks(checks)
        host = {
            "name": name,
            "status": status,
            "unreachable": status == "unreachable",
            "message": record.get("message") or "",
            "facts": _facts_summary(record.get("facts")),
            "checks": ordered,
            "problems": [c for c in ordered if c["status"] in ("fail", "error", "warn")],
            "others": [c for c in ordered if c["status"] not in ("fail", "error", "warn")],
            "skip_groups": skip_groups(c for c in ordered if c["status"] == "skip"),
            "counts": count_statuses([c["status"] for c in checks], CHECK_STATUSES),
            "counts_line": counts_line([c["status"] for c in checks]),
            "cells": cells,
            "timing": _timing(record.get("facts")),
        }
        hosts.append(host)
        if host["unreachable"]:
            issues.append({
                "host": name, "id": "host.reachable", "component": "", "status": "unreachable",
                "observed_text": "unreachable", "expected_text": "reachable",
                "message": host["message"] or "host was unreachable; none of its checks could run",
                "remedy": "investigate", "evidence": "", "family": "host",
            })
        issues.extend(c for c in checks if c["status"] in ("fail", "error", "warn"))

    cluster = _sorted_checks(_dedupe([_check_view(c) for c in cluster_in]))
    for check in cluster:
        families.add(check["family"])
    all_check_statuses.extend(c["status"] for c in cluster)
    issues.extend(c for c in cluster if c["status"] in ("fail", "error", "warn"))
    issues.sort(key=lambda i: (ISSUE_RANK[i["status"]], i["host"] == "cluster", natural_key(i["host"]),
                               natural_key(i["id"]), natural_key(i["component"])))

    host_counts = count_statuses([h["status"] for h in hosts], HOST_STATUSES)
    check_counts = count_statuses(all_check_statuses, CHECK_STATUSES)
    cluster_counts = count_statuses([c["status"] for c in cluster], CHECK_STATUSES)
    blocking_hosts = sum(host_counts.get(s, 0) for s in BLOCKING)
    blocking_cluster = cluster_counts["fail"] + cluster_counts["error"]
    accepted = bool(hosts) and blocking_hosts == 0 and blocking_cluster == 0
    reasons = []
    if not hosts:
        reasons.append("no hosts in this run")
    for status in BLOCKING:
        if host_counts.get(status):
            reasons.append("%s %s" % (plural(host_counts[status], "host"), status))
    for status in ("fail", "error"):
        if cluster_counts[status]:
            reasons.append("%s %s" % (plural(cluster_counts[status], "cluster check"), status))
    warnings = check_counts["warn"]
    grade = "fail"
    kind = run.get("kind", "")
    plan = _repair_plan(run, results, hosts)
    if accepted:
        grade = "conditional" if warnings else "pass"
        detail = "all %s passed" % plural(len(hosts), "host") if len(hosts) != 1 else "the host passed"
        if warnings:
            detail += "; %s to review" % plural(warnings, "warning")
    else:
        detail = ", ".join(reasons)
    if plan:
        # remediate --check: the planned nodes are not "passed", and nothing was done
        detail = "check mode, nothing was changed: %s to repair, %s with nothing to do" % (
            plural(plan["planned"], "node"), plural(plan["nothing"], "node"))
    text = verdict_text(kind, grade, plan=bool(plan))

    return {
        "run": {
            "id": run.get("id", ""),
            "kind": run.get("kind", ""),
            "started": iso_time(run.get("started", "")),
            "finished": iso_time(run.get("finished", "")),
            "playbook": run.get("playbook", ""),
            "collection_version": run.get("collection_version", ""),
            "ansible_version": run.get("ansible_version", ""),
            "hosts_total": run.get("hosts_total", len(hosts)),
            "site": _site_name(run),
        },
        "schema": results.get("schema", ""),
        "digest": results_digest(results),
        "verdict": {"accepted": accepted, "text": text, "key": "accepted" if accepted else "not_accepted",
                    "grade": grade, "detail": detail, "warnings": warnings, "plan": plan},
        "host_counts": host_counts,
        "check_counts": check_counts,
        "families": sorted(families, key=family_sort_key),
        "hosts": hosts,
        "issues": issues,
        "cluster": cluster,
        "cluster_counts": cluster_counts,
        "cluster_line": counts_line([c["status"] for c in cluster]),
        "assets": _assets_view(results),
        "skips": fleet_skips(hosts, cluster),
        "baseline": _baseline_view(results),
    }


def _repair_plan(run, results, hosts):
    """Of a remediate --check run (the plan only): ``{"planned": n, "nothing": m}`` nodes; None otherwise."""
    data = (results.get("cluster") or {}).get("remediation") or {}
    if run.get("kind") != "remediate" or data.get("check_mode") not in (True, "True", "true"):
        return None
    planned = sum(1 for host in hosts if any(check["id"] == "remediate.plan.status"
                                             and check["observed"] not in ("nothing to do", None)
                                             for check in host["checks"]))
    return {"planned": planned, "nothing": len(hosts) - planned}


def verdict_summary(results, view=None):
    """(verdict key, summary dict) for an action result."""
    view = view if view is not None else build_view(results)
    summary = {"hosts": view["host_counts"], "checks": view["check_counts"], "open_issues": len(view["issues"]),
               "grade": view["verdict"]["grade"]}
    if view.get("changes"):
        summary["changes"] = dict((key, len(view["changes"][key])) for key in ("new", "fixed", "persisting", "unchecked"))
    return view["verdict"]["key"], summary
