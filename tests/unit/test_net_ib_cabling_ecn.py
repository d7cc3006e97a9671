# SPDX-License-Identifier: GPL-3.0-or-later
"""Issue 16 item 3: InfiniBand cabling from the fabric's own view (iblinkinfo) and RoCE ECN / DSCP consistency.

Inputs are the real captures: an ``iblinkinfo`` run on an EDR fabric (one SB7700 switch, two CAs), the LegoOS
README's ``iblinkinfo`` excerpt (three CAs on an IS5035, cut by its author with ``...``) and a node's
``rdma-qos.sh q`` report of its ECN sysfs files and ``mlnx_qos`` trust/PFC; the faults are edits of those captures.
"""

from __future__ import annotations

import copy
import os
import re

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import _cabling, _fabric, _ib_cabling
from ansible_collections.zhisuan.ops.plugins.module_utils._net import collect, ecn, iblinkinfo, qos

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures")
IBLINKINFO = "iblinkinfo-edr-sb7700-2ca-1switch.txt"
RDMA_QOS_Q = "rdma-qos-q-eth0-mlx5_0-ecn-all-prios.txt"
SWITCH = "MF0;SB7700:MSB7700/U1"
# WukLab/LegoOS README.md (GPL-2.0): three CA blocks, no Switch section; the author cut the rest with "..."
LEGOOS = "iblinkinfo-legoos-is5035-3ca-excerpt.txt"
LEGOOS_SWITCH = "MF0;wuklab-ibsw:IS5035/U1"
LEGOOS_PLAN = {"links": [{"node": "wuklab%02d" % index, "port": "mlx4_0/1", "switch": "ibsw", "switch_port": index + 1}
                         for index in range(3)],
               "switches": {"ibsw": {"tier": "leaf"}}}

PLAN = {"links": [{"node": "n01", "port": "HCA-1/1", "switch": "leaf01", "switch_port": 18},
                  {"node": "n02", "port": "HCA-1/1", "switch": "leaf01", "switch_port": 17},
                  {"node": "n01", "port": "eth0", "switch": "eth-leaf", "switch_port": "swp1"}],
        "switches": {"leaf01": {"guid": "0x506b4b0300820910"}}}


def _read(*parts):
    with open(os.path.join(FIXTURES, *parts)) as handle:
        return handle.read()


def _by(checks, check_id):
    found = [check for check in checks if check["id"] == check_id]
    assert len(found) == 1, (check_id, [check["id"] for check in checks])
    return found[0]


# --- iblinkinfo parser ---------------------------------------------------------------------------------------


def test_iblinkinfo_parses_the_real_capture():
    warnings = []
    fabric = iblinkinfo.parse_iblinkinfo(_read("ib", IBLINKINFO), warn=warnings.append)
    assert warnings == []
    assert [(node["type"], node["name"]) for node in fabric["nodes"]] == [
        ("CA", "n02 HCA-1"), ("CA", "mgt mlx5_0"), ("Switch", SWITCH)]
    switch = fabric["nodes"][2]
    assert switch["guid"] == "0x506b4b0300820910" and len(switch["ports"]) == 18
    assert switch["ports"][0] == {"guid": None, "lid": 2, "port": 1, "width": None, "speed": None, "state": "Down",
                                  "phys_state": "Polling", "peer_lid": None, "peer_port": None, "peer_name": None}
    assert switch["ports"][17]["peer_name"] == "n01 HCA-1" and switch["ports"][17]["speed"] == "25.78125"
    assert fabric["nodes"][0]["ports"][0]["guid"] == "0xec0d9a03003d62be"


def test_iblinkinfo_links_take_the_switch_side_and_name_the_host():
    links = iblinkinfo.fabric_facts(_read("ib", IBLINKINFO))["links"]
    by_host = dict((link["host"], link) for link in links)
    assert sorted(by_host) == ["mgt", "n01", "n02"]
    assert (by_host["n01"]["hca"], by_host["n01"]["port"], by_host["n01"]["switch_port"], by_host["n01"]["source"]) == (
        "HCA-1", 1, 18, "switch")
    # the CA-only record (mgt: its switch port 36 is not in this excerpt) gets the switch GUID from the header
    assert (by_host["mgt"]["switch_port"], by_host["mgt"]["switch_guid"], by_host["mgt"]["source"]) == (
        36, "0x506b4b0300820910", "ca")
    assert all(link["up"] for link in links)


@pytest.mark.parametrize("text", ["", "ibwarn: [1234] mad_rpc_open_port: can't open UMAD port ((null):0)\n",
                                  "0x0002c90200404ad8 \"SwitchX\"  4 17[  ] ==( 4X 25.78 Gbps Active/  LinkUp)==>"
                                  "  0x0011220300334455  5  1[  ] \"exe0001 HCA-1\" ( )\n"])
def test_iblinkinfo_without_a_node_header_is_a_parse_error(text):
    with pytest.raises(ParseError) as info:
        iblinkinfo.parse_iblinkinfo(text)
    assert info.value.tool == "iblinkinfo"


def test_iblinkinfo_reads_the_legoos_excerpt_and_reports_its_elisions():
    warnings = []
    fabric = iblinkinfo.parse_iblinkinfo(_read("ib", LEGOOS), warn=warnings.append)
    # the author's two "..." lines are reported, not read and not fatal
    assert warnings == ["iblinkinfo: skipped an elision line '...': the output was cut, the fabric view is partial"] * 2
    assert [(node["type"], node["name"], node["guid"]) for node in fabric["nodes"]] == [
        ("CA", "wuklab00 mlx4_0", None), ("CA", "wuklab01 mlx4_0", None), ("CA", "wuklab02 mlx4_0", None)]
    assert fabric["nodes"][1]["ports"] == [{
        "guid": "0xe41d2d0300309301", "lid": 27, "port": 1, "width": "4X", "speed": "10.0", "state": "Active",
        "phys_state": "LinkUp", "peer_lid": 22, "peer_port": 2, "peer_name": LEGOOS_SWITCH}]


def test_iblinkinfo_legoos_links_are_the_three_ca_to_switch_port_links():
    links = iblinkinfo.fabric_facts(_read("ib", LEGOOS))["links"]
    assert [(link["host"], link["hca"], link["port"], link["switch"], link["switch_port"], link["source"], link["up"])
            for link in links] == [("wuklab00", "mlx4_0", 1, LEGOOS_SWITCH, 1, "ca", True),
                                   ("wuklab01", "mlx4_0", 1, LEGOOS_SWITCH, 2, "ca", True),
                                   ("wuklab02", "mlx4_0", 1, LEGOOS_SWITCH, 3, "ca", True)]
    # no Switch section in the excerpt: the switch GUID is unknown, not guessed
    assert set(link["switch_guid"] for link in links) == set([None])


# --- IB cabling judge ----------------------------------------------------------------------------------------


def _view(text):
    facts = iblinkinfo.fabric_facts(text)
    facts["error"] = None
    return facts


def test_ib_cabling_passes_on_the_real_fabric():
    checks = _ib_cabling.judge_ib_cabling(_view(_read("ib", IBLINKINFO)), PLAN)
    assert sorted(checks) == ["n01", "n02"]
    ok = _by(checks["n01"], "cabling.ib.hca_1_1.neighbor")
    assert (ok["status"], ok["observed"], ok["expected"]) == ("pass", "%s port 18" % SWITCH, "leaf01 port 18")
    assert _by(checks["n02"], "cabling.ib.hca_1_1.neighbor")["status"] == "pass"


def test_ib_cabling_swapped_cables_are_miswired():
    # edit: the switch sees n01 on port 17 and n02 on port 18 (the two cables swapped)
    text = _read("ib", IBLINKINFO).replace('"n02 HCA-1"', '"SWAP"').replace('"n01 HCA-1"', '"n02 HCA-1"').replace(
        '"SWAP"', '"n01 HCA-1"')
    checks = _ib_cabling.judge_ib_cabling(_view(text), PLAN)
    bad = _by(checks["n01"], "cabling.ib.hca_1_1.neighbor")
    assert (bad["status"], bad["remedy"]) == ("fail", "check_cable")
    assert bad["message"] == ("n01 HCA-1/1 is miswired: the fabric sees it on %s port 17, the plan says leaf01 port 18"
                              % SWITCH)
    assert _by(checks["n02"], "cabling.ib.hca_1_1.neighbor")["status"] == "fail"


def test_ib_cabling_pulled_cable_is_missing():
    # edit: switch port 18 goes Down/Polling (n01's cable pulled), as the capture's idle ports read
    lines = _read("ib", IBLINKINFO).splitlines(True)
    down = [line for line in lines if re.match(r"^\s+2\s+5\[", line)][0]
    text = "".join(down.replace("    5[", "   18[") if "18[" in line else line for line in lines)
    assert '"n01 HCA-1"' not in text
    checks = _ib_cabling.judge_ib_cabling(_view(text), PLAN)
    missing = _by(checks["n01"], "cabling.ib.hca_1_1.neighbor")
    assert (missing["status"], missing["remedy"], missing["observed"]) == ("fail", "check_cable", "no live link")
    assert _by(checks["n02"], "cabling.ib.hca_1_1.neighbor")["status"] == "pass"


def _legoos_moved(port):
    """The LegoOS excerpt edited: wuklab01's cable moved from switch port 2 to ``port`` (its CA line; columns kept)."""
    text = _read("ib", LEGOOS)
    edited = text.replace("      22    2[  ]", "      22 %4d[  ]" % port)
    assert edited != text and len(edited) == len(text)
    return edited


def test_ib_cabling_on_the_legoos_excerpt_passes_and_a_moved_cable_fails():
    plan = copy.deepcopy(LEGOOS_PLAN)
    for link in plan["links"]:
        link["switch"] = LEGOOS_SWITCH  # the switch named by its NodeDescription, as the CA lines name it
    checks = _ib_cabling.judge_ib_cabling(_view(_read("ib", LEGOOS)), plan)
    assert sorted(checks) == ["wuklab00", "wuklab01", "wuklab02"]
    assert [(c["id"], c["status"], c["observed"]) for node in sorted(checks) for c in checks[node]] == [
        ("cabling.ib.mlx4_0_1.neighbor", "pass", "%s port %d" % (LEGOOS_SWITCH, port)) for port in (1, 2, 3)]
    checks = _ib_cabling.judge_ib_cabling(_view(_legoos_moved(4)), plan)
    bad = _by(checks["wuklab01"], "cabling.ib.mlx4_0_1.neighbor")
    assert (bad["status"], bad["remedy"], bad["observed"]) == ("fail", "check_cable", "%s port 4" % LEGOOS_SWITCH)
    assert bad["message"] == ("wuklab01 mlx4_0/1 is miswired: the fabric sees it on %s port 4, the plan says %s port 2"
                              % (LEGOOS_SWITCH, LEGOOS_SWITCH))
    assert [_by(checks[node], "cabling.ib.mlx4_0_1.neighbor")["status"] for node in ("wuklab00", "wuklab02")] == [
        "pass", "pass"]
    assert [row["status"] for row in _ib_cabling.ib_cabling_map(_view(_legoos_moved(4)), plan)] == [
        "ok", "miswired", "ok"]


def test_ib_cabling_legoos_switch_without_a_guid_is_unconfirmed_not_passed_nor_miswired():
    # the plan names the switch "ibsw" (with a GUID): the CA-only excerpt names it only by its description, no GUID
    plan = copy.deepcopy(LEGOOS_PLAN)
    plan["switches"]["ibsw"]["guid"] = "0x0002c90200000001"
    checks = _ib_cabling.judge_ib_cabling(_view(_read("ib", LEGOOS)), plan)
    found = [_by(checks[node], "cabling.ib.mlx4_0_1.neighbor") for node in sorted(checks)]
    assert [(c["status"], c["remedy"]) for c in found] == [("warn", "investigate")] * 3
    assert found[1]["message"] == (
        "wuklab01 mlx4_0/1 is on port 2 of the switch the fabric names '%s', but the view gives no GUID for it (no "
        "Switch section), so it cannot confirm it is the plan's ibsw: name the switch in the plan by that description "
        "or take a view that includes the switch" % LEGOOS_SWITCH)
    assert [row["status"] for row in _ib_cabling.ib_cabling_map(_view(_read("ib", LEGOOS)), plan)] == ["unknown"] * 3
    # on another port than the plan's it is miswired whatever the switch is
    moved = _ib_cabling.judge_ib_cabling(_view(_legoos_moved(4)), plan)
    assert [_by(moved[node], "cabling.ib.mlx4_0_1.neighbor")["status"] for node in sorted(moved)] == [
        "warn", "fail", "warn"]


def test_ib_cabling_switch_guid_in_the_view_that_is_not_the_plans_is_miswired():
    # the SB7700 capture has a Switch section: its GUID is known, and a plan GUID that differs is another switch
    plan = copy.deepcopy(PLAN)
    plan["switches"]["leaf01"]["guid"] = "0x0002c90200000001"
    checks = _ib_cabling.judge_ib_cabling(_view(_read("ib", IBLINKINFO)), plan)
    bad = _by(checks["n01"], "cabling.ib.hca_1_1.neighbor")
    assert (bad["status"], bad["remedy"]) == ("fail", "check_cable")


def test_ib_cabling_node_cut_from_the_legoos_excerpt_is_missing():
    # a planned node the excerpt does not show (the author cut it with "...") has no live link in this view
    plan = {"links": [{"node": "wuklab03", "port": "mlx4_0/1", "switch": LEGOOS_SWITCH, "switch_port": 4}]}
    [check] = _ib_cabling.judge_ib_cabling(_view(_read("ib", LEGOOS)), plan)["wuklab03"]
    assert (check["status"], check["remedy"], check["observed"]) == ("fail", "check_cable", "no live link")


def test_ib_cabling_unplanned_port_warns_and_plan_switch_by_description():
    plan = {"links": [{"node": "n02", "port": "HCA-1", "fabric": "ib", "switch": SWITCH, "switch_port": 17},
                      {"node": "mgt", "port": "mlx5_1/1", "switch": SWITCH, "switch_port": 36}]}
    checks = _ib_cabling.judge_ib_cabling(_view(_read("ib", IBLINKINFO)), plan)
    assert _by(checks["n02"], "cabling.ib.hca_1_1.neighbor")["status"] == "pass"
    assert _by(checks["mgt"], "cabling.ib.mlx5_1_1.neighbor")["status"] == "fail"
    extra = _by(checks["mgt"], "cabling.ib.mlx5_0_1.neighbor")
    assert (extra["status"], extra["remedy"]) == ("warn", "investigate")


def test_ib_cabling_unreadable_view_is_an_error_and_no_view_no_check():
    checks = _ib_cabling.judge_ib_cabling({"links": [], "error": "iblinkinfo: timed out after 60 s"}, PLAN)
    assert [(c["id"], c["status"]) for c in checks["n01"]] == [("cabling.ib.hca_1_1.neighbor", "error")]
    assert _ib_cabling.judge_ib_cabling(None, PLAN) == {}


def test_lldp_judge_leaves_ib_links_alone():
    checks = _cabling.judge_cabling("n01", {"lldp": {}}, PLAN)
    assert [check["id"] for check in checks] == ["cabling.eth0.neighbor"]
    assert [row["port"] for row in _cabling.cabling_map({"n01": {"lldp": {}}}, PLAN)["links"]] == ["eth0"]


# --- ECN sysfs and DSCP consistency --------------------------------------------------------------------------


def _sysfs_from_report(root, text, ifname=None):
    """Lay out the sysfs files the real ``rdma-qos.sh q`` report read (``<path> = <value>`` lines) under ``root``."""
    for path, value in re.findall(r"(/sys/class/net/\S+/ecn/\S+) = (\S+)", text):
        if ifname:
            path = path.replace("/net/eth0/", "/net/%s/" % ifname)
        target = os.path.join(str(root), path.lstrip("/"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w") as handle:
            handle.write(value + "\n")


def test_ecn_read_from_the_real_report_layout(tmp_path):
    _sysfs_from_report(tmp_path, _read("qos", RDMA_QOS_Q))
    facts = ecn.read_ecn(str(tmp_path), "eth0")
    assert facts == {"np": list(range(8)), "rp": list(range(8)), "cnp_dscp": 48, "errors": []}
    assert ecn.read_ecn(str(tmp_path), "eth1") is None


def test_ecn_odd_file_is_an_error_not_a_guess(tmp_path):
    _sysfs_from_report(tmp_path, _read("qos", RDMA_QOS_Q).replace("roce_rp/enable/3 = 1", "roce_rp/enable/3 = on"))
    facts = ecn.read_ecn(str(tmp_path), "eth0")
    assert 3 not in facts["rp"] and facts["np"] == list(range(8))
    assert facts["errors"] == ["roce_rp/enable/3: sysfs ecn: an ECN enable file holds 'on', not 0 or 1"]
    with pytest.raises(ParseError):
        ecn.parse_enable("")


def test_interface_facts_carry_ecn(tmp_path):
    _sysfs_from_report(tmp_path, _read("qos", RDMA_QOS_Q))
    entry, before = collect._interface(None, "eth0", None, str(tmp_path), False)
    assert before is None and entry["ecn"]["np"] == list(range(8))


def _qos_facts():
    report = _read("qos", "mlnx_qos-i-eth4-trust-dscp-pfc3.txt")
    return qos.parse_mlnx_qos(report)


def _hosts(tmp_path, edits):
    hosts = {}
    for name, edit in edits.items():
        root = tmp_path / name
        _sysfs_from_report(root, edit(_read("qos", RDMA_QOS_Q)))
        hosts[name] = {"interfaces": {"eth0": {"mtu": 9000, "numa_node": None, "qos": _qos_facts(),
                                               "ecn": ecn.read_ecn(str(root), "eth0")}}, "gpu_numa": {}}
    return hosts


def test_ecn_and_dscp_consistency_pass_and_fail(tmp_path):
    same = dict((name, lambda text: text) for name in ("node01", "node02", "node03"))
    cluster, dummy = _fabric.judge_fabric_consistency(_hosts(tmp_path / "ok", same), {})
    assert _by(cluster, "nic.ecn.consistency")["status"] == "pass"
    dscp = _by(cluster, "nic.dscp.consistency")
    assert dscp["status"] == "pass" and dscp["observed"].startswith("p0:0-7 p1:8-15")
    # edit: node03 has ECN off on priority 3 (notification and reaction point)
    edits = dict(same, node03=lambda text: text.replace("enable/3 = 1", "enable/3 = 0"))
    hosts = _hosts(tmp_path / "bad", edits)
    # edit: node02's DSCP 26 moved from priority 3 to 0
    moved = copy.deepcopy(hosts["node02"]["interfaces"]["eth0"]["qos"])
    moved["dscp2prio"][3].remove(26)
    moved["dscp2prio"][0].append(26)
    hosts["node02"]["interfaces"]["eth0"]["qos"] = moved
    cluster, dummy = _fabric.judge_fabric_consistency(hosts, {})
    bad = _by(cluster, "nic.ecn.consistency")
    assert (bad["status"], bad["remedy"]) == ("fail", "tune")
    assert "node03 has np [0, 1, 2, 4, 5, 6, 7] rp [0, 1, 2, 4, 5, 6, 7]" in bad["message"]
    dscp = _by(cluster, "nic.dscp.consistency")
    assert (dscp["status"], dscp["remedy"]) == ("fail", "tune") and "node02 has p0:0-7,26" in dscp["message"]


def test_ecn_against_the_site_plan(tmp_path):
    same = dict((name, lambda text: text) for name in ("node01", "node02"))
    cluster, dummy = _fabric.judge_fabric_consistency(_hosts(tmp_path, same), {"fabric": {"ecn_priorities": [3]}})
    bad = _by(cluster, "nic.ecn.consistency")
    assert bad["status"] == "fail" and "the site plan (np [3] rp [3])" in bad["message"]


def test_no_ecn_exposed_means_no_ecn_check():
    hosts = {"node01": {"interfaces": {"eth0": {"mtu": 9000, "ecn": None}}},
             "node02": {"interfaces": {"eth0": {"mtu": 9000, "ecn": None}}}}
    cluster, dummy = _fabric.judge_fabric_consistency(hosts, {})
    assert [check["id"] for check in cluster] == ["nic.mtu.consistency"]


# --- the controller-side action ------------------------------------------------------------------------------

PLAN_YAML = """---
links:
  - {node: n01, port: HCA-1/1, switch: leaf01, switch_port: 18}
  - {node: n02, port: HCA-1/1, switch: leaf01, switch_port: 17}
switches:
  leaf01: {tier: leaf, guid: "0x506b4b0300820910"}
"""


def test_action_judges_an_iblinkinfo_file_and_a_node_view(tmp_path):
    from test_net_fabric_action import run_action
    plan = tmp_path / "plan.yml"
    plan.write_text(PLAN_YAML)
    capture = tmp_path / "iblinkinfo.txt"
    capture.write_text(_read("ib", IBLINKINFO).replace("   18[  ] ==( 4X", "   19[  ] ==( 4X"))  # edit: n01 on port 19
    task_vars = {"ansible_play_hosts_all": ["n01", "n02"], "hostvars": {"n01": {"check_net_facts": {}},
                                                                        "n02": {"check_net_facts": {}}}}
    out = run_action({"plan": str(plan), "iblinkinfo": str(capture)}, task_vars)
    assert _by(out["host_checks"]["n01"], "cabling.ib.hca_1_1.neighbor")["status"] == "fail"
    assert _by(out["host_checks"]["n02"], "cabling.ib.hca_1_1.neighbor")["status"] == "pass"
    rows = dict((row["node"], row["status"]) for row in out["cluster_data"]["fabric"]["cabling"]["links"])
    assert rows == {"n01": "miswired", "n02": "ok"}
    # the same view collected by net_info on one node (ib_fabric in its facts)
    view = _view(_read("ib", IBLINKINFO))
    task_vars["hostvars"]["n02"]["check_net_facts"] = {"ib_fabric": view}
    out = run_action({"plan": str(plan)}, task_vars)
    assert [c["status"] for c in out["host_checks"]["n01"] if c["id"].startswith("cabling.ib.")] == ["pass"]
    out = run_action({"plan": str(plan), "iblinkinfo": str(tmp_path / "absent.txt")}, task_vars)
    error = _by(out["host_checks"]["n01"], "cabling.ib.hca_1_1.neighbor")
    assert error["status"] == "error" and "cannot read" in error["message"]
