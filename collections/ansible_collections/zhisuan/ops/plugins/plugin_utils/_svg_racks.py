# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""Two of the delivery guide's §6.2 documents as pictures: the rack elevation (U-position map, inline SVG: each server
at its ``zhisuan_u`` in its ``zhisuan_rack``, coloured by status) and the topology (nodes to leaf switches as the
cabling plan and LLDP saw them; the data for a grid of leaf boxes the template draws, the links not as planned
named). Both stay legible at fleet size: the elevation draws every rack up to MAX_RACKS and otherwise only the racks
holding a node that did not pass; the topology is one box per leaf with its node and link counts."""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._text import natural_key
from ansible_collections.zhisuan.ops.plugins.plugin_utils._svg import FONT, STATUS_COLOURS, _e

RACK_U = 42
U_PX = 12
RACK_W = 132
RACK_GAP = 16
RACKS_PER_ROW = 8
MAX_RACKS = 16
MAX_LINKS_NAMED = 4


def _u(value):
    try:
        number = int(str(value).strip().upper().lstrip("U"))
    except (TypeError, ValueError):
        return None
    return number if 1 <= number <= RACK_U else None


def rack_layout(hosts, places):
    """({rack: [(u, name, status)]}, shown racks, hidden count): ``places`` maps a host to (rack, u)."""
    racks = {}
    for host in hosts:
        rack, u_pos = places.get(host["name"], (None, None))
        if rack in (None, "") or _u(u_pos) is None:
            continue
        racks.setdefault(str(rack), []).append((_u(u_pos), host["name"], host["status"]))
    names = sorted(racks, key=natural_key)
    shown = names if len(names) <= MAX_RACKS else [r for r in names if any(s != "pass" for _u_, _n, s in racks[r])]
    return racks, shown[:MAX_RACKS * 4], len(names) - len(shown[:MAX_RACKS * 4])


def rack_elevation_svg(racks, shown, label):
    """One 42U column per shown rack; a server fills its U (1U each: the inventory gives the position, not the
    height), labelled with its name; the tooltip says its status."""
    rows = (len(shown) + RACKS_PER_ROW - 1) // RACKS_PER_ROW
    col_h = 22 + RACK_U * U_PX + 10
    width = RACKS_PER_ROW * (RACK_W + RACK_GAP)
    height = max(rows, 1) * col_h
    out = ['<svg class="elevation" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s" %s font-size="10">'
           % (width, height, width, height, _e(label), FONT), "<title>%s</title>" % _e(label)]
    for index, rack in enumerate(shown):
        x = (index % RACKS_PER_ROW) * (RACK_W + RACK_GAP)
        y = (index // RACKS_PER_ROW) * col_h
        out.append('<g class="rack" data-rack="%s">' % _e(rack))
        out.append('<rect class="rack-box" x="%d" y="%d" width="%d" height="%d" fill="none" stroke="none"/>'
                   % (x, y, RACK_W, 20 + RACK_U * U_PX))
        out.append('<text class="label rack-name" x="%d" y="%d" font-size="12" font-weight="700">%s</text>'
                   % (x, y + 14, _e(rack)))
        out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="#f6f8fa" stroke="#5f6368"/>'
                   % (x, y + 20, RACK_W, RACK_U * U_PX))
        for u_pos, name, status in sorted(racks[rack]):
            top = y + 20 + (RACK_U - u_pos) * U_PX
            out.append('<rect class="server" x="%d" y="%d" width="%d" height="%d" fill="%s" stroke="#fff" data-host="%s" '
                       'data-u="%d"><title>%s U%d: %s</title></rect>'
                       % (x + 18, top, RACK_W - 20, U_PX, STATUS_COLOURS.get(status, STATUS_COLOURS["none"]), _e(name),
                          u_pos, _e(name), u_pos, _e(status)))
            out.append('<text class="label u" x="%d" y="%d" font-size="8" fill="#5f6368">%d</text>' % (x + 2, top + 9, u_pos))
            out.append('<text class="label server-name" x="%d" y="%d" font-size="9" fill="%s">%s</text>'
                       % (x + 21, top + 9, "#202124" if status in ("warn", "skip", "none") else "#ffffff", _e(name[:20])))
        out.append("</g>")
    out.append("</svg>")
    return "".join(out)


def leaf_groups(links):
    """[(leaf, {nodes, links, bad: [link]})] from the cabling links (observed switch, else the planned one)."""
    leaves = {}
    for link in links:
        leaf = str(link.get("switch") or "unknown switch")
        item = leaves.setdefault(leaf, {"nodes": set(), "links": 0, "bad": []})
        item["nodes"].add(str(link.get("node")))
        item["links"] += 1
        if link.get("status") != "ok":
            item["bad"].append(link)
    return [(leaf, leaves[leaf]) for leaf in sorted(leaves, key=natural_key)]


def elevation_view(results, hosts):
    """The rack elevation section: {svg, racks, shown, hidden}; None when no host has a rack and a U position."""
    places = {}
    for name, record in (results.get("hosts") or {}).items():
        location = ((record or {}).get("facts") or {}).get("location") or {}
        if isinstance(location, dict):
            places[name] = (location.get("rack"), location.get("u"))
    racks, shown, hidden = rack_layout(hosts, places)
    if not racks:
        return None
    label = "Rack elevation: %d racks, %d shown" % (len(racks), len(shown))
    return {"svg": rack_elevation_svg(racks, shown, label) if shown else None, "racks": len(racks), "shown": len(shown),
            "hidden": hidden}


def topology_view(results):
    """The topology section (nodes to leaf switches, from the cabling check): [{leaf, nodes, links, bad, more}] with
    the first links not as planned; None without cabling links."""
    links = [link for link in (((results.get("cluster") or {}).get("fabric") or {}).get("cabling") or {}).get("links") or []
             if isinstance(link, dict)]
    if not links:
        return None
    return [{"leaf": leaf, "nodes": len(item["nodes"]), "links": item["links"], "bad_count": len(item["bad"]),
             "bad": [{"node": link.get("node"), "port": link.get("port"), "switch_port": link.get("switch_port"),
                      "status": link.get("status"), "observed": link.get("observed")}
                     for link in sorted(item["bad"], key=lambda bad: (natural_key(bad.get("node")), natural_key(bad.get("port"))))[:MAX_LINKS_NAMED]],
             "more": max(len(item["bad"]) - MAX_LINKS_NAMED, 0)} for leaf, item in leaf_groups(links)]
