# SPDX-License-Identifier: GPL-3.0-or-later
"""The lab's ethtool -m, ibstat and ibstatus simulators: real captures with value edits per fault, read back by the
collection's own parsers and judged by its rules."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._judge import _rdma, net
from ansible_collections.zhisuan.ops.plugins.module_utils._net import ethtool, ib

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
SIM = os.path.join(REPO, "lab", "sim")
CAPTURE = os.path.join(REPO, "tests", "fixtures", "ethtool", "ethtool-m-i40e-sfp-10g-sr-dom.txt")


def _sim(tmp_path, name, faults, *args):
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"schema": 1, "node": "node01", "index": 1, "gpus": 8, "faults": faults}))
    return subprocess.run([sys.executable, "-I", "-S", os.path.join(SIM, name), "--state", str(state)] + list(args),
                          capture_output=True, text=True, timeout=30, check=False)


def _optics(text):
    optics = ethtool.parse_module(text)
    optics["implausible"] = ethtool.implausible(optics, link=True)
    return optics


def _check(checks, check_id):
    return [check for check in checks if check["id"] == check_id][0]


def test_ethtool_m_healthy_port_is_the_capture(tmp_path):
    result = _sim(tmp_path, "ethtool.py", [{"kind": "dirty_optic", "port": "eth1", "rx_dbm": -16}], "-m", "eth0")
    with open(CAPTURE) as handle:
        capture = handle.read()
    # the capture, with the module's own serial: the node's index and the port appended (issue 26 item 6)
    assert "\tVendor SN                                 : GJ2308161004\n" in capture
    assert (result.returncode, result.stdout) == (0, capture.replace(": GJ2308161004\n", ": GJ2308161004-001eth0\n"))
    other_port = _sim(tmp_path, "ethtool.py", [], "-m", "eth1")
    assert ethtool.parse_module(other_port.stdout)["serial"] == "GJ2308161004-001eth1"


@pytest.mark.parametrize("rx_dbm, rx_text, status", [
    (-15.0, "0.0316 mW / -15.00 dBm", "warn"),
    (-16.2, "0.0240 mW / -16.20 dBm", "fail"),
])
def test_ethtool_m_dirty_optic(tmp_path, rx_dbm, rx_text, status):
    result = _sim(tmp_path, "ethtool.py", [{"kind": "dirty_optic", "port": "eth0", "rx_dbm": rx_dbm}], "-m", "eth0")
    assert result.returncode == 0
    assert "Receiver signal average optical power     : %s\n" % rx_text in result.stdout
    nic = {"present": True, "link": True, "admin_up": True, "mtu": 9000, "optics": _optics(result.stdout), "errors": {}}
    checks = net.judge_nic("node01", {"interfaces": {"eth0": nic}, "link_flaps": {}})
    rx = _check(checks, "nic.optic.rx_power")
    assert (rx["status"], rx["remedy"]) == (status, "clean_optic")
    alarm = _check(checks, "nic.optic.alarm")
    assert (alarm["status"], alarm["remedy"]) == (status, "clean_optic")


def test_ethtool_m_optic_alarm(tmp_path):
    result = _sim(tmp_path, "ethtool.py", [{"kind": "optic_alarm", "port": "eth0"}], "-m", "eth0")
    optics = _optics(result.stdout)
    assert optics["tx_power_dbm"] == -8.0
    assert optics["alarms"] == ["tx_power_low_alarm"] and optics["warnings"] == ["tx_power_low_warning"]
    nic = {"present": True, "link": True, "admin_up": True, "optics": optics, "errors": {}}
    alarm = _check(net.judge_nic("node01", {"interfaces": {"eth0": nic}, "link_flaps": {}}), "nic.optic.alarm")
    assert (alarm["status"], alarm["remedy"]) == ("fail", "replace_part")


def test_ethtool_passes_through_to_the_real_ethtool(tmp_path):
    result = _sim(tmp_path, "ethtool.py", [], "lo")
    assert (result.returncode, result.stdout) == (0, "Settings for lo:\n\tLink detected: yes\n")
    result = _sim(tmp_path, "ethtool.py", [], "-m", "eth0", "offset", "8")
    assert result.returncode == 2


def test_ibstat_faults(tmp_path):
    faults = [{"kind": "ib_port_down", "device": "mlx5_1"}, {"kind": "ib_rate", "device": "mlx5_4", "rate": 200}]
    result = _sim(tmp_path, "ibstat.py", faults)
    facts = ib.parse_ibstat(result.stdout)
    assert len(facts["devices"]) == 9
    assert facts["devices"]["mlx5_1"]["ports"][1] == {"state": "DOWN", "phys_state": "Polling", "rate_gbps": 10.0,
                                                      "link_layer": "InfiniBand"}
    assert facts["devices"]["mlx5_4"]["ports"][1]["rate_gbps"] == 200.0
    checks = _rdma.judge_rdma_ports("node01", facts, expected={"rate_gbps": 400, "hcas": 9})
    assert [(c["component"], c["remedy"]) for c in checks if c["status"] == "fail" and c["id"].startswith("rdma.port")] == [
        ("mlx5_1 port 1", "check_cable"), ("mlx5_4 port 1", "check_cable"), ("mlx5_bond_0 port 1", "check_cable")]
    status = ib.parse_ibstatus(_sim(tmp_path, "ibstatus.py", faults).stdout)
    assert dict((name, dev["ports"][1]) for name, dev in status["devices"].items()) == dict(
        (name, dev["ports"][1]) for name, dev in facts["devices"].items())


def test_no_hca(tmp_path):
    result = _sim(tmp_path, "ibstat.py", [{"kind": "no_hca"}])
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    result = _sim(tmp_path, "ibstatus.py", [{"kind": "no_hca"}])
    assert (result.returncode, result.stdout) == (255, "Fatal error:  No devices\n")
    result = _sim(tmp_path, "ibstat.py", [], "mlx5_3")
    assert result.returncode == 255
    assert result.stderr == "ibpanic: [1400444] main: stat of IB device 'mlx5_3' failed: No such file or directory\n"


def test_bad_faults_are_refused(tmp_path):
    result = _sim(tmp_path, "ibstat.py", [{"kind": "ib_port_down", "device": "mlx5_2"}])
    assert result.returncode == 3 and "names device 'mlx5_2'; the capture has mlx5_0, mlx5_1" in result.stderr
    result = _sim(tmp_path, "ethtool.py", [{"kind": "dirty_optic", "port": "eth0", "rx_dbm": -60}], "-m", "eth0")
    assert result.returncode == 3
    assert result.stderr == "lab ethtool: faults[0]: fault 'dirty_optic' rx_dbm must be within -40..5 dBm, got -60\n"
