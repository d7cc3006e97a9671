# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The status overview picture at 8, 64, 1,000 and 4,000 nodes: grouped by rack, the nodes that did not pass named,
checked as data and in headless Chromium (sizes, every label inside its tile, no two labels overlapping), with a
screenshot of each size kept as a test artefact (reports/out/test-artefacts/, or $ZHISUAN_TEST_ARTEFACTS)."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.plugin_utils import _report, _svg_overview
from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import build_results, host_record

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
ARTEFACTS = os.environ.get("ZHISUAN_TEST_ARTEFACTS") or os.path.join(REPO, "reports", "out", "test-artefacts")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run", "--hide-scrollbars"]
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt chromium fonts-dejavu-core)")


def fleet(nodes, rack_size=32):
    """``nodes`` hosts with 3 checks each; racks of ``rack_size`` from 64 nodes up (none below). Every 37th node fails
    its ECC check, every 53rd warns on temperature, every 101st is unreachable."""
    hosts = {}
    for i in range(1, nodes + 1):
        name = "node%04d" % i
        if i % 101 == 0:
            hosts[name] = host_record(name, [], unreachable=True, message="Failed to connect to the host via ssh")
        else:
            ecc = "fail" if i % 37 == 0 else "pass"
            temp = "warn" if i % 53 == 0 else "pass"
            checks = [make_check("gpu.ecc.volatile_uncorrectable", name, ecc, component="GPU 3", observed=0 if ecc == "pass" else 2,
                                 expected="== 0", message="ECC", remedy="none" if ecc == "pass" else "reset_gpu"),
                      make_check("gpu.temperature.gpu", name, temp, component="GPU 1", observed=70, expected="< 83",
                                 message="temperature", remedy="none" if temp == "pass" else "monitor"),
                      make_check("xid.events.recent", name, "pass", component="node", observed=0, expected="== 0",
                                 message="no XID", remedy="none")]
            hosts[name] = host_record(name, checks, facts={})
        if nodes >= 64:
            hosts[name]["facts"]["location"] = {"rack": "R%02d" % ((i - 1) // rack_size + 1), "u": (i - 1) % rack_size + 1}
    run = {"id": "overview-%d" % nodes, "kind": "acceptance", "started": "2026-12-01T08:00:00+00:00",
           "finished": "2026-12-01T09:00:00+00:00", "playbook": "playbooks/acceptance.yml", "collection_version": "0.1.0",
           "ansible_version": "2.19.4", "hosts_total": nodes}
    return build_results(run, hosts)


def not_passing(results):
    return sorted(name for name, record in results["hosts"].items() if record["status"] != "pass")


@pytest.mark.parametrize("nodes, groups", [(8, 1), (64, 2), (1000, 32), (4000, 125)])
def test_overview_groups_by_rack_and_names_what_failed(nodes, groups):
    results = fleet(nodes)
    view = _report.build_view(results)
    svg = ET.fromstring(str(view["grid_svg"]))
    tiles = [g for g in svg.iter("g") if g.get("class") == "tile"]
    assert len(tiles) == groups
    assert sum(int(t.get("data-nodes")) for t in tiles) == nodes
    if nodes >= 64:
        assert tiles[0].get("data-group") == "rack R01"
    else:
        assert tiles[0].get("data-group") == "node0001 \u2013 node0008"
    # every node that did not pass is named in its tile or counted in the tile's "+ n more"
    named = set(t.get("data-host") for t in svg.iter("text") if t.get("data-host"))
    more = sum(int(re.match(r"\+ (\d+) more", t.text).group(1)) for t in svg.iter("text") if (t.get("class") or "").endswith("more"))
    assert named <= set(not_passing(results)) and len(named) + more == len(not_passing(results))
    # one mark per status and rack, not one per node: the picture's size follows the racks
    assert len([r for r in svg.iter("rect") if r.get("class") == "bar"]) <= groups * 5
    assert int(svg.get("width")) == _svg_overview.WIDTH
    assert int(svg.get("height")) <= 40 + math.ceil(groups / 4.0) * (40 + 18 + 5 * 15 + 8 + 12)


def test_overview_tile_counts_and_colours():
    results = fleet(64)
    view = _report.build_view(results)
    svg = ET.fromstring(str(view["grid_svg"]))
    first = [g for g in svg.iter("g") if g.get("class") == "tile"][0]
    texts = [t.text for t in first.iter("text")]
    # rack R01 holds node0001..node0032: node0037 is not there; nothing failed there
    assert texts[:3] == ["rack R01", "32 nodes", "32 pass"] and first.get("data-status") == "pass"
    second = [g for g in svg.iter("g") if g.get("class") == "tile"][1]
    assert second.get("data-status") == "fail"
    lines = [t.text for t in second.iter("text") if t.get("data-host")]
    assert lines == ["node0037  FAIL  gpu", "node0053  WARN  gpu"]
    assert [t.text for t in second.iter("text")][2] == "1 fail, 1 warn, 30 pass"


MEASURE = """<script>
window.addEventListener('load', function () {
  var svg = document.querySelector('figure.grid-picture svg');
  var box = svg.getBoundingClientRect();
  var labels = Array.prototype.slice.call(svg.querySelectorAll('text'));
  var rects = labels.map(function (t) { var r = t.getBoundingClientRect();
    return {x: r.left, y: r.top, r: r.right, b: r.bottom, text: t.textContent,
            size: parseFloat(getComputedStyle(t).fontSize), tile: t.closest('g.tile')}; });
  var overlaps = [], outside = [];
  for (var i = 0; i < rects.length; i++) {
    var a = rects[i];
    if (a.tile) { var tb = a.tile.querySelector('rect.tile-box').getBoundingClientRect();
      if (a.x < tb.left || a.r > tb.right || a.y < tb.top || a.b > tb.bottom) outside.push(a.text); }
    for (var j = i + 1; j < rects.length; j++) { var b = rects[j];
      if (a.x < b.r && b.x < a.r && a.y < b.b && b.y < a.b) overlaps.push([a.text, b.text]); } }
  var tiles = Array.prototype.slice.call(svg.querySelectorAll('g.tile rect.tile-box')).map(function (t) {
    return t.getBoundingClientRect(); });
  var tileOverlaps = 0;
  for (var i = 0; i < tiles.length; i++) for (var j = i + 1; j < tiles.length; j++) {
    var a = tiles[i], b = tiles[j];
    if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) tileOverlaps++; }
  var out = document.createElement('pre'); out.id = 'measure';
  out.textContent = JSON.stringify({width: box.width, height: box.height, page: document.documentElement.scrollWidth,
    labels: rects.length, min_font: Math.min.apply(null, rects.map(function (r) { return r.size; })),
    overlaps: overlaps.slice(0, 5), overlap_count: overlaps.length, outside: outside.slice(0, 5),
    tiles: tiles.length, tile_overlaps: tileOverlaps});
  document.body.appendChild(out);
});
</script>"""


def overview_page(html, path):
    """The report's stylesheet and its overview figure alone (plus the measuring script of this test)."""
    style = re.search(r"<style>.*?</style>", html, re.S).group(0)
    figure = re.search(r'<figure class="grid-picture">.*?</figure>', html, re.S).group(0)
    page = ('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">%s</head><body><section id="grid">%s</section>'
            '%s</body></html>' % (style, figure, MEASURE))
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(page)
    return path


def chromium(tmp_path, page, *args):
    profile = tmp_path / "chromium-profile"
    profile.mkdir(exist_ok=True)
    proc = subprocess.run([CHROMIUM] + FLAGS + ["--user-data-dir=%s" % profile] + list(args) + ["file://%s" % page],
                          capture_output=True, text=True, timeout=180, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


@needs_chromium
@pytest.mark.parametrize("nodes", [8, 64, 1000, 4000])
def test_overview_is_legible_in_chromium(tmp_path, nodes):
    results = fleet(nodes)
    html = _report.render_html(results)
    assert html.count('<figure class="grid-picture">') == 1
    page = overview_page(html, str(tmp_path / ("overview-%d.html" % nodes)))
    dom = chromium(tmp_path, page, "--window-size=1280,900", "--virtual-time-budget=10000", "--dump-dom")
    found = re.search(r'<pre id="measure">(.*?)</pre>', dom, re.S)
    assert found, "the measuring script did not run"
    measured = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))
    groups = len(_svg_overview.rack_groups(_report.build_view(results)["hosts"],
                                           dict((n, (r["facts"].get("location") or {}).get("rack"))
                                                for n, r in results["hosts"].items())))
    assert measured["tiles"] == groups and measured["tile_overlaps"] == 0
    assert measured["overlaps"] == [] and measured["overlap_count"] == 0
    assert measured["outside"] == []
    assert measured["min_font"] >= 11
    assert measured["width"] <= 1240 and measured["page"] <= 1280  # fits the page: no horizontal scrolling
    assert measured["height"] <= 40 + math.ceil(groups / 4.0) * 150
    os.makedirs(ARTEFACTS, exist_ok=True)
    shot = os.path.join(ARTEFACTS, "overview-%d.png" % nodes)
    height = int(min(measured["height"] + 40, 8000))
    chromium(tmp_path, page, "--window-size=1280,%d" % height, "--screenshot=%s" % shot)
    with open(shot, "rb") as handle:
        assert handle.read(8) == b"\x89PNG\r\n\x1a\n"
    assert os.path.getsize(shot) > 10000
    print("overview screenshot (%d nodes): %s" % (nodes, shot))


# ---------------------------------------------------------------------------------------------------------------
# the rack elevation (U-position map) and the topology (nodes -> leaf switches) of the delivery guide §6.2


def test_rack_elevation_places_each_server_at_its_u():
    results = fleet(64)
    view = _report.build_view(results)
    elevation = view["elevation"]
    assert (elevation["racks"], elevation["shown"], elevation["hidden"]) == (2, 2, 0)
    svg = ET.fromstring(str(elevation["svg"]))
    servers = dict((r.get("data-host"), r) for r in svg.iter("rect") if r.get("class") == "server")
    assert len(servers) == 64
    # node0037 is in rack R02 at U5 (32 per rack), failed: red, and drawn 5 U above the rack's floor
    node = servers["node0037"]
    assert node.get("data-u") == "5" and node.get("fill") == "#b3261e"
    rack_top = [r for r in svg.iter("rect") if r.get("stroke") == "#5f6368"][1]  # the second rack's 42U column
    assert int(node.get("y")) == int(rack_top.get("y")) + (42 - 5) * 12
    html = _report.render_html(results)
    assert '<section id="elevation">' in html and html.count("<svg ") == 2  # the overview and the elevation


def test_a_large_fleet_draws_only_the_racks_with_problems():
    view = _report.build_view(fleet(1000))
    elevation = view["elevation"]
    assert elevation["racks"] == 32 and elevation["shown"] + elevation["hidden"] == 32
    shown = set(g.get("data-rack") for g in ET.fromstring(str(elevation["svg"])).iter("g") if g.get("class") == "rack")
    assert "R01" not in shown and "R02" in shown  # R01 all passed; R02 holds node0037
    assert _report.build_view(fleet(8))["elevation"] is None  # no rack positions, no picture


def test_topology_groups_links_by_leaf_and_names_the_miswired():
    results = fleet(8)
    links = [{"node": "node%04d" % i, "port": "eth%d" % p, "switch": "leaf%02d" % (1 + i // 5), "switch_port": "swp%d" % (i * 2 + p),
              "status": "ok", "observed": "leaf ok"} for i in range(1, 9) for p in (0, 1)]
    links[3].update(status="miswired", switch_port="swp9")
    results["cluster"]["fabric"] = {"cabling": {"links": links}}
    view = _report.build_view(results)
    assert [(t["leaf"], t["nodes"], t["links"], t["bad_count"]) for t in view["topology"]] == [
        ("leaf01", 4, 8, 1), ("leaf02", 4, 8, 0)]
    assert view["topology"][0]["bad"] == [{"node": "node0002", "port": "eth1", "switch_port": "swp9", "status": "miswired",
                                           "observed": "leaf ok"}]
    html = _report.render_html(results)
    assert '<div class="leaf leaf-bad" data-leaf="leaf01">' in html and '<li data-node="node0002">' in html
    md = _report.render_markdown(results)
    assert "| leaf01 | 4 | 8 | node0002 eth1 → swp9: miswired |" in md
    zh = _report.render_html(results, language="zh_CN")
    assert "<h2>\u96c6\u7fa4\u62d3\u6251\u56fe</h2>" in zh  # 集群拓扑图, the delivery guide's name


@needs_chromium
def test_rack_elevation_is_legible_in_chromium(tmp_path):
    html = _report.render_html(fleet(64))
    style = re.search(r"<style>.*?</style>", html, re.S).group(0)
    figure = re.search(r'<figure class="elevation-picture">.*?</figure>', html, re.S).group(0)
    script = MEASURE.replace("figure.grid-picture svg", "figure.elevation-picture svg").replace("g.tile", "g.rack") \
        .replace("rect.tile-box", "rect.rack-box")
    page = tmp_path / "elevation.html"
    page.write_text('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">%s</head><body>%s%s</body></html>'
                    % (style, figure, script), encoding="utf-8")
    dom = chromium(tmp_path, str(page), "--window-size=1280,900", "--virtual-time-budget=10000", "--dump-dom")
    measured = json.loads(re.search(r'<pre id="measure">(.*?)</pre>', dom, re.S).group(1).replace("&quot;", '"')
                          .replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))
    assert measured["tiles"] == 2 and measured["tile_overlaps"] == 0
    assert measured["overlaps"] == [] and measured["outside"] == []
    assert measured["width"] <= 1240 and measured["min_font"] >= 8
    os.makedirs(ARTEFACTS, exist_ok=True)
    shot = os.path.join(ARTEFACTS, "elevation-64.png")
    chromium(tmp_path, str(page), "--window-size=1280,%d" % int(measured["height"] + 40), "--screenshot=%s" % shot)
    assert os.path.getsize(shot) > 5000
