# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""The report's status overview as one inline SVG that stays readable from 8 to 4,000 nodes: one tile per rack
(``facts.location.rack``; nodes without a rack in groups of 64 in name order), each with its node count, a bar of
its nodes by status, the counts in words and the nodes that did not pass by name (the first few; the rest counted).
Its size grows with the number of racks, never with one mark per node, and every text has a fixed place in its tile,
so no two labels overlap."""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._text import natural_key
from ansible_collections.zhisuan.ops.plugins.plugin_utils._svg import FONT, STATUS_COLOURS, _e, _n

ORDER = ("fail", "unreachable", "error", "warn", "pass")
TILE_W = 282
GAP = 12
COLUMNS = 4
WIDTH = COLUMNS * TILE_W + (COLUMNS - 1) * GAP
HEAD_H = 40
LINE_H = 15
MAX_LISTED = 4  # nodes named per tile; the rest are counted
MAX_CHARS = 40  # characters of one listed line (11 px DejaVu Sans: ~6.5 px a character, the tile is 282 px)
GROUP_SIZE = 64


def _clip(text, limit=MAX_CHARS):
    text = str(text)
    return text if len(text) <= limit else text[:limit - 1] + "\u2026"


def rack_groups(hosts, racks, size=GROUP_SIZE):
    """[(group label, [host view, ...])]: by rack in natural order, then the nodes without a rack in groups of
    ``size`` named by their first and last node. ``hosts`` are the view's hosts (natural order), ``racks`` maps a
    host name to its rack or None."""
    by_rack, loose = {}, []
    for host in hosts:
        rack = racks.get(host["name"])
        if rack in (None, ""):
            loose.append(host)
        else:
            by_rack.setdefault(str(rack), []).append(host)
    groups = [("rack %s" % rack, by_rack[rack]) for rack in sorted(by_rack, key=natural_key)]  # the label is translated when drawn
    for start in range(0, len(loose), size):
        chunk = loose[start:start + size]
        label = chunk[0]["name"] if len(chunk) == 1 else "%s \u2013 %s" % (chunk[0]["name"], chunk[-1]["name"])
        groups.append((label, chunk))
    return groups


def _failing_families(host):
    return ", ".join(family for family, cell in host["cells"].items() if cell["status"] in ("fail", "error", "warn"))


def _tile(out, x, y, label, members, words):
    counts = dict((status, 0) for status in ORDER)
    for host in members:
        counts[host["status"]] = counts.get(host["status"], 0) + 1
    bad = [h for h in members if h["status"] != "pass"]
    rows = min(len(bad), MAX_LISTED) + (1 if len(bad) > MAX_LISTED else 0)
    height = HEAD_H + 18 + rows * LINE_H + 8
    worst = next((s for s in ORDER if counts.get(s)), "pass")
    out.append('<g class="tile" data-group="%s" data-status="%s" data-nodes="%d">' % (_e(label), worst, len(members)))
    if label.startswith("rack "):
        label = words.get("rack", "rack %s") % label[5:]
    out.append('<rect class="tile-box" x="%d" y="%d" width="%d" height="%d" fill="#fff" stroke="%s" stroke-width="%d"/>'
               % (x, y, TILE_W, height, STATUS_COLOURS[worst] if worst != "pass" else "#c9cdd2", 2 if bad else 1))
    out.append('<text class="label tile-title" x="%d" y="%d" font-size="13" font-weight="700">%s</text>'
               % (x + 8, y + 17, _e(_clip(label, 28))))
    out.append('<text class="label tile-count" x="%d" y="%d" text-anchor="end">%s</text>'
               % (x + TILE_W - 8, y + 17, _e(words["nodes"] % len(members))))
    left, bar_w = x + 8, TILE_W - 16
    for status in ORDER:
        if counts.get(status):
            width = bar_w * counts[status] / float(len(members))
            out.append('<rect class="bar" x="%s" y="%d" width="%s" height="10" fill="%s"><title>%s: %d %s</title></rect>'
                       % (_n(left), y + 24, _n(width), STATUS_COLOURS[status], _e(label), counts[status], status))
            left += width
    text = ", ".join("%d %s" % (counts[s], words.get(s, s)) for s in ORDER if counts.get(s))
    out.append('<text class="label tile-counts" x="%d" y="%d">%s</text>' % (x + 8, y + HEAD_H + 8, _e(_clip(text, 44))))
    for row, host in enumerate(bad[:MAX_LISTED]):
        line = "%s  %s  %s" % (host["name"], words.get(host["status"], host["status"]).upper(), _failing_families(host))
        out.append('<text class="label node" x="%d" y="%d" fill="%s" data-host="%s">%s</text>'
                   % (x + 8, y + HEAD_H + 8 + (row + 1) * LINE_H, STATUS_COLOURS.get(host["status"], "#202124"),
                      _e(host["name"]), _e(_clip(line))))
    if len(bad) > MAX_LISTED:
        out.append('<text class="label more" x="%d" y="%d" fill="#5f6368">%s</text>'
                   % (x + 8, y + HEAD_H + 8 + (MAX_LISTED + 1) * LINE_H, _e(words["more"] % (len(bad) - MAX_LISTED))))
    out.append("</g>")
    return height


WORDS = {"nodes": "%d nodes", "more": "+ %d more not passing (see Open issues)",
         "summary": "%d nodes: %d in %d racks, %d without a rack", "summary_racks": "%d nodes in %d racks",
         "summary_loose": "%d nodes (no rack given; in groups of 64 by name)", "pass": "pass", "warn": "warn", "fail": "fail", "error": "error",
         "unreachable": "unreachable", "rack": "rack %s"}


def status_overview_svg(groups, words=None):
    """The overview picture of ``rack_groups(...)``; ``words`` translates its fixed texts (WORDS' keys)."""
    words = dict(WORDS, **(words or {}))
    total = sum(len(members) for dummy, members in groups)
    body, y = [], 34
    for start in range(0, len(groups), COLUMNS):
        heights = [_tile(body, col * (TILE_W + GAP), y, label, members, words)
                   for col, (label, members) in enumerate(groups[start:start + COLUMNS])]
        y += max(heights) + GAP
    height = max(y, 60)
    racked = [members for name, members in groups if name.startswith("rack ")]
    in_racks = sum(len(members) for members in racked)
    if in_racks == total:
        label = words["summary_racks"] % (total, len(racked))
    elif not racked:
        label = words["summary_loose"] % total
    else:
        label = words["summary"] % (total, in_racks, len(racked), total - in_racks)
    out = ['<svg class="overview" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s" %s font-size="11">'
           % (WIDTH, height, WIDTH, height, _e(label), FONT), "<title>%s</title>" % _e(label)]
    out.append('<text class="label summary" x="0" y="14" font-size="13">%s</text>' % _e(label))
    x = 0
    legend_x = WIDTH - 5 * 108
    for status in ORDER:
        out.append('<rect x="%d" y="4" width="12" height="12" fill="%s"/>' % (legend_x + x, STATUS_COLOURS[status]))
        out.append('<text class="label legend" x="%d" y="14">%s</text>' % (legend_x + x + 16, _e(words.get(status, status))))
        x += 108
    out.extend(body)
    out.append("</svg>")
    return "".join(out)
