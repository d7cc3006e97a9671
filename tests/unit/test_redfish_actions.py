# SPDX-License-Identifier: GPL-3.0-or-later
"""redfish_power, redfish_bios and redfish_boot as Ansible runs them, against the replayed captures: the POST and
PATCH bodies each vendor adapter sends, idempotency, check mode (nothing sent) and waiting."""

from __future__ import annotations

import json

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.zhisuan.ops.plugins.modules import redfish_bios, redfish_boot, redfish_power
from test_redfish_wire import PASSWORD, USER, ReplayBMC

pytestmark = pytest.mark.usefixtures("as_node")

RESET = "/Actions/ComputerSystem.Reset"


def run(module, bmc, capsys, check_mode=False, diff=False, **args):
    args = dict({"bmc_address": bmc.address, "bmc_username": USER, "bmc_password": PASSWORD}, **args)
    if check_mode:
        args["_ansible_check_mode"] = True
    if diff:
        args["_ansible_diff"] = True
    with patch_module_args(args):
        with pytest.raises(SystemExit) as info:
            module.main()
    text = capsys.readouterr().out
    assert PASSWORD not in text and not [token for token in bmc.tokens if token in text]
    return info.value.code, json.loads(text)


def posts(bmc):
    return [(call.path, call.body) for call in bmc.calls("POST") if not call.path.endswith("/Sessions")]


def patches(bmc):
    return [(call.path, call.body, call.headers.get("if-match")) for call in bmc.calls("PATCH")]


# -- redfish_power --------------------------------------------------------------------------------------------------

def test_force_off_waits_for_off_then_is_idempotent(capsys):
    system = "/redfish/v1/Systems/437XR1138R2"
    with ReplayBMC("dmtf", transition_reads=2) as bmc:
        code, out = run(redfish_power, bmc, capsys, diff=True, state="force_off", poll_interval=0)
        assert code == 0 and out["changed"] is True
        assert posts(bmc) == [(system + RESET, {"ResetType": "ForceOff"})]
        # the system itself was read through the expanded Systems collection; then two reads show PoweringOff, the
        # third Off
        assert [call.target for call in bmc.calls("GET") if call.path.startswith("/redfish/v1/Systems")][0] == \
            "/redfish/v1/Systems?$expand=.($levels=1)"
        assert len([call for call in bmc.calls("GET") if call.path == system]) == 3
        assert out["before"] == {"power_state": "On"} and out["after"] == {"power_state": "Off"}
        assert out["diff"] == {"before": {"power_state": "On"}, "after": {"power_state": "Off"}}
        assert out["actions"] == ['POST %s%s {"ResetType": "ForceOff"}' % (system, RESET)]
        assert (out["system"], out["vendor"]) == ("437XR1138R2", "generic")

        code, again = run(redfish_power, bmc, capsys, state="graceful_off", poll_interval=0)
        assert code == 0 and again["changed"] is False and again["actions"] == []
        assert len(posts(bmc)) == 1


def test_check_mode_plans_and_sends_nothing(capsys):
    with ReplayBMC("dell") as bmc:
        code, out = run(redfish_power, bmc, capsys, check_mode=True, state="power_cycle")
    assert code == 0 and out["changed"] is True
    assert out["actions"] == ['POST /redfish/v1/Systems/System.Embedded.1/Actions/ComputerSystem.Reset {"ResetType": "PowerCycle"}']
    assert out["after"] == {"power_state": "On"}
    assert posts(bmc) == [] and {call.method for call in bmc.requests} == {"GET", "POST", "DELETE"}


@pytest.mark.parametrize("tree, state, expected", [
    # iDRAC lists PowerCycle
    ("dell", "power_cycle", ["PowerCycle"]),
    # the DMTF mockup lists no PowerCycle: ForceOff, wait for Off, On
    ("dmtf", "power_cycle", ["ForceOff", "On"]),
    # DGX and GB200 name a ResetActionInfo that is not in the captures: the NVIDIA adapter does the two-step cycle
    ("dgx", "power_cycle", ["ForceOff", "On"]),
    ("gb200", "power_cycle", ["ForceOff", "On"]),
    ("gb200", "graceful_restart", ["GracefulRestart"]),
    ("dgx", "force_restart", ["ForceRestart"]),
])
def test_reset_types_per_adapter(capsys, tree, state, expected):
    with ReplayBMC(tree) as bmc:
        code, out = run(redfish_power, bmc, capsys, state=state, poll_interval=0)
    assert code == 0 and out["changed"] is True
    assert [body["ResetType"] for _path, body in posts(bmc)] == expected
    assert out["after"] == {"power_state": "On"}
    if tree in ("dgx", "gb200"):
        system = {"dgx": "DGX", "gb200": "System_0"}[tree]
        assert posts(bmc)[0][0] == "/redfish/v1/Systems/%s%s" % (system, RESET)
        assert {"resource": "/redfish/v1/Systems/%s/ResetActionInfo" % system, "error": "HTTP 404"} in out["errors"]


def test_two_step_cycle_waits_for_off_before_on(capsys):
    with ReplayBMC("dmtf", transition_reads=1) as bmc:
        run(redfish_power, bmc, capsys, state="power_cycle", poll_interval=0)
    sequence = [(call.method, call.body.get("ResetType") if call.method == "POST" else None) for call in bmc.requests
                if call.path == "/redfish/v1/Systems/437XR1138R2" or call.path.endswith(RESET)]
    assert sequence == [("POST", "ForceOff"), ("GET", None), ("GET", None), ("POST", "On"), ("GET", None), ("GET", None)]


def test_restart_of_a_system_that_is_off_powers_it_on(capsys):
    def off(system):
        system["PowerState"] = "Off"
        return system
    with ReplayBMC("dmtf", edits={"/redfish/v1/Systems/437XR1138R2": off}) as bmc:
        code, out = run(redfish_power, bmc, capsys, state="graceful_restart", poll_interval=0)
    assert code == 0 and [body for _path, body in posts(bmc)] == [{"ResetType": "On"}]
    assert (out["before"], out["after"]) == ({"power_state": "Off"}, {"power_state": "On"})


def test_on_when_on_does_nothing(capsys):
    with ReplayBMC("gb200") as bmc:
        code, out = run(redfish_power, bmc, capsys, state="on")
    assert code == 0 and out["changed"] is False and posts(bmc) == []
    assert out["before"] == out["after"] == {"power_state": "On"}


def test_reset_through_a_task_monitor(capsys):
    with ReplayBMC("dmtf", task_polls=2) as bmc:
        code, out = run(redfish_power, bmc, capsys, state="force_off", poll_interval=0)
    assert code == 0 and out["after"] == {"power_state": "Off"}
    assert [call.path for call in bmc.calls("GET") if "TaskMonitors" in call.path] == ["/redfish/v1/TaskService/TaskMonitors/2"] * 3


def test_reset_type_the_bmc_does_not_offer_fails_before_sending(capsys):
    def no_graceful_restart(system):
        allowed = system["Actions"]["#ComputerSystem.Reset"]["ResetType@Redfish.AllowableValues"]
        allowed.remove("GracefulRestart")
        return system
    with ReplayBMC("dmtf", edits={"/redfish/v1/Systems/437XR1138R2": no_graceful_restart}) as bmc:
        code, out = run(redfish_power, bmc, capsys, state="graceful_restart")
    assert code == 1 and out["error_kind"] == "bmc_error" and posts(bmc) == []
    assert out["msg"] == ("redfish: the BMC does not offer ResetType GracefulRestart for graceful_restart (it offers: On, "
                          "ForceOff, GracefulShutdown, ForceRestart, Nmi, ForceOn, PushPowerButton)")


def test_wait_timeout_names_the_state_seen(capsys):
    with ReplayBMC("dmtf", transition_reads=100) as bmc:
        code, out = run(redfish_power, bmc, capsys, state="force_off", wait_timeout=0, poll_interval=0)
    assert code == 1 and out["error_kind"] == "bmc_error"
    assert out["msg"] == ("redfish: /redfish/v1/Systems/437XR1138R2 reports PowerState PoweringOff 0 s after the reset; "
                          "expected Off")
    assert len(posts(bmc)) == 1 and repr(bmc.requests[-1]) == "DELETE /redfish/v1/SessionService/Sessions/1"


def test_no_wait_reads_the_state_once(capsys):
    with ReplayBMC("dmtf", transition_reads=5) as bmc:
        code, out = run(redfish_power, bmc, capsys, state="force_off", wait=False)
    assert code == 0 and out["after"] == {"power_state": "PoweringOff"}


# -- redfish_bios ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("tree, desired, uri, body, if_match", [
    ("dell", {"SriovGlobalEnable": "Disabled", "AcPwrRcvryUserDelay": "120"},
     "/redfish/v1/Systems/System.Embedded.1/Bios/Settings",
     {"@Redfish.SettingsApplyTime": {"ApplyTime": "OnReset"}, "Attributes": {"SriovGlobalEnable": "Disabled"}}, None),
    ("dgx", {"SRIOVEnable": "Disable", "AddBmcChannelNo": 0},
     "/redfish/v1/Systems/DGX/Bios/SD", {"Attributes": {"SRIOVEnable": "Disable"}}, '"1"'),
    ("gb200", {"EGM": "true", "ActiveCores": 144},
     "/redfish/v1/Systems/System_0/Bios/Settings", {"Attributes": {"EGM": True}}, None),
    ("dmtf", {"ProcTurboMode": "Disabled", "ProcCoreDisable": "2"},
     "/redfish/v1/Systems/437XR1138R2/Bios/Settings", {"Attributes": {"ProcCoreDisable": 2, "ProcTurboMode": "Disabled"}}, None),
])
def test_bios_pending_settings_per_adapter_then_idempotent(capsys, tree, desired, uri, body, if_match):
    with ReplayBMC(tree, if_match=(tree == "dgx")) as bmc:
        code, out = run(redfish_bios, bmc, capsys, diff=True, attributes=desired)
        assert code == 0 and out["changed"] is True
        assert patches(bmc) == [(uri, body, if_match)]
        assert out["settings_uri"] == uri and out["reboot_required"] is True
        assert out["pending"] == body["Attributes"]
        assert out["diff"]["after"] == body["Attributes"]
        assert out["actions"] == ["PATCH %s %s" % (uri, json.dumps(body, sort_keys=True))]

        code, again = run(redfish_bios, bmc, capsys, attributes=desired)
        assert code == 0 and again["changed"] is False and again["actions"] == []
        assert len(patches(bmc)) == 1 and again["pending"] == body["Attributes"]


def test_bios_diff_shows_current_values(capsys):
    with ReplayBMC("dmtf") as bmc:
        _code, out = run(redfish_bios, bmc, capsys, diff=True, attributes={"ProcTurboMode": "Disabled", "PowerProfile": "MaxPerf"})
    assert out["diff"] == {"before": {"ProcTurboMode": "Enabled"}, "after": {"ProcTurboMode": "Disabled"}}
    assert out["attributes"]["PowerProfile"] == "MaxPerf" and len(out["attributes"]) == 10


def test_bios_check_mode_sends_nothing(capsys):
    with ReplayBMC("dell") as bmc:
        code, out = run(redfish_bios, bmc, capsys, check_mode=True, attributes={"SysProfile": "PerfPerWattOptimizedOs"})
    assert code == 0 and out["changed"] is True and patches(bmc) == []
    assert out["pending"] == {"SysProfile": "PerfPerWattOptimizedOs"}


def test_bios_read_only(capsys):
    with ReplayBMC("gb200") as bmc:
        code, out = run(redfish_bios, bmc, capsys)
    assert code == 0 and out["changed"] is False and patches(bmc) == []
    assert len(out["attributes"]) == 403 and out["pending"] == {} and out["reboot_required"] is False


def test_unknown_bios_attribute_fails_and_changes_nothing(capsys):
    with ReplayBMC("dell") as bmc:
        code, out = run(redfish_bios, bmc, capsys, attributes={"SriovGlobalEnable": "Disabled", "NoSuchKnob": "On"})
    assert code == 1 and patches(bmc) == []
    assert out["msg"] == ("redfish: the BIOS of System.Embedded.1 has no attribute NoSuchKnob "
                          "(/redfish/v1/Systems/System.Embedded.1/Bios lists 455 attributes)")


def test_dgx_bios_patch_without_if_match_is_refused_by_the_service(capsys):
    """The replay server enforces If-Match on the DGX settings objects, as the AMI BMC does: a generic PATCH fails."""
    with ReplayBMC("dgx", if_match=True) as bmc:
        from test_redfish_wire import client_for
        with client_for(bmc) as client:
            with pytest.raises(Exception) as info:
                client.patch("/redfish/v1/Systems/DGX/Bios/SD", {"Attributes": {"SRIOVEnable": "Disable"}})
    assert info.value.status == 428


# -- redfish_boot ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("tree, uri, staged, if_match", [
    ("dell", "/redfish/v1/Systems/System.Embedded.1", False, None),
    ("dmtf", "/redfish/v1/Systems/437XR1138R2", False, None),
    ("dgx", "/redfish/v1/Systems/DGX/SD", True, '"1"'),
    ("gb200", "/redfish/v1/Systems/System_0/Settings", True, None),
])
def test_boot_override_per_adapter_then_idempotent(capsys, tree, uri, staged, if_match):
    with ReplayBMC(tree, if_match=(tree == "dgx")) as bmc:
        code, out = run(redfish_boot, bmc, capsys, diff=True, target="Hdd", enabled="Once")
        assert code == 0 and out["changed"] is True and out["staged"] is staged
        body = {"Boot": {"BootSourceOverrideTarget": "Hdd", "BootSourceOverrideEnabled": "Once"}}
        assert patches(bmc) == [(uri, body, if_match)]
        assert out["boot"]["target"] == "Hdd" and out["boot"]["enabled"] == "Once"
        assert out["diff"]["after"]["target"] == "Hdd"

        code, again = run(redfish_boot, bmc, capsys, target="Hdd", enabled="Once")
        assert code == 0 and again["changed"] is False and len(patches(bmc)) == 1


def test_boot_override_falls_back_to_the_system_when_the_settings_object_refuses(capsys):
    with ReplayBMC("gb200") as bmc:
        bmc.fail[("PATCH", "/redfish/v1/Systems/System_0/Settings")] = [405]
        code, out = run(redfish_boot, bmc, capsys, target="Pxe", enabled="Once")
    body = {"Boot": {"BootSourceOverrideTarget": "Pxe", "BootSourceOverrideEnabled": "Once"}}
    assert code == 0 and out["changed"] is True and out["staged"] is False
    assert patches(bmc) == [("/redfish/v1/Systems/System_0/Settings", body, None), ("/redfish/v1/Systems/System_0", body, None)]
    assert out["boot"]["target"] == "Pxe"
    assert [item["event"]["msg"] if isinstance(item, dict) else item for item in out["warnings"]][-1] == (
        "the BMC refused the boot override on /redfish/v1/Systems/System_0/Settings (HTTP 405); it was set on the system "
        "/redfish/v1/Systems/System_0 instead")


def test_boot_already_set_is_not_changed(capsys):
    """The DMTF mockup's system is set to boot from PXE once."""
    with ReplayBMC("dmtf") as bmc:
        code, out = run(redfish_boot, bmc, capsys, target="Pxe", enabled="Once", mode="UEFI")
    assert code == 0 and out["changed"] is False and patches(bmc) == []
    assert out["boot"] == {"target": "Pxe", "enabled": "Once", "mode": "UEFI"}


def test_boot_check_mode_and_disable(capsys):
    with ReplayBMC("dmtf") as bmc:
        code, out = run(redfish_boot, bmc, capsys, check_mode=True, enabled="Disabled")
    assert code == 0 and out["changed"] is True and patches(bmc) == []
    assert out["actions"] == ['PATCH /redfish/v1/Systems/437XR1138R2 {"Boot": {"BootSourceOverrideEnabled": "Disabled"}}']
    assert out["boot"]["enabled"] == "Disabled"


def test_boot_target_not_offered_fails(capsys):
    with ReplayBMC("dell") as bmc:
        code, out = run(redfish_boot, bmc, capsys, target="Usb")
    assert code == 1 and patches(bmc) == []
    assert out["msg"] == ("redfish: the BMC does not offer boot target Usb (it offers: None, Pxe, Floppy, Cd, Hdd, BiosSetup, "
                          "Utilities, UefiTarget, SDCard, UefiHttp)")


def test_boot_target_is_required_unless_disabling(capsys):
    with ReplayBMC("dell") as bmc:
        code, out = run(redfish_boot, bmc, capsys, enabled="Continuous")
    assert code == 1 and out["msg"] == "target is required when enabled is Continuous" and bmc.requests == []
