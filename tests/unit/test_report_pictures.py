# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The report's pictures (plugin_utils/_svg.py), data sections (_report_sections.py), the JSON format and the
history option of the report action."""

from __future__ import annotations

import json
import os
import re
import xml.etree.ElementTree as ET
from types import SimpleNamespace
from unittest.mock import MagicMock

import jsonschema
import pytest

from ansible_collections.zhisuan.ops.plugins.action.report import ActionModule
from ansible_collections.zhisuan.ops.plugins.module_utils._remediate import history as remediation_history
from ansible_collections.zhisuan.ops.plugins.plugin_utils import _report, _svg

from report_samples import RDMA_GBPS, nccl_points, rich_results
from test_report import parse_html

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
TEMPLATES = os.path.join(REPO, "collections", "ansible_collections", "zhisuan", "ops", "data", "templates")
SCHEMA_PATH = os.path.join(REPO, "collections", "ansible_collections", "zhisuan", "ops", "data", "schema", "results-v1.json")


def svg_tree(text):
    """The SVG as XML (it is well-formed), with the SVG namespace the HTML parser would give it."""
    return ET.fromstring(text.replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1))


NS = "{http://www.w3.org/2000/svg}"


def test_samples_are_valid_results():
    with open(SCHEMA_PATH, encoding="utf-8") as handle:
        jsonschema.validate(rich_results(), json.load(handle))


def test_nccl_points_are_the_real_capture():
    points = nccl_points()
    assert (points[0]["bytes"], points[-1]["bytes"], points[-1]["busbw"], len(points)) == (4, 8589934592, 235.26, 32)


def test_nccl_curve_log2_axis_and_floor():
    series = [{"label": "cluster", "points": [(p["bytes"], p["busbw"]) for p in nccl_points()]},
              {"label": "node<06>", "points": [(8, 0.0), (1024, 0.05), (8589934592, 188.2)]}]
    text = _svg.nccl_curve_svg(series, floor=200.0, unit="GB/s", judged_bytes=8589934592)
    root = svg_tree(text)
    lines = root.findall(NS + "polyline")
    assert len(lines) == 2
    xs = [float(pt.split(",")[0]) for pt in lines[0].get("points").split()]
    # log2: equal steps for each doubling of the message size (4 B .. 8 GiB)
    steps = set(round(b - a, 1) for a, b in zip(xs, xs[1:]))
    assert len(steps) == 1
    floor = root.find(NS + "line[@class='floor']")
    assert floor.find(NS + "title").text == "floor 200.0 GB/s"
    labels = [t.text for t in root.iter(NS + "text")]
    # a tick every 2^5: 32B, 1K, 32K, 1M, 32M, 1G
    assert [label for label in labels if label[-1] in "BKMG"] == ["32B", "1K", "32K", "1M", "32M", "1G"]
    assert "message size (log2)" in labels
    assert "node&lt;06&gt;" in text and "node<06>" not in text
    assert "no data points" in _svg.nccl_curve_svg([{"label": "x", "points": []}])


def test_heatmap_colours_by_value_against_the_floor():
    pairs = [{"a": "n1", "b": "n2", "value": 190.0}, {"a": "n1", "b": "n3", "value": 170.0},
             {"a": "n2", "b": "n3", "value": 100.0}, {"a": "n2", "b": "n3", "value": 150.0}]
    root = svg_tree(_svg.heatmap_svg(["n1", "n2", "n3"], pairs, floor=180.0))
    cells = dict(((r.get("data-a"), r.get("data-b")), (r.get("fill"), r.get("class"), r.find(NS + "title").text))
                 for r in root.iter(NS + "rect") if r.get("data-a"))
    assert cells[("n1", "n2")] == ("#1e7b34", "pair", "n1 -> n2: 190 Gb/s")
    assert cells[("n1", "n3")][0] == "#e0a800"   # 94 % of the floor
    assert cells[("n2", "n3")][0] == "#b3261e"   # the lowest of two measurements: 100
    assert cells[("n3", "n2")] == ("#b3261e", "pair mirror", "n3 -> n2: 100 Gb/s (measured n2 -> n3)")
    legend = [t.text for t in root.iter(NS + "text")]
    assert ">= floor" in legend and "more than 10 % below floor" in legend and "no value" in legend
    assert _svg.ratio_colour(None, 180) == _svg.NO_VALUE and _svg.ratio_colour(5, None) == _svg.NO_VALUE


def test_trace_and_grid():
    trace = [{"t": 0, "temp_max_c": 30, "sm_clock_min_mhz": 1410}, {"t": 1, "temp_max_c": 88, "sm_clock_min_mhz": None},
             {"t": 2, "temp_max_c": 60, "sm_clock_min_mhz": 1400}]
    root = svg_tree(_svg.trace_svg([("node01", trace), ("node03", trace)], highlight=["node03"]))
    lines = root.findall(NS + "polyline")
    assert [(line.find(NS + "title").text, line.get("stroke")) for line in lines] == [
        ("node01", "#1a73e8"), ("node03", "#b3261e"), ("node01", "#1a73e8"), ("node03", "#b3261e")]
    assert len(lines[2].get("points").split()) == 2  # the missing clock reading is left out
    grid = svg_tree(_svg.status_grid_svg([("a", "fail", {"gpu": "fail"}), ("b", "unreachable", {})], ["gpu", "xid"]))
    fills = [(r.get("data-host"), r.get("data-family"), r.get("fill")) for r in grid.iter(NS + "rect")]
    assert fills == [("a", "gpu", "#b3261e"), ("a", "xid", "#eeeeee"), ("b", "gpu", "#3c4043"), ("b", "xid", "#3c4043")]


def test_human_bytes():
    assert [_svg.human_bytes(v) for v in (8, 1024, 1536, 2 ** 33)] == ["8B", "1K", "1.5K", "8G"]


def test_rich_report_sections():
    view = _report.build_view(rich_results(), history=[])
    assert view["gpu_data"]["rows"][0]["cells"][:3] == ["NVIDIA A100-SXM4-80GB", "8", "535.54.03"]
    rdma = view["network"]["rdma"]
    assert (rdma["nodes"], rdma["pairs"], rdma["floor"]) == (7, 21, 180.0)
    assert [(p["a"], p["b"]) for p in rdma["below"]][:2] == [("node01", "node05"), ("node02", "node05")]
    assert [c["scope"] for c in view["network"]["nccl"]] == ["cluster", "per node"]
    per_node = view["network"]["nccl"][1]["rows"]
    assert [(r["scope"], r["busbw"], r["below"]) for r in per_node if r["scope"] in ("node05", "node06")] == [
        ("node05", "235.26", False), ("node06", "188.21", True)]
    assert (view["network"]["cabling"]["total"], view["network"]["cabling"]["bad"]) == (14, 1)
    assert view["network"]["cabling"]["links"][0]["observed"] == "leaf02 swp7"  # problems first
    tables = view["network"]["facts"]
    assert [(t["label"], t["item_label"]) for t in tables] == [("nic interfaces", "interface"), ("nic", None), ("rdma", None)]
    assert tables[0]["columns"][:3] == ["link", "speed_mbps", "mtu"]
    assert (tables[0]["rows"][1]["host"], tables[0]["rows"][1]["item"], tables[0]["rows"][1]["cells"][:3]) == (
        "node01", "eth1", ["true", "400000", "9000"])
    assert tables[2]["rows"][0]["cells"] == ["2", "2", "2", "400", "28.39.1002", "\u2014"]
    # storage: the real fio capture on 7 nodes at once (seq_read 1008.928 MiB/s each)
    storage = view["storage"]
    assert ("read bw mib", "7062.496") in storage["aggregate"] and ("read bw job", "seq_read") in storage["aggregate"]
    assert [(r["item"], r["cells"][:2]) for r in storage["jobs"]["rows"]] == [
        ("rand_write", ["randwrite", "7"]), ("seq_read", ["read", "7"])]
    jobs = storage["tables"][0]
    assert (jobs["label"], jobs["item_label"], jobs["columns"]) == ("storage jobs", "fio job",
                                                                    ["rw", "bs", "bw_mib", "iops", "lat_us", "errors"])
    assert jobs["rows"][1]["cells"][:4] == ["read", "1M", "1008.928", "1008.929"]
    assert jobs["rows"][1]["cells"][4] == '{"p50": 8028.16, "p99": 11862.016, "p999": 14221.312}'
    assert [(r["host"], r["failed"]) for r in view["stability"]["rows"]][2] == ("node03", True)
    assert view["remediation"] == [{"host": "node03", "action": "reset_gpu", "why": "gpu.ecc.volatile_uncorrectable on GPU 3",
                                    "outcome": "planned", "mode": "check"}]
    assert view["changes"] is None and view["kpis"]["runs"] == 1
    assert round(RDMA_GBPS, 2) == 192.45


def test_sections_without_data_are_omitted():
    results = rich_results()
    for record in results["hosts"].values():
        record["facts"] = {}
    results["cluster"] = {"checks": []}
    view = _report.build_view(results)
    assert [view[k] for k in ("gpu_data", "network", "storage", "stability", "remediation", "changes", "outliers",
                              "kpis")] == [None] * 8
    html = _report.render_html(results, TEMPLATES, view)
    for section in ("gpu-data", "network", "storage", "stability", "remediation", "changes", "fleet", "kpis"):
        assert 'id="%s"' % section not in html and 'href="#%s"' % section not in html
    md = _report.render_markdown(results, TEMPLATES, view)
    for heading in ("## GPU test data", "## Network test data", "## Storage test data", "## Stability records",
                    "## Remediation", "## Changes since", "## KPIs", "## Fleet comparison"):
        assert heading not in md


def test_rich_html_has_pictures_and_escapes():
    results = rich_results()
    html = _report.render_html(results, TEMPLATES)
    parse_html(html)  # every element closed, none closed twice
    for section in ("gpu-data", "network", "storage", "stability", "remediation", "fleet", "grid"):
        assert '<section id="%s"' % section in html
    assert html.count("<svg ") == 5  # grid, heatmap, two NCCL charts, burn trace
    assert '<section id="verdict" class="verdict not_accepted" data-grade="fail">' in html
    assert "<b>check cooling</b>" not in html and "&lt;b&gt;check cooling&lt;/b&gt;" in html
    for needle in ("<script", "http://", "https://", "<link", "<img", "url("):
        assert needle not in html, needle
    # an escaped host name cannot break out of the SVG either
    results["hosts"]["node<x>"] = results["hosts"].pop("node07")
    html = _report.render_html(results, TEMPLATES)
    assert "node<x>" not in html and "node&lt;x&gt;" in html


def test_conditional_verdict_from_fleet_outliers():
    results = rich_results(nodes=6)  # node03 fails; make every host pass, keep node05 and node06 slow
    results["cluster"]["checks"][0]["status"] = "pass"
    results["cluster"]["checks"][0]["remedy"] = "none"
    for record in results["hosts"].values():
        for item in record["checks"]:
            item["status"], item["remedy"] = "pass", "none"
        record["status"] = "pass"
    view = _report.build_view(results)
    assert (view["verdict"]["grade"], view["verdict"]["text"]) == ("conditional", "ACCEPTED WITH CONDITIONS")
    assert view["verdict"]["detail"] == "all 6 hosts passed; 2 measurements below the fleet"


def test_markdown_sections():
    md = _report.render_markdown(rich_results(), TEMPLATES)
    assert "| node06 | NCCL all_reduce_perf busbw (GB/s) | 188.21 | 235.26 | 20.0 % |" in md
    assert "| node03 | `reset_gpu` | gpu.ecc.volatile_uncorrectable on GPU 3 | planned | check |" in md
    assert "| node06 | 1 | 8G | 188.21 ⚠ | 188.21 | 200 | 0 |" in md
    assert "| node03 | 5 | 90 | 0 lost of 8 | — | — |" in md
    assert "<svg" not in md


def test_json_format():
    results = rich_results()
    document = json.loads(_report.render_json(results))
    assert document["schema"] == "zhisuan.ops/report/v1"
    assert document["verdict"]["grade"] == "fail"
    assert document["host_status"]["node08"] == "unreachable"
    assert [(i["host"], i["id"]) for i in document["issues"]][:2] == [
        ("node03", "burn.stability.temperature"), ("node03", "gpu.ecc.volatile_uncorrectable")]
    assert [o["host"] for o in document["outliers"]] == ["node05", "node06"]
    assert document["results_sha256"] == _report.results_digest(results)
    assert _report.render_json(results) == _report.render_json(json.loads(json.dumps(results)))


def run_action(args, check_mode=False):
    task = SimpleNamespace(args=args, check_mode=check_mode, async_val=0, action="zhisuan.ops.report")
    connection = MagicMock()
    connection._shell.tmpdir = "/nonexistent"
    # the sixth argument (shared_loader_obj) is required by ansible-core 2.16, optional since 2.17
    action = ActionModule(task, connection, MagicMock(), MagicMock(), MagicMock(), MagicMock())
    return action.run(task_vars={})


def test_action_keeps_history_and_compares(tmp_path):
    history_dir = tmp_path / "history"
    first = rich_results(run_id="r1", started="2026-11-30T20:00:00+00:00")
    second = rich_results(run_id="r2", started="2026-11-30T22:00:00+00:00")
    second["hosts"]["node03"]["checks"][1]["status"] = "pass"  # the ECC fault is repaired
    second["hosts"]["node03"]["checks"][1]["remedy"] = "none"
    second["hosts"]["node02"]["checks"][0].update(status="fail", observed=7, remedy="reseat", message="7 of 8 GPUs")
    second["hosts"]["node02"]["status"] = "fail"
    (history_dir).mkdir()
    # the remediation log as remediate.yml writes it (zhisuan.ops.remediation_history: one record per action)
    remediation_history.append(str(history_dir), [remediation_history.make_record(
        {"time": "2026-11-30T21:00:00+00:00", "run_id": "rem", "node": "node03", "cause": "gpu.ecc.volatile_uncorrectable",
         "action": "reset_gpu", "outcome": "repaired", "detected": "2026-11-30T20:00:00+00:00",
         "started": "2026-11-30T20:30:00+00:00", "resumed": "2026-11-30T21:00:00+00:00"})])
    for doc in (first, second):
        folder = tmp_path / doc["run"]["id"]
        folder.mkdir()
        (folder / "results.json").write_text(json.dumps(doc), encoding="utf-8")
        out = run_action({"src": str(folder / "results.json"), "template_dir": TEMPLATES, "history_dir": str(history_dir)})
    assert sorted(os.listdir(history_dir)) == ["index", "r1.json", "r2.json", "remediation.jsonl"]
    assert sorted(os.listdir(history_dir / "index")) == ["r1.json", "r2.json"]  # the slim index beside the runs
    assert out["history"] == {"dir": str(history_dir), "runs": 2, "kept": str(history_dir / "r2.json"),
                              "previous": {"id": "r1", "kind": "acceptance", "started": "2026-11-30T20:00:00+00:00"}}
    assert out["summary"]["changes"] == {"new": 1, "fixed": 1, "persisting": 3, "unchecked": 0}
    html = (tmp_path / "r2" / "report.html").read_text(encoding="utf-8")
    changes = html[html.index('<section id="changes">'):html.index('<section id="fleet">')]
    assert re.findall(r'data-change="(\w+)" data-host="([^"]+)" data-check="([^"]+)"', changes) == [
        ("new", "node02", "gpu.count.present"),
        ("persisting", "node03", "burn.stability.temperature"), ("persisting", "node08", "host.reachable"),
        ("persisting", "cluster", "rdma.bandwidth.pairs"),
        ("fixed", "node03", "gpu.ecc.volatile_uncorrectable")]
    kpis = html[html.index('<section id="kpis">'):]
    assert '<td data-kpi="faults">' in kpis and "remediation: reset_gpu (repaired)" in kpis
    report = json.loads((tmp_path / "r2" / "report.json").read_text(encoding="utf-8"))
    assert [(i["host"], i["id"]) for i in report["changes"]["fixed"]] == [("node03", "gpu.ecc.volatile_uncorrectable")]
    assert report["kpis"]["runs"] == 2 and "episodes" not in report["kpis"]
    # re-rendering the same run changes nothing, and check mode keeps nothing
    again = run_action({"src": str(tmp_path / "r2" / "results.json"), "template_dir": TEMPLATES,
                        "history_dir": str(history_dir)})
    assert again["changed"] is False
    third = tmp_path / "r3.json"
    third.write_text(json.dumps(rich_results(run_id="r3", started="2026-11-30T23:00:00+00:00")), encoding="utf-8")
    checked = run_action({"src": str(third), "dest": str(tmp_path / "r3"), "template_dir": TEMPLATES,
                          "history_dir": str(history_dir)}, check_mode=True)
    assert checked["history"]["kept"] is None and checked["history"]["previous"]["id"] == "r2"
    assert not (history_dir / "r3.json").exists() and not (tmp_path / "r3").exists()


@pytest.mark.parametrize("nodes", [1, 2])
def test_small_clusters_render(nodes):
    html = _report.render_html(rich_results(nodes=nodes), TEMPLATES)
    assert "<svg " in html


def test_large_fleets_keep_the_pictures_bounded():
    nodes = ["n%03d" % i for i in range(200)]
    pairs = [{"a": nodes[i], "b": nodes[j], "value": 190.0} for i in range(200) for j in range(i + 1, 200)]
    pairs[5]["value"] = 90.0  # n000 -> n006: far below the floor
    root = svg_tree(_svg.heatmap_svg(nodes, pairs, floor=180.0))
    cells = [r for r in root.iter(NS + "rect") if r.get("data-a")]
    # 200 nodes in blocks of 3: 67 x 67 block pairs, every one measured (the diagonal blocks by their inner pairs)
    assert len(cells) == 67 * 67 and all(c.get("class") == "pair block" for c in cells)
    first = [c for c in cells if c.get("data-a") == "n000..n002" and c.get("data-b") == "n006..n008"][0]
    assert first.get("fill") == "#b3261e" and first.find(NS + "title").text == "n000..n002 -> n006..n008: 90 Gb/s (lowest of 9 pairs)"
    assert "blocks of nodes, lowest pair" in "".join(t.text or "" for t in root.iter(NS + "text"))
    series = [{"label": "node%03d" % i, "points": [(8, 0.1), (1024, 1.0)]} for i in range(30)]
    chart = svg_tree(_svg.nccl_curve_svg(series, floor=1.0))
    assert len(chart.findall(NS + "polyline")) == 30 and chart.findall(NS + "circle") == []
    assert chart.find(NS + "text[@class='more']").text == "+ 18 more"


def test_markdown_changes_and_kpis():
    previous = rich_results(run_id="r0", started="2026-11-30T20:00:00+00:00")
    previous["hosts"]["node02"]["checks"][0].update(status="fail", observed=7, remedy="reseat", message="7 of 8 GPUs")
    previous["hosts"]["node02"]["status"] = "fail"
    current = rich_results()
    md = _report.render_markdown(current, TEMPLATES, _report.build_view(current, history=[previous, current]))
    changes = md.split("## Changes since the previous run\n", 1)[1].split("\n## ", 1)[0]
    assert "Compared with run `r0` (acceptance, started 2026-11-30T20:00:00+00:00): **0** new, **1** fixed, **4** persisting." in changes
    assert "### Fixed since the previous run" in changes and "### New failures" not in changes
    assert "| **FAIL** | node02 | `gpu.count.present` | node | 7 of 8 GPUs | `reseat` |" in changes
    kpis = md.split("## KPIs\n", 1)[1].split("\n## ", 1)[0]
    # 2 h between the runs, credited to the first: node02's 8 GPUs (a node-level gpu failure) and node03's GPU 3
    # and GPU 6 unhealthy of 7 x 8 GPUs (node08 never reported a GPU count): 46 / 56
    assert "| Cluster GPU availability | 82.14 % (time-weighted) |" in kpis
    # MTBF: 8 hosts x 2 h, less the 2 h of the episode, per fault
    assert "| `gpu.count` | 1 | 0 | 1 | 2 | 14 |" in kpis and "| Faults | 4 (3 open) |" in kpis
    assert "| node02 | `gpu.count` | 2026-11-30T20:00:00+00:00 | 2026-11-30T22:00:00+00:00 | 2 | runs |" in kpis
