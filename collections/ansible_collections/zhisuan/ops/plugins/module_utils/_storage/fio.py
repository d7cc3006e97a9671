# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Pure parsers of fio's output: ``--output-format=json`` (fio 3.x) and fio's one-line error messages.

fio 3.x JSON: top-level ``fio version``, ``jobs`` (one entry per job, or per group with ``group_reporting``) and
``disk_util``. Each job has ``jobname``, ``error`` (an errno, 0 when fine), ``job options`` and one section per
direction (``read``, ``write``, ``trim``) with ``bw`` (KiB/s), ``iops``, ``runtime`` (ms), ``io_bytes``,
``total_ios`` and latencies in ns (``clat_ns``/``lat_ns``; the percentiles, keys like ``"99.000000"``, are on
``clat_ns`` unless the job asked for ``lat_percentiles``). fio 2.x wrote ``clat``/``lat`` in microseconds; both are
read.

When an I/O fails, fio prints a line such as
``fio: pid=8281, err=84/file:io_u.c:2141, func=io_u_queued_complete, error=Invalid or incomplete multibyte ...``
on stdout BEFORE the JSON document, and exits with rc 1; the job's ``error`` field holds the errno. Option errors
(``fio: /nonexistent is not a directory``) come with no JSON at all.
"""

import re

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._safe_parse import finite, is_ascii_digits, load_json

TOOL = "fio"
DIRECTIONS = ("read", "write", "trim")
# fio's percentile keys for the percentiles the facts keep.
PERCENTILES = (("p50", "50.000000"), ("p99", "99.000000"), ("p999", "99.900000"))
_KIB_PER_MIB = 1024.0
# Beyond any storage a node has (an exabyte per second, ten billion IOPS): such a reading is damage, not a result.
ABSURD = {"bw": 1e12, "iops": 1e10, "io_bytes": 1e21, "total_ios": 1e18, "runtime": 1e12}
# A latency in microseconds above about a month is no measurement.
ABSURD_LATENCY_US = 3e12

# fio: pid=19884, err=28/file:io_u.c:1876, func=io_u error, error=No space left on device
_JOB_ERROR = re.compile(r"^fio: pid=(?P<pid>\d+), err=(?P<err>-?\d+)/(?P<where>\S+), func=(?P<func>[^,]*), "
                        r"error=(?P<error>.*)$")
# fio: file:options.c:1457, func=lstat, error=No such file or directory
_FILE_ERROR = re.compile(r"^fio: (?P<where>file:\S+), func=(?P<func>[^,]*), error=(?P<error>.*)$")


def parse_error_line(line):
    """One of fio's error lines as a dict (``pid``, ``errno``, ``where``, ``func``, ``error``), else None."""
    line = line.strip()
    match = _JOB_ERROR.match(line)
    if match:
        return {"pid": int(match.group("pid")), "errno": int(match.group("err")), "where": match.group("where"),
                "func": match.group("func").strip(), "error": match.group("error").strip()}
    match = _FILE_ERROR.match(line)
    if match:
        return {"pid": None, "errno": None, "where": match.group("where"), "func": match.group("func").strip(),
                "error": match.group("error").strip()}
    return None


def describe_error(item):
    """A short text for one parsed error line."""
    text = "%s in %s" % (item["error"], item["func"] or "fio")
    if item["errno"] is not None:
        text = "err=%d (%s) in %s" % (item["errno"], item["error"], item["func"] or "fio")
    return text


def parse_errors(text):
    """fio's error lines in ``text`` (stdout or stderr): ``(errors, messages)``.

    ``errors`` are the structured ``fio: pid=..., err=...`` / ``fio: file:...`` lines (see ``parse_error_line``);
    ``messages`` every other ``fio: ...`` line as printed (``fio: /x is not a directory``).
    """
    errors = []
    messages = []
    for line in (text or "").splitlines():
        line = line.strip()
        if not line.startswith("fio:"):
            continue
        item = parse_error_line(line)
        if item is not None:
            errors.append(item)
        else:
            messages.append(line)
    return errors, messages


def split_output(text):
    """``(prefix, document)``: the text fio printed before its JSON document, and the document itself.

    Raises ParseError when there is no JSON document (fio stopped before running: an option error).
    """
    text = text or ""
    match = re.search(r"^\{", text, re.MULTILINE)
    if not match:
        errors, messages = parse_errors(text)
        if errors or messages:
            first = describe_error(errors[0]) if errors else messages[0]
            raise ParseError(TOOL, "no JSON document in the output; fio said: %s" % first)
        if not text.strip():
            raise ParseError(TOOL, "empty output (expected a JSON document from --output-format=json)")
        raise ParseError(TOOL, "no JSON document in the output (expected --output-format=json); it starts with %r"
                         % text.strip()[:80])
    return text[:match.start()], text[match.start():]


def _number(section, key, where):
    """A measured quantity: None when absent; ParseError when it is not a finite number, negative or absurd."""
    value = section.get(key)
    if value is None:
        return None
    if finite(value) is None:
        raise ParseError(TOOL, "%s.%s is not a number: %s" % (where, key, repr(value)[:80]))
    if value < 0 or value > ABSURD.get(key, float("inf")):
        raise ParseError(TOOL, "%s.%s is %s, not a possible reading" % (where, key, repr(value)[:80]))
    return value


def _latency_us(value, scale):
    """A latency value in microseconds, None when it is not a finite, non-negative, possible number."""
    value = finite(value)
    if value is None or value < 0 or value / scale > ABSURD_LATENCY_US:
        return None
    return round(value / scale, 3)


def _percentiles(section, scale):
    """Wanted percentiles of a latency section in microseconds (``scale``: divisor from its unit to us)."""
    table = section.get("percentile") if isinstance(section, dict) else None
    result = {}
    for name, key in PERCENTILES:
        result[name] = _latency_us(table.get(key), scale) if isinstance(table, dict) else None
    return result


def _mean(section, scale):
    samples = section.get("N", 1)
    return _latency_us(section.get("mean"), scale) if samples else None


def _latency(direction):
    """``(lat_us percentiles, mean_us, source)`` of one direction section: total latency percentiles when fio
    reported them, else completion latency; microseconds."""
    for key, scale in (("lat_ns", 1000.0), ("clat_ns", 1000.0), ("lat", 1.0), ("clat", 1.0)):
        section = direction.get(key)
        if isinstance(section, dict) and isinstance(section.get("percentile"), dict):
            return _percentiles(section, scale), _mean(section, scale), key
    for key, scale in (("lat_ns", 1000.0), ("clat_ns", 1000.0), ("lat", 1.0), ("clat", 1.0)):
        section = direction.get(key)
        if isinstance(section, dict):
            return dict((name, None) for name, _key in PERCENTILES), _mean(section, scale), key
    return dict((name, None) for name, _key in PERCENTILES), None, None


def _direction(section, where):
    if not isinstance(section, dict):
        raise ParseError(TOOL, "%s is not an object" % where)
    bw = _number(section, "bw", where)
    iops = _number(section, "iops", where)
    if bw is None or iops is None:
        raise ParseError(TOOL, "%s has no bw/iops" % where)
    lat, mean_us, source = _latency(section)
    return {
        "bw_mib": round(bw / _KIB_PER_MIB, 3),
        "iops": round(float(iops), 3),
        "io_bytes": _number(section, "io_bytes", where),
        "total_ios": _number(section, "total_ios", where),
        "runtime_ms": _number(section, "runtime", where),
        "lat_us": lat,
        "lat_mean_us": mean_us,
        "lat_source": source,
    }


def _job(raw, position, errors_by_pid, global_options):
    where = "jobs[%d]" % position
    if not isinstance(raw, dict):
        raise ParseError(TOOL, "%s is not an object" % where)
    name = raw.get("jobname")
    if not isinstance(name, str) or not name:
        raise ParseError(TOOL, "%s has no jobname" % where)
    options = dict(global_options)
    if isinstance(raw.get("job options"), dict):
        options.update(raw["job options"])
    directions = {}
    for key in DIRECTIONS:
        if key in raw:
            directions[key] = _direction(raw[key], "%s.%s" % (where, key))
    if not directions:
        raise ParseError(TOOL, "%s (%s) has no read, write or trim section" % (where, name))
    active = [key for key in DIRECTIONS if key in directions and _did_io(directions[key])]
    code = raw.get("error")
    if code is not None and (isinstance(code, bool) or not isinstance(code, int)):
        raise ParseError(TOOL, "%s.error is not an errno: %r" % (where, code))
    errors = []
    if code:
        errors.append("fio job error %d%s" % (code, _errno_text(code, errors_by_pid)))
    lat = dict((name_, None) for name_, _key in PERCENTILES)
    for key in active:
        for pct, value in directions[key]["lat_us"].items():
            if value is not None and (lat[pct] is None or value > lat[pct]):
                lat[pct] = value
    return name, {
        "rw": _text_option(options.get("rw")),
        "bs": _text_option(options.get("bs")),
        "iodepth": _int_option(options.get("iodepth")),
        "numjobs": _int_option(options.get("numjobs")),
        "bw_mib": round(sum(directions[key]["bw_mib"] for key in directions), 3),
        "iops": round(sum(directions[key]["iops"] for key in directions), 3),
        "lat_us": lat,
        "active": active,
        "directions": dict((key, directions[key]) for key in active),
        "runtime_ms": _job_runtime(raw, directions, where),
        "error": code or 0,
        "errors": errors,
    }


def _did_io(direction):
    """Whether a direction did any I/O: its ``total_ios`` (fio 2.2+ and 3.x), or, where fio did not print that
    (fio 2.1), its ``io_bytes``."""
    if direction["total_ios"] is not None:
        return direction["total_ios"] > 0
    return (direction["io_bytes"] or 0) > 0


def _int_option(value):
    """fio prints job options as strings ("16"); numbers are returned as int, anything else as printed (a string),
    or None for a value of another JSON type."""
    if is_ascii_digits(value):
        return int(value)
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    return value


def _text_option(value):
    return value if isinstance(value, str) else None


def _job_runtime(raw, directions, where):
    if raw.get("job_runtime") is not None:
        return _number(raw, "job_runtime", where)
    return max([directions[key]["runtime_ms"] or 0 for key in directions])


def _errno_text(code, errors_by_pid):
    for item in errors_by_pid:
        if item["errno"] == code:
            return " (%s in %s)" % (item["error"], item["func"] or "fio")
    return ""


def parse_json(text, warn=None):
    """fio ``--output-format=json`` output (stdout, possibly with fio's error lines before the document) → facts.

    Returns ``{fio_version, jobs: {name: {...}}, job_order, disk_util, messages}``; ``messages`` are fio's own lines
    printed before the document. Raises ParseError naming what is wrong.
    """
    prefix, document = split_output(text)
    data = load_json(document, TOOL, "the JSON document cannot be read: %s")
    if not isinstance(data, dict):
        raise ParseError(TOOL, "the JSON document is not an object")
    jobs = data.get("jobs")
    if not isinstance(jobs, list):
        raise ParseError(TOOL, "the JSON document has no jobs list (keys: %s)" % ", ".join(sorted(data)))
    if not jobs:
        raise ParseError(TOOL, "the JSON document lists no jobs")
    errors, messages = parse_errors(prefix)
    # options given before the first job (or in a job file's [global] section) apply to every job
    global_options = data.get("global options") if isinstance(data.get("global options"), dict) else {}
    result = {}
    order = []
    for position, raw in enumerate(jobs):
        name, job = _job(raw, position, errors, global_options)
        if name in result:
            if warn is not None:
                warn("fio reported job %r more than once; the later entry (jobs[%d]) is kept; use distinct job names "
                     "or group_reporting" % (name, position))
        else:
            order.append(name)
        result[name] = job
    # an error line fio printed whose errno no job carries still says the run was not clean
    known = set(job["error"] for job in result.values())
    stray = [describe_error(item) for item in errors if item["errno"] is None or item["errno"] not in known]
    if stray and len(order) == 1:
        result[order[0]]["errors"].extend(stray)
    elif stray and warn is not None:
        warn("fio printed errors not tied to a job: %s" % "; ".join(stray))
    for line in prefix.splitlines():
        line = line.strip()
        if line and not line.startswith("fio:") and warn is not None:
            warn("fio printed an unexpected line before its JSON output: %r (please report)" % line[:120])
    disk_util = []
    for item in data.get("disk_util") if isinstance(data.get("disk_util"), list) else []:
        if isinstance(item, dict) and isinstance(item.get("name"), str) and item["name"]:
            util = finite(item.get("util"))
            disk_util.append({"name": item["name"],
                              "util_pct": round(util, 2) if util is not None and 0 <= util <= 100 else None})
    version = data.get("fio version")
    return {
        "fio_version": version if isinstance(version, str) else None,
        "jobs": result,
        "job_order": order,
        "disk_util": disk_util,
        "messages": [describe_error(item) for item in errors] + messages,
    }
