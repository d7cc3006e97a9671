# SPDX-License-Identifier: GPL-3.0-or-later
"""GPU operations on the lab (issue 3): the deep diagnosis finds each fault with the right remedy, an application
XID alone does not fail a node, a hung dcgmi or gpu_burn is an error for that check only; the burn-in run."""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import validate

from .conftest import run_playbook, start_lab

FAST = {"zhisuan_burn_duration": 5, "check_burn_timeout": 8, "check_burn_poll_delay": 1, "check_burn_samples": 1,
        "check_dcgm_timeout": 4, "check_dcgm_health_timeout": 4}


def failing(document, host, statuses=("fail",)):
    return sorted(set((c["id"], c["remedy"]) for c in document["hosts"][host]["checks"] if c["status"] in statuses))


@pytest.fixture(scope="module")
def deep_run(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("gpuops")
    inventory = start_lab(tmp_path, "gpu-ops.yml")
    extra = dict(FAST, zhisuan_diag_level="deep")
    runner, document = run_playbook(tmp_path, "diagnose.yml", inventory, extravars=extra)
    return tmp_path, runner, document


def test_deep_diagnosis_runs_to_the_end(deep_run):
    _, runner, document = deep_run
    assert runner.rc == 0, runner.stdout.read()
    assert validate(document) == []
    assert document["run"]["kind"] == "diagnose"
    assert document["run"]["families"] == ["gpu", "xid", "dcgm", "burn"]
    assert document["hosts"]["healthy01"]["status"] == "pass"
    assert document["hosts"]["healthy01"]["facts"]["diagnosis"]["status"] == "healthy"


def test_xid79_power_cycle_is_the_root_cause(deep_run):
    _, _, document = deep_run
    host = document["hosts"]["xid79"]
    assert ("xid.79.events", "power_cycle") in failing(document, "xid79")
    assert ("gpu.count.present", "reseat") in failing(document, "xid79")
    diagnosis = host["facts"]["diagnosis"]
    assert (diagnosis["root_cause"]["id"], diagnosis["root_cause"]["remedy"]) == ("xid.79.events", "power_cycle")
    assert diagnosis["remedies"][:2] == ["power_cycle", "reseat"]


def test_xid48_with_63_drains_and_resets(deep_run):
    _, _, document = deep_run
    xid48 = [c for c in document["hosts"]["xid48"]["checks"] if c["id"] == "xid.48.events"]
    assert [(c["status"], c["remedy"]) for c in xid48] == [("fail", "reset_gpu")]
    assert "DRAIN_AND_RESET" in xid48[0]["message"]
    assert xid48[0]["component"].startswith("GPU 2 ")


def test_nvlink_dcgm_and_slow_burn_are_found(deep_run):
    _, _, document = deep_run
    assert failing(document, "nvlink01") == [("gpu.nvlink.links", "reset_gpu")]
    assert failing(document, "dcgm01") == [("dcgm.memory.result", "reset_gpu")]
    slow = [c for c in document["hosts"]["slowburn01"]["checks"] if c["status"] == "fail"]
    assert set(c["id"] for c in slow) <= {"burn.gflops.throughput", "burn.gflops.peers"} and slow
    assert all(c["component"].startswith("GPU 6 ") for c in slow)


def test_one_gpu_out_of_the_nvlink_fabric_is_reset(deep_run):
    # issue 24 item 1: GPU 5 failed fabric registration while the other seven joined
    _, _, document = deep_run
    assert failing(document, "fabric01") == [("gpu.fabric.state", "reset_gpu")]
    fabric = [c for c in document["hosts"]["fabric01"]["checks"] if c["id"] == "gpu.fabric.state"]
    assert [c["component"].split(" (")[0] for c in fabric if c["status"] == "fail"] == ["GPU 5"]
    assert "Insufficient Resources" in fabric[5]["message"]
    diagnosis = document["hosts"]["fabric01"]["facts"]["diagnosis"]
    assert (diagnosis["root_cause"]["id"], diagnosis["root_cause"]["remedy"]) == ("gpu.fabric.state", "reset_gpu")


def test_row_remap_pending_resets_and_failure_is_an_rma(deep_run):
    # issue 24 item 3 on the A10G capture's row remapper
    _, _, document = deep_run
    found = failing(document, "remap01")
    assert ("gpu.remap.pending", "reset_gpu") in found and ("gpu.remap.failure", "rma") in found
    # (the A10G capture itself runs its link at x8 of x16: gpu.pcie.width fails on every GPU of this node too)
    assert [(c["id"], c["component"].split(" (")[0], c["remedy"]) for c in document["hosts"]["remap01"]["checks"]
            if c["status"] == "fail" and c["id"].startswith("gpu.remap.")] == [
        ("gpu.remap.pending", "GPU 0", "reset_gpu"), ("gpu.remap.failure", "GPU 1", "rma")]
    assert "rma" in document["hosts"]["remap01"]["facts"]["diagnosis"]["remedies"]


def test_a_gpu_hotter_than_its_peers_warns(deep_run):
    # issue 24 item 4: 33 degC above its peers' median at the same load, far below its slowdown limit
    _, _, document = deep_run
    host = document["hosts"]["hot01"]
    assert host["status"] == "warn", failing(document, "hot01", ("fail", "error", "warn"))
    assert failing(document, "hot01", ("fail", "error", "warn")) == [("gpu.temperature.peers", "investigate")]
    warned = [c for c in host["checks"] if c["status"] == "warn"]
    assert [c["component"].split(" (")[0] for c in warned] == ["GPU 6"]


def test_application_xid_alone_is_not_a_node_fault(deep_run):
    _, _, document = deep_run
    host = document["hosts"]["xid13"]
    assert host["status"] == "warn", failing(document, "xid13", ("fail", "error", "warn"))
    assert [(c["status"], c["remedy"]) for c in host["checks"] if c["id"] == "xid.13.events"] == [("warn", "restart_app")]


def test_hung_tools_are_errors_for_their_checks_only(deep_run):
    _, _, document = deep_run
    dcgm = document["hosts"]["hangdcgm01"]
    assert dcgm["status"] == "error"
    # dcgmi diag and dcgmi health both hang: one row each, with their own ids (never two identical rows)
    assert sorted(c["id"] for c in dcgm["checks"] if c["status"] == "error") == [
        "dcgm.collect.dcgmi", "dcgm.collect.dcgmi_health"]
    assert all(c["observed"] == "timed out" for c in dcgm["checks"] if c["status"] == "error")
    assert any(c["id"] == "gpu.count.present" and c["status"] == "pass" for c in dcgm["checks"])
    burn = document["hosts"]["hangburn01"]
    assert [(c["id"], c["observed"]) for c in burn["checks"] if c["status"] == "error"] == [
        ("burn.collect.gpu_burn", "timed out")]
    assert burn["checks"][0]["id"] == "gpu.count.present"


def test_a_mig_layout_that_differs_from_the_bill_of_materials(deep_run):
    # GPU 3 of mig01 in MIG mode with 4 MIG devices, 7 expected (issue 24 item 6)
    _, _, document = deep_run
    checks = document["hosts"]["mig01"]["checks"]
    mig = [c for c in checks if c["id"] == "gpu.mig.mode"]
    assert [(c["status"], c["observed"], c["expected"], c["remedy"]) for c in mig] == [("fail", 4, "== 7", "investigate")]
    assert mig[0]["component"].startswith("GPU 3 ")
    assert failing(document, "mig01") == [("gpu.mig.mode", "investigate")]
    # the burn-in names GPU 3 as not burned (skip with the reason), and no GPU is counted missing
    untested = [c for c in checks if c["id"] == "burn.mig.untested"]
    assert [(c["status"], c["component"]) for c in untested] == [("skip", "GPU 3")]
    assert [c["status"] for c in checks if c["id"] in ("gpu.count.present", "burn.count.tested")] == ["pass", "pass"]
    diagnosis = document["hosts"]["mig01"]["facts"]["diagnosis"]
    assert (diagnosis["root_cause"]["id"], diagnosis["root_cause"]["remedy"]) == ("gpu.mig.mode", "investigate")


def test_evidence_bundles_for_failing_nodes_only(deep_run):
    tmp_path, _, document = deep_run
    evidence = tmp_path / "out" / "test-run" / "evidence"
    assert sorted(os.listdir(str(evidence))) == sorted(
        h for h, r in document["hosts"].items() if r["status"] in ("fail", "error"))
    bundle = evidence / "xid79"
    assert sorted(os.listdir(str(bundle))) == ["checks.json", "facts.json", "kernel-log-xid.txt", "nvidia-smi-q.xml"]
    assert "): 79, " in (bundle / "kernel-log-xid.txt").read_text()
    assert (bundle / "nvidia-smi-q.xml").read_text().count("<gpu id=") == 7
    assert "xid.79.events" in [c["id"] for c in json.loads((bundle / "checks.json").read_text())]
    assert document["hosts"]["xid79"]["facts"]["evidence"] == str(bundle)


def test_burnin_run(tmp_path):
    inventory = start_lab(tmp_path, "gpu-ops.yml")
    runner, document = run_playbook(tmp_path, "burnin.yml", inventory, extravars=dict(FAST),
                                    limit="healthy01,slowburn01,hangburn01")
    assert runner.rc == 0, runner.stdout.read()
    assert validate(document) == []
    assert document["run"]["kind"] == "burnin"
    assert set(document["hosts"]) == {"healthy01", "slowburn01", "hangburn01"}
    assert document["hosts"]["healthy01"]["status"] == "pass"
    stability = [c for c in document["hosts"]["healthy01"]["checks"] if c["id"].startswith("burn.stability.")]
    assert stability and all(c["status"] in ("pass", "skip") for c in stability)
    assert document["hosts"]["slowburn01"]["status"] == "fail"
    assert document["hosts"]["hangburn01"]["status"] == "error"
