# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""Small pure helpers of the report: sort keys, value and time formatting, counts and the results digest."""

from __future__ import annotations

import hashlib
import json
import math
import re

from ansible_collections.zhisuan.ops.plugins.module_utils._family import table as family_table
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import SEVERITY
from ansible_collections.zhisuan.ops.plugins.module_utils._safe_parse import iso_time as aware_time

# Families in the order a delivery engineer reads them (DESIGN.md); unknown families follow alphabetically.
FAMILY_ORDER = family_table.report_order()
CHECK_STATUSES = ("pass", "warn", "fail", "error", "skip")
NONE_TEXT = "\u2014"

_NATURAL = {}
_DIGITS = re.compile(r"(\d+)")


def natural_key(text):
    """Sort key that puts node2 before node10 (remembered per text: the same ids and components recur on every host)."""
    text = str(text)
    key = _NATURAL.get(text)
    if key is None:
        if len(_NATURAL) > 200000:
            _NATURAL.clear()
        key = _NATURAL[text] = tuple(int(part) if part.isdigit() else part for part in _DIGITS.split(text))
    return key


def family_of(check_id):
    """The family of a check: the first word of its dotted id."""
    return str(check_id).split(".", 1)[0]


def family_sort_key(family):
    if family in FAMILY_ORDER:
        return (0, FAMILY_ORDER.index(family), family)
    return (1, 0, family)


def format_value(value):
    """Readable text for an observed/expected/fact value. ``None`` is an em dash, containers are compact JSON."""
    kind = type(value)
    if kind is str:
        return value
    if kind is int:
        return str(value)
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


def iso_time(value):
    """An ISO 8601 time with its zone: a time without one is UTC (as the run records write it) and gets ``+00:00``;
    ``Z`` becomes ``+00:00``; anything that is not a time is returned as it is."""
    if not isinstance(value, str) or not value:
        return value
    parsed = aware_time(value)
    return value if parsed is None else parsed.isoformat()


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
