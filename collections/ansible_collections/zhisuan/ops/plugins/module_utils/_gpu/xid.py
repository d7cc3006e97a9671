# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Kernel log text -> the ``NVRM: Xid`` events in it (the ``xid.events`` that xid_info returns; see its RETURN).

One pure function, ``parse(text, warn=None)``, reads every kernel log form the collection meets:

* ``journalctl -o short-iso`` / ``short-iso-precise`` (``2025-02-23T16:24:18+0000 host kernel: NVRM: …``; systemd up
  to 252 prints ``+0000``, later versions ``+00:00``), and the classic ``short`` / syslog form (``Aug 19 21:36:23 host
  kernel: …``, no year, so ``time`` is null);
* ``dmesg --time-format=iso`` with or without ``--decode`` (``kern  :warn  : 2025-01-21T02:21:33,498559+00:00 …``);
* ``dmesg --ctime`` / ``-T`` (``[Sun Feb 23 16:24:18 2025] …``, local time without a zone);
* plain ``dmesg`` (``[ 1234.567890] …``) and raw ``/dev/kmsg`` records (``4,3964,206764307,-;…``): seconds since boot.

Lines without ``NVRM: Xid`` are skipped silently (that is almost every line, so the check comes first). A line that
has it but does not read as an Xid goes to ``warn`` and to ``unparsed``. Standard library only.

NVSwitch ``SXid`` lines (``nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 20034, Fatal, Link 48 LTSSM Fault Up``) are
read the same way into ``sxid_events`` (``sxid_unparsed`` for a line with the mark that does not read); the lines
the driver prints after the first one of an SXid (``Severity 1 Engine instance ...``, ``Data {0x...}``) are events of
``kind`` ``detail``.

``LogFilter`` gives the same facts from a log fed one line at a time (the collector streams journalctl / dmesg
through it): it keeps only the lines with ``NVRM: Xid`` or ``SXid`` (at most ``MAX_XID_LINES`` of each, the first
and the last half); the others are counted per GPU (or NVSwitch) and code with their first and last time
(``dropped_lines``), so a flood of one event is one count, and a storm of unrelated kernel lines costs counters,
not memory.
"""

import calendar
import collections
import re
import time

XID_MARK = "NVRM: Xid"
SXID_MARK = "SXid ("
# LogFilter: the Xid lines kept from one log (the first half and the last half of them), and the characters kept of
# one line (an Xid line is a few hundred; a longer one is kept cut, and then reads as unparsed).
MAX_XID_LINES = 4000
MAX_LINE = 4096

_MONTHS = dict((name, number) for number, name in enumerate(
    ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), start=1))

# "NVRM: Xid (PCI:0000:9b:00): 119, pid=…" ; older drivers omit "PCI:"; MIG adds " GPU-I:00 GPU-CI:00" after the bus.
_XID_RE = re.compile(
    r"NVRM: Xid \((?:PCI:)?(?P<bus>[0-9A-Fa-f]{1,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.[0-7])?)(?: [^)]*)?\): "
    r"(?P<code>\d{1,9})(?:,\s*(?P<rest>.*))?$", re.ASCII)
_PID_RE = re.compile(r"^pid=(?P<pid>'?<unknown>'?|-?\d{1,19})(?:, name=(?P<name>[^,]*))?(?:,\s*(?P<text>.*))?$", re.ASCII)
_BUS_RE = re.compile(r"^([0-9A-Fa-f]{1,8}):([0-9A-Fa-f]{2}):([0-9A-Fa-f]{2})(?:\.([0-7]))?$")

# Time stamps at the start of a line (after an optional dmesg --decode "kern  :warn  : " prefix).
_KMSG_RE = re.compile(r"^(\d{1,3}),(\d{1,20}),(\d{1,20}),[^;]*;", re.ASCII)
_DECODE_RE = re.compile(r"^[a-z0-9]+ *:[a-z]+ *: ")
_ISO_RE = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:[,.](\d{1,9}))?(Z|[+-]\d\d:?\d\d)?(?=\s)", re.ASCII)
_CTIME_RE = re.compile(r"^\[(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ([A-Z][a-z]{2}) +(\d{1,2}) (\d\d:\d\d:\d\d) (\d{4})\]", re.ASCII)
_UPTIME_RE = re.compile(r"^\[\s*(\d{1,12}\.\d{1,9})\]", re.ASCII)
# An uptime stamp right before the message, as rsyslog writes kernel lines ("kernel: [680111.646286] NVRM: Xid …").
_INNER_UPTIME_RE = re.compile(r"\[\s*(\d{1,12}\.\d{1,9})\]\s*(?:" + re.escape(XID_MARK) + r"|nvidia-nvswitch\d)",
                              re.ASCII)

# Xid 154: "GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)".
_RECOVERY_RE = re.compile(
    r"GPU recovery action changed from (0x[0-9A-Fa-f]+|\d+) \(([^)]*)\) to (0x[0-9A-Fa-f]+|\d+) \(([^)]*)\)", re.ASCII)
# Xid 144-150 (NVLink5): "RLW_RXPIPE Nonfatal XC0 i0 Link 13 (0x0409a0c2 0x00000008 0x00000001 0x00000000 …)";
# the first word is intrInfo, the second errorStatus (NVIDIA's "Xid 144-150 Decode" sheet reads both).
_NVLINK5_RE = re.compile(
    r"(?P<unit>[A-Z][A-Z0-9_]*) (?P<severity>Fatal|Nonfatal|Non-fatal) (?P<xc>XC\d+) (?P<inst>i\d+) "
    r"Link (?P<link>-?\d+) \((?P<words>0x[0-9A-Fa-f]+(?: 0x[0-9A-Fa-f]+)+)\)", re.ASCII)
NVLINK5_CODES = frozenset(range(144, 151))
# Xid 74: "NVLink: fatal error detected on link 14(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)": the link and the seven
# registers NVIDIA's WORKFLOW_NVLINK_ERR decodes bit by bit; older drivers print the link alone.
_NVLINK_ERR_RE = re.compile(
    r"\blink (?P<link>\d{1,4}) ?\((?P<regs>0x[0-9A-Fa-f]{1,16}(?:, ?0x[0-9A-Fa-f]{1,16}){6})\)", re.ASCII)
_NVLINK_LINK_RE = re.compile(r"\blink (?P<link>\d{1,4})\b", re.ASCII | re.IGNORECASE)
NVLINK_ERROR_CODE = 74
# "nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 20034, Fatal, Link 48 LTSSM Fault Up" (the NVSwitch driver's line;
# "Severity 1 Engine instance 60 Sub-engine instance 00" and "Data {0x..., ...}" follow it with the same code).
_SXID_RE = re.compile(
    r"(?:nvidia-nvswitch(?P<switch>\d{1,3}): )?SXid \((?:PCI:)?(?P<bus>[0-9A-Fa-f]{1,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}"
    r"(?:\.[0-7])?)\): (?P<code>\d{1,9})(?:,\s*(?P<rest>.*))?$", re.ASCII)
_SXID_HEAD_RE = re.compile(r"^(?P<severity>Fatal|Non-fatal)\b,?\s*(?:Link (?P<link>-?\d{1,4})\b,?\s*)?(?P<text>.*)$",
                           re.ASCII | re.IGNORECASE)
_SXID_DETAIL = ("Data {", "Severity ")
# A line of a kernel log in one of the forms above (classic syslog "Aug 19 21:36:23 host kernel: ..." included) and
# journalctl's own marker lines; log_shape counts them to tell a kernel log from empty or garbage output.
_SYSLOG_RE = re.compile(r"^(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ 0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9] \S+ ",
                        re.ASCII)
_JOURNAL_MARK_RE = re.compile(r"^-- (?:No entries|Logs begin at|Journal begins at|Boot [0-9a-f]+|Reboot) ")
_NO_ENTRIES = "-- No entries --"
_EVENT_TIME_RE = re.compile(r"^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d+))?(?:([+-])(\d\d):?(\d\d))?$", re.ASCII)


def normalize_bus_id(raw):
    """``0000:9b:00`` / ``PCI:0000:9b:00`` / ``00000000:9B:00.0`` -> ``0000:9B:00.0`` (as gpu facts print it);
    ``None`` for anything else."""
    raw = (raw or "").strip()
    if raw.upper().startswith("PCI:"):
        raw = raw[4:]
    match = _BUS_RE.match(raw)
    if not match:
        return None
    domain, bus, device, function = match.groups()
    return "%04X:%s:%s.%s" % (int(domain, 16), bus.upper(), device.upper(), function or "0")


def _iso(date_time, fraction, zone):
    text = date_time
    if fraction:
        text += "." + (fraction + "000000")[:6]
    if zone:
        if zone == "Z":
            zone = "+00:00"
        elif ":" not in zone:
            zone = zone[:3] + ":" + zone[3:]
        text += zone
    return text


def _stamp(line):
    """(time, uptime_s) from the start of a line; either may be None."""
    match = _KMSG_RE.match(line)
    if match:
        return None, int(match.group(3)) / 1000000.0
    match = _DECODE_RE.match(line)
    if match:
        line = line[match.end():]
    match = _ISO_RE.match(line)
    if match:
        return _iso(*match.groups()), None
    match = _CTIME_RE.match(line)
    if match:
        month, day, clock, year = match.groups()
        if month in _MONTHS:
            return "%s-%02d-%02dT%s" % (year, _MONTHS[month], int(day), clock), None
    match = _UPTIME_RE.match(line)
    if match:
        return None, float(match.group(1))
    match = _INNER_UPTIME_RE.search(line)
    if match:
        return None, float(match.group(1))
    return None, None


def _number(text):
    return int(text, 16) if text.lower().startswith("0x") else int(text)


def recovery_action(text):
    """Xid 154's text -> ``{from_code, from, to_code, to}``, or ``None`` when it does not say."""
    match = _RECOVERY_RE.search(text or "")
    if not match:
        return None
    return {"from_code": _number(match.group(1)), "from": match.group(2).strip(),
            "to_code": _number(match.group(3)), "to": match.group(4).strip()}


def nvlink5_fields(text):
    """Xid 144-150's text -> the fields NVIDIA's decode sheet needs, or ``None`` when the line lacks them."""
    match = _NVLINK5_RE.search(text or "")
    if not match:
        return None
    words = match.group("words").split()
    return {
        "unit": match.group("unit"),
        "severity": match.group("severity"),
        "xc": match.group("xc"),
        "instance": match.group("inst"),
        "link": int(match.group("link")),
        "intr_info": words[0].lower(),
        "error_status": words[1].lower(),
        "words": [word.lower() for word in words],
    }


def nvlink_error_fields(text):
    """Xid 74's text -> ``{link, registers}`` (the seven register values as numbers, ``None`` where the line prints
    the link alone), or ``None`` when it names no link."""
    text = text or ""
    match = _NVLINK_ERR_RE.search(text)
    if match:
        return {"link": int(match.group("link")),
                "registers": [int(word.strip(), 16) for word in match.group("regs").split(",")]}
    match = _NVLINK_LINK_RE.search(text)
    return {"link": int(match.group("link")), "registers": None} if match else None


def time_key(event, naive_local=False):
    """``("t", epoch seconds)`` from an event's ``time``, ``("u", seconds since boot)`` from ``uptime_s``, or None.

    A time without a zone (``dmesg --ctime``) is the node's local time: read as local with ``naive_local``, else as
    UTC, which is enough to compare the lines of one log with each other.
    """
    match = _EVENT_TIME_RE.match(event.get("time") or "")
    if match:
        year, month, day, hour, minute, second, fraction, sign, zone_h, zone_m = match.groups()
        fields = (int(year), int(month), int(day), int(hour), int(minute), int(second), 0, 0, -1)
        try:
            if sign is None and naive_local:
                value = time.mktime(fields)
            else:
                value = calendar.timegm(fields)
        except (ValueError, OverflowError):  # a damaged stamp (month 13, year 0): no usable time
            return None
        if sign:
            offset = int(zone_h) * 3600 + int(zone_m) * 60
            value -= offset if sign == "+" else -offset
        return ("t", value + (float("0." + fraction) if fraction else 0.0))
    uptime = event.get("uptime_s")
    if isinstance(uptime, (int, float)) and not isinstance(uptime, bool):
        return ("u", float(uptime))
    return None


def parse_line(line):
    """One log line -> an event dict, ``None`` if it has no Xid mark. Raises ValueError for a bad Xid line."""
    start = line.find(XID_MARK)
    if start < 0:
        return None
    match = _XID_RE.match(line, start)
    if not match:
        raise ValueError("unrecognised Xid line")
    bus_id = normalize_bus_id(match.group("bus"))
    pid = process = None
    text = (match.group("rest") or "").rstrip()
    pid_match = _PID_RE.match(text)
    if pid_match:
        raw_pid = pid_match.group("pid")
        pid = int(raw_pid) if raw_pid.lstrip("-").isdigit() else None
        name = (pid_match.group("name") or "").strip()
        process = name if name and name != "<unknown>" else None
        text = (pid_match.group("text") or "").rstrip()
    code = int(match.group("code"))
    time_text, uptime = _stamp(line)
    event = {
        "time": time_text,
        "uptime_s": uptime,
        "pci_bus_id": bus_id,
        "code": code,
        "pid": pid,
        "process": process,
        "text": text,
        "recovery_action": recovery_action(text) if code == 154 else None,
        "nvlink5": nvlink5_fields(text) if code in NVLINK5_CODES else None,
        "line": line,
    }
    if code == NVLINK_ERROR_CODE:
        event["nvlink_error"] = nvlink_error_fields(text)
    return event


def parse_sxid_line(line):
    """One log line -> an SXid event dict, ``None`` if it has no SXid mark. Raises ValueError for a bad SXid line.

    ``kind`` is ``event`` for the line that names the severity (``Fatal`` / ``Non-fatal``) and ``detail`` for the
    lines that follow it (``Severity ... Engine instance ...``, ``Data {...}``), which repeat the code only.
    """
    start = line.find(SXID_MARK)
    if start < 0:
        return None
    head = line.rfind("nvidia-nvswitch", 0, start)
    match = _SXID_RE.match(line, head if head >= 0 and start - head <= 20 else start)
    if not match:
        raise ValueError("unrecognised SXid line")
    text = (match.group("rest") or "").rstrip()
    severity = link = None
    kind = "detail" if text.startswith(_SXID_DETAIL) else "event"
    head_match = _SXID_HEAD_RE.match(text) if kind == "event" else None
    if head_match:
        severity = "Fatal" if head_match.group("severity").lower() == "fatal" else "Non-fatal"
        link = int(head_match.group("link")) if head_match.group("link") is not None else None
        text = head_match.group("text").strip()
    time_text, uptime = _stamp(line)
    return {
        "time": time_text,
        "uptime_s": uptime,
        "switch": int(match.group("switch")) if match.group("switch") is not None else None,
        "pci_bus_id": normalize_bus_id(match.group("bus")),
        "code": int(match.group("code")),
        "kind": kind,
        "severity": severity,
        "link": link,
        "text": text,
        "line": line,
    }


# kernel lines kept to find the newest time stamp of a log (journalctl markers and syslog lines carry none)
_TAIL = 8


def log_end(lines):
    """``{"time", "uptime_s"}`` of the newest of ``lines`` (oldest first) that has a time stamp, or None: where the log
    ends, against which the Xid rules measure how long an event has been quiet (its clearing rule)."""
    for raw in reversed(list(lines)):
        stamp = _stamp(raw.strip())
        if stamp != (None, None):
            return {"time": stamp[0], "uptime_s": stamp[1]}
    return None


def log_shape(text):
    """How much of ``text`` is a kernel log: ``{"kernel_lines": n, "no_entries": bool, "log_end": ...}``
    (``log_end``: see ``log_end``).

    ``kernel_lines`` counts the lines with a kernel log time stamp (every form ``parse`` reads, and the classic syslog
    form); ``no_entries`` is True when journalctl said ``-- No entries --`` (its way of printing an empty window). The
    Xid rules use both so that an empty or garbage log is an error, never a clean bill of health.
    """
    count, no_entries = 0, False
    tail = collections.deque(maxlen=_TAIL)
    for raw in (text or "").splitlines():
        shape = _line_shape(raw)
        if shape == "no_entries":
            no_entries = True
        elif shape == "kernel":
            count += 1
            tail.append(raw)
    return {"kernel_lines": count, "no_entries": no_entries, "log_end": log_end(tail)}


def _line_shape(raw):
    """``"kernel"`` for a line with a kernel log time stamp (or a journalctl marker), ``"no_entries"`` for
    journalctl's empty-window line, else ``None``."""
    line = raw.strip()
    if not line:
        return None
    # the common journalctl/dmesg ISO form first: the same answer as _stamp gives it, at a third of the cost
    if _ISO_RE.match(line):
        return "kernel"
    if line == _NO_ENTRIES:
        return "no_entries"
    if _JOURNAL_MARK_RE.match(line + " ") or _SYSLOG_RE.match(line) or _stamp(line) != (None, None):
        return "kernel"
    return None


class _Kept(object):
    """The lines of one mark kept from a log (the first ``keep // 2`` and the last ones) and a tally of the others:
    per (bus id, code) their number and the first and last time stamp (``LogFilter.facts`` ``dropped_lines``)."""

    def __init__(self, keep, mark, parser):
        self.mark, self.parser = mark, parser
        self.dropped = 0
        self.tally = collections.OrderedDict()
        self._head_size = keep // 2
        self._head = []
        self._tail = collections.deque(maxlen=max(keep - self._head_size, 0))

    def keep(self, item):
        if len(self._head) < self._head_size:
            self._head.append(item)
            return
        if not self._tail.maxlen:
            self._drop(item)
            return
        if len(self._tail) == self._tail.maxlen:
            self._drop(self._tail[0])
        self._tail.append(item)

    def _drop(self, item):
        self.dropped += 1
        try:
            event = self.parser(item[1].rstrip("\r"))
        except ValueError:
            event = None
        key = (event.get("pci_bus_id"), event.get("code")) if event else (None, None)
        when = {"time": event.get("time"), "uptime_s": event.get("uptime_s")} if event else {}
        entry = self.tally.get(key)
        if entry is None:
            self.tally[key] = entry = {"mark": self.mark, "pci_bus_id": key[0], "code": key[1], "lines": 0,
                                       "first": when, "last": when}
        entry["lines"] += 1
        entry["last"] = when

    def items(self):
        return self._head + list(self._tail)


class LogFilter(object):
    """A kernel log read line by line (``feed``), holding only what ``parse`` and ``log_shape`` need.

    ``facts(warn)`` returns what ``dict(parse(text), **log_shape(text))`` gives for the whole text, plus
    ``xid_lines_dropped`` / ``sxid_lines_dropped``: the Xid (SXid) lines not kept when there were more than ``keep``
    (the first ``keep // 2`` and the last ones are kept, so the start of a storm and its latest lines are both
    there), and ``dropped_lines``: those lines counted per GPU (NVSwitch) and code, with the first and last time.
    """

    def __init__(self, keep=MAX_XID_LINES):
        self.lines = 0
        self.kernel_lines = 0
        self.no_entries = False
        self._tail = collections.deque(maxlen=_TAIL)
        self._xid = _Kept(keep, "xid", parse_line)
        self._sxid = _Kept(keep, "sxid", parse_sxid_line)

    @property
    def dropped(self):
        return self._xid.dropped

    def feed(self, text):
        """One line as the runner streams it (without its newline; any other line break in it splits it, as
        ``str.splitlines`` does for the whole text)."""
        for raw in text.splitlines() if text else ("",):
            self.lines += 1
            if XID_MARK in raw:
                self._xid.keep((self.lines, raw[:MAX_LINE]))
            elif SXID_MARK in raw:
                self._sxid.keep((self.lines, raw[:MAX_LINE]))
            shape = _line_shape(raw)
            if shape == "kernel":
                self.kernel_lines += 1
                self._tail.append(raw)
            elif shape == "no_entries":
                self.no_entries = True

    def facts(self, warn=None):
        warn = warn or (lambda msg: None)
        events, unparsed = _read_lines(self._xid.items(), warn)
        sxid_events, sxid_unparsed = _read_sxid_lines(self._sxid.items(), warn)
        return {"lines": self.lines, "events": events, "unparsed": unparsed, "kernel_lines": self.kernel_lines,
                "no_entries": self.no_entries, "log_end": log_end(self._tail), "xid_lines_dropped": self._xid.dropped,
                "sxid_events": sxid_events, "sxid_unparsed": sxid_unparsed, "sxid_lines_dropped": self._sxid.dropped,
                "dropped_lines": list(self._xid.tally.values()) + list(self._sxid.tally.values())}


def _read_lines(numbered, warn):
    events, unparsed = [], []
    for number, raw in numbered:
        line = raw.rstrip("\r")
        try:
            events.append(parse_line(line))
        except ValueError:
            unparsed.append(line)
            warn("kernel log line %d mentions '%s' but is not an Xid line this collection can read; please report: %s"
                 % (number, XID_MARK, line[:300]))
    return events, unparsed


def _read_sxid_lines(numbered, warn):
    events, unparsed = [], []
    for number, raw in numbered:
        line = raw.rstrip("\r")
        try:
            event = parse_sxid_line(line)
        except ValueError:
            event = None
        if event is None:
            unparsed.append(line)
            warn("kernel log line %d mentions '%s' but is not an NVSwitch SXid line this collection can read; please "
                 "report: %s" % (number, SXID_MARK.strip(), line[:300]))
        else:
            events.append(event)
    return events, unparsed


def parse(text, warn=None):
    """Kernel log text -> ``{"lines": n, "events": [...], "unparsed": [...], "sxid_events": [...],
    "sxid_unparsed": [...]}``.

    ``lines`` counts every line read (blank ones included), ``events`` holds one record per Xid line in log order,
    ``unparsed`` the raw lines that carry ``NVRM: Xid`` but could not be read (each also reported through ``warn``);
    ``sxid_events`` / ``sxid_unparsed`` the same for NVSwitch SXid lines.
    """
    warn = warn or (lambda msg: None)
    lines = (text or "").splitlines()
    xid_lines, sxid_lines = [], []
    for number, raw in enumerate(lines, start=1):
        if XID_MARK in raw:
            xid_lines.append((number, raw))
        elif SXID_MARK in raw:
            sxid_lines.append((number, raw))
    events, unparsed = _read_lines(xid_lines, warn)
    sxid_events, sxid_unparsed = _read_sxid_lines(sxid_lines, warn)
    return {"lines": len(lines), "events": events, "unparsed": unparsed, "sxid_events": sxid_events,
            "sxid_unparsed": sxid_unparsed}
