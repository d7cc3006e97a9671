# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Kernel log lines -> link up/down events per interface (link-flap evidence).

Reads what drivers and systemd-networkd write when a link changes state, in any of the kernel log forms the
collection reads (journalctl, dmesg, syslog): the interface name and the direction are taken from the message
text, the time stamp is kept as printed. Recognised messages:

* ``IF: lost carrier`` / ``IF: Gained carrier`` (systemd-networkd),
* ``IF: NIC Link is Down`` / ``NIC Link is Up ...`` (e1000e, i40e, ixgbe, bnxt_en),
* ``IF: Link down`` / ``IF: Link up`` (mlx5_core and others),
* ``IF: link is not ready`` / ``IF: link becomes ready`` (the kernel's IPv6 ADDRCONF lines).

Pure functions, standard library only.
"""

import re

_IF = r"(?P<if>[A-Za-z][\w.\-@]*)"
_PATTERNS = (
    (re.compile(_IF + r": [Ll]ost carrier\b"), "down"),
    (re.compile(_IF + r": [Gg]ained carrier\b"), "up"),
    (re.compile(_IF + r":? NIC Link is Down\b"), "down"),
    (re.compile(_IF + r":? NIC Link is Up\b"), "up"),
    (re.compile(_IF + r": Link down\b"), "down"),
    (re.compile(_IF + r": Link up\b"), "up"),
    (re.compile(_IF + r": link is not ready\b"), "down"),
    (re.compile(_IF + r": link becomes ready\b"), "up"),
)
_QUICK = ("carrier", "Link is", "Link down", "Link up", "link is not ready", "link becomes ready")
# The stamp before the host/program part: "Aug 17 06:18:01", "2025-02-23T16:24:18+0000", "[ 1234.5]", "[Sun ...]".
_STAMP_RE = re.compile(r"^(\w{3} +\d+ \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\S+|\[[^\]]+\])")


def parse_events(text):
    """``[{interface, state: up|down, time, line}]`` in log order."""
    events = []
    for line in text.splitlines():
        if not any(mark in line for mark in _QUICK):
            continue
        for pattern, state in _PATTERNS:
            match = pattern.search(line)
            if match:
                stamp = _STAMP_RE.match(line)
                events.append({"interface": match.group("if"), "state": state,
                               "time": stamp.group(1) if stamp else None, "line": line.strip()})
                break
    return events


def count_flaps(events, interfaces=None):
    """``{IF: number of down events}`` (a flap is a loss of link), only for ``interfaces`` when given."""
    counts = {}
    for event in events:
        name = event["interface"]
        if interfaces is not None and name not in interfaces:
            continue
        counts.setdefault(name, 0)
        if event["state"] == "down":
            counts[name] += 1
    return counts
