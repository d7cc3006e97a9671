# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""Render a results.json document (zhisuan.ops/results/v1) as HTML, Markdown, JUnit XML and JSON.

Controller side only. One pass: the document is read and validated once, the view model (``_report_view``) is built
once, and each format is streamed from it into a temp file beside its destination (``_report_formats``), then moved
into place only when every format rendered and only where the content changed. The templates receive ``results``
(the document, untouched) and ``view``. They ship with the collection (``data/templates``); ``template_dir``
overrides them.
"""

from __future__ import annotations

import filecmp
import io
import json
import os
import re
import tempfile
import time

from ansible_collections.zhisuan.ops.plugins.plugin_utils import _report_formats as formats_
from ansible_collections.zhisuan.ops.plugins.plugin_utils._report_errors import ReportError
from ansible_collections.zhisuan.ops.plugins.plugin_utils._report_formats import md_cell, md_fence, md_text
from ansible_collections.zhisuan.ops.plugins.plugin_utils._report_i18n import LANGUAGES, translations
from ansible_collections.zhisuan.ops.plugins.plugin_utils._report_view import (
    NONE_TEXT,
    _facts_summary,
    build_view,
    family_of,
    format_value,
    natural_key,
    plural,
    results_digest,
    verdict_summary,
)

from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import HAS_JSONSCHEMA, schema_errors
from ansible_collections.zhisuan.ops.plugins.plugin_utils._stages import stages_csv

# What callers use from here (the action plugin, the bench, the tests), some of it defined in the report's parts.
__all__ = ["FORMATS", "FILENAMES", "LANGUAGES", "SCHEMA_PATH", "DEFAULT_TEMPLATE_DIR", "NONE_TEXT", "ReportError",
           "build_view", "commit_reports", "family_of", "format_value", "load_results", "md_cell", "md_fence", "md_text",
           "natural_key", "plan_reports", "plural", "render_html", "render_json", "render_junit", "render_markdown",
           "render_reports", "results_digest", "stage_reports", "validate_results", "verdict_summary", "write_reports",
           "_facts_summary", "MAX_RESULTS_MIB", "MAX_RESULTS_ENV", "max_results_mib", "sweep_stale_temps"]

FORMATS = ("html", "markdown", "junit", "json")
FILENAMES = {"html": "report.html", "markdown": "report.md", "junit": "junit.xml", "json": "report.json"}
# beside the report of a delivery, burn-in or acceptance run: the newest result of each stage per node
STAGES_FILENAME = "stages.csv"
COLLECTION_ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir))
DEFAULT_TEMPLATE_DIR = os.path.join(COLLECTION_ROOT, "data", "templates")
SCHEMA_PATH = os.path.join(COLLECTION_ROOT, "data", "schema", "results-v1.json")


# ---------------------------------------------------------------------------------------------------------------
# loading and validation


# The largest results.json read for a (re-)render, in MiB. A 1,000-node run of 60 checks a node is 14 MiB; 4,096
# nodes of 250 checks ~250 MiB. Python holds a parsed document at about 8 times its size (a 1 GiB file took 8 GB
# of memory), so a bigger file is refused before it is read; raise the cap with the report's max_results_mib or the
# environment variable ZHISUAN_MAX_RESULTS_MIB.
MAX_RESULTS_MIB = 512
MAX_RESULTS_ENV = "ZHISUAN_MAX_RESULTS_MIB"


def max_results_mib(value=None):
    """The cap in MiB: ``value`` if given, else ``$ZHISUAN_MAX_RESULTS_MIB``, else ``MAX_RESULTS_MIB``."""
    if value is None:
        value = os.environ.get(MAX_RESULTS_ENV) or MAX_RESULTS_MIB
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ReportError("zhisuan.ops.report: the results size cap must be a number of MiB, got %r" % (value,))
    if value <= 0:
        raise ReportError("zhisuan.ops.report: the results size cap must be a positive number of MiB, got %g" % value)
    return value


def load_results(path, max_mib=None):
    """The results document at ``path``; ReportError naming the file when it is missing, larger than the cap
    (``max_results_mib``) or not a JSON object."""
    cap = max_results_mib(max_mib)
    try:
        with open(path, "r", encoding="utf-8") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > cap * 1024 * 1024:
                raise ReportError("zhisuan.ops.report: results file %s is %.1f MiB, over the %g MiB cap for a report "
                                  "(reading it takes about 8 times its size in memory); raise max_results_mib or %s "
                                  "if this run is really that large" % (path, size / 1048576.0, cap, MAX_RESULTS_ENV))
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


def validate_results(results, schema_path=SCHEMA_PATH, source="results"):
    """Validate against the results JSON Schema. Returns a list of warnings (jsonschema missing), raises
    ReportError with the first error's path and the number of errors when the document does not conform.
    The validation is the record's own (``_results.schema_errors``: the check records by a predicate compiled from
    the schema's ``$defs/check``, jsonschema for the rest and for exact messages)."""
    if not HAS_JSONSCHEMA:
        return ["zhisuan.ops.report: the jsonschema Python package is not installed on the controller; "
                "%s was not validated against %s" % (source, os.path.basename(schema_path))]
    try:
        with open(schema_path, "r", encoding="utf-8") as handle:
            schema = json.load(handle)
    except (OSError, ValueError) as exc:
        raise ReportError("zhisuan.ops.report: cannot load the results schema %s: %s" % (schema_path, exc))
    errors = schema_errors(results, schema)
    if errors:
        first = errors[0]
        raise ReportError("zhisuan.ops.report: %s does not match %s: %s: %s%s"
                          % (source, os.path.basename(schema_path), _json_path(first.absolute_path), first.message,
                             " (and %s)" % plural(len(errors) - 1, "more error") if len(errors) > 1 else ""))
    return []


# ---------------------------------------------------------------------------------------------------------------
# rendering


def _check_formats(formats):
    if not formats:
        raise ReportError("zhisuan.ops.report: no formats requested; choose from %s" % ", ".join(FORMATS))
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise ReportError("zhisuan.ops.report: unknown format(s) %s; choose from %s"
                          % (", ".join(map(str, unknown)), ", ".join(FORMATS)))
    return list(dict.fromkeys(formats))


def _templates(formats, template_dir, language):
    """{format: compiled template} for html and markdown, loaded before anything is written."""
    template_dir = template_dir or DEFAULT_TEMPLATE_DIR
    catalog = translations(language)
    return dict((fmt, formats_.load_template(template_dir, fmt, ("jinja2.ext.i18n",), catalog))
                for fmt in formats if fmt in formats_.TEMPLATES)


def _stream(fmt, results, view, templates, write):
    if fmt in templates:
        formats_.stream_template(templates[fmt], results, view, write)
    elif fmt == "junit":
        formats_.stream_junit(view, write)
    else:
        write(formats_.render_json(view))


def _render_text(results, fmt, template_dir=None, view=None, language="en"):
    if view is None:
        view = build_view(results, language=language)
    pieces = []
    _stream(fmt, results, view, _templates([fmt], template_dir, language), pieces.append)
    return "".join(pieces)


def render_html(results, template_dir=None, view=None, language="en"):
    """One self-contained HTML document (inline CSS, no external assets). Autoescaped."""
    return _render_text(results, "html", template_dir, view, language)


def render_markdown(results, template_dir=None, view=None, language="en"):
    """The same report as Markdown tables."""
    return _render_text(results, "markdown", template_dir, view, language)


def render_junit(results, view=None):
    """JUnit XML: one testsuite per host (plus ``cluster``), one testcase per check."""
    return _render_text(results, "junit", None, view)


def render_json(results, view=None):
    """The report's judgement as JSON: verdict, counts, open issues, changes, outliers and KPIs."""
    return formats_.render_json(view if view is not None else build_view(results))


def render_reports(results, formats, template_dir=None, history=None, remediation=None, language="en",
                   timezone=None):
    """({format: text}, view) for each requested format, in memory (small documents, tests); ReportError on an
    unknown format. Large runs go through ``stage_reports``, which streams to files."""
    formats = _check_formats(formats)
    templates = _templates(formats, template_dir, language)
    view = build_view(results, history, remediation, language=language, timezone=timezone)
    rendered = {}
    for fmt in formats:
        pieces = []
        _stream(fmt, results, view, templates, pieces.append)
        rendered[fmt] = "".join(pieces)
    return rendered, view


# ---------------------------------------------------------------------------------------------------------------
# writing: stream each format to a temp file, then move the changed ones into place


def _discard(staged):
    for dummy_fmt, dummy_path, tmp, dummy_changed in staged:
        if tmp:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def _stage_file(staged, dest_dir, fmt, name, check_mode, write):
    """Write ``name`` of ``dest_dir`` to a temp file beside it (in the system temp folder in check mode) through
    ``write(handle.write)``, and add ``(fmt, path, temp path, changed)`` to ``staged`` (the entry is there before
    the temp file is made, so an error names the file it stopped)."""
    path = os.path.join(dest_dir, name)
    staged.append((fmt, path, None, True))
    fd, tmp = tempfile.mkstemp(dir=None if check_mode else dest_dir, prefix=_temp_prefix(name), suffix=".tmp")
    staged[-1] = (fmt, path, tmp, True)
    with io.open(fd, "w", encoding="utf-8", newline="\n", buffering=1 << 20) as handle:
        write(handle.write)
        handle.flush()
        if not check_mode:
            os.fsync(handle.fileno())
    staged[-1] = (fmt, path, tmp, not (os.path.isfile(path) and filecmp.cmp(tmp, path, shallow=False)))


def _temp_prefix(name):
    # the renderer's pid in the name: a render killed (kill -9, a power cut) leaves temp files that the next render
    # can tell from those of a render still running
    return ".%s.%d." % (name, os.getpid())


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: alive, someone else's
        return True
    return True


_STALE_NO_PID_S = 3600


def sweep_stale_temps(dest_dir, now=None):
    """Remove the temp files a killed render left in ``dest_dir`` (``.report.html.<pid>.*.tmp`` ...): those of a pid
    that no longer runs, and those without a pid (older renders) untouched for an hour. Returns what was removed."""
    removed = []
    try:
        names = os.listdir(dest_dir)
    except OSError:
        return removed
    now = time.time() if now is None else now
    heads = [".%s." % filename for filename in list(FILENAMES.values()) + [STAGES_FILENAME]]
    heads += [".%s." % language_filename(filename, language) for filename in FILENAMES.values() for language in LANGUAGES]
    for name in names:
        head = next((h for h in heads if name.startswith(h) and name.endswith(".tmp")), None)
        if head is None:
            continue
        path = os.path.join(dest_dir, name)
        pid_text, sep, dummy = name[len(head):-len(".tmp")].partition(".")
        try:
            if sep and pid_text.isdigit():
                stale = int(pid_text) != os.getpid() and not _pid_alive(int(pid_text))
            else:
                stale = now - os.lstat(path).st_mtime > _STALE_NO_PID_S
            if stale:
                os.unlink(path)
                removed.append(path)
        except OSError:
            pass
    return removed


# The formats whose words are in the report's language: a render in another language than the one already there goes
# beside it (report.zh_CN.html next to an English report.html), never over it.
WORDED = ("html", "markdown")
_HTML_LANG = re.compile(r'<html lang="([A-Za-z_-]+)"')


def language_filename(filename, language):
    """``report.html`` in ``language``: ``report.zh_CN.html``."""
    stem, dot, ext = filename.rpartition(".")
    return "%s.%s.%s" % (stem, language, ext)


def rendered_language(dest_dir):
    """The language of the report.html already in ``dest_dir`` (``en``, ``zh_CN``), or None when there is none."""
    try:
        with io.open(os.path.join(dest_dir, FILENAMES["html"]), encoding="utf-8", errors="replace") as handle:
            head = handle.read(4096)
    except (IOError, OSError):
        return None
    match = _HTML_LANG.search(head)
    return match.group(1).replace("-", "_") if match else None


def report_filename(fmt, dest_dir, language="en"):
    """Where format ``fmt`` of a render in ``language`` goes: its usual name, or, for the worded formats of a
    re-render in another language than the report already there, the name with the language (beside it)."""
    filename = FILENAMES[fmt]
    there = rendered_language(dest_dir) if fmt in WORDED else None
    if there and there != (language or "en"):
        return language_filename(filename, language or "en")
    return filename


def stage_reports(results, dest_dir, formats, template_dir=None, history=None, remediation=None, check_mode=False,
                  language="en", timezone=None):
    """Render every format into a temp file (beside its destination; in the system temp folder in check mode).
    Returns ([(format, path, temp path, changed)], view); nothing is in place until ``commit_reports``. When one
    format fails, the temp files are removed, and so is ``dest_dir`` when this call created it."""
    formats = _check_formats(formats)
    templates = _templates(formats, template_dir, language)
    view = build_view(results, history, remediation, language=language, timezone=timezone)
    created = not check_mode and not os.path.isdir(dest_dir)
    staged = []
    try:
        if not check_mode:
            os.makedirs(dest_dir, exist_ok=True)
            sweep_stale_temps(dest_dir)
        for fmt in formats:
            _stage_file(staged, dest_dir, fmt, report_filename(fmt, dest_dir, language), check_mode,
                        lambda write, fmt=fmt: _stream(fmt, results, view, templates, write))
        if view.get("stage_rows") is not None:
            # where each node stands in the delivery, beside the report (_stages.py)
            _stage_file(staged, dest_dir, "stages", STAGES_FILENAME, check_mode,
                        lambda write: write(stages_csv(view["stage_rows"])))
    except BaseException as exc:
        _discard(staged)
        if created:
            try:
                os.rmdir(dest_dir)
            except OSError:
                pass
        if isinstance(exc, OSError):
            # a full disk (ENOSPC) or a quota says nothing of the file it stopped: name it
            path = staged[-1][1] if staged else dest_dir
            raise ReportError("zhisuan.ops.report: cannot write %s: %s" % (path, exc.strerror or exc))
        raise
    if check_mode:
        _discard(staged)
        staged = [(fmt, path, None, changed) for fmt, path, dummy_tmp, changed in staged]
    return staged, view


def commit_reports(staged, dest_dir):
    """Move the changed reports into place (atomically, one rename each); drop the unchanged temp files."""
    path = dest_dir
    try:
        umask = os.umask(0)
        os.umask(umask)
        for dummy_fmt, path, tmp, changed in staged:
            if tmp and changed:
                os.chmod(tmp, 0o666 & ~umask)
                os.replace(tmp, path)
    except OSError as exc:
        raise ReportError("zhisuan.ops.report: cannot write %s: %s" % (path, exc.strerror or exc))
    finally:
        _discard([s for s in staged if s[2] and os.path.exists(s[2])])


def plan_reports(results, dest_dir, formats, template_dir=None, history=None, remediation=None, with_view=False,
                 language="en"):
    """Render every format in check mode: [(format, path, None, changed)] (and the view, with ``with_view``)."""
    staged, view = stage_reports(results, dest_dir, formats, template_dir, history, remediation, check_mode=True,
                                 language=language)
    return (staged, view) if with_view else staged


def write_reports(results, dest_dir, formats, template_dir=None, history=None, remediation=None, language="en"):
    """Render and write report.html / report.md / junit.xml / report.json atomically. Returns {format: path}.

    Files whose content would not change are left untouched (renders are deterministic: no timestamps)."""
    staged, dummy_view = stage_reports(results, dest_dir, formats, template_dir, history, remediation, language=language)
    commit_reports(staged, dest_dir)
    return dict((fmt, path) for fmt, path, dummy_tmp, dummy_changed in staged)
