# SPDX-License-Identifier: GPL-3.0-or-later
"""Shared-component localisation on the SSH lab (issue 16): three nodes behind leaf02 lose eth1 at once and one node
behind leaf01 has a GPU fault. The acceptance record names leaf02 as the shared cause, and the remediation plan made
from that record holds leaf02's nodes for one ticket while the GPU node gets its reset."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import validate

from .conftest import REPO, run_playbook, start_lab
from .test_remediate_lab import remediation, run_check_mode

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the SSH lab creates network namespaces (root only)")
LEAF02_DOWN = ["node05", "node06", "node07"]


@pytest.fixture(scope="module")
def leaf(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("fleet")
    inventory = start_lab(tmp_path, "fabric-leaf.yml")
    try:
        runner, document = run_playbook(tmp_path, "acceptance.yml", inventory,
                                        extravars={"zhisuan_acceptance_families": ["gpu", "nic", "cabling"]})
        yield tmp_path, inventory, runner, document
    finally:
        subprocess.run([sys.executable, os.path.join(REPO, "lab", "labctl.py"), "down", "--dir", str(tmp_path / "lab")],
                       capture_output=True, timeout=120, check=False)


def test_the_record_names_the_leaf_switch(leaf):
    _, _, runner, document = leaf
    assert runner.rc == 0, runner.stdout.read()[-3000:]
    assert validate(document) == []
    for node in LEAF02_DOWN:
        assert ("nic.link.state", "eth1") in set((c["id"], c["component"]) for c in document["hosts"][node]["checks"]
                                                 if c["status"] == "fail")
    shared = [c for c in document["cluster"]["checks"] if c["id"].startswith("fleet.shared.")]
    assert sorted(c["id"] for c in shared) == ["fleet.shared.leaf.leaf02"]
    assert shared[0]["status"] == "fail" and shared[0]["remedy"] == "investigate"
    assert shared[0]["message"].startswith("leaf leaf02: 3 of its 4 nodes fail")
    assert "nic: failing node05, node06, node07" in shared[0]["evidence"]


def test_the_plan_holds_the_leaf_nodes_and_resets_the_gpu_node(leaf):
    tmp_path, inventory, _, source = leaf
    results = str(tmp_path / "out" / "test-run" / "results.json")
    plan_dir = tmp_path / "plan"
    plan_dir.mkdir()
    runner, document = run_check_mode(plan_dir, inventory, {"zhisuan_remediate_from": results,
                                                            "zhisuan_history_dir": str(tmp_path / "history")})
    assert runner.rc == 0, runner.stdout.read()[-3000:]
    data = document["cluster"]["remediation"]
    assert data["shared"] == LEAF02_DOWN and data["order"] == ["node02"] and data["breaker_tripped"] is False
    assert remediation(document, "node02")["message"] == "check mode: reset_gpu would run (automatic, batch 1)"
    ids = set(c["id"] for c in document["cluster"]["checks"])
    assert {"fleet.shared.leaf.leaf02", "remediate.shared.leaf_leaf02"} <= ids
    for node in LEAF02_DOWN:
        record = remediation(document, node)
        assert (record["outcome"], record["action"]) == ("shared_cause", "ticket")
        assert record["message"].startswith("shared cause: leaf leaf02 fails ")
        assert source["hosts"][node]["status"] == "fail"
