# SPDX-License-Identifier: GPL-3.0-or-later
"""Fabric acceptance on the SSH lab (issue 5): eight network namespaces reached over SSH, cabled by veths to two
leaves and a spine, real ip/ethtool/lldpd, simulated optics, perftest and nccl-tests. The acceptance playbook finds
each fault of lab/scenarios/fabric.yml with its check id and remedy, the healthy nodes pass, and the report draws the
pair heatmap and the bus-bandwidth curve."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import validate

from .conftest import REPO, run_playbook, start_lab

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the SSH lab creates network namespaces (root only)")


@pytest.fixture(scope="module")
def fabric(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("fabric")
    inventory = start_lab(tmp_path, "fabric.yml")
    try:
        runner, document = run_playbook(tmp_path, "acceptance.yml", inventory)
        yield tmp_path, runner, document
    finally:
        subprocess.run([sys.executable, os.path.join(REPO, "lab", "labctl.py"), "down", "--dir", str(tmp_path / "lab")],
                       capture_output=True, timeout=120, check=False)


def failing(document, host):
    return sorted(set((c["id"], c["component"], c["remedy"]) for c in document["hosts"][host]["checks"]
                      if c["status"] == "fail"))


def cluster_failing(document):
    return sorted(set((c["id"], c["remedy"]) for c in document["cluster"]["checks"] if c["status"] in ("fail", "error")))


def test_the_run_over_ssh_is_recorded(fabric):
    _, runner, document = fabric
    assert runner.rc == 0, runner.stdout.read()[-3000:]
    assert validate(document) == []
    assert document["run"]["families"] == ["gpu", "xid", "dcgm", "nic", "rdma", "cabling", "nccl", "storage"]
    # every node answered over SSH with its own hostname-named facts, none unreachable
    assert document["summary"]["hosts"]["unreachable"] == 0 and document["run"]["hosts_total"] == 8


def test_each_fault_has_its_check_and_remedy(fabric):
    _, _, document = fabric
    assert failing(document, "node02") == [("cabling.eth1.neighbor", "eth1", "check_cable")]
    assert failing(document, "node03") == [("nic.optic.alarm", "eth0", "clean_optic"),
                                           ("nic.optic.rx_power", "eth0", "clean_optic")]
    assert failing(document, "node04") == [("nic.mtu.value", "eth0", "tune")]
    assert failing(document, "node05") == [("cabling.eth1.neighbor", "eth1", "check_cable"),
                                           ("nic.link.state", "eth1", "check_cable")]
    assert [(check_id, remedy) for check_id, _, remedy in failing(document, "node06")] == [
        ("rdma.node.bandwidth", "investigate")]
    assert [(check_id, remedy) for check_id, _, remedy in failing(document, "node01")] == [
        ("nccl.all_reduce_perf.busbw", "investigate")]
    for host in ("node07", "node08"):  # the slow link is the pair's, not either node's
        assert document["hosts"][host]["status"] == "pass", failing(document, host)


def test_cluster_checks_name_the_slow_link_the_mtu_and_the_slow_nccl_node(fabric):
    _, _, document = fabric
    assert cluster_failing(document) == [
        ("nccl.all_reduce_perf.busbw", "investigate"), ("nccl.bisect.suspect", "drain"),
        ("nic.mtu.consistency", "tune"), ("rdma.pair.node07.node08", "check_cable"),
        ("rdma.pairs.summary", "investigate")]
    suspects = [c for c in document["cluster"]["checks"] if c["id"] == "nccl.bisect.suspect" and c["status"] == "fail"]
    assert [c["component"] for c in suspects] == ["node01"] or "node01" in suspects[0]["message"]
    pairs = document["cluster"]["fabric"]["rdma_pairs"]
    assert pairs["schedule"] == "full_mesh" and pairs["rounds"] == 7 and len(pairs["pairs"]) == 28
    links = document["cluster"]["fabric"]["cabling"]["links"]
    assert sorted((link["node"], link["port"], link["status"]) for link in links if link["status"] != "ok") == [
        ("node02", "eth1", "miswired"), ("node05", "eth1", "missing")]


def test_the_report_draws_the_heatmap_and_the_busbw_curve(fabric):
    tmp_path, _, _ = fabric
    html = (tmp_path / "out" / "test-run" / "report.html").read_text()
    heatmap = html[html.index('<figure class="rdma-heatmap">'):]
    assert heatmap.index("<svg") < heatmap.index("</figure>")
    assert html.count('<figure class="nccl-curve"><svg') >= 2  # a node's curve and the cluster's
    assert "node02" in html and "miswired" in html
