# SPDX-License-Identifier: GPL-3.0-or-later
"""Pair-matrix rules: a slow node is told from a slow link; timeouts and errors; the cluster data shape."""

from __future__ import annotations

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._judge import rdma_pairs
from ansible_collections.zhisuan.ops.plugins.module_utils._net import schedule

NODES = ["node%02d" % i for i in range(1, 9)]


def mesh(values, default=391.2, nodes=NODES):
    """Full-mesh pair records; ``values`` maps frozenset({a, b}) -> value (Gb/s)."""
    pairs = []
    for number, batch in enumerate(schedule.assign_ports(schedule.circle(nodes)), start=1):
        for pair in batch:
            key = frozenset((pair["server"], pair["client"]))
            pairs.append(dict(pair, round=number, status="ok", value=values.get(key, default)))
    return pairs


def by_id(checks, check_id):
    return [c for c in checks if c["id"] == check_id]


def test_slow_node_and_slow_link_are_told_apart():
    values = dict((frozenset(("node03", other)), 195.6) for other in NODES if other != "node03")
    values[frozenset(("node05", "node07"))] = 180.0
    result = rdma_pairs.analyze(mesh(values), floor=360, schedule="full_mesh")
    assert result["slow_nodes"] == ["node03"]
    node03 = by_id(result["host_checks"]["node03"], "rdma.node.bandwidth")[0]
    assert (node03["status"], node03["remedy"], node03["observed"]) == ("fail", "investigate", 195.6)
    assert node03["message"].startswith("node03 is slow with 7 of its 7 partners (median 195.6 Gb/s)")
    for node in ("node05", "node07", "node01"):
        check = by_id(result["host_checks"][node], "rdma.node.bandwidth")[0]
        assert check["status"] == "pass", check
    links = [c for c in result["cluster_checks"] if c["id"].startswith("rdma.pair.")]
    assert len(links) == 1
    link = links[0]
    assert link["id"] == "rdma.pair.node05.node07"
    assert link["component"] in ("node05 <-> node07", "node07 <-> node05")
    assert (link["host"], link["status"], link["remedy"], link["observed"]) == ("cluster", "fail", "check_cable", 180.0)
    assert "while both nodes reach the floor with their other partners" in link["message"]
    summary = by_id(result["cluster_checks"], "rdma.pairs.summary")[0]
    assert (summary["status"], summary["observed"]) == ("fail", "20/28 pairs at the floor")
    assert result["slow_links"] == [link["component"]]


def test_two_slow_nodes_in_a_mesh():
    slow = ("node02", "node06")
    values = {}
    for node in slow:
        for other in NODES:
            if other != node:
                values[frozenset((node, other))] = 150.0
    result = rdma_pairs.analyze(mesh(values), floor=360)
    assert sorted(result["slow_nodes"]) == ["node02", "node06"]
    assert [c for c in result["cluster_checks"] if c["id"].startswith("rdma.pair.")] == []


def test_healthy_mesh_passes_with_the_cluster_data_shape():
    result = rdma_pairs.analyze(mesh({}), floor=360, schedule="full_mesh", nodes=NODES)
    assert result["slow_nodes"] == [] and result["suspects"] == [] and result["good"] == NODES
    statuses = set(c["status"] for checks in result["host_checks"].values() for c in checks)
    assert statuses == {"pass"}
    data = result["cluster_data"]["fabric"]["rdma_pairs"]
    assert sorted(data) == ["floor", "nodes", "pairs", "rounds", "schedule", "test", "unit"]
    assert (data["test"], data["unit"], data["floor"], data["schedule"], data["rounds"]) == ("ib_write_bw", "Gb/s", 360, "full_mesh", 7)
    assert len(data["pairs"]) == 28
    assert sorted(data["pairs"][0]) == ["a", "b", "round", "status", "value"]
    assert data["pairs"][0]["status"] == "pass"
    assert rdma_pairs.summarize(result)["low_pairs"] == 0


def test_random_pass_then_repair_finds_the_slow_node():
    first = [{"server": "a", "client": "b", "round": 1, "status": "ok", "value": 190.0},
             {"server": "c", "client": "d", "round": 1, "status": "ok", "value": 392.0}]
    one = rdma_pairs.analyze(first, floor=360, schedule="random")
    assert one["suspects"] == ["a", "b"] and one["good"] == ["c", "d"]
    warn = by_id(one["host_checks"]["a"], "rdma.node.bandwidth")[0]
    assert (warn["status"], warn["remedy"]) == ("warn", "investigate")
    assert warn["message"] == "a is low with b, its only measured partner: node or link cannot be told apart; re-pair it with a known-good node"
    pair = by_id(one["cluster_checks"], "rdma.pair.a.b")[0]
    assert (pair["status"], pair["remedy"]) == ("fail", "investigate")
    second = [{"server": "c", "client": "a", "round": 2, "status": "ok", "value": 188.0},
              {"server": "d", "client": "b", "round": 2, "status": "ok", "value": 391.0}]
    both = rdma_pairs.analyze(first + second, floor=360, schedule="random")
    assert both["slow_nodes"] == ["a"]
    assert by_id(both["host_checks"]["b"], "rdma.node.bandwidth")[0]["status"] == "pass"
    assert [c["id"] for c in both["cluster_checks"] if c["id"].startswith("rdma.pair.")] == []


def test_timeouts_and_errors_are_error_checks():
    pairs = [{"server": "a", "client": "b", "round": 1, "status": "timeout", "value": None,
              "message": "ib_write_bw: timed out after 30 s (process group killed)"},
             {"server": "c", "client": "d", "round": 1, "status": "error", "value": None,
              "message": "ib_write_bw: no RDMA device found"}]
    result = rdma_pairs.analyze(pairs, floor=360)
    timeout = by_id(result["host_checks"]["a"], "rdma.pair.timeout")[0]
    assert (timeout["status"], timeout["remedy"], timeout["observed"]) == ("error", "investigate", 1)
    assert timeout["message"] == "1 ib_write_bw pair test(s) of a timed out (with b): ib_write_bw: timed out after 30 s (process group killed)"
    assert by_id(result["host_checks"]["a"], "rdma.pair.error")[0]["status"] == "pass"
    assert by_id(result["host_checks"]["d"], "rdma.pair.error")[0]["status"] == "error"
    assert by_id(result["host_checks"]["d"], "rdma.node.bandwidth")[0]["status"] == "error"
    assert by_id(result["cluster_checks"], "rdma.pairs.summary")[0]["status"] == "error"
    assert [p["status"] for p in result["cluster_data"]["fabric"]["rdma_pairs"]["pairs"]] == ["error", "error"]
    assert result["suspects"] == ["a", "b", "c", "d"]


def test_pair_ids_fit_the_check_id_pattern():
    pairs = [{"server": "GPU-Node.7", "client": "a-1", "round": 1, "status": "ok", "value": 10.0}]
    checks = rdma_pairs.analyze(pairs, floor=360)["cluster_checks"]
    assert checks[0]["id"] == "rdma.pair.a_1.gpu_node_7"
    assert checks[0]["component"] == "GPU-Node.7 <-> a-1"


def test_loopback_low_is_a_slow_node():
    pairs = [{"server": "a", "client": "a", "round": 1, "status": "ok", "value": 120.0},
             {"server": "b", "client": "b", "round": 1, "status": "ok", "value": 390.0}]
    result = rdma_pairs.analyze(pairs, floor=360, schedule="loopback")
    assert result["slow_nodes"] == ["a"]
    check = by_id(result["host_checks"]["a"], "rdma.node.bandwidth")[0]
    assert (check["status"], check["message"]) == ("fail", "ib_write_bw loopback on a is 120 Gb/s, under the floor")


def test_node_without_any_pair_is_an_error():
    result = rdma_pairs.analyze(mesh({}, nodes=NODES[:2]), floor=360, nodes=NODES[:3])
    check = by_id(result["host_checks"]["node03"], "rdma.node.bandwidth")[0]
    assert (check["status"], check["observed"]) == ("error", "no result")


def test_latency_ceiling():
    values = dict((frozenset(("node04", other)), 9.5) for other in NODES if other != "node04")
    result = rdma_pairs.analyze(mesh(values, default=1.9), ceiling=5.0, unit="usec", test="ib_write_lat")
    assert result["slow_nodes"] == ["node04"]
    assert by_id(result["host_checks"]["node04"], "rdma.node.bandwidth")[0]["expected"] == "<= 5 usec"


def test_floor_or_ceiling_is_required():
    with pytest.raises(ValueError, match="^a bandwidth floor or a latency ceiling is needed to judge RDMA pairs$"):
        rdma_pairs.analyze([], floor=None)
    with pytest.raises(ValueError, match="^rdma floor must be a number, got 'fast'$"):
        rdma_pairs.analyze([], floor="fast")
