# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The report stage: results.json -> HTML, Markdown, JUnit XML (plugin_utils/_report.py + reports/templates)."""

from __future__ import annotations

import copy
import json
import os
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

from types import SimpleNamespace
from unittest.mock import MagicMock

import jsonschema
import pytest
from ansible.errors import AnsibleActionFail

from ansible_collections.zhisuan.ops.plugins.action.report import ActionModule
from ansible_collections.zhisuan.ops.plugins.plugin_utils import _report

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
TEMPLATES = os.path.join(REPO, "collections", "ansible_collections", "zhisuan", "ops", "data", "templates")
COLLECTION = os.path.join(REPO, "collections", "ansible_collections", "zhisuan", "ops")
SCHEMA_PATH = os.path.join(COLLECTION, "data", "schema", "results-v1.json")


def check(check_id, host, status, component="", observed=None, expected=None, message="", remedy=None, evidence=""):
    if remedy is None:
        remedy = "none" if status in ("pass", "skip") else "investigate"
    return {"id": check_id, "host": host, "component": component, "status": status, "observed": observed,
            "expected": expected, "message": message, "remedy": remedy, "evidence": evidence}


def gpu_facts(name, driver="550.90.07", count=8):
    return {"gpu_model": name, "gpu_count": count, "driver_version": driver, "cuda_version": "12.4"}


@pytest.fixture(name="results")
def fixture_results():
    """Three hosts (one clean, one failing, one unreachable), one cluster check; a realistic acceptance run."""
    node01 = [
        check("gpu.count.visible", "node01", "pass", "node", 8, "== 8", "8 GPUs visible"),
        check("gpu.ecc.volatile_uncorrectable", "node01", "pass", "GPU 0 (GPU-1a2b, 0000:18:00.0)", 0, "== 0",
              "no uncorrectable ECC errors"),
        check("gpu.pcie.width", "node01", "pass", "GPU 0 (GPU-1a2b, 0000:18:00.0)", 16, "== 16", "x16"),
        check("gpu.nvlink.count", "node01", "skip", "GPU 0", None, 18, "NVLink not applicable on this SKU"),
        check("xid.events.count", "node01", "pass", "node", 0, "== 0", "no XID events since boot"),
    ]
    node02 = [
        check("gpu.count.visible", "node02", "pass", "node", 8, "== 8", "8 GPUs visible"),
        check("gpu.ecc.volatile_uncorrectable", "node02", "fail", "GPU 3 (GPU-5c1e, 0000:9A:00.0)", 2, "== 0",
              "GPU 3 has 2 uncorrectable ECC errors since the driver loaded", "reset_gpu",
              "Volatile / DRAM Uncorrectable : 2"),
        check("gpu.pcie.width", "node02", "fail", "GPU 5 (GPU-77aa, 0000:BA:00.0)", 8, "== 16",
              "GPU 5 PCIe link trained at x8 (max x16) | slot 5", "reseat",
              "Link Width\n    Max : 16x\n    Current : 8x"),
        check("gpu.collect.nvidia_smi", "node02", "error", "nvidia-smi", None, None,
              "nvidia-smi: timed out after 60 s", "investigate", ""),
        check("gpu.temperature.gpu", "node02", "warn", "GPU 1 (GPU-0b0b, 0000:2A:00.0)", 83.5, "< 83",
              "GPU 1 at 83.5 C, <script>alert(1)</script> near slowdown", "monitor", "GPU Current Temp : 83.5 C"),
        check("xid.events.count", "node02", "pass", "node", 0, "== 0", "no XID events since boot"),
    ]
    return {
        "schema": "zhisuan.ops/results/v1",
        "run": {
            "id": "20250114T093000Z-acceptance",
            "kind": "acceptance",
            "started": "2025-01-14T09:30:00Z",
            "finished": "2025-01-14T10:12:41Z",
            "playbook": "playbooks/acceptance.yml",
            "collection_version": "0.1.0",
            "ansible_version": "2.19.14",
            "hosts_total": 3,
        },
        "hosts": {
            "node01": {"status": "pass", "checks": node01, "facts": gpu_facts("NVIDIA H200")},
            "node02": {"status": "fail", "checks": node02, "facts": gpu_facts("NVIDIA H200")},
            "node03": {"status": "unreachable", "checks": [], "facts": {},
                       "message": "Failed to connect to the host via ssh: connect to host 10.0.0.13 port 22: No route"},
        },
        "cluster": {"checks": [
            check("baseline.driver.consistent", "cluster", "pass", "gpu_nodes", ["550.90.07"], "one version",
                  "all reachable hosts run driver 550.90.07"),
        ]},
        "summary": {
            "hosts": {"pass": 1, "warn": 0, "fail": 1, "error": 0, "unreachable": 1},
            "checks": {"pass": 7, "warn": 1, "fail": 2, "error": 1, "skip": 1},
        },
    }


@pytest.fixture(name="schema")
def fixture_schema():
    with open(SCHEMA_PATH, encoding="utf-8") as handle:
        return json.load(handle)


class StrictParser(HTMLParser):
    """Collects tags and fails on unbalanced non-void elements."""

    VOID = {"meta", "br", "hr", "img", "input", "col", "wbr", "source", "area", "base", "embed", "param", "track"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []
        self.errors = []
        self.tags = []
        self.text = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append("unexpected </%s>, open: %s" % (tag, self.stack[-3:]))
            return
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def parse_html(text):
    parser = StrictParser()
    parser.feed(text)
    parser.close()
    assert not parser.errors, parser.errors[:5]
    assert parser.stack == [], parser.stack
    return parser


def test_fixture_is_valid_results(results, schema):
    jsonschema.validate(results, schema)


def test_view_verdict_grid_and_issues(results):
    view = _report.build_view(results)
    assert view["verdict"]["text"] == "NOT ACCEPTED"
    assert view["verdict"]["detail"] == "1 host fail, 1 host unreachable"
    assert view["families"] == ["baseline", "gpu", "xid"]
    node01, node02, node03 = view["hosts"]
    assert node01["cells"]["gpu"]["status"] == "pass"
    assert node01["cells"]["gpu"]["counts"] == [("pass", 3), ("skip", 1)]
    assert node02["cells"]["gpu"]["status"] == "fail"
    assert node02["cells"]["gpu"]["counts"] == [("fail", 2), ("error", 1), ("warn", 1), ("pass", 1)]
    assert node02["cells"]["xid"]["status"] == "pass"
    assert node03["unreachable"] and node03["cells"] == {}
    assert [(i["status"], i["host"], i["id"]) for i in view["issues"]] == [
        ("fail", "node02", "gpu.ecc.volatile_uncorrectable"),
        ("fail", "node02", "gpu.pcie.width"),
        ("unreachable", "node03", "host.reachable"),
        ("error", "node02", "gpu.collect.nvidia_smi"),
        ("warn", "node02", "gpu.temperature.gpu"),
    ]
    assert view["check_counts"] == {"pass": 7, "warn": 1, "fail": 2, "error": 1, "skip": 1}
    assert view["host_counts"] == {"pass": 1, "warn": 0, "fail": 1, "error": 0, "unreachable": 1}
    assert _report.verdict_summary(results)[0] == "not_accepted"


def test_verdict_accepted_with_warnings(results):
    results["hosts"] = {"node01": results["hosts"]["node01"]}
    results["hosts"]["node01"]["checks"].append(
        check("gpu.temperature.gpu", "node01", "warn", "GPU 2", 84, "< 83", "warm", "monitor"))
    results["hosts"]["node01"]["status"] = "warn"
    view = _report.build_view(results)
    assert view["verdict"]["text"] == "ACCEPTED WITH CONDITIONS"
    assert (view["verdict"]["key"], view["verdict"]["grade"]) == ("accepted", "conditional")
    assert view["verdict"]["detail"] == "the host passed; 1 warning to review"
    html = _report.render_html(results, TEMPLATES)
    assert 'class="verdict accepted conditional"' in html and "NOT ACCEPTED" not in html


def test_cluster_failure_blocks_acceptance(results):
    results["hosts"] = {"node01": results["hosts"]["node01"]}
    results["cluster"]["checks"][0]["status"] = "fail"
    results["cluster"]["checks"][0]["remedy"] = "update_firmware"
    view = _report.build_view(results)
    assert view["verdict"]["text"] == "NOT ACCEPTED"
    assert view["verdict"]["detail"] == "1 cluster check fail"


def test_empty_run_is_not_accepted(results, schema):
    results["hosts"] = {}
    results["cluster"] = {"checks": []}
    results["run"]["hosts_total"] = 0
    jsonschema.validate(results, schema)
    html = _report.render_html(results, TEMPLATES)
    parse_html(html)
    assert "NOT ACCEPTED" in html and "No hosts in this run." in html
    assert "No cluster-wide checks in this run." in html
    md = _report.render_markdown(results, TEMPLATES)
    assert "## Verdict: NOT ACCEPTED" in md and "no hosts in this run" in md
    root = ET.fromstring(_report.render_junit(results).encode("utf-8"))
    assert root.findall("testsuite") == []


def test_html(results):
    html = _report.render_html(results, TEMPLATES)
    parser = parse_html(html)
    for needle in ("<link", "<script src", "http://", "https://", "<img", "@import", "url("):
        assert needle not in html, needle
    assert not any(tag == "script" for tag, dummy in parser.tags)
    assert '<section id="verdict" class="verdict not_accepted" data-grade="fail">' in html
    assert '<div class="word">NOT ACCEPTED</div>' in html
    assert "<div>1 host fail, 1 host unreachable</div>" in html
    # the grid: one cell per host x family, coloured by the worst status
    cells = {(a["data-host"], a["data-family"]): a["class"] for tag, a in parser.tags
             if tag == "td" and "cell" in a.get("class", "").split()}
    assert cells == {
        ("node01", "baseline"): "cell st-none", ("node01", "gpu"): "cell st-pass", ("node01", "xid"): "cell st-pass",
        ("node02", "baseline"): "cell st-none", ("node02", "gpu"): "cell st-fail", ("node02", "xid"): "cell st-pass",
        ("node03", "*"): "cell st-unreachable",
    }
    assert "<span class=\"n\">2 fail, 1 error, 1 warn, 1 pass</span>" in html
    assert 'colspan="3" data-host="node03" data-family="*">UNREACHABLE &mdash; Failed to connect' in html
    # open issues, most severe first, with remedies
    issues = [(a["data-host"], a["data-check"]) for tag, a in parser.tags
              if tag == "tr" and "issue" in a.get("class", "").split()]
    assert issues == [("node02", "gpu.ecc.volatile_uncorrectable"), ("node02", "gpu.pcie.width"),
                      ("node03", "host.reachable"), ("node02", "gpu.collect.nvidia_smi"),
                      ("node02", "gpu.temperature.gpu")]
    issues_html = html[html.index('<section id="issues">'):html.index('<section id="hosts">')]
    assert "<td><code>reset_gpu</code></td>" in issues_html
    assert "<td><code>reseat</code></td>" in issues_html
    assert "<td>nvidia-smi: timed out after 60 s</td>" in issues_html
    assert '<td class="val">&mdash;</td>' not in issues_html  # None is rendered as the em dash character
    assert '<td class="val">\u2014</td>' in issues_html
    # untrusted text is escaped
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    # per-host details: facts, passes collapsed, evidence
    assert "<dt>GPU model</dt><dd>NVIDIA H200</dd>" in html
    assert "<summary>5 passed or skipped checks</summary>" in html  # node01: 4 pass + 1 skip
    assert "<summary>2 passed or skipped checks</summary>" in html  # node02
    assert "<pre>Link Width\n    Max : 16x\n    Current : 8x</pre>" in html
    assert "Its checks could not run." in html
    assert "baseline.driver.consistent" in html
    assert "Delivery engineer" in html and "Customer representative" in html and "Signature" in html
    assert _report.results_digest(results) in html


def test_html_is_deterministic(results):
    assert _report.render_html(results, TEMPLATES) == _report.render_html(copy.deepcopy(results), TEMPLATES)


def md_rows(md, heading):
    section = md.split("## " + heading + "\n", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if line.startswith("| ")]


def test_markdown(results):
    md = _report.render_markdown(results, TEMPLATES)
    assert "## Verdict: NOT ACCEPTED" in md
    assert "> **NOT ACCEPTED**: 1 host fail, 1 host unreachable" in md
    assert "> Verdict: **FAIL** (pass / conditional / fail)" in md
    assert md_rows(md, "Node × family status") == [
        "| Host | Status | baseline | gpu | xid |",
        "| [node01](#node01) | PASS | — | PASS 3 pass, 1 skip | PASS 1 pass |",
        "| [node02](#node02) | **FAIL** | — | **FAIL** 2 fail, 1 error, 1 warn, 1 pass | PASS 1 pass |",
        "| [node03](#node03) | **UNREACHABLE** | **UNREACHABLE** | **UNREACHABLE** | **UNREACHABLE** |",
    ]
    issues = md_rows(md, "Open issues")
    assert issues[0] == "| # | Status | Host | Check | Component | Observed | Expected | Message | Remedy |"
    assert issues[1] == ("| 1 | **FAIL** | node02 | `gpu.ecc.volatile_uncorrectable` | GPU 3 (GPU-5c1e, 0000:9A:00.0) "
                         "| 2 | == 0 | GPU 3 has 2 uncorrectable ECC errors since the driver loaded | `reset_gpu` |")
    # the | in the message is escaped, so the row keeps its 9 cells
    assert issues[2] == ("| 2 | **FAIL** | node02 | `gpu.pcie.width` | GPU 5 (GPU-77aa, 0000:BA:00.0) | 8 | == 16 "
                         "| GPU 5 PCIe link trained at x8 (max x16) \\| slot 5 | `reseat` |")
    assert issues[3].startswith("| 3 | **UNREACHABLE** | node03 | `host.reachable` |")
    assert issues[4] == ("| 4 | **ERROR** | node02 | `gpu.collect.nvidia_smi` | nvidia-smi | — | — "
                         "| nvidia-smi: timed out after 60 s | `investigate` |")
    assert issues[5].startswith("| 5 | WARN | node02 | `gpu.temperature.gpu` |")
    assert len(issues) == 6
    for row in md_rows(md, "Open issues")[1:]:
        assert row.replace("\\|", "").count("|") == 10, row
    assert "```text\nLink Width\n    Max : 16x\n    Current : 8x\n```" in md
    assert "- GPU model: NVIDIA H200" in md
    assert "**Unreachable:** Failed to connect to the host via ssh" in md
    assert "| Name | | |" in md and "| Signature | | |" in md
    # raw HTML in a message cannot reach a Markdown renderer that passes HTML through; "< 83" stays readable
    assert "&lt;script>alert(1)&lt;/script> near slowdown" in md and "<script>" not in md
    assert "| 83.5 | < 83 |" in md


def test_markdown_edge_cases(results):
    results["hosts"]["node04"] = {"status": "pass", "checks": [], "facts": {}}
    results["hosts"]["node02"]["checks"][1]["evidence"] = "a ``` fence\nin evidence"
    results["cluster"]["checks"] = []
    md = _report.render_markdown(results, TEMPLATES)
    assert "No checks were recorded for this host." in md
    assert "No cluster-wide checks in this run." in md
    assert "````text\na ``` fence\nin evidence\n````" in md
    html = _report.render_html(results, TEMPLATES)
    parse_html(html)
    assert "No checks were recorded for this host." in html


def junit_suites(results):
    root = ET.fromstring(_report.render_junit(results).encode("utf-8"))
    assert root.tag == "testsuites"
    return root, {s.get("name"): s for s in root.findall("testsuite")}


def test_junit(results):
    root, suites = junit_suites(results)
    assert list(suites) == ["node01", "node02", "node03", "cluster"]
    counts = {name: (s.get("tests"), s.get("failures"), s.get("errors"), s.get("skipped")) for name, s in suites.items()}
    assert counts == {"node01": ("5", "0", "0", "1"), "node02": ("6", "2", "1", "0"), "node03": ("1", "0", "1", "0"),
                      "cluster": ("1", "0", "0", "0")}
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("13", "2", "2")

    cases = {c.get("name"): c for c in suites["node02"].findall("testcase")}
    ecc = cases["gpu.ecc.volatile_uncorrectable [GPU 3 (GPU-5c1e, 0000:9A:00.0)]"]
    assert ecc.get("classname") == "zhisuan.gpu"
    failure = ecc.find("failure")
    assert failure.get("message") == "GPU 3 has 2 uncorrectable ECC errors since the driver loaded"
    assert "observed: 2\nexpected: == 0\nremedy: reset_gpu" in failure.text
    assert "evidence:\nVolatile / DRAM Uncorrectable : 2" in failure.text
    assert "remedy: reset_gpu" in ecc.find("system-out").text
    pcie = cases["gpu.pcie.width [GPU 5 (GPU-77aa, 0000:BA:00.0)]"]
    assert "remedy: reseat" in pcie.find("failure").text
    err = cases["gpu.collect.nvidia_smi [nvidia-smi]"].find("error")
    assert err.get("message") == "nvidia-smi: timed out after 60 s"
    warn = cases["gpu.temperature.gpu [GPU 1 (GPU-0b0b, 0000:2A:00.0)]"]
    assert warn.find("failure") is None and warn.find("error") is None and warn.find("skipped") is None
    assert warn.find("system-out").text.startswith("WARNING: GPU 1 at 83.5 C, <script>")

    unreachable = suites["node03"].findall("testcase")
    assert [(c.get("name"), c.get("classname")) for c in unreachable] == [("host.reachable", "zhisuan.host")]
    assert unreachable[0].find("error").get("message").startswith("Failed to connect to the host via ssh")

    skipped = [c for c in suites["node01"].findall("testcase") if c.find("skipped") is not None]
    assert [c.get("name") for c in skipped] == ["gpu.nvlink.count [GPU 0]"]
    props = {p.get("name"): p.get("value") for p in suites["node02"].iter("property")}
    assert props["host_status"] == "fail" and props["run_id"] == "20250114T093000Z-acceptance"
    assert suites["cluster"].find("testcase").get("classname") == "zhisuan.baseline"


def test_junit_without_cluster_checks(results):
    results["cluster"]["checks"] = []
    dummy_root, suites = junit_suites(results)
    assert list(suites) == ["node01", "node02", "node03"]


def test_junit_needs_no_package(results, monkeypatch):
    """JUnit XML is written directly (streamed, suite by suite): the junit-xml package is no longer needed."""
    monkeypatch.setitem(sys.modules, "junit_xml", None)
    root, suites = junit_suites(results)
    assert root.get("tests") == "13" and list(suites) == ["node01", "node02", "node03", "cluster"]


def test_write_reports(results, tmp_path):
    dest = tmp_path / "out"
    paths = _report.write_reports(results, str(dest), ["html", "markdown", "junit"], TEMPLATES)
    # an acceptance run also gets stages.csv (where each node stands in the delivery)
    assert paths == {"html": str(dest / "report.html"), "markdown": str(dest / "report.md"),
                     "junit": str(dest / "junit.xml"), "stages": str(dest / "stages.csv")}
    assert sorted(os.listdir(dest)) == ["junit.xml", "report.html", "report.md", "stages.csv"]  # no temp files left
    assert (dest / "report.md").read_text(encoding="utf-8") == _report.render_markdown(results, TEMPLATES)
    # a second identical render changes nothing
    plan = _report.plan_reports(results, str(dest), ["html", "markdown", "junit"], TEMPLATES)
    assert [changed for dummy_f, dummy_p, dummy_t, changed in plan] == [False, False, False, False]


def test_write_reports_errors(results, tmp_path):
    with pytest.raises(_report.ReportError, match="unknown format"):
        _report.write_reports(results, str(tmp_path), ["pdf"], TEMPLATES)
    with pytest.raises(_report.ReportError, match="template directory .* does not exist"):
        _report.write_reports(results, str(tmp_path), ["html"], str(tmp_path / "nope"))
    (tmp_path / "tpl").mkdir()
    with pytest.raises(_report.ReportError, match="template report.md.j2 not found"):
        _report.write_reports(results, str(tmp_path / "o"), ["markdown"], str(tmp_path / "tpl"))
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("value, text", [
    (None, "\u2014"), (True, "true"), (3, "3"), (2.0, "2"), (372.456789, "372.4568"), (0.00012, "0.00012"),
    (["550.90.07", "550.54.15"], "550.90.07, 550.54.15"), ({"b": 1, "a": None}, '{"a": null, "b": 1}'),
])
def test_format_value(value, text):
    assert _report.format_value(value) == text


def test_md_cell():
    assert _report.md_cell("a | b\nc\\d") == "a \\| b<br>c\\\\d"


# ---------------------------------------------------------------------------------------------------------------
# the action plugin, run the way ansible runs it (a task with args), without a playbook


def run_action(args, check_mode=False):
    task = SimpleNamespace(args=args, check_mode=check_mode, async_val=0, action="zhisuan.ops.report")
    connection = MagicMock()
    connection._shell.tmpdir = "/nonexistent"
    # the sixth argument (shared_loader_obj) is required by ansible-core 2.16, optional since 2.17
    action = ActionModule(task, connection, MagicMock(), MagicMock(), MagicMock(), MagicMock())
    return action.run(task_vars={})


def test_action_renders_and_is_idempotent(results, tmp_path):
    src = tmp_path / "results.json"
    src.write_text(json.dumps(results), encoding="utf-8")
    out = run_action({"src": str(src), "template_dir": TEMPLATES})
    assert out["changed"] is True
    assert out["verdict"] == "not_accepted"
    assert out["summary"]["hosts"]["unreachable"] == 1 and out["summary"]["open_issues"] == 5
    assert out["paths"] == {"html": str(tmp_path / "report.html"), "markdown": str(tmp_path / "report.md"),
                            "junit": str(tmp_path / "junit.xml"), "json": str(tmp_path / "report.json"),
                            "stages": str(tmp_path / "stages.csv")}
    assert out["summary"]["grade"] == "fail" and "history" not in out
    assert all(os.path.isfile(p) for p in out["paths"].values())
    assert run_action({"src": str(src), "template_dir": TEMPLATES})["changed"] is False


def test_action_check_mode_writes_nothing(results, tmp_path):
    src = tmp_path / "results.json"
    src.write_text(json.dumps(results), encoding="utf-8")
    out = run_action({"src": str(src), "dest": str(tmp_path / "out"), "formats": ["junit"],
                      "template_dir": TEMPLATES}, check_mode=True)
    assert out["changed"] is True and out["paths"] == {"junit": str(tmp_path / "out" / "junit.xml"),
                                                        "stages": str(tmp_path / "out" / "stages.csv")}
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("content, message", [
    (None, r"results file .*/results.json does not exist"),
    ("{bad", r"results file .*/results.json is not valid JSON: Expecting property name"),
    ("[]", r"results file .*/results.json holds a JSON list, not an object"),
])
def test_action_bad_src(tmp_path, content, message):
    src = tmp_path / "results.json"
    if content is not None:
        src.write_text(content, encoding="utf-8")
    with pytest.raises(AnsibleActionFail, match=message):
        run_action({"src": str(src), "template_dir": TEMPLATES})


def test_action_schema_error_names_the_path(results, tmp_path):
    results["hosts"]["node02"]["checks"][1]["remedy"] = "pray"
    src = tmp_path / "results.json"
    src.write_text(json.dumps(results), encoding="utf-8")
    with pytest.raises(AnsibleActionFail, match=r"does not match results-v1.json: \$\.hosts\.node02\.checks\[1\]\.remedy: "
                                                r"'pray' is not one of"):
        run_action({"src": str(src), "template_dir": TEMPLATES})
    assert not (tmp_path / "report.html").exists()


def test_action_argument_errors(tmp_path):
    with pytest.raises(AnsibleActionFail, match="missing required arguments: src"):
        run_action({"template_dir": TEMPLATES})
    with pytest.raises(AnsibleActionFail, match="value of formats must be one or more of: html, markdown, junit"):
        run_action({"src": str(tmp_path / "results.json"), "template_dir": TEMPLATES, "formats": ["pdf"]})


def test_facts_from_gpu_info_shape():
    facts = {"gpu": {"driver_version": "535.161.08", "cuda_version": "12.2", "attached_gpus": 8,
                     "gpus": [{"name": "NVIDIA H100 80GB HBM3"}] * 8},
             "kernel": "5.15.0-105-generic", "nics": [{"name": "mlx5_0"}], "bmc": {"vendor": "Dell"}}
    assert _report._facts_summary(facts) == [("GPU model", "NVIDIA H100 80GB HBM3"), ("GPU count", "8"),
                                             ("Driver", "535.161.08"), ("CUDA", "12.2"),
                                             ("Kernel", "5.15.0-105-generic")]
    assert _report._facts_summary(None) == []


def test_host_without_checks_in_grid(results):
    results["hosts"]["node10"] = {"status": "pass", "checks": [], "facts": {}}
    view = _report.build_view(results)
    assert [h["name"] for h in view["hosts"]] == ["node01", "node02", "node03", "node10"]  # natural order
    html = _report.render_html(results, TEMPLATES)
    assert '<td class="cell st-none" data-host="node10" data-family="gpu">&mdash;</td>' in html
    md = _report.render_markdown(results, TEMPLATES)
    assert "| [node10](#node10) | PASS | — | — | — |" in md


def test_host_facts_from_the_judge_summary():
    facts = {"gpu": {"model": "NVIDIA A100-SXM4-80GB", "count": 7, "driver_version": "535.54.03",
                     "cuda_version": "12.2", "profile": "a100"}}
    assert _report._facts_summary(facts) == [
        ("GPU model", "NVIDIA A100-SXM4-80GB"), ("GPU count", "7"), ("GPU profile", "a100"),
        ("Driver", "535.54.03"), ("CUDA", "12.2")]


def test_host_facts_show_the_diagnosis_first():
    facts = {"gpu": {"model": "NVIDIA A100-SXM4-80GB", "count": 7},
             "diagnosis": {"status": "fail", "remedies": ["power_cycle", "reseat"], "findings": 2,
                           "root_cause": {"id": "xid.79.events", "component": "GPU 7", "remedy": "power_cycle",
                                          "message": "GPU 7 fell off the bus", "evidence": ""}}}
    assert _report._facts_summary(facts)[:2] == [
        ("Root cause", "xid.79.events on GPU 7: GPU 7 fell off the bus"), ("Remedies, in order", "power_cycle -> reseat")]


def _delivery_results():
    def host(model, bios, bmc_fw, failing=()):
        checks = [check(cid, "n", "fail", "BIOS", "x", "y", "m", "update_firmware") for cid in failing]
        return {"status": "fail" if failing else "pass", "checks": checks or [check("bmc.power.state", "n", "pass")],
                "facts": {"bmc": {"model": model, "serial": "S-" + bios, "address": "10.0.0.1"},
                          "baseline": {"versions": {"bios": bios, "bmc": bmc_fw}},
                          "location": {"rack": "R1", "u": bios[-1]}}}
    hosts = {"a1": host("DGXH100", "01.01.03", "23.11"), "a2": host("DGXH100", "01.01.03", "23.11"),
             "a3": host("DGXH100", "01.01.02", "23.11", failing=["baseline.bios.version"]),
             "d1": host("PowerEdge R750", "1.8.2", "6.00")}
    return {"schema": "zhisuan.ops/results/v1",
            "run": {"id": "r", "kind": "delivery", "started": "2026-11-30T21:00:00+00:00",
                    "finished": "2026-11-30T21:01:00+00:00", "playbook": "p", "collection_version": "0.1.0",
                    "ansible_version": "2.19.14", "hosts_total": 4},
            "hosts": hosts, "cluster": {"checks": []}, "summary": {"hosts": {}, "checks": {}}}


def test_assets_and_baseline_with_drift_marked(tmp_path):
    results = _delivery_results()
    view = _report.build_view(results)
    # sorted by rack, then U, then node
    assert [(row["node"], row["u"], row["model"]) for row in view["assets"]["rows"]] == [
        ("a3", "2", "DGXH100"), ("d1", "2", "PowerEdge R750"), ("a1", "3", "DGXH100"), ("a2", "3", "DGXH100")]
    drift = dict((row["host"], [c["drift"] for c in row["cells"]]) for row in view["baseline"]["rows"])
    assert view["baseline"]["components"] == ["bios", "bmc"]
    # a3 differs from the other DGX nodes (and fails its baseline check); the Dell is compared with Dells only
    assert drift == {"a1": [False, False], "a2": [False, False], "a3": [True, False], "d1": [False, False]}
    html = _report.render_html(results, TEMPLATES)
    assert html.count('class="st-fail drift"') == 1 and "01.01.02 &#9888;" in html
    md = _report.render_markdown(results, TEMPLATES)
    section = md.split("## Assets and baseline")[1].split("## Hosts")[0]
    table_rows = [line for line in section.splitlines() if line.startswith("| ")]
    assert len(table_rows) == 1 + 4 + 1 + 4
    assert "| a3 | DGXH100 | 01.01.02 ⚠ | 23.11 |" in section


def test_no_asset_section_without_bmc_or_versions(results):
    assert _report.build_view(results)["assets"] is None
    assert "Assets and baseline" not in _report.render_html(results, TEMPLATES)
