# SPDX-License-Identifier: GPL-3.0-or-later
"""Issue 22 on the replayed captures (test_redfish_wire.ReplayBMC): an answer that is a Redfish error body is an
unreadable resource whatever its HTTP status; every event log of Systems, Managers and Chassis is read, page by page,
keeping what was read when a page fails; log entries are classified hardware / audit / informational; and the health
of every part (drives, storage, NICs, PCIe devices, memory, processors) is judged per part. Fault states are made by
editing the captured documents in the test."""

from __future__ import annotations

import copy

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import BMCError
from ansible_collections.zhisuan.ops.plugins.module_utils._judge.bmc import judge_bmc
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.client import BMCErrorBody
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.inventory import collect_bmc
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.logs import (
    classify_entry, is_audit_service, log_services_for, read_logs,
)
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.service import RedfishService
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.wire import error_body
from test_redfish_wire import ReplayBMC, _error, client_for

GPU3 = "/redfish/v1/Systems/HGX_Baseboard_0/Processors/GPU_SXM_3"
CHASSIS = "/redfish/v1/Chassis/1U"


def read(bmc, **kwargs):
    warnings = []
    with client_for(bmc, warnings, **kwargs) as client:
        facts = collect_bmc(RedfishService(client))
    return facts, warnings


def by_id(checks, ident):
    return [check for check in checks if check["id"] == ident]


def _as_error_body(message_id="Base.1.8.InternalError"):
    """An edit that answers the captured resource with an error body (served with HTTP 200 by ReplayBMC)."""
    return lambda document: _error("The request failed due to an internal service error.", message_id)


def _messages_only(document):
    """Only the ``@Message.ExtendedInfo`` of a resource, without its ``@odata.type`` (some BMCs answer so)."""
    return {"@Message.ExtendedInfo": [{"MessageId": "Base.1.8.ResourceNotFound",
                                       "Message": "The requested resource of type %s was not found." % document.get("Name")}]}


# -- error bodies ---------------------------------------------------------------------------------------------------

def test_error_body_tells_an_error_answer_from_a_resource_that_annotates_itself():
    assert "InternalError" in error_body(_error("boom", "Base.1.8.InternalError"))
    assert "ResourceNotFound" in error_body(_messages_only({"Name": "Drive"}))
    annotated = {"@odata.type": "#Chassis.v1_14_0.Chassis", "Id": "1U",
                 "@Message.ExtendedInfo": [{"MessageId": "Base.1.8.PropertyUnknown"}]}
    assert error_body(annotated) is None
    assert error_body({"@odata.type": "#Chassis.v1_14_0.Chassis", "Id": "1U"}) is None
    assert error_body({"error": "text"}) is None and error_body([1]) is None


@pytest.mark.parametrize("expand", [True, False])
def test_a_gpu_answered_with_an_error_body_and_http_200_is_unreadable_not_a_gpu(expand):
    class Plain(ReplayBMC):
        def _get(self, request):
            if "$expand" in request.query and not expand:
                return 501, {}, _error("not implemented")
            return ReplayBMC._get(self, request)

    with Plain("dgx", edits={GPU3: _as_error_body()}) as bmc:
        facts, _ = read(bmc)
        client = client_for(bmc, [])
        with client:
            with pytest.raises(BMCErrorBody) as info:
                client.get(GPU3)
    assert info.value.status == 200 and "HTTP 200 with an error body" in info.value.detail
    assert isinstance(info.value, BMCError) and "InternalError" in info.value.detail
    assert len(facts["gpus"]) == 7 and all(gpu["id"] for gpu in facts["gpus"])
    assert "GPU_SXM_3" not in [gpu["id"] for gpu in facts["gpus"]]
    assert any("error body" in item["error"] and "GPU_SXM_3" in item["resource"] + item["error"]
               for item in facts["errors"])
    assert facts["unreadable"]["gpus"] == [GPU3 + " (HTTP 200 with an error body (Base.1.8.InternalError; "
                                                  "The request failed due to an internal service error.))"]
    checks = judge_bmc("dgx01", facts, expected={"gpu_count": 8})
    assert by_id(checks, "bmc.readout.resources")[0]["status"] == "warn"
    assert "GPU_SXM_3" in by_id(checks, "bmc.readout.resources")[0]["evidence"]
    gpu = by_id(checks, "bmc.gpu.count")[0]
    assert gpu["status"] == "error" and "GPU_SXM_3" in gpu["message"]


def test_a_chassis_answered_with_messages_only_is_not_a_chassis_without_id():
    with ReplayBMC("dmtf", edits={CHASSIS: _messages_only}) as bmc:
        facts, _ = read(bmc, auth="basic")
    assert facts["chassis"] is None  # its only member could not be read: nothing was looked at
    assert [item for item in facts["errors"] if item["resource"] == CHASSIS and "ResourceNotFound" in item["error"]]
    checks = judge_bmc("n1", facts)
    assert by_id(checks, "bmc.readout.resources")[0]["status"] == "warn"


# -- logs -----------------------------------------------------------------------------------------------------------

def logs_of(bmc, which="events", **kwargs):
    with client_for(bmc, []) as client:
        service = RedfishService(client)
        return read_logs(service, which, **kwargs) + (service,)


def test_a_blade_bmc_event_log_under_the_manager_is_read_and_judged():
    """HPE Cray EX235n: the ComputerSystems have no LogServices; the node card controller keeps its events in
    Managers/BMC/LogServices/EventLog (10 Critical hardware faults), which the HPE adapter's IML/IEL do not name."""
    with ReplayBMC("hpe-cray-ex235n-a100") as bmc:
        entries, problems, _service = logs_of(bmc)
    sources = set(entry["source"] for entry in entries)
    assert "BMC/EventLog" in sources and problems == []
    critical = [entry for entry in entries if entry["severity"] == "Critical" and entry["class"] == "hardware"]
    assert len(critical) == 10 and all(entry["message_id"].startswith("CrayAlerts.Hardware") for entry in critical)
    check = by_id(judge_bmc("nid001", {}, log=entries), "bmc.sel.critical")[0]
    assert (check["status"], check["observed"]) == ("fail", 10)


def test_audit_access_denied_entries_are_not_hardware_events():
    """Gigabyte (AMI MegaRAC): five Security.1.0.AccessDenied entries of Severity Critical in the Manager's AuditLog."""
    with ReplayBMC("gigabyte-h262-z63-megarac") as bmc:
        entries, problems, _service = logs_of(bmc)
    denied = [entry for entry in entries if entry["message_id"] == "Security.1.0.AccessDenied"]
    assert len(denied) == 5 and all(entry["severity"] == "Critical" and entry["class"] == "audit" for entry in denied)
    check = by_id(judge_bmc("gb01", {}, log=entries), "bmc.sel.critical")[0]
    assert (check["status"], check["observed"]) == ("pass", 0)
    assert "5 Critical entries not counted (audit records" in check["message"]
    assert "AccessDenied" not in check["message"] + check["evidence"]
    # the same entries without a class (an older collector, IPMI) are hardware: nothing is passed over silently
    unclassified = [dict((key, value) for key, value in entry.items() if key != "class") for entry in entries]
    assert by_id(judge_bmc("gb01", {}, log=unclassified), "bmc.sel.critical")[0]["status"] == "fail"


def test_the_maintenance_log_critical_entry_is_not_counted_the_sel_ones_are():
    """Supermicro X13 HGX: the SEL (Systems/1/LogServices/Log1) holds 11 Critical PSU and NVSwitch events; the
    Maintenance Event Log (Managers/1/LogServices/Log1) one Critical OpteeCriticalEvent of user ADMIN."""
    with ReplayBMC("supermicro-sys-821ge-tnhr-hgx-h100") as bmc:
        entries, problems, _service = logs_of(bmc)
    hardware = [entry for entry in entries if entry["severity"] == "Critical" and entry["class"] == "hardware"]
    assert sorted(int(entry["id"]) for entry in hardware) == [18, 19, 20, 21, 22, 23, 24, 25, 27, 28, 43]
    audit = [entry for entry in entries if entry["severity"] == "Critical" and entry["class"] == "audit"]
    assert [entry["message_id"] for entry in audit] == ["Event.1.0.OpteeCriticalEvent"]
    check = by_id(judge_bmc("smc01", {}, log=entries), "bmc.sel.critical")[0]
    assert (check["status"], check["observed"]) == ("fail", 11) and "OpteeCriticalEvent" not in str(check)


@pytest.mark.parametrize("entry, expected", [
    ({"Severity": "Critical", "MessageId": "Base.1.8.AccessDenied"}, "audit"),
    ({"Severity": "Warning", "MessageId": "OpenBMC.0.1.InvalidLoginAttempted"}, "audit"),
    ({"Severity": "Critical", "Message": "Priority:6 login failed: root", "EntryType": "Oem"}, "audit"),
    ({"Severity": "Critical", "MessageId": "TaskEvent.1.0.TaskAborted"}, "informational"),
    ({"Severity": "OK", "MessageId": "CrayAlerts.HardwareFaultsCleared"}, "informational"),
    ({"Severity": "Critical", "MessageId": "CrayAlerts.HardwareFatalFaultDetected"}, "hardware"),
    ({"Severity": "Critical", "EntryType": "SEL", "SensorType": "Power Supply"}, "hardware"),
    ({"Severity": "Critical", "Oem": {"Hpe": {"Categories": ["Security"]}}}, "audit"),
    ({"Severity": "Critical", "Oem": {"Hpe": {"Categories": ["Hardware", "Security"]}}}, "hardware"),
    ({"Severity": "Critical"}, "hardware"),
])
def test_entries_are_classified_hardware_audit_or_informational(entry, expected):
    assert classify_entry(entry) == expected


def test_audit_and_maintenance_services_make_every_entry_audit():
    assert is_audit_service({"Id": "SL", "Name": "Security Log"}) and is_audit_service({"Id": "AuditLog"})
    assert is_audit_service({"Id": "Log1", "Name": "Maintenance Event Log Service"})
    assert not is_audit_service({"Id": "Log1", "Name": "Health Event Log Service"})
    assert classify_entry({"Severity": "Critical", "MessageId": "CrayAlerts.HardwareFatalFaultDetected"}, True) == "audit"


def test_journals_consoles_and_dumps_are_not_read_as_event_logs():
    """OpenBMC bmcweb lists the BMC Journal and the HostLogger console beside the EventLog."""
    with ReplayBMC("openbmc-stock-bmcweb") as bmc:
        with client_for(bmc, []) as client:
            services = log_services_for(RedfishService(client), "all")
    names = [service["Id"] for service in services]
    assert "EventLog" in names and "Journal" not in names and "HostLogger" not in names


class PagedBMC(ReplayBMC):
    """Collections served ``page_size`` members a page; the pages of the baseboard EventLog named in ``broken`` (by
    ``$skip``) answer 500."""

    def __init__(self, tree, broken=(), **kwargs):
        ReplayBMC.__init__(self, tree, **kwargs)
        self.broken = set(broken)

    def _get(self, request):
        if request.path == EVENTLOG and any(("$skip=%d" % skip) == request.query for skip in self.broken):
            return 500, {}, _error("The request failed due to an internal service error.", "Base.1.8.InternalError")
        return ReplayBMC._get(self, request)


EVENTLOG = "/redfish/v1/Systems/HGX_Baseboard_0/LogServices/EventLog/Entries"


def test_every_page_of_a_paged_log_is_read():
    with ReplayBMC("dgx") as bmc:
        whole, _problems, _service = logs_of(bmc)
    with PagedBMC("dgx", page_size=7) as bmc:
        entries, problems, _service = logs_of(bmc)
        pages = [call for call in bmc.calls("GET") if call.path == EVENTLOG]
    assert problems == [] and len(pages) > 5
    assert [entry["id"] for entry in entries] == [entry["id"] for entry in whole] and len(entries) == 175


def test_a_page_that_cannot_be_read_keeps_the_pages_read_and_says_which_failed():
    with PagedBMC("dgx", page_size=7, broken=[21]) as bmc:
        entries, problems, service = logs_of(bmc)
    baseboard = [entry for entry in entries if entry["source"] == "HGX_Baseboard_0/EventLog"]
    assert len(baseboard) == 21  # pages 0, 7 and 14 were read before $skip=21 failed
    assert problems == [{"log": "/redfish/v1/Systems/HGX_Baseboard_0/LogServices/EventLog",
                         "source": "HGX_Baseboard_0/EventLog", "resource": EVENTLOG + "?$skip=21",
                         "error": "HTTP 500", "entries_read": 21}]
    assert {"resource": EVENTLOG + "?$skip=21", "error": "HTTP 500"} in service.errors
    checks = judge_bmc("dgx01", {}, log=entries, log_errors=problems)
    readout = by_id(checks, "bmc.readout.log")
    assert len(readout) == 1 and readout[0]["status"] == "error" and "$skip=21" in readout[0]["message"]
    assert "21 entries read before it" in readout[0]["message"]
    sel = by_id(checks, "bmc.sel.critical")[0]
    # the critical entry of that log sits on a later page: no pass over an unread log
    assert sel["status"] in ("error", "fail") and "could not be read whole" in sel["message"]
    if sel["status"] == "error":
        assert sel["observed"] == 0


def test_a_log_longer_than_the_page_bound_is_an_error_not_a_silent_cut():
    with ReplayBMC("dgx", page_size=10) as bmc:
        entries, problems, _service = logs_of(bmc, max_pages=3)
    baseboard = [entry for entry in entries if entry["source"] == "HGX_Baseboard_0/EventLog"]
    assert len(baseboard) == 30
    mine = [item for item in problems if item["source"] == "HGX_Baseboard_0/EventLog"]
    assert mine and "more than 3 pages" in mine[0]["error"] and mine[0]["resource"] == EVENTLOG + "?$skip=30"


def test_an_intel_log_whose_next_page_is_missing_keeps_its_first_page():
    """Intel S2600BPB: the captured SEL and RedfishLog pages name ``@odata.nextLink`` ``...?$skiptoken=50``; a BMC
    that cannot serve it (404) must not lose the ten entries of each first page."""
    class MissingNext(ReplayBMC):
        def _get(self, request):
            if "$skiptoken" in request.query:
                return 404, {}, _error("not found", "Base.1.8.ResourceMissingAtURI")
            return ReplayBMC._get(self, request)

    with MissingNext("intel-s2600bpb") as bmc:
        entries, problems, _service = logs_of(bmc)
    redfish_log = [entry for entry in entries if entry["source"] == "BMC/RedfishLog"]
    assert len(redfish_log) == 10
    assert sorted((item["resource"], item["error"], item["entries_read"]) for item in problems) == [
        ("/redfish/v1/Managers/BMC/LogServices/RedfishLog/Entries?$skiptoken=50", "HTTP 404", 10),
        ("/redfish/v1/Systems/QSBP74100021/LogServices/SEL/Entries?$skiptoken=50", "HTTP 404", 10)]
    sel = by_id(judge_bmc("s01", {}, log=entries, log_errors=problems), "bmc.sel.critical")[0]
    assert sel["status"] == "error" and sel["observed"] == 0


def test_no_readable_log_service_is_an_error_not_zero_entries():
    class NoLogs(ReplayBMC):
        def _get(self, request):
            if "/LogServices" in request.path:
                return 404, {}, _error("not found", "Base.1.8.ResourceMissingAtURI")
            return ReplayBMC._get(self, request)

    with NoLogs("hpe-cray-ex235n-a100") as bmc:
        entries, problems, _service = logs_of(bmc)
    assert entries == [] and len(problems) == 1 and problems[0]["log"] is None
    assert "no log service could be read" in problems[0]["error"]
    checks = judge_bmc("nid001", {}, log=entries, log_errors=problems)
    assert by_id(checks, "bmc.sel.critical")[0]["status"] == "error"
    assert by_id(checks, "bmc.readout.log")[0]["status"] == "error"


# -- health of every part -------------------------------------------------------------------------------------------

DL385 = "hpe-proliant-dl385-gen10plus-v2"
XL675D = "hpe-proliant-xl675d-gen10plus-a100"


def _status(health=None, state=None):
    """An edit of a captured resource's ``Status`` (its other fields kept)."""
    def edit(document):
        status = dict(document.get("Status") or {})
        if health is not None:
            status["Health"] = health
        if state is not None:
            status["State"] = state
        document["Status"] = status
        return document
    return edit


def judged(tree, edits=None, **kwargs):
    with ReplayBMC(tree, edits=edits) as bmc:
        facts, _ = read(bmc, **kwargs)
    return facts, judge_bmc("n1", facts)


def not_passing(checks, ident):
    return [check for check in checks if check["id"] == ident and check["status"] != "pass"]


def test_a_critical_nvme_drive_is_named_with_its_remedy_and_its_storage_repeats_it():
    """HPE DL385 Gen10 Plus v2 (iLO 5), as captured: NVMe drive DA00001C Critical, FailurePredicted; its NVMe storage
    system and controller Critical too; the system Critical."""
    facts, checks = judged(DL385)
    drive = [item for item in facts["drives"] if item["id"] == "DA00001C"][0]
    assert (drive["health"], drive["state"], drive["failure_predicted"]) == ("Critical", "Enabled", True)
    failed = not_passing(checks, "bmc.drive.health")
    assert [(check["status"], check["remedy"]) for check in failed] == [("fail", "replace_part")]
    assert "DA00001C" in failed[0]["component"] and "MZXLR6T4HALA-000H3" in failed[0]["component"]
    assert "S6C1NA0TA04209" in failed[0]["evidence"]
    storage = not_passing(checks, "bmc.storage.health")
    assert storage and all(check["status"] == "warn" and "its drive DA00001C" in check["message"] for check in storage)
    assert [check["observed"] for check in by_id(checks, "bmc.drive.health") if check["status"] == "pass"] == [17]
    # 16 of 32 DIMM slots are empty (State Absent): counted, never a failure
    assert not_passing(checks, "bmc.memory.health") == []
    assert "16 slots empty" in by_id(checks, "bmc.memory.health")[0]["message"]


def test_an_offline_critical_drive_behind_a_smart_array_names_drive_and_controller():
    """HPE XL675d Gen10 Plus (iLO 5), as captured: Smart Array DE07A000 rolls up Critical, drive 3 Critical and
    UnavailableOffline (no model, no serial); iLO 5 itself Warning (EEPROM self-test Degraded)."""
    _facts, checks = judged(XL675D)
    drive = not_passing(checks, "bmc.drive.health")
    assert [(check["component"], check["status"]) for check in drive] == [("Drive 3", "fail")]
    assert "UnavailableOffline" in drive[0]["message"]
    storage = not_passing(checks, "bmc.storage.health")
    assert len(storage) == 1 and "P408i-a" in storage[0]["component"] and "drive 3" in storage[0]["message"]
    manager = by_id(checks, "bmc.manager.health")
    assert [(check["status"], check["remedy"]) for check in manager] == [("warn", "investigate")]
    assert "iLO 5" in manager[0]["component"]


def test_the_hgx_baseboard_bmc_is_judged_besides_the_host_bmc():
    """GB200 NVL tray, as captured: Managers/HGX_BMC_0 (the HGX baseboard's BMC) reports Health Critical while
    Starting; the host's BMC_0 is OK. Every Manager the service lists is judged, each named once."""
    facts, checks = judged("nvidia-gb200-nvl")
    assert facts["manager"]["id"] == "BMC_0"
    assert [(item["id"], item["health"]) for item in facts["managers"]] == [("BMC_0", "OK"), ("HGX_BMC_0", "Critical")]
    manager = by_id(checks, "bmc.manager.health")
    assert [(check["status"], check["component"]) for check in manager] == [("fail", "BMC HGX_BMC_0 (OpenBmc)")]


def test_a_warning_nic_and_a_critical_dimm_are_named():
    edits = {"/redfish/v1/Chassis/1/NetworkAdapters/DE084000": _status("Warning"),
             "/redfish/v1/Systems/1/Memory/proc1dimm1": _status("Critical")}
    _facts, checks = judged(DL385, edits=edits)
    nic = not_passing(checks, "bmc.nic.health")
    assert [(check["status"], check["remedy"]) for check in nic] == [("warn", "investigate")]
    assert "DE084000" in nic[0]["component"]
    dimm = not_passing(checks, "bmc.memory.health")
    assert [(check["status"], check["remedy"], check["component"].split(" (")[0]) for check in dimm] == [
        ("fail", "replace_part", "DIMM proc1dimm1")]


def test_disabled_parts_are_reported_disabled_not_as_faults():
    """Supermicro X13 HGX: PCIe device NIC9 is captured Disabled; made Critical too, it is still not a fault."""
    nic9 = "/redfish/v1/Chassis/1/PCIeDevices/NIC9"
    _facts, checks = judged("supermicro-sys-821ge-tnhr-hgx-h100")
    pcie = not_passing(checks, "bmc.pcie.health")
    assert [(check["status"], "NIC9" in check["component"]) for check in pcie] == [("skip", True)]
    assert "Disabled" in pcie[0]["message"]
    _facts, checks = judged("supermicro-sys-821ge-tnhr-hgx-h100", edits={nic9: _status("Critical")})
    pcie = not_passing(checks, "bmc.pcie.health")
    assert [(check["status"], check["remedy"]) for check in pcie] == [("warn", "investigate")]
    assert "not judged as a fault" in pcie[0]["message"]
    _facts, checks = judged("supermicro-sys-821ge-tnhr-hgx-h100", edits={nic9: _status("Critical", "Enabled")})
    assert [(check["status"], check["remedy"]) for check in not_passing(checks, "bmc.pcie.health")] == [
        ("fail", "reseat")]


def test_a_disabled_power_control_reported_critical_is_not_a_power_fault():
    """Gigabyte H262-Z63 (AMI MegaRAC), as captured: Chassis/Self/Power PowerControl[0] is Critical and Disabled."""
    facts, checks = judged("gigabyte-h262-z63-megarac")
    control = [sensor for sensor in facts["sensors"] if sensor["name"] == "Chassis Power Control"][0]
    assert (control["health"], control["state"]) == ("Critical", "Disabled")
    power = by_id(checks, "bmc.sensor.power")
    assert [check["status"] for check in power if "Chassis Power Control" in check["component"]] == ["skip"]
    assert not [check for check in checks if check["status"] == "fail"]


def test_a_disabled_psu_warns_and_a_critical_one_fails():
    """DMTF public-rackmount1: its one PSU is read from Chassis/1U/Power PowerSupplies[0]."""
    def supply(health, state):
        def edit(document):
            _status(health, state)(document["PowerSupplies"][0])
            return document
        return {"/redfish/v1/Chassis/1U/Power": edit}
    _facts, checks = judged("dmtf", edits=supply("Critical", "Disabled"), auth="basic")
    assert [(check["status"], check["remedy"]) for check in by_id(checks, "bmc.psu.health")] == [("warn", "investigate")]
    assert "Disabled" in by_id(checks, "bmc.psu.health")[0]["message"]
    _facts, checks = judged("dmtf", edits=supply("Critical", "Enabled"), auth="basic")
    assert [(check["status"], check["remedy"]) for check in by_id(checks, "bmc.psu.health")] == [("fail", "replace_part")]


def test_critical_cpu_and_gpu_processors_are_named_each_in_its_own_check():
    edits = {"/redfish/v1/Systems/1/Processors/1": _status("Critical"),
             "/redfish/v1/Systems/1/Processors/GPU3": _status("Critical")}
    _facts, checks = judged("lenovo-thinksystem-sr670-v2", edits=edits)
    cpu = not_passing(checks, "bmc.processor.health")
    assert [(check["status"], check["remedy"], check["component"].split(" (")[0]) for check in cpu] == [
        ("fail", "replace_part", "Processor 1")]
    gpu = not_passing(checks, "bmc.gpu.health")
    assert [(check["status"], check["component"].split(" (")[0]) for check in gpu] == [("fail", "GPU GPU3")]


def test_a_drive_that_predicts_its_failure_warns():
    drive = "/redfish/v1/Systems/1/Storage/DE081000/Drives/0"

    def predicted(document):
        document["FailurePredicted"] = True
        return document
    _facts, checks = judged(DL385, edits={drive: predicted})
    warned = [check for check in not_passing(checks, "bmc.drive.health") if check["status"] == "warn"]
    assert [(check["component"].split(" (")[0], check["remedy"]) for check in warned] == [("Drive 0", "replace_part")]
