# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The report's operations sections (issues 15, 16, 17): the job line, the quality indicators, the platform summary,
the shared causes and the repeat offenders, in HTML and Markdown, English and Chinese, on a results document the
producers built (report_samples.ops_results); none of them in a run without their data."""

from __future__ import annotations

import os
import re

import pytest
from hypothesis import given

from fuzzing import FUZZ, assert_total, json_mutations
from report_samples import ops_results, rich_results
from test_report_browser import chromium, console_messages, needs_chromium, png_size
from test_report_language import ARTEFACTS

from ansible_collections.zhisuan.ops.plugins.plugin_utils import _report
from ansible_collections.zhisuan.ops.plugins.plugin_utils._report_i18n import translations
from ansible_collections.zhisuan.ops.plugins.plugin_utils._report_ops import ops_sections
from ansible_collections.zhisuan.ops.plugins.plugin_utils._report_values import format_value

SECTIONS = ("job", "quality", "platform", "shared-causes", "repeat-offenders")


@pytest.fixture(scope="module")
def results():
    doc = ops_results()
    assert _report.validate_results(doc) == []
    return doc


def test_view_sections_from_the_producers_data(results):
    view = _report.build_view(results)
    assert view["job"]["line"] == ("job 4127 (train) is FAILED: an NCCL timeout; node04 mlx5_4 port 1: rdma.port.state "
                                   "fail (check the cable)")
    assert view["job"]["suspects"] == ["node01", "node04"] and view["job"]["clean"] == ["node01"]
    assert view["job"]["ranks"] == ["0", "1", "2"]
    first = view["job"]["findings"][0]
    assert (first["host"], first["id"], first["component"], first["remedy"]) == (
        "node04", "rdma.port.state", "mlx5_4 port 1", "check_cable")
    quality = dict((q["key"], q) for q in view["quality"])
    assert list(quality) == ["mfu", "effective_training_time", "long_stable_training_time", "task_recovery_time",
                             "cluster_compute_availability"]
    assert quality["mfu"]["value_text"] == "\u2014" and quality["mfu"]["missing"] == "peak_tflops_dense"
    assert quality["effective_training_time"]["extra"] == "20 % of the wall-clock time 5 s; interruptions: 1"
    assert quality["task_recovery_time"]["value_text"] == "4 s" and "each: 4 s" in quality["task_recovery_time"]["extra"]
    assert quality["cluster_compute_availability"]["value_text"] == "25 %"
    assert "usable_gpus=8" in quality["cluster_compute_availability"]["inputs"]
    assert quality["long_stable_training_time"]["definition"].startswith("the longest time one attempt ran")
    assert view["platform"] == [{"kind": "slurm", "name": "Slurm", "states": [("down", "1"), ("drained", "2"), ("idle", "1")],
                                 "nodes": 4, "usable": "8", "installed": "32", "availability": "25 %"}]
    shared = view["shared_causes"]
    assert [(s["component"], s["failing"], s["members"]) for s in shared] == [
        ("leaf leaf03", [("rdma", ["node%02d" % n for n in range(17, 23)])], 8)]
    repeat = view["repeat_offenders"]
    assert [(r["node"], r["tries"], r["escalation"], r["cause"]) for r in repeat["rows"]] == [
        ("node07", "3 x reset_gpu", "power_cycle", "gpu.ecc.volatile_uncorrectable")]
    assert repeat["shared"] == ["node%02d" % n for n in range(17, 23)]


def test_english_html_and_markdown(results):
    html = _report.render_html(results)
    md = _report.render_markdown(results)
    for section in SECTIONS:
        assert '<section id="%s"' % section in html and 'href="#%s"' % section in html
    assert "job 4127 (train) is FAILED: an NCCL timeout; node04 mlx5_4 port 1: rdma.port.state fail (check the cable)" in html
    assert 'data-indicator="task_recovery_time"' in html and "missing: peak_tflops_dense" in html
    assert re.search(r'data-platform="slurm"><td>Slurm</td><td>down 1, drained 2, idle 1</td><td class="num">8</td>'
                     r'<td class="num">32</td><td class="num">25 %</td>', html)
    assert 'data-check="fleet.shared.leaf.leaf03"><td>leaf leaf03</td>' in html
    assert '<tr data-node="node07"><td>node07</td><td>3 x reset_gpu</td><td>power-cycle the node</td>' in html
    for heading in ("The job", "Quality indicators", "Platform", "Shared causes", "Repeat offenders"):
        assert "\n## %s\n" % heading in md
    assert "- What happened: an NCCL timeout (nccl_timeout, ib_completion)\n- Ranks: 0, 1, 2\n- Nodes: node01, node04\n" in md
    assert "| node04 | `rdma.port.state` | mlx5_4 port 1 | FAIL |" in md
    assert "| Cluster compute availability | 25 % |" in md
    assert "| Slurm | down 1, drained 2, idle 1 | 8 | 32 | 25 % |" in md
    assert "| node07 | 3 x reset_gpu | power-cycle the node | `gpu.ecc.volatile_uncorrectable` |" in md
    assert "Held for a shared cause (one ticket for the component): node17, node18" in md


def test_chinese_html_and_markdown(results):
    view = _report.build_view(results, language="zh_CN")
    html = _report.render_html(results, None, view, language="zh_CN")
    md = _report.render_markdown(results, None, view, language="zh_CN")
    for heading in ("作业", "运维质量指标", "调度平台", "共因故障", "反复故障节点"):
        assert "<h2>%s</h2>" % heading in html and "\n## %s\n" % heading in md
    assert view["job"]["line"] == "作业 4127 (train) 状态 FAILED：NCCL 超时; node04 mlx5_4 port 1：rdma.port.state 不合格（检查线缆）"
    assert "任务最短恢复时长" in html and "集群算力可用度" in md and "缺少：peak_tflops_dense" in html
    # the fleet and repeat-offender messages are translated by check id from the record's fields
    assert "leaf leaf03：其 8 个节点中 6 个 rdma.port.state 失败（75 %），集群其余节点 6 %：属同一共因" in html
    assert "node07：反复故障，已尝试 3 x reset_gpu；升级为" in md
    # the producer's English stays in the JSON report
    assert "repeat offender: gpu.ecc.volatile_uncorrectable came back on node07" in _report.render_json(results)


def test_no_empty_sections_without_the_data():
    doc = rich_results()
    view = _report.build_view(doc)
    assert [view[key] for key in ("job", "quality", "platform", "shared_causes", "repeat_offenders")] == [None] * 5
    html = _report.render_html(doc)
    md = _report.render_markdown(doc)
    for section in SECTIONS:
        assert 'id="%s"' % section not in html
    assert "## Quality indicators" not in md and "## Repeat offenders" not in md


def test_a_missing_indicator_and_an_odd_fleet_message_keep_their_english(results):
    doc = ops_results()
    doc["cluster"]["quality"] = {"mfu": doc["cluster"]["quality"]["mfu"]}
    for check in doc["cluster"]["checks"]:
        if check["id"] == "fleet.shared.leaf.leaf03":
            check["message"] = "leaf03 looks odd"
    view = _report.build_view(doc, language="zh_CN")
    assert [q["key"] for q in view["quality"]] == ["mfu"]
    assert view["shared_causes"][0]["message"] == "leaf03 looks odd"


@needs_chromium
@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_ops_sections_render_in_chromium(results, tmp_path, language):
    paths = _report.write_reports(results, str(tmp_path / "out"), ["html"], language=language)
    dom, err = chromium(tmp_path, paths["html"], "--dump-dom")
    assert console_messages(err) == []
    for section in SECTIONS:
        assert '<section id="%s"' % section in dom, section
    assert dom.count('<tr data-indicator="') == 5 and 'data-platform="slurm"' in dom
    assert 'data-host="node04" data-check="rdma.port.state"' in dom
    os.makedirs(ARTEFACTS, exist_ok=True)
    shot = os.path.join(ARTEFACTS, "report-ops-%s.png" % language)
    dummy_out, err = chromium(tmp_path, paths["html"], "--window-size=1280,2400", "--screenshot=%s" % shot)
    assert console_messages(err) == [] and png_size(shot) == (1280, 2400)


_DOC = ops_results()
_DATA = dict((key, _DOC["cluster"][key]) for key in ("job", "quality", "slurm", "remediation"))


@FUZZ
@given(json_mutations(_DATA))
def test_ops_sections_are_total_on_damaged_data(data):
    """Damaged cluster data (wrong types, dropped keys, deep nesting) gives sections or nothing, never a crash."""
    doc = dict(_DOC, cluster=dict(_DOC["cluster"], **(data if isinstance(data, dict) else {})))
    view = _report.build_view(_DOC, language="zh_CN")
    assert_total("report.ops_sections", ops_sections, doc, view, translations("zh_CN"), format_value, allowed=())
