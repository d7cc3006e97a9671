# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""NVSwitch SXid judgement rules: the ``sxid_events`` of the ``xid`` facts + the SXid catalog (data/sxid_catalog.yml,
``catalog["sxid"]`` of ``plugin_utils._xid_catalog.load_catalog``) -> check records. ``xid.judge_xid`` runs them
after the Xid checks. Pure functions, no I/O, standard library only.

``xid.sxid.readable`` (host)
    warn when lines carried ``SXid (`` but could not be read; absent otherwise.
``xid.sxid.<code>`` (one per code and NVSwitch, switches in bus order, codes ascending)
    the catalog row decides severity and remedy by its class (corrected -> pass, non_fatal -> warn, fatal and
    always_fatal -> fail); a line the driver marks ``Fatal`` is never judged below fail; a code the catalog lacks is
    judged by that word (``Fatal``: fail + ``reset_gpu``, else warn + ``investigate``). The row's ``pairs_with`` Xids
    seen on any GPU of the host within ``companion_window_s`` are named: beside Xid 79 the remedy is the Xid 79
    one (``power_cycle``: the link went down because the GPU fell off the bus), beside Xid 74 the two are one fault.

A flood of one SXid is one check: ``observed`` counts every line, those the node did not keep included
(``dropped_lines``), and the evidence gives the first and last time seen.
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._gpu.xid import time_key
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._util import plural

FM_GUIDE_URL = "https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html"
_STATUS_OF = {"fail": "fail", "warn": "warn", "info": "pass"}
_RANK = {"pass": 0, "warn": 1, "fail": 2}


def judge_sxid(host, xid_facts, catalog, xid_events, limits):
    """The SXid checks of one host (``[]`` when the facts carry no SXid lines or no catalog was loaded)."""
    events = [event for event in xid_facts.get("sxid_events") or []
              if isinstance(event, dict) and isinstance(event.get("code"), int)]
    unparsed = [line for line in xid_facts.get("sxid_unparsed") or [] if isinstance(line, str)]
    tallies = _tallies(xid_facts, "sxid")
    if not isinstance(catalog, dict) or not (events or unparsed or tallies):
        return []
    version = str(catalog.get("version") or "?")
    checks = []
    if unparsed:
        checks.append(make_check(
            "xid.sxid.readable", host, "warn", component="kernel log", observed=len(unparsed),
            expected="0 unreadable SXid lines",
            message="%s mention 'SXid' and could not be read (a driver with a new message format?); the SXid rules "
                    "did not see them, so read them by hand and report them" % plural(len(unparsed), "kernel log line"),
            remedy="investigate", evidence="\n".join(unparsed[:5])))
    groups = {}
    for event in events:
        groups.setdefault((event.get("pci_bus_id") or "unknown", event["code"]), []).append(event)
    for key, tally in tallies.items():
        groups.setdefault(key, [])
    for bus, code in sorted(groups, key=lambda key: (key[0], key[1])):
        checks.append(_judge_group(host, bus, code, groups[(bus, code)], tallies.get((bus, code)), catalog, version,
                                   xid_events, limits))
    return checks


def _tallies(xid_facts, mark):
    """``{(bus, code): dropped-lines entry}`` of one mark from the facts' ``dropped_lines``."""
    out = {}
    for entry in xid_facts.get("dropped_lines") or []:
        if isinstance(entry, dict) and entry.get("mark") == mark and isinstance(entry.get("code"), int) \
                and isinstance(entry.get("lines"), int):
            out[(entry.get("pci_bus_id") or "unknown", entry["code"])] = entry
    return out


def flood_span(events, tally):
    """``(lines, first, last)`` of a group: its kept events plus the lines the node counted but did not keep;
    ``first`` / ``last`` are ``{time, uptime_s}`` mappings (or events)."""
    stamps = [event for event in events if isinstance(event, dict)]
    lines = len(stamps)
    if isinstance(tally, dict):
        lines += tally.get("lines") or 0
        stamps += [item for item in (tally.get("first"), tally.get("last")) if isinstance(item, dict) and item]
    keyed = [(time_key(item), position, item) for position, item in enumerate(stamps)]
    timed = [entry for entry in keyed if entry[0] is not None]
    if timed and len(set(entry[0][0] for entry in timed)) == 1:
        first = min(timed, key=lambda entry: (entry[0][1], entry[1]))[2]
        last = max(timed, key=lambda entry: (entry[0][1], entry[1]))[2]
    else:
        first = stamps[0] if stamps else {}
        last = stamps[-1] if stamps else {}
    return lines, first, last


def when(event):
    """An event's (or a ``{time, uptime_s}`` mapping's) time as the report prints it."""
    if event.get("time"):
        return event["time"]
    if event.get("uptime_s") is not None:
        return "%.6f s after boot" % event["uptime_s"]
    return "at an unknown time"


def _near(first, second, window):
    if first is None or second is None or first[0] != second[0]:
        return False
    return abs(first[1] - second[1]) <= window


def _paired(events, xid_events, codes, window):
    """The Xid events of ``codes`` within ``window`` seconds of any of ``events`` (comparable times only: an SXid
    and an Xid of one log share its clock)."""
    times = [time_key(event) for event in events]
    found = []
    for event in xid_events:
        if event.get("code") not in codes:
            continue
        mine = time_key(event)
        if any(_near(mine, other, window) for other in times):
            found.append(event)
    return found


def _judge_group(host, bus, code, events, tally, catalog, version, xid_events, limits):
    row = (catalog.get("codes") or {}).get(code)
    heads = [event for event in events if event.get("kind") != "detail"]
    switches = sorted(set(event["switch"] for event in events if isinstance(event.get("switch"), int)))
    component = "NVSwitch %s at %s" % (switches[0], bus) if len(switches) == 1 else "NVSwitch at %s" % bus
    marked = sorted(set(event["severity"] for event in heads if event.get("severity")))
    links = sorted(set(event["link"] for event in heads if isinstance(event.get("link"), int)))
    # the driver's detail lines (Severity ..., Data {...}) belong to the report before them: count the reports
    lines, first, last = flood_span(heads or events, tally)
    details = len(events) - len(heads) if heads else 0
    window = limits["companion_window_s"]
    where = "%s%s" % (component, " link%s %s" % ("s" if len(links) > 1 else "", ", ".join(map(str, links[:8])))
                      if links else "")
    if row is None:
        fatal = "Fatal" in marked
        status, remedy = ("fail", "reset_gpu") if fatal else ("warn", "investigate")
        parts = ["%s of SXid %d on %s: SXid %d is not in SXid catalog v%s; the driver marked it %s" % (
            plural(lines, "report"), code, where, code, version, " and ".join(marked) or "without a severity"),
            "look it up in NVIDIA's Fabric Manager user guide, appendix NVSwitch SXid Errors (%s), and add it to the "
            "site override file (sxid: codes)" % FM_GUIDE_URL]
        return _check(host, code, status, remedy, component, lines, "a code the SXid catalog knows", parts, events,
                      first, last, limits, details)
    klass = (catalog.get("classes") or {}).get(row["class"]) or {}
    status = _STATUS_OF[row["severity"]]
    remedy = row["remedy"] if status != "pass" else "none"
    parts = ["%s of SXid %d (%s) on %s: %s in SXid catalog v%s (%s)" % (
        plural(lines, "report"), code, row["name"], where, row["class"].replace("_", " "), version,
        klass.get("meaning") or "")]
    if "Fatal" in marked and _RANK[status] < _RANK["fail"]:
        status, remedy = "fail", "reset_gpu"
        parts.append("but the driver marked it Fatal: drain the node and reset its GPUs and NVSwitches")
    paired = _paired(events or [first, last], xid_events, row["pairs_with"], window)
    if paired:
        codes = sorted(set(event["code"] for event in paired))
        gpus = sorted(set(event.get("pci_bus_id") or "?" for event in paired))
        parts.append("beside Xid %s on the GPU%s at %s within %s s" % (
            "/".join(map(str, codes)), "s" if len(gpus) > 1 else "", ", ".join(gpus), "%g" % window))
        if 79 in codes:
            remedy = "power_cycle"
            parts.append("the link went down because the GPU fell off the bus: the Xid 79 remedy (power cycle) "
                         "covers both")
        elif 74 in codes:
            parts.append("the GPU side of the same NVLink fault: one remedy for both")
    elif row["pairs_with"] and status == "fail":
        parts.append("no Xid %s on the host's GPUs within %s s" % ("/".join(map(str, row["pairs_with"])), "%g" % window))
    if status == "pass":
        parts.append("recorded, no action by itself")
    expected = None if status == "pass" else "no SXid %d" % code
    return _check(host, code, status, remedy, component, lines, expected, parts, events, first, last, limits, details,
                  row.get("notes"))


def _check(host, code, status, remedy, component, lines, expected, parts, events, first, last, limits, details,
           notes=None):
    keep = int(limits["evidence_lines"])
    quoted = [event.get("line") for event in events[:keep] if event.get("line")]
    quoted.append("%s in all%s, first %s, last %s" % (
        plural(lines, "report"), " (and %s of detail)" % plural(details, "line") if details else "", when(first),
        when(last)))
    message = "; ".join(part.strip().rstrip(".") for part in parts if part and part.strip()) + "."
    if notes:
        message += " " + notes.strip()
    return make_check("xid.sxid.%d" % code, host, status, component=component, observed=lines, expected=expected,
                      message=message, remedy=remedy, evidence="\n".join(quoted))
