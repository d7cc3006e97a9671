# SPDX-License-Identifier: GPL-3.0-or-later
"""redfish_log_clear as Ansible runs it, against the replayed captures (test_redfish_wire.ReplayBMC): the ClearLog
POST (URL, body) each vendor tree gets, idempotency (an empty log, a log holding only its "Log Area Reset/Cleared"
record), check mode (nothing sent), logs without the action, task monitors and a BMC without the log asked for."""

from __future__ import annotations

import copy
import json

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.zhisuan.ops.plugins.modules import redfish_log_clear
from test_redfish_wire import PASSWORD, USER, ReplayBMC, _error

pytestmark = pytest.mark.usefixtures("as_node")

CLEAR = "/Actions/LogService.ClearLog"
DGX_SEL = "/redfish/v1/Managers/BMC/LogServices/SEL"
GB200_EVENTS = "/redfish/v1/Systems/HGX_Baseboard_0/LogServices/EventLog"
DELL_SEL = "/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/Sel"
DMTF_MANAGER_LOG = "/redfish/v1/Managers/BMC/LogServices/Log"
DMTF_SYSTEM_LOG = "/redfish/v1/Systems/437XR1138R2/LogServices/Log1"


class ClearingBMC(ReplayBMC):
    """ReplayBMC that also runs ``LogService.ClearLog``: the service's Entries collection is served empty afterwards
    (as bmcweb and the lab do); with ``task_polls`` the action answers 202 and a task monitor."""

    def _post(self, request):
        if not request.path.endswith(CLEAR):
            return ReplayBMC._post(self, request)
        service = self.load(request.path[:-len(CLEAR)])
        if service is None or "#LogService.ClearLog" not in (service.get("Actions") or {}):
            return 405, {}, _error("POST is not allowed on %s" % request.path)
        entries = service["Entries"]["@odata.id"].rstrip("/")
        collection = self.load(entries)
        collection["Members"], collection["Members@odata.count"] = [], 0
        collection.pop("Members@odata.nextLink", None)
        collection.pop("@odata.nextLink", None)
        self.overlay[entries] = collection
        if self.task_polls is None:
            return 204, {}, None
        monitor = "/redfish/v1/TaskService/TaskMonitors/%d" % next(self._ids)
        self.tasks[monitor] = self.task_polls
        return 202, {"Location": monitor}, {"@odata.id": monitor, "TaskState": "Running"}


def run(bmc, capsys, check_mode=False, diff=False, **args):
    args = dict({"bmc_address": bmc.address, "bmc_username": USER, "bmc_password": PASSWORD}, **args)
    if check_mode:
        args["_ansible_check_mode"] = True
    if diff:
        args["_ansible_diff"] = True
    with patch_module_args(args):
        with pytest.raises(SystemExit) as info:
            redfish_log_clear.main()
    text = capsys.readouterr().out
    assert PASSWORD not in text and not [token for token in bmc.tokens if token in text]
    return info.value.code, json.loads(text)


def clears(bmc):
    return [(call.path, call.body, call.headers.get("content-type")) for call in bmc.calls("POST") if call.path.endswith(CLEAR)]


def warnings(out):
    return [item["event"]["msg"] if isinstance(item, dict) else item for item in out.get("warnings", [])]


@pytest.mark.parametrize("tree, log_services, before, cleared, errors", [
    # DGX H100: the SEL is under the manager (75 captured IPMI SEL entries); one manager listed was not captured
    ("dgx", "sel", {DGX_SEL: 75}, [DGX_SEL], [{"resource": "/redfish/v1/Managers/HGX_FabricManager_0", "error": "HTTP 404"}]),
    # GB200: no SEL in the capture; the HGX baseboard's EventLog (10 entries) is the event log that has ClearLog
    ("gb200", "events", {GB200_EVENTS: 10}, [GB200_EVENTS],
     [{"resource": "/redfish/v1/Systems/System_0/LogServices/SEL", "error": "HTTP 404"},
      {"resource": "/redfish/v1/Managers/BMC_0/LogServices/EventLog", "error": "HTTP 404"}]),
    # Dell iDRAC: the Sel beside the Lclog (the Lclog was not captured)
    ("dell", "events", {DELL_SEL: 5}, [DELL_SEL],
     [{"resource": "/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/Lclog", "error": "HTTP 404"}]),
    # DMTF mockup: no service typed SEL, so the system's own log; with all, the manager's log too
    ("dmtf", "sel", {DMTF_SYSTEM_LOG: 2}, [DMTF_SYSTEM_LOG], []),
    ("dmtf", "all", {DMTF_MANAGER_LOG: 1, DMTF_SYSTEM_LOG: 2}, [DMTF_MANAGER_LOG, DMTF_SYSTEM_LOG], []),
])
def test_clear_per_tree_then_idempotent(capsys, tree, log_services, before, cleared, errors):
    with ClearingBMC(tree) as bmc:
        code, out = run(bmc, capsys, diff=True, log_services=log_services)
        assert code == 0 and out["changed"] is True, out
        assert clears(bmc) == [(path + CLEAR, {}, "application/json") for path in cleared]
        assert all(call.headers.get("x-auth-token") for call in bmc.calls("POST") if call.path.endswith(CLEAR))
        assert out["cleared"] == cleared and out["entries_before"] == before
        assert out["actions"] == ["POST %s%s {}" % (path, CLEAR) for path in cleared]
        assert out["diff"] == {"before": before, "after": dict((path, 0) for path in before)}
        assert out["skipped"] == [] and out["errors"] == errors

        code, again = run(bmc, capsys, log_services=log_services)
        assert code == 0 and again["changed"] is False
        assert again["cleared"] == [] and again["actions"] == []
        assert again["entries_before"] == dict((path, 0) for path in before)
        assert len(clears(bmc)) == len(cleared)


def test_check_mode_reports_what_it_would_clear_and_sends_nothing(capsys):
    with ClearingBMC("dgx") as bmc:
        code, out = run(bmc, capsys, check_mode=True)
        assert code == 0 and out["changed"] is True
        assert out["cleared"] == [DGX_SEL] and out["entries_before"] == {DGX_SEL: 75}
        assert out["actions"] == ["POST %s%s {}" % (DGX_SEL, CLEAR)]
        assert clears(bmc) == [] and {call.method for call in bmc.requests} == {"GET", "POST", "DELETE"}
        assert [call.path for call in bmc.calls("POST")] == ["/redfish/v1/SessionService/Sessions"]
        # nothing was cleared: the real run still finds the 75 entries
        code, out = run(bmc, capsys)
        assert code == 0 and out["changed"] is True and out["entries_before"] == {DGX_SEL: 75}


def only_the_cleared_record(collection):
    """The DGX SEL as the AMI BMC shows it right after a clear: its captured entry 1 ("Event_Type : Log Area
    Reset/Cleared, ... Sensor_Type : Event Logging Disabled") alone."""
    collection = copy.deepcopy(collection)
    collection["Members"] = [member for member in collection["Members"] if member["Id"] == "1"]
    collection["Members@odata.count"] = 1
    return collection


def test_a_log_holding_only_its_cleared_record_is_not_cleared_again(capsys):
    with ClearingBMC("dgx", edits={DGX_SEL + "/Entries": only_the_cleared_record}) as bmc:
        code, out = run(bmc, capsys)
    assert code == 0 and out["changed"] is False and clears(bmc) == []
    assert out["entries_before"] == {DGX_SEL: 1} and out["cleared"] == []
    assert "Log Area Reset/Cleared" in bmc.load(DGX_SEL + "/Entries")["Members"][0]["Message"]


def test_a_real_entry_beside_the_cleared_record_is_cleared(capsys):
    def cleared_record_and_one_more(collection):
        collection = copy.deepcopy(collection)
        collection["Members"] = collection["Members"][:2]
        collection["Members@odata.count"] = 2
        return collection
    with ClearingBMC("dgx", edits={DGX_SEL + "/Entries": cleared_record_and_one_more}) as bmc:
        code, out = run(bmc, capsys)
    assert code == 0 and out["changed"] is True and out["entries_before"] == {DGX_SEL: 2}
    assert clears(bmc) == [(DGX_SEL + CLEAR, {}, "application/json")]


def test_a_log_without_clear_action_is_skipped_with_a_warning(capsys):
    def no_clear_log(service):
        service.pop("Actions")
        return service
    with ClearingBMC("dell", edits={DELL_SEL: no_clear_log}) as bmc:
        code, out = run(bmc, capsys)
    assert code == 0 and out["changed"] is False and clears(bmc) == []
    assert out["skipped"] == [{"service": DELL_SEL, "reason": "offers no LogService.ClearLog action"}]
    assert out["entries_before"] == {DELL_SEL: 5}
    assert warnings(out)[1:] == ["the log %s holds 5 entries but offers no LogService.ClearLog action; it is left as it is"
                                 % DELL_SEL]
    assert warnings(out)[0].endswith(" is reached over plain HTTP: the credentials travel unencrypted")


def test_entries_without_a_count_are_counted(capsys):
    def no_count(collection):
        collection.pop("Members@odata.count")
        return collection
    with ClearingBMC("dell", edits={DELL_SEL + "/Entries": no_count}) as bmc:
        code, out = run(bmc, capsys)
    assert code == 0 and out["entries_before"] == {DELL_SEL: 5} and out["changed"] is True


def test_unreadable_entries_are_cleared_all_the_same(capsys):
    with ClearingBMC("dell") as bmc:
        bmc.fail[("GET", DELL_SEL + "/Entries")] = [500]
        code, out = run(bmc, capsys)
    assert code == 0 and out["changed"] is True and out["entries_before"] == {DELL_SEL: None}
    assert out["errors"] == [{"resource": DELL_SEL + "/Entries", "error": "HTTP 500"}]
    assert clears(bmc) == [(DELL_SEL + CLEAR, {}, "application/json")]


def test_clear_run_as_a_task_is_followed(capsys):
    with ClearingBMC("dell", task_polls=2) as bmc:
        code, out = run(bmc, capsys)
    assert code == 0 and out["changed"] is True
    assert [call.path for call in bmc.calls("GET") if "TaskMonitors" in call.path] == ["/redfish/v1/TaskService/TaskMonitors/2"] * 3


def test_a_bmc_without_the_log_asked_for_fails(capsys):
    with ClearingBMC("gb200") as bmc:
        code, out = run(bmc, capsys, log_services="sel")
    assert code == 1 and out["error_kind"] == "bmc_error" and clears(bmc) == []
    assert out["msg"] == ("redfish: the BMC at 127.0.0.1:%d has no log service to clear for log_services=sel "
                          "(/redfish/v1/Systems/System_0/LogServices/SEL: HTTP 404)" % bmc.server.server_address[1])


def test_a_refused_clear_fails_with_the_bmc_message(capsys):
    with ClearingBMC("dgx") as bmc:
        bmc.fail[("POST", DGX_SEL + CLEAR)] = [403]
        code, out = run(bmc, capsys)
    assert code == 1 and out["error_kind"] == "auth_failed"
    assert out["msg"] == ("redfish: authentication failed as user 'root' (HTTP 403 on POST %s%s): injected HTTP 403; "
                          "check bmc_username and bmc_password" % (DGX_SEL, CLEAR))
