# SPDX-License-Identifier: GPL-3.0-or-later
"""Network parsers on real captures (tests/fixtures/{ethtool,ip,rdma,lldp,qos,kernel-log}) and edited variants."""

from __future__ import annotations

import os

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._net import ethtool, ib, iplink, linkflap, lldp, qos

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures")


def _read(*parts):
    with open(os.path.join(FIXTURES, *parts)) as handle:
        return handle.read()


SFP = _read("ethtool", "ethtool-m-i40e-sfp-10g-sr-dom.txt")


@pytest.mark.parametrize("name, expected", [
    ("ethtool-bnxt-10g-settings.txt", ("eth2", 10000, "full", True, "FIBRE")),
    ("ethtool-eth0-e1000e-1G-settings.txt", ("eth0", 1000, "full", True, "Twisted Pair")),
    ("ethtool-veth-eth0-settings.txt", ("eth0", 10000, "full", True, "Twisted Pair")),
    ("ethtool-veth-eth1-nocarrier-settings.txt", ("eth1", 10000, "full", False, "Twisted Pair")),
])
def test_settings(name, expected):
    facts = ethtool.parse_settings(_read("ethtool", name))
    assert (facts["interface"], facts["speed_mbps"], facts["duplex"], facts["link"], facts["port"]) == expected


def test_settings_unknown_speed_edited():
    text = _read("ethtool", "ethtool-veth-eth1-nocarrier-settings.txt").replace("Speed: 10000Mb/s", "Speed: Unknown!")
    text = text.replace("Duplex: Full", "Duplex: Unknown! (255)")
    facts = ethtool.parse_settings(text)
    assert facts["speed_mbps"] is None and facts["duplex"] is None and facts["link"] is False


def test_settings_garbage():
    with pytest.raises(ParseError) as info:
        ethtool.parse_settings("netlink error: No such device\n")
    assert info.value.message == "ethtool: no 'Settings for' or 'Link detected' line in the link settings output"


@pytest.mark.parametrize("name, expected", [
    ("ethtool-i-bnxt_en.txt", ("bnxt_en", "220.0.57.0/pkg 22.00.07.60", "0000:ca:00.0")),
    ("ethtool-i-eth0-e1000e.txt", ("e1000e", "0.5-4", "0000:00:1f.6")),
    ("ethtool-i-veth-eth0.txt", ("veth", None, None)),
])
def test_driver(name, expected):
    facts = ethtool.parse_driver(_read("ethtool", name))
    assert (facts["driver"], facts["firmware_version"], facts["bus_info"]) == expected


def test_driver_garbage():
    with pytest.raises(ParseError) as info:
        ethtool.parse_driver("Cannot get driver information: No such device\n")
    assert info.value.message == "ethtool: no 'driver:' line in the ethtool -i output"


def test_stats_per_queue_and_plain():
    bnxt = ethtool.parse_stats(_read("ethtool", "ethtool-S-bnxt_en.txt"))
    assert bnxt["rx_ucast_packets[0]"] == 276347403
    i40e = ethtool.parse_stats(_read("ethtool", "ethtool-S-i40e.txt"))
    assert (i40e["rx_errors"], i40e["rx_crc_errors"], i40e["collisions"]) == (19, 25, 28)
    veth = ethtool.parse_stats(_read("ethtool", "ethtool-S-veth-eth0.txt"))
    assert veth["peer_ifindex"] == 2 and len(veth) == 10


def test_stats_garbage():
    with pytest.raises(ParseError) as info:
        ethtool.parse_stats("no stats available\n")
    assert info.value.message == "ethtool: the ethtool -S output does not start with 'NIC statistics:'"


def test_counter_deltas_over_a_window():
    before = ethtool.parse_stats(_read("ethtool", "ethtool-S-i40e.txt"))
    # edited second reading: 7 more CRC errors, 3 drops, 500 pause frames, and one counter reset
    after = dict(before, rx_crc_errors=before["rx_crc_errors"] + 7, rx_dropped=3, rx_packets=before["rx_packets"] + 10 ** 6)
    pause = [name for name in before if "xoff" in name and name.startswith("port.")][0]
    after[pause] = before[pause] + 500
    after["tx_errors"] = 0
    warnings = []
    delta = ethtool.counter_deltas(before, after, 5, warn=warnings.append)
    assert pause == "port.link_xoff_rx"
    assert (delta["errors"], delta["discards"], delta["pause"], delta["pause_per_s"]) == (7, 3, 500, 100.0)
    assert delta["counters"]["rx_crc_errors"] == 7
    assert warnings == ["ethtool -S: counter tx_errors went down (20 -> 0); counter reset? left out"]


def test_counter_classes():
    assert [ethtool.counter_class(name) for name in (
        "rx_crc_errors", "rx_discards_phy", "rx_prio3_pause", "rx_prio3_pause_duration", "rx_bytes", "peer_ifindex",
        "rx_out_of_buffer", "port.link_xoff_rx")] == ["errors", "discards", "pause", None, None, None, "discards", "pause"]


def test_module_sfp_dom():
    optics = ethtool.parse_module(SFP)
    assert (optics["identifier"], optics["vendor"], optics["dom"]) == ("SFP", "OEM", True)
    assert (optics["temperature_c"], optics["bias_ma"], optics["voltage_v"]) == (40.01, 6.762, 3.4365)
    assert (optics["tx_power_mw"], optics["tx_power_dbm"], optics["rx_power_mw"], optics["rx_power_dbm"]) == (
        0.5155, -2.88, 0.5964, -2.24)
    assert optics["alarms"] == [] and optics["warnings"] == [] and len(optics["flags"]) == 20
    assert optics["thresholds"]["rx_power_low_alarm_dbm"] == -15.5
    assert optics["thresholds"]["rx_power_low_warning_dbm"] == -14.5
    assert optics["thresholds"]["temperature_high_alarm"] == 75.0
    assert ethtool.implausible(optics, link=True) == []


def test_module_alarm_flag_edited():
    text = SFP.replace("Laser rx power low alarm                  : Off", "Laser rx power low alarm                  : On")
    text = text.replace("Module temperature high warning           : Off", "Module temperature high warning           : On")
    optics = ethtool.parse_module(text)
    assert optics["alarms"] == ["rx_power_low_alarm"]
    assert optics["warnings"] == ["temperature_high_warning"]


@pytest.mark.parametrize("edits, link, reasons", [
    ((("0.5964 mW / -2.24 dBm", "0.0001 mW / -40.00 dBm"),), True, ["the receiver reads dark (-40.0 dBm) on a link that is up"]),
    ((("0.5964 mW / -2.24 dBm", "0.0001 mW / -40.00 dBm"),), False, []),
    ((("0.5964 mW / -2.24 dBm", "0.0000 mW / -inf dBm"), ("0.5155 mW / -2.88 dBm", "0.0000 mW / -inf dBm"),
      ("6.762 mA", "0.000 mA")), True, ["Tx power, Rx power and bias all read 0"]),
    ((("40.01 degrees C / 104.02 degrees F", "-128.00 degrees C / -198.40 degrees F"),), True,
     ["module temperature -128.0 C is outside -40.0..125.0 C"]),
])
def test_module_implausible_edited(edits, link, reasons):
    text = SFP
    for old, new in edits:
        assert old in text
        text = text.replace(old, new)
    assert ethtool.implausible(ethtool.parse_module(text), link=link) == reasons


def test_module_no_module_errors():
    assert ethtool.is_no_module(_read("ethtool", "ethtool-m-veth-stderr.txt"))
    assert not ethtool.is_no_module("netlink error: No such device\n")
    with pytest.raises(ParseError) as info:
        ethtool.parse_module("")
    assert info.value.message == "ethtool: no 'Identifier' line in the ethtool -m output"


def test_ip_link():
    links = iplink.parse_links(_read("ip", "ip-j-link-veth-nocarrier.json"))
    assert sorted(links) == ["eth0", "eth1", "lo"]
    assert iplink.is_loopback(links["lo"])
    assert (links["eth1"]["mtu"], links["eth1"]["operstate"], links["eth1"]["carrier"], links["eth1"]["admin_up"]) == (
        9000, "DOWN", False, True)
    assert (links["eth0"]["operstate"], links["eth0"]["carrier"]) == ("UP", True)
    with pytest.raises(ParseError) as info:
        iplink.parse_links("Object \"link\" is unknown")
    assert info.value.message.startswith("ip: ip -j link did not print JSON: ")


def test_ibstat_h100_all_active():
    facts = ib.parse_ibstat(_read("rdma", "ibstat-h100-node-8x-ndr400-all-active.txt"))
    assert len(facts["devices"]) == 9 and facts["no_device"] is None
    assert facts["devices"]["mlx5_0"]["fw"] == "28.41.1000"
    assert facts["devices"]["mlx5_0"]["ports"][1] == {"state": "ACTIVE", "phys_state": "LinkUp", "rate_gbps": 400.0,
                                                      "link_layer": "InfiniBand"}
    assert facts["devices"]["mlx5_bond_0"]["ports"][1]["link_layer"] == "Ethernet"


def test_ibstat_panic_and_port_down_edited():
    facts = ib.parse_ibstat(_read("rdma", "ibstat-a100-azure-ibpanic-missing-mlx5_8.txt"))
    assert len(facts["devices"]) == 8
    assert facts["errors"] == ["ibpanic: [1400444] main: stat of IB device 'mlx5_8' failed: No such file or directory"]
    text = _read("rdma", "ibstat-h100-node-8x-ndr400-all-active.txt").replace("State: Active", "State: Down", 1)
    text = text.replace("Physical state: LinkUp", "Physical state: Polling", 1)
    port = ib.parse_ibstat(text)["devices"]["mlx5_0"]["ports"][1]
    assert (port["state"], port["phys_state"]) == ("DOWN", "Polling")


def test_ib_no_device_outputs():
    assert ib.parse_ibstat(_read("rdma", "ibstat-no-device-stdout.txt")) == {
        "devices": {}, "no_device": ib.NO_DEVICE_IBSTAT, "errors": []}
    assert ib.parse_ibstatus(_read("rdma", "ibstatus-no-device-stdout.txt"))["no_device"] == "ibstatus: Fatal error: No devices"
    assert ib.ibv_devinfo_no_device(_read("rdma", "ibv_devinfo-no-device-stderr.txt")) == (
        "ibv_devinfo: Failed to get IB devices list: Function not implemented")
    assert ib.ibv_devinfo_no_device("") is None


def test_ibstatus_a100():
    facts = ib.parse_ibstatus(_read("rdma", "ibstatus-a100-all-active.txt"))
    assert len(facts["devices"]) == 9
    assert facts["devices"]["mlx5_0"]["ports"][1] == {"state": "ACTIVE", "phys_state": "LinkUp", "rate_gbps": 200.0,
                                                      "link_layer": "InfiniBand"}
    assert facts["devices"]["mlx5_8"]["ports"][1]["rate_gbps"] == 40.0


def test_ibstat_garbage():
    with pytest.raises(ParseError) as info:
        ib.parse_ibstat("Port 1:\n")
    assert info.value.message == "ibstat: expected a \"CA '<name>'\" line first, got 'Port 1:'"


def test_sysfs(tmp_path):
    assert ib.read_sysfs(str(tmp_path))["no_device"] == ib.NO_DEVICE_SYSFS
    port = tmp_path / "sys" / "class" / "infiniband" / "mlx5_0" / "ports" / "1"
    port.mkdir(parents=True)
    (tmp_path / "sys" / "class" / "infiniband" / "mlx5_0" / "fw_ver").write_text("28.41.1000\n")
    for name, value in (("state", "4: ACTIVE"), ("phys_state", "5: LinkUp"), ("rate", "400 Gb/sec (4X NDR)"),
                        ("link_layer", "InfiniBand")):
        (port / name).write_text(value + "\n")
    facts = ib.read_sysfs(str(tmp_path))
    assert facts["devices"]["mlx5_0"]["fw"] == "28.41.1000"
    assert facts["devices"]["mlx5_0"]["ports"][1] == {"state": "ACTIVE", "phys_state": "LinkUp", "rate_gbps": 400.0,
                                                      "link_layer": "InfiniBand"}


@pytest.mark.parametrize("name, expected", [
    ("lldpcli-json-show-neighbors-1if.json", {"eth0": ("leaf01", "swp1")}),
    ("lldpctl-json-1if.json", {"eth0": ("leaf01", "swp1")}),
    ("lldpcli-json-show-neighbors-2if.json", {"eth0": ("leaf01", "swp1"), "eth1": ("leaf01", "swp2")}),
    ("lldpctl-json-2if.json", {"eth0": ("leaf01", "swp1"), "eth1": ("leaf01", "swp2")}),
    ("lldpcli-json-show-neighbors-2if-portid-ifname.json", {"eth0": ("leaf01", "swp1"), "eth1": ("leaf01", "swp2")}),
    ("lldpcli-json-show-neighbors-2if-renamed-swp7.json", {"eth0": ("leaf01", "swp1"), "eth1": ("leaf01", "swp7")}),
    ("lldpcli-json-show-neighbors-none.json", {}),
])
def test_lldp_shapes(name, expected):
    neighbors = lldp.first_neighbors(lldp.parse_neighbors(_read("lldp", name)))
    assert dict((port, (item["switch"], item["switch_port"])) for port, item in neighbors.items()) == expected


def test_lldp_details_and_garbage():
    neighbors = lldp.parse_neighbors(_read("lldp", "lldpcli-json-show-neighbors-2if.json"))
    assert neighbors["eth0"][0]["port_id_type"] == "mac" and neighbors["eth0"][0]["port_descr"] == "swp1"
    assert neighbors["eth0"][0]["mgmt_ip"][0] == "10.77.0.2"
    with pytest.raises(ParseError) as info:
        lldp.parse_neighbors("[]")
    assert info.value.message == "lldpctl: lldpctl -f json printed no 'lldp' object"


def test_mlnx_qos():
    facts = qos.parse_mlnx_qos(_read("qos", "mlnx_qos-i-eth4-trust-dscp-pfc3.txt"))
    assert (facts["trust"], facts["pfc_enabled"], facts["cable_len"]) == ("dscp", [3], 7)
    assert facts["dscp2prio"][3] == [31, 30, 29, 28, 27, 26, 25, 24]
    assert facts["tc"][0] == {"ratelimit": "unlimited", "tsa": "vendor", "priorities": [1]}
    with pytest.raises(ParseError) as info:
        qos.parse_mlnx_qos("")
    assert info.value.message == "mlnx_qos: no 'Priority trust state' line in the mlnx_qos output"


def test_link_flaps_syslog():
    events = linkflap.parse_events(_read("kernel-log", "syslog-ib-link-flap-ib6.txt"))
    assert len(events) == 12
    assert events[0] == {"interface": "ib6", "state": "down", "time": "Aug 17 06:18:01",
                         "line": "Aug 17 06:18:01 jplc7eb7-vm-0 systemd-networkd[5398]: ib6: lost carrier"}
    assert linkflap.count_flaps(events) == {"ib6": 6}
    assert linkflap.count_flaps(events, interfaces=["eth0"]) == {}
