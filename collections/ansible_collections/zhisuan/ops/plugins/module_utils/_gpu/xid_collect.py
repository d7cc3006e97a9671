# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""xid_info's work: read the node's kernel log for a time window (journalctl, else dmesg, or a saved file) and
return its ``NVRM: Xid`` events.

* journalctl: ``journalctl _TRANSPORT=kernel -o short-iso --no-pager --since=<since>``. The kernel-transport match
  rather than ``-k``: ``-k`` implies ``-b`` (this boot only), and the Xid 79 that made someone power-cycle the node
  is in the previous boot. journalctl applies the window itself.
* dmesg: ``dmesg --decode --time-format=iso`` (the ring buffer: this boot only, and only as far back as it holds);
  the window is applied here to the parsed times.
* a saved file (``src``): any form ``_gpu.xid`` reads; the window is applied only when ``since`` is given.

Every form is read as a stream through ``xid.LogFilter``: only the ``NVRM: Xid`` lines are held (a bounded number),
so a kernel-log storm of unrelated lines costs the node counters, not memory; one line longer than the output cap
(``max_output``, by default journalctl's or dmesg's in ``_runner.MAX_OUTPUT_MIB``) stops the read with
``ToolOutputTooLarge``.
"""

import re
import time

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import (
    OptionError,
    ToolFailed,
    ToolNotFound,
    ToolOutputTooLarge,
    ToolTimeout,
)
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import xid
from ansible_collections.zhisuan.ops.plugins.module_utils._runner import feed_lines, flush_lines, output_limit, run, tool_failed

# The options of zhisuan.ops.xid_info (besides the shared timeout); zhisuan.ops.node_collect takes the same for xid.
XID_INFO_ARGSPEC = dict(
    source=dict(type="str", default="auto", choices=["auto", "journalctl", "dmesg"]),
    since=dict(type="str"),
    journalctl_path=dict(type="str", default="journalctl"),
    dmesg_path=dict(type="str", default="dmesg"),
    src=dict(type="path"),
)

DEFAULT_SINCE = "-24h"
JOURNALCTL_ARGS = ("_TRANSPORT=kernel", "-o", "short-iso", "--no-pager")
DMESG_ARGS = ("--decode", "--time-format=iso")
# journalctl says these on stderr (rc 0) when it has no kernel messages to show: no journal kept on the node
# (systemd 252: "No journal files were found."), or a user who may not read the system journal.
NO_JOURNAL_HINTS = ("No journal files were found", "not seeing messages from other users and the system")

_UNITS = {
    "s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
    "m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60,
    "h": 3600, "hr": 3600, "hour": 3600, "hours": 3600,
    "d": 86400, "day": 86400, "days": 86400,
    "w": 604800, "week": 604800, "weeks": 604800,
}
_SPAN_RE = re.compile(r"([0-9]{1,9}(?:\.[0-9]{1,9})?)\s*([a-z]+)", re.ASCII)
_ABSOLUTE_RE = re.compile(r"^(\d{4})-(\d\d)-(\d\d)(?:[ T](\d\d):(\d\d)(?::(\d\d))?)?$", re.ASCII)
SINCE_FORMS = "'-<N><unit>' (s, min, h, d, w; e.g. -24h, -1h 30min), 'YYYY-MM-DD [HH:MM[:SS]]', today, yesterday"


def since_cutoff(since, now=None):
    """Epoch seconds of the window's start for ``since`` (a subset of journalctl's --since syntax), ``None`` for an
    empty ``since``. Raises ValueError naming the accepted forms."""
    text = (since or "").strip()
    if not text:
        return None
    now = time.time() if now is None else now
    if text.startswith("-"):
        rest = text[1:].strip()
        total, pos, readable = 0.0, 0, True
        for match in _SPAN_RE.finditer(rest):
            if rest[pos:match.start()].strip() or match.group(2) not in _UNITS:
                readable = False
                break
            total += float(match.group(1)) * _UNITS[match.group(2)]
            pos = match.end()
        if readable and pos and not rest[pos:].strip():
            return now - total
    elif text in ("today", "yesterday"):
        day = time.localtime(now)
        midnight = time.mktime((day.tm_year, day.tm_mon, day.tm_mday, 0, 0, 0, 0, 0, -1))
        return midnight - (86400 if text == "yesterday" else 0)
    else:
        match = _ABSOLUTE_RE.match(text)
        if match:
            fields = [int(part) if part else 0 for part in match.groups()]
            if 1 <= fields[1] <= 12 and 1 <= fields[2] <= 31 and fields[3] < 24 and fields[4] < 60 and fields[5] < 62:
                try:
                    return time.mktime(tuple(fields) + (0, 0, -1))
                except (OverflowError, ValueError):
                    pass
    raise ValueError("since %r is not a time window this module understands; use %s" % (since, SINCE_FORMS))


def stream_saved(path, on_line, limit=None):
    """Feed a saved kernel log to ``on_line`` line by line (as the runner streams a program's output). Raises
    ToolNotFound naming the file, ToolOutputTooLarge for a line longer than ``limit`` bytes (default: journalctl's
    cap)."""
    limit = output_limit("journalctl") if limit is None else limit
    try:
        with open(path, "rb") as handle:
            pending = bytearray()
            while True:
                chunk = handle.read(65536)
                if not chunk:
                    break
                feed_lines(pending, chunk, on_line)
                if len(pending) > limit:
                    raise ToolOutputTooLarge("kernel log", "saved log %s has a line over %d bytes" % (path, limit),
                                             limit=limit)
            flush_lines(pending, on_line)
    except (IOError, OSError) as exc:
        raise ToolNotFound("kernel log", "cannot read saved log %s: %s" % (path, exc.strerror or exc))


def _window(parsed, cutoff, key="events"):
    """Drop events that carry a time before ``cutoff``; events without a wall-clock time are kept."""
    if cutoff is None:
        return parsed[key], 0
    kept, dropped = [], 0
    for event in parsed[key]:
        key = xid.time_key(event, naive_local=True)
        if key is not None and key[0] == "t" and key[1] < cutoff:
            dropped += 1
        else:
            kept.append(event)
    return kept, dropped


def run_journalctl(path, since, timeout, on_line=None, max_output=None):
    argv = [path] + list(JOURNALCTL_ARGS) + (["--since=%s" % since] if since else [])
    result = run(argv, timeout=timeout, tool="journalctl", on_line=on_line, max_output=max_output)
    for hint in NO_JOURNAL_HINTS:
        if hint in result.stderr:
            raise tool_failed(result, "journalctl", "shows no kernel messages: %s" % result.stderr.strip().splitlines()[0])
    return result


def run_dmesg(path, timeout, on_line=None, max_output=None):
    return run([path] + list(DMESG_ARGS), timeout=timeout, tool="dmesg", on_line=on_line, max_output=max_output)


def collect_xid_facts(module):
    params = module.params
    source = params["source"]
    since = params["since"]
    if since is None and not params["src"]:
        since = DEFAULT_SINCE
    try:
        cutoff = since_cutoff(since)
    except ValueError as exc:
        raise OptionError("since", str(exc)) from exc
    fallback = None
    command = None
    log = xid.LogFilter()
    if params["src"]:
        used = "file"
        stream_saved(params["src"], log.feed)
    else:
        used = None
        if source in ("auto", "journalctl"):
            try:
                result = run_journalctl(params["journalctl_path"], since, params["timeout"], on_line=log.feed)
                used, command, cutoff = "journalctl", result.argv, None
            except (ToolNotFound, ToolFailed, ToolTimeout, ToolOutputTooLarge) as exc:
                if source == "journalctl":
                    raise
                fallback = exc.message
                log = xid.LogFilter()
        if used is None:
            result = run_dmesg(params["dmesg_path"], params["timeout"], on_line=log.feed)
            used, command = "dmesg", result.argv
    parsed = log.facts(warn=module.warn)
    events, dropped = _window(parsed, cutoff)
    sxid_events, sxid_dropped = _window(parsed, cutoff, "sxid_events")
    return {"xid": {
        "source": used,
        "since": since or None,
        "lines": parsed["lines"],
        "events": events,
        "unparsed": parsed["unparsed"],
        "outside_window": dropped,
        "xid_lines_dropped": parsed["xid_lines_dropped"],
        "command": command,
        "fallback": fallback,
        "kernel_lines": parsed["kernel_lines"],
        "no_entries": parsed["no_entries"],
        "log_end": parsed["log_end"],
        "sxid_events": sxid_events,
        "sxid_unparsed": parsed["sxid_unparsed"],
        "sxid_outside_window": sxid_dropped,
        "sxid_lines_dropped": parsed["sxid_lines_dropped"],
        "dropped_lines": parsed["dropped_lines"],
    }}
