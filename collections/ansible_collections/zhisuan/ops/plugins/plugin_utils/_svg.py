# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""The report's pictures as inline SVG: pure functions from plain data to one ``<svg>`` element (a str), for inline
use in HTML (no xmlns attribute: the HTML parser puts it in the SVG namespace).

No scripts, no external references, every text escaped; each picture carries a ``<title>`` and ``role="img"`` with
an ``aria-label``, and every mark its own ``<title>`` (a tooltip in a browser). Deterministic: the same data gives
the same markup. The report marks the returned text safe (Markup) and inlines it.
"""

from __future__ import annotations

import math
from html import escape

STATUS_COLOURS = {
    "pass": "#1e7b34", "warn": "#e0a800", "fail": "#b3261e", "error": "#6a2c91", "skip": "#9aa0a6",
    "unreachable": "#3c4043", "none": "#eeeeee",
}
# value / floor -> colour for the pair heatmap: at or above the floor, within 10 % of it, further below, no value
RATIO_BANDS = ((1.0, "#1e7b34", ">= floor"), (0.9, "#e0a800", "within 10 % below floor"),
               (0.0, "#b3261e", "more than 10 % below floor"))
NO_VALUE = "#d0d3d6"
SERIES_COLOURS = ("#1a73e8", "#e8710a", "#12b5cb", "#9334e6", "#188038", "#d01884", "#5f6368", "#f9ab00")
FONT = 'font-family="DejaVu Sans, Arial, sans-serif"'
MAX_LEGEND = 12  # series named in a chart's legend (a per-node chart of a large fleet names the first ones)
MAX_POINTS_SERIES = 8  # up to this many series, every point is also a dot with its own tooltip


def _e(text):
    return escape("" if text is None else str(text), quote=True)


def _n(value):
    """A coordinate: one decimal, no trailing zero."""
    text = "%.1f" % value
    return text[:-2] if text.endswith(".0") else text


def _open(width, height, label):
    return ['<svg width="%d" height="%d" viewBox="0 0 %d %d" role="img" '
            'aria-label="%s" %s font-size="11">' % (width, height, width, height, _e(label), FONT),
            "<title>%s</title>" % _e(label)]


def human_bytes(size):
    """8 -> 8B, 1024 -> 1K, 8589934592 -> 8G (powers of 1024, as nccl-tests sizes are)."""
    for unit in ("", "K", "M", "G", "T"):
        if size < 1024 or unit == "T":
            return ("%d%s" if float(size).is_integer() else "%.1f%s") % (size, unit or "B")
        size /= 1024.0
    return str(size)  # pragma: no cover


def _nice_max(value):
    """A round axis top above ``value``."""
    if value <= 0:
        return 1.0
    exp = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if step * exp >= value:
            return step * exp
    return 10 * exp  # pragma: no cover


def status_grid_svg(hosts, families, cell=12):
    """The node x family status grid as one picture: ``hosts`` is [(name, host status, {family: status})]."""
    label_w = max([len(str(name)) for name, _s, _c in hosts] + [4]) * 7 + 10
    top = max([len(str(f)) for f in families] + [4]) * 6 + 12
    width = label_w + cell * max(len(families), 1) + 60
    height = top + cell * max(len(hosts), 1) + 10
    out = _open(width, height, "Node by family status grid: %d hosts, %d families" % (len(hosts), len(families)))
    for col, family in enumerate(families):
        x = label_w + col * cell + cell / 2.0
        out.append('<text x="%s" y="%d" transform="rotate(-60 %s %d)" class="fam">%s</text>'
                   % (_n(x), top - 4, _n(x), top - 4, _e(family)))
    for row, (name, status, cells) in enumerate(hosts):
        y = top + row * cell
        out.append('<text x="%d" y="%s" text-anchor="end">%s</text>' % (label_w - 4, _n(y + cell - 2), _e(name)))
        for col, family in enumerate(families):
            value = "unreachable" if status == "unreachable" else cells.get(family) or "none"
            out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="%s" stroke="#fff" data-host="%s" '
                       'data-family="%s"><title>%s %s: %s</title></rect>'
                       % (label_w + col * cell, y, cell, cell, STATUS_COLOURS.get(value, STATUS_COLOURS["none"]),
                          _e(name), _e(family), _e(name), _e(family), _e(value)))
    out.append("</svg>")
    return "".join(out)


def nccl_curve_svg(series, floor=None, unit="GB/s", judged_bytes=None, width=640, height=320):
    """Bus bandwidth against message size (log2 x axis), one line per series, the floor as a dashed line.

    ``series`` is [{"label": str, "points": [(bytes, busbw), ...]}]; points with a size <= 0 are left out."""
    left, right, top, bottom = 56, 150, 24, 40
    plot_w, plot_h = width - left - right, height - top - bottom
    points = [(b, v) for s in series for b, v in s["points"] if b and b > 0 and v is not None]
    out = _open(width, height, "NCCL bus bandwidth (%s) by message size%s" % (
        unit, "; floor %s %s" % (floor, unit) if floor is not None else ""))
    if not points:
        out.append('<text x="%d" y="%d">no data points</text></svg>' % (left, top + 20))
        return "".join(out)
    lo = math.floor(math.log2(min(b for b, _v in points)))
    hi = math.ceil(math.log2(max(b for b, _v in points)))
    hi = hi if hi > lo else lo + 1
    ymax = _nice_max(max([v for _b, v in points] + [floor or 0]) * 1.05)

    def px(size):
        return left + (math.log2(size) - lo) / (hi - lo) * plot_w

    def py(value):
        return top + plot_h - value / ymax * plot_h

    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="#fff" stroke="#c9cdd2"/>' % (left, top, plot_w, plot_h))
    for i in range(6):
        value = ymax * i / 5
        out.append('<line x1="%d" x2="%d" y1="%s" y2="%s" stroke="#eceff1"/><text x="%d" y="%s" text-anchor="end">'
                   '%s</text>' % (left, left + plot_w, _n(py(value)), _n(py(value)), left - 4, _n(py(value) + 4),
                                  _e(("%g" % round(value, 1)))))
    # a tick every 2^step, on multiples of step (1K, 1M, 1G are 2^10, 2^20, 2^30), at most about ten of them
    step = next((size for size in (1, 2, 5, 10) if size * 10 >= hi - lo), 10 * int(math.ceil((hi - lo) / 100.0)))
    for power in range(int(math.ceil(lo / float(step)) * step), int(hi) + 1, step):
        x = px(2 ** power)
        out.append('<line x1="%s" x2="%s" y1="%d" y2="%d" stroke="#c9cdd2"/><text x="%s" y="%d" text-anchor="middle">%s'
                   '</text>' % (_n(x), _n(x), top + plot_h, top + plot_h + 4, _n(x), top + plot_h + 16,
                                _e(human_bytes(2 ** power))))
    out.append('<text x="%s" y="%d" text-anchor="middle">message size (log2)</text>' % (_n(left + plot_w / 2.0), height - 6))
    out.append('<text x="12" y="%s" transform="rotate(-90 12 %s)" text-anchor="middle">busbw %s</text>'
               % (_n(top + plot_h / 2.0), _n(top + plot_h / 2.0), _e(unit)))
    if floor is not None:
        out.append('<line x1="%d" x2="%d" y1="%s" y2="%s" stroke="#b3261e" stroke-dasharray="6 4" class="floor">'
                   '<title>floor %s %s</title></line>' % (left, left + plot_w, _n(py(floor)), _n(py(floor)),
                                                          _e(floor), _e(unit)))
    if judged_bytes:
        x = px(judged_bytes)
        out.append('<line x1="%s" x2="%s" y1="%d" y2="%d" stroke="#5f6368" stroke-dasharray="2 3"><title>judged at %s'
                   '</title></line>' % (_n(x), _n(x), top, top + plot_h, _e(human_bytes(judged_bytes))))
    legend_y = top + 10
    for index, item in enumerate(series):
        colour = SERIES_COLOURS[index % len(SERIES_COLOURS)]
        pts = sorted((b, v) for b, v in item["points"] if b and b > 0 and v is not None)
        if pts:
            out.append('<polyline class="series" fill="none" stroke="%s" stroke-width="%s" points="%s"><title>%s'
                       '</title></polyline>' % (colour, 2 if len(series) <= MAX_LEGEND else 1,
                                                " ".join("%s,%s" % (_n(px(b)), _n(py(v))) for b, v in pts),
                                                _e(item["label"])))
            for b, v in pts if len(series) <= MAX_POINTS_SERIES else ():
                out.append('<circle cx="%s" cy="%s" r="2.5" fill="%s"><title>%s: %s %s at %s</title></circle>'
                           % (_n(px(b)), _n(py(v)), colour, _e(item["label"]), _e("%g" % v), _e(unit),
                              _e(human_bytes(b))))
        if index < MAX_LEGEND:
            out.append('<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text x="%d" y="%d">%s</text>'
                       % (left + plot_w + 10, legend_y - 9, colour, left + plot_w + 24, legend_y, _e(item["label"][:22])))
            legend_y += 16
    if len(series) > MAX_LEGEND:
        out.append('<text x="%d" y="%d" class="more">+ %d more</text>' % (left + plot_w + 10, legend_y,
                                                                          len(series) - MAX_LEGEND))
        legend_y += 16
    if floor is not None:
        out.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#b3261e" stroke-dasharray="6 4"/><text x="%d" y="%d">'
                   'floor %s</text>' % (left + plot_w + 10, left + plot_w + 20, legend_y - 4, legend_y - 4,
                                        left + plot_w + 24, legend_y, _e(floor)))
    out.append("</svg>")
    return "".join(out)


def ratio_colour(value, floor):
    if value is None or not floor:
        return NO_VALUE
    ratio = value / float(floor)
    for limit, colour, _text in RATIO_BANDS:
        if ratio >= limit:
            return colour
    return RATIO_BANDS[-1][1]  # pragma: no cover


MAX_MATRIX = 96  # rows/columns drawn; a larger fleet is drawn in blocks of nodes (each block's lowest pair)


def _pair_values(pairs):
    """{(a, b): lowest value} of the measured pairs."""
    values = {}
    for pair in pairs:
        key = (pair.get("a"), pair.get("b"))
        value = pair.get("value")
        if key not in values or (value is not None and (values[key] is None or value < values[key])):
            values[key] = value
    return values


def _lowest(found):
    numbers = [v for v in found if v is not None]
    return min(numbers) if numbers else None


def _cells(nodes, values):
    """(labels, [(row, col, a, b, value, title suffix, classes)]) for the matrix: one cell per ordered node pair,
    or, past MAX_MATRIX nodes, per ordered pair of node blocks (the block pair's lowest measured value)."""
    if len(nodes) <= MAX_MATRIX:
        cells = []
        for row, a in enumerate(nodes):
            for col, b in enumerate(nodes):
                if a == b:
                    cells.append((row, col, a, b, None, None, "self"))
                elif (a, b) in values:
                    cells.append((row, col, a, b, values[(a, b)], "", "pair"))
                elif (b, a) in values:
                    cells.append((row, col, a, b, values[(b, a)], " (measured %s -> %s)" % (b, a), "pair mirror"))
                else:
                    cells.append((row, col, a, b, None, None, "missing"))
        return list(nodes), cells
    size = int(math.ceil(len(nodes) / float(MAX_MATRIX)))
    blocks = [nodes[i:i + size] for i in range(0, len(nodes), size)]
    where = dict((name, index) for index, block in enumerate(blocks) for name in block)
    found = {}
    for (a, b), value in values.items():
        if a in where and b in where:
            for key in ((where[a], where[b]), (where[b], where[a])):
                found.setdefault(key, []).append(value)
    labels = ["%s..%s" % (block[0], block[-1]) if len(block) > 1 else block[0] for block in blocks]
    cells = []
    for row in range(len(blocks)):
        for col in range(len(blocks)):
            measured = found.get((row, col))
            if not measured:
                cells.append((row, col, labels[row], labels[col], None, None, "missing"))
            else:
                cells.append((row, col, labels[row], labels[col], _lowest(measured),
                              " (lowest of %d pairs)" % len(measured), "pair block"))
    return labels, cells


def heatmap_svg(nodes, pairs, floor=None, unit="Gb/s", cell=18):
    """The RDMA pair matrix: rows are servers (``a``), columns clients (``b``), colour by value against the floor.

    ``pairs`` is [{"a", "b", "value", "status"}]; a pair measured twice keeps its lowest value; a pair measured in
    one direction only also fills the mirrored cell (class ``mirror``, its title says so). Past MAX_MATRIX nodes the
    matrix is drawn by blocks of nodes, each cell the lowest pair between two blocks (class ``block``), so the picture
    stays the same size for 1,000 nodes."""
    labels, cells = _cells(list(nodes), _pair_values(pairs))
    cell = cell if len(labels) <= 48 else 10
    label_w = max([len(str(n)) for n in labels] + [4]) * 7 + 10
    top = label_w
    size = cell * max(len(labels), 1)
    width = label_w + size + 230
    height = max(top + size + 10, top + 110)
    out = _open(width, height, "RDMA pair bandwidth (%s) by server and client; floor %s" % (unit, floor))
    for index, name in enumerate(labels):
        x = label_w + index * cell + cell / 2.0
        out.append('<text x="%s" y="%d" transform="rotate(-90 %s %d)">%s</text>' % (_n(x), top - 4, _n(x), top - 4, _e(name)))
        out.append('<text x="%d" y="%s" text-anchor="end">%s</text>' % (label_w - 4, _n(top + index * cell + cell - 5),
                                                                        _e(name)))
    for row, col, a, b, value, note, kind in cells:
        x, y = label_w + col * cell, top + row * cell
        if kind == "self":
            out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="#fff" stroke="#eceff1"/>' % (x, y, cell, cell))
        elif kind == "missing":
            out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="#f6f8fa" stroke="#fff"><title>%s -&gt; %s: '
                       'not measured</title></rect>' % (x, y, cell, cell, _e(a), _e(b)))
        else:
            out.append('<rect class="%s" x="%d" y="%d" width="%d" height="%d" fill="%s" stroke="#fff" data-a="%s" '
                       'data-b="%s"><title>%s -&gt; %s: %s %s%s</title></rect>'
                       % (kind, x, y, cell, cell, ratio_colour(value, floor), _e(a), _e(b), _e(a), _e(b),
                          _e("%g" % value if value is not None else "no value"), _e(unit), _e(note)))
    lx, ly = label_w + size + 16, top + 4
    out.append('<text x="%d" y="%d" font-weight="bold">value vs floor %s %s</text>' % (lx, ly, _e(floor), _e(unit)))
    for index, (_limit, colour, text) in enumerate(RATIO_BANDS + ((None, NO_VALUE, "no value"),)):
        y = ly + 10 + index * 18
        out.append('<rect class="legend" x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d">%s</text>'
                   % (lx, y, colour, lx + 18, y + 10, _e(text)))
    out.append('<text x="%d" y="%d" fill="#5f6368">rows: server (a), columns: client (b)%s</text>'
               % (lx, ly + 90, "; blocks of nodes, lowest pair" if len(labels) < len(nodes) else ""))
    out.append("</svg>")
    return "".join(out)


def _trace_panel(out, traces, key, label, top, left, plot_w, plot_h, highlight):
    values = [p[key] for _h, trace in traces for p in trace if p.get(key) is not None]
    ts = [p["t"] for _h, trace in traces for p in trace]
    tmax = max(ts + [1])
    vmin = min(values) if values else 0
    vmax = max(values) if values else 1
    pad = max((vmax - vmin) * 0.1, 1)
    lo, hi = max(0, vmin - pad), vmax + pad

    def px(t):
        return left + t / float(tmax) * plot_w

    def py(v):
        return top + plot_h - (v - lo) / (hi - lo) * plot_h

    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="#fff" stroke="#c9cdd2"/>' % (left, top, plot_w, plot_h))
    out.append('<text x="%d" y="%d" font-weight="bold">%s</text>' % (left, top - 6, _e(label)))
    for value in (lo, (lo + hi) / 2.0, hi):
        out.append('<text x="%d" y="%s" text-anchor="end">%s</text>' % (left - 4, _n(py(value) + 4), _e("%g" % round(value))))
    for host, trace in traces:
        pts = [(p["t"], p[key]) for p in trace if p.get(key) is not None]
        if not pts:
            continue
        hot = host in highlight
        out.append('<polyline class="trace" fill="none" stroke="%s" stroke-width="%s" points="%s"><title>%s</title>'
                   '</polyline>' % ("#b3261e" if hot else "#1a73e8", "2" if hot else "1",
                                    " ".join("%s,%s" % (_n(px(t)), _n(py(v))) for t, v in pts), _e(host)))


def trace_svg(traces, highlight=(), width=640, height=330):
    """Burn-in traces: max GPU temperature and min SM clock per sample, one line per host (``traces`` is
    [(host, [{t, temp_max_c, sm_clock_min_mhz}])]); hosts in ``highlight`` (a failed stability check) in red."""
    left, plot_w, plot_h = 56, width - 76, 110
    out = _open(width, height, "Burn-in traces: max GPU temperature and min SM clock per sample, %d hosts" % len(traces))
    _trace_panel(out, traces, "temp_max_c", "max GPU temperature (\u00b0C)", 20, left, plot_w, plot_h, highlight)
    _trace_panel(out, traces, "sm_clock_min_mhz", "min SM clock (MHz)", 170, left, plot_w, plot_h, highlight)
    out.append('<text x="%d" y="%d">sample: 0 = before the burn, last = after it; red = a host whose burn stability '
               'check failed</text>' % (left, height - 10))
    out.append("</svg>")
    return "".join(out)
