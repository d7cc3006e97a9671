# SPDX-License-Identifier: GPL-3.0-or-later
"""NCCL bus bandwidth on the lab (issue 5): eight A100 nodes, node05 30 % low in collectives (lab/scenarios/nccl.yml).
The slow node fails its own all_reduce_perf busbw, the healthy nodes pass, the run over all nodes is below the
cluster floor, and the bisection names node05."""

from __future__ import annotations

import os

import pytest

from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import validate

from .conftest import run_playbook, start_lab

PLAYBOOK = os.path.join(os.path.dirname(__file__), "playbooks", "nccl.yml")
NODES = ["node%02d" % index for index in range(1, 9)]


@pytest.fixture(scope="module")
def nccl_run(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("nccl")
    inventory = start_lab(tmp_path, "nccl.yml")
    return run_playbook(tmp_path, PLAYBOOK, inventory)


def _checks(document, host):
    return dict((c["id"], c) for c in document["hosts"][host]["checks"])


def test_run_completes_and_validates(nccl_run):
    runner, document = nccl_run
    assert runner.rc == 0, runner.stdout.read()
    assert validate(document) == []


def test_slow_node_fails_and_healthy_nodes_pass(nccl_run):
    _, document = nccl_run
    slow = _checks(document, "node05")["nccl.all_reduce_perf.busbw"]
    assert (slow["status"], slow["remedy"], slow["observed"]) == ("fail", "investigate", 164.52)
    assert slow["expected"] == ">= 228 GB/s at 8 GiB"
    assert document["hosts"]["node05"]["status"] == "fail"
    for host in NODES:
        if host != "node05":
            assert document["hosts"][host]["status"] == "pass", host
            assert _checks(document, host)["nccl.all_reduce_perf.busbw"]["observed"] == 235.03
            assert _checks(document, host)["nccl.all_reduce_perf.wrong"]["status"] == "pass"


def test_cluster_run_is_slow_and_bisection_names_the_node(nccl_run):
    _, document = nccl_run
    cluster = dict(((c["id"], c["component"]), c) for c in document["cluster"]["checks"])
    run = cluster[("nccl.all_reduce_perf.busbw", "8 nodes: " + ", ".join(NODES))]
    assert (run["host"], run["status"], run["observed"]) == ("cluster", "fail", 164.52)
    assert run["expected"] == ">= 185 GB/s at 8 GiB"
    suspects = [c for c in document["cluster"]["checks"] if c["id"] == "nccl.bisect.suspect"]
    assert [(c["component"], c["status"], c["remedy"]) for c in suspects] == [("node05", "fail", "drain")]
    assert document["cluster"]["nccl_bisect"]["suspects"] == ["node05"]


def test_fabric_nccl_curves(nccl_run):
    _, document = nccl_run
    curves = document["cluster"]["fabric"]["nccl"]
    assert [(c["scope"], c["busbw"]) for c in curves] == [(host, 164.52 if host == "node05" else 235.03) for host in NODES] + [
        ("cluster", 164.52)]
    cluster = curves[-1]
    assert cluster["nodes"] == NODES and cluster["unit"] == "GB/s" and cluster["floor"] == 185
    assert cluster["judged_bytes"] == 8589934592
    assert set(cluster["points"][0]) == {"bytes", "algbw", "busbw", "time_us", "wrong"}
    assert document["hosts"]["node01"]["facts"]["nccl"]["all_reduce_perf"]["floor"] == 228
