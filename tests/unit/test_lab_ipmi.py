# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""lab/bmc/ipmi_sim.py: one live OpenIPMI ipmi_sim per lab node, checked with the real ipmitool."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))


def _load_lab():
    spec = importlib.util.spec_from_file_location("zhisuan_lab_bmc_ipmi_sim", os.path.join(REPO, "lab", "bmc", "ipmi_sim.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


LAB = _load_lab()
LabError = LAB.LabError


def ipmitool(info, *args, password=None):
    env = dict(os.environ, IPMI_PASSWORD=password or info["password"], TZ="UTC")
    argv = ["ipmitool", "-N", "1", "-R", "1"] + LAB.ipmitool_args(info) + list(args)
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=30, check=False)


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid, encoding="ascii") as fh:
            return fh.read().split()[2] != "Z"
    except OSError:
        return False


@pytest.fixture
def run_dir(tmp_path):
    yield tmp_path / "lab"
    LAB.stop(tmp_path / "lab")


def test_start_healthy_nodes_and_stop(run_dir):
    infos = LAB.start(run_dir, ["n1", "n2"])
    assert sorted(infos) == ["n1", "n2"]
    n1 = infos["n1"]
    assert (n1["address"], n1["username"], n1["password"], n1["down"], n1["faults"]) == (
        "127.0.0.1", "admin", LAB.PASSWORD, False, [])
    assert n1["statedir"] == str(run_dir / "ipmi_sim" / "n1" / "state")
    assert len({infos["n1"]["port"], infos["n2"]["port"]}) == 2
    assert os.path.isfile(run_dir / "ipmi_sim" / "n1" / "ipmi_sim.pid") and alive(n1["pid"])
    assert os.path.isfile(run_dir / "ipmi_sim" / "bmcs.json")
    res = ipmitool(infos["n2"], "fru", "print")
    assert res.returncode == 0 and " Product Serial        : S49200000002\n" in res.stdout
    res = ipmitool(n1, "sel", "elist")
    assert (res.returncode, res.stdout) == (0, "")
    with pytest.raises(LabError) as info:
        LAB.start(run_dir, ["n1"])
    assert str(info.value) == "ipmi_sim: BMCs of n1, n2 already run under %s; stop them first" % run_dir
    pids = [infos[n]["pid"] for n in infos]
    assert sorted(LAB.stop(run_dir)) == ["n1", "n2"]
    assert not any(alive(pid) for pid in pids)
    assert not os.path.exists(run_dir / "ipmi_sim" / "n1" / "ipmi_sim.pid")
    assert os.path.isfile(run_dir / "ipmi_sim" / "n1" / "lan.conf")
    assert LAB.stop(run_dir) == []


def test_each_start_has_a_fresh_state(run_dir):
    info = LAB.start(run_dir, ["n1"])["n1"]
    LAB.inject(info, "sensor_set_bit 0x20 0 0x60 0 1 1")          # DIMM Status: Correctable ECC, logged
    assert "Memory DIMM Status | Correctable ECC | Asserted" in ipmitool(info, "sel", "elist").stdout
    LAB.stop(run_dir)
    info = LAB.start(run_dir, ["n1"])["n1"]
    assert ipmitool(info, "sel", "elist").stdout == ""


def test_faults(run_dir):
    infos = LAB.start(run_dir, {
        "psu": {"faults": [{"kind": "psu_failed", "psu": 1}]},
        "sel": {"faults": ["sel_critical"]},
        "hot": {"faults": [{"kind": "sensor_over", "sensor": "Inlet Temp", "value": 47}]},
        "creds": {"faults": ["bmc_bad_credentials"], "firmware": "1.01"},
        "down": {"faults": ["bmc_down"]},
    })
    sdr = ipmitool(infos["psu"], "sdr", "elist").stdout
    assert "PSU1 Status      | 40h | ok  | 10.1 | Presence detected, Failure detected\n" in sdr
    assert "PSU1 Power       | 44h | ok  | 10.1 | 0 Watts\n" in sdr
    sel = ipmitool(infos["sel"], "sel", "elist").stdout
    assert sel.endswith(" | Memory DIMM Status | Uncorrectable ECC | Asserted\n") and sel.count("\n") == 1
    sensor = ipmitool(infos["hot"], "sensor").stdout
    assert sensor.startswith("CPU1 Temp ")
    assert "Inlet Temp       | 47.000     | degrees C  | cr    | na        | na        | na        | 40.000    | 45.000    | 50.000    \n" in sensor
    creds = infos["creds"]
    assert creds["password"] == LAB.BAD_PASSWORD
    res = ipmitool(creds, "mc", "info")
    assert (res.returncode, res.stderr) == (1, "Error: Unable to establish IPMI v2 / RMCP+ session\n")
    assert "Firmware Revision         : 1.01\n" in ipmitool(creds, "mc", "info", password=LAB.PASSWORD).stdout
    down = infos["down"]
    assert (down["down"], down["pid"], down["console_port"]) == (True, None, None)
    assert ipmitool(down, "mc", "info").returncode == 1
    with pytest.raises(LabError) as info:
        LAB.inject(down, "sel_add 0x20 2 0 0 0 0 0x20 0 4 0x0c 0x60 0x6f 1 0xff 0xff")
    assert str(info.value) == "ipmi_sim: node down has no running BMC (bmc_down)"


def test_chassis_power_follows_the_commands(run_dir):
    info = LAB.start(run_dir, ["n1"])["n1"]
    assert ipmitool(info, "chassis", "power", "off").stdout == "Chassis Power Control: Down/Off\n"
    assert ipmitool(info, "chassis", "power", "status").stdout == "Chassis Power is off\n"
    assert ipmitool(info, "chassis", "status").stdout.startswith("System Power         : off\n")
    ipmitool(info, "chassis", "power", "on")
    # ipmi_sim powers a cycled chassis on again 1 s after the cycle (OpenIPMI's start_poweron_timer): the status
    # read is "off" if it was answered within that second; on a loaded machine the two ipmitool sessions can take longer
    began = time.monotonic()
    assert ipmitool(info, "chassis", "power", "cycle").stdout == "Chassis Power Control: Cycle\n"
    status = ipmitool(info, "chassis", "power", "status").stdout
    if time.monotonic() - began < 1.0:
        assert status == "Chassis Power is off\n"
    else:
        assert status in ("Chassis Power is off\n", "Chassis Power is on\n")
    deadline = time.monotonic() + 10
    while ipmitool(info, "chassis", "power", "status").stdout != "Chassis Power is on\n":
        assert time.monotonic() < deadline, "ipmi_sim did not power the chassis on again after the cycle"
        time.sleep(0.2)


def test_inject_errors_and_bad_settings(run_dir):
    info = LAB.start(run_dir, ["n1"])["n1"]
    with pytest.raises(LabError) as exc:
        LAB.inject(info, "bogus_cmd 1 2")
    assert str(exc.value) == "ipmi_sim console of n1: 'bogus_cmd 1 2': Unknown command: bogus_cmd"
    with pytest.raises(LabError) as exc:
        LAB.inject(info, "sel_add 1\nquit")
    assert str(exc.value) == "ipmi_sim: one console command at a time, without newlines: 'sel_add 1\\nquit'"
    cases = [
        ({"x": {"faults": [{"kind": "psu_failed", "psu": 3}]}}, "ipmi_sim: node x: fault psu_failed: psu must be 1 or 2, got 3"),
        ({"x": {"faults": [{"kind": "sensor_over", "sensor": "FAN1"}]}},
         "ipmi_sim: node x: fault sensor_over: 'FAN1' is not a temperature sensor of this node (CPU1 Temp, CPU2 Temp, "
         "Inlet Temp, GPU1 Temp, GPU2 Temp, GPU3 Temp, GPU4 Temp, GPU5 Temp, GPU6 Temp, GPU7 Temp, GPU8 Temp)"),
        ({"x": {"faults": [{"kind": "sensor_over", "value": 80}]}},
         "ipmi_sim: node x: fault sensor_over: value 80 is not over the upper critical threshold 87"),
        ({"x": {"faults": [{"kind": "psu_failed", "slot": 1}]}},
         "node x: faults[0]: fault 'psu_failed' has unknown parameter(s) ['slot']; it takes ['psu']"),
        ({"x": {"firmware": "1.2"}}, "ipmi_sim: firmware '1.2' is not MAJOR.MINOR with two minor digits (e.g. 1.02)"),
        ({"x": {"color": "red"}}, "ipmi_sim: node x: unknown setting(s) ['color']; known: faults, gpus, firmware, index"),
        ({"a b": {}}, "ipmi_sim: node name 'a b': use letters, digits, '.', '_' and '-' only"),
    ]
    for nodes, message in cases:
        with pytest.raises(LabError) as exc:
            LAB.start(run_dir / "other", nodes)
        assert str(exc.value) == message


def test_stop_kills_only_the_ipmi_sim_it_started(run_dir):
    LAB.start(run_dir, ["n1"])
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        pidfile = run_dir / "ipmi_sim" / "n2" / "ipmi_sim.pid"
        pidfile.parent.mkdir()
        pidfile.write_text("%d\n" % bystander.pid)
        assert LAB.stop(run_dir) == ["n1"]
        assert bystander.poll() is None and not pidfile.exists()
    finally:
        bystander.kill()
        bystander.wait()
