# SPDX-License-Identifier: GPL-3.0-or-later
"""zhisuan.ops.fabric_consistency (the controller-side action): hostvars in, cluster checks, per-host checks and the
cabling map out, with facts built from the real lldpd and ibstat captures."""

from __future__ import annotations

import os
from types import SimpleNamespace
from unittest.mock import MagicMock

import pytest
from ansible.errors import AnsibleActionFail

from ansible_collections.zhisuan.ops.plugins.action.fabric_consistency import ActionModule
from ansible_collections.zhisuan.ops.plugins.module_utils._net import ib, lldp

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures")


def _read(*parts):
    with open(os.path.join(FIXTURES, *parts)) as handle:
        return handle.read()


def run_action(args, task_vars):
    task = SimpleNamespace(args=args, check_mode=False, async_val=0, action="zhisuan.ops.fabric_consistency")
    connection = MagicMock()
    connection._shell.tmpdir = "/nonexistent"
    # the sixth argument (shared_loader_obj) is required by ansible-core 2.16, optional since 2.17
    action = ActionModule(task, connection, MagicMock(), MagicMock(), MagicMock(), MagicMock())
    return action.run(task_vars=task_vars)


def _net(lldp_name, mtu):
    return {"interfaces": {"eth0": {"mtu": mtu, "numa_node": None}, "eth1": {"mtu": mtu, "numa_node": None}},
            "ib": ib.parse_ibstat(_read("rdma", "ibstat-h100-node-8x-ndr400-all-active.txt")),
            "lldp": lldp.first_neighbors(lldp.parse_neighbors(_read("lldp", lldp_name))), "lldp_error": None, "gpu_numa": {}}


PLAN = """---
links:
  - {node: node01, port: eth0, switch: leaf01, switch_port: swp1}
  - {node: node01, port: eth1, switch: leaf01, switch_port: swp2}
  - {node: node02, port: eth0, switch: leaf01, switch_port: swp1}
  - {node: node02, port: eth1, switch: leaf01, switch_port: swp2}
switches:
  leaf01: {tier: leaf, uplink: spine01}
fabric:
  mtu: 9000
"""


def test_action_reads_hostvars_and_plan(tmp_path):
    plan = tmp_path / "cabling-plan.yml"
    plan.write_text(PLAN)
    task_vars = {"ansible_play_hosts_all": ["node01", "node02", "node03"], "hostvars": {
        "node01": {"check_net_facts": _net("lldpcli-json-show-neighbors-2if.json", 9000)},
        "node02": {"check_net_facts": _net("lldpcli-json-show-neighbors-2if-renamed-swp7.json", 1500)},
        "node03": {}}}
    out = run_action({"plan": str(plan)}, task_vars)
    assert out["changed"] is False
    mtu = [c for c in out["cluster_checks"] if c["id"] == "nic.mtu.consistency" and c["component"] == "rail eth1"][0]
    assert mtu["status"] == "fail" and mtu["message"] == (
        "MTU on rail eth1 differs from the site plan (9000) on 1 node(s): node02 has 1500")
    assert sorted(out["host_checks"]) == ["node01", "node02"]
    links = out["cluster_data"]["fabric"]["cabling"]["links"]
    assert [(item["node"], item["port"], item["status"]) for item in links] == [
        ("node01", "eth0", "ok"), ("node01", "eth1", "ok"), ("node02", "eth0", "ok"), ("node02", "eth1", "miswired")]


def test_action_without_plan(tmp_path):
    out = run_action({"hosts": ["node01"], "plan": ""}, {"hostvars": {
        "node01": {"check_net_facts": _net("lldpcli-json-show-neighbors-1if.json", 9000)}}})
    assert out["cluster_data"] == {}
    assert all(check["status"] == "pass" for check in out["cluster_checks"])


def test_action_bad_plan(tmp_path):
    plan = tmp_path / "plan.yml"
    plan.write_text("links: {node: node01}\n")
    with pytest.raises(AnsibleActionFail) as info:
        run_action({"plan": str(plan)}, {"hostvars": {}})
    assert str(info.value) == ("zhisuan.ops.fabric_consistency: the cabling plan %s must be a mapping with a 'links' list"
                               % plan)
    with pytest.raises(AnsibleActionFail) as info:
        run_action({"plan": str(tmp_path / "none.yml")}, {"hostvars": {}})
    assert "cannot read the cabling plan" in str(info.value)


# ibdiagnet's own diagnosis of the subnet (issue 23): a saved console output judged as the fabric's cluster checks
IBDIAGNET_42 = os.path.join(FIXTURES, "ib", "ibdiagnet-2.7.0-fabric-42-nodes-logparsertask.txt")
IBDIAGNET_15 = os.path.join(FIXTURES, "ib", "ibdiagnet-routing-dump-summary-openai-recipe.txt")


def _ibdiagnet_checks(path):
    out = run_action({"ibdiagnet": str(path)}, {"ansible_play_hosts_all": ["node01"], "hostvars": {"node01": {}}})
    return dict((c["id"], c) for c in out["cluster_checks"] if c["id"].startswith("cabling.ibdiagnet."))


def test_ibdiagnet_speed_width_errors_fail_the_links_with_check_cable():
    checks = _ibdiagnet_checks(IBDIAGNET_42)
    links = checks["cabling.ibdiagnet.links"]
    assert (links["status"], links["remedy"], links["host"]) == ("fail", "check_cable", "cluster")
    assert links["observed"] == "15 error(s) in Speed / Width checks"
    # the 2x link of the real capture is named in the evidence
    assert "actual link width is 2x" in links["evidence"] and "smg-ib-sw041/U1/P24" in links["evidence"]
    # Nodes Information has 16 warnings and no error: the subnet's other stages warn
    assert (checks["cabling.ibdiagnet.subnet"]["status"], checks["cabling.ibdiagnet.subnet"]["remedy"]) == (
        "warn", "investigate")


def test_ibdiagnet_warnings_only_warn_and_a_clean_subnet_passes(tmp_path):
    checks = _ibdiagnet_checks(IBDIAGNET_15)
    # Discovery 3 warnings, no error anywhere
    assert checks["cabling.ibdiagnet.links"]["status"] == "warn"
    assert checks["cabling.ibdiagnet.subnet"]["status"] == "pass"
    # the same capture with its warnings edited to 0: every stage passes
    text = open(IBDIAGNET_15).read()
    assert "-I- Discovery                 3          0" in text
    clean = tmp_path / "ibdiagnet-clean.txt"
    clean.write_text(text.replace("-I- Discovery                 3          0", "-I- Discovery                 0          0"))
    assert [c["status"] for c in _ibdiagnet_checks(clean).values()] == ["pass", "pass"]


def test_ibdiagnet_cut_before_its_summary_never_passes(tmp_path):
    text = open(IBDIAGNET_42).read()
    cut = tmp_path / "ibdiagnet-cut.txt"
    # cut after the Speed / Width errors, before the Fabric Summary and the Summary table
    cut.write_text(text[:text.index("Fabric Summary")])
    checks = _ibdiagnet_checks(cut)
    assert checks["cabling.ibdiagnet.links"]["status"] == "fail"  # the -E- lines read still count
    assert checks["cabling.ibdiagnet.subnet"]["status"] == "warn"
    assert "ends before its Summary table" in checks["cabling.ibdiagnet.subnet"]["message"]


def test_an_unreadable_ibdiagnet_file_is_an_error_naming_it(tmp_path):
    checks = _ibdiagnet_checks(tmp_path / "absent.txt")
    assert list(checks) == ["cabling.ibdiagnet.readout"]
    assert checks["cabling.ibdiagnet.readout"]["status"] == "error"
    assert "absent.txt" in checks["cabling.ibdiagnet.readout"]["message"]
    empty = tmp_path / "empty.txt"
    empty.write_text("\n")
    assert "ibdiagnet output is empty" in _ibdiagnet_checks(empty)["cabling.ibdiagnet.readout"]["message"]
