# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""``dcgmi diag -r N -j`` -> the ``dcgm`` facts, and the JSON helpers ``dcgm_health`` (``dcgmi health -c -j``) shares.

The diag JSON has no stable schema. What the parser accepts, and where each shape comes from:

* DCGM 2.x/3.x (``"DCGM GPU Diagnostic"``): ``test_categories[] -> tests[] -> results[]``; a result has
  ``gpu_ids`` (a string, a CSV list for the software tests, absent on the Deployment tests of the real T4
  capture), ``status`` (``Pass``/``PASS`` ...), ``warnings`` and ``info`` as one string each (dcgmi's
  ``HelperJsonAddResult``) or as lists of strings / ``{"warning", "error_id"}`` objects (NVVS's own writer);
  test names are display names ("GPU Memory", "Targeted Stress"); Deployment tests are separate tests.
* DCGM 4.x (``"DCGM Diagnostic"``): the same tree with ``entity_group``/``entity_id`` per result, ``warnings``
  as ``{"warning", "error_id", "error_category", "error_severity"}`` objects, ``info`` as a list, a
  ``test_summary`` per test, ``entity_groups`` and ``metadata`` (``version``, ``Driver Version Detected``) at the
  top, and ``runtime_error`` when the diagnostic could not run; test names are plugin names ("memory",
  "software"). ``null`` entries in the lists occur in real output and are skipped.

Pure functions, stdlib only; ``warn(msg)`` reports what is not understood instead of failing. Output that is no
JSON document at all raises ``ParseError``, or ``ToolFailed`` when dcgmi printed its ``Error: ...`` lines.
"""

import json
import re

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError, ToolFailed

TOOL = "dcgmi"
DIAG_ROOTS = (("DCGM Diagnostic", "4.x"), ("DCGM GPU Diagnostic", "2.x/3.x"))
STATUSES = ("Pass", "Fail", "Warn", "Skip", "Not Run")
_STATUS_WORDS = {
    "pass": "Pass", "passed": "Pass",
    "fail": "Fail", "failed": "Fail", "failure": "Fail",
    "warn": "Warn", "warning": "Warn",
    "skip": "Skip", "skipped": "Skip",
    "not run": "Not Run", "not_run": "Not Run", "notrun": "Not Run",
}
# Display names of DCGM 2.x/3.x -> the DCGM 4.x plugin name, which is the check's subject.
_TEST_SLUGS = {
    "gpu memory": "memory",
    "memory": "memory",
    "pcie": "pcie",
    "diagnostic": "diagnostic",
    "targeted stress": "targeted_stress",
    "targeted power": "targeted_power",
    "memory bandwidth": "memory_bandwidth",
    "sm stress": "sm_stress",
    "eud test": "eud",
    "context create": "context_create",
    "memtest": "memtest",
    "pulse test": "pulse_test",
}
# Deployment (software) tests: one category in 2.x/3.x, one test named "software" in 4.x.
SOFTWARE_CATEGORY = "deployment"
_NOT_SUPPORTED = frozenset(("", "<<<NOT_SUPPORTED>>>"))
_JSON_START_RE = re.compile(r"^[ \t]*\{", re.MULTILINE)


def slugify(text):
    """``"Targeted Stress"`` -> ``targeted_stress`` (check id words)."""
    return re.sub(r"[^a-z0-9]+", "_", str(text).lower()).strip("_") or "unnamed"


def test_slug(name, category=None):
    """The check subject of a test: the 4.x plugin name; every Deployment test is ``software``."""
    if category is not None and str(category).strip().lower() == SOFTWARE_CATEGORY:
        return "software"
    key = str(name).strip().lower()
    return _TEST_SLUGS.get(key, slugify(key))


def _ignore(msg):
    return None


# ----------------------------------------------------------------------------------------- the document

def _lines(text):
    return [line.strip() for line in text.splitlines() if line.strip()]


def error_lines(text):
    """dcgmi's own error lines (``Error: ...``), e.g. when no host engine answers."""
    return [line for line in _lines(text or "") if line.startswith("Error:")]


def _document(text, command, warn):
    """The JSON object dcgmi printed, and the other lines around it."""
    if text is None or not text.strip():
        raise ParseError(TOOL, "no output; expected the JSON document of `dcgmi %s -j`" % command)
    match = _JSON_START_RE.search(text)
    if match is None:
        errors = error_lines(text)
        if errors:
            raise ToolFailed(TOOL, "; ".join(errors))
        raise ParseError(TOOL, "the output of `dcgmi %s -j` is not JSON: %r" % (command, _lines(text)[0][:120]))
    start = match.end() - 1
    try:
        doc, end = json.JSONDecoder().raw_decode(text, start)
    except ValueError as exc:
        raise ParseError(TOOL, "the JSON document of `dcgmi %s -j` is incomplete or invalid (%s)" % (command, exc))
    if not isinstance(doc, dict):
        raise ParseError(TOOL, "the JSON document of `dcgmi %s -j` is a %s, not an object" % (command, type(doc).__name__))
    others = _lines(text[:start]) + _lines(text[end:])
    for line in others:
        warn("dcgmi %s: text outside the JSON document: %r" % (command, line[:200]))
    return doc, others


def _int(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 <= value < 2 ** 32 else None  # an id or a code: never negative, never huge
    if isinstance(value, str) and _ID_RE.match(value):
        return int(value)
    return None


# A GPU id or code as text: ASCII digits only (str.isdigit() accepts Unicode digits), at most 9 of them.
_ID_RE = re.compile(r"^\s*[0-9]{1,9}\s*$", re.ASCII)


def _is_id(text):
    return bool(_ID_RE.match(text))


def _text(value):
    return value.strip() if isinstance(value, str) and value.strip() else None


# ----------------------------------------------------------------------------------------------- diag

def normalize_status(raw):
    """``Pass``/``PASS``/``pass`` -> ``Pass`` …; ``None`` when the word is not a DCGM status."""
    if not isinstance(raw, str):
        return None
    return _STATUS_WORDS.get(" ".join(raw.strip().lower().split()))


def _status(raw, where, warn):
    status = normalize_status(raw)
    if status is None:
        warn("dcgmi diag: unknown status %r in %s; please report" % (raw, where))
        return str(raw) if raw is not None else "Unknown"
    return status


def _warning(item, where, warn):
    if isinstance(item, str):
        return {"text": item.strip(), "error_id": None, "category": None, "severity": None} if item.strip() else None
    if isinstance(item, dict):
        text = _text(item.get("warning")) or _text(item.get("message")) or ""
        return {"text": text, "error_id": _int(item.get("error_id")), "category": _int(item.get("error_category")),
                "severity": _int(item.get("error_severity"))}
    if item is not None:
        warn("dcgmi diag: unexpected warning %r in %s; please report" % (item, where))
    return None


def _warnings(value, where, warn):
    items = value if isinstance(value, list) else [value]
    return [entry for entry in (_warning(item, where, warn) for item in items) if entry is not None]


def _info(value, where, warn):
    items = value if isinstance(value, list) else [value]
    out = []
    for item in items:
        if isinstance(item, str) and item.strip():
            out.append(item.strip())
        elif item is not None and not isinstance(item, str):
            warn("dcgmi diag: unexpected info %r in %s; please report" % (item, where))
    return out


def _entity(raw, where, warn):
    """``(gpu id or None, entity label or None)`` of one result."""
    if "entity_id" in raw or "entity_group" in raw:
        group = _text(raw.get("entity_group")) or ("GPU" if raw.get("entity_group_id") == 1 else None)
        entity_id = _int(raw.get("entity_id"))
        if entity_id is None:
            warn("dcgmi diag: result without a readable entity_id in %s; please report" % where)
            return None, group
        if group is None or group.upper() == "GPU":
            return entity_id, "GPU %d" % entity_id
        return None, "%s %d" % (group, entity_id)
    if "gpu_ids" in raw:
        ids = [part.strip() for part in str(raw["gpu_ids"]).split(",") if part.strip()]
        if len(ids) == 1 and _is_id(ids[0]):
            return int(ids[0]), "GPU %s" % ids[0]
        if ids and all(_is_id(part) for part in ids):
            return None, "GPUs %s" % ",".join(ids)
        warn("dcgmi diag: unreadable gpu_ids %r in %s; please report" % (raw["gpu_ids"], where))
    return None, None


def _result(raw, where, warn):
    gpu, entity = _entity(raw, where, warn)
    return {
        "gpu": gpu,
        "entity": entity,
        "status": _status(raw.get("status"), where, warn),
        "warnings": _warnings(raw.get("warnings"), where, warn),
        "info": _info(raw.get("info"), where, warn),
    }


def _test(raw, category, where, warn):
    name = _text(raw.get("name"))
    if name is None:
        warn("dcgmi diag: a test without a name in %s; please report" % where)
        return None
    where = "test %r" % name
    results = raw.get("results")
    results = [] if results is None else results
    if not isinstance(results, list):
        warn("dcgmi diag: 'results' of %s is not a list; please report" % where)
        results = []
    out = []
    for item in results:
        if isinstance(item, dict):
            out.append(_result(item, where, warn))
        elif item is not None:
            warn("dcgmi diag: unexpected result %r in %s; please report" % (item, where))
    summary = raw.get("test_summary")
    return {
        "name": name,
        "slug": test_slug(name, category),
        "category": category,
        "results": out,
        "summary": _result(summary, where + " summary", warn) if isinstance(summary, dict) else None,
    }


def overall_status(statuses):
    """Fail > an unknown status word > Warn > Pass > Skip/Not Run; ``None`` when there is nothing."""
    statuses = list(statuses)
    if "Fail" in statuses:
        return "Fail"
    if any(status not in STATUSES for status in statuses):
        return "Unknown"
    for status in ("Warn", "Pass", "Skip", "Not Run"):
        if status in statuses:
            return status if status != "Not Run" else "Skip"
    return None


def _list(value):
    """A JSON list, or an empty one for anything else (``x.get(k) or []`` guards against null only)."""
    return value if isinstance(value, list) else []


def _clip(value, limit=200):
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _entities(doc):
    out = []
    for group in _list(doc.get("entity_groups")):
        if not isinstance(group, dict) or str(group.get("entity_group", "")).upper() != "GPU":
            continue
        for entity in _list(group.get("entities")):
            if isinstance(entity, dict) and _int(entity.get("entity_id")) is not None:
                serial = _text(entity.get("serial_num"))
                out.append({"gpu": _int(entity.get("entity_id")), "device_id": _text(entity.get("device_id")),
                            "serial": None if serial is None or serial in _NOT_SUPPORTED else serial})
    return out


def _guarded(command, parser, *args, **kwargs):
    """Any error reading a document of an unexpected shape is a ParseError naming dcgmi and the command."""
    try:
        return parser(*args, **kwargs)
    except (ValueError, TypeError, AttributeError, KeyError, IndexError, OverflowError, RecursionError) as exc:
        raise ParseError(TOOL, "the JSON of `dcgmi %s -j` has an unexpected shape (%s: %s); please report"
                         % (command, type(exc).__name__, str(exc)[:200]))


def parse_diag(text, level=None, warn=None):
    """``dcgmi diag -r N -j`` output -> ``dcgm`` facts (see the module docstring for the shapes accepted).

    ``unreadable`` lists the parts of the document that were not objects (a test category, a test): the judge turns
    them into an ``error``, as one of them may have held a failed test."""
    return _guarded("diag", _parse_diag, text, level=level, warn=warn)


def _parse_diag(text, level=None, warn=None):
    warn = warn or _ignore
    doc, messages = _document(text, "diag", warn)
    root_key, schema = next(((key, name) for key, name in DIAG_ROOTS if key in doc), (None, None))
    if root_key is None:
        raise ParseError(TOOL, "the JSON of `dcgmi diag -j` has no 'DCGM GPU Diagnostic' or 'DCGM Diagnostic' object "
                               "(keys: %s)" % (", ".join(sorted(doc)) or "none"))
    root = doc[root_key]
    if not isinstance(root, dict):
        raise ParseError(TOOL, "%r in the JSON of `dcgmi diag -j` is not an object" % root_key)
    runtime_error = _text(root.get("runtime_error"))
    if runtime_error:
        raise ToolFailed(TOOL, "the diagnostic could not run: %s" % runtime_error)
    categories = root.get("test_categories")
    if not isinstance(categories, list):
        raise ParseError(TOOL, "%r in the JSON of `dcgmi diag -j` has no 'test_categories' list" % root_key)
    tests, unreadable = [], []
    for position, category in enumerate(categories):
        if category is None:
            continue
        if not isinstance(category, dict) or not isinstance(category.get("tests") or [], list):
            # Not dropped silently: a failed test may be in it, so the judge says the output is partly unreadable.
            warn("dcgmi diag: unexpected test category #%d %r; please report" % (position, _clip(category)))
            unreadable.append("test category #%d (%s)" % (position, type(category).__name__))
            continue
        name = _text(category.get("category"))
        for test in category.get("tests") or []:
            if isinstance(test, dict):
                parsed = _test(test, name, "category %r" % name, warn)
                if parsed is not None:
                    tests.append(parsed)
            elif test is not None:
                warn("dcgmi diag: unexpected test %r in category %r; please report" % (_clip(test), name))
                unreadable.append("a test of category %r (%s)" % (name, type(test).__name__))
    metadata = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    statuses = []
    for test in tests:
        if test["results"]:
            statuses.extend(result["status"] for result in test["results"])
        elif test["summary"] is not None:
            statuses.append(test["summary"]["status"])
    return {
        "level": level,
        "schema": schema,
        "version": _text(metadata.get("version")) or _text(root.get("version")),
        "driver_version": _text(metadata.get("Driver Version Detected")),
        "overall": overall_status(statuses),
        "tests": tests,
        "entities": _entities(doc),
        "messages": messages,
        "unreadable": unreadable,
    }
