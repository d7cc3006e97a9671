#!/usr/bin/env python3
"""Lab stand-in for the kernel log of one simulated GPU node: ``journalctl`` and ``dmesg``.

It replays a REAL kernel log capture and only edits it:

* the node's log is ``tests/fixtures/kernel-log/dev-kmsg-nvswitch.log``: raw ``/dev/kmsg`` records of an NVSwitch
  system (priority, seconds since boot, message), a real capture with no Xid line in it;
* a fault ``xid`` appends one line, ``after_s`` (1) seconds after the line before it, made by EDITING the first real
  Xid line of
  ``dmesg-decode-iso-xid13-xid43-large.log`` (``NVRM: Xid (PCI:0000:38:00): 13, pid='<unknown>', name=<unknown>,
  Graphics SM Warp Exception …``): its PCI bus becomes the node's GPU bus as the nvidia-smi simulator assigns them
  (DGX_A100_PCI_BUSES), its code the fault's code, and the text after the code the fault's text;
* a fault ``log_later`` appends the base capture's last real record again, ``after_s`` seconds later: the log runs
  on past the Xid lines (their quiet, which the Xid clearing rules measure to the log's newest time stamp);
* the records are printed the way the real tools print them: ``journalctl … -o short-iso`` as systemd 252 does
  (``%Y-%m-%dT%H:%M:%S%z hostname kernel: message``), ``dmesg --decode --time-format=iso`` as util-linux 2.38 does
  (``kern  :info  : 2025-01-21T02:21:33,498559+00:00 message``). Wall-clock times are "boot time + seconds since
  boot", with the boot placed so that the last line was logged a minute ago (UTC).

Invoked through the per-node wrappers written by ``lab/labctl.py up`` (one per tool, both around this file)::

    kernel_log.py --state /abs/nodes/<node>/state.json _TRANSPORT=kernel -o short-iso --no-pager --since=-24h
    kernel_log.py --state /abs/nodes/<node>/state.json --decode --time-format=iso

The wrappers do not say which tool they stand for, so this file tells them apart by the arguments: the options
of the two invocations the lab implements are disjoint (``_which``). Arguments of neither (or both) get rc 2 and
a message naming both tools. The state file is read on every call. Standard library only: run with
``python -I -S``.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (  # noqa: E402
    DGX_A100_PCI_BUSES, FIXTURES_DIR, LabError, hangs, own_faults, run_sim, split_argv, unsupported,
)

TOOLS = ("journalctl", "dmesg")

BASE_LOG = os.path.join(FIXTURES_DIR, "kernel-log", "dev-kmsg-nvswitch.log")
TEMPLATE_LOG = os.path.join(FIXTURES_DIR, "kernel-log", "dmesg-decode-iso-xid13-xid43-large.log")

FAULT_KINDS = {
    # one Xid line on GPU `gpu`; `text` replaces what follows "<code>, " ("" = the lab's text for the code, below)
    "xid": {"gpu": int, "code": int, "text": (str, ""), "after_s": (float, 1.0)},
    # the log runs on: the base capture's last real record again, `after_s` seconds after the line before it (what a
    # quiet node logs later; the Xid rules measure an event's quiet to the log's newest time stamp)
    "log_later": {"after_s": float},
    # journalctl finds no journal (containers, nodes without persistent journald): stdout "-- No entries --",
    # stderr "No journal files were found.", rc 0 -- what systemd 252's journalctl prints (checked by running it)
    "no_journal": {},
}

# Message text per code when a fault gives none. Only texts seen in real logs: 13, 43, 119 in the kernel-log
# captures of tests/fixtures; 48, 63, 79, 154 as quoted in public reports (lab/README.md names them).
DEFAULT_TEXT = {
    13: "pid='<unknown>', name=<unknown>, Graphics SM Warp Exception on (GPC 8, TPC 5, SM 0): Out Of Range Address",
    43: "pid=2815167, name=pt_main_thread, Ch 00000008",
    48: "pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has been detected on GPU in the "
        "framebuffer at physAddr 0x7fdf0de80 partition 5, subpartition 1",
    63: "pid=1896, Row Remapper: New row marked for remapping, reset gpu to activate.",
    79: "pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
    119: "pid=2024380, name=nvidia-smi, Timeout after 6s of waiting for RPC response from GPU4 GSP! Expected function "
         "103 (GSP_RM_ALLOC) (0x2081 0x4).",
    154: "GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)",
}
NO_ENTRIES = "-- No entries --\n"
NO_JOURNAL = "No journal files were found.\n"
XID_PRIORITY = 4  # the real Xid lines are "kern  :warn  :" (facility kern, level warning)
LAST_LINE_AGE_S = 60
FACILITIES = ("kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news", "uucp", "cron", "authpriv", "ftp")
LEVELS = ("emerg", "alert", "crit", "err", "warn", "notice", "info", "debug")

# Regular expressions, compiled only where needed (``re`` alone costs a call of a lab tool ~7 ms):
_TEMPLATE_PATTERN = r"(NVRM: Xid \(PCI:)([0-9a-f]{4}):([0-9a-f]{2})(:00\): )(\d+)(, )(.*)$"
_SPAN_PATTERN = r"(\d+)\s*(s|sec|min|m|h|d|w)\b"
_SPAN_S = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 604800}


def check_fault(fault, node, where="fault"):
    kind = fault["kind"]
    if kind == "log_later" and not fault["after_s"] > 0:
        raise LabError(f"{where}: fault 'log_later' after_s must be > 0, got {fault['after_s']}")
    if kind != "xid":
        return
    if not fault["after_s"] > 0:
        raise LabError(f"{where}: fault 'xid' after_s must be > 0, got {fault['after_s']}")
    gpus = node["gpus"]
    if not 0 <= fault["gpu"] < gpus:
        raise LabError(f"{where}: fault 'xid' names gpu {fault['gpu']}, the node has GPUs 0..{gpus - 1}")
    if fault["code"] < 0:
        raise LabError(f"{where}: fault 'xid' code must be >= 0, got {fault['code']}")
    if not fault["text"] and fault["code"] not in DEFAULT_TEXT:
        known = ", ".join(str(code) for code in sorted(DEFAULT_TEXT))
        raise LabError(f"{where}: fault 'xid' code {fault['code']} needs a 'text': the lab has real message texts only "
                       f"for Xid {known}")


def _read(path):
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def _template():
    """The first real Xid line of the template capture, split at the values the lab edits."""
    import re
    template_re = re.compile(_TEMPLATE_PATTERN)
    for line in _read(TEMPLATE_LOG).splitlines():
        match = template_re.search(line)
        if match:
            return match
    raise LabError(f"{TEMPLATE_LOG} has no Xid line to edit")


def _kmsg(line):
    """(priority, microseconds, message) of a /dev/kmsg record ``PRIO,SEQ,USEC,FLAGS;MESSAGE``, None if the line is
    not one (what ``^(\\d+),(\\d+),(\\d+),[^;]*;(.*)$`` matches in a line of splitlines(); str ops, no ``re``)."""
    parts = line.split(",", 3)
    if len(parts) == 4 and all(part.isdecimal() for part in parts[:3]):
        _, sep, message = parts[3].partition(";")
        if sep:
            return int(parts[0]), int(parts[2]), message
    return None


def _span_s(text):
    """Seconds of a relative journalctl time after its "-" (``24h``, ``2 d``, ``1h 30min``), None if it is not one.
    The plain form ``<digits><unit>`` is read without ``re``; any other goes through the pattern."""
    digits = len(text) - len(text.lstrip("0123456789"))
    if digits and text[digits:] in _SPAN_S:
        return int(text[:digits]) * _SPAN_S[text[digits:]]
    import re
    span_re = re.compile(_SPAN_PATTERN)
    parts = span_re.findall(text)
    if parts and span_re.sub("", text).strip() == "":
        return sum(int(n) * _SPAN_S[u] for n, u in parts)
    return None


def records(state):
    """[(priority, microseconds since boot, message)]: the base capture, then one line per `xid` fault."""
    out = []
    for number, line in enumerate(_read(BASE_LOG).splitlines(), start=1):
        record = _kmsg(line)
        if record is None:
            raise LabError(f"{BASE_LOG} line {number} is not a /dev/kmsg record")
        out.append(record)
    template = None
    last = out[-1][1] if out else 0
    base_last = out[-1] if out else None
    for fault in own_faults(state, FAULT_KINDS, check_fault):
        if fault["kind"] == "log_later" and base_last is not None:
            last += int(fault["after_s"] * 1000000)
            out.append((base_last[0], last, base_last[2]))
            continue
        if fault["kind"] != "xid":
            continue
        template = template or _template()
        bus = DGX_A100_PCI_BUSES[fault["gpu"]].lower()
        text = fault["text"] or DEFAULT_TEXT[fault["code"]]
        head = template.string[template.start():template.start(2)]
        message = "%s%s:%s%s%d%s%s" % (head, template.group(2), bus, template.group(4), fault["code"],
                                       template.group(6), text)
        last += int(fault["after_s"] * 1000000)
        out.append((XID_PRIORITY, last, message))
    return out


def _boot_us(recs, now, state=None):
    """Boot time in whole microseconds since the epoch, such that the last record was logged LAST_LINE_AGE_S before
    the lab started (`started`, written by `labctl up`, so every call of a running lab prints the same times), or
    before now for a state without it."""
    last = recs[-1][1] if recs else 0
    anchor = int(state["started"]) if state and state.get("started") else now
    return int(anchor - LAST_LINE_AGE_S) * 1000000 - last


def _iso(when_us):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(when_us // 1000000)), when_us % 1000000


def render_journalctl(state, since=None, precise=False, now=None):
    now = time.time() if now is None else now
    recs = records(state)
    boot = _boot_us(recs, now, state)
    cutoff = _since(since, now)
    lines = []
    for _, usec, message in recs:
        when = boot + usec
        if cutoff is not None and when < cutoff * 1000000:
            continue
        stamp, micro = _iso(when)
        if precise:
            stamp += ".%06d" % micro
        lines.append("%s+0000 %s kernel: %s\n" % (stamp, state["node"], message))
    return "".join(lines) or NO_ENTRIES


def render_dmesg(state, now=None):
    now = time.time() if now is None else now
    recs = records(state)
    boot = _boot_us(recs, now, state)
    lines = []
    for priority, usec, message in recs:
        facility = FACILITIES[priority >> 3] if (priority >> 3) < len(FACILITIES) else "local"
        stamp, micro = _iso(boot + usec)
        lines.append("%-6s:%-6s: %s,%06d+00:00 %s\n" % (facility, LEVELS[priority & 7], stamp, micro, message))
    return "".join(lines)


def _since(since, now):
    """journalctl's --since for the forms the lab implements; raises ValueError like journalctl refuses a time."""
    if since is None:
        return None
    text = since.strip()
    if text.startswith("-"):
        span = _span_s(text[1:])
        if span is not None:
            return now - span
    elif text in ("today", "yesterday"):  # the lab's nodes run in UTC
        return (int(now) // 86400 - (1 if text == "yesterday" else 0)) * 86400
    else:
        import calendar  # only here: every call pays for what it imports (the lab's tools run per check)
        for form in ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d"):
            try:
                return calendar.timegm(time.strptime(text, form))
            except ValueError:
                continue
    raise ValueError(text)


def _journalctl_args(args):
    """-> (since, precise) for the invocations the lab implements, None for anything else."""
    since, fmt, kernel = None, None, False
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("_TRANSPORT=kernel", "-k", "--dmesg"):
            kernel = True
        elif arg == "--no-pager":
            pass
        elif arg in ("-o", "--output") and i + 1 < len(args):
            fmt = args[i + 1]
            i += 1
        elif arg.startswith("--output="):
            fmt = arg.split("=", 1)[1]
        elif arg in ("-S", "--since") and i + 1 < len(args):
            since = args[i + 1]
            i += 1
        elif arg.startswith("--since="):
            since = arg.split("=", 1)[1]
        else:
            return None
        i += 1
    if not kernel or fmt not in ("short-iso", "short-iso-precise"):
        return None
    return since, fmt == "short-iso-precise"


def _dmesg_args(args):
    wanted = {"--decode", "--time-format=iso"}
    normal = []
    i = 0
    while i < len(args):
        if args[i] == "-x":
            normal.append("--decode")
        elif args[i] == "--time-format" and i + 1 < len(args):
            normal.append("--time-format=" + args[i + 1])
            i += 1
        else:
            normal.append(args[i])
        i += 1
    return len(normal) == 2 and set(normal) == wanted


def check_state(state):
    """Render once (labctl up): a fault the lab cannot make fails at `up`."""
    render_journalctl(state)
    render_dmesg(state)


JOURNALCTL_WORDS = ("_TRANSPORT", "-k", "--dmesg", "-o", "--output", "--no-pager", "-S", "--since")
DMESG_WORDS = ("--decode", "-x", "--time-format")
IMPLEMENTED = {
    "journalctl": "only _TRANSPORT=kernel (or -k) -o short-iso[-precise] [--no-pager] [--since=TIME]",
    "dmesg": "only --decode --time-format=iso",
}


def _which(args):
    """'journalctl' or 'dmesg' from the arguments, None when they belong to neither or to both."""
    words = set(arg.split("=", 1)[0] for arg in args)
    journal, dmesg = bool(words & set(JOURNALCTL_WORDS)), bool(words & set(DMESG_WORDS))
    if journal != dmesg:
        return "journalctl" if journal else "dmesg"
    return None


def cacheable(args, state):
    """The render cache (lab/sim/_simcache.py) may replay ``dmesg`` and ``journalctl`` without ``--since`` or with an
    absolute one, on a node whose times are fixed (``started`` in its state: without it the log is placed relative
    to now). Not a ``--since`` relative to now (``-24h``, ``today``, ``yesterday``): which lines pass moves with the
    clock. A hung tool never finishes."""
    tool = _which(args)
    if tool is None or not state.get("started") or hangs(state, tool):
        return False
    if tool == "dmesg":
        return bool(_dmesg_args(args))
    parsed = _journalctl_args(args)
    if not parsed:
        return False
    since = parsed[0]
    return since is None or not (since.strip().startswith("-") or since.strip() in ("today", "yesterday"))


def main(argv=None):
    state_path, args = split_argv(argv, "journalctl/dmesg")
    tool = _which(args)
    if tool is None:
        return unsupported("journalctl/dmesg", args, "%s; %s" % (
            "journalctl " + IMPLEMENTED["journalctl"].replace("only ", ""), "dmesg " + IMPLEMENTED["dmesg"].replace("only ", "")))
    parsed = _journalctl_args(args) if tool == "journalctl" else _dmesg_args(args)
    if not parsed:
        return unsupported(tool, args, IMPLEMENTED[tool])

    def work(state):
        if tool == "dmesg":
            return render_dmesg(state)
        if any(isinstance(f, dict) and f.get("kind") == "no_journal" for f in state["faults"]):
            sys.stdout.write(NO_ENTRIES)
            sys.stdout.flush()
            sys.stderr.write(NO_JOURNAL)
            return 0
        try:
            return render_journalctl(state, since=parsed[0], precise=parsed[1])
        except ValueError as exc:
            sys.stderr.write("Failed to parse timestamp: %s\n" % exc)
            return 1

    return run_sim(tool, state_path, work)


if __name__ == "__main__":
    sys.exit(main())
