# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The report a customer signs (issue 17) and the one-pass render (issue 13): times with a zone, one row per check,
grouped skips, columns only for what the run measured, KPIs that say how they count and why a value is missing,
JUnit times from the run's measurements, the fast results validation agreeing with jsonschema, and the verdict line
that every run prints at its end (the run_summary callback, run through real ansible-playbook runs)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import jsonschema
import pytest
from hypothesis import given

from fuzzing import FUZZ, json_mutations
from report_samples import rich_results

from ansible_collections.zhisuan.ops.plugins.plugin_utils import _report

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
SCHEMA_PATH = os.path.join(REPO, "collections", "ansible_collections", "zhisuan", "ops", "data", "schema", "results-v1.json")


def check(check_id, host, status, component="", observed=None, expected=None, message="", remedy=None, evidence=""):
    if remedy is None:
        remedy = "none" if status in ("pass", "skip") else "investigate"
    return {"id": check_id, "host": host, "component": component, "status": status, "observed": observed,
            "expected": expected, "message": message, "remedy": remedy, "evidence": evidence}


def document(hosts, started="2026-12-01T20:51:38", finished="2026-12-01T21:05:02+00:00", cluster=None, kind="acceptance"):
    records = {}
    for name, (checks, facts) in hosts.items():
        worst = max((c["status"] for c in checks), key=["skip", "pass", "warn", "error", "fail"].index) if checks else "error"
        records[name] = {"status": "pass" if worst == "skip" else worst, "checks": checks, "facts": facts}
    return {"schema": "zhisuan.ops/results/v1",
            "run": {"id": "r1", "kind": kind, "started": started, "finished": finished, "playbook": "playbooks/acceptance.yml",
                    "collection_version": "0.1.0", "ansible_version": "2.19.4", "hosts_total": len(hosts)},
            "hosts": records, "cluster": {"checks": cluster or []},
            "summary": {"hosts": {}, "checks": {}}}


DCGMI_MISSING = check("dcgm.collect.dcgmi", "node01", "error", "dcgmi", None, "dcgmi on PATH",
                      "dcgmi: not found on PATH (zhisuan_tools.dcgmi)", "investigate")


def test_identical_error_rows_appear_once():
    results = document({"node01": ([DCGMI_MISSING, dict(DCGMI_MISSING),
                                    check("gpu.ecc.volatile_uncorrectable", "node01", "pass", "GPU 0", 0, "== 0", "ok")], {})})
    view = _report.build_view(results)
    assert [(i["host"], i["id"]) for i in view["issues"]] == [("node01", "dcgm.collect.dcgmi")]
    assert view["check_counts"]["error"] == 1 and len(view["hosts"][0]["checks"]) == 2
    html = _report.render_html(results)
    assert html.count('data-check="dcgm.collect.dcgmi"') == 1
    suite = ET.fromstring(_report.render_junit(results).encode("utf-8")).find("testsuite")
    assert [c.get("name") for c in suite.findall("testcase")].count("dcgm.collect.dcgmi [dcgmi]") == 1
    assert suite.get("tests") == "2" and suite.get("errors") == "1"
    # a different message is a different finding and stays
    other = dict(DCGMI_MISSING, message="dcgmi: timed out after 60 s")
    results["hosts"]["node01"]["checks"].append(other)
    assert len(_report.build_view(results)["issues"]) == 2


def test_times_carry_their_zone_everywhere():
    results = document({"node01": ([check("xid.events.recent", "node01", "pass", "node", 0, "== 0", "none")], {})})
    view = _report.build_view(results)
    assert view["run"]["started"] == "2026-12-01T20:51:38+00:00"
    assert view["run"]["finished"] == "2026-12-01T21:05:02+00:00"
    html = _report.render_html(results)
    md = _report.render_markdown(results)
    signoff = html[html.index('<section id="signoff"'):]
    assert "(2026-12-01T20:51:38+00:00 to 2026-12-01T21:05:02+00:00)" in signoff
    assert "(2026-12-01T20:51:38+00:00 to 2026-12-01T21:05:02+00:00)" in md
    assert "20:51:38<" not in html and "20:51:38 " not in md
    suite = ET.fromstring(_report.render_junit(results).encode("utf-8")).find("testsuite")
    assert suite.get("timestamp") == "2026-12-01T20:51:38+00:00"
    assert _report.build_view(document({}, started="2026-12-01T08:00:00Z"))["run"]["started"] == "2026-12-01T08:00:00+00:00"
    assert _report.build_view(document({}, started="not a time"))["run"]["started"] == "not a time"


def test_gpu_table_shows_only_what_the_run_measured():
    gpu = {"model": "NVIDIA A100-SXM4-80GB", "count": 8, "driver_version": "535.54.03", "cuda_version": "12.2"}
    results = document({"node01": ([check("gpu.count.present", "node01", "pass", "GPUs", 8, "== 8", "8")], {"gpu": gpu})})
    table = _report.build_view(results)["gpu_data"]
    assert table["columns"] == ["GPU model", "GPUs", "driver", "CUDA"]
    assert table["rows"][0]["cells"] == ["NVIDIA A100-SXM4-80GB", "8", "535.54.03", "12.2"]
    html = _report.render_html(results)
    gpu_html = html[html.index('<section id="gpu-data">'):html.index("</section>", html.index('<section id="gpu-data">'))]
    assert "burn" not in gpu_html and "DCGM" not in gpu_html
    # a burn-in run keeps its columns
    results["hosts"]["node01"]["facts"]["burn"] = {"gflops_median": 19000.5, "gflops_min": 18800.0, "gflops_floor": 17000,
                                                   "errors": 0}
    assert "burn Gflop/s median" in _report.build_view(results)["gpu_data"]["columns"]


def test_skips_are_grouped_with_the_full_list_behind_a_switch():
    skips = [check("gpu.nvlink.count", "node%02d" % n, "skip", "GPU %d" % g, None, 12,
                   "GPU %d: NVLink is not present on a PCIe card" % g) for n in (1, 2) for g in range(8)]
    hosts = dict(("node%02d" % n, ([c for c in skips if c["host"] == "node%02d" % n]
                                   + [check("gpu.ecc.volatile_uncorrectable", "node%02d" % n, "pass", "GPU 0", 0, "== 0", "ok")],
                                   {})) for n in (1, 2))
    results = document(hosts)
    view = _report.build_view(results)
    assert view["skips"] == [{"id": "gpu.nvlink.count", "message": "GPU n: NVLink is not present on a PCIe card", "count": 16,
                              "hosts": 2, "host_names": ["node01", "node02"]}]
    assert [(g["id"], g["count"]) for g in view["hosts"][0]["skip_groups"]] == [("gpu.nvlink.count", 8)]
    html = _report.render_html(results)
    assert '<section id="skips">' in html and "16 checks did not apply" in html
    host = html[html.index('<section class="host" id="host-node01"'):html.index('<section class="host" id="host-node02"')]
    assert "8 checks not applicable: <code>gpu.nvlink.count</code>" in host
    # the switch: every skipped check is still listed, inside the collapsed details
    details = host[host.index('<details class="passed">'):]
    assert details.count('<tr class="st-row-skip">') == 8
    md = _report.render_markdown(results)
    assert "| 16 | 2 | `gpu.nvlink.count` | GPU n: NVLink is not present on a PCIe card | node01, node02 |" in md


def test_kpis_say_how_they_count_and_why_a_value_is_missing():
    gpu_count = check("gpu.count.present", "node01", "fail", "GPUs", 7, "== 8", "Only 7 of 8 GPUs")
    results = document({"node01": ([gpu_count], {"gpu": {"count": 7}}),
                        "node02": ([dict(gpu_count, host="node02", status="pass", observed=8, message="8")], {"gpu": {"count": 8}})},
                       started="2026-12-01T08:00:00+00:00")
    view = _report.build_view(results, history=[results])
    notes = view["kpi_notes"]
    # the bill of materials: 8 GPUs on each node, though node01 shows 7; node01's failure names no GPU: all 8 count
    assert notes["availability"] == "50 % (8 of 16 GPUs healthy in the one run so far)"
    assert "Denominator: 16 GPUs from the bill of materials" in notes["availability_definition"]
    assert notes["mttr"] == "\u2014 (no repair yet: the fault was not found fixed by a later run or logged as repaired)"
    assert notes["classes"]["gpu.count"] == ("\u2014 (no repair yet)", "\u2014 (one run only: no time between runs yet)")
    html = _report.render_html(results, None, view)
    kpis = html[html.index('<section id="kpis">'):]
    assert '<td data-kpi="mttr">\u2014 (no repair yet' in kpis and "How it is counted" in kpis
    clean = document({"node02": ([dict(gpu_count, host="node02", status="pass", observed=8, message="8")], {})})
    assert _report.build_view(clean, history=[clean])["kpi_notes"]["mttr"] == \
        "\u2014 (no fault seen in the history yet, so nothing to repair)"


def test_junit_times_come_from_the_run():
    checks = [check("gpu.ecc.volatile_uncorrectable", "node01", "pass", "GPU %d" % g, 0, "== 0", "ok") for g in range(4)]
    checks.append(check("xid.events.recent", "node01", "pass", "node", 0, "== 0", "none"))
    results = document({"node01": (checks, {"timing": {"gpu": 2.4, "xid": 0.35, "bad": "x"}}),
                        "node02": ([dict(checks[-1], host="node02")], {})})
    root = ET.fromstring(_report.render_junit(results).encode("utf-8"))
    node01, node02 = root.findall("testsuite")
    assert [c.get("time") for c in node01.findall("testcase")] == ["0.6", "0.6", "0.6", "0.6", "0.35"]
    assert node01.get("time") == "2.75"
    # not measured: no time is claimed (never time="0")
    assert node02.get("time") is None and node02.find("testcase").get("time") is None


with open(SCHEMA_PATH, encoding="utf-8") as _handle:
    SCHEMA = json.load(_handle)


def _capped(value, depth=0):
    """A subtree nested deeper than a results file can be read (json stops near 1,000 levels) cut to one value, so
    that hypothesis can print the example."""
    if depth > 60:
        return [0]
    if isinstance(value, dict):
        return dict((key, _capped(item, depth + 1)) for key, item in value.items())
    if isinstance(value, list):
        return [_capped(item, depth + 1) for item in value]
    return value


@FUZZ
@given(mutated=json_mutations(rich_results()).map(_capped))
def test_fast_validation_agrees_with_jsonschema(mutated):
    """The compiled check-record test plus jsonschema on the rest accepts exactly what jsonschema accepts."""
    valid = jsonschema.Draft202012Validator(SCHEMA).is_valid(mutated)
    if not isinstance(mutated, dict):
        return
    if valid:
        assert _report.validate_results(mutated, SCHEMA_PATH) == []
    else:
        with pytest.raises(_report.ReportError, match="does not match results-v1.json"):
            _report.validate_results(mutated, SCHEMA_PATH)


@pytest.mark.parametrize("field, value", [("id", "GPU.ecc"), ("status", "ok"), ("remedy", "pray"), ("message", 3),
                                          ("host", ""), ("extra", 1)])
def test_fast_validation_refuses_bad_records(field, value):
    results = rich_results()
    results["hosts"]["node02"]["checks"][0][field] = value
    with pytest.raises(_report.ReportError, match=r"\$\.hosts\.node02\.checks\[0\]"):
        _report.validate_results(results, SCHEMA_PATH)


def run_playbook(tmp_path, *args, stdout_callback=None):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"),
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    if stdout_callback:
        env["ANSIBLE_STDOUT_CALLBACK"] = stdout_callback
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,"] + list(args),
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


@pytest.mark.parametrize("callback", [None, "ansible.builtin.minimal", "ansible.builtin.oneline"])
def test_every_run_ends_with_the_verdict_and_the_paths(tmp_path, callback):
    run_dir = tmp_path / "out" / "r1"
    run_dir.mkdir(parents=True)
    (run_dir / "results.json").write_text(json.dumps(rich_results()), encoding="utf-8")
    out = run_playbook(tmp_path, os.path.join("playbooks", "report.yml"), "-e", "report_src=%s" % (run_dir / "results.json"),
                       "-e", "report_history=false", stdout_callback=callback)
    tail = out.rstrip("\n").splitlines()[-6:]
    assert tail[0].startswith("ZHISUAN VERDICT: NOT ACCEPTED (fail): ")
    assert tail[0].endswith("open issues")
    assert tail[1:] == ["  %-9s %s" % (fmt + ":", run_dir / name) for fmt, name in
                        (("html", "report.html"), ("json", "report.json"), ("junit", "junit.xml"), ("markdown", "report.md"),
                         ("stages", "stages.csv"))]


def test_every_report_of_one_ansible_playbook_is_summed_up_in_order(tmp_path):
    """site.yml runs several playbooks in one ansible-playbook: each report's verdict and files are printed, in the
    order they ran (the callback reads the run's stats, to which each report action adds its entry)."""
    sources = []
    for name in ("r1", "r2"):
        run_dir = tmp_path / name
        run_dir.mkdir()
        (run_dir / "results.json").write_text(json.dumps(rich_results()), encoding="utf-8")
        sources.append(run_dir / "results.json")
    playbook = tmp_path / "two.yml"
    playbook.write_text("".join(
        "- hosts: localhost\n  connection: local\n  gather_facts: false\n  tasks:\n"
        "    - zhisuan.ops.report:\n        src: %s\n        formats: [markdown]\n" % src for src in sources),
        encoding="utf-8")
    out = run_playbook(tmp_path, str(playbook))
    tail = out[out.index("PLAY RECAP"):].rstrip("\n").splitlines()
    verdicts = [number for number, line in enumerate(tail) if line.startswith("ZHISUAN VERDICT: NOT ACCEPTED (fail): ")]
    files = [tail.index("  %-9s %s" % ("markdown:", src.parent / "report.md")) for src in sources]
    # each acceptance report also wrote its stages.csv, printed after its report
    assert len(verdicts) == 2 and verdicts[0] < files[0] < verdicts[1] < files[1] == len(tail) - 2
    assert tail[-1] == "  %-9s %s" % ("stages:", sources[1].parent / "stages.csv")


def test_a_run_without_results_prints_no_verdict(tmp_path):
    playbook = tmp_path / "noop.yml"
    playbook.write_text("- hosts: localhost\n  connection: local\n  gather_facts: false\n  tasks:\n"
                        "    - ansible.builtin.debug:\n        msg: hello\n", encoding="utf-8")
    out = run_playbook(tmp_path, str(playbook))
    assert "PLAY RECAP" in out and "ZHISUAN VERDICT" not in out
