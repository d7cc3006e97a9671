# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""The report's formats, each written as a stream of text pieces to a ``write`` callable (a file's write, or a
list's append): HTML and Markdown through Jinja2 templates (``template.generate``), JUnit XML and JSON from the view
model directly. Nothing here holds a whole rendered report in memory."""

from __future__ import annotations

import json
import os
import re

from jinja2 import Environment, FileSystemLoader, StrictUndefined, TemplateNotFound, pass_context
from jinja2.exceptions import TemplateError
from markupsafe import Markup, escape

from ansible_collections.zhisuan.ops.plugins.plugin_utils._report_i18n import plural_text
from ansible_collections.zhisuan.ops.plugins.plugin_utils._report_errors import ReportError
from ansible_collections.zhisuan.ops.plugins.plugin_utils._report_time import in_zone
from ansible_collections.zhisuan.ops.plugins.plugin_utils._report_view import NONE_TEXT, format_value, plural

REPORT_SCHEMA = "zhisuan.ops/report/v1"
TEMPLATES = {"html": "report.html.j2", "markdown": "report.md.j2"}

_MD_TAG = re.compile(r"<(?=[A-Za-z/!?])")
_MD_SPECIAL = re.compile("[<\\\\|\\[\\]\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
# Characters XML 1.0 cannot carry at all (C0 controls but tab, CR, LF; lone surrogates; U+FFFE/U+FFFF).
_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


# ---------------------------------------------------------------------------------------------------------------
# Markdown text helpers (template filters)


def _md_inline(text, table=False):
    """``text`` with raw HTML and link/image syntax off: ``<`` before a tag-like character becomes ``&lt;``; with a
    ``[`` or ``]`` in it (or in a table cell) backslashes are doubled and brackets escaped, so that
    ``[x](javascript:...)`` and ``![](http://...)`` from a tool's output print as text; in a table ``|`` is escaped."""
    if table or "[" in text or "]" in text:
        text = text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
        if table:
            text = text.replace("|", "\\|")
    return _MD_TAG.sub("&lt;", text) if "<" in text else text


def md_text(value):
    """Markdown text that cannot open raw HTML nor make a link or image: ``<`` before a tag-like character becomes
    ``&lt;``, ``[`` and ``]`` are escaped.

    ``< 83`` stays readable; ``<script>`` cannot reach a renderer that passes raw HTML through, and
    ``[click](javascript:...)`` or ``![](http://tracker/)`` in a tool's output is text, not a link or a fetched
    image."""
    text = value if isinstance(value, str) else format_value(value)
    return _md_inline(text)


def md_cell(value):
    """Text safe inside one Markdown table cell: ``|`` escaped, line breaks as <br>, no raw HTML, no link or image."""
    text = value if isinstance(value, str) else format_value(value)
    if not _MD_SPECIAL.search(text):
        return text.strip()
    text = _md_inline(text, table=True)
    return "<br>".join(line.strip() for line in text.strip().splitlines() if line.strip())


def md_fence(text):
    """A backtick fence longer than any backtick run in ``text``, so evidence cannot close its code block."""
    if "`" not in (text or ""):
        return "```"
    longest = max((len(run) for run in re.findall(r"`+", text or "")), default=0)
    return "`" * max(3, longest + 1)


# ---------------------------------------------------------------------------------------------------------------
# check-table rows: the one part of the report whose size is hosts x checks (60,000 rows for 1,000 nodes), written
# here as plain string formatting instead of a template loop (the templates keep the table around them)

_HTML_ROW = ('<tr class="st-row-%s">\n<td><span class="badge st-%s">%s</span></td>\n<td><code>%s</code></td>\n'
             '<td>%s</td>\n<td class="val">%s</td>\n<td class="val">%s</td>\n<td>%s</td>\n<td><code>%s</code></td>\n</tr>\n')
_HTML_EVIDENCE = ('<tr class="evidence-row"><td></td><td colspan="6"><details class="evidence"><summary>%s</summary>'
                  '<pre>%s</pre></details></td></tr>\n')


_HTML_SPECIAL = re.compile("[&<>\"']")


def _h(value):
    """markupsafe.escape as text, skipping the (common) strings with nothing to escape."""
    text = value if isinstance(value, str) else str(value)
    return str(escape(text)) if _HTML_SPECIAL.search(text) else text


def _row_fields(fields):
    """The fields of one row, escaped: one search (and at most one escape) for the whole row, not one per field."""
    joined = "\x00".join(fields)
    if not _HTML_SPECIAL.search(joined):
        return fields
    parts = str(escape(joined)).split("\x00")
    return parts if len(parts) == len(fields) else [_h(field) for field in fields]


def html_check_rows(checks, with_evidence=False, words=None, evidence_label="Evidence", remedies=None):
    """The <tr> rows of a check table (escaped by hand: every value goes through markupsafe.escape). ``words`` are
    the status words and ``remedies`` the remedy names of the report's language (a translated check message is
    ``message_l10n``)."""
    words = words or {}
    out = []
    for c in checks:
        status = c["status"]
        fields = _row_fields([status, words.get(status) or status.upper(), c["id"], c["component"], c["observed_text"],
                              c["expected_text"], c.get("message_l10n") or c["message"], c["remedy"]])
        remedy = fields[7]
        if remedies and c["remedy"] in remedies:
            remedy = "%s</code> %s<code>" % (remedy, _h(remedies[c["remedy"]]))
        out.append(_HTML_ROW % (fields[0], fields[0], fields[1], fields[2], fields[3], fields[4], fields[5], fields[6],
                                remedy))
        if with_evidence and c["evidence"]:
            out.append(_HTML_EVIDENCE % (_h(evidence_label), _h(c["evidence"])))
    return Markup("".join(out))


def html_badge(status, words=None):
    """A status badge (``<span class="badge st-<status>">WORD</span>``), a function rather than a template macro: the
    report calls it once per host in several tables, and a Jinja macro call costs ten times a Python call."""
    word = (words or {}).get(status, str(status).upper())
    return Markup('<span class="badge st-%s">%s</span>' % (escape(status), escape(word)))


def md_status(status, words=None):
    word = (words or {}).get(status) or str(status).upper()
    return "**%s**" % word if status in ("fail", "error", "unreachable") else word


def md_check_rows(checks, words=None, remedies=None):
    """The rows of a Markdown check table, one line each."""
    remedies = remedies or {}
    return "".join("| %s | `%s` | %s | %s | %s | %s | `%s`%s |\n"
                   % (md_status(c["status"], words), md_cell(c["id"]), md_cell(c["component"]), md_cell(c["observed_text"]),
                      md_cell(c["expected_text"]), md_cell(c.get("message_l10n") or c["message"]), c["remedy"],
                      " " + md_cell(remedies[c["remedy"]]) if c["remedy"] in remedies else "") for c in checks)


# ---------------------------------------------------------------------------------------------------------------
# templates


@pass_context
def _iso_in_zone(context, value):
    """The ``iso`` filter: a time in the report's zone (``view.timezone``), with its offset."""
    view = context.get("view")
    return in_zone(value, view.get("timezone") if isinstance(view, dict) else None)


def environment(template_dir, autoescape, extensions=()):
    """The Jinja2 environment of one format, with the report's filters."""
    if not template_dir or not os.path.isdir(template_dir):
        raise ReportError("zhisuan.ops.report: template directory %s does not exist" % template_dir)
    env = Environment(
        loader=FileSystemLoader(template_dir),
        autoescape=autoescape,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        extensions=list(extensions),
    )
    env.filters["zfmt"] = format_value
    env.filters["md_cell"] = md_cell
    env.filters["md_text"] = md_text
    env.filters["plural"] = lambda word, count: plural(count, word)
    env.filters["md_fence"] = md_fence
    env.filters["iso"] = _iso_in_zone
    env.globals["html_check_rows"] = html_check_rows
    env.globals["md_check_rows"] = md_check_rows
    env.globals["md_status"] = md_status
    env.globals["html_badge"] = html_badge
    return env


def load_template(template_dir, fmt, extensions=(), translations=None):
    """The compiled template of ``fmt`` (html or markdown); ReportError when it is missing or does not compile."""
    env = environment(template_dir, autoescape=(fmt == "html"), extensions=extensions)
    if translations is not None:
        env.install_gettext_translations(translations, newstyle=True)
        env.filters["plural"] = lambda word, count: plural_text(translations, count, word)
    name = TEMPLATES[fmt]
    try:
        return env.get_template(name)
    except TemplateNotFound:
        raise ReportError("zhisuan.ops.report: template %s not found in %s" % (name, template_dir))
    except TemplateError as exc:
        raise ReportError("zhisuan.ops.report: template %s does not compile: %s" % (os.path.join(template_dir, name), exc))


def stream_template(template, results, view, write):
    """Render ``template`` piece by piece into ``write``."""
    try:
        for piece in template.generate(results=results, view=view):
            write(piece)
    except TemplateError as exc:
        raise ReportError("zhisuan.ops.report: rendering %s failed: %s" % (template.filename or template.name, exc))


# ---------------------------------------------------------------------------------------------------------------
# JUnit XML, written directly (one testsuite per host, one testcase per check)


def _xml_text(value):
    text = value if isinstance(value, str) else str(value)
    if _XML_ILLEGAL.search(text):
        text = _XML_ILLEGAL.sub("", text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _xml_attr(value):
    return '"%s"' % _xml_text(value).replace('"', "&quot;").replace("\n", "&#10;").replace("\r", "&#13;") \
        .replace("\t", "&#09;")


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


def _seconds(value):
    return ("%.3f" % value).rstrip("0").rstrip(".") if value else "0"


def _case(check, seconds, write):
    name = "%s [%s]" % (check["id"], check["component"]) if check["component"] else check["id"]
    text = _xml_text(_case_text(check))
    message = check["message"] or "%s: %s" % (check["id"], check["status"])
    time_attr = ' time="%s"' % _seconds(seconds) if seconds is not None else ""
    write('    <testcase name=%s classname=%s%s>\n' % (_xml_attr(name), _xml_attr("zhisuan.%s" % check["family"]), time_attr))
    status = check["status"]
    out = text
    if status == "fail":
        write('      <failure type="fail" message=%s>%s</failure>\n' % (_xml_attr(message), text))
    elif status == "error":
        write('      <error type="error" message=%s>%s</error>\n' % (_xml_attr(message), text))
    elif status == "skip":
        write('      <skipped type="skipped" message=%s />\n' % _xml_attr(message))
    elif status == "warn":
        # JUnit has no "warning" outcome: a warn check is reported as passed (it does not block acceptance), with
        # the warning first in system-out so CI viewers still show it.
        out = _xml_text("WARNING: %s\n" % message) + text
    write("      <system-out>%s</system-out>\n    </testcase>\n" % out)


def _suite_counts(checks, extra_error=0):
    counts = {"fail": 0, "error": extra_error, "skip": 0}
    for check in checks:
        if check["status"] in counts:
            counts[check["status"]] += 1
    return counts


def _family_seconds(timing, checks):
    """Seconds per testcase: the time the family took on the node (``facts.timing``, measured by the run) shared
    out over the family's checks, so a suite's testcases add up to the node's measured time. None when unmeasured."""
    if not timing:
        return {}
    per_family = {}
    for check in checks:
        per_family[check["family"]] = per_family.get(check["family"], 0) + 1
    return dict((family, float(timing[family]) / count) for family, count in per_family.items()
                if isinstance(timing.get(family), (int, float)) and not isinstance(timing.get(family), bool))


def _suite(name, checks, properties, started, write, host=None, unreachable_message=None, timing=None):
    counts = _suite_counts(checks, 1 if unreachable_message is not None else 0)
    tests = len(checks) + (1 if unreachable_message is not None else 0)
    seconds = _family_seconds(timing, checks)
    total = sum(seconds.get(c["family"], 0.0) for c in checks) if seconds else None
    attrs = [("disabled", "0"), ("errors", counts["error"]), ("failures", counts["fail"]), ("name", name),
             ("skipped", counts["skip"]), ("tests", tests)]
    if total is not None:
        attrs.append(("time", _seconds(total)))
    if host:
        attrs.append(("hostname", host))
    if started:
        attrs.append(("timestamp", started))
    write("  <testsuite %s>\n" % " ".join("%s=%s" % (key, _xml_attr(value)) for key, value in attrs))
    write("    <properties>\n")
    for key, value in properties:
        write("      <property name=%s value=%s />\n" % (_xml_attr(key), _xml_attr(value)))
    write("    </properties>\n")
    if unreachable_message is not None:
        write('    <testcase name="host.reachable" classname="zhisuan.host">\n      <error type="unreachable" message=%s>'
              '%s</error>\n    </testcase>\n'
              % (_xml_attr(unreachable_message or "host was unreachable"),
                 _xml_text("host %s was unreachable; none of its checks could run" % host)))
    for check in checks:
        _case(check, seconds.get(check["family"]), write)
    write("  </testsuite>\n")
    return tests, counts


def stream_junit(view, write):
    """JUnit XML (the Jenkins junit-10 schema): one testsuite per host (plus ``cluster``), one testcase per check,
    each check once. Written suite by suite; the totals of ``<testsuites>`` come from the view's counts."""
    run = view["run"]
    hosts = view["hosts"]
    cluster = view["cluster"]
    tests = sum(len(h["checks"]) + (1 if h["unreachable"] else 0) for h in hosts) + len(cluster)
    failures = sum(1 for h in hosts for c in h["problems"] if c["status"] == "fail") + \
        sum(1 for c in cluster if c["status"] == "fail")
    errors = sum(1 for h in hosts if h["unreachable"]) + \
        sum(1 for h in hosts for c in h["problems"] if c["status"] == "error") + sum(1 for c in cluster if c["status"] == "error")
    write('<?xml version="1.0" encoding="utf-8"?>\n')
    write('<testsuites disabled="0" errors="%d" failures="%d" tests="%d">\n' % (errors, failures, tests))
    base = [("run_id", run["id"]), ("run_kind", run["kind"])]
    for host in hosts:
        _suite(host["name"], host["checks"], [("host_status", host["status"])] + base, run["started"], write,
               host=host["name"], unreachable_message=host["message"] if host["unreachable"] else None,
               timing=host.get("timing"))
    if cluster:
        _suite("cluster", cluster, base, run["started"], write)
    write("</testsuites>\n")


# ---------------------------------------------------------------------------------------------------------------
# JSON


def _issue_json(issue):
    return dict((key, issue.get(key)) for key in ("host", "id", "component", "status", "observed", "expected", "message",
                                                  "remedy"))


def _appendix_json(appendix):
    """The operations appendix in English: the site (run.site) and the alert rules with their meaning and first
    action; None when the report has no appendix."""
    if not appendix:
        return None
    alerts = appendix.get("alerts")
    return {"site": appendix.get("site"), "problem": appendix.get("problem"), "source": appendix.get("source"),
            "alert_rules": None if alerts is None else [
                {"name": a["name"], "group": a["group"], "severity": a["severity"], "check_id": a["check_id"],
                 "remedy": a["remedy"], "meaning": a["meaning_en"], "action": a["action_en"]} for a in alerts]}


def render_json(view):
    """The report's judgement as JSON (for dashboards and workflows): verdict, counts, open issues, changes since
    the previous run, fleet outliers, KPIs and the operations appendix. Deterministic (sorted keys)."""
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
        "appendix": _appendix_json(view.get("appendix")),
        "stages": view.get("stage_rows"),
    }
    return json.dumps(document, indent=2, sort_keys=True, default=str) + "\n"
