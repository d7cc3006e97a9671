# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""Render a results.json document (zhisuan.ops/results/v1) as HTML, Markdown and JUnit XML.

Controller side only. Everything here is a pure function of the results dict except ``write_reports``.
The templates receive ``results`` (the document, untouched) and ``view`` (``build_view(results)``: the verdict,
the node x family grid and the open issues, computed once here so HTML and Markdown cannot disagree).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import xml.etree.ElementTree as ET

from jinja2 import Environment, FileSystemLoader, StrictUndefined, TemplateNotFound
from jinja2.exceptions import TemplateError
from markupsafe import Markup

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import SEVERITY
from ansible_collections.zhisuan.ops.plugins.plugin_utils._assets import ASSET_COLUMNS, asset_rows
from ansible_collections.zhisuan.ops.plugins.plugin_utils._report_sections import data_sections, grid_svg, history_sections
from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import atomic_write

try:
    from junit_xml import TestCase, TestSuite, to_xml_report_string
except ImportError:
    HAS_JUNIT_XML = False
else:
    HAS_JUNIT_XML = True

try:
    from jsonschema import Draft202012Validator
except ImportError:
    HAS_JSONSCHEMA = False
else:
    HAS_JSONSCHEMA = True

JUNIT_MISSING = "zhisuan.ops.report: the junit-xml Python package is required on the controller for format junit"

FORMATS = ("html", "markdown", "junit", "json")
FILENAMES = {"html": "report.html", "markdown": "report.md", "junit": "junit.xml", "json": "report.json"}
REPORT_SCHEMA = "zhisuan.ops/report/v1"
TEMPLATES = {"html": "report.html.j2", "markdown": "report.md.j2"}

# Families in the order a delivery engineer reads them (DESIGN.md); unknown families follow alphabetically.
FAMILY_ORDER = ("bmc", "baseline", "tuning", "gpu", "xid", "dcgm", "burn", "cabling", "nic", "rdma", "nccl", "storage")
# Host rank for the open-issues table: a host that could not be checked is as bad as a failed one.
ISSUE_RANK = {"fail": 0, "unreachable": 1, "error": 2, "warn": 3}
HOST_STATUSES = ("pass", "warn", "fail", "error", "unreachable")
CHECK_STATUSES = ("pass", "warn", "fail", "error", "skip")
BLOCKING = ("fail", "error", "unreachable")

# host.facts keys shown in the per-host section, in this order, with their labels.
FACT_LABELS = (
    ("root_cause", "Root cause"),
    ("remedies", "Remedies, in order"),
    ("gpu_model", "GPU model"),
    ("gpu_count", "GPU count"),
    ("gpu_profile", "GPU profile"),
    ("driver_version", "Driver"),
    ("cuda_version", "CUDA"),
    ("vbios_version", "VBIOS"),
    ("system_vendor", "System vendor"),
    ("system_model", "System model"),
    ("serial", "Serial"),
    ("bios_version", "BIOS"),
    ("bmc_firmware", "BMC firmware"),
    ("os", "OS"),
    ("kernel", "Kernel"),
)
MAX_EXTRA_FACTS = 12
NONE_TEXT = "\u2014"


class ReportError(Exception):
    """A report could not be rendered or written; the message says why and names the file."""


# ---------------------------------------------------------------------------------------------------------------
# loading


def load_results(path):
    """The results document at ``path``; ReportError naming the file when it is missing or not a JSON object."""
    try:
        with open(path, "r", encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        raise ReportError("zhisuan.ops.report: results file %s does not exist" % path)
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportError("zhisuan.ops.report: cannot read results file %s: %s" % (path, exc))
    except ValueError as exc:
        raise ReportError("zhisuan.ops.report: results file %s is not valid JSON: %s" % (path, exc))
    if not isinstance(data, dict):
        raise ReportError("zhisuan.ops.report: results file %s holds a JSON %s, not an object"
                          % (path, type(data).__name__))
    return data


def _json_path(parts):
    text = "$"
    for part in parts:
        text += "[%d]" % part if isinstance(part, int) else ".%s" % part
    return text


def validate_results(results, schema_path, source="results"):
    """Validate against the results JSON Schema. Returns a list of warnings (jsonschema missing), raises
    ReportError with the first error's path and the number of errors when the document does not conform."""
    if not HAS_JSONSCHEMA:
        return ["zhisuan.ops.report: the jsonschema Python package is not installed on the controller; "
                "%s was not validated against %s" % (source, os.path.basename(schema_path))]
    try:
        with open(schema_path, "r", encoding="utf-8") as handle:
            schema = json.load(handle)
    except (OSError, ValueError) as exc:
        raise ReportError("zhisuan.ops.report: cannot load the results schema %s: %s" % (schema_path, exc))
    errors = sorted(Draft202012Validator(schema).iter_errors(results),
                    key=lambda e: [str(p) for p in e.absolute_path])
    if errors:
        first = errors[0]
        raise ReportError("zhisuan.ops.report: %s does not match %s: %s: %s%s"
                          % (source, os.path.basename(schema_path), _json_path(first.absolute_path), first.message,
                             " (and %s)" % plural(len(errors) - 1, "more error") if len(errors) > 1 else ""))
    return []


# ---------------------------------------------------------------------------------------------------------------
# small pure helpers


def natural_key(text):
    """Sort key that puts node2 before node10."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", str(text))]


def family_of(check_id):
    """The family of a check: the first word of its dotted id."""
    return str(check_id).split(".", 1)[0]


def family_sort_key(family):
    if family in FAMILY_ORDER:
        return (0, FAMILY_ORDER.index(family), family)
    return (1, 0, family)


def format_value(value):
    """Readable text for an observed/expected/fact value. ``None`` is an em dash, containers are compact JSON."""
    if value is None:
        return NONE_TEXT
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        if math.isnan(value) or math.isinf(value):
            return str(value)
        if abs(value) >= 0.001:
            return ("%.4f" % value).rstrip("0").rstrip(".")
        return "%.3g" % value
    if isinstance(value, (list, tuple)) and all(not isinstance(item, (dict, list, tuple)) for item in value):
        return ", ".join(format_value(item) for item in value)
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, sort_keys=True, separators=(", ", ": "), default=str)
    return str(value)


def md_text(value):
    """Markdown text that cannot open raw HTML: ``<`` before a tag-like character becomes ``&lt;``.

    ``< 83`` stays readable; ``<script>`` cannot reach a renderer that passes raw HTML through."""
    text = value if isinstance(value, str) else format_value(value)
    return re.sub(r"<(?=[A-Za-z/!?])", "&lt;", text)


def md_cell(value):
    """Text safe inside one Markdown table cell: ``|`` escaped, line breaks as <br>, no raw HTML."""
    text = md_text(value).replace("\\", "\\\\").replace("|", "\\|")
    return "<br>".join(line.strip() for line in text.strip().splitlines() if line.strip())


def md_fence(text):
    """A backtick fence longer than any backtick run in ``text``, so evidence cannot close its code block."""
    longest = max((len(run) for run in re.findall(r"`+", text or "")), default=0)
    return "`" * max(3, longest + 1)


def worst_of(statuses):
    """Worst check status of a non-empty list; all-skip stays ``skip`` (the grid shows it)."""
    worst = None
    for status in statuses:
        if worst is None or SEVERITY.get(status, 0) > SEVERITY.get(worst, 0):
            worst = status
    return worst


def plural(count, word):
    return "%d %s%s" % (count, word, "" if count == 1 else "s")


def counts_line(statuses):
    """``6 checks: 2 fail, 1 error, 1 warn, 2 pass`` (worst first, zero counts left out)."""
    counts = count_statuses(statuses, CHECK_STATUSES)
    parts = ["%d %s" % (counts[s], s) for s in ("fail", "error", "warn", "pass", "skip") if counts[s]]
    return "%s: %s" % (plural(len(statuses), "check"), ", ".join(parts)) if parts else plural(0, "check")


def count_statuses(statuses, order):
    counts = dict((status, 0) for status in order)
    for status in statuses:
        counts[status] = counts.get(status, 0) + 1
    return counts


def results_digest(results):
    """SHA-256 of the canonical JSON of the document: ties a signed report to the exact data it shows."""
    canonical = json.dumps(results, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _facts_summary(facts):
    """A few (label, text) pairs from host.facts: the known keys first, then a nested ``gpu`` (gpu_info facts),
    then other scalar facts by name."""
    if not isinstance(facts, dict):
        return []
    shown = {}
    gpu = facts.get("gpu") if isinstance(facts.get("gpu"), dict) else {}
    gpus = gpu.get("gpus") if isinstance(gpu.get("gpus"), list) else []
    derived = {}
    if gpus:
        names = sorted(set(str(g.get("name")) for g in gpus if isinstance(g, dict) and g.get("name")))
        if names:
            derived["gpu_model"] = ", ".join(names)
        derived["gpu_count"] = len(gpus)
    elif gpu.get("attached_gpus") is not None:
        derived["gpu_count"] = gpu.get("attached_gpus")
    diagnosis = facts.get("diagnosis") if isinstance(facts.get("diagnosis"), dict) else {}
    if diagnosis.get("root_cause"):
        cause = diagnosis["root_cause"]
        derived["root_cause"] = "%s on %s: %s" % (cause.get("id"), cause.get("component") or "node", cause.get("message"))
        derived["remedies"] = " -> ".join(diagnosis.get("remedies") or [])
    # the judge's summary (docs/results.md): {model, count, driver_version, cuda_version, profile}
    for key, name in (("model", "gpu_model"), ("count", "gpu_count"), ("profile", "gpu_profile")):
        if gpu.get(key) is not None:
            derived.setdefault(name, gpu[key])
    for key in ("driver_version", "cuda_version"):
        if gpu.get(key) is not None:
            derived[key] = gpu.get(key)
    pairs = []
    for key, label in FACT_LABELS:
        value = facts.get(key, derived.get(key))
        if value is not None and not isinstance(value, dict):
            pairs.append((label, format_value(value)))
            shown[key] = True
    extra = 0
    for key in sorted(facts, key=natural_key):
        value = facts[key]
        if key in shown or key in ("gpu", "diagnosis") or isinstance(value, dict) or value is None:
            continue
        if isinstance(value, list) and any(isinstance(item, (dict, list)) for item in value):
            continue
        if extra >= MAX_EXTRA_FACTS:
            break
        pairs.append((key.replace("_", " "), format_value(value)))
        extra += 1
    return pairs


def _check_view(check):
    view = dict(check)
    view["family"] = family_of(check.get("id", ""))
    view["observed_text"] = format_value(check.get("observed"))
    view["expected_text"] = format_value(check.get("expected"))
    view["status"] = check.get("status", "error")
    view["remedy"] = check.get("remedy") or "none"
    view["message"] = check.get("message") or ""
    view["evidence"] = check.get("evidence") or ""
    view["component"] = check.get("component") or ""
    return view


def _sorted_checks(checks):
    """Non-passing first (fail, error, warn), then pass and skip; id and component keep the order stable."""
    return sorted(checks, key=lambda c: (-SEVERITY.get(c["status"], 0) if c["status"] in ("fail", "error", "warn") else 1,
                                         natural_key(c["id"]), natural_key(c["component"])))


# ---------------------------------------------------------------------------------------------------------------
# the view model


def build_view(results, history=None, remediation=None):
    """Everything the templates show, derived from the results document (and, for the history sections, the
    run history: results documents oldest first, and the remediation log records)."""
    try:
        view = _build_view(results)
        view.update(data_sections(results, format_value))
        view.update(history_sections(results, history, remediation, format_value))
        view["grid_svg"] = Markup(grid_svg(view["hosts"], view["families"])) if view["hosts"] else None
        for key in ("network", "stability"):
            _mark_svgs(view.get(key))
        if view["outliers"] and view["verdict"]["grade"] == "pass":
            view["verdict"].update(grade="conditional", text="ACCEPTED WITH CONDITIONS",
                                   detail=view["verdict"]["detail"] + "; %s below the fleet"
                                   % plural(len(view["outliers"]), "measurement"))
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


def _assets_view(results):
    """The asset list (delivery guide §6.2) when the run read BMCs or versions; else None."""
    hosts = results.get("hosts") or {}
    if not any((record or {}).get("facts", {}).get("bmc") or (record or {}).get("facts", {}).get("baseline")
               for record in hosts.values()):
        return None
    places = {}
    for name, record in hosts.items():
        facts = (record or {}).get("facts") or {}
        location = facts.get("location") or {}
        places[name] = {"zhisuan_rack": location.get("rack"), "zhisuan_u": location.get("u")}
    return {"columns": list(ASSET_COLUMNS), "rows": asset_rows(results, places)}


def _baseline_view(results):
    """Versions per node and component; a cell is marked as drift when the node fails its baseline check for the
    component or differs from what most nodes of its server model run."""
    hosts = results.get("hosts") or {}
    versions = {}
    for name, record in hosts.items():
        facts = (record or {}).get("facts") or {}
        if (facts.get("baseline") or {}).get("versions"):
            versions[name] = facts["baseline"]["versions"]
    if not versions:
        return None
    components = sorted(set(key for values in versions.values() for key, value in values.items() if value is not None))
    models = dict((name, ((hosts[name].get("facts") or {}).get("bmc") or {}).get("model") or "") for name in versions)
    common = {}
    for name, values in versions.items():
        for key in components:
            common.setdefault((models[name], key), []).append(values.get(key))
    rows = []
    for name in sorted(versions, key=natural_key):
        failing = set(check.get("id") for check in hosts[name].get("checks") or [] if check.get("status") == "fail")
        cells = []
        for key in components:
            value = versions[name].get(key)
            peers = [v for v in common[(models[name], key)] if v is not None]
            usual = max(set(peers), key=peers.count) if peers else None
            outvoted = value is not None and usual is not None and peers.count(usual) > peers.count(value)
            drift = ("baseline.%s.version" % key) in failing or outvoted
            cells.append({"value": format_value(value), "drift": drift})
        rows.append({"host": name, "model": models[name] or NONE_TEXT, "cells": cells})
    return {"components": components, "rows": rows}


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
        checks = [_check_view(c) for c in record.get("checks") or []]
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
            "counts": count_statuses([c["status"] for c in checks], CHECK_STATUSES),
            "counts_line": counts_line([c["status"] for c in checks]),
            "cells": cells,
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

    cluster = _sorted_checks([_check_view(c) for c in cluster_in])
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
    if accepted:
        grade, text = ("conditional", "ACCEPTED WITH CONDITIONS") if warnings else ("pass", "ACCEPTED")
        detail = "all %s passed" % plural(len(hosts), "host") if len(hosts) != 1 else "the host passed"
        if warnings:
            detail += "; %s to review" % plural(warnings, "warning")
    else:
        text = "NOT ACCEPTED"
        detail = ", ".join(reasons)

    return {
        "run": {
            "id": run.get("id", ""),
            "kind": run.get("kind", ""),
            "started": run.get("started", ""),
            "finished": run.get("finished", ""),
            "playbook": run.get("playbook", ""),
            "collection_version": run.get("collection_version", ""),
            "ansible_version": run.get("ansible_version", ""),
            "hosts_total": run.get("hosts_total", len(hosts)),
            "site": run.get("site") or run.get("cluster") or "",
        },
        "schema": results.get("schema", ""),
        "digest": results_digest(results),
        "verdict": {"accepted": accepted, "text": text, "key": "accepted" if accepted else "not_accepted",
                    "grade": grade, "detail": detail, "warnings": warnings},
        "host_counts": host_counts,
        "check_counts": check_counts,
        "families": sorted(families, key=family_sort_key),
        "hosts": hosts,
        "issues": issues,
        "cluster": cluster,
        "cluster_counts": cluster_counts,
        "cluster_line": counts_line([c["status"] for c in cluster]),
        "assets": _assets_view(results),
        "baseline": _baseline_view(results),
    }


def verdict_summary(results, view=None):
    """(verdict key, summary dict) for an action result."""
    view = view if view is not None else build_view(results)
    summary = {"hosts": view["host_counts"], "checks": view["check_counts"], "open_issues": len(view["issues"]),
               "grade": view["verdict"]["grade"]}
    if view.get("changes"):
        summary["changes"] = dict((key, len(view["changes"][key])) for key in ("new", "fixed", "persisting", "unchecked"))
    return view["verdict"]["key"], summary


# ---------------------------------------------------------------------------------------------------------------
# renderers


def _environment(template_dir, autoescape):
    if not template_dir or not os.path.isdir(template_dir):
        raise ReportError("zhisuan.ops.report: template directory %s does not exist" % template_dir)
    env = Environment(
        loader=FileSystemLoader(template_dir),
        autoescape=autoescape,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["zfmt"] = format_value
    env.filters["md_cell"] = md_cell
    env.filters["md_text"] = md_text
    env.filters["plural"] = lambda word, count: plural(count, word)
    env.filters["md_fence"] = md_fence
    return env


def _render(results, template_dir, fmt, view=None):
    env = _environment(template_dir, autoescape=(fmt == "html"))
    name = TEMPLATES[fmt]
    try:
        template = env.get_template(name)
        return template.render(results=results, view=view if view is not None else build_view(results))
    except TemplateNotFound:
        raise ReportError("zhisuan.ops.report: template %s not found in %s" % (name, template_dir))
    except TemplateError as exc:
        raise ReportError("zhisuan.ops.report: rendering %s failed: %s" % (os.path.join(template_dir, name), exc))


def render_html(results, template_dir, view=None):
    """One self-contained HTML document (inline CSS, no scripts, no external assets). Autoescaped."""
    return _render(results, template_dir, "html", view)


def render_markdown(results, template_dir, view=None):
    """The same report as Markdown tables."""
    return _render(results, template_dir, "markdown", view)


def _case_text(check):
    lines = [
        "status: %s" % check["status"],
        "component: %s" % (check["component"] or NONE_TEXT),
        "observed: %s" % check["observed_text"],
        "expected: %s" % check["expected_text"],
        "remedy: %s" % check["remedy"],
        "message: %s" % (check["message"] or NONE_TEXT),
    ]
    if check["evidence"]:
        lines.append("evidence:")
        lines.append(check["evidence"])
    return "\n".join(lines)


def _test_case(check):
    name = "%s [%s]" % (check["id"], check["component"]) if check["component"] else check["id"]
    case = TestCase(name, classname="zhisuan.%s" % check["family"], stdout=_case_text(check))
    message = check["message"] or "%s: %s" % (check["id"], check["status"])
    if check["status"] == "fail":
        case.add_failure_info(message=message, output=_case_text(check), failure_type="fail")
    elif check["status"] == "error":
        case.add_error_info(message=message, output=_case_text(check), error_type="error")
    elif check["status"] == "skip":
        case.add_skipped_info(message=message)
    elif check["status"] == "warn":
        # JUnit has no "warning" outcome: a warn check is reported as passed (it does not block acceptance), with
        # the warning first in system-out so CI viewers still show it.
        case.stdout = "WARNING: %s\n%s" % (message, case.stdout)
    return case


def _issue_json(issue):
    return dict((key, issue.get(key)) for key in ("host", "id", "component", "status", "observed", "expected", "message",
                                                  "remedy"))


def render_json(results, view=None):
    """The report's judgement as JSON (for dashboards and workflows): verdict, counts, open issues, changes since
    the previous run, fleet outliers and KPIs. Deterministic (sorted keys)."""
    if view is None:
        view = build_view(results)
    kpis = dict(view["kpis"]) if view.get("kpis") else None
    if kpis:
        kpis.pop("episodes", None)
    document = {
        "schema": REPORT_SCHEMA,
        "results_schema": view["schema"],
        "results_sha256": view["digest"],
        "run": view["run"],
        "verdict": {"grade": view["verdict"]["grade"], "key": view["verdict"]["key"], "text": view["verdict"]["text"],
                    "detail": view["verdict"]["detail"]},
        "hosts": view["host_counts"],
        "checks": view["check_counts"],
        "families": view["families"],
        "host_status": dict((h["name"], h["status"]) for h in view["hosts"]),
        "issues": [_issue_json(i) for i in view["issues"]],
        "changes": view.get("changes"),
        "outliers": [dict((k, o[k]) for k in ("host", "metric", "value", "peer_median", "pct_below"))
                     for o in view.get("outliers") or []],
        "kpis": kpis,
    }
    return json.dumps(document, indent=2, sort_keys=True, default=str) + "\n"


def render_junit(results, view=None):
    """JUnit XML: one testsuite per host (plus ``cluster``), one testcase per check."""
    if not HAS_JUNIT_XML:
        raise ReportError(JUNIT_MISSING)
    if view is None:
        view = build_view(results)
    run = view["run"]
    suites = []
    for host in view["hosts"]:
        cases = []
        if host["unreachable"]:
            case = TestCase("host.reachable", classname="zhisuan.host")
            case.add_error_info(message=host["message"] or "host was unreachable",
                                output="host %s was unreachable; none of its checks could run" % host["name"],
                                error_type="unreachable")
            cases.append(case)
        cases.extend(_test_case(check) for check in host["checks"])
        suites.append(TestSuite(host["name"], cases, hostname=host["name"], timestamp=run["started"] or None,
                                properties={"host_status": host["status"], "run_id": run["id"], "run_kind": run["kind"]}))
    if view["cluster"]:
        suites.append(TestSuite("cluster", [_test_case(check) for check in view["cluster"]],
                                timestamp=run["started"] or None,
                                properties={"run_id": run["id"], "run_kind": run["kind"]}))
    # junit-xml's own pretty-printing goes through minidom (5 s and 250 MiB for 1,000 hosts x 60 checks, see
    # bench/report_scale.py); ElementTree indents the same document in a fraction of that.
    root = ET.fromstring(to_xml_report_string(suites, prettyprint=False, encoding="utf-8").encode("utf-8"))
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


# ---------------------------------------------------------------------------------------------------------------
# writing


def render_reports(results, formats, template_dir, history=None, remediation=None):
    """{format: text} for each requested format; raises ReportError on an unknown format."""
    if not formats:
        raise ReportError("zhisuan.ops.report: no formats requested; choose from %s" % ", ".join(FORMATS))
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise ReportError("zhisuan.ops.report: unknown format(s) %s; choose from %s"
                          % (", ".join(map(str, unknown)), ", ".join(FORMATS)))
    view = build_view(results, history, remediation)
    rendered = {}
    for fmt in dict.fromkeys(formats):
        if fmt == "html":
            rendered[fmt] = render_html(results, template_dir, view)
        elif fmt == "markdown":
            rendered[fmt] = render_markdown(results, template_dir, view)
        elif fmt == "json":
            rendered[fmt] = render_json(results, view)
        else:
            rendered[fmt] = render_junit(results, view)
    return rendered, view


def _same_content(path, text):
    try:
        with open(path, "r", encoding="utf-8", newline="") as handle:
            return handle.read() == text
    except (OSError, UnicodeDecodeError):
        return False


def plan_reports(results, dest_dir, formats, template_dir, history=None, remediation=None, with_view=False):
    """Render every format first (nothing is written if one fails). Returns [(format, path, text, changed)]
    (and the view, with ``with_view``)."""
    rendered, view = render_reports(results, formats, template_dir, history, remediation)
    plan = []
    for fmt in rendered:
        path = os.path.join(dest_dir, FILENAMES[fmt])
        plan.append((fmt, path, rendered[fmt], not _same_content(path, rendered[fmt])))
    return (plan, view) if with_view else plan


def write_plan(plan, dest_dir):
    try:
        os.makedirs(dest_dir, exist_ok=True)
        for dummy_fmt, path, text, changed in plan:
            if changed:
                atomic_write(path, text)
    except OSError as exc:
        raise ReportError("zhisuan.ops.report: cannot write reports to %s: %s" % (dest_dir, exc))


def write_reports(results, dest_dir, formats, template_dir, history=None, remediation=None):
    """Render and write report.html / report.md / junit.xml / report.json atomically. Returns {format: path}.

    Files whose content would not change are left untouched (renders are deterministic: no timestamps)."""
    plan = plan_reports(results, dest_dir, formats, template_dir, history, remediation)
    write_plan(plan, dest_dir)
    return dict((fmt, path) for fmt, path, dummy_text, dummy_changed in plan)
