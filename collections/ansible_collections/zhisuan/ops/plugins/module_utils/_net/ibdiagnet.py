# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""``ibdiagnet`` (NVIDIA/Mellanox ibdiagnet2) console output -> its summary: the warnings and errors of every stage,
the fabric's counts and link speeds, the master SM, and the ``-E-`` / ``-W-`` lines of each stage.

The console output is a run of stages, each after a ``-----`` rule and its title (``Discovery``, ``Links Check``,
``Speed / Width checks``, ...), with ``-I-`` / ``-W-`` / ``-E-`` lines; then ``Fabric Summary`` (``Total Nodes
: 42``, ``Links at 4x25 : 21``, ``Master SM: Port=1 LID=10 GUID=0x... ... Node_Description=<name>``) and ``Summary``:

    -I- Stage                               Warnings   Errors     Comment
    -I- Discovery                           3          0
    -I- Speed / Width checks                0          15

Every line is judged alone (CRLF line ends are read as LF): a summary row whose counts are not numbers is a warning
naming its line and the other rows are read; an output cut before the ``Summary`` table keeps the stages and the
``-E-``/``-W-`` lines read and is ``partial``. Only an output with neither a stage nor a summary row raises
``ParseError``.

``parse_ibdiagnet`` gives ``{version, stages: [{stage, warnings, errors, comment, line}], totals: {warnings,
errors}, fabric: {total_nodes, switches, cas, aggregation_nodes, routers, links, links_by_rate: {"4x25": 21}},
master_sm: {lid, guid, name} | None, messages: [{level: error|warning, stage, text, line}], partial, warnings}``.
Pure functions, standard library only.
"""

from __future__ import annotations

import re

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError

_RULE = re.compile(r"^-{20,}\s*$")
_VERSION = re.compile(r'^Running version:\s*"IBDIAGNET (?P<version>[^"]+)"')
_ROW = re.compile(r"^-I-\s+(?P<stage>\S.*?)\s{2,}(?P<warnings>\S+)\s+(?P<errors>\S+)(?:\s+(?P<comment>\S.*?))?\s*$")
_HEADER = re.compile(r"^-I-\s+Stage\s+Warnings\s+Errors\b")
_MESSAGE = re.compile(r"^-(?P<level>[EW])-\s+(?P<text>\S.*?)\s*$")
_COUNT = re.compile(r"^(?P<key>[A-Za-z][A-Za-z ]*?)\s*:\s*(?P<value>\d+)\s*$")
_LINKS_AT = re.compile(r"^Links at (?P<rate>\d+x[\d.]+)\s*:\s*(?P<value>\d+)\s*$")
_MASTER = re.compile(r"^Master SM:.*?\bLID=(?P<lid>\d+).*?\bGUID=(?P<guid>0x[0-9a-fA-F]+)"
                     r"(?:.*?\bNode_Description=(?P<name>.*?))?\s*$")
_FABRIC_KEYS = {"Total Nodes": "total_nodes", "IB Switches": "switches", "IB Channel Adapters": "cas",
                "IB Aggregation Nodes": "aggregation_nodes", "IB Routers": "routers",
                "Total number of links": "links"}
MAX_MESSAGES = 500


def _lines(text):
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def parse_ibdiagnet(text):
    """The summary of an ``ibdiagnet`` console output (see the module doc)."""
    if not isinstance(text, str) or not text.strip():
        raise ParseError("ibdiagnet", "ibdiagnet output is empty")
    out = {"version": None, "stages": [], "totals": {"warnings": 0, "errors": 0}, "fabric": {"links_by_rate": {}},
           "master_sm": None, "messages": [], "partial": False, "warnings": []}
    section, after_rule, in_summary, seen_stage = None, False, False, False
    for number, raw in enumerate(_lines(text), start=1):
        line = raw.strip()
        if not line:
            continue
        match = _VERSION.match(line)
        if match:
            out["version"] = match.group("version").strip()
            continue
        if _RULE.match(line):
            after_rule, in_summary = True, False
            continue
        if after_rule:
            # the title of the stage (or of the fabric summary, or of the summary table) after its rule
            after_rule = False
            section = line
            in_summary = line == "Summary"
            seen_stage = seen_stage or section not in ("Fabric Summary", "Summary")
            continue
        if in_summary:
            if _HEADER.match(line):
                continue
            match = _ROW.match(line)
            if match and match.group("warnings").isdigit() and match.group("errors").isdigit():
                row = {"stage": match.group("stage"), "warnings": int(match.group("warnings")),
                       "errors": int(match.group("errors")), "comment": match.group("comment") or None,
                       "line": number}
                out["stages"].append(row)
                out["totals"]["warnings"] += row["warnings"]
                out["totals"]["errors"] += row["errors"]
            elif line.startswith("-I- ") and ":" in line:
                # the file list after the table (-I- Database : /var/tmp/ibdiagnet2/...): the table has ended
                in_summary = False
            elif not line.startswith("-I- You can find"):
                out["warnings"].append("line %d of the Summary table not read: %s" % (number, line[:200]))
            continue
        if section == "Fabric Summary":
            match = _LINKS_AT.match(line)
            if match:
                out["fabric"]["links_by_rate"][match.group("rate")] = int(match.group("value"))
                continue
            match = _COUNT.match(line)
            if match and match.group("key").strip() in _FABRIC_KEYS:
                out["fabric"][_FABRIC_KEYS[match.group("key").strip()]] = int(match.group("value"))
                continue
            match = _MASTER.match(line)
            if match:
                out["master_sm"] = {"lid": int(match.group("lid")), "guid": match.group("guid").lower(),
                                    "name": (match.group("name") or "").strip() or None}
            continue
        match = _MESSAGE.match(line)
        if match and len(out["messages"]) < MAX_MESSAGES:
            out["messages"].append({"level": "error" if match.group("level") == "E" else "warning",
                                    "stage": section, "text": match.group("text")[:400], "line": number})
    if not out["stages"] and not seen_stage:
        raise ParseError("ibdiagnet", "no ibdiagnet stage and no Summary table in the output")
    if not out["stages"]:
        out["partial"] = True
        out["warnings"].append("no Summary table: the output ends before it (cut short?); the stages read are kept")
    return out
