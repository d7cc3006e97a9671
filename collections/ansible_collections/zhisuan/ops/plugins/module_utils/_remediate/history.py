# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""The remediation history: one JSON object per line, appended, never rewritten (the KPIs — MTTR, repairs per
cause, RMA rate — and the escalation of repeat offenders are computed from it). The record shape is documented in
docs/remediation.md.

A run writes as it goes, not at its end: the record of a node's action (outcome ``acted``) is appended as soon as
the action returns, and the node's final record (``repaired``, ``failed``, ...) when its remediation ends; the
final record supersedes the ``acted`` one of the same run and node (``read``). A run cut off between the two
(AWX cancelled it, a job timeout) leaves the ``acted`` record: the action still counts for escalation.

Every append is one locked ``write`` of whole lines, length-checked and fsync'd. A short write (a full disk) is a
``HistoryError``; the fragment it leaves is ended with a newline before the next record, so no record is ever glued
onto it, and ``read`` passes over it with a warning."""

from __future__ import annotations

import datetime
import errno
import fcntl
import json
import os
import time

from ansible_collections.zhisuan.ops.plugins.module_utils._safe_parse import iso_time

SCHEMA = "zhisuan.ops/remediation-history/v1"
FILE_NAME = "remediation.jsonl"
# ``acted``: the action was carried out, the verification and resume are not recorded (yet, or ever: the run was cut
# off); superseded by the node's final record of the same run. ``resumed``: a node an earlier run left drained
# (stranded) was verified and resumed, no action of its own
ACTED = "acted"
OUTCOMES = ("repaired", "failed", "refused", "ticket", "awaiting_approval", "deferred", "held", "skipped", "planned",
            "shared_cause", ACTED, "resumed")
# the cause of a record for a node the plan left alone without an entry (drained by someone else)
OPERATOR_CAUSE = "scheduler.drain.operator"
# seconds an append waits for another run's append to end before it gives up (an append holds the lock for one
# write and an fsync: milliseconds; a lock held this long is a hung process or a stuck network file system)
LOCK_TIMEOUT_S = 60.0
# the most of the history file a read takes, its newest part: escalation and the KPIs look back weeks, not years
# (a record is ~600 bytes: 64 MiB hold about 100,000 actions); older records are passed over, said so
READ_MAX_BYTES = 64 * 1024 * 1024
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


def build(node, run_id, outcome, entry=None, message=None, cause=None, source_run_id=None, detected=None,
          started=None, finished=None, resumed=None, verification=None, scheduler=None, evidence=None, ticket=None,
          now=None):
    """The history record of ``node`` in run ``run_id``, made once, here: from the node's plan entry (``entry``:
    {action, remedy, mode, why}; None for a node the plan left alone without one, e.g. drained by someone else, whose
    ``cause`` is then the one given or ``scheduler.drain.operator``), the ``outcome`` and what the run did (times,
    verification, scheduler, evidence, ticket). Checked and completed by ``make_record``. Raises HistoryError."""
    if entry is not None and not isinstance(entry, dict):
        raise HistoryError("history record for %s: the plan entry must be a mapping, got %s" % (node, type(entry).__name__))
    entry = entry or {}
    why = entry.get("why") or {}
    now = now or datetime.datetime.now(datetime.timezone.utc)
    raw = {
        "time": now.replace(microsecond=0).isoformat(), "run_id": run_id, "source_run_id": source_run_id,
        "node": node, "cause": why.get("cause") or cause or (OPERATOR_CAUSE if not entry else "unknown"),
        "component": why.get("component"), "remedy": entry.get("remedy") or "none",
        "action": entry.get("action") or "none", "mode": entry.get("mode") or "none", "outcome": outcome,
        "message": message or "", "detected": detected, "started": started, "finished": finished,
        "resumed": resumed, "verification": verification, "scheduler": scheduler, "evidence": evidence,
        "ticket": ticket,
    }
    return make_record(raw)


def _ends_torn(fd):
    """Whether the file ends inside a line (an earlier write was cut short)."""
    size = os.fstat(fd).st_size
    return size > 0 and os.pread(fd, 1, size - 1) != b"\n"


def lock(fd, path, timeout=None, what="append to"):
    """Take the exclusive ``flock`` of ``fd`` (the file ``path``), waiting at most ``timeout`` seconds
    (``LOCK_TIMEOUT_S``); HistoryError naming the file past that."""
    timeout = LOCK_TIMEOUT_S if timeout is None else timeout
    deadline = time.monotonic() + timeout
    delay = 0.005
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except (IOError, OSError) as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise
        if time.monotonic() >= deadline:
            raise HistoryError("%s: cannot %s it: another process held its lock for more than %g s (a hung run, or "
                               "a network file system without working locks); nothing was written" % (path, what, timeout))
        time.sleep(delay)
        delay = min(delay * 2, 0.2)


def append(directory, records, timeout=None):
    """Append ``records`` (already made) to ``<directory>/remediation.jsonl``, one line each, in one write (under an
    exclusive lock: the nodes of a batch append at once), then fsync. A file that ends inside a line (a write cut
    short earlier) gets a newline first. A short write raises HistoryError naming the file and the bytes written;
    so does a lock another process holds past ``timeout`` seconds (``LOCK_TIMEOUT_S``). Returns the path."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, FILE_NAME)
    data = "".join(json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n" for record in records)
    if not data:
        return path
    payload = data.encode("utf-8")
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        lock(fd, path, timeout)
        if _ends_torn(fd):
            payload = b"\n" + payload
        written = os.write(fd, payload)
        if written != len(payload):
            try:
                # end the fragment, so the next record starts on a line of its own (else the next append does)
                os.write(fd, b"\n")
            except OSError:
                pass
            raise HistoryError("%s: short write, %d of %d bytes of %d record(s) (%s) written (is the disk full?); "
                               "the fragment is passed over on read" % (
                                   path, written, len(payload), len(records),
                                   ", ".join(sorted(set(str(r.get("node")) for r in records)))))
        os.fsync(fd)
    finally:
        os.close(fd)
    return path


def _superseded(records):
    """Drop each ``acted`` record that a later record of the same run and node supersedes."""
    last = {}
    for position, record in enumerate(records):
        last[(record.get("run_id"), record.get("node"))] = position
    return [record for position, record in enumerate(records)
            if record.get("outcome") != ACTED or last[(record.get("run_id"), record.get("node"))] == position]


def read(path, warn=None, raw=False, max_bytes=None):
    """Every record of a history file, in order; an ``acted`` record is left out when a later record of the same
    run and node supersedes it (unless ``raw``). A line that is not a JSON object is passed over with ``warn``
    (``warn(message)``) naming the file and line: a last line without its newline is a torn write (the run or the
    disk stopped it), said so. A missing file is an empty history; one that cannot be read too, with ``warn``.
    Only the newest ``max_bytes`` (``READ_MAX_BYTES``) of a larger file are read, from the first whole line in them,
    with ``warn`` saying how much older history was passed over (line numbers then count from there)."""
    records = []
    if not os.path.exists(path):
        return records
    limit = READ_MAX_BYTES if max_bytes is None else int(max_bytes)
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > limit:
                handle.seek(size - limit - 1)
                data = handle.read()
                # the byte before the window tells whether it starts on a line of its own
                start = 1 if data[:1] == b"\n" else data.find(b"\n") + 1
                data = data[start:] if start > 0 else b""
                if warn is not None:
                    warn("%s is %.1f MiB, over the %.1f MiB read: its newest %d bytes read, %d bytes of older records "
                         "passed over (rotate the file to keep them)" % (
                             path, size / 1048576.0, limit / 1048576.0, len(data), size - len(data)))
            else:
                data = handle.read()
            lines = data.split(b"\n")
    except (IOError, OSError) as exc:
        # the history cannot be read (not a file, no permission): an empty history, said so
        if warn is not None:
            warn("%s cannot be read (%s); read as an empty history" % (path, exc))
        return records
    # the text after the last newline: empty, or a line whose write was cut short
    torn = len(lines) - 1 if lines[-1].strip() else None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line.decode("utf-8"))
        except ValueError as exc:
            record, problem = None, "not JSON (%s)" % exc
        else:
            problem = "not a history record"
        if not isinstance(record, dict) or record.get("schema") != SCHEMA:
            if warn is not None:
                if torn == number - 1:
                    problem = "a torn last line (%d bytes without a newline: a write cut short), %s" % (len(line), problem)
                warn("%s line %d: %s; passed over" % (path, number, problem))
            continue
        records.append(record)
    return records if raw else _superseded(records)
