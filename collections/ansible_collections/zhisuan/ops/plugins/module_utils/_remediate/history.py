# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""The remediation history: one JSON object per line, appended, never rewritten (the KPIs — MTTR, repairs per
cause, RMA rate — are computed from it). The record shape is documented in docs/remediation.md."""

from __future__ import annotations

import datetime
import json
import os

from ansible_collections.zhisuan.ops.plugins.module_utils._safe_parse import iso_time

SCHEMA = "zhisuan.ops/remediation-history/v1"
FILE_NAME = "remediation.jsonl"
OUTCOMES = ("repaired", "failed", "refused", "ticket", "awaiting_approval", "deferred", "held", "skipped", "planned",
            "shared_cause")
_REQUIRED = ("time", "run_id", "node", "cause", "action", "outcome")
_TIMES = ("detected", "started", "finished", "resumed")


class HistoryError(ValueError):
    """A record that cannot be written or a history file that cannot be read."""


def _parse_time(value, where):
    if value in (None, ""):
        return None
    parsed = iso_time(value if isinstance(value, datetime.datetime) else str(value))
    if parsed is None:
        raise HistoryError("%s: %r is not an ISO 8601 time" % (where, value))
    return parsed


def _seconds(start, end):
    if start is None or end is None:
        return None
    return round((end - start).total_seconds(), 1)


def make_record(raw):
    """A history record from ``raw`` (node, run_id, cause, action, outcome, times, ...): required keys checked,
    the durations computed from the times. Raises HistoryError."""
    if not isinstance(raw, dict):
        raise HistoryError("a history record must be a mapping, got %s" % type(raw).__name__)
    missing = [key for key in _REQUIRED if raw.get(key) in (None, "")]
    if missing:
        raise HistoryError("history record for %s lacks %s" % (raw.get("node", "?"), ", ".join(missing)))
    if raw["outcome"] not in OUTCOMES:
        raise HistoryError("history record for %s: unknown outcome %r (known: %s)"
                           % (raw["node"], raw["outcome"], ", ".join(OUTCOMES)))
    where = "history record for %s" % raw["node"]
    times = dict((key, _parse_time(raw.get(key), "%s: %s" % (where, key))) for key in _TIMES + ("time",))
    record = {"schema": SCHEMA}
    for key in ("time", "run_id", "source_run_id", "node", "cause", "component", "remedy", "action", "mode",
                "outcome", "message", "detected", "started", "finished", "resumed", "verification", "scheduler",
                "evidence", "ticket"):
        if key in raw:
            record[key] = raw[key]
    repaired = times["resumed"] if raw["outcome"] == "repaired" else None
    record["durations"] = {
        "detect_to_action_s": _seconds(times["detected"], times["started"]),
        "action_s": _seconds(times["started"], times["finished"]),
        "detect_to_repair_s": _seconds(times["detected"], repaired),
    }
    return record


def append(directory, records):
    """Append ``records`` (already made) to ``<directory>/remediation.jsonl``, one line each, in one write of the
    whole batch (O_APPEND, then fsync). Returns the path."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, FILE_NAME)
    data = "".join(json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n" for record in records)
    if not data:
        return path
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    return path


def read(path, warn=None):
    """Every record of a history file, in order. A line that is not a JSON object is passed over with ``warn``
    (``warn(message)``) naming the file and line; a missing file is an empty history."""
    records = []
    if not os.path.exists(path):
        return records
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError as exc:
                record, problem = None, "not JSON (%s)" % exc
            else:
                problem = "not a history record"
            if not isinstance(record, dict) or record.get("schema") != SCHEMA:
                if warn is not None:
                    warn("%s line %d: %s; passed over" % (path, number, problem))
                continue
            records.append(record)
    return records
