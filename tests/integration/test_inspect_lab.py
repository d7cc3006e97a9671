# SPDX-License-Identifier: GPL-3.0-or-later
"""The periodic inspection on the lab, three times, with a fault added between the first two runs and faults
removed before the third: the report shows it new, then fixed, and the KPIs come from the kept history."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ansible_collections.zhisuan.ops.plugins.plugin_utils._history import load_history
from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import validate
from ansible_collections.zhisuan.ops.plugins.plugin_utils._site_history import site_key

from .conftest import REPO, run_playbook, start_lab

NODES = "node01,node02,node03"  # node03 carries the default scenario's ECC fault


def labctl(tmp_path, *args):
    subprocess.run([sys.executable, os.path.join(REPO, "lab", "labctl.py"), "fault", "--dir", str(tmp_path / "lab")]
                   + list(args), check=True, capture_output=True, timeout=60)


def inspect(tmp_path, inventory, run_id):
    runner, dummy = run_playbook(tmp_path, "inspect.yml", inventory, extravars={"zhisuan_run_id": run_id}, limit=NODES)
    assert runner.rc == 0, runner.stdout.read()
    run_dir = tmp_path / "out" / run_id
    document = json.loads((run_dir / "results.json").read_text())
    assert validate(document) == []
    stats = [event for event in runner.events if event.get("event") == "playbook_on_stats"]
    published = stats[0]["event_data"]["artifact_data"]["zhisuan_report"]
    return document, json.loads((run_dir / "report.json").read_text()), (run_dir / "report.html").read_text(), published


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("inspect")
    inventory = start_lab(tmp_path, "default.yml")
    try:
        first = inspect(tmp_path, inventory, "insp-1")
        labctl(tmp_path, "node02", "add", "pcie_width", "gpu=2", "width=8")
        second = inspect(tmp_path, inventory, "insp-2")
        labctl(tmp_path, "node02", "remove", "pcie_width")
        labctl(tmp_path, "node03", "clear")
        third = inspect(tmp_path, inventory, "insp-3")
        yield tmp_path, first, second, third
    finally:
        subprocess.run([sys.executable, os.path.join(REPO, "lab", "labctl.py"), "down", "--dir", str(tmp_path / "lab")],
                       capture_output=True, timeout=60)


def pairs(items):
    return sorted((item["host"], item["id"]) for item in items)


def test_inspection_is_quick_and_safe(three_runs):
    dummy_tmp, (document, report, dummy_html, published), dummy_second, dummy_third = three_runs
    assert document["run"]["kind"] == "inspect"
    assert document["run"]["families"] == ["gpu", "xid", "dcgm", "tuning"]
    ids = set(c["id"] for record in document["hosts"].values() for c in record["checks"])
    assert not any(i.startswith(("burn.", "dcgm.diag")) for i in ids)  # no burn, no dcgmi diag
    assert any(i.startswith("dcgm.health") for i in ids) and any(i.startswith("tuning.") for i in ids)
    assert sorted(document["hosts"]) == ["node01", "node02", "node03"]
    assert report["changes"] is None  # the first inspection has nothing to compare with
    assert published["changes"] is None and published["grade"] == report["verdict"]["grade"]


def test_a_fault_added_between_runs_is_new(three_runs):
    dummy_tmp, dummy_first, (document, report, html, published), dummy_third = three_runs
    assert report["changes"]["previous"]["id"] == "insp-1"
    assert pairs(report["changes"]["new"]) == [("node02", "gpu.pcie.width")]
    assert ("node03", "gpu.ecc.volatile_uncorrectable") in pairs(report["changes"]["persisting"])
    assert report["changes"]["fixed"] == []
    assert 'data-change="new" data-host="node02" data-check="gpu.pcie.width"' in html
    # what an AWX workflow sees (set_stats): it can branch on new failures
    assert published["changes"]["new"] == 1 and published["paths"]["json"].endswith("/insp-2/report.json")
    width = [c for c in document["hosts"]["node02"]["checks"] if c["id"] == "gpu.pcie.width" and c["status"] == "fail"]
    assert [(c["component"].split(" (")[0], c["observed"], c["remedy"]) for c in width] == [("GPU 2", 8, "reseat")]


def test_removed_faults_are_fixed_and_kpis_come_from_the_history(three_runs):
    tmp_path, dummy_first, dummy_second, (document, report, html, dummy_published) = three_runs
    assert report["changes"]["previous"]["id"] == "insp-2"
    assert pairs(report["changes"]["fixed"]) == [("node02", "gpu.pcie.width"), ("node03", "gpu.ecc.volatile_uncorrectable")]
    assert report["changes"]["new"] == []
    assert 'data-change="fixed" data-host="node02" data-check="gpu.pcie.width"' in html
    # the site's own history (reports/history/<site key>; the lab inventory's folder, no zhisuan_site_name)
    assert document["run"]["site_key"] == site_key(None, str(tmp_path), REPO)
    history = load_history(str(tmp_path / "history" / document["run"]["site_key"]))
    assert [doc["run"]["id"] for doc in history] == ["insp-1", "insp-2", "insp-3"]
    kpis = report["kpis"]
    assert kpis["runs"] == 3 and kpis["hosts"] == 3
    classes = dict((c["class"], c) for c in kpis["classes"])
    assert (classes["gpu.pcie"]["faults"], classes["gpu.pcie"]["repaired"], classes["gpu.pcie"]["open"]) == (1, 1, 0)
    assert (classes["gpu.ecc"]["faults"], classes["gpu.ecc"]["repaired"]) == (1, 1)
    repairs = dict(((r["host"], r["class"]), r) for r in kpis["repairs"])
    # detected in the run where it was first seen, repaired in the first run that found it gone
    assert repairs[("node02", "gpu.pcie")]["detected"] == history[1]["run"]["started"]
    assert repairs[("node02", "gpu.pcie")]["repaired"] == history[2]["run"]["started"]
    assert repairs[("node03", "gpu.ecc")]["detected"] == history[0]["run"]["started"]
    availability = kpis["availability"]
    # node03 GPU 3 unhealthy over [run 1, run 3) and node02 GPU 2 over [run 2, run 3): less than 100 %
    assert availability["method"] in ("time-weighted", "snapshot")
    assert availability["pct"] < 100.0
    assert '<section id="kpis">' in html
