# SPDX-License-Identifier: GPL-3.0-or-later
"""zhisuan.ops.net_info as Ansible runs it, with real programs behind the seam: shell scripts that print real
captures (ethtool, ip, ibstat, lldpctl, the kernel log) or fail as the real tools do on a node without the device."""

from __future__ import annotations

import json
import os
import stat

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.zhisuan.ops.plugins.modules import net_info

pytestmark = pytest.mark.usefixtures("as_node")

FIXTURES = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, "fixtures"))


def _fx(*parts):
    return os.path.join(FIXTURES, *parts)


def _program(tmp_path, name, body):
    path = tmp_path / name
    path.write_text("#!/bin/sh\necho \"%s $*\" >> %s\n%s" % (name, tmp_path / "calls", body))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


ETHTOOL = """case "$1" in
  -i) cat %(drv)s ;;
  -S) cat %(stats)s ;;
  -m) %(module)s ;;
  *) case "$1" in eth1) cat %(nocarrier)s ;; *) cat %(settings)s ;; esac ;;
esac
"""


def _tools(tmp_path, module_body=None, ibstat_body=None, lldp_file="lldpcli-json-show-neighbors-2if.json"):
    module_body = module_body or "cat %s >&2; exit 1" % _fx("ethtool", "ethtool-m-veth-stderr.txt")
    args = {
        "ethtool_path": _program(tmp_path, "ethtool", ETHTOOL % {
            "drv": _fx("ethtool", "ethtool-i-veth-eth0.txt"), "stats": _fx("ethtool", "ethtool-S-veth-eth0.txt"),
            "module": module_body, "nocarrier": _fx("ethtool", "ethtool-veth-eth1-nocarrier-settings.txt"),
            "settings": _fx("ethtool", "ethtool-veth-eth0-settings.txt")}),
        "ip_path": _program(tmp_path, "ip", "cat %s\n" % _fx("ip", "ip-j-link-veth-nocarrier.json")),
        "ibstat_path": _program(tmp_path, "ibstat", ibstat_body or "cat %s\n" % _fx("rdma", "ibstat-no-device-stdout.txt")),
        "lldpctl_path": _program(tmp_path, "lldpctl", "cat %s\n" % _fx("lldp", lldp_file)),
        "journalctl_path": _program(tmp_path, "journalctl", "cat %s\n" % _fx("kernel-log", "syslog-ib-link-flap-ib6.txt")),
        "dmesg_path": "",
        "counter_window": 0,
        "root": str(tmp_path / "root"),
    }
    return args


def _run(args, capsys):
    with patch_module_args(args):
        with pytest.raises(SystemExit) as info:
            net_info.main()
    return info.value.code, json.loads(capsys.readouterr().out)


def test_veth_node_without_rdma(tmp_path, capsys):
    args = _tools(tmp_path)
    numa = tmp_path / "root" / "sys" / "class" / "net" / "eth0" / "device"
    numa.mkdir(parents=True)
    (numa / "numa_node").write_text("1\n")
    gpu = tmp_path / "root" / "sys" / "bus" / "pci" / "devices" / "0000:18:00.0"
    gpu.mkdir(parents=True)
    for name, value in (("vendor", "0x10de"), ("class", "0x030200"), ("numa_node", "1")):
        (gpu / name).write_text(value + "\n")
    code, out = _run(dict(args, lldp_socket="/run/lldpd.sock", since="-1d"), capsys)
    assert code == 0 and out["changed"] is False
    net = out["net"]
    assert sorted(net["interfaces"]) == ["eth0", "eth1"]
    eth0, eth1 = net["interfaces"]["eth0"], net["interfaces"]["eth1"]
    assert (eth0["driver"], eth0["speed_mbps"], eth0["link"], eth0["mtu"], eth0["operstate"], eth0["numa_node"]) == (
        "veth", 10000, True, 1500, "UP", 1)
    assert (eth1["link"], eth1["mtu"], eth1["operstate"], eth1["carrier"], eth1["numa_node"]) == (False, 9000, "DOWN", False, None)
    assert eth0["optics"] is None
    assert eth0["optics_reason"] == "no module EEPROM: netlink error: Operation not supported"
    assert eth0["counters_delta"] is None and eth0["errors"] == {}
    assert net["ib"] == {"devices": {}, "no_device": "ibstat listed no RDMA device (no HCA, or its driver is not loaded)",
                         "errors": [], "source": "ibstat", "error": None}
    assert net["lldp"]["eth1"]["switch"] == "leaf01" and net["lldp"]["eth1"]["switch_port"] == "swp2"
    assert net["link_flaps"] == {"ib6": 6} and net["link_flaps_error"] is None
    assert net["gpu_numa"] == {"0000:18:00.0": 1}
    calls = (tmp_path / "calls").read_text().splitlines()
    assert calls[0] == "ip -j link"
    assert "lldpctl -u /run/lldpd.sock -f json" in calls
    assert "journalctl -k --no-pager -o short-iso --since -1d" in calls
    assert calls.count("ethtool -S eth0") == 1


def test_counter_window_reads_twice_and_optics(tmp_path, capsys):
    args = _tools(tmp_path, module_body="cat %s" % _fx("ethtool", "ethtool-m-i40e-sfp-10g-sr-dom.txt"))
    code, out = _run(dict(args, counter_window=1, interfaces=["eth0"]), capsys)
    assert code == 0
    eth0 = out["net"]["interfaces"]["eth0"]
    assert eth0["counters_delta"] == {"seconds": 1.0, "errors": 0, "discards": 0, "pause": 0, "pause_per_s": 0.0,
                                      "counters": {}}
    assert eth0["optics"]["rx_power_dbm"] == -2.24 and eth0["optics"]["implausible"] == []
    assert (tmp_path / "calls").read_text().splitlines().count("ethtool -S eth0") == 2


def test_ibstat_devices_and_missing_interface(tmp_path, capsys):
    args = _tools(tmp_path, ibstat_body="cat %s\n" % _fx("rdma", "ibstat-h100-node-8x-ndr400-all-active.txt"))
    code, out = _run(dict(args, interfaces=["eth0", "ens9"]), capsys)
    assert code == 0
    assert out["net"]["ib"]["devices"]["mlx5_0"]["ports"]["1"]["rate_gbps"] == 400.0
    ens9 = out["net"]["interfaces"]["ens9"]
    assert ens9["present"] is False and ens9["errors"] == {"ip": "interface ens9 does not exist on this node"}


def test_ibstat_panic_keeps_devices(tmp_path, capsys):
    body = "cat %s | grep -v ibpanic; grep ibpanic %s >&2; exit 255\n" % (
        _fx("rdma", "ibstat-a100-azure-ibpanic-missing-mlx5_8.txt"), _fx("rdma", "ibstat-a100-azure-ibpanic-missing-mlx5_8.txt"))
    code, out = _run(_tools(tmp_path, ibstat_body=body), capsys)
    assert code == 0
    ib = out["net"]["ib"]
    assert len(ib["devices"]) == 8 and ib["error"] is None
    assert ib["errors"] == ["ibstat exited with rc 255: ibpanic: [1400444] main: stat of IB device 'mlx5_8' failed: "
                            "No such file or directory"]


def test_tool_failures_stay_in_the_facts(tmp_path, capsys):
    args = _tools(tmp_path, module_body="echo 'netlink error: No such device' >&2; exit 1",
                  ibstat_body="sleep 30\n")
    args["lldpctl_path"] = _program(tmp_path, "lldpctl", "echo 'unable to connect to socket' >&2; exit 1\n")
    args["journalctl_path"] = str(tmp_path / "missing-journalctl")
    code, out = _run(dict(args, timeout=1, interfaces=["eth0"]), capsys)
    assert code == 0
    net = out["net"]
    assert net["interfaces"]["eth0"]["optics_reason"] == "ethtool -m failed (rc 1): netlink error: No such device"
    assert net["ib"]["error"] == "ibstat: timed out after 1 s (process group killed)"
    assert net["lldp"] == {} and net["lldp_error"] == "lldpctl: exited with rc 1: unable to connect to socket"
    assert net["link_flaps"] is None
    assert net["link_flaps_error"] == "journalctl: not found at %s" % (tmp_path / "missing-journalctl")


def test_ip_failure_fails_the_module(tmp_path, capsys):
    args = _tools(tmp_path)
    args["ip_path"] = _program(tmp_path, "ip", "echo garbage\n")
    code, out = _run(args, capsys)
    assert code == 1 and out["failed"] is True
    assert out["error_kind"] == "unparsable"
    assert out["msg"].startswith("ip: ip -j link did not print JSON: ")


def test_negative_window_is_refused(tmp_path, capsys):
    code, out = _run(dict(_tools(tmp_path), counter_window=-1), capsys)
    assert code == 1 and out["msg"] == "counter_window must be 0 or more seconds, got -1"


def test_sysfs_source(tmp_path, capsys):
    port = tmp_path / "root" / "sys" / "class" / "infiniband" / "mlx5_0" / "ports" / "1"
    port.mkdir(parents=True)
    for name, value in (("state", "1: DOWN"), ("phys_state", "2: Polling"), ("rate", "10 Gb/sec (4X SDR)"),
                        ("link_layer", "InfiniBand")):
        (port / name).write_text(value + "\n")
    code, out = _run(dict(_tools(tmp_path), ib_source="sysfs", lldpctl_path=None, link_flaps=False), capsys)
    assert code == 0
    assert out["net"]["ib"]["devices"]["mlx5_0"]["ports"]["1"] == {"state": "DOWN", "phys_state": "Polling",
                                                                   "rate_gbps": 10.0, "link_layer": "InfiniBand"}
    assert out["net"]["lldp"] is None and out["net"]["link_flaps"] is None


def test_real_ethtool_and_ip_on_loopback(tmp_path, capsys):
    """The real programs (apt ethtool, iproute2) on the loopback: no driver info, no stats, no module - each kept
    as a reason, the link facts still read."""
    code, out = _run({"interfaces": ["lo"], "ib_source": "none", "link_flaps": False, "counter_window": 1,
                      "root": str(tmp_path)}, capsys)
    assert code == 0
    lo = out["net"]["interfaces"]["lo"]
    assert (lo["link"], lo["mtu"], lo["speed_mbps"], lo["driver"]) == (True, 65536, None, None)
    assert lo["errors"] == {
        "driver": "ethtool: exited with rc 71: Cannot get driver information: Operation not supported",
        "counters": "ethtool: exited with rc 94: no stats available"}
    assert lo["optics"] is None
    assert lo["optics_reason"] == "no module EEPROM: netlink error: Operation not supported"
    assert out["net"]["ib"] is None
