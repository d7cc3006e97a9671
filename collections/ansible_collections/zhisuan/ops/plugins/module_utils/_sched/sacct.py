# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Slurm's own accounting, ``sacct``, read into job records: pure parsers, standard library only.

Forms read (tests/fixtures/slurm holds real captures of each, with where they came from):

* ``sacct --json`` of Slurm 21.08 (``openapi/dbv0.0.37``), 22.05 (``dbv0.0.38``), 23.02 (``data_parser/v0.0.39``),
  23.11 (``v0.0.40``) and 24.x/25.x (``v0.0.41``-``v0.0.43``): the state is a string (<= 23.02) or a list of flags
  (>= 23.11), numbers are plain (<= 23.02) or ``{"set", "infinite", "number"}`` (>= 23.11), the exit code is
  ``{"status", "return_code"}`` with the return code and the signal plain or wrapped;
* ``sacct -p`` / ``--parsable2`` / ``-P`` with the header line (``JobID|JobName|...|``; ``-p`` ends every line with
  the delimiter, ``-P`` does not) or without it (``--noheader``: the ``--format`` fields are then given), any
  ``--delimiter``.

Every reader is tolerant line by line: a record it cannot read is a warning naming it (line number, or the job's
index in ``jobs``), never the refusal of the whole output; a truncated JSON document keeps the jobs read before the
cut and says ``truncated``. Only an output with nothing readable at all raises ParseError.

``parse_sacct(text, fields=None, delimiter=None)`` detects the form and returns
``{"form", "version", "jobs": [...], "warnings": [...], "truncated"}``; each job is
``{id, name, state, flags, reason, nodes, nodelist, start, end, submit, elapsed_s, exit_code, signal, restarts,
failed_node, partition, steps}`` (times: epoch seconds, None when unset). ``per_node(jobs)`` counts, for every node,
the jobs that ended on it in each state; ``interruptions(jobs)`` the job-level indicators (interruptions, effective
run time, recovery time).
"""

import json
import re

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._safe_parse import depth_ok, finite, iso_time, to_int
from ansible_collections.zhisuan.ops.plugins.module_utils._sched.slurm_nodes import duration_s, expand_hostlist

TOOL = "sacct"
MAX_WARNINGS = 50
# states in which a job stopped before its end through something other than its own completion
INTERRUPTED = ("FAILED", "NODE_FAIL", "REQUEUED", "BOOT_FAIL", "PREEMPTED", "TIMEOUT", "OUT_OF_MEMORY", "DEADLINE")
# the states that say a NODE took the job down (not the job's own code, limits or memory)
NODE_STATES = ("NODE_FAIL", "BOOT_FAIL")
# states that end in the job's own fault (its code, its time limit, its memory request): no node diagnosis
APP_STATES = ("TIMEOUT", "OUT_OF_MEMORY", "DEADLINE")
_NO_NODES = ("", "None assigned", "(null)", "None")
_ISO = re.compile(r"^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)$")
_STATE_WORD = re.compile(r"^[A-Z_]+")


def _num(value):
    """A plain number or Slurm's ``{"set": true, "number": n}`` as an int; unset, infinite or odd: None."""
    if isinstance(value, dict):
        if value.get("set") is False or value.get("infinite") is True:
            return None
        value = value.get("number")
    value = finite(value)
    return int(value) if value is not None else None


def _epoch(value):
    """A JSON time (epoch seconds; 0 = not yet) or a ``-p`` time (``2021-07-13T00:28:51``, sacct's local time read
    as UTC: only differences are used) -> epoch seconds or None (``Unknown``, ``None``, 0)."""
    if isinstance(value, str):
        match = _ISO.match(value.strip())
        if not match:
            return to_int(value) or None
        moment = iso_time(value.strip())
        return int(moment.timestamp()) if moment is not None else None
    number = _num(value)
    return number if number else None


def _states(value):
    """(main state, all flags): ``"FAILED"``, ``["FAILED"]``, ``["CANCELLED", "REQUEUED"]``,
    ``"CANCELLED by 1000"`` (``-p``)."""
    if isinstance(value, dict):
        value = value.get("current")
    if isinstance(value, list):
        words = [w for w in value if isinstance(w, str) and w]
    elif isinstance(value, str) and value:
        words = [value]
    else:
        return None, []
    flags = []
    for word in words:
        match = _STATE_WORD.match(word.strip())
        if match:
            flags.append(match.group(0))
    return (flags[0] if flags else None), flags


def _text(value):
    return value if isinstance(value, str) and value not in ("", "(null)", "None", "Unknown") else None


def _nodes(value, warnings, where):
    if isinstance(value, dict):  # steps: {"count", "range", "list"}
        value = value.get("range")
    if not isinstance(value, str) or value.strip() in _NO_NODES:
        return None, []
    try:
        return value, expand_hostlist(value.strip())
    except ParseError as exc:
        _warn(warnings, "%s: node list %r not read (%s)" % (where, value[:80], exc.message))
        return value, []


def _warn(warnings, text):
    if len(warnings) < MAX_WARNINGS:
        warnings.append(text)


def _exit(value):
    """(return code, signal) of a JSON ``exit_code`` or a ``-p`` ``ExitCode`` (``1:0``, ``0:9``)."""
    if isinstance(value, str):
        rc, dummy, sig = value.partition(":")
        return to_int(rc), to_int(sig)
    if not isinstance(value, dict):
        return None, None
    signal = value.get("signal")
    sig = None
    if isinstance(signal, dict):
        sig = _num(signal.get("id", signal.get("signal_id")))
    return _num(value.get("return_code")), sig


def _json_job(item, index, warnings):
    where = "jobs[%d]" % index
    if not isinstance(item, dict):
        _warn(warnings, "%s is not a job record (a %s)" % (where, type(item).__name__))
        return None
    job_id = _num(item.get("job_id"))
    state, flags = _states(item.get("state"))
    if job_id is None or state is None:
        _warn(warnings, "%s has no job_id or state.current: left out" % where)
        return None
    times = item.get("time") if isinstance(item.get("time"), dict) else {}
    state_doc = item.get("state") if isinstance(item.get("state"), dict) else {}
    nodelist, nodes = _nodes(item.get("nodes"), warnings, "%s (job %s)" % (where, job_id))
    rc, sig = _exit(item.get("exit_code"))
    array = item.get("array") if isinstance(item.get("array"), dict) else {}
    task = _num(array.get("task_id"))
    array_id = _num(array.get("job_id"))
    steps = item.get("steps") if isinstance(item.get("steps"), list) else []
    return {"id": "%s_%s" % (array_id, task) if array_id and task is not None else str(job_id),
            "job_id": str(job_id), "name": _text(item.get("name")), "state": state, "flags": flags,
            "reason": _text(state_doc.get("reason")), "nodelist": nodelist, "nodes": nodes,
            "start": _epoch(times.get("start")), "end": _epoch(times.get("end")),
            "submit": _epoch(times.get("submission")), "elapsed_s": _num(times.get("elapsed")),
            "exit_code": rc, "signal": sig, "restarts": _num(item.get("restart_cnt")),
            "failed_node": _text(item.get("failed_node")), "partition": _text(item.get("partition")),
            "steps": len(steps)}


def _version(meta):
    if not isinstance(meta, dict):
        return None
    slurm = meta.get("Slurm") if isinstance(meta.get("Slurm"), dict) else meta.get("slurm")
    if isinstance(slurm, dict):
        release = slurm.get("release")
        if isinstance(release, str) and release:
            return release
        version = slurm.get("version")
        if isinstance(version, dict):
            parts = [_num(version.get(k)) for k in ("major", "minor", "micro")]
            if None not in parts:
                return "%02d.%02d.%d" % tuple(parts)
    return None


def _salvage_jobs(text, warnings):
    """The job records of a JSON document cut short: each complete object of the ``"jobs"`` array before the cut."""
    start = text.find('"jobs"')
    if start < 0:
        return [], None
    bracket = text.find("[", start)
    if bracket < 0:
        return [], None
    decoder = json.JSONDecoder()
    items, pos = [], bracket + 1
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text) or text[pos] == "]":
            break
        try:
            item, pos = decoder.raw_decode(text, pos)
        except (ValueError, RecursionError):
            break
        items.append(item)
    meta = None
    mstart = text.find('"meta"')
    if 0 <= mstart < start:
        try:
            meta = decoder.raw_decode(text, text.find("{", mstart))[0]
        except (ValueError, RecursionError):
            meta = None
    return items, meta


def parse_json(text):
    """``sacct --json`` -> ``{form, version, jobs, warnings, truncated}``."""
    warnings = []
    truncated = False
    try:
        doc = json.loads(text, parse_constant=lambda name: None)
        if not depth_ok(doc):
            raise ValueError("nested too deeply")
    except (ValueError, RecursionError) as exc:
        items, meta = _salvage_jobs(text, warnings)
        if not items:
            raise ParseError(TOOL, "'sacct --json' output is not JSON and holds no complete job record: %s"
                             % str(exc)[:160])
        truncated = True
        _warn(warnings, "the JSON document is cut short or damaged (%s): the %d job record(s) before the damage "
                        "are read" % (str(exc)[:120], len(items)))
        doc = {"jobs": items, "meta": meta}
    if not isinstance(doc, dict) or not isinstance(doc.get("jobs"), list):
        raise ParseError(TOOL, "'sacct --json' output has no 'jobs' list")
    errors = doc.get("errors")
    if isinstance(errors, list):
        for error in errors[:5]:
            if isinstance(error, dict) and (error.get("description") or error.get("error")):
                _warn(warnings, "sacct reported: %s" % str(error.get("description") or error.get("error"))[:200])
    jobs = []
    for index, item in enumerate(doc["jobs"]):
        job = _json_job(item, index, warnings)
        if job is not None:
            jobs.append(job)
    return {"form": "json", "version": _version(doc.get("meta")), "jobs": jobs, "warnings": warnings,
            "truncated": truncated}


_FIELD = {"jobid": "id", "jobidraw": "job_id", "jobname": "name", "state": "state", "nodelist": "nodelist",
          "start": "start", "end": "end", "submit": "submit", "elapsed": "elapsed", "elapsedraw": "elapsedraw",
          "exitcode": "exit_code", "partition": "partition", "reason": "reason", "restarts": "restarts"}


def _parsable_row(values, names, number, warnings):
    row = dict(zip(names, values))
    job_id = (row.get("jobid") or "").strip()
    state, flags = _states(row.get("state"))
    if not job_id or state is None:
        _warn(warnings, "line %d has no JobID or State: %r" % (number, "|".join(values)[:120]))
        return None
    nodelist, nodes = _nodes(row.get("nodelist"), warnings, "line %d (job %s)" % (number, job_id))
    rc, sig = _exit(row.get("exitcode"))
    elapsed = to_int(row.get("elapsedraw"))
    if elapsed is None:
        elapsed = duration_s((row.get("elapsed") or "").strip())
    return {"id": job_id, "job_id": (row.get("jobidraw") or "").strip() or job_id, "name": _text(row.get("jobname")),
            "state": state, "flags": flags, "reason": _text(row.get("reason")), "nodelist": nodelist, "nodes": nodes,
            "start": _epoch(row.get("start")), "end": _epoch(row.get("end")), "submit": _epoch(row.get("submit")),
            "elapsed_s": elapsed, "exit_code": rc, "signal": sig, "restarts": to_int(row.get("restarts")),
            "failed_node": None, "partition": _text(row.get("partition")), "steps": 0}


def parse_parsable(text, fields=None, delimiter=None):
    """``sacct -p`` / ``-P`` (with the header line, or ``--noheader`` with ``fields``: the ``--format`` list) ->
    ``{form, version, jobs, warnings, truncated}``. Step lines (``123.batch``, ``123.0``) are counted in their
    job's ``steps``."""
    warnings = []
    lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    if not lines:
        raise ParseError(TOOL, "'sacct -p' output is empty (read 0 lines)")
    if fields:
        names = [f.strip().lower().split("%", 1)[0] for f in (fields.split(",") if isinstance(fields, str) else fields)]
        delimiter = delimiter or "|"
        body = lines
    else:
        head_number, head = lines[0]
        delimiter = delimiter or "|"
        names = [f.strip().lower() for f in head.split(delimiter)]
        if "jobid" not in names or "state" not in names:
            raise ParseError(TOOL, "line %d of 'sacct -p' output is no header with JobID and State (%r); a "
                                   "--noheader output needs its --format fields" % (head_number, head[:120]))
        if names and names[-1] == "":
            names = names[:-1]
        body = lines[1:]
    width = len(names)
    jobs, by_id = [], {}
    for number, line in body:
        values = line.split(delimiter)
        if len(values) == width + 1 and values[-1] == "":
            values = values[:-1]  # -p: every line ends with the delimiter
        if len(values) != width:
            _warn(warnings, "line %d has %d fields, the header %d: left out (%r)" % (number, len(values), width,
                                                                                     line[:120]))
            continue
        job = _parsable_row(values, names, number, warnings)
        if job is None:
            continue
        base, dot, dummy = job["id"].partition(".")
        if dot:
            if base in by_id:
                by_id[base]["steps"] += 1
            continue
        by_id[job["id"]] = job
        jobs.append(job)
    if not jobs and warnings:
        raise ParseError(TOOL, "no line of the 'sacct -p' output could be read: %s" % warnings[0])
    return {"form": "parsable", "version": None, "jobs": jobs, "warnings": warnings, "truncated": False}


def parse_sacct(text, fields=None, delimiter=None):
    """Either form, detected from the content (JSON starts with ``{``)."""
    if not isinstance(text, str) or not text.strip():
        raise ParseError(TOOL, "sacct output is empty (read 0 lines)")
    if text.lstrip().startswith("{"):
        return parse_json(text)
    return parse_parsable(text, fields, delimiter)


def blamed_nodes(job):
    """The nodes a job's end is put on: its ``failed_node`` when Slurm names one, else all its nodes."""
    failed = job.get("failed_node")
    return [failed] if failed else list(job.get("nodes") or [])


def per_node(jobs, since=None, until=None):
    """``{node: {jobs, <STATE>: n, ..., job_ids: {state: [ids]}}}`` of the jobs that ended (or started, when
    running) within [since, until] (epoch seconds; None: no bound)."""
    out = {}
    for job in jobs:
        moment = job.get("end") or job.get("start")
        if moment is not None and ((since is not None and moment < since) or (until is not None and moment > until)):
            continue
        for node in blamed_nodes(job):
            entry = out.setdefault(node, {"jobs": 0, "states": {}, "job_ids": {}})
            entry["jobs"] += 1
            state = job["state"]
            entry["states"][state] = entry["states"].get(state, 0) + 1
            ids = entry["job_ids"].setdefault(state, [])
            if len(ids) < 10:
                ids.append(job["id"])
    return out


def interruptions(jobs):
    """Job-level indicators from the records: ``{jobs, interrupted, by_state, run_s, lost_s, recovery_s}``.

    ``run_s``: the seconds the jobs ran (sum of elapsed); ``lost_s``: the run time of attempts that ended
    interrupted (``INTERRUPTED``); ``recovery_s``: for each interrupted attempt followed by another attempt of the
    same job id (``sacct -D`` lists every attempt), the time from its end to the next attempt's start."""
    by_state, run_s, lost_s, recoveries = {}, 0, 0, []
    attempts = {}
    for job in jobs:
        elapsed = job.get("elapsed_s") or 0
        run_s += elapsed
        if job["state"] in INTERRUPTED or "REQUEUED" in job.get("flags", []):
            by_state[job["state"]] = by_state.get(job["state"], 0) + 1
            lost_s += elapsed
        attempts.setdefault(job["job_id"], []).append(job)
    for tries in attempts.values():
        tries = sorted((t for t in tries if t.get("start")), key=lambda t: t["start"])
        for before, after in zip(tries, tries[1:]):
            if before["state"] in INTERRUPTED and before.get("end") and after["start"] >= before["end"]:
                recoveries.append(after["start"] - before["end"])
    return {"jobs": len(jobs), "interrupted": sum(by_state.values()), "by_state": by_state, "run_s": run_s,
            "lost_s": lost_s, "recovery_s": recoveries}
