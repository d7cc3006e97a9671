# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``ipmitool sel elist`` parser and SEL severities, on the real captures (PROVENANCE.md): two of real servers in
ipmitool 1.8.18's row form and one of the lab's ipmi_sim in 1.8.19's (two-digit year, time zone, threshold detail)."""

from __future__ import annotations

import os
from collections import Counter

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._ipmi import parse

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "fixtures", "ipmitool")


def read(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        return handle.read()


def test_long_capture_rows_pre_init_and_oem():
    seen = []
    records = parse.parse_sel_elist(read("sel-elist-acpi-power-states-long.txt"), warn=seen.append)
    assert seen == []
    assert len(records) == 256
    assert records[0] == {"id": "54", "created": "2020-08-06T15:05:37", "timestamp": "08/06/2020 15:05:37",
                          "sensor_type": "System ACPI Power State", "sensor": "ACPI_Stat", "event": "S4/S5: soft-off",
                          "direction": "Asserted", "detail": None, "oem": False, "severity": "OK",
                          "message": "System ACPI Power State ACPI_Stat | S4/S5: soft-off | Asserted",
                          "class": "informational"}
    pre_init = [r for r in records if r["id"] == "56"][0]
    assert (pre_init["created"], pre_init["timestamp"]) == (None, "Pre-Init 0000000085")
    oem = [r for r in records if r["id"] == "123"][0]
    assert oem == {"id": "123", "created": "2020-10-16T10:41:22", "timestamp": "10/16/2020 10:41:22",
                   "sensor_type": None, "sensor": None, "event": None, "direction": None, "detail": "000137 | 00c378895f00",
                   "oem": True, "severity": None, "message": "OEM record dc | 000137 | 00c378895f00",
                   "record_type": 0xDC, "manufacturer_id": 311, "manufacturer": "Microsoft", "oem_data": "00c378895f00",
                   "class": "informational"}
    assert Counter(r["severity"] for r in records) == Counter({"OK": 225, None: 16, "Warning": 11, "Critical": 4})
    critical = [(r["id"], r["sensor"], r["event"]) for r in records if r["severity"] == "Critical"]
    assert critical == [("131", "Power Supply 2", "Failure detected"), ("132", "Power Supply 2", "Power Supply AC lost"),
                        ("136", "Power Supply 1", "Failure detected"), ("137", "Power Supply 1", "Power Supply AC lost")]


def test_utc_flag_marks_times_without_a_zone():
    records = parse.parse_sel_elist(read("sel-elist-acpi-power-states-long.txt"), utc=True)
    assert records[0]["created"] == "2020-08-06T15:05:37+00:00"
    assert records[2]["created"] is None


def test_chassis_intrusion_capture():
    records = parse.parse_sel_elist(read("sel-elist-chassis-intrusion.txt"))
    assert len(records) == 23
    assert [(r["id"], r["sensor_type"], r["sensor"], r["event"], r["direction"], r["severity"]) for r in records[:1]] == [
        ("1", "Physical Security", "Chassis Intru", "General Chassis intrusion ()", "Asserted", "Warning")]
    unknown = records[13]
    assert (unknown["id"], unknown["sensor_type"], unknown["sensor"], unknown["event"], unknown["severity"]) == (
        "e", "Unknown", "#0xff", None, None)
    boot = records[4]
    assert (boot["sensor_type"], boot["sensor"], boot["event"], boot["severity"]) == ("OS Boot", None, "Installation started ()", "OK")
    psu = [(r["id"], r["direction"], r["severity"]) for r in records if r["sensor"] == "PS1 Status"]
    assert psu == [("9", "Asserted", "Critical"), ("a", "Deasserted", "OK"), ("b", "Asserted", "Critical"), ("c", "Deasserted", "OK")]


def test_lab_capture_ipmitool_1_8_19_rows():
    records = parse.parse_sel_elist(read("ipmi-sim-sel-elist-faults.txt"), utc=True)
    assert [(r["id"], r["sensor_type"], r["sensor"], r["event"], r["direction"], r["detail"], r["severity"]) for r in records] == [
        ("1", "Power Supply", "PSU2 Status", "Failure detected ()", "Asserted", None, "Critical"),
        ("2", "Memory", "DIMM Status", "Uncorrectable ECC", "Asserted", None, "Critical"),
        ("3", "Temperature", "GPU1 Temp", "Upper Non-critical going high", "Asserted",
         "Reading 89 > Threshold 83 degrees C", "Warning"),
        ("4", "Temperature", "GPU1 Temp", "Upper Critical going high", "Asserted",
         "Reading 89 > Threshold 87 degrees C", "Critical")]
    assert records[0]["timestamp"] == "11/30/26 21:47:26 UTC"
    assert records[0]["created"] == "2026-11-30T21:47:26+00:00"


def test_times_in_another_zone_stay_without_offset():
    """Edit: the zone ipmitool prints for a controller in China Standard Time."""
    text = read("ipmi-sim-sel-elist-faults.txt").replace(" UTC |", " CST |")
    assert parse.parse_sel_elist(text, utc=True)[0]["created"] == "2026-11-30T21:47:26"


@pytest.mark.parametrize("event, direction, severity", [
    ("Upper Non-critical going high", "Asserted", "Warning"),
    ("Upper Critical going high", "Asserted", "Critical"),
    ("Lower Non-recoverable going low", "Asserted", "Critical"),
    ("Upper Critical going high", "Deasserted", "OK"),
    ("Transition to Non-critical from OK", "Asserted", "Warning"),
    ("Transition to Critical from less severe", "Asserted", "Critical"),
    ("Correctable ECC", "Asserted", "Warning"),
    ("Uncorrectable ECC", "Asserted", "Critical"),
    ("Predictive failure", "Asserted", "Warning"),
    ("Failure detected ()", "Asserted", "Critical"),
    ("Power Supply AC lost", "Asserted", "Critical"),
    ("Redundancy Lost", "Asserted", "Warning"),
    ("General Chassis intrusion ()", "Asserted", "Warning"),
    ("IERR", "Asserted", "Critical"),
    ("OS graceful shutdown", "Asserted", "OK"),
    ("Presence detected", "Asserted", "OK"),
    ("", "Asserted", None),
])
def test_severity(event, direction, severity):
    assert parse.sel_severity(event, direction) == severity


def test_empty_sel_and_garbage():
    # ipmitool says "SEL has no entries" for an empty SEL (1.8.x writes it to stderr): only that is an empty SEL
    assert parse.parse_sel_elist("SEL has no entries\n") == []
    assert parse.parse_sel_elist("", stderr="SEL has no entries\n") == []
    # issue 12: an empty stdout without that line is not an empty SEL but a SEL that was not read
    for text in ("", "\n", None):
        with pytest.raises(ParseError) as empty:
            parse.parse_sel_elist(text, stderr="")
        assert empty.value.message == ("ipmitool: `ipmitool sel elist` printed nothing (read 0 lines) and not the 'SEL has "
                                       "no entries' it prints for an empty SEL: the SEL was not read")
    seen = []
    records = parse.parse_sel_elist(read("ipmi-sim-sel-elist-faults.txt") + "not a row\n", warn=seen.append)
    assert len(records) == 4 and seen == ["ipmitool sel elist: unexpected line 'not a row'; please report"]
    with pytest.raises(ParseError) as info:
        parse.parse_sel_elist("Get SEL Info command failed\n")
    assert info.value.message == "ipmitool: no SEL record in the output of `ipmitool sel elist`: 'Get SEL Info command failed\\n'"


def test_unreadable_time_warns():
    """Edit: a date in a form ipmitool does not print."""
    text = read("ipmi-sim-sel-elist-faults.txt").replace("11/30/26 | 21:47:26 UTC", "2026-11-30 | 21h44", 1)
    seen = []
    records = parse.parse_sel_elist(text, warn=seen.append)
    assert records[0]["created"] is None
    assert seen == ["ipmitool sel elist: record 1: unreadable time '2026-11-30' '21h44'; please report"]
