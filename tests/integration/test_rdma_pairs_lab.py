# SPDX-License-Identifier: GPL-3.0-or-later
"""RDMA pair tests on the lab (issue 5): a full mesh over eight nodes whose simulated ib_write_bw meet over real TCP;
the slow node and the slow link of lab/scenarios/pairs.yml are told apart with the right check ids and remedies."""

from __future__ import annotations

import os

import pytest

from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import validate

from .conftest import REPO, run_playbook, start_lab

PLAYBOOK = os.path.join(REPO, "tests", "integration", "playbooks", "rdma_pairs.yml")
FAST = {"zhisuan_thresholds": {"rdma": {"duration": 1}}, "zhisuan_gpu_profile": "a100",
        "check_rdma_pairs_base_port": 28515}


@pytest.fixture(scope="module")
def mesh_run(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("pairs")
    inventory = start_lab(tmp_path, "pairs.yml")
    runner, document = run_playbook(tmp_path, PLAYBOOK, inventory, extravars=FAST)
    return runner, document


def failing(document, host):
    return sorted((c["id"], c["status"], c["remedy"]) for c in document["hosts"][host]["checks"] if c["status"] != "pass")


def test_full_mesh_runs_every_pair_in_seven_rounds(mesh_run):
    runner, document = mesh_run
    assert runner.rc == 0, runner.stdout.read()
    assert validate(document) == []
    matrix = document["cluster"]["fabric"]["rdma_pairs"]
    assert (matrix["test"], matrix["unit"], matrix["floor"], matrix["schedule"], matrix["rounds"]) == (
        "ib_write_bw", "Gb/s", 180, "full_mesh", 7)
    assert len(matrix["pairs"]) == 28
    assert len(set(frozenset((p["a"], p["b"])) for p in matrix["pairs"])) == 28
    healthy = [p["value"] for p in matrix["pairs"] if "node03" not in (p["a"], p["b"]) and {p["a"], p["b"]} != {"node05", "node07"}]
    assert set(healthy) == {201.802}


def test_slow_node_is_the_node(mesh_run):
    _, document = mesh_run
    assert failing(document, "node03") == [("rdma.node.bandwidth", "fail", "investigate")]
    check = [c for c in document["hosts"]["node03"]["checks"] if c["id"] == "rdma.node.bandwidth"][0]
    assert check["observed"] == 100.901
    assert check["message"].startswith("node03 is slow with 7 of its 7 partners (median 100.9 Gb/s)")
    assert document["hosts"]["node03"]["status"] == "fail"


def test_slow_link_is_the_link(mesh_run):
    _, document = mesh_run
    links = [(c["id"], c["status"], c["remedy"], c["observed"]) for c in document["cluster"]["checks"]
             if c["id"].startswith("rdma.pair.")]
    assert links == [("rdma.pair.node05.node07", "fail", "check_cable", 121.081)]
    for host in ("node05", "node07", "node01", "node08"):
        assert failing(document, host) == [], host
        assert document["hosts"][host]["status"] == "pass"
    summary = [c for c in document["cluster"]["checks"] if c["id"] == "rdma.pairs.summary"][0]
    assert (summary["status"], summary["observed"]) == ("fail", "20/28 pairs at the floor")


@pytest.fixture(scope="module")
def random_run(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("pairs-random")
    inventory = start_lab(tmp_path, "pairs.yml")
    extra = dict(FAST, zhisuan_rdma_schedule="random", check_rdma_pairs_base_port=29515)
    return run_playbook(tmp_path, PLAYBOOK, inventory, extravars=extra)


def test_random_pairs_with_a_second_pass_find_the_slow_node(random_run):
    runner, document = random_run
    assert runner.rc == 0, runner.stdout.read()
    assert validate(document) == []
    matrix = document["cluster"]["fabric"]["rdma_pairs"]
    assert matrix["schedule"] == "random" and matrix["rounds"] >= 2
    first = [p for p in matrix["pairs"] if p["round"] == 1]
    assert len(first) == 4
    assert [p["round"] for p in matrix["pairs"]] == sorted(p["round"] for p in matrix["pairs"])
    # node03 was low with its first partner and again with the known-good node of the second pass
    node03 = [p for p in matrix["pairs"] if "node03" in (p["a"], p["b"])]
    assert len(node03) == 2 and set(p["value"] for p in node03) == {100.901}
    assert failing(document, "node03") == [("rdma.node.bandwidth", "fail", "investigate")]
    for host in ("node01", "node02", "node04", "node06", "node08"):
        assert failing(document, host) == [], host
