# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""NVIDIA's investigatory workflows of the application Xids, as the Xid catalog names them (issue 24 item 7), read from
the context the kernel line gives. The workflow texts are NVIDIA's (docs.nvidia.com/deploy/xid-errors, Xid catalog,
investigatory actions; quoted in NVIDIA NVSentinel's design 014 "WORKFLOW_XID_13 and WORKFLOW_XID_31"):

``WORKFLOW_XID_13`` (Graphics Engine Exception)
    "Repeat TPC and GPC, diff SMs: RUN_DCGMEUD (possible HW issue); if pass RUN_FIELDDIAGS / Repeat TPC and GPC, single
    SM: RUN_DCGMEUD ... / Solo, no burst: CHECK_APP/CUDA / Not Repeat TPC and GPC: CHECK_APP/CUDA". The line names the
    location when the SM raised it: ``Graphics SM Warp Exception on (GPC 1, TPC 3, SM 0): Out Of Range Address``
    (``Graphics Exception: ChID 000c, ...`` names none). An incident is the burst of lines one fault prints
    (``incident_gap_s``); a location is *repeated* when two or more incidents name the same GPC and TPC.
``WORKFLOW_XID_31`` (GPU memory page fault)
    "Repeat MMU faults to same GPU (via PCI-ID): RUN_DCGMEUD (possible HW issue); if pass RUN_FIELDDIAGS / Repeat MMU
    faults to diff GPU (via PCI-ID): CHECK_APP/CUDA / Solo, no burst: CHECK_APP/CUDA". The line names the unit that
    faulted: ``MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_6 faulted @ 0x7f5a_e7504000. Fault is of type FAULT_PDE
    ACCESS_TYPE_VIRT_READ``.
Xid 43 (GPU stopped processing)
    the catalog's immediate action is IGNORE: the driver reset the channel of a process that faulted, so next to an
    application Xid of the same GPU it is that Xid's consequence (sympathetic), judged there.

Repeats count from ``workflow_repeat_incidents`` (2, the workflows' "repeat") incidents.
"""

from __future__ import annotations

import re

_LOCATION_RE = re.compile(r"\(GPC (\d{1,3}), TPC (\d{1,3})(?:, SM (\d{1,3}))?\)")
_MMU_RE = re.compile(r"MMU Fault: ENGINE (\S+(?: GPC\d+)?) (\S+) faulted @ (\S+?)\.? (?:Fault is of type (\S+)"
                     r"(?: (\S+))?)?")


def incidents(events, gap, time_key):
    """``events`` (one code on one GPU, in log order) cut into incidents: lines closer than ``gap`` seconds."""
    out, last = [], None
    for event in events:
        when = time_key(event)
        if last is None or when is None or when[0] != last[0] or when[1] - last[1] > gap:
            out.append([])
        out[-1].append(event)
        last = when
    return out


def _text(event):
    return str(event.get("text") or event.get("line") or "")


def locations(incident):
    """The ``(GPC, TPC)`` pairs an Xid 13 incident names (an empty set when its lines name none)."""
    found = set()
    for event in incident:
        for match in _LOCATION_RE.finditer(_text(event)):
            found.add((int(match.group(1)), int(match.group(2))))
    return found


def repeated_locations(groups, repeat):
    """``[((gpc, tpc), incidents)]`` named by at least ``repeat`` of the incidents' location sets, most first."""
    counts = {}
    for found in groups:
        for place in found:
            counts[place] = counts.get(place, 0) + 1
    return sorted(((place, count) for place, count in counts.items() if count >= repeat),
                  key=lambda item: (-item[1], item[0]))


def mmu_fault(event):
    """``{engine, client, address, fault, access}`` of an Xid 31 line's ``MMU Fault:`` part, or None."""
    match = _MMU_RE.search(_text(event))
    if not match:
        return None
    return {"engine": match.group(1), "client": match.group(2), "address": match.group(3),
            "fault": match.group(4), "access": match.group(5)}


def workflow_13(events, gap, repeat, time_key):
    """``(verdict, words)`` of WORKFLOW_XID_13 for one GPU's Xid 13 lines: ``hardware`` (a GPC/TPC repeated),
    ``application`` (repeats at different places, or one incident), or None when no line names a location."""
    groups = [locations(incident) for incident in incidents(events, gap, time_key)]
    named = [found for found in groups if found]
    if not named:
        return None, ""
    again = repeated_locations(named, repeat)
    places = "; ".join("GPC %d TPC %d in %d incidents" % (gpc, tpc, count) for (gpc, tpc), count in again[:4])
    if again:
        return "hardware", (
            "the same place of the GPU faulted again (%s%s): NVIDIA's WORKFLOW_XID_13 says a possible hardware fault "
            "(RUN_DCGMEUD): drain the node, run dcgmi diag -r 3 on this GPU and, if it passes, NVIDIA's field "
            "diagnostics" % (places, ", ..." if len(again) > 4 else ""))
    if len(named) >= repeat:
        return "application", (
            "each of %d incidents faulted at other GPC/TPC: NVIDIA's WORKFLOW_XID_13 says CHECK_APP/CUDA (the "
            "application, not the GPU)" % len(named))
    return "application", "one incident (solo, no burst): NVIDIA's WORKFLOW_XID_13 says CHECK_APP/CUDA"


def workflow_31(events, others, gap, repeat, time_key):
    """``(verdict, words)`` of WORKFLOW_XID_31 for one GPU's Xid 31 lines; ``others``: the bus ids of the other GPUs
    of the node with Xid 31 in the same log."""
    count = len(incidents(events, gap, time_key))
    faults = [fault for fault in (mmu_fault(event) for event in events) if fault]
    units = sorted(set("%s %s" % (fault["engine"], fault["client"]) for fault in faults))
    unit = (" (MMU fault of %s%s)" % (", ".join(units[:3]), ", ..." if len(units) > 3 else "")) if units else ""
    if count >= repeat and not others:
        return "hardware", (
            "MMU faults repeated on this GPU alone in %d incidents%s: NVIDIA's WORKFLOW_XID_31 says a possible hardware "
            "fault (RUN_DCGMEUD): drain the node, run dcgmi diag -r 3 on this GPU and, if it passes, NVIDIA's field "
            "diagnostics" % (count, unit))
    if others:
        return "application", (
            "MMU faults on other GPUs of the node too (%s)%s: NVIDIA's WORKFLOW_XID_31 says CHECK_APP/CUDA (the "
            "application, not this GPU)" % (", ".join(sorted(others)[:4]), unit))
    return "application", "one incident (solo, no burst)%s: NVIDIA's WORKFLOW_XID_31 says CHECK_APP/CUDA" % unit
