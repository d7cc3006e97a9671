# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""``iblinkinfo`` (infiniband-diags, default format) -> the fabric's own view of its cabling.

The default format is a header per node (``CA: <NodeDescription>:`` or ``Switch: 0x<GUID> <NodeDescription>:``)
followed by one line per port::

    0xec0d9a03003d62be      4    1[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>       2   17[  ] "MF0;SB..." ( )
               2   17[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>       4    1[  ] "n02 HCA-1" ( )
               2    5[  ] ==(                Down/ Polling)==>             [  ] "" ( )

(CA port lines start with the port GUID; switch port lines do not.) ``parse_iblinkinfo`` gives
``{"nodes": [{type: CA|Switch, name, guid, ports: [{port, lid, guid, width, speed, state, phys_state,
peer_lid, peer_port, peer_name}]}]}``; ``hca_links`` turns that into one record per HCA port seen by the fabric:
``{(host, hca, port): {switch, switch_guid, switch_port, state, phys_state, source}}`` where a CA's NodeDescription
``"<host> <hca>"`` (what rdma-ndd / the OFED driver sets) names the host and the HCA. The switch side (a switch's
port line) wins over the CA side: ``iblinkinfo`` run on a node may print the switches' view of CAs it cannot
reach. The one-line ``-l`` format is not read. A line of dots only (``...``: an excerpt's elision mark, as in
documentation that cut the output) is skipped with a warning that the view is partial; any other line that is not
a header or a port line is skipped with an "unread line" warning. Output with no node header raises ``ParseError``.
Pure functions, standard library only.
"""

import re

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._safe_parse import to_int

TOOL = "iblinkinfo"

_CA_RE = re.compile(r"^CA:\s+(.*):\s*$")
_SWITCH_RE = re.compile(r"^Switch:\s+(0x[0-9A-Fa-f]{1,16})\s+(.*):\s*$")
_PORT_RE = re.compile(
    r"^\s*(?:(0x[0-9A-Fa-f]{1,16})\s+)?([0-9]{1,6})\s+([0-9]{1,3})\[[^\]]*\]\s+==\((.*)\)==>"
    r"\s*([0-9]{1,6})?\s+([0-9]{1,3})?\[[^\]]*\]\s+\"(.*)\"\s*(?:\(.*\))?\s*$")
_ELISION_RE = re.compile(r"^\s*(?:\.{3,}|\u2026)\s*$")
_LINK_RE = re.compile(r"^\s*(?:([0-9]{1,2}X)\s+([0-9.]{1,12})\s+Gbps\s+)?([A-Za-z]+)\s*/\s*([A-Za-z]+)\s*$")


def _port(match):
    state = _LINK_RE.match(match.group(4))
    return {"guid": match.group(1).lower() if match.group(1) else None,
            "lid": to_int(match.group(2)), "port": to_int(match.group(3)),
            "width": state.group(1) if state else None,
            "speed": state.group(2) if state else None,
            "state": state.group(3) if state else match.group(4).strip() or None,
            "phys_state": state.group(4) if state else None,
            "peer_lid": to_int(match.group(5)) if match.group(5) else None,
            "peer_port": to_int(match.group(6)) if match.group(6) else None,
            "peer_name": match.group(7) or None}


def parse_iblinkinfo(text, warn=None):
    nodes = []
    node = None
    for line in text.splitlines():
        if not line.strip():
            continue
        match = _CA_RE.match(line)
        if match:
            node = {"type": "CA", "name": match.group(1).strip(), "guid": None, "ports": []}
            nodes.append(node)
            continue
        match = _SWITCH_RE.match(line)
        if match:
            node = {"type": "Switch", "name": match.group(2).strip(), "guid": match.group(1).lower(), "ports": []}
            nodes.append(node)
            continue
        match = _PORT_RE.match(line)
        if match and node is not None:
            port = _port(match)
            if port["port"] is not None:
                node["ports"].append(port)
            continue
        if warn is None:
            continue
        if _ELISION_RE.match(line):
            warn("iblinkinfo: skipped an elision line %r: the output was cut, the fabric view is partial"
                 % line.strip())
        else:
            warn("iblinkinfo: unread line %r; please report" % line.strip()[:200])
    if not nodes:
        raise ParseError(TOOL, "no 'CA:' or 'Switch:' node header in the iblinkinfo output (the one-line -l format "
                         "is not read)")
    return {"nodes": nodes}


def split_description(name):
    """``"node17 mlx5_0"`` -> ``("node17", "mlx5_0")``; a description without a space has no HCA part."""
    name = (name or "").strip()
    if " " not in name:
        return name, None
    host, hca = name.rsplit(" ", 1)
    return host.strip(), hca


def _up(state):
    return (state or "").lower() in ("active", "armed", "init")


def hca_links(fabric):
    """``{"host hca/port" key parts...}``: see the module docstring; only links whose peer is named."""
    links = {}
    for node in (fabric or {}).get("nodes") or []:
        for port in node.get("ports") or []:
            if not port.get("peer_name") or port.get("peer_port") is None:
                continue
            record = {"state": port.get("state"), "phys_state": port.get("phys_state")}
            if node.get("type") == "Switch":
                host, hca = split_description(port["peer_name"])
                key = (host, hca, port["peer_port"])
                record.update(switch=node.get("name"), switch_guid=node.get("guid"), switch_port=port["port"],
                              source="switch")
                links[key] = record
            else:
                host, hca = split_description(node.get("name"))
                key = (host, hca, port["port"])
                if key in links:
                    continue
                record.update(switch=port["peer_name"], switch_guid=None, switch_port=port["peer_port"], source="ca")
                links[key] = record
    guids = dict((node.get("name"), node.get("guid")) for node in (fabric or {}).get("nodes") or []
                 if node.get("type") == "Switch")
    for record in links.values():
        record["up"] = _up(record.get("state"))
        if record.get("switch_guid") is None:
            record["switch_guid"] = guids.get(record.get("switch"))
    return links


def fabric_facts(text, warn=None):
    """``{"links": [{host, hca, port, switch, switch_guid, switch_port, state, phys_state, up, source}]}``."""
    links = hca_links(parse_iblinkinfo(text, warn=warn))
    result = []
    for (host, hca, port), record in sorted(links.items(), key=lambda item: (item[0][0], str(item[0][1]), item[0][2])):
        entry = {"host": host, "hca": hca, "port": port}
        entry.update(record)
        result.append(entry)
    return {"links": result}
