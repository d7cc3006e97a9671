# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parsed ipmitool captures -> the ``bmc`` facts of docs/bmc-facts.md; the ipmitool command lines (no password on
them); and the session-error classification with a stand-in ipmitool that prints a real captured answer."""

from __future__ import annotations

import os
import stat

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import BMCAuthError, BMCUnreachable
from ansible_collections.zhisuan.ops.plugins.module_utils._ipmi import argv as ipmi_argv
from ansible_collections.zhisuan.ops.plugins.module_utils._ipmi import collect, facts, parse

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "fixtures", "ipmitool")
SECRET = "s3cr3t-not-in-argv"


def read(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        return handle.read()


def lab_facts(sensor="ipmi-sim-sensor-faults.txt", sdr="ipmi-sim-sdr-elist-faults.txt", chassis_text=None):
    chassis = parse.parse_chassis_status(chassis_text or read("ipmi-sim-chassis-status-on.txt"))
    return facts.build("10.20.1.11", parse.parse_mc_info(read("ipmi-sim-mc-info.txt")), chassis,
                       parse.parse_fru_print(read("ipmi-sim-fru-print.txt")), parse.parse_sensor(read(sensor)),
                       parse.parse_sdr_elist(read(sdr)), [])


def test_bmc_facts_from_the_lab_captures():
    bmc = lab_facts()
    assert sorted(bmc) == ["address", "chassis", "drives", "errors", "fans", "fru", "gpus", "manager", "memory", "nics",
                           "pcie_devices", "power_supplies", "processors", "protocol", "sensors", "system", "vendor"]
    assert (bmc["protocol"], bmc["address"], bmc["vendor"]) == ("ipmi", "10.20.1.11", "supermicro")
    assert bmc["manager"] == {"id": "BMC", "model": None, "firmware_version": "1.02", "health": "OK"}
    assert bmc["system"] == {"id": None, "manufacturer": "Supermicro", "model": "SYS-821GE-TNHR", "serial": "S49200000001",
                             "sku": None, "uuid": None, "bios_version": None, "power_state": "On", "health": "OK"}
    assert bmc["chassis"] == [{"id": "0", "name": "Rack Mount Chassis", "manufacturer": "Supermicro",
                               "model": "SYS-821GE-TNHR", "serial": "C8010MM000001", "part_number": "CSE-GP801TS",
                               "health": "OK"}]
    assert [bmc[key] for key in ("processors", "gpus", "memory", "pcie_devices", "nics", "drives")] == [None] * 6
    assert bmc["fru"] == [{"id": "0", "product": "SYS-821GE-TNHR", "manufacturer": "Supermicro",
                           "serial": "S49200000001", "part_number": "SYS-821GE-TNHR"}]
    assert bmc["power_supplies"] == [
        {"id": "10.1", "name": "PSU1 Status", "model": None, "serial": None, "firmware_version": None,
         "capacity_watts": None, "input_watts": 1180.0, "output_watts": None, "health": "OK", "state": "Enabled"},
        {"id": "10.2", "name": "PSU2 Status", "model": None, "serial": None, "firmware_version": None,
         "capacity_watts": None, "input_watts": 0.0, "output_watts": None, "health": "Critical", "state": "Enabled"}]
    assert [(f["id"], f["reading"], f["units"], f["health"], f["state"]) for f in bmc["fans"]][:2] == [
        ("FAN1", 8400.0, "RPM", "OK", "Enabled"), ("FAN2", 8600.0, "RPM", "OK", "Enabled")]
    assert len(bmc["fans"]) == 6
    gpu1 = [s for s in bmc["sensors"] if s["name"] == "GPU1 Temp"][0]
    assert gpu1 == {"id": "GPU1_Temp", "name": "GPU1 Temp", "kind": "temperature", "part": "gpu", "reading": 89.0,
                    "units": "Cel", "health": "Critical", "thresholds": {"lower_fatal": None, "lower_critical": None, "lower_caution": None,
                                                         "upper_caution": 83.0, "upper_critical": 87.0, "upper_fatal": 90.0}}
    assert [(s["name"], s["kind"], s["units"]) for s in bmc["sensors"] if s["kind"] not in ("temperature", "fan")] == [
        ("12V", "voltage", "V"), ("PSU1 Power", "power", "W"), ("PSU2 Power", "power", "W")]
    assert len(bmc["sensors"]) == 20
    assert bmc["errors"] == []


def test_healthy_lab_node_has_every_psu_and_sensor_ok():
    bmc = lab_facts("ipmi-sim-sensor-healthy.txt", "ipmi-sim-sdr-elist-healthy.txt")
    assert {s["health"] for s in bmc["sensors"]} == {"OK"}
    assert [p["health"] for p in bmc["power_supplies"]] == ["OK", "OK"]


@pytest.mark.parametrize("states, health", [
    ("Presence detected, Power Supply AC lost", "Critical"),
    ("Presence detected, Predictive failure", "Warning"),
    ("Presence detected", "OK"),
])
def test_psu_health_from_edited_states(states, health):
    """Edit: PSU1's states in the healthy sdr elist capture."""
    text = read("ipmi-sim-sdr-elist-healthy.txt").replace("| 10.1 | Presence detected", "| 10.1 | " + states)
    psus = facts.psu_facts(parse.parse_sdr_elist(text))
    assert [psu["health"] for psu in psus] == [health, "OK"]


def test_chassis_faults_and_intrusion_from_edited_status():
    text = read("ipmi-sim-chassis-status-on.txt").replace("Cooling/Fan Fault    : false", "Cooling/Fan Fault    : true")
    text = text.replace("Chassis Intrusion    : inactive", "Chassis Intrusion    : active")
    bmc = lab_facts(chassis_text=text)
    assert (bmc["system"]["health"], bmc["chassis"][0]["health"]) == ("Warning", "Warning")
    text = read("ipmi-sim-chassis-status-off.txt").replace("Main Power Fault     : false", "Main Power Fault     : true")
    bmc = lab_facts(chassis_text=text)
    assert (bmc["system"]["power_state"], bmc["system"]["health"]) == ("Off", "Critical")


def test_real_board_sensors_into_facts():
    """The HPE capture: percent fan duty cycles are fans, absent sensors read null, discrete sensors are left out."""
    sensors = facts.sensor_facts(parse.parse_sensor(read("sensor-hpe-proliant-ilo-discrete-and-thresholds.txt")))
    assert len(sensors) == 141 - 67
    fans = facts.fan_facts(sensors)
    assert [(f["name"], f["reading"], f["units"]) for f in fans] == [
        ("Fan 1 DutyCycle", None, None), ("Fan 2 DutyCycle", None, None), ("Fan 3 DutyCycle", 11.76, "Percent"),
        ("Fan 4 DutyCycle", 13.328, "Percent"), ("Fan 5 DutyCycle", 16.856, "Percent"),
        ("Fan 6 DutyCycle", 16.856, "Percent")]
    assert fans[0]["state"] == "Absent"
    cpu2 = [s for s in sensors if s["name"] == "03-CPU 2"][0]
    assert (cpu2["id"], cpu2["reading"], cpu2["units"], cpu2["health"]) == ("03_CPU_2", None, None, None)
    assert [s for s in sensors if s["name"] == "CPU Utilization"][0]["units"] == "unspecified"


def test_firmware_and_log():
    mc = parse.parse_mc_info(read("ipmi-sim-mc-info.txt"))
    assert facts.firmware(mc) == [{"id": "BMC", "name": "BMC Firmware", "version": "1.02", "component": "bmc",
                                   "updateable": None}]
    log = facts.log(parse.parse_sel_elist(read("ipmi-sim-sel-elist-faults.txt"), utc=True))
    assert log[1] == {"id": "2", "created": "2026-11-30T21:47:26+00:00", "severity": "Critical",
                      "message": "Memory DIMM Status | Uncorrectable ECC | Asserted", "message_id": None,
                      "source": "SEL", "sensor": "DIMM Status", "class": "hardware", "oem": False,
                      "manufacturer": None, "part": "dimm"}
    assert facts.log(None) is None


def test_vendor_from_the_iana_number():
    text = read("ipmi-sim-mc-info.txt").replace("Manufacturer ID           : 10876", "Manufacturer ID           : 674")
    mc = parse.parse_mc_info(text)
    assert facts.build("bmc", mc, None, None, None, None, [])["vendor"] == "dell"
    mc["manufacturer_id"] = 4753
    bmc = facts.build("bmc", mc, None, None, None, None, [{"resource": "ipmitool sensor", "error": "x"}])
    assert (bmc["vendor"], bmc["sensors"], bmc["fans"], bmc["power_supplies"], bmc["chassis"], bmc["fru"]) == (
        "generic", None, None, None, None, None)
    assert bmc["errors"] == [{"resource": "ipmitool sensor", "error": "x"}]


# ---------------------------------------------------------------------------------------------------------- argv

def test_argv_never_holds_the_password():
    conn = ipmi_argv.Connection("10.20.1.11", 623, "admin", SECRET)
    argv, env = ipmi_argv.command(conn, ipmi_argv.SEL_ELIST)
    assert argv == ["ipmitool", "-I", "lanplus", "-H", "10.20.1.11", "-p", "623", "-C", "3", "-U", "admin", "-E",
                    "sel", "elist"]
    assert env == {"TZ": "UTC", "IPMI_PASSWORD": SECRET}
    conn = ipmi_argv.Connection("bmc01", 6230, None, None, interface="lan", program="/opt/ipmitool")
    assert ipmi_argv.command(conn, ipmi_argv.MC_INFO) == (
        ["/opt/ipmitool", "-I", "lan", "-H", "bmc01", "-p", "6230", "mc", "info"], {"TZ": "UTC"})


def test_argspec_password_is_no_log_with_env_fallback():
    spec = ipmi_argv.IPMI_ARGSPEC["bmc_password"]
    assert spec["no_log"] is True and spec["fallback"][1] == ["ZHISUAN_BMC_PASSWORD"]
    assert ipmi_argv.IPMI_ARGSPEC["cipher_suite"]["default"] == 3


# ---------------------------------------------------------------------------------------------------------- session errors

def _program(tmp_path, body):
    path = tmp_path / "ipmitool"
    path.write_text("#!/bin/sh\necho \"$@\" >> %s\n%s" % (tmp_path / "calls", body))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_refused_login_is_an_auth_error_naming_the_user(tmp_path):
    """The stand-in prints what ipmitool 1.8.19 printed against the lab's ipmi_sim with a wrong password."""
    capture = os.path.join(FIXTURES, "ipmi-sim-wrong-password-v.txt")
    prog = _program(tmp_path, 'case " $* " in *" -v "*) cat %s ;; '
                              '*) echo "Error: Unable to establish IPMI v2 / RMCP+ session" >&2 ;; esac\nexit 1\n' % capture)
    conn = ipmi_argv.Connection("10.20.1.11", 623, "admin", SECRET, program=prog, timeout=5)
    with pytest.raises(BMCAuthError) as info:
        collect.collect(conn)
    assert info.value.kind == "auth_failed"
    assert info.value.message == ("ipmitool: the BMC at 10.20.1.11:623 refused the session for user 'admin': "
                                  "RAKP 2 HMAC is invalid (check bmc_username and bmc_password)")
    assert SECRET not in repr(info.value.as_dict())
    calls = (tmp_path / "calls").read_text().splitlines()
    assert calls == ["-I lanplus -H 10.20.1.11 -p 623 -C 3 -U admin -E mc info",
                     "-I lanplus -H 10.20.1.11 -p 623 -C 3 -U admin -E -v -N 1 -R 1 mc info"]


def test_no_answer_is_unreachable(tmp_path):
    """ipmitool's verbose answer when nothing answers on the BMC's port (seen against a lab node with bmc_down)."""
    prog = _program(tmp_path, 'case " $* " in *" -v "*) echo "Get Auth Capabilities error" >&2 ;; esac\n'
                              'echo "Error: Unable to establish IPMI v2 / RMCP+ session" >&2\nexit 1\n')
    conn = ipmi_argv.Connection("10.20.1.12", 623, "admin", SECRET, program=prog, timeout=5)
    with pytest.raises(BMCUnreachable) as info:
        collect.collect(conn)
    assert info.value.kind == "unreachable"
    assert info.value.message == ("ipmitool: no answer from the BMC at 10.20.1.12:623 (ipmitool mc info: exited with "
                                  "rc 1: Error: Unable to establish IPMI v2 / RMCP+ session)")
