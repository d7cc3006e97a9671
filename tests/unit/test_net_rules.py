# SPDX-License-Identifier: GPL-3.0-or-later
"""Network judgement rules (nic, rdma, cabling, fabric consistency) on facts built from real captures, with edited
fault variants (port down, optics alarm, Rx power low, miswire, MTU mismatch)."""

from __future__ import annotations

import copy
import os

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._judge import _cabling, _fabric, _rdma, net
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import REMEDIES
from ansible_collections.zhisuan.ops.plugins.module_utils._net import ethtool, ib, iplink, lldp
from ansible_collections.zhisuan.ops.plugins.plugin_utils._judging import Context, judge_collected

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures")


def _read(*parts):
    with open(os.path.join(FIXTURES, *parts)) as handle:
        return handle.read()


SFP = _read("ethtool", "ethtool-m-i40e-sfp-10g-sr-dom.txt")
H100_IBSTAT = _read("rdma", "ibstat-h100-node-8x-ndr400-all-active.txt")


def _optics(text=SFP, link=True):
    optics = ethtool.parse_module(text)
    optics["implausible"] = ethtool.implausible(optics, link=link)
    return optics


def _nic(settings="ethtool-veth-eth0-settings.txt", link_name="eth0", links="ip-j-link-veth-netns.json", optics=None,
         delta=None):
    facts = ethtool.parse_settings(_read("ethtool", settings))
    link = iplink.parse_links(_read("ip", links))[link_name]
    driver = ethtool.parse_driver(_read("ethtool", "ethtool-i-veth-eth0.txt"))
    stats = ethtool.parse_stats(_read("ethtool", "ethtool-S-veth-eth0.txt"))
    return {"present": True, "driver": driver["driver"], "firmware": driver["firmware_version"],
            "speed_mbps": facts["speed_mbps"], "duplex": facts["duplex"], "link": facts["link"], "port": facts["port"],
            "mtu": link["mtu"], "operstate": link["operstate"], "admin_up": link["admin_up"], "carrier": link["carrier"],
            "numa_node": 0, "counters_delta": delta if delta is not None else ethtool.counter_deltas(stats, stats, 5),
            "optics": optics, "optics_reason": None if optics else "no module EEPROM: netlink error: Operation not supported",
            "qos": None, "errors": {}}


def _facts(**interfaces):
    return {"interfaces": interfaces or {"eth0": _nic()}, "ib": ib.parse_ibstat(H100_IBSTAT), "lldp": {}, "lldp_error": None,
            "link_flaps": {}, "link_flap_events": [], "link_flaps_error": None, "gpu_numa": {}, "counter_window": 5}


def _by(checks, check_id, component=None):
    found = [check for check in checks if check["id"] == check_id and (component is None or check["component"] == component)]
    assert len(found) == 1, (check_id, component, [c["id"] for c in checks])
    return found[0]


def _no_bad_remedy(checks):
    for check in checks:
        assert check["remedy"] in REMEDIES
        if check["status"] in ("fail", "warn", "error"):
            assert check["remedy"] != "none", check


def test_healthy_veth_with_optic_passes():
    checks = net.judge_nic("node01", _facts(eth0=_nic(optics=_optics())), expected={"mtu": 1500, "speed_mbps": 10000})
    assert [(c["id"], c["status"]) for c in checks] == [
        ("nic.link.state", "pass"), ("nic.link.speed", "pass"), ("nic.mtu.value", "pass"),
        ("nic.counters.errors", "pass"), ("nic.counters.discards", "pass"), ("nic.counters.pause", "pass"),
        ("nic.optic.readings", "pass"), ("nic.optic.alarm", "pass"), ("nic.optic.rx_power", "pass"),
        ("nic.link.flaps", "pass")]
    assert _by(checks, "nic.optic.rx_power")["observed"] == -2.24


def test_port_down_no_carrier_capture():
    nic = _nic("ethtool-veth-eth1-nocarrier-settings.txt", "eth1", "ip-j-link-veth-nocarrier.json")
    # a veth without carrier is judged when it is a planned interface, and left out otherwise (docker0, bridges)
    assert net.judge_nic("node01", _facts(eth1=nic), expected={"mtu": 9000}) == []
    checks = net.judge_nic("node01", _facts(eth1=nic), expected={"mtu": 9000, "interfaces": ["eth1"]})
    check = _by(checks, "nic.link.state")
    assert (check["status"], check["remedy"], check["observed"]) == ("fail", "check_cable", "down")
    assert check["message"] == "eth1 has no link (no carrier): cable unplugged, peer port down or a bad cable/optic"
    _no_bad_remedy(checks)


def test_a_pci_port_without_link_is_judged_by_default():
    nic = _nic("ethtool-veth-eth1-nocarrier-settings.txt", "eth1", "ip-j-link-veth-nocarrier.json")
    nic["bus_info"] = "0000:ca:00.0"
    assert _by(net.judge_nic("node01", _facts(eth1=nic)), "nic.link.state")["status"] == "fail"


def test_admin_down_and_absent_interface():
    nic = _nic()
    nic["admin_up"] = False
    checks = net.judge_nic("node01", _facts(eth0=nic), expected={"interfaces": ["eth0", "ens9"]})
    assert _by(checks, "nic.link.state", "eth0")["observed"] == "admin down"
    absent = _by(checks, "nic.link.state", "ens9")
    assert (absent["status"], absent["message"]) == ("fail", "Interface ens9 is expected on this node but does not exist")


def test_speed_below_plan_and_mtu_mismatch():
    checks = net.judge_nic("node01", _facts(), expected={"speed_mbps": {"eth0": 100000}, "mtu": 9000})
    speed = _by(checks, "nic.link.speed")
    assert (speed["status"], speed["remedy"], speed["observed"]) == ("fail", "check_cable", 10000)
    mtu = _by(checks, "nic.mtu.value")
    assert (mtu["status"], mtu["remedy"], mtu["observed"], mtu["expected"]) == ("fail", "tune", 1500, 9000)


def test_counter_thresholds():
    before = ethtool.parse_stats(_read("ethtool", "ethtool-S-i40e.txt"))
    after = dict(before, rx_crc_errors=before["rx_crc_errors"] + 4, rx_dropped=9)
    after["port.link_xoff_rx"] = before["port.link_xoff_rx"] + 60000
    checks = net.judge_nic("node01", _facts(eth0=_nic(delta=ethtool.counter_deltas(before, after, 5))))
    errors = _by(checks, "nic.counters.errors")
    assert (errors["status"], errors["remedy"], errors["observed"], errors["evidence"]) == (
        "fail", "check_cable", 4, "rx_crc_errors +4")
    assert _by(checks, "nic.counters.discards")["status"] == "warn"
    pause = _by(checks, "nic.counters.pause")
    assert (pause["status"], pause["remedy"], pause["observed"]) == ("warn", "tune", 12000.0)
    relaxed = net.judge_nic("node01", _facts(eth0=_nic(delta=ethtool.counter_deltas(before, after, 5))),
                            thresholds={"errors_max": "10", "pause_per_s_max": 20000, "discards_max": 10})
    assert [_by(relaxed, cid)["status"] for cid in ("nic.counters.errors", "nic.counters.discards", "nic.counters.pause")] == [
        "pass", "pass", "pass"]


def test_optic_alarm_replace_vs_clean():
    text = SFP.replace("Laser bias current high alarm             : Off", "Laser bias current high alarm             : On")
    check = _by(net.judge_nic("n", _facts(eth0=_nic(optics=_optics(text)))), "nic.optic.alarm")
    assert (check["status"], check["remedy"], check["observed"]) == ("fail", "replace_part", "bias_high_alarm")
    text = SFP.replace("Laser rx power low warning                : Off", "Laser rx power low warning                : On")
    check = _by(net.judge_nic("n", _facts(eth0=_nic(optics=_optics(text)))), "nic.optic.alarm")
    assert (check["status"], check["remedy"]) == ("warn", "clean_optic")


@pytest.mark.parametrize("rx, status", [("0.0316 mW / -15.00 dBm", "warn"), ("0.0200 mW / -16.99 dBm", "fail")])
def test_rx_power_low_dirty_optic(rx, status):
    text = SFP.replace("0.5964 mW / -2.24 dBm", rx)
    check = _by(net.judge_nic("n", _facts(eth0=_nic(optics=_optics(text)))), "nic.optic.rx_power")
    assert (check["status"], check["remedy"]) == (status, "clean_optic")
    assert check["expected"] == (">= -14.5 dBm" if status == "warn" else ">= -15.5 dBm")


def test_rx_power_site_floor():
    text = SFP.replace("0.5964 mW / -2.24 dBm", "0.1000 mW / -10.00 dBm")
    check = _by(net.judge_nic("n", _facts(eth0=_nic(optics=_optics(text))), thresholds={"rx_power_min_dbm": -8}),
                "nic.optic.rx_power")
    assert (check["status"], check["expected"]) == ("fail", ">= -8 dBm")


def test_implausible_optic_is_a_warning_not_a_dirty_optic():
    text = SFP.replace("0.5964 mW / -2.24 dBm", "0.0001 mW / -40.00 dBm")
    checks = net.judge_nic("n", _facts(eth0=_nic(optics=_optics(text))))
    readings = _by(checks, "nic.optic.readings")
    assert (readings["status"], readings["remedy"]) == ("warn", "investigate")
    assert "the receiver reads dark (-40.0 dBm) on a link that is up" in readings["message"]
    assert _by(checks, "nic.optic.rx_power")["status"] == "skip"


def test_no_module_skips_optics():
    checks = net.judge_nic("n", _facts())
    assert [_by(checks, cid)["status"] for cid in ("nic.optic.readings", "nic.optic.alarm", "nic.optic.rx_power")] == [
        "skip"] * 3


def test_link_flaps():
    from ansible_collections.zhisuan.ops.plugins.module_utils._net import linkflap
    events = linkflap.parse_events(_read("kernel-log", "syslog-ib-link-flap-ib6.txt"))
    facts = _facts(ib6=_nic())
    facts.update(link_flaps=linkflap.count_flaps(events), link_flap_events=events)
    check = _by(net.judge_nic("n", facts), "nic.link.flaps")
    assert (check["status"], check["remedy"], check["observed"]) == ("fail", "check_cable", 6)
    assert check["message"] == "ib6 lost its link 6 times in the kernel log: a loose or damaged cable or optic"
    facts["link_flaps"] = None
    facts["link_flaps_error"] = "journalctl: not found"
    assert _by(net.judge_nic("n", facts), "nic.link.flaps")["status"] == "error"


def test_rdma_all_active_and_expectations():
    checks = _rdma.judge_rdma_ports("n", ib.parse_ibstat(H100_IBSTAT), expected={"hcas": 9, "rate_gbps": 400})
    assert _by(checks, "rdma.device.present")["status"] == "pass"
    assert _by(checks, "rdma.device.count")["status"] == "pass"
    assert _by(checks, "rdma.port.state", "mlx5_0 port 1")["status"] == "pass"
    bond = _by(checks, "rdma.port.rate", "mlx5_bond_0 port 1")
    assert (bond["status"], bond["observed"], bond["remedy"]) == ("fail", 200.0, "check_cable")
    fw = _by(checks, "rdma.firmware.version")
    assert fw["status"] == "pass"


def test_rdma_port_down_and_rate_edited():
    text = H100_IBSTAT.replace("State: Active", "State: Down", 1).replace("Physical state: LinkUp", "Physical state: Polling", 1)
    text = text.replace("Rate: 400", "Rate: 200", 2)  # the second 'Rate: 400' is mlx5_1 (the first is mlx5_0)
    checks = _rdma.judge_rdma_ports("n", ib.parse_ibstat(text), expected={"rate_gbps": 400, "link_layer": "InfiniBand"})
    down = _by(checks, "rdma.port.state", "mlx5_0 port 1")
    assert (down["status"], down["remedy"], down["observed"]) == ("fail", "check_cable", "DOWN/Polling")
    assert _by(checks, "rdma.port.rate", "mlx5_0 port 1")["status"] == "skip"
    slow = _by(checks, "rdma.port.rate", "mlx5_1 port 1")
    assert (slow["status"], slow["observed"]) == ("fail", 200.0)
    layer = _by(checks, "rdma.port.link_layer", "mlx5_bond_0 port 1")
    assert (layer["status"], layer["remedy"]) == ("fail", "tune")


def test_rdma_init_port_is_a_subnet_manager_problem():
    text = H100_IBSTAT.replace("State: Active", "State: Initializing", 1)
    check = _by(_rdma.judge_rdma_ports("n", ib.parse_ibstat(text)), "rdma.port.state", "mlx5_0 port 1")
    assert (check["status"], check["remedy"], check["observed"]) == ("fail", "investigate", "INITIALIZING/LinkUp")


def test_rdma_firmware_mixed_edited():
    text = H100_IBSTAT.replace("Firmware version: 28.41.1000", "Firmware version: 28.39.2048", 1)
    check = _by(_rdma.judge_rdma_ports("n", ib.parse_ibstat(text)), "rdma.firmware.version")
    assert (check["status"], check["remedy"]) == ("fail", "update_firmware")
    check = _by(_rdma.judge_rdma_ports("n", ib.parse_ibstat(H100_IBSTAT), expected={"hca_fw": "28.43"}), "rdma.firmware.version")
    assert check["status"] == "fail" and check["message"].startswith("HCA firmware of mlx5_0, mlx5_1")


def test_rdma_panic_and_missing_hca():
    facts = ib.parse_ibstat(_read("rdma", "ibstat-a100-azure-ibpanic-missing-mlx5_8.txt"))
    checks = _rdma.judge_rdma_ports("n", facts, expected={"hcas": 9})
    assert (_by(checks, "rdma.device.count")["status"], _by(checks, "rdma.device.count")["remedy"]) == ("fail", "reseat")
    readable = _by(checks, "rdma.device.readable")
    assert readable["status"] == "fail" and "mlx5_8" in readable["message"]


def test_rdma_no_device():
    facts = ib.parse_ibstat(_read("rdma", "ibstat-no-device-stdout.txt"))
    check = _by(_rdma.judge_rdma_ports("n", facts, expected={"hcas": 8}), "rdma.device.present")
    assert (check["status"], check["observed"], check["expected"]) == ("fail", 0, 8)
    assert check["message"] == ("No RDMA device on a node that should have 8: ibstat listed no RDMA device (no HCA, or its "
                                "driver is not loaded) (check the HCAs are seated and the driver is loaded)")
    assert [c["status"] for c in _rdma.judge_rdma_ports("n", facts)] == ["skip"]
    failed = {"devices": {}, "no_device": None, "errors": [], "source": "ibstat", "error": "ibstat: timed out after 5 s"}
    assert _by(_rdma.judge_rdma_ports("n", failed), "rdma.device.present")["status"] == "error"


PLAN = {"links": [{"node": "node01", "port": "eth0", "switch": "leaf01", "switch_port": "swp1"},
                  {"node": "node01", "port": "eth1", "switch": "leaf01", "switch_port": "swp2"},
                  {"node": "node02", "port": "eth0", "switch": "leaf01", "switch_port": "swp3"}],
        "switches": {"leaf01": {"tier": "leaf", "uplink": "spine01"}}}


def _lldp(name):
    return lldp.first_neighbors(lldp.parse_neighbors(_read("lldp", name)))


def test_cabling_ok_miswired_missing_unexpected():
    ok = _cabling.judge_cabling("node01", {"lldp": _lldp("lldpcli-json-show-neighbors-2if.json")}, PLAN)
    assert [(c["id"], c["status"]) for c in ok] == [("cabling.eth0.neighbor", "pass"), ("cabling.eth1.neighbor", "pass")]
    miswired = _by(_cabling.judge_cabling("node01", {"lldp": _lldp("lldpcli-json-show-neighbors-2if-renamed-swp7.json")}, PLAN),
                   "cabling.eth1.neighbor")
    assert (miswired["status"], miswired["remedy"], miswired["observed"]) == ("fail", "check_cable", "leaf01 swp7")
    assert miswired["message"] == "eth1 is miswired: it reaches leaf01 swp7, the plan says leaf01 swp2"
    missing = _by(_cabling.judge_cabling("node01", {"lldp": _lldp("lldpcli-json-show-neighbors-1if.json")}, PLAN),
                  "cabling.eth1.neighbor")
    assert (missing["status"], missing["remedy"], missing["observed"]) == ("fail", "check_cable", "no neighbour")
    unexpected = _cabling.judge_cabling("node02", {"lldp": _lldp("lldpcli-json-show-neighbors-2if.json")}, PLAN)
    assert [(c["id"], c["status"]) for c in unexpected] == [
        ("cabling.eth0.neighbor", "fail"), ("cabling.eth1.neighbor", "warn")]


def test_cabling_without_plan_or_lldp():
    assert _cabling.judge_cabling("node01", {"lldp": {}}, {})[0]["id"] == "cabling.plan.loaded"
    assert _cabling.judge_cabling("node09", {"lldp": {}}, PLAN)[0]["status"] == "skip"
    errors = _cabling.judge_cabling("node01", {"lldp": {}, "lldp_error": "lldpctl: exited with rc 1"}, PLAN)
    assert [c["status"] for c in errors] == ["error", "error"]


def test_cabling_map():
    hosts = {"node01": {"lldp": _lldp("lldpcli-json-show-neighbors-2if-renamed-swp7.json")}, "node02": {"lldp": None}}
    links = _cabling.cabling_map(hosts, PLAN)["links"]
    assert [(item["node"], item["port"], item["status"]) for item in links] == [
        ("node01", "eth0", "ok"), ("node01", "eth1", "miswired"), ("node02", "eth0", "unknown")]
    assert links[1]["observed"] == {"switch": "leaf01", "switch_port": "swp7"}


def _host(mtu=9000, numa=0, gpu_numa=None, rate_edit=None, qos=None):
    nic = _nic()
    nic.update(mtu=mtu, numa_node=numa, qos=qos)
    text = H100_IBSTAT if rate_edit is None else H100_IBSTAT.replace("Rate: 400", "Rate: %s" % rate_edit, 1)
    return {"interfaces": {"eth0": nic}, "ib": ib.parse_ibstat(text), "gpu_numa": gpu_numa or {"0000:18:00.0": 0}}


def test_fabric_consistency_mtu_rate_numa():
    hosts = {"node01": _host(), "node02": _host(), "node03": _host(mtu=1500, numa=1, rate_edit=200)}
    cluster, host_checks = _fabric.judge_fabric_consistency(hosts, {"fabric": {"rate_gbps": 400}})
    mtu = _by(cluster, "nic.mtu.consistency", "rail eth0")
    assert (mtu["host"], mtu["status"], mtu["remedy"]) == ("cluster", "fail", "tune")
    assert mtu["message"] == "MTU on rail eth0 differs from most nodes (9000) on 1 node(s): node03 has 1500"
    rate = _by(cluster, "rdma.rate.consistency", "rail mlx5_0")
    assert (rate["status"], rate["remedy"]) == ("fail", "check_cable")
    assert _by(cluster, "rdma.rate.consistency", "rail mlx5_1")["status"] == "pass"
    bond = _by(cluster, "rdma.rate.consistency", "rail mlx5_bond_0")
    assert bond["status"] == "fail" and "node01 has 200.0" in bond["message"]
    assert _by(host_checks["node01"], "nic.numa.alignment")["status"] == "pass"
    numa = _by(host_checks["node03"], "nic.numa.alignment")
    assert (numa["status"], numa["remedy"]) == ("warn", "tune")


def test_fabric_consistency_plan_mtu_and_qos():
    from ansible_collections.zhisuan.ops.plugins.module_utils._net import qos
    good = qos.parse_mlnx_qos(_read("qos", "mlnx_qos-i-eth4-trust-dscp-pfc3.txt"))
    bad = copy.deepcopy(good)
    bad["trust"] = "pcp"
    bad["pfc_enabled"] = []
    hosts = {"node01": _host(qos=good), "node02": _host(qos=bad)}
    cluster, dummy = _fabric.judge_fabric_consistency(hosts, {"fabric": {"mtu": 9000, "trust": "dscp", "pfc_priorities": [3]}})
    assert _by(cluster, "nic.mtu.consistency")["status"] == "pass"
    trust = _by(cluster, "nic.trust.consistency")
    assert trust["status"] == "fail" and trust["message"] == (
        "QoS trust mode on rail eth0 differs from the site plan (dscp) on 1 node(s): node02 has pcp")
    assert _by(cluster, "nic.pfc.consistency")["status"] == "fail"


def test_registry_families():
    collected = {"changed": False, "net": _facts(eth0=_nic(optics=_optics()))}
    collected["net"]["lldp"] = _lldp("lldpcli-json-show-neighbors-2if.json")
    ctx = Context(expected={"net": {"mtu": 1500, "hcas": 9}}, extra={"plan": PLAN})
    checks, summary, unreachable = judge_collected("nic", "node01", collected, ctx)
    assert not unreachable and _by(checks, "nic.mtu.value")["status"] == "pass"
    assert summary["interfaces"]["eth0"]["rx_power_dbm"] == -2.24 and summary["rdma_devices"] == 9
    checks, summary, dummy = judge_collected("rdma_ports", "node01", collected, ctx)
    assert _by(checks, "rdma.device.count")["status"] == "pass" and summary["ports_active"] == 9
    checks, summary, dummy = judge_collected("cabling", "node01", collected, ctx)
    assert [c["status"] for c in checks] == ["pass", "pass"] and summary == {"eth0": "leaf01 swp1", "eth1": "leaf01 swp2"}
    failed = {"failed": True, "msg": "ip: ip not found in PATH", "error_kind": "not_found"}
    checks, dummy, dummy = judge_collected("cabling", "node01", failed, ctx)
    assert [(c["id"], c["status"]) for c in checks] == [("cabling.collect.lldpctl", "error")]


def test_fabric_rate_tie_blames_the_slow_node():
    hosts = {"node01": _host(), "node02": _host(rate_edit=200)}
    cluster, dummy = _fabric.judge_fabric_consistency(hosts, {})
    rate = _by(cluster, "rdma.rate.consistency", "rail mlx5_0")
    assert rate["message"] == "Link rate (Gb/s) on rail mlx5_0 differs from the best node (400.0) on 1 node(s): node02 has 200.0"
