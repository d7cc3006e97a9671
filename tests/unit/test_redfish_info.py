# SPDX-License-Identifier: GPL-3.0-or-later
"""redfish_info, redfish_firmware_info and redfish_log_info as Ansible runs them, against the replayed captures of
the four Redfish trees (DGX H100, GB200 NVL, Dell R750, DMTF public-rackmount1): the requests they make and the facts
they return."""

from __future__ import annotations

import json
import time

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.zhisuan.ops.plugins.modules import redfish_firmware_info, redfish_info, redfish_log_info
from test_redfish_wire import PASSWORD, USER, ReplayBMC

pytestmark = pytest.mark.usefixtures("as_node")

LISTS = ("chassis", "processors", "gpus", "memory", "pcie_devices", "nics", "drives", "power_supplies", "fans", "sensors")


def run(module, bmc, capsys, **args):
    args = dict({"bmc_address": bmc.address, "bmc_username": USER, "bmc_password": PASSWORD}, **args)
    with patch_module_args(args):
        with pytest.raises(SystemExit) as info:
            module.main()
    captured = capsys.readouterr().out
    return info.value.code, json.loads(captured), captured


def warnings_of(out):
    return [item["event"]["msg"] if isinstance(item, dict) else item for item in out.get("warnings", [])]


def shape(bmc_facts):
    """Which lists were filled: their lengths, None where nothing could be looked at."""
    return dict((key, None if bmc_facts[key] is None else len(bmc_facts[key])) for key in LISTS)


def session_wire(bmc):
    """The session is the first authenticated request and deleted last; every read carries its token only."""
    assert [repr(call) for call in bmc.requests[:2]] == ["GET /redfish/v1", "POST /redfish/v1/SessionService/Sessions"]
    assert bmc.requests[1].body == {"UserName": USER, "Password": PASSWORD}
    assert repr(bmc.requests[-1]) == "DELETE /redfish/v1/SessionService/Sessions/1"
    token = bmc.tokens[0]
    middle = bmc.requests[2:]
    assert {call.method for call in middle} == {"GET"} | ({"DELETE"} if len(middle) == 1 else {"GET", "DELETE"})
    assert all(call.headers.get("x-auth-token") == token and "authorization" not in call.headers for call in middle)
    assert bmc.sessions == {}


# -- redfish_info per tree --------------------------------------------------------------------------------------------

def test_dgx_h100(capsys):
    with ReplayBMC("dgx") as bmc:
        code, out, text = run(redfish_info, bmc, capsys)
    assert code == 0 and out["changed"] is False
    session_wire(bmc)
    facts = out["bmc"]
    assert (facts["protocol"], facts["vendor"], facts["address"]) == ("redfish", "nvidia", bmc.address.split("//")[1])
    assert facts["manager"] == {"id": "BMC", "model": "77171220", "firmware_version": "23.11.20", "health": "OK"}
    assert facts["system"] == {
        "id": "DGX", "manufacturer": "NVIDIA", "model": "DGXH100", "serial": "1662923610124", "sku": "920-24387-2540-000",
        "uuid": "B11DD4F2-BFDE-1000-02BC-5CFF35FBE6E9", "bios_version": "1.1.3", "power_state": "On", "health": "OK"}
    assert shape(facts) == {"chassis": 2, "processors": 8, "gpus": 8, "memory": None, "pcie_devices": 1, "nics": None,
                            "drives": None, "power_supplies": 1, "fans": 36, "sensors": 160}
    # the GPUs are the HGX baseboard's processors
    assert [gpu["id"] for gpu in facts["gpus"]] == ["GPU_SXM_%d" % n for n in range(1, 9)]
    assert {(gpu["model"], gpu["firmware_version"], gpu["source"]) for gpu in facts["gpus"]} == {
        ("H100 80GB HBM3", "96.00.89.00.01", "processor")}
    assert facts["gpus"][0]["uuid"] == "9dad5bfd-a732-23fe-40ad-465d0cbe5f95"
    assert "GET /redfish/v1/Systems/HGX_Baseboard_0/Processors?$expand=.($levels=1)" in [repr(call) for call in bmc.requests]
    # the PCIe devices are read page by page from the chassis
    assert "GET /redfish/v1/Chassis/DGX/PCIeDevices?$skip=75" in [repr(call) for call in bmc.requests]
    assert facts["power_supplies"][0]["serial"] == "DTHTCT23070SP"
    assert [sensor["kind"] for sensor in facts["sensors"]].count("fan") == 36
    assert facts["fru"] is None
    assert facts["errors"] == [
        {"resource": "/redfish/v1/Managers/HGX_FabricManager_0", "error": "HTTP 404"},
        {"resource": "/redfish/v1/Chassis", "error": "HTTP 404 for 45 of 47 members: CPUBaseboard, EROT_BIOS_0, EROT_BMC_0, HGX, HGX_BMC_0, ..."},
        {"resource": "/redfish/v1/Systems/DGX/Processors", "error": "HTTP 404 for 2 of 2 members: DevType1_CPU0, DevType1_CPU1"},
        {"resource": "/redfish/v1/Systems/HGX_Baseboard_0/Processors/FPGA_0", "error": "HTTP 404"},
        {"resource": "/redfish/v1/Systems/DGX/Memory", "error": "HTTP 404"},
        {"resource": "/redfish/v1/Chassis/DGX/PCIeDevices",
         "error": "HTTP 404 for 134 of 134 members: 00_00_00, 00_00_08, 00_00_0A, 00_00_0C, 00_00_0D, ..."},
        {"resource": "/redfish/v1/Chassis/DGX/NetworkAdapters", "error": "HTTP 404"},
        {"resource": "/redfish/v1/Systems/DGX/Storage", "error": "HTTP 404"},
        {"resource": "/redfish/v1/Chassis/DGX/PowerSubsystem/PowerSupplies", "error": "HTTP 404 for 5 of 6 members: PSU1, PSU2, PSU3, PSU4, PSU5"},
        {"resource": "/redfish/v1/Chassis/HGX_GPU_SXM_1/Sensors", "error": "HTTP 404"},
        {"resource": "/redfish/v1/Chassis/HGX_GPU_SXM_1/ThermalSubsystem", "error": "HTTP 404"},
        {"resource": "/redfish/v1/Chassis/HGX_GPU_SXM_1/PowerSubsystem", "error": "HTTP 404"}]
    assert PASSWORD not in text and bmc.tokens[0] not in text


def test_gb200(capsys):
    with ReplayBMC("gb200") as bmc:
        code, out, text = run(redfish_info, bmc, capsys)
    assert code == 0
    session_wire(bmc)
    facts = out["bmc"]
    assert facts["vendor"] == "nvidia"
    assert facts["manager"] == {"id": "BMC_0", "model": "OpenBmc", "firmware_version": "24.12-8", "health": "OK"}
    assert facts["system"]["id"] == "System_0" and facts["system"]["model"] is None and facts["system"]["power_state"] == "On"
    assert shape(facts) == {"chassis": 2, "processors": 1, "gpus": 1, "memory": None, "pcie_devices": None, "nics": None,
                            "drives": None, "power_supplies": 0, "fans": 0, "sensors": None}
    assert facts["chassis"][0]["model"] == "GB200 NVL"
    assert facts["gpus"] == [{"id": "GPU_0", "model": None, "serial": None, "uuid": None, "firmware_version": None,
                              "health": "OK", "source": "processor", "system": "System_0", "location": "GPU_0"}]
    assert {"resource": "/redfish/v1/Systems/HGX_Baseboard_0/Processors",
            "error": "HTTP 404 for 5 of 6 members: CPU_0, CPU_1, GPU_1, GPU_2, GPU_3"} in facts["errors"]
    assert PASSWORD not in text and bmc.tokens[0] not in text


def test_dell_r750(capsys):
    with ReplayBMC("dell") as bmc:
        code, out, _text = run(redfish_info, bmc, capsys)
    assert code == 0
    session_wire(bmc)
    expand = "?$expand=.($levels=1)"
    assert [repr(call) for call in bmc.requests[2:-1]] == ["GET " + path for path in [
        "/redfish/v1/Systems" + expand, "/redfish/v1/Managers" + expand, "/redfish/v1/Chassis" + expand,
        "/redfish/v1/Chassis/Enclosure.Internal.0-1", "/redfish/v1/Systems/System.Embedded.1/Processors" + expand,
        "/redfish/v1/Systems/System.Embedded.1/Processors/CPU.Socket.2", "/redfish/v1/Systems/System.Embedded.1/Memory" + expand,
        "/redfish/v1/Chassis/System.Embedded.1/PCIeDevices" + expand,
        "/redfish/v1/Chassis/System.Embedded.1/NetworkAdapters" + expand,
        "/redfish/v1/Systems/System.Embedded.1/Storage" + expand,
        "/redfish/v1/Chassis/System.Embedded.1/Thermal", "/redfish/v1/Chassis/System.Embedded.1/Power"]]
    facts = out["bmc"]
    assert facts["vendor"] == "dell"
    assert facts["manager"] == {"id": "iDRAC.Embedded.1", "model": "15G Monolithic", "firmware_version": "6.00.30.00",
                                "health": "OK"}
    assert facts["system"] == {
        "id": "System.Embedded.1", "manufacturer": "Dell Inc.", "model": "PowerEdge R750", "serial": "CNIVC0014M0388",
        "sku": "F54P1G3", "uuid": "4c4c4544-0035-3410-8050-c6c04f314733", "bios_version": "1.8.2", "power_state": "On",
        "health": "OK"}
    assert shape(facts) == {"chassis": 1, "processors": 2, "gpus": 1, "memory": None, "pcie_devices": None, "nics": None,
                            "drives": None, "power_supplies": 2, "fans": 6, "sensors": 61}
    assert facts["gpus"] == [{"id": "Video.Slot.2-1", "model": "NVIDIA H100 PCIe", "serial": "1654422007043", "uuid": None,
                              "firmware_version": None, "health": "OK", "source": "processor",
                              "system": "System.Embedded.1", "location": None}]
    assert facts["power_supplies"][1] == {
        "id": "PS2_Status", "name": "PS2 Status", "model": "PWR SPLY,2400W,RDNT,ARTESYN", "serial": "PHARP0016L008W",
        "firmware_version": "00.2A.2B", "capacity_watts": 2400.0, "input_watts": 309.5, "output_watts": 279.0,
        "health": "OK", "state": "Enabled"}
    assert facts["errors"] == [
        {"resource": "/redfish/v1/Chassis/Enclosure.Internal.0-1", "error": "HTTP 404"},
        {"resource": "/redfish/v1/Systems/System.Embedded.1/Processors/CPU.Socket.2", "error": "HTTP 404"},
        {"resource": "/redfish/v1/Systems/System.Embedded.1/Memory", "error": "HTTP 404"},
        {"resource": "/redfish/v1/Chassis/System.Embedded.1/PCIeDevices", "error": "HTTP 404"},
        {"resource": "/redfish/v1/Chassis/System.Embedded.1/NetworkAdapters", "error": "HTTP 404"},
        {"resource": "/redfish/v1/Systems/System.Embedded.1/Storage", "error": "HTTP 404"}]


def test_dmtf_mockup_with_basic_auth(capsys):
    with ReplayBMC("dmtf") as bmc:
        code, out, _text = run(redfish_info, bmc, capsys, auth="basic")
    assert code == 0
    assert bmc.tokens == [] and {call.method for call in bmc.requests} == {"GET"}
    assert all(call.headers["authorization"].startswith("Basic ") for call in bmc.requests[1:])
    facts = out["bmc"]
    assert facts["vendor"] == "generic"
    assert facts["system"]["bios_version"] == "P79 v1.45 (12/06/2017)"
    assert shape(facts) == {"chassis": 1, "processors": 3, "gpus": 0, "memory": None, "pcie_devices": None, "nics": None,
                            "drives": None, "power_supplies": 1, "fans": 2, "sensors": 8}
    assert [(item["id"], item["type"], item["state"]) for item in facts["processors"]] == [
        ("CPU1", "CPU", "Enabled"), ("CPU2", "CPU", "Absent"), ("FPGA1", "FPGA", "Enabled")]
    assert facts["power_supplies"][0]["health"] == "Warning"
    assert facts["errors"] == [{"resource": "/redfish/v1/Systems/437XR1138R2/Memory",
                                "error": "HTTP 404 for 4 of 4 members: DIMM1, DIMM2, DIMM3, DIMM4"}]
    assert warnings_of(out) == ["%s is reached over plain HTTP: the credentials travel unencrypted" % facts["address"]]


def test_a_failed_psu_is_reported_as_the_bmc_says(capsys):
    """Fault made by editing a value in the real capture: PSU.Slot.2 of the R750 reports Critical."""
    def failed_psu(power):
        power["PowerSupplies"][1]["Status"]["Health"] = "Critical"
        return power
    with ReplayBMC("dell", edits={"/redfish/v1/Chassis/System.Embedded.1/Power": failed_psu}) as bmc:
        _code, out, _text = run(redfish_info, bmc, capsys)
    assert [(item["id"], item["health"]) for item in out["bmc"]["power_supplies"]] == [("PS1_Status", "OK"), ("PS2_Status", "Critical")]


def test_wrong_password_fails_once_with_a_clear_message_and_no_secret(capsys):
    wrong = "Wr0ng-Pa55!"
    with ReplayBMC("dgx") as bmc:
        code, out, text = run(redfish_info, bmc, capsys, bmc_password=wrong)
    assert code == 1 and out["failed"] is True
    assert out["msg"] == ("redfish: authentication failed as user 'root' (HTTP 401 on POST /redfish/v1/SessionService/Sessions): "
                          "Invalid username or password; check bmc_username and bmc_password")
    assert (out["error_kind"], out["status"], out["resource"]) == ("auth_failed", 401, "/redfish/v1/SessionService/Sessions")
    assert wrong not in text and PASSWORD not in text


def test_password_from_the_environment(capsys, monkeypatch):
    monkeypatch.setenv("ZHISUAN_BMC_PASSWORD", PASSWORD)
    with ReplayBMC("dmtf") as bmc:
        args = {"bmc_address": bmc.address, "bmc_username": USER}
        with patch_module_args(args):
            with pytest.raises(SystemExit) as info:
                redfish_info.main()
    text = capsys.readouterr().out
    assert info.value.code == 0 and json.loads(text)["bmc"]["system"]["id"] == "437XR1138R2"
    assert bmc.requests[1].body == {"UserName": USER, "Password": PASSWORD}
    assert PASSWORD not in text


def test_unreachable_bmc_fails_with_error_kind_unreachable(capsys, monkeypatch):
    sleeps = []
    monkeypatch.setattr(time, "sleep", sleeps.append)
    with ReplayBMC("dmtf") as bmc:
        address = bmc.address
    with patch_module_args({"bmc_address": address, "bmc_username": USER, "bmc_password": PASSWORD, "timeout": 5}):
        with pytest.raises(SystemExit) as info:
            redfish_info.main()
    out = json.loads(capsys.readouterr().out)
    assert info.value.code == 1 and out["error_kind"] == "unreachable" and out["resource"] == "/redfish/v1"
    assert out["msg"].startswith("redfish: GET /redfish/v1 on %s failed: " % address.split("//")[1])
    assert sleeps == [1.0, 2.0, 4.0]


# -- redfish_firmware_info ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("tree, count, components", [
    ("dgx", 66, {"bios": 1, "bmc": 2, "cpld": 2, "gpu": 8, "psu": 6, "other": 47}),
    ("gb200", 30, {"bios": 1, "bmc": 2, "cpld": 5, "gpu": 4, "nic": 3, "other": 15}),
    ("dell", 21, {"bios": 1, "bmc": 1, "cpld": 1, "drive": 3, "nic": 7, "psu": 2, "other": 6}),
    ("dmtf", 3, {"bios": 1, "bmc": 1, "other": 1}),
])
def test_firmware_inventory(capsys, tree, count, components):
    with ReplayBMC(tree) as bmc:
        code, out, _text = run(redfish_firmware_info, bmc, capsys)
    assert code == 0 and out["changed"] is False and out["errors"] == []
    assert len(out["firmware"]) == count
    found = {}
    for item in out["firmware"]:
        found[item["component"]] = found.get(item["component"], 0) + 1
    assert found == components


def test_dell_firmware_lists_what_runs(capsys):
    with ReplayBMC("dell") as bmc:
        _code, out, _text = run(redfish_firmware_info, bmc, capsys)
    bios = [item for item in out["firmware"] if item["component"] == "bios"]
    assert bios == [{"id": "Installed-159-1.8.2__BIOS.Setup.1-1", "name": "BIOS", "version": "1.8.2", "component": "bios",
                     "updateable": True, "description": "Represents Firmware Inventory", "software_id": "159",
                     "related": [], "health": "OK", "state": "Enabled"}]
    assert not [item for item in out["firmware"] if item["id"].startswith(("Previous-", "Current-"))]


def test_gb200_bmc_version_without_prefix(capsys):
    """FW_BMC_0 reads GB200Nvl-24.12-8 in the capture; the NVIDIA adapter drops the prefix."""
    with ReplayBMC("gb200") as bmc:
        _code, out, _text = run(redfish_firmware_info, bmc, capsys)
    assert [(item["id"], item["version"]) for item in out["firmware"] if item["component"] == "bmc"] == [
        ("FW_BMC_0", "24.12-8"), ("HGX_FW_BMC_0", "GB200Nvl-24.12-8"[len("GB200Nvl-"):])]


# -- redfish_log_info -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("tree, which, sources, errors", [
    ("dgx", "sel", {"SEL": 75}, [{"resource": "/redfish/v1/Managers/HGX_FabricManager_0", "error": "HTTP 404"}]),
    ("dgx", "events", {"SEL": 75, "HGX_Baseboard_0/EventLog": 100},
     [{"resource": "/redfish/v1/Managers/HGX_FabricManager_0", "error": "HTTP 404"},
      {"resource": "/redfish/v1/Managers/BMC/LogServices/EventLog", "error": "HTTP 404"}]),
    ("gb200", "events", {"HGX_Baseboard_0/EventLog": 10},
     [{"resource": "/redfish/v1/Systems/System_0/LogServices/SEL", "error": "HTTP 404"},
      {"resource": "/redfish/v1/Managers/BMC_0/LogServices/EventLog", "error": "HTTP 404"}]),
    ("dell", "sel", {"SEL": 5}, []),
    ("dell", "events", {"SEL": 5}, [{"resource": "/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/Lclog", "error": "HTTP 404"}]),
    ("dmtf", "sel", {"437XR1138R2/Log1": 2}, []),
    ("dmtf", "events", {"BMC/Log": 1, "437XR1138R2/Log1": 2}, []),
])
def test_log_services(capsys, tree, which, sources, errors):
    with ReplayBMC(tree) as bmc:
        code, out, _text = run(redfish_log_info, bmc, capsys, log_services=which)
    assert code == 0 and [item for item in errors if item not in out["errors"]] == []
    # besides the adapter's own reads, every Chassis and every LogServices collection is looked at for event logs
    # (issue 22): the members these captures lack are errors too, and nothing else is
    assert all(item["resource"].startswith("/redfish/v1/Chassis") or "/LogServices" in item["resource"]
               for item in out["errors"] if item not in errors)
    assert out["log_errors"] == []
    found = {}
    for entry in out["log"]:
        found[entry["source"]] = found.get(entry["source"], 0) + 1
    assert found == sources


def test_critical_sel_entry_since_a_time(capsys):
    """Fault made by editing values in the real capture: the last SEL entry of the DGX becomes Critical."""
    def critical(entries):
        entries["Members"][-1]["Severity"] = "Critical"
        return entries
    path = "/redfish/v1/Managers/BMC/LogServices/SEL/Entries"
    with ReplayBMC("dgx", edits={path: critical}) as bmc:
        _code, out, _text = run(redfish_log_info, bmc, capsys, log_services="sel", since="2024-07-08T17:45:00Z")
    assert [entry["created"] for entry in out["log"]] == [
        "2024-07-08T17:46:15+00:00", "2024-07-08T17:46:18+00:00", "2024-07-08T17:48:29+00:00", "2024-07-08T17:48:32+00:00",
        "2024-07-08T17:50:00+00:00", "2024-07-08T17:50:04+00:00"]
    assert [entry["severity"] for entry in out["log"]].count("Critical") == 1
    assert out["log"][-1]["severity"] == "Critical" and out["log"][-1]["source"] == "SEL"


def test_bad_since_fails_before_contacting_the_bmc(capsys):
    with ReplayBMC("dmtf") as bmc:
        code, out, _text = run(redfish_log_info, bmc, capsys, since="last tuesday")
    assert code == 1 and out["error_kind"] == "unparsable"
    assert out["msg"] == ("redfish_log_info: since 'last tuesday' is neither an ISO 8601 time (2024-05-01T10:00:00Z) "
                          "nor a duration (24h, 7d)")
    assert bmc.requests == []
