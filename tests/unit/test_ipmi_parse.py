# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""ipmitool parsers against the real captures in tests/fixtures/ipmitool (see PROVENANCE.md).

Real captures: ``sensor-supermicro-style-ok.txt`` and ``sensor-hpe-proliant-ilo-discrete-and-thresholds.txt``
(``ipmitool sensor`` of real boards), ``sel-elist-acpi-power-states-long.txt`` and ``sel-elist-chassis-intrusion.txt``
(``ipmitool sel elist``, ipmitool 1.8.18 row form), and ``ipmi-sim-*.txt``: ipmitool 1.8.19 against OpenIPMI's
ipmi_sim in this project's lab. Non-ok states are made by editing values in these texts; each test says what it edits.
"""

from __future__ import annotations

import os

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._ipmi import parse

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "fixtures", "ipmitool")
NO_THRESHOLDS = dict.fromkeys(parse.THRESHOLD_KEYS)


def read(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        return handle.read()


def edit_row(text, name, **columns):
    """The capture with the row of sensor ``name`` changed: ``columns`` maps a column index to its new value.

    The value is written into the column's own width, as ipmitool pads it."""
    out, hits = [], 0
    for line in text.split("\n"):
        fields = line.split("|")
        if fields[0].strip() == name:
            hits += 1
            for index, value in columns.items():
                index = int(index[1:])
                width = len(fields[index])
                fields[index] = (" " + value).ljust(width - 1) + " " if index else value.ljust(width)
            line = "|".join(fields)
        out.append(line)
    assert hits == 1, name
    return "\n".join(out)


def collect_warnings():
    seen = []
    return seen, seen.append


# ---------------------------------------------------------------------------------------------------------- sensor

def test_sensor_supermicro_capture():
    seen, warn = collect_warnings()
    sensors = parse.parse_sensor(read("sensor-supermicro-style-ok.txt"), warn=warn)
    assert seen == []
    assert len(sensors) == 36
    assert sensors[0] == {"name": "CPU Temp", "units": "degrees C", "discrete": False, "reading": 52.0, "status": "ok",
                          "state": None, "thresholds": {"lnr": 0.0, "lcr": 0.0, "lnc": 0.0, "unc": 96.0, "ucr": 101.0,
                                                        "unr": 101.0}}
    by_name = {s["name"]: s for s in sensors}
    assert by_name["DIMMA2 Temp"] == {"name": "DIMMA2 Temp", "units": None, "discrete": False, "reading": None,
                                      "status": "na", "state": None, "thresholds": NO_THRESHOLDS}
    assert by_name["12V"]["reading"] == 12.189
    assert by_name["FAN1"]["thresholds"] == {"lnr": 300.0, "lcr": 500.0, "lnc": 700.0, "unc": 25300.0, "ucr": 25400.0,
                                             "unr": 25500.0}
    assert by_name["PS1 Status"] == {"name": "PS1 Status", "units": "discrete", "discrete": True, "reading": None,
                                     "status": None, "state": 0x0100, "thresholds": NO_THRESHOLDS}
    assert by_name["Chassis Intru"]["state"] == 0


def test_sensor_hpe_capture_discrete_na_and_percent():
    seen, warn = collect_warnings()
    sensors = parse.parse_sensor(read("sensor-hpe-proliant-ilo-discrete-and-thresholds.txt"), warn=warn)
    assert seen == []
    assert len(sensors) == 141
    by_name = {s["name"]: s for s in sensors}
    assert by_name["01-Inlet Ambient"]["thresholds"] == dict(NO_THRESHOLDS, ucr=42.0, unr=47.0)
    assert (by_name["03-CPU 2"]["reading"], by_name["03-CPU 2"]["status"], by_name["03-CPU 2"]["units"]) == (None, "na", None)
    assert (by_name["Fan 3 DutyCycle"]["reading"], by_name["Fan 3 DutyCycle"]["units"]) == (11.76, "percent")
    assert (by_name["CPU Utilization"]["units"], by_name["CPU Utilization"]["reading"]) == ("unspecified", 0.0)
    assert (by_name["Fan 1"]["discrete"], by_name["Fan 1"]["state"]) == (True, None)
    assert by_name["Memory Status"]["state"] == 0x4080
    assert sum(1 for s in sensors if s["discrete"]) == 67


def test_sensor_edited_non_ok_states():
    """Edits of the Supermicro capture: CPU Temp 97 nc, PCH Temp 96 cr, System Temp 91 nr, 12V unreadable (na)."""
    text = read("sensor-supermicro-style-ok.txt")
    text = edit_row(text, "CPU Temp", c1="97.000", c3="nc")
    text = edit_row(text, "PCH Temp", c1="96.000", c3="cr")
    text = edit_row(text, "System Temp", c1="91.000", c3="nr")
    text = edit_row(text, "12V", c1="na", c2="", c3="na")
    by_name = {s["name"]: s for s in parse.parse_sensor(text)}
    assert [(n, by_name[n]["reading"], by_name[n]["status"], parse.health(by_name[n]["status"]))
            for n in ("CPU Temp", "PCH Temp", "System Temp", "12V")] == [
        ("CPU Temp", 97.0, "nc", "Warning"), ("PCH Temp", 96.0, "cr", "Critical"),
        ("System Temp", 91.0, "nr", "Critical"), ("12V", None, "na", None)]
    assert by_name["PCH Temp"]["thresholds"]["ucr"] == 95.0


def test_sensor_reading_over_threshold_with_a_stale_ok_status_is_kept_as_printed():
    """Edit: FAN1 reads 400 RPM (under its lower critical 500) while the BMC still prints ok."""
    text = edit_row(read("sensor-supermicro-style-ok.txt"), "FAN1", c1="400.000")
    fan = [s for s in parse.parse_sensor(text) if s["name"] == "FAN1"][0]
    assert (fan["reading"], fan["status"], fan["thresholds"]["lcr"]) == (400.0, "ok", 500.0)


def test_sensor_lab_capture_with_faults():
    by_name = {s["name"]: s for s in parse.parse_sensor(read("ipmi-sim-sensor-faults.txt"))}
    assert (by_name["GPU1 Temp"]["reading"], by_name["GPU1 Temp"]["status"]) == (89.0, "cr")
    assert by_name["GPU1 Temp"]["thresholds"] == dict(NO_THRESHOLDS, unc=83.0, ucr=87.0, unr=90.0)
    assert (by_name["PSU2 Status"]["state"], by_name["PSU2 Power"]["reading"]) == (0x0300, 0.0)
    assert by_name["12V"]["thresholds"] == {"lnr": 10.2, "lcr": 10.5, "lnc": 10.74, "unc": 12.9, "ucr": 13.26, "unr": 13.38}


def test_sensor_unexpected_lines_warn_and_unknown_status():
    text = read("sensor-supermicro-style-ok.txt").replace("VBAT             | 3.075      | Volts      | ok    |",
                                                          "VBAT             | 3.075      | Volts      | odd   |")
    text += "\nthis is not a sensor line\n"
    seen, warn = collect_warnings()
    sensors = parse.parse_sensor(text, warn=warn)
    assert len(sensors) == 36
    assert seen == ["ipmitool sensor: VBAT: unknown status 'odd'; please report",
                    "ipmitool sensor: unexpected line 'this is not a sensor line'; please report"]


@pytest.mark.parametrize("text", ["", "Error: Unable to establish IPMI v2 / RMCP+ session\n"])
def test_sensor_nothing_readable_is_a_parse_error(text):
    with pytest.raises(ParseError) as info:
        parse.parse_sensor(text)
    assert info.value.message == "ipmitool: no sensor line in the output of `ipmitool sensor`: %r" % text


# ---------------------------------------------------------------------------------------------------------- sdr elist

def test_sdr_elist_lab_captures():
    healthy = parse.parse_sdr_elist(read("ipmi-sim-sdr-elist-healthy.txt"))
    assert len(healthy) == 23 and {r["status"] for r in healthy} == {"ok"}
    assert healthy[0] == {"name": "CPU1 Temp", "number": 1, "status": "ok", "entity": "3.1", "entity_id": 3,
                          "entity_instance": 1, "reading": 48.0, "units": "degrees C", "states": [],
                          "text": "48 degrees C", "state": None}
    faults = {r["name"]: r for r in parse.parse_sdr_elist(read("ipmi-sim-sdr-elist-faults.txt"))}
    assert (faults["GPU1 Temp"]["status"], faults["GPU1 Temp"]["reading"]) == ("ucr", 89.0)
    assert faults["PSU2 Status"]["states"] == ["Presence detected", "Failure detected"]
    assert (faults["PSU2 Status"]["entity_id"], faults["PSU2 Status"]["entity_instance"]) == (10, 2)
    assert faults["DIMM Status"]["states"] == ["Uncorrectable ECC"]
    assert (faults["12V"]["reading"], faults["12V"]["units"]) == (12.18, "Volts")


def test_sdr_elist_edited_states():
    """Edits of the healthy lab capture: a GPU at lnc, a fan not readable (ns / No Reading), PSU1 AC lost."""
    text = read("ipmi-sim-sdr-elist-healthy.txt")
    text = text.replace("GPU3 Temp        | 12h | ok  | 11.3 | 38 degrees C",
                        "GPU3 Temp        | 12h | unr | 11.3 | 95 degrees C")
    text = text.replace("FAN2             | 21h | ok  | 29.2 | 8600 RPM", "FAN2             | 21h | ns  | 29.2 | No Reading")
    text = text.replace("PSU1 Status      | 40h | ok  | 10.1 | Presence detected",
                        "PSU1 Status      | 40h | ok  | 10.1 | Presence detected, Power Supply AC lost")
    records = {r["name"]: r for r in parse.parse_sdr_elist(text)}
    assert (records["GPU3 Temp"]["status"], parse.health("unr"), records["GPU3 Temp"]["reading"]) == ("unr", "Critical", 95.0)
    assert (records["FAN2"]["status"], records["FAN2"]["reading"], records["FAN2"]["states"]) == ("ns", None, [])
    assert records["PSU1 Status"]["states"] == ["Presence detected", "Power Supply AC lost"]


def test_sdr_elist_errors():
    seen, warn = collect_warnings()
    records = parse.parse_sdr_elist(read("ipmi-sim-sdr-elist-healthy.txt") + "garbage | line\n", warn=warn)
    assert len(records) == 23
    assert seen == ["ipmitool sdr elist: unexpected line 'garbage | line'; please report"]
    with pytest.raises(ParseError) as info:
        parse.parse_sdr_elist("Error: no SDR\n")
    assert info.value.message == "ipmitool: no sensor line in the output of `ipmitool sdr elist`: 'Error: no SDR\\n'"


# ---------------------------------------------------------------------------------------------------------- mc info, chassis, fru

def test_mc_info_lab_capture():
    assert parse.parse_mc_info(read("ipmi-sim-mc-info.txt")) == {
        "device_id": 32, "device_revision": 1, "firmware_revision": "1.02", "ipmi_version": "2.0",
        "manufacturer_id": 10876, "manufacturer_name": "Super Micro Computer Inc.", "product_id": 7440,
        "product_name": None, "device_available": "yes", "provides_device_sdrs": "no",
        "additional_device_support": ["Sensor Device", "SDR Repository Device", "SEL Device", "FRU Inventory Device",
                                      "IPMB Event Receiver", "Chassis Device"],
        "aux_firmware_rev_info": ["0x00", "0x00", "0x00", "0x00"]}


def test_mc_info_edited_known_product_and_garbage():
    """Edit: the product name ipmitool knows for a product id (its table), instead of Unknown (0x1D10)."""
    text = read("ipmi-sim-mc-info.txt").replace("Unknown (0x1D10)", "X13DEG-OAD")
    assert parse.parse_mc_info(text)["product_name"] == "X13DEG-OAD"
    with pytest.raises(ParseError) as info:
        parse.parse_mc_info("Error: Unable to establish IPMI v2 / RMCP+ session\n")
    assert info.value.message == ("ipmitool: no Device ID or Firmware Revision in the output of `ipmitool mc info`: "
                                  "'Error: Unable to establish IPMI v2 / RMCP+ session\\n'")


def test_chassis_status_on_off_and_edited_faults():
    on = parse.parse_chassis_status(read("ipmi-sim-chassis-status-on.txt"))
    assert on == {"system_power": "on", "power_overload": False, "power_interlock": False, "main_power_fault": False,
                  "power_control_fault": False, "power_restore_policy": "always-off", "last_power_event": None,
                  "chassis_intrusion": False, "front_panel_lockout": False, "drive_fault": False,
                  "cooling_fan_fault": False}
    assert parse.parse_chassis_status(read("ipmi-sim-chassis-status-off.txt"))["system_power"] == "off"
    text = read("ipmi-sim-chassis-status-on.txt").replace("Main Power Fault     : false", "Main Power Fault     : true")
    text = text.replace("Chassis Intrusion    : inactive", "Chassis Intrusion    : active")
    edited = parse.parse_chassis_status(text)
    assert (edited["main_power_fault"], edited["chassis_intrusion"]) == (True, True)
    with pytest.raises(ParseError) as info:
        parse.parse_chassis_status("Chassis Power is on\n")
    assert info.value.message == ("ipmitool: no 'System Power' line in the output of `ipmitool chassis status`: "
                                  "'Chassis Power is on\\n'")


def test_power_status():
    assert parse.parse_power_status(read("ipmi-sim-chassis-power-status-on.txt")) == "on"
    assert parse.parse_power_status(read("ipmi-sim-chassis-power-status-off.txt")) == "off"
    with pytest.raises(ParseError) as info:
        parse.parse_power_status("Chassis Power Control: Up/On\n")
    assert info.value.message == ("ipmitool: no 'Chassis Power is on|off' in the output of `ipmitool chassis power "
                                  "status`: 'Chassis Power Control: Up/On\\n'")


def test_fru_print_lab_capture():
    assert parse.parse_fru_print(read("ipmi-sim-fru-print.txt")) == [{
        "id": "0", "description": "Builtin FRU Device", "error": None,
        "fields": {"chassis_type": "Rack Mount Chassis", "chassis_part_number": "CSE-GP801TS",
                   "chassis_serial": "C8010MM000001", "board_mfg_date": "Mon Mar 18 08:00:00 2024 UTC",
                   "board_mfg": "Supermicro", "board_product": "X13DEG-OAD", "board_serial": "OM23BS000001",
                   "board_part_number": "X13DEG-OAD", "product_manufacturer": "Supermicro",
                   "product_name": "SYS-821GE-TNHR", "product_part_number": "SYS-821GE-TNHR",
                   "product_version": "0123456789", "product_serial": "S49200000001"}}]


def test_fru_print_edited_second_device_not_present():
    """Edit: a second FRU device that cannot be read, with the line ipmitool 1.8.19 prints for it (seen against an
    ipmi_sim without FRU data: `Device not present (Invalid data field in request)`)."""
    text = read("ipmi-sim-fru-print.txt") + ("FRU Device Description : PSU2 (ID 2)\n"
                                             " Device not present (Invalid data field in request)\n\n")
    devices = parse.parse_fru_print(text)
    assert [(d["id"], d["description"], d["error"], d["fields"]) for d in devices[1:]] == [
        ("2", "PSU2", "Device not present (Invalid data field in request)", {})]
    with pytest.raises(ParseError) as info:
        parse.parse_fru_print("Error: no FRU\n")
    assert info.value.message == "ipmitool: no 'FRU Device Description' in the output of `ipmitool fru print`: 'Error: no FRU\\n'"
    assert parse.parse_fru_print("") == []
