# SPDX-License-Identifier: GPL-3.0-or-later
"""What Redfish services we did not write do (issue 11): a port in bmc_address, services without session tokens,
a broken ``$expand``, members that 404 while their siblings read, a ComputerSystem that cannot be read, and
answers of the wrong type (issue 12). Each case runs against the replayed captures (test_redfish_wire.ReplayBMC)
changed the way the independent servers behave (sushy-tools; see tests/integration/test_redfish_independent.py)."""

from __future__ import annotations

import json
import os
import socket
import threading
from http.server import ThreadingHTTPServer

import pytest
import yaml
from ansible.module_utils.testing import patch_module_args
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import BMCAuthError, BMCError
from ansible_collections.zhisuan.ops.plugins.module_utils._judge.bmc import judge_bmc
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish import transform
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.client import RedfishClient, base_url, expand_supported, sessions_uri
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.inventory import collect_bmc
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.service import RedfishService
from ansible_collections.zhisuan.ops.plugins.modules import redfish_info
from test_redfish_wire import PASSWORD, USER, ReplayBMC, _error, _Handler, client_for

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
EXPAND = "$expand=.($levels=1)"


class TokenlessBMC(ReplayBMC):
    """POST to the session collection answers 204 with no X-Auth-Token (sushy-static, some BMCs)."""

    def _post(self, request):
        if request.path.endswith("/Sessions"):
            return 204, {}, None
        return ReplayBMC._post(self, request)


class RefusingBMC(ReplayBMC):
    """POST to the session collection is not allowed (HTTP 405)."""

    def _post(self, request):
        if request.path.endswith("/Sessions"):
            return 405, {}, _error("POST is not allowed on %s" % request.path)
        return ReplayBMC._post(self, request)


class BrokenExpandBMC(ReplayBMC):
    """Advertises $expand (as the captured root does) but answers an expanded GET with ``status`` (sushy-static: 404,
    it looks the query up as a file name), or with a body that has no Members (``status`` None)."""

    def __init__(self, tree, status=404, **kwargs):
        ReplayBMC.__init__(self, tree, **kwargs)
        self.expand_status = status

    def _get(self, request):
        if "$expand" in request.query:
            if self.expand_status is None:
                return 200, {}, {"@odata.id": request.path, "Name": "expanded", "Members@odata.count": 3}
            return self.expand_status, {}, _error("Sub-URI %s?%s not found" % (request.path, request.query))
        return ReplayBMC._get(self, request)


class MissingBMC(ReplayBMC):
    """Some captured resources answer 404 (a member the BMC lists but cannot serve)."""

    def __init__(self, tree, missing, **kwargs):
        ReplayBMC.__init__(self, tree, **kwargs)
        self.missing = set(missing)

    def load(self, path):
        if path in self.missing:
            return None
        return ReplayBMC.load(self, path)


def read(bmc, **kwargs):
    warnings = []
    with client_for(bmc, warnings, **kwargs) as client:
        facts = collect_bmc(RedfishService(client))
    return facts, warnings


def statuses(checks, prefix=""):
    return dict((c["id"], c["status"]) for c in checks if c["id"].startswith(prefix))


# -- the port rule ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("address, port, expected", [
    ("https://10.0.0.5:8443", None, ("https://10.0.0.5:8443", "10.0.0.5:8443")),
    ("https://10.0.0.5:8443", 9443, ("https://10.0.0.5:9443", "10.0.0.5:9443")),
    ("10.0.0.5:8443", None, ("https://10.0.0.5:8443", "10.0.0.5:8443")),
    ("bmc07.lab:8443", None, ("https://bmc07.lab:8443", "bmc07.lab:8443")),
    ("https://[::1]:8443", None, ("https://[::1]:8443", "[::1]:8443")),
    ("[::1]:8443", None, ("https://[::1]:8443", "[::1]:8443")),
    ("[fe80::1]", None, ("https://[fe80::1]", "[fe80::1]")),
    ("[fe80::1]", 8443, ("https://[fe80::1]:8443", "[fe80::1]:8443")),
    ("fe80::1", None, ("https://[fe80::1]", "[fe80::1]")),
    ("2001:db8::5", 443, ("https://[2001:db8::5]:443", "[2001:db8::5]:443")),
])
def test_a_port_in_the_address_wins_unless_bmc_port_is_set(address, port, expected):
    assert base_url(address, port) == expected


@pytest.mark.parametrize("address, port, words", [
    ("https://10.0.0.5:99999", None, "not a host name"),
    ("10.0.0.5", 70000, "bmc_port 70000 is not a TCP port"),
    (["10.0.0.5"], None, "must be a host name"),
])
def test_bad_addresses_and_ports_are_typed_errors(address, port, words):
    with pytest.raises(BMCError) as info:
        base_url(address, port)
    assert words in info.value.detail


def _role_defaults(hostvars):
    with open(os.path.join(REPO, "roles", "check_bmc", "defaults", "main.yml")) as handle:
        defaults = yaml.safe_load(handle)
    variables = dict(((key, trust_as_template(value) if isinstance(value, str) else value)
                      for key, value in defaults.items()), **hostvars)
    templar = Templar(loader=DataLoader(), variables=variables)
    return dict((key, templar.template(variables[key])) for key in ("check_bmc_port", "check_bmc_auth"))


def test_the_role_default_port_leaves_the_address_port_alone():
    # Redfish without bmc_port: no port, so the module uses https://10.0.0.5:8443's own (before: 443 always)
    assert _role_defaults({"bmc_protocol": "redfish", "bmc_address": "https://10.0.0.5:8443"}) == {
        "check_bmc_port": None, "check_bmc_auth": "auto"}
    assert _role_defaults({"bmc_protocol": "redfish", "bmc_port": 9443, "bmc_auth": "basic"}) == {
        "check_bmc_port": 9443, "check_bmc_auth": "basic"}
    assert _role_defaults({"bmc_protocol": "ipmi"})["check_bmc_port"] == 623
    with open(os.path.join(REPO, "roles", "check_bmc", "tasks", "main.yml")) as handle:
        tasks = handle.read()
    assert 'bmc_port: "{{ check_bmc_port | default(omit, true) }}"' in tasks
    assert 'auth: "{{ check_bmc_auth }}"' in tasks


def test_the_client_reaches_the_port_written_in_the_address():
    with ReplayBMC("dmtf") as bmc:
        port = bmc.server.server_address[1]
        with client_for(bmc) as client:
            assert client.base_url == "http://127.0.0.1:%d" % port
        with pytest.raises(BMCError) as info:
            with client_for(bmc, port=1, retries=0):
                pass
    assert "127.0.0.1:1" in info.value.detail


class IPv6BMC(ReplayBMC):
    """The replay server on the IPv6 loopback."""

    def __enter__(self):
        class Server(ThreadingHTTPServer):
            address_family = socket.AF_INET6

        self.server = Server(("::1", 0), _Handler)
        self.server.daemon_threads = True
        self.server.bmc = self
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        return self

    @property
    def address(self):
        return "http://[::1]:%d" % self.server.server_address[1]


def test_an_ipv6_bmc_is_reached_on_the_port_of_its_address():
    with IPv6BMC("dmtf") as bmc:
        port = bmc.server.server_address[1]
        with RedfishClient("http://[::1]:%d" % port, username=USER, password=PASSWORD) as client:
            facts = collect_bmc(RedfishService(client))
    assert facts["address"] == "[::1]:%d" % port and facts["system"]["id"] == "437XR1138R2"
    assert facts["auth"] == "session" and len(bmc.requests) > 10


# -- bmc_auth: auto | session | basic ---------------------------------------------------------------------------------

def test_auto_falls_back_to_basic_when_the_session_has_no_token():
    with TokenlessBMC("dmtf") as bmc:
        facts, warnings = read(bmc)
    assert facts["auth"] == "basic" and facts["system"]["id"] == "437XR1138R2"
    assert any("returned no X-Auth-Token; using basic authentication" in text for text in warnings)
    reads = [call for call in bmc.requests if call.method == "GET" and call.path != "/redfish/v1"]
    assert reads and all(call.headers["authorization"].startswith("Basic ") for call in reads)


def test_session_mode_refuses_a_service_without_tokens():
    with TokenlessBMC("dmtf") as bmc:
        with pytest.raises(BMCAuthError) as info:
            with client_for(bmc, auth="session"):
                pass
    assert "returned no X-Auth-Token; set auth (bmc_auth) to basic or auto" in info.value.detail
    assert PASSWORD not in info.value.message


def test_auto_falls_back_when_sessions_are_refused_and_session_mode_does_not():
    with RefusingBMC("dell") as bmc:
        facts, warnings = read(bmc)
        assert facts["auth"] == "basic" and facts["system"]["model"] == "PowerEdge R750"
        assert any("refused to create a session (HTTP 405" in text for text in warnings)
        with pytest.raises(BMCAuthError):
            with client_for(bmc, auth="session"):
                pass


def test_auto_uses_a_session_where_there_is_one_and_reports_it():
    with ReplayBMC("dgx") as bmc:
        facts, warnings = read(bmc)
    assert facts["auth"] == "session" and len(bmc.tokens) == 1 and bmc.sessions == {}
    assert not [text for text in warnings if "basic" in text]


def test_auto_never_falls_back_on_wrong_credentials():
    with ReplayBMC("dmtf") as bmc:
        with pytest.raises(BMCAuthError) as info:
            with client_for(bmc, password="wrong-password"):
                pass
    assert "authentication failed" in info.value.detail
    assert [call.method for call in bmc.requests] == ["GET", "POST"]


def test_basic_mode_sends_no_session_request():
    with ReplayBMC("dmtf") as bmc:
        facts, _ = read(bmc, auth="basic")
    assert facts["auth"] == "basic" and not bmc.calls("POST")


def test_an_unknown_auth_mode_is_a_typed_error():
    with pytest.raises(BMCError) as info:
        RedfishClient("127.0.0.1", auth="kerberos")
    assert "auth must be one of auto, session, basic" in info.value.detail


# -- $expand that does not work ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("status", [404, 400, 501, None])
def test_a_broken_expand_falls_back_to_member_reads_once(status):
    with ReplayBMC("dell") as good:
        expected, _ = read(good)
    with BrokenExpandBMC("dell", status=status) as bmc:
        facts, warnings = read(bmc)
    expanded = [call for call in bmc.calls("GET") if "$expand" in call.query]
    assert len(expanded) == 1  # tried once, remembered for the rest of the session
    assert facts["expand_fallback"] is True
    assert len([text for text in warnings if "advertises $expand" in text]) == 1
    for key in ("system", "manager", "chassis", "processors", "gpus", "power_supplies", "fans", "sensors"):
        assert facts[key] == expected[key], key
    assert facts["gpus"][0]["model"] == "NVIDIA H100 PCIe"


def test_a_missing_collection_does_not_switch_expand_off():
    with ReplayBMC("dell") as bmc:
        facts, warnings = read(bmc)
    # Memory, PCIeDevices, NetworkAdapters and Storage are not in the capture: 404, expand still on after them
    assert facts["expand_fallback"] is False and not [text for text in warnings if "$expand" in text]
    assert "GET /redfish/v1/Systems/System.Embedded.1/Storage?" + EXPAND in [repr(call) for call in bmc.requests]


# -- a member that 404s, a System that cannot be read -----------------------------------------------------------------

GPU3 = "/redfish/v1/Systems/HGX_Baseboard_0/Processors/GPU_SXM_3"


def test_a_missing_gpu_member_is_partial_facts_and_an_error_check_naming_it():
    class NoExpand(MissingBMC):
        def _get(self, request):  # the GPU list read member by member, as a service without $expand is
            if "$expand" in request.query:
                return 501, {}, _error("not implemented")
            return MissingBMC._get(self, request)

    with NoExpand("dgx", [GPU3]) as bmc:
        facts, _ = read(bmc)
    assert len(facts["gpus"]) == 7 and facts["system"]["serial"] and facts["chassis"]
    assert [item for item in facts["errors"] if "GPU_SXM_3" in item["error"] or item["resource"] == GPU3]
    assert facts["unreadable"]["gpus"] == [GPU3 + " (HTTP 404)"]
    checks = judge_bmc("dgx01", facts, expected={"gpu_count": 8})
    gpu = [c for c in checks if c["id"] == "bmc.gpu.count"][0]
    assert gpu["status"] == "error" and "GPU_SXM_3" in gpu["message"] and gpu["remedy"] == "investigate"
    assert statuses(checks)["bmc.power.state"] == "pass"
    assert len(checks) > 10  # the node is judged, not failed


def test_a_short_count_without_unreadable_members_is_still_a_fail():
    with ReplayBMC("dgx") as bmc:
        facts, _ = read(bmc)
    checks = judge_bmc("dgx01", facts, expected={"gpu_count": 9})
    assert statuses(checks)["bmc.gpu.count"] == "fail"
    checks = judge_bmc("dgx01", facts, expected={"gpu_count": 8})
    assert statuses(checks)["bmc.gpu.count"] == "pass"


def test_an_unreadable_host_system_still_gives_gpus_and_health_from_the_chassis_side():
    with MissingBMC("dgx", ["/redfish/v1/Systems/DGX", "/redfish/v1/Systems/HGX_Baseboard_0"]) as bmc:
        facts, _ = read(bmc)
    assert facts["system_readable"] is False
    assert facts["system"]["serial"] is None and facts["system"]["power_state"] is None
    assert facts["system"]["health"] == "OK"  # the chassis' health
    # the GPU chassis links its processor (Links.Processors), which reads though its system does not
    assert [(gpu["id"], gpu["source"], gpu["health"]) for gpu in facts["gpus"]] == [("GPU_SXM_1", "processor", "OK")]
    assert facts["power_supplies"] and facts["fans"] and facts["sensors"]
    checks = judge_bmc("dgx01", facts, expected={"gpu_count": 8})
    found = statuses(checks)
    assert found["bmc.readout.system"] == "error" and found["bmc.power.state"] == "skip"
    assert found["bmc.health.system"] == "pass"
    assert found["bmc.gpu.count"] == "error"  # the other GPU chassis are among the unreadable members
    system = [c for c in checks if c["id"] == "bmc.readout.system"][0]
    assert "/redfish/v1/Systems" in system["message"]


def test_an_unreadable_host_system_with_a_readable_baseboard_counts_the_baseboard_gpus():
    with MissingBMC("dgx", ["/redfish/v1/Systems/DGX"]) as bmc:
        facts, _ = read(bmc)
    assert facts["system_readable"] is False and facts["system"]["id"] is None
    assert len(facts["gpus"]) == 8 and {"resource": "/redfish/v1/Systems/DGX", "error": "HTTP 404"} in facts["errors"]
    assert statuses(judge_bmc("dgx01", facts, expected={"gpu_count": 8}))["bmc.gpu.count"] == "pass"


def test_failed_reads_after_the_inventory_are_error_checks_with_their_message():
    with ReplayBMC("dmtf") as bmc:
        facts, _ = read(bmc)
    facts["failed_reads"] = [{"part": "bios", "error": "redfish: the system /redfish/v1/Systems/1 has no Bios resource"}]
    check = [c for c in judge_bmc("n1", facts) if c["id"] == "bmc.readout.bios"][0]
    assert check["status"] == "error" and "has no Bios resource" in check["message"]


# -- answers of the wrong type (issue 12) -----------------------------------------------------------------------------

def _edited(path, change):
    def edit(document):
        change(document)
        return document
    return {path: edit}


@pytest.mark.parametrize("members", [{"@odata.id": "x"}, "Members", 7])
def test_members_that_are_not_a_list_are_a_typed_error_for_that_collection(members):
    edits = _edited("/redfish/v1/Chassis", lambda doc: doc.__setitem__("Members", members))
    with ReplayBMC("dmtf", edits=edits) as bmc:
        facts, _ = read(bmc, auth="basic")
    assert facts["chassis"] is None and facts["system"]["id"] == "437XR1138R2"
    assert [item for item in facts["errors"] if item["resource"] == "/redfish/v1/Chassis"]


def test_member_ids_and_next_links_of_the_wrong_type_are_passed_over():
    def change(doc):
        doc["Members"] = [{"@odata.id": ["a"]}, {"@odata.id": 5}, "x", None] + doc["Members"]
        doc["Members@odata.nextLink"] = {"href": "/redfish/v1/Systems?$skip=1"}
    with BrokenExpandBMC("dmtf", status=501, edits=_edited("/redfish/v1/Systems", change)) as bmc:
        facts, _ = read(bmc, auth="basic")
    assert facts["system"]["id"] == "437XR1138R2" and facts["chassis"][0]["id"] == "1U"
    assert "GET /redfish/v1/Systems?$skip=1" not in [repr(call) for call in bmc.requests]


@pytest.mark.parametrize("features, expand", [
    ({"ExpandQuery": "yes"}, False), ({"ExpandQuery": ["NoLinks"]}, False), ("all", False),
    ({"ExpandQuery": {"NoLinks": "true", "Levels": 1}}, False), ({"ExpandQuery": {"NoLinks": True, "Levels": True}}, True)])
def test_expand_query_of_the_wrong_type_is_no_expand(features, expand):
    assert expand_supported({"ProtocolFeaturesSupported": features}) is expand


@pytest.mark.parametrize("root", [{"Links": "x"}, {"Links": {"Sessions": ["x"]}}, {"Links": {"Sessions": {"@odata.id": 5}}},
                                  {"SessionService": "x"}, [], None])
def test_session_links_of_the_wrong_type_mean_no_session_service(root):
    assert sessions_uri(root) is None


@pytest.mark.parametrize("body, words", [
    (b'{"a": NaN}', "not with JSON"), (b'{"a": Infinity}', "not with JSON"), (b"[" * 100000 + b"]" * 100000, "nested"),
    (b'{"a":' * 70 + b"1" + b"}" * 70, "nested deeper"), (b"<html>", "not with JSON")])
def test_odd_bodies_are_typed_errors(body, words):
    client = RedfishClient("127.0.0.1")
    with pytest.raises(BMCError) as info:
        client._response("GET", "/redfish/v1/Systems", 200, {}, body)  # pylint: disable=protected-access
    assert words in info.value.detail


@pytest.mark.parametrize("value, expected", [
    (1e308, None), (10 ** 400, None), (float("inf"), None), ("1e999", None), ("1.2.3", None), ("\u0663\u0664", None),
    ("N/A", None), (True, None), ("42.5", 42.5), (-3, -3.0), ([1], None), ({"a": 1}, None)])
def test_numbers_are_finite_or_null(value, expected):
    assert transform.number(value) == expected


def test_text_fields_of_the_wrong_type_are_null():
    assert transform.text({"a": 1}) is None and transform.text([1]) is None and transform.text(5) == "5"
    assert transform.odata_id({"@odata.id": ["x"]}) is None and transform.link({"Memory": {"@odata.id": 3}}, "Memory") is None
    assert transform.health({"Status": {"Health": ["OK"]}}) is None and transform.health({"Status": "OK"}) is None
    assert transform.drive_facts({"CapacityBytes": 10 ** 30})["capacity_bytes"] is None
    assert transform.drive_facts({"CapacityBytes": 1920383410176})["capacity_bytes"] == 1920383410176


def test_redfish_info_reports_the_auth_used_without_the_password(capsys, monkeypatch):
    from ansible.module_utils import _internal as ansible_internal
    monkeypatch.setattr(ansible_internal, "is_controller", False)
    with TokenlessBMC("gb200") as bmc:
        args = {"bmc_address": bmc.address, "bmc_username": USER, "bmc_password": PASSWORD}
        with patch_module_args(args):
            with pytest.raises(SystemExit) as info:
                redfish_info.main()
    text = capsys.readouterr().out
    out = json.loads(text)
    assert info.value.code == 0 and out["bmc"]["auth"] == "basic"
    assert PASSWORD not in text
