# SPDX-License-Identifier: GPL-3.0-or-later
"""The acceptance playbook on the lab, through ansible-runner; assertions on results.json and the reports."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET

import pytest

from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import validate

from .conftest import checks_by_status, run_playbook, start_lab


@pytest.fixture(scope="module")
def default_run(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("default")
    inventory = start_lab(tmp_path, "default.yml")
    runner, document = run_playbook(tmp_path, "acceptance.yml", inventory)
    return tmp_path, runner, document


def test_run_succeeds_and_file_is_schema_valid(default_run):
    tmp_path, runner, document = default_run
    assert runner.rc == 0, runner.stdout.read()
    assert document is not None
    assert validate(document) == []
    assert document["run"]["kind"] == "acceptance"
    assert document["run"]["hosts_total"] == 8
    assert document["run"]["families"] == ["gpu", "xid", "dcgm"]
    assert os.readlink(str(tmp_path / "out" / "latest")) == "test-run"


def test_healthy_nodes_pass_with_real_checks(default_run):
    _, _, document = default_run
    for host in ("node01", "node02", "node04", "node05", "node07"):
        record = document["hosts"][host]
        assert record["status"] == "pass", (host, checks_by_status(document, host))
        ids = set(c["id"] for c in record["checks"])
        assert {"gpu.count.present", "gpu.ecc.volatile_uncorrectable", "gpu.pcie.width",
                "gpu.temperature.gpu", "gpu.driver.version"} <= ids
        assert record["facts"]["gpu"]["count"] == 8
        assert record["facts"]["gpu"]["model"] == "NVIDIA A100-SXM4-80GB"
        assert record["facts"]["gpu"]["driver_version"] == "535.54.03"


def test_faulty_nodes_fail_with_ids_and_remedies(default_run):
    _, _, document = default_run
    assert document["hosts"]["node03"]["status"] == "fail"
    ecc = [c for c in document["hosts"]["node03"]["checks"]
           if c["id"] == "gpu.ecc.volatile_uncorrectable" and c["status"] == "fail"]
    assert len(ecc) == 1
    assert ecc[0]["component"].startswith("GPU 3 ")
    assert ecc[0]["observed"] == 2
    assert ecc[0]["remedy"] == "reset_gpu"

    width = [c for c in document["hosts"]["node06"]["checks"] if c["id"] == "gpu.pcie.width" and c["status"] == "fail"]
    assert [(c["component"].split(" (")[0], c["observed"], c["remedy"]) for c in width] == [("GPU 5", 8, "reseat")]
    assert document["hosts"]["node06"]["status"] == "fail"

    count = [c for c in document["hosts"]["node08"]["checks"] if c["id"] == "gpu.count.present"]
    assert [(c["status"], c["observed"], c["remedy"]) for c in count] == [("fail", 7, "reseat")]
    assert document["summary"]["hosts"] == {"pass": 5, "warn": 0, "fail": 3, "error": 0, "unreachable": 0}


def test_reports_rendered_from_the_file(default_run):
    tmp_path, _, document = default_run
    run_dir = tmp_path / "out" / "test-run"
    html = (run_dir / "report.html").read_text()
    assert "NOT ACCEPTED" in html
    assert "gpu.ecc.volatile_uncorrectable" in html and "reset_gpu" in html
    markdown = (run_dir / "report.md").read_text()
    assert "node06" in markdown and "gpu.pcie.width" in markdown
    suites = ET.parse(str(run_dir / "junit.xml")).getroot().findall("testsuite")
    by_name = dict((suite.get("name"), suite) for suite in suites)
    assert set(by_name) == set(document["hosts"])
    node03_failures = sum(1 for c in document["hosts"]["node03"]["checks"] if c["status"] == "fail")
    assert int(by_name["node03"].get("failures")) == node03_failures >= 1
    assert int(by_name["node01"].get("failures")) == 0
    summary = (run_dir / "summary.txt").read_text()
    assert "node08       FAIL" in summary


def test_junit_testcases_carry_the_time_their_family_took(default_run):
    tmp_path, _, document = default_run
    timing = document["hosts"]["node01"]["facts"]["timing"]
    assert set(timing) == {"gpu", "xid", "dcgm"} and all(seconds > 0 for seconds in timing.values())
    suites = ET.parse(str(tmp_path / "out" / "test-run" / "junit.xml")).getroot().findall("testsuite")
    node01 = [suite for suite in suites if suite.get("name") == "node01"][0]
    times = [float(case.get("time")) for case in node01.findall("testcase") if case.get("time") is not None]
    assert times and all(value > 0 for value in times)
    # the family's time is shared by its testcases: together they take what the family took
    gpu = [float(case.get("time")) for case in node01.findall("testcase") if case.get("name", "").startswith("gpu.")]
    assert abs(sum(gpu) - timing["gpu"]) < 0.01 * len(gpu) + 0.01


@pytest.fixture(scope="module")
def faults_run(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("faults")
    inventory = start_lab(tmp_path, "faults.yml")
    runner, document = run_playbook(tmp_path, "acceptance.yml", inventory, extravars={"check_gpu_timeout": 3})
    return runner, document


def test_unreachable_and_hung_hosts_do_not_stop_the_run(faults_run):
    runner, document = faults_run
    assert runner.rc == 0, runner.stdout.read()
    assert validate(document) == []
    hosts = document["hosts"]
    assert set(hosts) == {"healthy01", "hang01", "unreach01", "thermal01", "nodriver01", "drvmismatch01", "trunc01"}
    assert hosts["healthy01"]["status"] == "pass"

    assert hosts["unreach01"]["status"] == "unreachable"
    assert hosts["unreach01"]["checks"] == []

    hang = hosts["hang01"]
    assert hang["status"] == "error"
    assert [(c["id"], c["status"], c["observed"]) for c in hang["checks"] if c["id"].startswith("gpu.")] == [
        ("gpu.collect.nvidia_smi", "error", "timed out")]
    assert hang["checks"][0]["message"] == "nvidia-smi: timed out after 3 s (process group killed)"
    # the other families of the hung node still ran
    assert any(c["id"] == "xid.log.readable" and c["status"] == "pass" for c in hang["checks"])


def test_tool_failures_become_error_checks(faults_run):
    _, document = faults_run
    hosts = document["hosts"]
    nodriver = [c for c in hosts["nodriver01"]["checks"] if c["id"].startswith("gpu.")]
    assert [(c["id"], c["status"], c["observed"]) for c in nodriver] == [("gpu.collect.nvidia_smi", "error", "failed")]
    assert nodriver[0]["message"].startswith("nvidia-smi: exited with rc 9: NVIDIA-SMI has failed")
    trunc = [c for c in hosts["trunc01"]["checks"] if c["id"].startswith("gpu.")]
    assert [(c["id"], c["status"], c["observed"]) for c in trunc] == [("gpu.collect.nvidia_smi", "error", "unparsable")]
    assert trunc[0]["message"].startswith("nvidia-smi: ")


def test_thermal_and_driver_faults(faults_run):
    _, document = faults_run
    thermal = checks_by_status(document, "thermal01", ("fail",))
    assert ("gpu.temperature.gpu", "fail") in [(c[0], c[1]) for c in thermal]
    assert ("gpu.throttle.hw_power_brake_slowdown", "fail") in [(c[0], c[1]) for c in thermal]
    assert all(c[2].startswith("GPU 2 ") for c in thermal)
    driver = [c for c in document["hosts"]["drvmismatch01"]["checks"] if c["id"] == "gpu.driver.version"]
    assert [(c["status"], c["observed"], c["remedy"]) for c in driver] == [("fail", "535.129.03", "update_firmware")]


def test_awx_workflow_gets_the_summary_through_set_stats(default_run):
    _, runner, document = default_run
    stats = [event for event in runner.events if event.get("event") == "playbook_on_stats"]
    assert len(stats) == 1
    artifact = stats[0]["event_data"]["artifact_data"]["zhisuan_results"]
    assert artifact["run_id"] == "test-run"
    assert artifact["hosts"] == document["summary"]["hosts"]
    assert artifact["path"].endswith("/test-run/results.json")
    # what the run_summary callback prints, left in the stats by the results and report actions themselves
    data = stats[0]["event_data"]["artifact_data"]
    assert data["zhisuan_run_summary_results"] == [artifact["path"]]
    [report] = data["zhisuan_run_summary_reports"]
    assert report["verdict"] == "not_accepted" and report["summary"]["grade"] == "fail"
    assert report["paths"]["json"] == os.path.join(os.path.dirname(artifact["path"]), "report.json")


def test_a_limited_run_records_only_its_nodes(tmp_path):
    inventory = start_lab(tmp_path, "default.yml")
    runner, document = run_playbook(tmp_path, "acceptance.yml", inventory, tags="gpu", limit="node03,node08")
    assert runner.rc == 0, runner.stdout.read()
    assert validate(document) == []
    assert sorted(document["hosts"]) == ["node03", "node08"]
    assert document["run"]["families"] == ["gpu"]
    assert set(c["id"].split(".")[0] for h in document["hosts"].values() for c in h["checks"]) == {"gpu"}
    assert document["hosts"]["node03"]["facts"]["diagnosis"]["root_cause"]["remedy"] == "reset_gpu"


def test_free_strategy_in_batches_records_the_same_run(default_run, tmp_path):
    """Large fleets: the nodes' play runs with the free strategy in batches of 3; the run still starts once and is
    recorded once, for every node, with the same verdicts as the linear run."""
    _, _, linear = default_run
    inventory = start_lab(tmp_path, "default.yml")
    runner, document = run_playbook(tmp_path, "acceptance.yml", inventory, tags="gpu,xid",
                                    extravars={"zhisuan_strategy": "free", "zhisuan_serial": 3})
    assert runner.rc == 0, runner.stdout.read()[-3000:]
    assert sorted(os.listdir(str(tmp_path / "out"))) == ["latest", "test-run"]
    assert document["run"]["hosts_total"] == 8
    assert dict((name, host["status"]) for name, host in document["hosts"].items()) == \
        dict((name, host["status"]) for name, host in linear["hosts"].items())
    plays = [event["event_data"]["play"] for event in runner.events if event.get("event") == "playbook_on_play_start"]
    # the nodes' play ran once per batch of 3 (8 nodes: 3 batches), the record once
    assert plays.count("GPU acceptance") == 3 and plays.count("Record and report the acceptance run") == 1
