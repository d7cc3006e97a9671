# SPDX-License-Identifier: GPL-3.0-or-later
"""InfiniBand cabling and RoCE ECN / DSCP on the SSH lab (issue 16): lab/scenarios/fabric-ib-roce.yml serves the
fabric's iblinkinfo (the real EDR capture, n02's cable edited onto switch port 5), each node's mlnx_qos and ECN
sysfs files (real captures; n03's ECN off for priority 3 and DSCP 26 on priority 5). acceptance.yml --tags cabling
fails n02's IB link with check_cable; --tags nic fails the ECN and DSCP consistency of eth0 naming n03, with tune."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import validate

from .conftest import REPO, run_playbook, start_lab

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the SSH lab creates network namespaces (root only)")
SWITCH = "MF0;SB7700:MSB7700/U1"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("ibroce")
    inventory = start_lab(tmp_path, "fabric-ib-roce.yml")
    try:
        runs = {}
        for tag in ("cabling", "nic"):
            (tmp_path / tag).mkdir()
            runs[tag] = run_playbook(tmp_path / tag, "acceptance.yml", inventory, tags=tag)
        yield runs
    finally:
        subprocess.run([sys.executable, os.path.join(REPO, "lab", "labctl.py"), "down", "--dir", str(tmp_path / "lab")],
                       capture_output=True, timeout=120, check=False)


def checks(document, host, check_id):
    return [c for c in document["hosts"][host]["checks"] if c["id"] == check_id]


def test_the_miswired_ib_cable_fails_with_check_cable(lab):
    runner, document = lab["cabling"]
    assert runner.rc == 0, runner.stdout.read()[-3000:]
    assert validate(document) == []
    [bad] = checks(document, "n02", "cabling.ib.hca_1_1.neighbor")
    assert (bad["status"], bad["remedy"], bad["observed"]) == ("fail", "check_cable", "%s port 5" % SWITCH)
    assert bad["message"] == "n02 HCA-1/1 is miswired: the fabric sees it on %s port 5, the plan says %s port 17" % (
        SWITCH, SWITCH)
    [ok] = checks(document, "n01", "cabling.ib.hca_1_1.neighbor")
    assert (ok["status"], ok["observed"]) == ("pass", "%s port 18" % SWITCH)
    # the Ethernet links are LLDP's, and all as planned; n03 is in no IB link of the plan
    assert checks(document, "n03", "cabling.ib.hca_1_1.neighbor") == []
    assert all(c["status"] == "pass" for host in ("n01", "n02", "n03") for c in document["hosts"][host]["checks"]
               if c["id"].startswith("cabling.eth"))


def test_ecn_and_dscp_of_the_misconfigured_node_fail_with_tune(lab):
    runner, document = lab["nic"]
    assert runner.rc == 0, runner.stdout.read()[-3000:]
    assert validate(document) == []
    cluster = dict(((c["id"], c["component"]), c) for c in document["cluster"]["checks"])
    for check_id in ("nic.ecn.consistency", "nic.dscp.consistency"):
        bad = cluster[(check_id, "rail eth0")]
        assert (bad["status"], bad["remedy"]) == ("fail", "tune"), bad
        assert "on 1 node(s): n03 has " in bad["message"] and "n01" not in bad["message"], bad["message"]
        assert cluster[(check_id, "rail eth1")]["status"] == "pass"
    assert "n03 has np [0, 1, 2, 4, 5, 6, 7] rp [0, 1, 2, 3, 4, 5, 6, 7]" in cluster[("nic.ecn.consistency", "rail eth0")][
        "message"]
    assert "p3:24-25,27-31" in cluster[("nic.dscp.consistency", "rail eth0")]["message"]
    assert cluster[("nic.trust.consistency", "rail eth0")]["status"] == "pass"
