# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""``xid.log.readable``: whether the kernel log the Xid rules read can stand for the node's log (``xid.judge_xid``
runs it first): an empty or non-kernel log is an ``error``, unreadable Xid lines a ``warn``, else ``pass``."""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._util import fmt, plural


def log_check(host, facts, events, version):
    """The one ``xid.log.readable`` check of a host's Xid facts (``events`` parsed, judged with catalog ``version``)."""
    source = facts.get("source") or "kernel log"
    since = facts.get("since")
    window = " since %s" % since if since else ""
    unparsed = [line for line in facts.get("unparsed") or [] if isinstance(line, str)]
    codes = sorted(set(event["code"] for event in events))
    gpus = len(set(event.get("pci_bus_id") for event in events))
    found = "no Xid event"
    if events:
        found = "%s (Xid %s) on %s" % (plural(len(events), "Xid event"), ", ".join(map(str, codes)), plural(gpus, "GPU"))
    sxid = [event for event in facts.get("sxid_events") or [] if isinstance(event, dict) and event.get("kind") != "detail"]
    if sxid:
        found += " and %s (SXid %s)" % (plural(len(sxid), "NVSwitch SXid report"), ", ".join(
            map(str, sorted(set(event.get("code") for event in sxid if isinstance(event.get("code"), int))))))
    lines = facts.get("lines") if isinstance(facts.get("lines"), int) and not isinstance(facts.get("lines"), bool) else None
    read = "Read %s from %s%s" % (plural(lines or 0, "kernel log line"), source, window)
    if facts.get("fallback"):
        read += " (journalctl not used: %s)" % facts["fallback"]
    empty = _empty_log(facts, lines)
    if empty and not events:
        return make_check(
            "xid.log.readable", host, "error", component="kernel log", observed=lines, expected="kernel log lines",
            message="%s: %s, so the Xid rules have nothing to judge; a working node's kernel log is never empty (check "
                    "the log source and the user's rights to read it)" % (read, empty),
            remedy="investigate", evidence=_log_evidence(source, since, facts))
    if unparsed:
        return make_check(
            "xid.log.readable", host, "warn", component="kernel log", observed=len(unparsed), expected="0 unreadable Xid lines",
            message="%s: %s, but %s mention 'NVRM: Xid' and could not be read (a driver with a new message format?); "
                    "the Xid rules did not see them, so read them by hand and report them" % (read, found, plural(len(unparsed), "line")),
            remedy="investigate", evidence="\n".join(unparsed[:5]))
    return make_check(
        "xid.log.readable", host, "pass", component="kernel log", observed=len(events), expected=None,
        message="%s: %s (judged with Xid catalog v%s)" % (read, found, version),
        evidence=_log_evidence(source, since, facts))


def _empty_log(facts, lines):
    """Why the log read cannot stand for a healthy node's kernel log, or ``None``.

    Empty output is not a quiet kernel: journalctl prints ``-- No entries --`` for an empty window, dmesg always has
    the boot messages. Lines none of which has a kernel log time stamp (``kernel_lines`` from ``xid.log_shape``;
    absent in facts built by hand) are not a kernel log at all.
    """
    if facts.get("no_entries") is True:
        return None
    if lines is None:
        return "the number of lines read is unknown (%s)" % fmt(facts.get("lines"))
    if lines == 0:
        return "the output was empty"
    kernel_lines = facts.get("kernel_lines")
    if kernel_lines == 0 and not isinstance(kernel_lines, bool):
        return "none of them is a kernel log line (no dmesg, journalctl or syslog time stamp)"
    return None


def _log_evidence(source, since, facts):
    text = "source=%s, since=%s, lines=%s" % (source, since, facts.get("lines"))
    if facts.get("outside_window"):
        text += ", outside_window=%s" % facts["outside_window"]
    if isinstance(facts.get("command"), list):
        text += ", command: %s" % " ".join(str(arg) for arg in facts["command"])
    return text
