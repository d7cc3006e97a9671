# SPDX-License-Identifier: GPL-3.0-or-later
"""The lab's faults are fixed the way real ones are (issue 6): a GPU reset clears what a reset clears, a boot driven
by the node's BMC (Redfish reset, IPMI chassis power) clears what a power cycle clears, and a fault marked
`persistent: true` survives both."""

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
for _path in (REPO, REPO / "lab" / "sim", REPO / "lab" / "bmc"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import _common  # noqa: E402
import _ipmi_machine  # noqa: E402
import redfish_server  # noqa: E402

LABCTL = REPO / "lab" / "labctl.py"
HOOK = REPO / "lab" / "bmc" / "power_hook.py"


def state_file(tmp_path, faults):
    path = tmp_path / "state.json"
    path.write_text(json.dumps({"schema": 1, "node": "n1", "index": 1, "gpus": 8, "faults": faults}))
    return path


def lab_node(tmp_path, faults):
    scen = tmp_path / "one.yml"
    scen.write_text(yaml.safe_dump({"name": "one", "nodes": {"n1": {"faults": faults}}}))
    inv = tmp_path / "hosts.yml"
    subprocess.run([sys.executable, str(LABCTL), "up", "--scenario", str(scen), "--dir", str(tmp_path / "lab"),
                    "--inventory", str(inv)], check=True, capture_output=True, timeout=60)
    hv = yaml.safe_load(inv.read_text())["all"]["children"]["gpu_nodes"]["hosts"]["n1"]
    return hv["zhisuan_tools"]["nvidia_smi"], Path(hv["zhisuan_lab_state"])


MIXED = [
    {"kind": "gpu_missing", "gpu": 7},
    {"kind": "xid", "gpu": 7, "code": 79, "text": ""},
    {"kind": "ecc_volatile_uncorrectable", "gpu": 3, "count": 2},
    {"kind": "pcie_width", "gpu": 5, "width": 8},
    {"kind": "ecc_volatile_uncorrectable", "gpu": 1, "count": 4, "persistent": True},
    {"kind": "gpu_missing", "gpu": 6, "persistent": True},
]
AFTER_POWER_CYCLE = [
    {"kind": "ecc_aggregate_uncorrectable", "gpu": 3, "count": 2},
    {"kind": "pcie_width", "gpu": 5, "width": 8},
    {"kind": "ecc_volatile_uncorrectable", "gpu": 1, "count": 4, "persistent": True},
    {"kind": "gpu_missing", "gpu": 6, "persistent": True},
]


def test_persistent_is_a_flag_of_any_fault():
    kinds = {"gpu_missing": {"gpu": int}}
    assert _common.normalize_fault({"kind": "gpu_missing", "gpu": 1, "persistent": True}, kinds) == {
        "kind": "gpu_missing", "gpu": 1, "persistent": True}
    assert _common.normalize_fault({"kind": "gpu_missing", "gpu": 1, "persistent": False}, kinds) == {
        "kind": "gpu_missing", "gpu": 1}
    with pytest.raises(_common.LabError) as err:
        _common.normalize_fault({"kind": "gpu_missing", "gpu": 1, "persistent": "yes"}, kinds, "faults[0]")
    assert str(err.value) == "faults[0]: 'persistent' must be true or false, got 'yes'"


def test_a_gpu_reset_leaves_a_persistent_fault(tmp_path):
    faults = [{"kind": "ecc_volatile_uncorrectable", "gpu": 3, "count": 2, "persistent": True},
              {"kind": "throttle", "gpu": 3, "reason": "hw_slowdown"}]
    wrapper, state = lab_node(tmp_path, faults)
    res = subprocess.run([wrapper, "--gpu-reset", "-i", "3"], capture_output=True, timeout=10, check=False)
    assert res.returncode == 0
    assert json.loads(state.read_text())["faults"] == [
        {"kind": "ecc_volatile_uncorrectable", "gpu": 3, "count": 2, "persistent": True}]


def test_a_power_cycle_clears_what_a_boot_clears(tmp_path):
    path = state_file(tmp_path, MIXED)
    assert _common.power_cycle(str(path), "2026-01-01T00:00:00+00:00") == ["gpu_missing", "xid", "ecc_volatile_uncorrectable"]
    state = json.loads(path.read_text())
    assert state["faults"] == AFTER_POWER_CYCLE
    assert state["power_cycles"] == [{"time": "2026-01-01T00:00:00+00:00",
                                      "cleared": ["gpu_missing", "xid", "ecc_volatile_uncorrectable"]}]


def test_a_redfish_power_cycle_boots_the_node_and_logs_it(tmp_path):
    node_state = state_file(tmp_path, MIXED)
    cfg = {"started": "2026-01-01T00:00:00+00:00", "power_delay_s": 0, "bmcs": [
        {"node": "n1", "port": 1, "tree": "nvidia-dgx-h100-viking", "username": "admin", "password": "pw",
         "state_file": str(tmp_path / "bmc.json"), "node_state": str(node_state)}]}
    lines = []
    ((_spec, bmc),) = redfish_server.build_bmcs(cfg, lines.append)
    system, = bmc.systems
    target = [path for path, sys_path in bmc.reset_targets.items() if sys_path == system][0]
    headers = {"Authorization": "Basic " + base64.b64encode(b"admin:pw").decode(), "Content-Type": "application/json"}
    reply = bmc.handle("POST", target, headers, json.dumps({"ResetType": "PowerCycle"}).encode())
    assert reply.status == 204
    assert json.loads(node_state.read_text())["faults"] == AFTER_POWER_CYCLE
    assert len(lines) == 1 and lines[0].startswith("n1 power cycle: the node booted at ")
    assert lines[0].endswith("; faults cleared: gpu_missing, xid, ecc_volatile_uncorrectable")
    # a BMC of no lab node (no node_state) boots without a hook
    del cfg["bmcs"][0]["node_state"]
    ((_spec, bmc),) = redfish_server.build_bmcs(cfg, lines.append)
    assert bmc.on_boot is None


def test_an_ipmi_chassis_power_cycle_boots_the_node_and_logs_it(tmp_path):
    node_state = state_file(tmp_path, MIXED)
    control, power, hook = tmp_path / "chassis_control", tmp_path / "power", tmp_path / "boot_hook"
    control.write_text(_ipmi_machine.CHASSIS_CONTROL % 1)
    power.write_text("1\n")
    hook.write_text("#!/bin/sh\nexec %s -I %s %s %s n1\n" % (sys.executable, HOOK, node_state, tmp_path / "power.log"))
    for path in (control, hook):
        os.chmod(path, 0o755)

    def chassis(*args):
        return subprocess.run([str(control), str(power)] + list(args), capture_output=True, text=True, timeout=30,
                              check=True).stdout

    chassis("set", "power", "0")
    assert json.loads(node_state.read_text())["faults"] == MIXED  # off is no boot
    assert chassis("get", "power") == "power:0\n"
    chassis("set", "power", "1")
    assert json.loads(node_state.read_text())["faults"] == AFTER_POWER_CYCLE
    log = (tmp_path / "power.log").read_text().splitlines()
    assert len(log) == 1 and log[0].endswith(" n1 power cycle: the node booted; faults cleared: gpu_missing, xid, "
                                             "ecc_volatile_uncorrectable")
    chassis("set", "power", "1")  # already on: no boot
    assert len((tmp_path / "power.log").read_text().splitlines()) == 1
    chassis("set", "reset", "1")  # a reset is a boot
    assert len((tmp_path / "power.log").read_text().splitlines()) == 2


def test_the_hook_names_the_boot_it_simulates(tmp_path):
    node_state = state_file(tmp_path, MIXED)
    log = tmp_path / "reboot.log"
    res = subprocess.run([sys.executable, "-I", str(HOOK), str(node_state), str(log), "n1", "reboot (simulated)"],
                         capture_output=True, text=True, timeout=30, check=False)
    assert (res.returncode, res.stdout, res.stderr) == (0, "", "")
    assert log.read_text().endswith(" n1 reboot (simulated): the node booted; faults cleared: gpu_missing, xid, "
                                    "ecc_volatile_uncorrectable\n")
    bad = subprocess.run([sys.executable, "-I", str(HOOK), str(node_state)], capture_output=True, text=True, timeout=30,
                         check=False)
    assert (bad.returncode, bad.stderr) == (2, "usage: power_hook.py NODE_STATE POWER_LOG NODE [EVENT]\n")
