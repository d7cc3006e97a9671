# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""``ibnetdiscover`` (infiniband-diags) -> the subnet's view of every link: the InfiniBand cabling as a whole.

Two formats are read, told apart line by line:

* the topology file (plain ``ibnetdiscover``): ``key=value`` lines (``vendid``, ``switchguid=0x..(..)``, ...), a
  node header ``Switch  36 "S-<guid>"  # "<NodeDescription>" base port 0 lid 6 lmc 0`` or
  ``Ca  2 "H-<guid>"  # "<NodeDescription>"``, then one line per linked port: on a switch
  ``[22]  "H-<peer guid>"[1](<peer port guid>)  # "<peer NodeDescription>" lid 4 4xSDR``, on a CA
  ``[1](<port guid>)  "S-<peer guid>"[6]  # lid 16 lmc 1 "<peer NodeDescription>" lid 3 4xSDR``. Only ports whose
  link is up are listed; the width and speed (``4xEDR``) end each port line.
* the ports report (``ibnetdiscover -p``): one line per port,
  ``CA   134  1 0x7cfe... 4x EDR - SW  1719 10 0x7cfe... ( 'o0001 HCA-1' - 'ib-i1l1s01' )``; a port without a peer
  is ``SW  2052 37 0x506b... 4x ???   'ib-i4l1s01'`` (the name quoted or not).

Every line is judged alone: one that is neither (a library's error line such as
``src/query_smp.c:195; umad ... bad status 110``, a damaged or elided line) is skipped with a warning naming it,
and the rest is read; a last line cut short marks the view ``partial``. Only an output with no node and no port
line at all raises ``ParseError``.

``parse_ibnetdiscover`` gives ``{format: full|ports, nodes: [{type: Switch|CA|Router, guid, name, lid, ports:
[{port, peer_type, peer_guid, peer_port, peer_name, peer_lid, width, speed}]}], partial, warnings}``;
``fabric_facts`` gives the ``ib_fabric`` facts the cabling judge reads (the shape ``iblinkinfo.fabric_facts``
gives, with the rate): ``{tool: ibnetdiscover, links: [{host, hca, port, switch, switch_guid, switch_port,
state, phys_state, up, width, speed, source}], switch_links: [{switch, switch_guid, port, peer, peer_guid,
peer_port, width, speed}], partial, warnings}``. A CA's NodeDescription ``"<host> <hca>"`` names the host and
the HCA; the switch side of a link wins over the CA side. Widths are numbers of lanes (``4``), speeds the IBTA
names (``SDR`` .. ``XDR``, ``FDR10``); ``rate_of`` turns ``iblinkinfo``'s ``4X 25.78125 Gbps`` into the same.
Pure functions, standard library only.
"""

import re

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._net.iblinkinfo import split_description
from ansible_collections.zhisuan.ops.plugins.module_utils._safe_parse import to_int

TOOL = "ibnetdiscover"

_GUID = r"(?:0x)?[0-9A-Fa-f]{1,16}"
_TYPES = {"S": "Switch", "H": "CA", "R": "Router", "SW": "Switch", "CA": "CA", "RT": "Router",
          "Switch": "Switch", "Ca": "CA", "Rt": "Router"}
_HEADER_RE = re.compile(r'^\s*(Switch|Ca|Rt)\s+([0-9]{1,3})\s+"([SHR])-(%s)"\s*#\s*"(.*)"'
                        r'(?:\s+(?:base|enhanced)\s+port\s+[0-9]{1,3}\s+lid\s+([0-9]{1,6})\s+lmc\s+[0-9]{1,2})?\s*$'
                        % _GUID)
_PORT_RE = re.compile(r'^\s*\[([0-9]{1,3})\](?:\[ext\s+[0-9]{1,3}\])?(?:\((%s)\))?\s+"([SHR])-(%s)"\[([0-9]{1,3})\]'
                      r'(?:\((%s)\))?\s*#\s*(?:lid\s+([0-9]{1,6})\s+lmc\s+[0-9]{1,2}\s+)?"(.*)"\s+lid\s+([0-9]{1,6})'
                      r'\s+([0-9]{1,2})x\s*([A-Z][A-Z0-9]{1,7}|\?{1,3})\s*$' % (_GUID, _GUID, _GUID))
_KEY_RE = re.compile(r"^\s*(vendid|devid|sysimgguid|switchguid|caguid|rtguid)=\S*\s*$")
_KNOWN_RE = re.compile(r"^\s*(?:#.*|Non-Chassis Nodes|Chassis\s.*|ibwarn:.*)$")
_P_LINK_RE = re.compile(r"^\s*(CA|SW|RT)\s+([0-9]{1,6})\s+([0-9]{1,3})\s+(0x[0-9A-Fa-f]{1,16})\s+([0-9]{1,2})x\s+"
                        r"([A-Z][A-Z0-9]{1,7})\s+-\s+(CA|SW|RT)\s+([0-9]{1,6})\s+([0-9]{1,3})\s+(0x[0-9A-Fa-f]{1,16})"
                        r"\s+\(\s*'(.*)'\s+-\s+'(.*)'\s*\)\s*$")
_P_IDLE_RE = re.compile(r"^\s*(CA|SW|RT)\s+([0-9]{1,6})\s+([0-9]{1,3})\s+(0x[0-9A-Fa-f]{1,16})\s+(?:[0-9]{1,2}x|\?{1,3})"
                        r"(?:\s+(?:[A-Z][A-Z0-9]{1,7}|\?{1,3}))?\s+(?:'(.*)'|(\S.*?))\s*$")
_ELISION_RE = re.compile(r"^\s*(?:\.{3,}|\u2026|\[\.\.\.\])\s*$")

# per-lane Gb/s as iblinkinfo prints it -> the IBTA name
_LANE_SPEEDS = {"2.5": "SDR", "5.0": "DDR", "10.0": "QDR", "10.3125": "FDR10", "14.0625": "FDR", "25.78125": "EDR",
                "53.125": "HDR", "106.25": "NDR", "212.5": "XDR"}
SPEED_ORDER = ("SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR", "XDR")


def _guid(text):
    if text is None:
        return None
    text = text.lower()
    return text if text.startswith("0x") else "0x" + text


def rate_of(width, speed):
    """``(lanes, speed name)`` from ``4x``/``4X``/``4`` and ``EDR``/``25.78125``; parts not read are None."""
    lanes = to_int(re.sub(r"[xX]$", "", str(width).strip())) if width is not None else None
    name = None
    if speed is not None:
        speed = str(speed).strip()
        if speed.upper() in SPEED_ORDER:
            name = speed.upper()
        else:
            for lane, label in _LANE_SPEEDS.items():
                try:
                    if abs(float(speed) - float(lane)) < 1e-6:
                        name = label
                except ValueError:
                    break
    return lanes, name


def rate_text(lanes, speed):
    if lanes is None and speed is None:
        return None
    return "%sx%s" % (lanes if lanes is not None else "?", speed or "?")


def _warn(warn, message):
    if warn is not None:
        warn(message)


def _full_line(line, state, warn):
    """One topology-file line; True when read."""
    match = _HEADER_RE.match(line)
    if match:
        state["node"] = {"type": _TYPES[match.group(1)], "guid": _guid(match.group(4)), "name": match.group(5),
                         "lid": to_int(match.group(6)) if match.group(6) else None,
                         "nports": to_int(match.group(2)), "ports": []}
        state["nodes"].append(state["node"])
        return True
    match = _PORT_RE.match(line)
    if match:
        if state["node"] is None:
            _warn(warn, "ibnetdiscover: a port line before any node header, skipped: %r" % line.strip()[:200])
            return True
        lanes, speed = rate_of(match.group(10), match.group(11))
        state["node"]["ports"].append({
            "port": to_int(match.group(1)), "peer_type": _TYPES[match.group(3)], "peer_guid": _guid(match.group(4)),
            "peer_port": to_int(match.group(5)), "peer_name": match.group(8), "lid": to_int(match.group(7)),
            "peer_lid": to_int(match.group(9)), "width": lanes, "speed": speed})
        if state["node"]["type"] != "Switch" and match.group(7):
            state["node"]["lid"] = to_int(match.group(7))
        return True
    return bool(_KEY_RE.match(line) or _KNOWN_RE.match(line))


def _ports_line(line, state):
    """One ``-p`` line; True when read."""
    match = _P_LINK_RE.match(line)
    if match:
        lanes, speed = rate_of(match.group(5), match.group(6))
        node = _ports_node(state, match.group(1), match.group(4), match.group(11), match.group(2))
        node["ports"].append({
            "port": to_int(match.group(3)), "peer_type": _TYPES[match.group(7)], "peer_guid": _guid(match.group(10)),
            "peer_port": to_int(match.group(9)), "peer_name": match.group(12).strip(), "lid": to_int(match.group(2)),
            "peer_lid": to_int(match.group(8)), "width": lanes, "speed": speed})
        return True
    match = _P_IDLE_RE.match(line)
    if match:
        name = match.group(5) if match.group(5) is not None else match.group(6)
        node = _ports_node(state, match.group(1), match.group(4), name, match.group(2))
        node["ports"].append({"port": to_int(match.group(3)), "peer_type": None, "peer_guid": None, "peer_port": None,
                              "peer_name": None, "lid": to_int(match.group(2)), "peer_lid": None, "width": None,
                              "speed": None})
        return True
    return False


def _ports_node(state, kind, guid, name, lid):
    guid = _guid(guid)
    key = (kind, guid)
    node = state["by_guid"].get(key)
    if node is None:
        node = {"type": _TYPES[kind], "guid": guid, "name": (name or "").strip(), "lid": to_int(lid), "ports": []}
        state["by_guid"][key] = node
        state["nodes"].append(node)
    return node


def parse_ibnetdiscover(text, warn=None):
    """The nodes and their linked ports (see the module docstring); ``warn`` gets one message per unread line."""
    state = {"nodes": [], "node": None, "by_guid": {}}
    warnings = []

    def note(message):
        warnings.append(message)
        _warn(warn, message)

    kinds = set()
    lines = (text or "").splitlines()
    last = None
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        last = index
        if _ports_line(line, state):
            kinds.add("ports")
            continue
        if _full_line(line, state, note):
            if _HEADER_RE.match(line) or _PORT_RE.match(line):
                kinds.add("full")
            continue
        if _ELISION_RE.match(line):
            note("ibnetdiscover: skipped an elision line %r: the output was cut, the subnet view is partial"
                 % line.strip())
            state["partial"] = True
        else:
            note("ibnetdiscover: unread line %d %r; please report" % (index + 1, line.strip()[:200]))
            state.setdefault("unread", []).append(index)
    if not state["nodes"]:
        raise ParseError(TOOL, "no node header ('Switch ...', 'Ca ...') and no port line ('SW ...', 'CA ...') in "
                         "the ibnetdiscover output")
    partial = bool(state.get("partial"))
    if last is not None and last in state.get("unread", []) and last > 0:
        note("ibnetdiscover: the output ends in an unread line: it was cut short, the subnet view is partial")
        partial = True
    return {"format": "ports" if "ports" in kinds and "full" not in kinds else "full", "nodes": state["nodes"],
            "partial": partial, "warnings": warnings}


def _rate_fields(port):
    return {"width": port.get("width"), "speed": port.get("speed")}


def fabric_facts(text, warn=None):
    """The ``ib_fabric`` facts (see the module docstring) from one ``ibnetdiscover`` output (either format)."""
    topo = parse_ibnetdiscover(text, warn=warn)
    names = dict((node["guid"], node["name"]) for node in topo["nodes"])
    links = {}  # (CA GUID, port) -> record: two CAs may share a NodeDescription
    idle = {}
    switch_links = {}
    for node in topo["nodes"]:
        for port in node["ports"]:
            if node["type"] == "Switch" and port["peer_type"] == "CA":
                host, hca = split_description(port["peer_name"] or names.get(port["peer_guid"]))
                record = {"host": host, "hca": hca, "port": port["peer_port"], "switch": node["name"],
                          "switch_guid": node["guid"], "switch_port": port["port"], "source": "switch",
                          "ca_guid": port["peer_guid"]}
                record.update(_rate_fields(port))
                links[(port["peer_guid"], port["peer_port"])] = record
            elif node["type"] == "CA" and port["peer_type"] == "Switch":
                host, hca = split_description(node["name"])
                key = (node["guid"], port["port"])
                if key in links:
                    continue
                record = {"host": host, "hca": hca, "port": port["port"],
                          "switch": port["peer_name"] or names.get(port["peer_guid"]),
                          "switch_guid": port["peer_guid"], "switch_port": port["peer_port"], "source": "ca",
                          "ca_guid": node["guid"]}
                record.update(_rate_fields(port))
                links[key] = record
            elif node["type"] == "CA" and port["peer_type"] is None:
                host, hca = split_description(node["name"])
                idle[(node["guid"], port["port"])] = {"host": host, "hca": hca, "port": port["port"], "switch": None,
                                                      "switch_guid": None, "switch_port": None,
                                                      "source": "ca", "ca_guid": node["guid"], "width": None,
                                                      "speed": None}
            elif node["type"] == "Switch" and port["peer_type"] == "Switch":
                ends = sorted([(node["guid"], port["port"]), (port["peer_guid"], port["peer_port"])],
                              key=lambda end: (str(end[0]), end[1] if end[1] is not None else -1))
                if tuple(ends) in switch_links:
                    other = switch_links[tuple(ends)]
                    # both ends print the link: keep the worse width and speed should they disagree
                    if port["width"] is not None and (other["width"] is None or port["width"] < other["width"]):
                        other["width"] = port["width"]
                    if port["speed"] in SPEED_ORDER and (other["speed"] not in SPEED_ORDER or SPEED_ORDER.index(
                            port["speed"]) < SPEED_ORDER.index(other["speed"])):
                        other["speed"] = port["speed"]
                    continue
                record = {"switch": node["name"], "switch_guid": node["guid"], "port": port["port"],
                          "peer": port["peer_name"] or names.get(port["peer_guid"]), "peer_guid": port["peer_guid"],
                          "peer_port": port["peer_port"]}
                record.update(_rate_fields(port))
                switch_links[tuple(ends)] = record
    result = []
    seen = {}
    for key, record in list(links.items()) + [(k, v) for k, v in idle.items() if k not in links]:
        if not record["host"] or record["port"] is None:
            continue
        name = (record["host"], record["hca"], record["port"])
        if name in seen and seen[name] != record["ca_guid"]:
            message = ("ibnetdiscover: CAs %s and %s share the NodeDescription %r: their links cannot be told apart "
                       "by node name (set the node description, e.g. rdma-ndd)" % (seen[name], record["ca_guid"],
                                                                                   "%s %s" % name[:2]))
            topo["warnings"].append(message)
            _warn(warn, message)
            continue
        seen[name] = record["ca_guid"]
        # ibnetdiscover lists a link only when it is physically up; it does not print the logical state
        entry = {"state": None if record["switch"] is not None else "Down",
                 "phys_state": "LinkUp" if record["switch"] is not None else None, "up": record["switch"] is not None}
        entry.update(record)
        result.append(entry)
    result.sort(key=lambda item: (item["host"], str(item["hca"]), item["port"]))
    isl = sorted(switch_links.values(), key=lambda item: (str(item["switch"]), item["port"] or 0))
    return {"tool": TOOL, "format": topo["format"], "links": result, "switch_links": isl,
            "partial": topo["partial"], "warnings": topo["warnings"]}
