# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""zhisuan.ops.ipmi_info and ipmi_power as Ansible runs them, against LIVE BMCs: the lab's OpenIPMI ipmi_sim
(lab/bmc/ipmi_sim.py) reached with the real ipmitool. Needs `ipmi_sim`, `sdrcomp` and `ipmitool` (make sysdeps)."""

from __future__ import annotations

import importlib.util
import json
import os
import stat

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.zhisuan.ops.plugins.modules import ipmi_info, ipmi_power

pytestmark = pytest.mark.usefixtures("as_node")

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))


def _load_lab():
    spec = importlib.util.spec_from_file_location("zhisuan_lab_bmc_ipmi_sim", os.path.join(REPO, "lab", "bmc", "ipmi_sim.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


LAB = _load_lab()
NODES = {
    "ok01": {},
    "fault01": {"faults": ["psu_failed", "sel_critical", "sensor_over"]},
    "badcred01": {"faults": ["bmc_bad_credentials"]},
    "down01": {"faults": ["bmc_down"]},
    "power01": {},
    "live01": {"gpus": 4},
}


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("ipmilab")
    infos = LAB.start(run_dir, NODES)
    yield infos
    LAB.stop(run_dir)


def bmc_args(info, **extra):
    args = {"bmc_address": info["address"], "bmc_port": info["port"], "bmc_username": info["username"],
            "bmc_password": info["password"], "timeout": 10}
    args.update(extra)
    return args


def run(module, args, capsys):
    with patch_module_args(args):
        with pytest.raises(SystemExit) as info:
            module.main()
    captured = capsys.readouterr()
    return info.value.code, json.loads(captured.out), captured.out + captured.err


def logging_ipmitool(tmp_path):
    """The real ipmitool behind a wrapper that records its command lines."""
    path = tmp_path / "ipmitool"
    path.write_text('#!/bin/sh\necho "$@" >> %s\nexec ipmitool "$@"\n' % (tmp_path / "argv.log"))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def power_file(info):
    with open(os.path.join(info["dir"], "power"), encoding="ascii") as fh:
        return fh.read().strip()


# ---------------------------------------------------------------------------------------------------------- ipmi_info

def test_info_healthy_node(lab, capsys, tmp_path):
    info = lab["ok01"]
    code, out, text = run(ipmi_info, bmc_args(info, ipmitool_path=logging_ipmitool(tmp_path)), capsys)
    assert code == 0, out
    assert out["changed"] is False
    bmc = out["bmc"]
    assert (bmc["protocol"], bmc["vendor"], bmc["manager"]["firmware_version"]) == ("ipmi", "supermicro", "1.02")
    assert bmc["system"]["serial"] == "S49200000001"
    assert (bmc["system"]["model"], bmc["system"]["power_state"]) == ("SYS-821GE-TNHR", "On")
    assert [s["name"] for s in bmc["sensors"]][:4] == ["CPU1 Temp", "CPU2 Temp", "Inlet Temp", "GPU1 Temp"]
    assert {s["health"] for s in bmc["sensors"]} == {"OK"}
    assert [(p["id"], p["health"]) for p in bmc["power_supplies"]] == [("10.1", "OK"), ("10.2", "OK")]
    assert [f["reading"] for f in bmc["fans"]] == [8400.0, 8600.0, 8200.0, 8500.0, 8300.0, 8400.0]
    assert bmc["errors"] == []
    assert out["firmware"] == [{"id": "BMC", "name": "BMC Firmware", "version": "1.02", "component": "bmc", "updateable": None}]
    assert out["log"] == []
    argv = (tmp_path / "argv.log").read_text()
    assert [line.split(" -E ")[1] for line in argv.splitlines()] == [
        "mc info", "chassis status", "fru print", "sensor", "sdr elist", "sel elist"]
    assert "-C 3" in argv
    assert LAB.PASSWORD not in argv and LAB.PASSWORD not in text


def test_info_node_with_faults(lab, capsys):
    code, out, _ = run(ipmi_info, bmc_args(lab["fault01"]), capsys)
    assert code == 0, out
    bmc = out["bmc"]
    assert bmc["system"]["serial"] == "S49200000002"
    assert [(p["id"], p["health"], p["input_watts"]) for p in bmc["power_supplies"]] == [
        ("10.1", "OK", 1180.0), ("10.2", "Critical", 0.0)]
    unhealthy = [(s["name"], s["reading"], s["health"]) for s in bmc["sensors"] if s["health"] != "OK"]
    assert unhealthy == [("GPU1 Temp", 89.0, "Critical")]
    assert [(e["severity"], e["message"]) for e in out["log"]] == [
        ("Critical", "Power Supply PSU2 Status | Failure detected () | Asserted"),
        ("Critical", "Memory DIMM Status | Uncorrectable ECC | Asserted"),
        ("Warning", "Temperature GPU1 Temp | Upper Non-critical going high | Asserted | Reading 89 > Threshold 83 degrees C"),
        ("Critical", "Temperature GPU1 Temp | Upper Critical going high | Asserted | Reading 89 > Threshold 87 degrees C")]
    assert all(e["created"].endswith("+00:00") and e["source"] == "SEL" for e in out["log"])


def test_live_fault_injected_through_the_console(lab, capsys):
    info = lab["live01"]
    LAB.inject(info, "sensor_set_value 0x20 0 0x22 4 1")     # FAN3: 400 RPM, under its lower critical 500
    code, out, _ = run(ipmi_info, bmc_args(info), capsys)
    assert code == 0, out
    fan3 = [f for f in out["bmc"]["fans"] if f["name"] == "FAN3"][0]
    assert (fan3["reading"], fan3["health"]) == (400.0, "Critical")
    assert [s["name"] for s in out["bmc"]["sensors"] if s["kind"] == "temperature"] == [
        "CPU1 Temp", "CPU2 Temp", "Inlet Temp", "GPU1 Temp", "GPU2 Temp", "GPU3 Temp", "GPU4 Temp"]
    assert [(e["sensor"], e["severity"], e["message"]) for e in out["log"]] == [
        ("FAN3", "Warning", "Fan FAN3 | Lower Non-critical going low | Asserted | Reading 400 < Threshold 700 RPM"),
        ("FAN3", "Critical", "Fan FAN3 | Lower Critical going low | Asserted | Reading 400 < Threshold 500 RPM")]


def test_wrong_password_fails_without_the_password_anywhere(lab, capsys):
    info = lab["badcred01"]
    assert info["password"] == LAB.BAD_PASSWORD
    code, out, text = run(ipmi_info, bmc_args(info), capsys)
    assert code == 1
    assert (out["failed"], out["error_kind"], out["tool"]) == (True, "auth_failed", "ipmitool")
    assert out["msg"] == ("ipmitool: the BMC at 127.0.0.1:%d refused the session for user 'admin': RAKP 2 HMAC is "
                          "invalid (check bmc_username and bmc_password)" % info["port"])
    assert out["stderr"] == "Error: Unable to establish IPMI v2 / RMCP+ session\n"
    assert LAB.BAD_PASSWORD not in text and LAB.PASSWORD not in text


def test_password_from_the_environment(lab, capsys, monkeypatch):
    monkeypatch.setenv("ZHISUAN_BMC_PASSWORD", LAB.PASSWORD)
    args = bmc_args(lab["ok01"])
    del args["bmc_password"]
    code, out, text = run(ipmi_info, args, capsys)
    assert code == 0, out
    assert out["bmc"]["manager"]["firmware_version"] == "1.02"
    assert LAB.PASSWORD not in text


def test_bmc_that_does_not_answer_is_unreachable(lab, capsys):
    info = lab["down01"]
    code, out, _ = run(ipmi_info, bmc_args(info, timeout=2), capsys)
    assert code == 1
    assert (out["error_kind"], out["msg"]) == (
        "unreachable", "ipmitool: no answer from the BMC at 127.0.0.1:%d within 2 s (ipmitool mc info; process group killed)"
        % info["port"])


def test_ipmitool_missing(lab, capsys):
    code, out, _ = run(ipmi_info, bmc_args(lab["ok01"], ipmitool_path="/nonexistent/ipmitool"), capsys)
    assert (code, out["error_kind"], out["msg"]) == (1, "not_found", "ipmitool: not found at /nonexistent/ipmitool")


# ---------------------------------------------------------------------------------------------------------- ipmi_power

def power(lab, capsys, state, node="power01", **extra):
    args = bmc_args(lab[node], state=state, **extra)
    return run(ipmi_power, args, capsys)[:2]


def test_power_off_check_mode_and_idempotence(lab, capsys):
    info = lab["power01"]
    assert power(lab, capsys, "on")[0] == 0
    code, out = power(lab, capsys, "off", _ansible_check_mode=True)
    assert (code, out["changed"], out["power_state"], out["actions"]) == (0, True, "Off", ["chassis power off"])
    assert out["diff"] == {"before": {"power_state": "On"}, "after": {"power_state": "Off"}}
    assert power_file(info) == "1"
    code, out = power(lab, capsys, "off")
    assert (code, out["changed"], out["power_state"], out["transitions"]) == (0, True, "Off", ["Off"])
    assert power_file(info) == "0"
    code, out = power(lab, capsys, "off")
    assert (code, out["changed"], out["actions"], out["msg"]) == (0, False, [], "the chassis power is already off")
    code, out = power(lab, capsys, "on")
    assert (code, out["changed"], out["power_state"]) == (0, True, "On")
    assert power_file(info) == "1"


def test_power_cycle_goes_off_then_on(lab, capsys):
    assert power(lab, capsys, "on")[0] == 0
    code, out = power(lab, capsys, "cycle")
    assert (code, out["changed"], out["actions"], out["transitions"], out["power_state"]) == (
        0, True, ["chassis power cycle"], ["Off", "On"], "On")
    assert out["msg"] == "ran chassis power cycle; the chassis power is on"


def test_soft_off_waits_for_the_shutdown(lab, capsys):
    assert power(lab, capsys, "on")[0] == 0
    code, out = power(lab, capsys, "soft_off")
    assert (code, out["changed"], out["actions"], out["transitions"], out["power_state"]) == (
        0, True, ["chassis power soft"], ["On", "Off"], "Off")


def test_reset_and_cycle_refuse_a_chassis_that_is_off(lab, capsys):
    info = lab["power01"]
    assert power(lab, capsys, "off")[0] == 0
    for state in ("cycle", "reset"):
        code, out = power(lab, capsys, state)
        assert (code, out["failed"], out["changed"], out["msg"]) == (
            1, True, False, "the chassis power is off; state=%s needs it on (use state=on)" % state)
    assert power_file(info) == "0"
    assert power(lab, capsys, "on")[0] == 0
    code, out = power(lab, capsys, "reset")
    assert (code, out["changed"], out["transitions"], out["power_state"]) == (0, True, ["On"], "On")


def test_power_wrong_password_and_bad_wait_timeout(lab, capsys):
    code, out = power(lab, capsys, "off", node="badcred01")
    assert (code, out["error_kind"]) == (1, "auth_failed")
    assert LAB.BAD_PASSWORD not in json.dumps(out)
    code, out = power(lab, capsys, "off", wait_timeout=0)
    assert (code, out["msg"]) == (1, "wait_timeout must be a positive number of seconds, got 0")
