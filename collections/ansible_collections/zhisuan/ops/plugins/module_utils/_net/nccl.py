# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""nccl-tests output (``all_reduce_perf``, ``all_gather_perf``, …) -> the ``nccl`` facts.

The result table is read BY ITS COLUMN HEADER, because the header differs between nccl-tests versions and tests:

* ``#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong`` (2.13 and later),
* ``#  size count type redop time algbw busbw error time algbw busbw error`` (older all_reduce_perf),
* ``#  size count type time algbw busbw error ...`` (all_gather_perf: no reduction, no root);

the leading columns are those before the first ``time``; then come groups of ``time algbw busbw (error|#wrong)``, named
by the line above the header (``out-of-place`` … ``in-place``). ``N/A`` is ``None``; a ``FAILED`` in a check column
marks the point ``failed``. Lines of ``mpirun --tag-output`` (``[1,0]<stdout>:``) are read without their tag.

Errors: a ``Test NCCL failure`` / ``Test CUDA failure`` / ``Test failure`` line is a ToolFailed that names the host and
the NCCL message; output without the table is a ParseError. ``failure(text)`` finds those lines and the Open MPI
launcher's errors for the runner. Pure functions, stdlib only.
"""

import re

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError, ToolFailed

TOOL = "nccl-tests"
KNOWN_OPS = ("all_reduce_perf", "all_gather_perf", "broadcast_perf", "reduce_perf", "reduce_scatter_perf",
             "alltoall_perf", "sendrecv_perf", "scatter_perf", "gather_perf", "hypercube_perf")

_TAG_RE = re.compile(r"^\[\d+,\d+\]<std(?:out|err)>:", re.ASCII)
# "#  Rank  0 Group  0 Pid  14010 on R6KD-GPU-14 device  0 [0000:06:00] NVIDIA H100" (Group since 2.10) or
# "#   Rank  0 Pid 112424 on localhost device  0 [0x00] A100-SXM4-40GB"
_DEVICE_RE = re.compile(r"^#\s+Rank\s+(?P<rank>\d{1,9})\s+(?:Group\s+(?P<group>\d{1,9})\s+)?Pid\s+(?P<pid>\d{1,12})\s+on\s+"
                        r"(?P<host>\S+)\s+device\s+(?P<device>\d{1,9})\s+\[(?P<bus>[^\]]*)\]\s*(?P<name>.*?)\s*$", re.ASCII)
_PARAMS_RE = re.compile(r"^#\s*nThread\s")
_OOB_RE = re.compile(r"^#\s*Out of bounds values\s*:\s*([0-9]{1,18})\s+(\S+)", re.ASCII)
_AVG_RE = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*(\S+)")
_VERSION_RE = re.compile(r"^#\s*nccl-tests version\s+(\S+)")
_STARTING_RE = re.compile(r"^#\s*Collective test starting:\s*(\S+)")
_FAILURE_RE = re.compile(r"^(?:(?P<host>\S+): )?Test (?P<what>NCCL|CUDA|CURAND) failure (?P<where>\S+) '(?P<msg>.*)'\s*$")
_TEST_FAILURE_RE = re.compile(r"^\s*\.\. (?P<host>\S+) pid (?P<pid>\d+): Test failure (?P<where>\S+)\s*$", re.ASCII)
_GROUP_COLUMNS = ("time", "algbw", "busbw")
_CHECK_COLUMNS = ("#wrong", "error")
_PARAM_KEYS = {
    "nThread": "threads", "nGpus": "gpus_per_process", "minBytes": "min_bytes", "maxBytes": "max_bytes",
    "iters": "iters", "validation": "validation", "graph": "graph",
}
# Open MPI / launcher lines that say why mpirun gave up, in the order they are most telling.
_MPI_ERRORS = (
    re.compile(r"^There are not enough slots available"),
    re.compile(r"^mpirun was unable to (?:launch|find|start).*"),
    re.compile(r"^ORTE was unable to reliably start.*"),
    re.compile(r"^(?:ssh|kex_exchange_identification): .*"),
    re.compile(r"^mpirun noticed that process rank .*"),
    re.compile(r"^mpirun detected that one or more processes exited with non-zero status.*"),
    re.compile(r"^Primary job\s+terminated normally, but \d+ process returned.*"),
    re.compile(r"^mpirun: .*"),
)


def _lines(text):
    for raw in text.splitlines():
        yield _TAG_RE.sub("", raw).rstrip()


def failure(text):
    """Why a run failed, from its output: a nccl-tests failure line or the launcher's error, else ``None``."""
    first_test = None
    for line in _lines(text):
        found = _FAILURE_RE.match(line)
        if found:
            host = found.group("host")
            return "Test %s failure%s at %s: '%s'" % (found.group("what"), " on %s" % host if host else "",
                                                      found.group("where"), found.group("msg"))
        found = _TEST_FAILURE_RE.match(line)
        if found and first_test is None:
            first_test = "Test failure on %s (pid %s) at %s" % (found.group("host"), found.group("pid"), found.group("where"))
    if first_test:
        return first_test
    lines = [line.strip() for line in _lines(text)]
    for pattern in _MPI_ERRORS:
        for line in lines:
            if pattern.match(line):
                return "mpirun: %s" % line
    return None


_INT_RE = re.compile(r"^-?[0-9]{1,18}$", re.ASCII)
_FLOAT_RE = re.compile(r"^-?[0-9]{1,15}(?:\.[0-9]{1,9})?(?:[eE][-+]?[0-9]{1,2})?$", re.ASCII)
# No interconnect moves 100 TB/s: a bandwidth beyond this is damage, not a measurement.
MAX_BANDWIDTH_GBS = 100000.0
_LIMITS = {"algbw": MAX_BANDWIDTH_GBS, "busbw": MAX_BANDWIDTH_GBS, "avg_busbw": MAX_BANDWIDTH_GBS}


def _number(token, kind, line, column=None):
    """One number of the output; ``N/A`` is None. ASCII digits only, finite, not negative, and a bandwidth below
    ``MAX_BANDWIDTH_GBS``: anything else is a ParseError naming the value (never a NaN or 10**29 GB/s in the facts)."""
    if token == "N/A":
        return None
    if not (_INT_RE if kind == "int" else _FLOAT_RE).match(token):
        raise ParseError(TOOL, "a %s value %r that is not a number in the result line %r"
                         % (kind, token[:40], line.strip()[:200]))
    value = int(token) if kind == "int" else float(token)
    limit = _LIMITS.get(column)
    if (value < 0 and column != "root") or (limit is not None and value > limit) or value > 1e15:
        raise ParseError(TOOL, "an implausible %s %r in the result line %r" % (column or "value", token[:40],
                                                                               line.strip()[:200]))
    return value


def _params(line):
    """``# nThread 1 nGpus 8 minBytes 1 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 …``."""
    tokens = line.lstrip("#").replace(":", " ").split()
    params = {}
    for position, token in enumerate(tokens[:-1]):
        key = _PARAM_KEYS.get(token)
        if key and position + 1 < len(tokens) and re.match(r"^-?\d+$", tokens[position + 1]):
            if token == "iters" and position > 0 and tokens[position - 1] in ("warmup", "agg"):
                key = tokens[position - 1] + "_iters"
            params[key] = int(tokens[position + 1])
    return params


def _header(line, group_line):
    """The column layout of a header line: (leading column names, [(group name, [column names])])."""
    names = line[1:].split()
    if "time" not in names:
        raise ParseError(TOOL, "result header without a 'time' column: %r" % line.strip())
    lead = names[:names.index("time")]
    if not lead or lead[0] != "size":
        raise ParseError(TOOL, "result header does not start with 'size': %r" % line.strip())
    rest = names[len(lead):]
    labels = [word.replace("-", "_") for word in (group_line or "").lstrip("#").split()]
    groups = []
    while rest:
        chunk = rest[:4]
        if tuple(chunk[:3]) != _GROUP_COLUMNS or len(chunk) < 4 or chunk[3] not in _CHECK_COLUMNS:
            raise ParseError(TOOL, "unknown result columns %s in the header %r" % (" ".join(rest), line.strip()))
        index = len(groups)
        name = labels[index] if index < len(labels) else ("out_of_place", "in_place")[index] if index < 2 else "group%d" % index
        groups.append((name, chunk))
        rest = rest[4:]
    return lead, groups


def _blank_redop(tokens, lead, columns):
    """Older nccl-tests print the ``redop`` column of a test without reduction (``alltoall_perf``) BLANK, so its rows
    are one field short of the header (a real capture: tests/fixtures/nccl-tests/alltoall_perf-*-blank-redop.log).
    Put the empty field back when that is what the row is: one short, and a number where the redop would be."""
    if "redop" not in lead or len(tokens) != len(columns) - 1:
        return tokens
    position = lead.index("redop")
    if position >= len(tokens) or not _FLOAT_RE.match(tokens[position]):
        return tokens
    return tokens[:position] + [""] + tokens[position:]


def _row(tokens, lead, groups, line):
    point = {"bytes": _number(tokens[0], "int", line)}
    for name, token in zip(lead[1:], tokens[1:len(lead)]):
        if name == "count":
            point["count"] = _number(token, "int", line)
        elif name == "root":
            point["root"] = _number(token, "int", line, "root")  # -1: a test without a root
        else:
            point[name] = token or None  # the blank redop of older alltoall_perf (see _blank_redop)
    position = len(lead)
    point["failed"] = False
    for name, columns in groups:
        values = tokens[position:position + 4]
        position += 4
        group = {"time_us": _number(values[0], "float", line, "time"),
                 "algbw": _number(values[1], "float", line, "algbw"),
                 "busbw": _number(values[2], "float", line, "busbw")}
        check = values[3]
        if check == "FAILED":
            point["failed"] = True
            group["wrong"] = None
        elif columns[3] == "#wrong":
            group["wrong"] = _number(check, "int", line)
        else:
            group["error"] = _number(check, "float", line)
        point[name] = group
    return point


def parse(text, op=None, warn=None):
    """Parse one nccl-tests run (see ``_parse``): facts, or a ToolFailed / ParseError naming what was wrong."""
    try:
        return _parse(text, op=op, warn=warn)
    except (ValueError, TypeError, IndexError, KeyError, OverflowError, RecursionError) as exc:
        raise ParseError(TOOL, "%s: unexpected output (%s: %s); please report"
                         % (op or "nccl-tests", type(exc).__name__, str(exc)[:200]))


def _parse(text, op=None, warn=None):
    """Parse one nccl-tests run. ``op`` names the test when the output does not (``all_reduce_perf``).

    Returns ``{op, version, params, devices, nodes, columns, points, out_of_bounds, out_of_bounds_ok, avg_busbw}``;
    ``points`` lists ``{bytes, count, type, [redop], [root], failed, out_of_place: {time_us, algbw, busbw, wrong
    | error}, in_place: {…}}`` in the printed order. Raises ToolFailed for a nccl-tests failure, ParseError when no
    result table can be read.
    """
    if not isinstance(text, str) or not text.strip():
        raise ParseError(TOOL, "empty output")
    failed = failure(text)
    if failed and failed.startswith("Test "):
        raise ToolFailed(TOOL, "%s: %s" % (op or "nccl-tests", failed))
    result = {"op": op, "version": None, "params": {}, "devices": [], "nodes": [], "columns": [], "points": [],
              "out_of_bounds": None, "out_of_bounds_ok": None, "avg_busbw": None}
    layout, previous = None, None
    for line in _lines(text):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            found = _DEVICE_RE.match(stripped)
            if found:
                result["devices"].append({
                    "rank": int(found.group("rank")),
                    "group": int(found.group("group")) if found.group("group") is not None else None,
                    "pid": int(found.group("pid")), "host": found.group("host"), "device": int(found.group("device")),
                    "bus_id": found.group("bus"), "name": found.group("name")})
            elif _PARAMS_RE.match(stripped):
                result["params"] = _params(stripped)
            elif _VERSION_RE.match(stripped):
                result["version"] = _VERSION_RE.match(stripped).group(1)
            elif _STARTING_RE.match(stripped):
                result["op"] = result["op"] or _STARTING_RE.match(stripped).group(1)
            elif _OOB_RE.match(stripped):
                found = _OOB_RE.match(stripped)
                result["out_of_bounds"] = int(found.group(1))
                result["out_of_bounds_ok"] = found.group(2) == "OK"
            elif _AVG_RE.match(stripped):
                result["avg_busbw"] = _number(_AVG_RE.match(stripped).group(1), "float", stripped, "avg_busbw")
            elif re.match(r"^#\s+size\s", stripped) and "busbw" in stripped.split():
                layout = _header(stripped, previous if previous and "place" in previous else None)
                result["columns"] = layout[0] + [column for dummy, group in layout[1] for column in group]
            previous = stripped
            continue
        previous = stripped
        tokens = stripped.split()
        if layout is None or not re.match(r"^\d+$", tokens[0]):
            continue
        if len(tokens) != len(result["columns"]):
            tokens = _blank_redop(tokens, layout[0], result["columns"])
        if len(tokens) != len(result["columns"]):
            if warn is not None:
                warn("%s: skipped a result line with %d fields, the header has %d: %r"
                     % (TOOL, len(tokens), len(result["columns"]), stripped))
            continue
        result["points"].append(_row(tokens, layout[0], layout[1], stripped))
    if layout is None:
        detail = failed or "no result table (no '#  size count type … busbw' header) in the output"
        raise ParseError(TOOL, "%s: %s" % (op or "nccl-tests", detail))
    if not result["points"]:
        raise ParseError(TOOL, "%s: the result table has no line%s" % (op or "nccl-tests", " (%s)" % failed if failed else ""))
    hosts = []
    for device in result["devices"]:
        if device["host"] not in hosts:
            hosts.append(device["host"])
    result["nodes"] = hosts
    return result


def point_busbw(point):
    """``(busbw, placement)`` of a point: the lower of its placements (a node must reach the floor in both)."""
    best = None
    for name in ("out_of_place", "in_place"):
        group = point.get(name)
        if group and group.get("busbw") is not None and (best is None or group["busbw"] < best[0]):
            best = (group["busbw"], name)
    return best or (None, None)


def point_wrong(point):
    """Wrong elements of a point (summed over placements); ``None`` when the run did not check the data."""
    counts = [point[name].get("wrong") for name in ("out_of_place", "in_place") if point.get(name)]
    counts = [count for count in counts if count is not None]
    return sum(counts) if counts else None
