# SPDX-License-Identifier: GPL-3.0-or-later
"""BMC rules on ``bmc`` facts (docs/bmc-facts.md) built from real captures: the Dell PowerEdge R750 Redfish tree
(system, Thermal, Power, iDRAC, SEL), the DGX H100 HGX GPU processors, and ipmitool sensor rows of an HPE ProLiant.
The test-side transform below reads only real values from the JSON; faults are edits of those values."""

from __future__ import annotations

import copy
import json
import os

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import REMEDIES
from ansible_collections.zhisuan.ops.plugins.module_utils._judge.bmc import judge_bmc, parse_time, summarize_bmc

REDFISH = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "redfish")


def _json(*parts):
    with open(os.path.join(REDFISH, *(parts + ("index.json",))), encoding="utf-8") as handle:
        return json.load(handle)


def _dell_facts():
    tree = "dell-poweredge-r750-h100-pcie"
    system = _json(tree, "Systems", "System.Embedded.1")
    thermal = _json(tree, "Chassis", "System.Embedded.1", "Thermal")
    power = _json(tree, "Chassis", "System.Embedded.1", "Power")
    manager = _json(tree, "Managers", "iDRAC.Embedded.1")
    sensors = [{"id": item["MemberId"], "name": item["Name"], "kind": "temperature", "reading": item.get("ReadingCelsius"),
                "units": "Cel", "health": item["Status"].get("Health"),
                "thresholds": {"lower_fatal": item.get("LowerThresholdFatal"), "lower_critical": item.get("LowerThresholdCritical"),
                               "lower_caution": item.get("LowerThresholdNonCritical"),
                               "upper_caution": item.get("UpperThresholdNonCritical"),
                               "upper_critical": item.get("UpperThresholdCritical"), "upper_fatal": item.get("UpperThresholdFatal")}}
               for item in thermal["Temperatures"]]
    sensors += [{"id": item["MemberId"], "name": item["Name"], "kind": "voltage", "reading": item.get("ReadingVolts"),
                 "units": "V", "health": item["Status"].get("Health"), "thresholds": {}} for item in power["Voltages"]]
    fans = [{"id": item["MemberId"], "name": item["Name"], "reading": item["Reading"], "units": item["ReadingUnits"],
             "health": item["Status"].get("Health"), "state": item["Status"].get("State")} for item in thermal["Fans"]]
    supplies = [{"id": item["MemberId"], "name": item["Name"], "model": item["Model"], "serial": item["SerialNumber"],
                 "firmware_version": item["FirmwareVersion"], "capacity_watts": item["PowerCapacityWatts"],
                 "input_watts": item["PowerInputWatts"], "output_watts": None, "health": item["Status"].get("Health"),
                 "state": item["Status"].get("State")} for item in power["PowerSupplies"]]
    return {
        "protocol": "redfish", "address": "10.20.1.11", "vendor": "dell",
        "manager": {"id": manager["Id"], "model": manager.get("Model"), "firmware_version": manager["FirmwareVersion"],
                    "health": manager["Status"].get("Health")},
        "system": {"id": system["Id"], "manufacturer": system["Manufacturer"], "model": system["Model"],
                   "serial": system["SerialNumber"], "sku": system.get("SKU"), "uuid": system.get("UUID"),
                   "bios_version": system["BiosVersion"], "power_state": system["PowerState"],
                   "health": system["Status"]["Health"]},
        "chassis": [], "processors": [], "gpus": [], "memory": None, "pcie_devices": [], "nics": [], "drives": [],
        "power_supplies": supplies, "fans": fans, "sensors": sensors, "fru": None, "errors": [],
    }


def _dell_log():
    entries = _json("dell-poweredge-r750-h100-pcie", "Managers", "iDRAC.Embedded.1", "LogServices", "Sel", "Entries")
    return [{"id": item["Id"], "created": item["Created"], "severity": item["Severity"], "message": item["Message"],
             "message_id": item.get("MessageId"), "source": "SEL", "sensor": None} for item in entries["Members"]]


def _dgx_gpus():
    gpus = []
    for number in range(1, 9):
        item = _json("nvidia-dgx-h100-viking", "Systems", "HGX_Baseboard_0", "Processors", "GPU_SXM_%d" % number)
        gpus.append({"id": item["Id"], "model": item["Model"], "serial": item["SerialNumber"], "uuid": item.get("UUID"),
                     "firmware_version": item.get("FirmwareVersion"), "health": item["Status"].get("Health"),
                     "source": "processor"})
    return gpus


# ipmitool sensor rows of an HPE ProLiant (tests/fixtures/ipmitool/sensor-hpe-proliant-ilo-discrete-and-thresholds.txt):
# "01-Inlet Ambient | 23.000 | degrees C | ok | na | na | na | na | 42.000 | 47.000" -> ucr 42, unr 47 (mapped per the contract)
def _ipmi_facts():
    return {
        "protocol": "ipmi", "address": "10.20.1.12", "vendor": "generic",
        "manager": {"id": "BMC", "model": None, "firmware_version": "2.70", "health": None},
        "system": {"id": None, "manufacturer": "HPE", "model": "ProLiant", "serial": None, "sku": None, "uuid": None,
                   "bios_version": None, "power_state": "On", "health": None},
        "chassis": [], "processors": None, "gpus": None, "memory": None, "pcie_devices": None, "nics": None,
        "drives": None, "power_supplies": [], "fans": [], "fru": [], "errors": [],
        "sensors": [
            {"id": "01-Inlet Ambient", "name": "01-Inlet Ambient", "kind": "temperature", "reading": 23.0, "units": "Cel",
             "health": "OK", "thresholds": {"lower_fatal": None, "lower_critical": None, "lower_caution": None,
                                            "upper_caution": None, "upper_critical": 42.0, "upper_fatal": 47.0}},
            {"id": "02-CPU 1", "name": "02-CPU 1", "kind": "temperature", "reading": 40.0, "units": "Cel", "health": "OK",
             "thresholds": {"upper_critical": 70.0}},
            {"id": "03-CPU 2", "name": "03-CPU 2", "kind": "temperature", "reading": None, "units": None, "health": None,
             "thresholds": {"upper_critical": 70.0}},
        ],
    }


def _by(checks, check_id):
    return [check for check in checks if check["id"] == check_id]


def _well_formed(checks):
    for check in checks:
        assert check["remedy"] in REMEDIES
        assert (check["remedy"] == "none") == (check["status"] in ("pass", "skip")), check
        assert check["id"].startswith("bmc.") and len(check["id"].split(".")) == 3


def test_healthy_dell_r750_against_its_bill_of_materials():
    facts = _dell_facts()
    checks = judge_bmc("dell01", facts, expected={"psu_count": 2}, log=_dell_log())
    _well_formed(checks)
    assert [(check["id"], check["status"], check["component"]) for check in checks] == [
        ("bmc.readout.resources", "pass", "BMC"),
        ("bmc.power.state", "pass", "System power"),
        ("bmc.health.system", "pass", "System"),
        ("bmc.sensor.temperature", "pass", "Sensors (temperature)"),
        ("bmc.sensor.voltage", "pass", "Sensors (voltage)"),
        ("bmc.psu.health", "pass", "PSU PS1 Status"),
        ("bmc.psu.health", "pass", "PSU PS2 Status"),
    ] + [("bmc.fan.health", "pass", "Fan System Board Fan%dA" % number) for number in range(1, 7)] + [
        ("bmc.sel.critical", "pass", "System event log"),
        ("bmc.gpu.count", "skip", "GPUs (BMC view)"),
        ("bmc.gpu.model", "skip", "GPUs (BMC view)"),
        ("bmc.memory.count", "skip", "DIMMs (BMC view)"),
        ("bmc.memory.size", "skip", "Memory (BMC view)"),
        ("bmc.nic.count", "skip", "Network adapters (BMC view)"),
        ("bmc.drive.count", "skip", "Drives (BMC view)"),
        ("bmc.psu.count", "pass", "Power supplies (BMC view)"),
    ]
    temperature = _by(checks, "bmc.sensor.temperature")[0]
    assert (temperature["observed"], temperature["message"]) == (5, "5 temperature sensors are within their thresholds")
    assert temperature["evidence"] == ("CPU1 Temp, CPU2 Temp, System Board Inlet Temp, System Board GPU2 Temp, "
                                       "System Board Exhaust Temp")
    assert _by(checks, "bmc.sel.critical")[0]["message"] == "No Critical entries in the BMC log (5 entries read)"
    assert summarize_bmc(facts) == {
        "protocol": "redfish", "address": "10.20.1.11", "vendor": "dell", "manufacturer": "Dell Inc.",
        "model": "PowerEdge R750", "serial": "CNIVC0014M0388", "bios_version": "1.8.2", "bmc_firmware": "6.00.30.00",
        "power_state": "On", "health": "OK", "auth": None,
        # this test-side transform reads no GPU: the BMC's list is empty, not unknown
        "gpu_model": None, "gpu_count": 0,
        "parts": [{"kind": "psu", "slot": "PS1 Status", "model": "PWR SPLY,2400W,RDNT,ARTESYN",
                   "serial": "PHARP0016L008V", "firmware": "00.2A.2B", "source": "bmc"},
                  {"kind": "psu", "slot": "PS2 Status", "model": "PWR SPLY,2400W,RDNT,ARTESYN",
                   "serial": "PHARP0016L008W", "firmware": "00.2A.2B", "source": "bmc"}]}
    assert summarize_bmc(dict(facts, auth="basic"))["auth"] == "basic"
    assert (summarize_bmc(dict(facts, gpus=None))["gpu_count"], summarize_bmc({})["parts"]) == (None, [])


@pytest.mark.parametrize("state, status, remedy, message", [
    ("Off", "fail", "investigate", "The system is powered off: find out why (held off on purpose, PDU or breaker, power "
                                   "fault in the SEL), then power it on through the BMC"),
    ("PoweringOn", "warn", "monitor", "The system is PoweringOn; check again once it has settled"),
    (None, "error", "investigate", "The BMC did not report the power state of the system"),
])
def test_power_state(state, status, remedy, message):
    facts = _dell_facts()
    facts["system"]["power_state"] = state
    check = _by(judge_bmc("dell01", facts), "bmc.power.state")[0]
    assert (check["status"], check["remedy"], check["message"]) == (status, remedy, message)


def test_sensors_out_of_range_each_get_a_check():
    facts = _dell_facts()
    by_name = dict((sensor["name"], sensor) for sensor in facts["sensors"])
    by_name["CPU1 Temp"]["reading"] = 101          # upper critical 99
    by_name["System Board Inlet Temp"]["reading"] = 40   # upper caution 38, critical 42
    by_name["PS2 Voltage 2"]["health"] = "Critical"      # no thresholds published: the BMC's verdict
    checks = judge_bmc("dell01", facts)
    temperature = _by(checks, "bmc.sensor.temperature")
    assert [(check["status"], check["component"]) for check in temperature] == [
        ("fail", "Sensor CPU1 Temp"), ("warn", "Sensor System Board Inlet Temp"), ("pass", "Sensors (temperature)")]
    assert temperature[0]["message"] == ("Temperature sensor CPU1 Temp reads 101 Cel, above its upper critical "
                                         "threshold 99: check cooling (fans, airflow, inlet temperature, heatsinks)")
    assert temperature[0]["remedy"] == "investigate"
    assert temperature[0]["evidence"] == "reading=101, health=OK, lower_critical=3, upper_critical=99"
    assert temperature[2]["observed"] == 3
    voltage = _by(checks, "bmc.sensor.voltage")
    assert [(check["status"], check["component"]) for check in voltage] == [
        ("fail", "Sensor PS2 Voltage 2"), ("pass", "Sensors (voltage)")]
    assert voltage[0]["message"] == ("Voltage sensor PS2 Voltage 2 reads 240 V, reported Critical by the BMC: check "
                                     "power delivery (PSUs, VRs) with the vendor")


def test_ipmi_facts_sensors_and_inventory_the_protocol_cannot_see():
    facts = _ipmi_facts()
    checks = judge_bmc("hpe01", facts, expected={"gpu_count": 8, "dimm_count": 24})
    _well_formed(checks)
    assert _by(checks, "bmc.sensor.temperature")[0]["message"] == "2 temperature sensors are within their thresholds"
    assert _by(checks, "bmc.gpu.count")[0]["message"] == "The BMC does not report GPUs over ipmi"
    assert _by(checks, "bmc.memory.count")[0]["message"] == "The BMC does not report DIMMs over ipmi"
    assert _by(checks, "bmc.health.system") == []  # IPMI has no system health rollup
    facts["sensors"][0]["reading"] = 44.5  # edit of "23.000": above ucr 42, below unr 47
    hot = _by(judge_bmc("hpe01", facts), "bmc.sensor.temperature")[0]
    assert (hot["status"], hot["message"]) == ("fail", "Temperature sensor 01-Inlet Ambient reads 44.5 Cel, above its "
                                                       "upper critical threshold 42: check cooling (fans, airflow, inlet "
                                                       "temperature, heatsinks)")
    facts["sensors"][0]["reading"] = 48.0
    assert "above its upper fatal threshold 47" in _by(judge_bmc("hpe01", facts), "bmc.sensor.temperature")[0]["message"]


def test_psu_failed_unplugged_and_missing():
    facts = _dell_facts()
    failed = copy.deepcopy(facts)
    failed["power_supplies"][1]["health"] = "Critical"
    check = _by(judge_bmc("dell01", failed), "bmc.psu.health")[1]
    assert (check["status"], check["remedy"], check["message"]) == (
        "fail", "replace_part", "PSU PS2 Status has failed (health Critical): replace it")
    assert check["evidence"] == ("health=Critical, state=Enabled, input_watts=309.5, "
                                 "model=PWR SPLY,2400W,RDNT,ARTESYN, serial=PHARP0016L008W")
    unplugged = copy.deepcopy(facts)
    unplugged["power_supplies"][0]["input_watts"] = 0
    check = _by(judge_bmc("dell01", unplugged), "bmc.psu.health")[0]
    assert (check["status"], check["remedy"]) == ("warn", "check_cable")
    assert check["message"] == ("PSU PS1 Status draws no input power while 1 other PSU does: check its power cord and "
                                "PDU outlet (the node has lost power redundancy)")
    missing = copy.deepcopy(facts)
    missing["power_supplies"][1]["state"] = "Absent"
    checks = judge_bmc("dell01", missing, expected={"psu_count": 2})
    assert _by(checks, "bmc.psu.health")[1]["status"] == "skip"
    count = _by(checks, "bmc.psu.count")[0]
    assert (count["status"], count["remedy"], count["observed"], count["expected"]) == ("fail", "replace_part", 1, "== 2")
    assert count["message"] == ("The BMC lists 1 of the 2 power supplies of the bill of materials: a part is missing "
                                "or not detected; reseat it (then replace it)")


def test_fan_failed():
    facts = _dell_facts()
    facts["fans"][2]["health"] = "Critical"
    facts["fans"][3]["health"] = "Warning"
    checks = _by(judge_bmc("dell01", facts), "bmc.fan.health")
    assert [(check["status"], check["remedy"]) for check in checks[2:4]] == [("fail", "replace_part"), ("warn", "replace_part")]
    assert checks[2]["message"] == "Fan System Board Fan3A has failed (health Critical): replace it"
    assert checks[2]["evidence"] == "health=Critical, state=Enabled, reading=18600 RPM"


def test_critical_sel_entries_since_a_time():
    log = _dell_log()
    log[1].update(severity="Critical", message="The power supply PS2 failed.", message_id="PSU0003")
    check = _by(judge_bmc("dell01", _dell_facts(), log=log), "bmc.sel.critical")[0]
    assert (check["status"], check["remedy"], check["observed"]) == ("fail", "investigate", 1)
    assert check["message"] == ("The BMC logged 1 Critical entry; read them before sign-off (the newest: The power "
                                "supply PS2 failed.)")
    assert check["evidence"] == "2024-06-11T00:13:00-05:00 SEL: The power supply PS2 failed. (PSU0003)"
    # the entry is older than the delivery window: not counted
    later = _by(judge_bmc("dell01", _dell_facts(), log=log, since="2024-06-11T06:00:00Z"), "bmc.sel.critical")[0]
    assert (later["status"], later["expected"]) == ("pass", "no Critical entries since 2024-06-11T06:00:00Z")
    earlier = _by(judge_bmc("dell01", _dell_facts(), log=log, since="2024-06-11T05:12:59+00:00"), "bmc.sel.critical")[0]
    assert earlier["status"] == "fail"
    assert _by(judge_bmc("dell01", _dell_facts(), log=None), "bmc.sel.critical")[0]["status"] == "skip"
    with pytest.raises(ValueError) as info:
        judge_bmc("dell01", _dell_facts(), log=log, since="yesterday")
    assert str(info.value) == "since must be an ISO 8601 time, got 'yesterday'"


def test_dgx_gpus_the_bmc_sees_against_the_bom():
    facts = _dell_facts()
    facts["gpus"] = _dgx_gpus()
    checks = judge_bmc("dgx01", facts, expected={"gpu_count": 8, "gpu_model": "H100"})
    count, model = _by(checks, "bmc.gpu.count")[0], _by(checks, "bmc.gpu.model")[0]
    assert (count["status"], count["observed"], model["status"], model["observed"]) == ("pass", 8, "pass", "H100 80GB HBM3")
    del facts["gpus"][4]
    count = _by(judge_bmc("dgx01", facts, expected={"gpu_count": 8}), "bmc.gpu.count")[0]
    assert (count["status"], count["remedy"], count["observed"]) == ("fail", "reseat", 7)
    assert count["evidence"] == "GPU_SXM_1, GPU_SXM_2, GPU_SXM_3, GPU_SXM_4, GPU_SXM_6, GPU_SXM_7, GPU_SXM_8"
    model = _by(judge_bmc("dgx01", facts, expected={"gpu_model": "H200"}), "bmc.gpu.model")[0]
    assert (model["status"], model["remedy"]) == ("fail", "replace_part")
    assert model["message"].startswith("7 GPUs are not the model of the bill of materials (H200): GPU_SXM_1: H100 80GB HBM3; ")
    facts["gpus"].append(dict(facts["gpus"][0], id="GPU_SXM_9"))
    facts["gpus"].append(dict(facts["gpus"][0], id="GPU_SXM_10"))
    more = _by(judge_bmc("dgx01", facts, expected={"gpu_count": 8}), "bmc.gpu.count")[0]
    assert (more["status"], more["remedy"], more["message"]) == (
        "fail", "investigate", "The BMC lists 9 GPUs but the bill of materials has 8: the node is not the one ordered")


def test_memory_count_and_size():
    facts = _dell_facts()
    facts["memory"] = [{"id": "DIMM.Socket.A%d" % slot, "capacity_mib": 32768, "type": "DDR4", "manufacturer": None,
                        "part_number": None, "serial": None, "health": "OK", "state": "Enabled"} for slot in range(1, 17)]
    checks = judge_bmc("dell01", facts, expected={"dimm_count": 16, "memory_gib": 512})
    assert [check["status"] for check in _by(checks, "bmc.memory.count") + _by(checks, "bmc.memory.size")] == ["pass", "pass"]
    facts["memory"][5].update(state="Absent", capacity_mib=0)
    checks = judge_bmc("dell01", facts, expected={"dimm_count": 16, "memory_gib": "512"})
    size = _by(checks, "bmc.memory.size")[0]
    assert (size["status"], size["remedy"], size["observed"], size["evidence"]) == ("fail", "reseat", 480.0,
                                                                                    "15 DIMMs present, 480 GiB")
    assert size["message"] == ("The BMC sees 480 GiB of memory, the bill of materials says 512 GiB: a DIMM is missing "
                               "or not detected; reseat it")
    assert _by(checks, "bmc.memory.count")[0]["status"] == "fail"


def test_unreadable_resources_and_unhealthy_system():
    facts = _dell_facts()
    facts["errors"] = [{"resource": "/redfish/v1/Chassis/System.Embedded.1/Thermal", "error": "HTTP 404"}]
    facts["system"]["health"] = "Critical"
    checks = judge_bmc("dell01", facts)
    assert (checks[0]["status"], checks[0]["evidence"]) == ("warn", "/redfish/v1/Chassis/System.Embedded.1/Thermal: HTTP 404")
    health = _by(checks, "bmc.health.system")[0]
    assert (health["status"], health["remedy"]) == ("fail", "investigate")


def test_parse_time():
    assert parse_time("2024-06-11T00:13:00-05:00").isoformat() == "2024-06-11T00:13:00-05:00"
    assert parse_time("2024-06-11T05:13:00Z").isoformat() == "2024-06-11T05:13:00+00:00"
    assert parse_time("2024-06-11 05:13:00").isoformat() == "2024-06-11T05:13:00+00:00"
    assert parse_time("11/30/26") is None
