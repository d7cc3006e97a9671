"""The lab's Redfish BMCs (lab/bmc/): captured vendor trees served over HTTPS with auth, sessions, stateful actions
and value-edited faults -- exercised over the wire with urllib + ssl, as a client sees them."""

import base64
import json
import os
import socket
import ssl
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from lab.bmc import redfish_lab  # noqa: E402  (after the sys.path set-up above)

TREES_DIR = REPO / "tests" / "fixtures" / "redfish"
NODES = [
    {"node": "dgx01", "tree": "nvidia-dgx-h100-viking",
     "faults": ["psu_failed", "sel_critical", {"kind": "old_firmware", "component": "HostBIOS_0"}, "gpu_missing_bmc"]},
    {"node": "gb01", "tree": "nvidia-gb200-nvl", "faults": [{"kind": "bios_off", "attribute": "EGM", "value": True}]},
    {"node": "dell01", "tree": "dell-poweredge-r750-h100-pcie", "faults": [{"kind": "psu_failed", "id": "PSU.Slot.2"}]},
    {"node": "dmtf01", "tree": "dmtf-public-rackmount1"},
    {"node": "down01", "tree": "dmtf-public-rackmount1", "faults": ["bmc_down"]},
    {"node": "badpw01", "tree": "dell-poweredge-r750-h100-pcie", "faults": ["bmc_bad_credentials"]},
]
TOKENS = []  # every session token handed out, to check the log never shows one


def captured(tree, path):
    rel = path[len("/redfish/v1"):].strip("/")
    return json.loads((TREES_DIR / tree / rel / "index.json").read_text())


def ca_context(ep):
    return ssl.create_default_context(cafile=ep["ca_path"])


def call(ep, method, path, body=None, auth=True, password=None, token=None, headers=None, context=None):
    """(status, headers, JSON body or None)."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(f"https://{ep['address']}:{ep['port']}{path}", data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("X-Auth-Token", token)
    elif auth:
        cred = f"{ep['username']}:{ep['password'] if password is None else password}".encode()
        req.add_header("Authorization", "Basic " + base64.b64encode(cred).decode())
    for name, value in (headers or {}).items():
        req.add_header(name, value)
    try:
        with urllib.request.urlopen(req, context=context or ca_context(ep), timeout=10) as resp:
            raw = resp.read()
            return resp.status, resp.headers, json.loads(raw) if raw else None
    except urllib.error.HTTPError as err:
        raw = err.read()
        return err.code, err.headers, json.loads(raw) if raw else None


def get(ep, path, **kw):
    status, _headers, body = call(ep, "GET", path, **kw)
    assert status == 200, (path, status, body)
    return body


def poll_power(ep, system, want, timeout=10.0):
    """PowerState values seen until it reads ``want``."""
    seen, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = get(ep, system)["PowerState"]
        if not seen or seen[-1] != state:
            seen.append(state)
        if state == want:
            return seen
        time.sleep(0.05)
    raise AssertionError(f"{system} never reached {want}: saw {seen}")


def redfish_error(message_id, message, args, severity, resolution):
    full = "Base.1.16.0." + message_id
    return {"error": {"code": full, "message": message, "@Message.ExtendedInfo": [
        {"@odata.type": "#Message.v1_1_1.Message", "MessageId": full, "Message": message, "MessageArgs": args,
         "MessageSeverity": severity, "Resolution": resolution}]}}


def error_of(body):
    return body["error"]["code"], body["error"]["message"]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("bmclab")
    eps = redfish_lab.start(run_dir, NODES)
    yield run_dir, eps
    redfish_lab.stop(run_dir)


# ------------------------------------------------------------------------------------------- start, TLS, auth

def test_start_returns_one_endpoint_per_node(lab):
    run_dir, eps = lab
    assert sorted(eps) == sorted(n["node"] for n in NODES)
    assert len({ep["port"] for ep in eps.values()}) == len(NODES)
    password = eps["dgx01"]["password"]
    for node, ep in eps.items():
        assert set(ep) == {"address", "port", "username", "password", "ca_path"}
        assert (ep["address"], ep["username"], ep["ca_path"]) == ("127.0.0.1", "admin", str(run_dir / "bmc" / "ca.pem"))
        assert (ep["password"] == password) == (node != "badpw01")
    assert len(password) >= 12
    assert os.stat(run_dir / "bmc" / "redfish.json").st_mode & 0o777 == 0o600


def test_tls_verifies_with_the_lab_ca_and_fails_without_it(lab):
    ep = lab[1]["dell01"]
    assert get(ep, "/redfish/v1", auth=False)["Vendor"] == "Dell"  # hostname check on: the SAN is IP:127.0.0.1
    with pytest.raises(urllib.error.URLError) as info:
        call(ep, "GET", "/redfish/v1", auth=False, context=ssl.create_default_context())
    assert isinstance(info.value.reason, ssl.SSLCertVerificationError)


def test_service_root_is_public_everything_else_needs_credentials(lab):
    ep = lab[1]["dgx01"]
    status, headers, body = call(ep, "GET", "/redfish/v1/", auth=False)
    assert status == 200 and body == captured("nvidia-dgx-h100-viking", "/redfish/v1")
    assert headers["ETag"].startswith('"') and headers["OData-Version"] == "4.0"
    no_session = redfish_error("NoValidSession", "There is no valid session established with the implementation.", [],
                               "Critical", "Establish a session before attempting any operations.")
    for kwargs in ({"auth": False}, {"password": "wrong-" + ep["password"]}, {"token": "0123456789abcdef"}):
        status, headers, body = call(ep, "GET", "/redfish/v1/Systems", **kwargs)
        assert (status, body) == (401, no_session), kwargs
        assert headers["WWW-Authenticate"] == 'Basic realm="Redfish"'
    assert get(ep, "/redfish/v1/Systems")["Members@odata.count"] == 2


def test_session_create_use_delete(lab):
    ep = lab[1]["gb01"]
    status, headers, body = call(ep, "POST", "/redfish/v1/SessionService/Sessions", auth=False,
                                 body={"UserName": "admin", "Password": ep["password"]})
    assert status == 201
    token, location = headers["X-Auth-Token"], headers["Location"]
    TOKENS.append(token)
    sid = location.rsplit("/", 1)[1]
    assert location == f"/redfish/v1/SessionService/Sessions/{sid}" and len(token) == 32
    assert body == {"@odata.id": location, "@odata.type": "#Session.v1_6_0.Session", "Id": sid, "Name": "User Session",
                    "Description": "Manager User Session", "UserName": "admin"}
    assert get(ep, "/redfish/v1/Systems/System_0", auth=False, token=token)["Id"] == "System_0"
    members = get(ep, "/redfish/v1/SessionService/Sessions", token=token)["Members"]
    assert {"@odata.id": location} in members
    assert call(ep, "DELETE", location, token=token)[0] == 204
    assert call(ep, "GET", "/redfish/v1/Systems", token=token)[0] == 401
    assert call(ep, "DELETE", location)[0] == 404


def test_session_with_bad_credentials_is_refused(lab):
    ep = lab[1]["gb01"]
    status, headers, body = call(ep, "POST", "/redfish/v1/SessionService/Sessions", auth=False,
                                 body={"UserName": "admin", "Password": "not-" + ep["password"]})
    assert status == 401 and "X-Auth-Token" not in headers
    assert body == redfish_error(
        "ResourceAtUriUnauthorized",
        "While accessing the resource at '/redfish/v1/SessionService/Sessions', the service received an authorization "
        "error 'Invalid username or password'.", ["/redfish/v1/SessionService/Sessions", "Invalid username or password"],
        "Critical", "Ensure that the appropriate access is provided for the service in order for it to access the URI.")


def test_unknown_resource_404_and_unknown_targets_405(lab):
    ep = lab[1]["dell01"]
    status, _h, body = call(ep, "GET", "/redfish/v1/Systems/System.Embedded.9")
    assert (status, body) == (404, redfish_error("InvalidURI", "The URI /redfish/v1/Systems/System.Embedded.9 was not found.",
                                                 ["/redfish/v1/Systems/System.Embedded.9"], "Critical",
                                                 "Provide a valid URI and resubmit the request."))
    not_allowed = redfish_error("OperationNotAllowed", "The HTTP method is not allowed on this resource.", [], "Critical", "None.")
    for method, path in (("PATCH", "/redfish/v1/Chassis/System.Embedded.1"),
                         ("POST", "/redfish/v1/Systems/System.Embedded.1/Bios/Actions/Bios.ResetBios"),
                         ("PATCH", "/redfish/v1/Systems/System.Embedded.1/Bios"),
                         ("DELETE", "/redfish/v1/Systems/System.Embedded.1")):
        assert call(ep, method, path, body={})[::2] == (405, not_allowed), (method, path)


# ------------------------------------------------------------------------------------------------------ power

def test_power_cycle_goes_through_transition_and_ends_on(lab):
    ep, system = lab[1]["dell01"], "/redfish/v1/Systems/System.Embedded.1"
    before = get(ep, system)
    assert before["PowerState"] == "On"
    status, _h, body = call(ep, "POST", system + "/Actions/ComputerSystem.Reset", body={"ResetType": "PowerCycle"})
    assert (status, body) == (204, None)
    assert get(ep, system)["PowerState"] in ("PoweringOff", "PoweringOn")  # the lab's default: 1 s in transition
    status, _h, body = call(ep, "POST", system + "/Actions/ComputerSystem.Reset", body={"ResetType": "ForceOff"})
    assert (status, error_of(body)) == (409, ("Base.1.16.0.ResourceInUse", "The change to the requested resource failed "
                                              "because the resource is in use or in transition."))
    seen = poll_power(ep, system, "On")
    assert "PoweringOn" in seen
    after = get(ep, system)
    assert after["LastResetTime"] != before["LastResetTime"]
    assert get(ep, "/redfish/v1/Chassis/System.Embedded.1")["PowerState"] == "On"


def test_force_off_then_on(lab):
    ep, system = lab[1]["gb01"], "/redfish/v1/Systems/System_0"
    reset = system + "/Actions/ComputerSystem.Reset"
    assert call(ep, "POST", reset, body={"ResetType": "ForceOff"})[0] == 204
    assert poll_power(ep, system, "Off")[-2:] == ["PoweringOff", "Off"]
    assert call(ep, "POST", reset, body={"ResetType": "GracefulShutdown"})[0] == 204  # already off: nothing to do
    assert get(ep, system)["PowerState"] == "Off"
    assert call(ep, "POST", reset, body={"ResetType": "On"})[0] == 204
    assert poll_power(ep, system, "On")[-2:] == ["PoweringOn", "On"]
    # The tree's Reset action names an ActionInfo that was not captured: the lab serves one with what it allows.
    info = get(ep, "/redfish/v1/Systems/System_0/ResetActionInfo")
    assert info["Parameters"][0]["AllowableValues"] == [
        "On", "ForceOff", "GracefulShutdown", "GracefulRestart", "ForceRestart", "PowerCycle", "Nmi"]


def test_reset_type_outside_the_allowable_values_is_400(lab):
    ep, system = lab[1]["dmtf01"], "/redfish/v1/Systems/437XR1138R2"
    assert "PowerCycle" not in captured("dmtf-public-rackmount1", system)["Actions"]["#ComputerSystem.Reset"][
        "ResetType@Redfish.AllowableValues"]
    status, _h, body = call(ep, "POST", system + "/Actions/ComputerSystem.Reset", body={"ResetType": "PowerCycle"})
    assert (status, body) == (400, redfish_error(
        "ActionParameterValueNotInList",
        "The value 'PowerCycle' for the parameter ResetType in the action ComputerSystem.Reset is not in the list of "
        "acceptable values.", ["PowerCycle", "ResetType", "ComputerSystem.Reset"], "Warning",
        "Choose a value from the enumeration list that the implementation can support and resubmit the request if the "
        "operation failed."))
    status, _h, body = call(ep, "POST", system + "/Actions/ComputerSystem.Reset", body={})
    assert (status, error_of(body)) == (400, ("Base.1.16.0.ActionParameterMissing", "The action ComputerSystem.Reset "
                                              "requires the parameter ResetType to be present in the request body."))
    assert get(ep, system)["PowerState"] == "On"


# ----------------------------------------------------------------------------------------- BIOS, boot, SEL

def test_bios_patch_is_pending_until_the_restart(lab):
    ep, system = lab[1]["dgx01"], "/redfish/v1/Systems/DGX"
    bios, settings = system + "/Bios", system + "/Bios/SD"
    assert get(ep, bios)["@Redfish.Settings"]["SettingsObject"]["@odata.id"] == settings
    assert get(ep, bios)["Attributes"]["ARIEnable"] == "Enable"
    status, _h, body = call(ep, "PATCH", settings, body={"Attributes": {"ARIEnable": "Disable"}})
    assert status == 200 and body["Attributes"] == {"ARIEnable": "Disable"}
    assert get(ep, settings)["Attributes"] == {"ARIEnable": "Disable"}
    assert get(ep, bios)["Attributes"]["ARIEnable"] == "Enable"
    status, _h, body = call(ep, "PATCH", settings, body={"Attributes": {"NoSuchKnob": "Enable"}})
    assert (status, error_of(body)) == (400, ("Base.1.16.0.PropertyUnknown",
                                              "The property NoSuchKnob is not in the list of valid properties for the resource."))
    status, _h, body = call(ep, "PATCH", settings, body={"Attributes": {"ARIEnable": 1}})
    assert (status, error_of(body)[0]) == (400, "Base.1.16.0.PropertyValueTypeError")
    assert call(ep, "POST", system + "/Actions/ComputerSystem.Reset", body={"ResetType": "ForceRestart"})[0] == 204
    poll_power(ep, system, "On")
    assert get(ep, bios)["Attributes"]["ARIEnable"] == "Disable"
    assert get(ep, settings)["Attributes"] == {}


def test_boot_override_is_validated_against_the_allowable_values(lab):
    ep, system = lab[1]["gb01"], "/redfish/v1/Systems/System_0"
    override = {"Boot": {"BootSourceOverrideTarget": "Pxe", "BootSourceOverrideEnabled": "Once"}}
    status, headers, body = call(ep, "PATCH", system, body=override)
    assert status == 200 and headers["ETag"]
    assert (body["Boot"]["BootSourceOverrideTarget"], body["Boot"]["BootSourceOverrideEnabled"]) == ("Pxe", "Once")
    assert get(ep, system)["Boot"]["BootSourceOverrideTarget"] == "Pxe"
    status, _h, body = call(ep, "PATCH", system, body={"Boot": {"BootSourceOverrideTarget": "Floppy"}})
    assert (status, error_of(body)) == (400, ("Base.1.16.0.PropertyValueNotInList", "The value 'Floppy' for the property "
                                              "BootSourceOverrideTarget is not in the list of acceptable values."))
    status, _h, body = call(ep, "PATCH", system, body={"AssetTag": "x"})
    assert (status, error_of(body)[0]) == (400, "Base.1.16.0.PropertyUnknown")
    status, _h, body = call(ep, "PATCH", system, body={"Boot": {"BootSourceOverrideTarget": "Hdd"}},
                            headers={"If-Match": '"0000000000000000"'})
    assert (status, error_of(body)[0]) == (412, "Base.1.16.0.PreconditionFailed")


@pytest.mark.parametrize("node, system, staged, override, after", [
    # DGX H100: Boot PATCHed to Systems/DGX/SD with If-Match (libredfish nvidia_viking set_boot_override)
    ("dgx01", "/redfish/v1/Systems/DGX", "/redfish/v1/Systems/DGX/SD",
     {"BootSourceOverrideTarget": "Pxe", "BootSourceOverrideEnabled": "Continuous"}, ("Pxe", "Continuous")),
    # GB200: Systems/System_0/Settings (libredfish nvidia_gbx00); a Once override is used by the boot that takes it
    ("gb01", "/redfish/v1/Systems/System_0", "/redfish/v1/Systems/System_0/Settings",
     {"BootSourceOverrideTarget": "Hdd", "BootSourceOverrideEnabled": "Once"}, ("Hdd", "Disabled")),
])
def test_boot_override_staged_on_the_settings_object_applies_at_the_next_boot(lab, node, system, staged, override, after):
    ep = lab[1][node]
    assert get(ep, system)["@Redfish.Settings"]["SettingsObject"]["@odata.id"] == staged
    status, headers, body = call(ep, "GET", staged)
    assert status == 200 and body["Boot"] == {} and body["Id"] == staged.rsplit("/", 1)[1]
    before = get(ep, system)["Boot"]
    status, _h, body = call(ep, "PATCH", staged, body={"Boot": override}, headers={"If-Match": headers["ETag"]})
    assert status == 200 and body["Boot"] == override
    assert get(ep, staged)["Boot"] == override
    assert get(ep, system)["Boot"] == before  # staged, not applied
    status, _h, body = call(ep, "PATCH", staged, body={"Boot": {"BootSourceOverrideTarget": "Bogus"}})
    assert (status, error_of(body)) == (400, ("Base.1.16.0.PropertyValueNotInList", "The value 'Bogus' for the property "
                                              "BootSourceOverrideTarget is not in the list of acceptable values."))
    status, _h, body = call(ep, "PATCH", staged, body={"Boot": {"BootSourceOverrideMode": "UEFI"}},
                            headers={"If-Match": '"0000000000000000"'})
    assert (status, error_of(body)[0]) == (412, "Base.1.16.0.PreconditionFailed")
    assert call(ep, "POST", system + "/Actions/ComputerSystem.Reset", body={"ResetType": "ForceRestart"})[0] == 204
    poll_power(ep, system, "On")
    boot = get(ep, system)["Boot"]
    assert (boot["BootSourceOverrideTarget"], boot["BootSourceOverrideEnabled"]) == after
    assert get(ep, staged)["Boot"] == {}


def test_sel_clear_empties_the_entries(lab):
    ep = lab[1]["dell01"]
    sel = "/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/Sel"
    entries = get(ep, sel + "/Entries")
    assert entries["Members@odata.count"] == 5 and get(ep, sel + "/Entries/1024")["Id"] == "1024"
    target = get(ep, sel)["Actions"]["#LogService.ClearLog"]["target"]
    assert call(ep, "POST", target, body={})[0] == 204
    entries = get(ep, sel + "/Entries")
    assert (entries["Members"], entries["Members@odata.count"]) == ([], 0)
    assert call(ep, "GET", sel + "/Entries/1024")[0] == 404


# ------------------------------------------------------------------------------------------------------ faults

def test_psu_failed(lab):
    dgx, dell = lab[1]["dgx01"], lab[1]["dell01"]
    psu0 = get(dgx, "/redfish/v1/Chassis/DGX/PowerSubsystem/PowerSupplies/PSU0")
    assert "Status" not in captured("nvidia-dgx-h100-viking", psu0["@odata.id"])
    assert psu0["Status"] == {"Health": "Critical", "State": "UnavailableOffline"}
    base = "/redfish/v1/Chassis/System.Embedded.1/PowerSubsystem/PowerSupplies/"
    assert get(dell, base + "PSU.Slot.1")["Status"] == {"Health": "OK", "State": "Enabled"}
    assert get(dell, base + "PSU.Slot.2")["Status"] == {"Health": "Critical", "State": "UnavailableOffline"}
    power = get(dell, "/redfish/v1/Chassis/System.Embedded.1/Power")["PowerSupplies"]
    assert [p["Status"]["Health"] for p in power] == ["OK", "Critical"]


def test_sel_critical_old_firmware_gpu_missing(lab):
    run_dir, eps = lab
    ep, tree = eps["dgx01"], "nvidia-dgx-h100-viking"
    started = json.loads((run_dir / "bmc" / "redfish.json").read_text())["started"]
    entries = get(ep, "/redfish/v1/Managers/BMC/LogServices/SEL/Entries")
    assert entries["Members@odata.count"] == 76 == len(entries["Members"])
    last = entries["Members"][-1]
    assert (last["Id"], last["Severity"], last["Created"], last["Name"]) == ("76", "Critical", started, "SEL 76")
    assert get(ep, "/redfish/v1/Managers/BMC/LogServices/SEL/Entries/76") == last
    fw = "/redfish/v1/UpdateService/FirmwareInventory/HostBIOS_0"
    assert captured(tree, fw)["Version"] == "01.01.03" and get(ep, fw)["Version"] == "01.01.02"
    procs = get(ep, "/redfish/v1/Systems/HGX_Baseboard_0/Processors")
    assert procs["Members@odata.count"] == 8 == len(procs["Members"])
    assert {"@odata.id": "/redfish/v1/Systems/HGX_Baseboard_0/Processors/GPU_SXM_8"} not in procs["Members"]
    assert call(ep, "GET", "/redfish/v1/Systems/HGX_Baseboard_0/Processors/GPU_SXM_8")[0] == 404
    assert get(ep, "/redfish/v1/Systems/HGX_Baseboard_0/Processors/GPU_SXM_7")["ProcessorType"] == "GPU"


def test_bios_off(lab):
    ep = lab[1]["gb01"]
    assert captured("nvidia-gb200-nvl", "/redfish/v1/Systems/System_0/Bios")["Attributes"]["EGM"] is False
    assert get(ep, "/redfish/v1/Systems/System_0/Bios")["Attributes"]["EGM"] is True


# ------------------------------------------------------------------------------- each node its own serials

def test_each_node_serves_its_own_serial_numbers(lab):
    """Issue 26 item 6: one captured tree served to several nodes must not give them one serial (the asset list's
    assets.serial.duplicate check would see the lab's copies as a finding): the node's index is appended."""
    _run_dir, eps = lab
    dgx = get(eps["dgx01"], "/redfish/v1/Systems/DGX")["SerialNumber"]
    dell = get(eps["dell01"], "/redfish/v1/Systems/System.Embedded.1")["SerialNumber"]
    assert dgx == captured("nvidia-dgx-h100-viking", "/redfish/v1/Systems/DGX")["SerialNumber"] + "000"
    assert dell == captured("dell-poweredge-r750-h100-pcie", "/redfish/v1/Systems/System.Embedded.1")["SerialNumber"] + "002"
    gpu = "/redfish/v1/Systems/HGX_Baseboard_0/Processors/GPU_SXM_1"
    assert get(eps["dgx01"], gpu)["SerialNumber"] == captured("nvidia-dgx-h100-viking", gpu)["SerialNumber"] + "000"


def test_bmc_down_refuses_connections(lab):
    ep = lab[1]["down01"]
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((ep["address"], ep["port"]), timeout=5).close()


def test_bad_credentials_node_rejects_the_inventory_password(lab):
    eps = lab[1]
    ep = eps["badpw01"]
    assert call(ep, "GET", "/redfish/v1/Systems")[0] == 401
    assert call(ep, "GET", "/redfish/v1/Systems", password=eps["dell01"]["password"])[0] == 200


def test_fault_validation(tmp_path):
    cases = [
        ([{"node": "n1", "tree": "hpe-dl380"}],
         "bmc n1: unknown Redfish tree 'hpe-dl380'; known trees: "
         + ", ".join(sorted(p.name for p in TREES_DIR.iterdir() if (p / "index.json").is_file()))),
        ([{"node": "n1", "tree": "dmtf-public-rackmount1", "faults": ["melted"]}],
         "bmc n1: faults[0]: unknown fault kind 'melted'; known kinds: bios_off, bmc_bad_credentials, bmc_down, "
         "gpu_missing_bmc, old_firmware, psu_failed, sel_critical"),
        ([{"node": "n1", "tree": "nvidia-dgx-h100-viking", "faults": [{"kind": "bios_off", "attribute": "NoSuch", "value": 1}]}],
         "bmc n1: faults[0]: bios_off: tree nvidia-dgx-h100-viking: attribute 'NoSuch' is not in /redfish/v1/Systems/DGX/Bios "
         "Attributes (223 attributes)"),
        ([{"node": "n1", "tree": "dmtf-public-rackmount1", "faults": ["gpu_missing_bmc"]}],
         "bmc n1: faults[0]: gpu_missing_bmc: tree dmtf-public-rackmount1: no Processor with ProcessorType GPU"),
        ([{"node": "n1", "tree": "nvidia-gb200-nvl", "faults": ["psu_failed"]}],
         "bmc n1: faults[0]: psu_failed: tree nvidia-gb200-nvl: no PowerSupply resource (its PowerSupplies collection is "
         "empty or was not captured)"),
        ([{"node": "n1", "tree": "nvidia-gb200-nvl", "faults": [{"kind": "old_firmware", "component": "BIOS"}]}],
         "bmc n1: faults[0]: old_firmware: tree nvidia-gb200-nvl: no FirmwareInventory component 'BIOS'; the tree has: "
         "CX7_0, FW_BMC_0, FW_CPLD_0, FW_CPLD_1, FW_CPLD_2, FW_CPLD_3, FW_ERoT_BMC_0, HGX_FW_BMC_0, HGX_FW_CPLD_0, "
         "HGX_FW_CPU_0, HGX_FW_CPU_1, HGX_FW_ERoT_BMC_0, HGX_FW_ERoT_CPU_0, HGX_FW_ERoT_CPU_1, HGX_FW_ERoT_FPGA_0, "
         "HGX_FW_ERoT_FPGA_1, HGX_FW_FPGA_0, HGX_FW_FPGA_1, HGX_FW_GPU_0, HGX_FW_GPU_1, HGX_FW_GPU_2, HGX_FW_GPU_3, "
         "HGX_InfoROM_GPU_0, HGX_InfoROM_GPU_1, HGX_InfoROM_GPU_2, HGX_InfoROM_GPU_3, HGX_PCIeSwitchConfig_0, NIC_0, "
         "NIC_1, UEFI"),
        ([{"node": "n1", "tree": "dell-poweredge-r750-h100-pcie", "faults": [{"kind": "psu_failed", "slot": 1}]}],
         "bmc n1: faults[0]: fault 'psu_failed' has unknown parameter(s) ['slot']; it takes ['id', 'state']"),
        ([{"node": "n1", "tree": "dmtf-public-rackmount1"}, {"node": "n1", "tree": "dmtf-public-rackmount1"}],
         "bmcs[1]: node 'n1' given twice"),
    ]
    for bmcs, msg in cases:
        with pytest.raises(redfish_lab.BmcLabError) as info:
            redfish_lab.start(tmp_path, bmcs)
        assert str(info.value) == msg
    assert not (tmp_path / "bmc").exists()


# ------------------------------------------------------------------------------------- queries, restart, stop

def test_paging_and_expand(lab):
    dmtf, dgx = lab[1]["dmtf01"], lab[1]["dgx01"]
    entries = "/redfish/v1/Systems/437XR1138R2/LogServices/Log1/Entries"
    first = get(dmtf, entries)
    assert first["@odata.nextLink"] == entries + "?$skiptoken=2" and len(first["Members"]) == 2  # as captured
    second = get(dmtf, first["@odata.nextLink"])
    assert second["Members"] == [] and "@odata.nextLink" not in second and "Members@odata.nextLink" not in second
    page = get(dmtf, entries + "?$top=1")
    assert [m["Id"] for m in page["Members"]] == ["1"] and page["Members@odata.nextLink"] == entries + "?$skip=1&$top=1"
    inventory = get(dgx, "/redfish/v1/UpdateService/FirmwareInventory?$expand=.($levels=1)")
    versions = {m["Id"]: m["Version"] for m in inventory["Members"]}
    assert len(versions) == 66 and versions["HostBIOS_0"] == "01.01.02"
    status, _h, body = call(dmtf, "GET", entries + "?$skip=two")
    assert (status, error_of(body)[0]) == (400, "Base.1.16.0.QueryParameterValueTypeError")


def test_restart_of_the_server_keeps_state(lab):
    run_dir, eps = lab
    ep, system = eps["dmtf01"], "/redfish/v1/Systems/437XR1138R2"
    status, headers, _b = call(ep, "POST", "/redfish/v1/SessionService/Sessions", auth=False,
                               body={"UserName": "admin", "Password": ep["password"]})
    token = headers["X-Auth-Token"]
    TOKENS.append(token)
    assert call(ep, "POST", system + "/Actions/ComputerSystem.Reset", body={"ResetType": "ForceOff"}, token=token)[0] == 204
    poll_power(ep, system, "Off")
    assert call(ep, "PATCH", system, body={"Boot": {"BootSourceOverrideTarget": "Hdd"}})[0] == 200
    assert call(ep, "PATCH", system + "/Bios/Settings", body={"Attributes": {"ProcTurboMode": "Disabled"}})[0] == 200
    log = system + "/LogServices/Log1"
    assert call(ep, "POST", log + "/Actions/LogService.ClearLog", body={})[0] == 204
    old_pid = redfish_lab.running(run_dir)
    assert redfish_lab.restart(run_dir) == eps
    assert redfish_lab.running(run_dir) not in (None, old_pid)
    assert call(ep, "GET", system, token=token)[0] == 401  # sessions end with the BMC
    after = get(ep, system)
    assert (after["PowerState"], after["Boot"]["BootSourceOverrideTarget"]) == ("Off", "Hdd")
    assert get(ep, system + "/Bios/Settings")["Attributes"] == {"ProcTurboMode": "Disabled"}
    assert get(ep, log + "/Entries")["Members"] == []
    assert call(ep, "POST", system + "/Actions/ComputerSystem.Reset", body={"ResetType": "On"})[0] == 204
    poll_power(ep, system, "On")
    assert get(ep, system + "/Bios")["Attributes"]["ProcTurboMode"] == "Disabled"


def test_log_has_every_request_and_no_secret(lab):
    run_dir, eps = lab
    ep, sessions = eps["dgx01"], "/redfish/v1/SessionService/Sessions"
    status, headers, _b = call(ep, "POST", sessions, auth=False, body={"UserName": "admin", "Password": ep["password"]})
    TOKENS.append(headers["X-Auth-Token"])
    assert call(ep, "GET", "/redfish/v1/Chassis", token=TOKENS[-1])[0] == 200
    assert call(ep, "POST", sessions, auth=False, body={"UserName": "admin", "Password": "x" + ep["password"]})[0] == 401
    assert call(eps["badpw01"], "GET", "/redfish/v1/Systems")[0] == 401
    log = (run_dir / "bmc" / "redfish.log").read_text()
    assert " dgx01 127.0.0.1 POST /redfish/v1/SessionService/Sessions 201\n" in log
    assert " dgx01 127.0.0.1 GET /redfish/v1/Chassis 200\n" in log
    assert " dgx01 127.0.0.1 POST /redfish/v1/SessionService/Sessions 401\n" in log
    assert "dmtf01 listening on https://127.0.0.1:%d/redfish/v1" % eps["dmtf01"]["port"] in log
    assert "down01 bmc_down: no listener on port %d" % eps["down01"]["port"] in log
    secrets = [ep["password"], "x" + ep["password"], eps["badpw01"]["password"], *TOKENS]
    for secret in secrets:
        assert secret not in log
        for path in (run_dir / "bmc" / "state").iterdir():
            assert secret not in path.read_text()


def test_stop_leaves_no_process(lab):
    run_dir, eps = lab
    pid = redfish_lab.running(run_dir)
    assert pid and os.getpgid(pid) == pid
    assert redfish_lab.stop(run_dir) is True
    assert redfish_lab.running(run_dir) is None and not (run_dir / "bmc" / "redfish.pid").exists()
    assert not Path(f"/proc/{pid}").exists()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", eps["dell01"]["port"]), timeout=5).close()
    assert redfish_lab.stop(run_dir) is False


def test_the_lab_can_serve_every_tree_of_the_corpus():
    """Issue 22 item 8: the lab draws its BMCs from the whole corpus, not from a short list."""
    import yaml

    corpus = yaml.safe_load((TREES_DIR / "CORPUS.yml").read_text())["trees"]
    assert set(corpus) <= set(redfish_lab.TREES)
    assert len(redfish_lab.TREES) >= 12



def _serials(docs):
    from lab.bmc import redfish_tree

    return [item["SerialNumber"] for doc in docs.values() for item in redfish_tree._walk(doc)  # pylint: disable=protected-access
            if isinstance(item.get("SerialNumber"), str)]


@pytest.mark.parametrize("tree", redfish_lab.TREES)
def test_the_identity_edit_keeps_serials_apart_and_placeholders_as_captured(tree):
    import copy

    from lab.bmc import redfish_tree

    captured_serials = _serials(redfish_tree.load_tree(tree))
    one = _serials(redfish_tree.set_identity(copy.deepcopy(redfish_tree.load_tree(tree)), 1))
    two = _serials(redfish_tree.set_identity(copy.deepcopy(redfish_tree.load_tree(tree)), 2))
    assert len(set(one)) == len(set(captured_serials))  # serials that differ in the capture still differ
    kept = set(serial for serial, edited in zip(captured_serials, one) if serial == edited)
    assert all(len(serial.strip()) < 4 or redfish_tree._NO_SERIAL.match(serial.strip())  # pylint: disable=protected-access
               for serial in kept)
    assert (set(one) & set(two)) == kept  # only the placeholders are alike on two nodes
    assert redfish_tree.node_serial("PFJHD0D52H60DG ", 7) == "PFJHD0D52H60DG007 "
    assert [redfish_tree.node_serial(value, 7) for value in ("", "N/A", "00000000000000", "CPLDSerialNumber", "01")] == [
        "", "N/A", "00000000000000", "CPLDSerialNumber", "01"]
