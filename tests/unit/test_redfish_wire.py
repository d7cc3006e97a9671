# SPDX-License-Identifier: GPL-3.0-or-later
"""The Redfish client at the wire: a real HTTP(S) server on 127.0.0.1 replays a captured Redfish tree
(tests/fixtures/redfish/<tree>/.../index.json) with authentication, sessions, paging, $expand and stateful actions,
and records every request. This file holds that server (``ReplayBMC``, imported by the other test_redfish_* files)
and the tests of the client's mechanics: sessions, basic auth, retries, TLS, paging and task monitors."""

from __future__ import annotations

import base64
import copy
import itertools
import json
import os
import re
import ssl
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import BMCAuthError, BMCError, BMCHTTPError, BMCUnreachable
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.client import RedfishClient, base_url, expand_supported
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.tasks import TaskMonitor

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "redfish")
TREES = {
    "dgx": "nvidia-dgx-h100-viking",
    "gb200": "nvidia-gb200-nvl",
    "dell": "dell-poweredge-r750-h100-pcie",
    "dmtf": "dmtf-public-rackmount1",
}
USER = "root"
PASSWORD = "Zs-9f!Kq#p2"
ROOT = "/redfish/v1"
SESSIONS = "/redfish/v1/SessionService/Sessions"
OFF_TYPES = ("ForceOff", "GracefulShutdown")
TRANSITION = {"On": "PoweringOn", "Off": "PoweringOff"}


class Recorded(object):
    def __init__(self, method, target, headers, body):
        self.method = method
        self.target = target  # path and query, as sent
        self.path = unquote(urlsplit(target).path.rstrip("/")) or "/"
        self.query = urlsplit(target).query
        self.headers = headers
        self.body = body

    def __repr__(self):
        return "%s %s" % (self.method, self.target)


def _error(message, message_id="Base.1.8.GeneralError"):
    return {"error": {"code": message_id, "message": message,
                      "@Message.ExtendedInfo": [{"MessageId": message_id, "Message": message}]}}


class ReplayBMC(object):
    """A Redfish service replaying one captured tree.

    - GET serves ``<tree>/<path below /redfish/v1>/index.json`` (or the resource as changed by earlier requests);
      anything not captured is 404. ``$expand=.($levels=1)`` inlines the members that were captured. Paging: with
      ``page_size``, collections are served that many members a page with ``Members@odata.nextLink``
      (``?$skip=N``); without it a collection is served as captured and ``$skip``/``$skiptoken=N`` serves the rest.
    - Authentication: the service root and POST to the session collection are open; everything else needs basic
      auth or the X-Auth-Token of a live session. Sessions are created and deleted for real.
    - ComputerSystem.Reset changes the system's PowerState (``transition_reads`` GETs show PoweringOn/Off first);
      with ``task_polls`` the action answers 202 and a task monitor that runs for that many polls.
    - PATCH to a settings object named by a captured ``@Redfish.Settings`` stores pending values there; with
      ``if_match`` such a PATCH needs an If-Match header (the ETag or ``*``). PATCH to a system merges ``Boot``.
    - ``fail[path] = [503, ...]`` (or ``fail[(method, path)]``) answers those statuses first; ``edits[path](doc)``
      edits a captured resource.
    """

    def __init__(self, tree, page_size=None, tls=None, if_match=False, edits=None, transition_reads=0, task_polls=None):
        self.tree = os.path.join(FIXTURES, TREES.get(tree, tree))
        self.page_size = page_size
        self.tls = tls
        self.if_match = if_match
        self.edits = dict(edits or {})
        self.transition_reads = transition_reads
        self.task_polls = task_polls
        self.requests = []
        self.overlay = {}
        self.sessions = {}
        self.tokens = []
        self.fail = {}
        self.etags = {}
        self.tasks = {}
        self._transitions = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self.settings_objects = self._settings_objects()
        self.server = None

    # -- life cycle -------------------------------------------------------------------------------------------

    def __enter__(self):
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.daemon_threads = True
        self.server.bmc = self
        if self.tls:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*self.tls)
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    @property
    def address(self):
        return "%s://127.0.0.1:%d" % ("https" if self.tls else "http", self.server.server_address[1])

    def calls(self, method=None):
        return [request for request in self.requests if method is None or request.method == method]

    # -- resources --------------------------------------------------------------------------------------------

    def _file(self, path):
        relative = path[len(ROOT):].lstrip("/") if path.startswith(ROOT) else None
        if relative is None:
            return None
        name = os.path.join(self.tree, relative, "index.json")
        return name if os.path.isfile(name) else None

    def load(self, path):
        """The current document at ``path`` (a copy), None when the tree has none."""
        if path in self.overlay:
            return copy.deepcopy(self.overlay[path])
        if path in self.settings_objects:
            return self._settings_skeleton(path)
        name = self._file(path)
        if name is None:
            return None
        with open(name, "rb") as handle:
            document = json.loads(handle.read().decode("utf-8"))
        if path in self.edits:
            document = self.edits[path](document)
        return document

    def _settings_objects(self):
        found = {}
        for directory, _dirs, files in os.walk(self.tree):
            if "index.json" not in files:
                continue
            with open(os.path.join(directory, "index.json"), "rb") as handle:
                document = json.loads(handle.read().decode("utf-8"))
            target = ((document.get("@Redfish.Settings") or {}).get("SettingsObject") or {}).get("@odata.id")
            if target:
                found[target.rstrip("/")] = document.get("@odata.id", "").rstrip("/")
        return found

    def _settings_skeleton(self, path):
        owner = self.load(self.settings_objects[path]) or {}
        document = {"@odata.id": path, "@odata.etag": self._etag(path), "Id": path.rsplit("/", 1)[-1]}
        if "Attributes" in owner:
            document["Attributes"] = {}
        return document

    def _etag(self, path):
        return '"%d"' % self.etags.get(path, 1)

    # -- requests ---------------------------------------------------------------------------------------------

    def handle(self, method, target, headers, body):
        request = Recorded(method, target, headers, body)
        with self._lock:
            self.requests.append(request)
            path = request.path
            pending = self.fail.get((method, path)) or self.fail.get(path)
            if pending:
                status = pending.pop(0)
                return status, {"Retry-After": "0"} if status == 503 else {}, _error("injected HTTP %d" % status)
            if not (method == "GET" and path == ROOT) and not (method == "POST" and path == SESSIONS):
                if not self._authorised(headers):
                    return 401, {"WWW-Authenticate": 'Basic realm="Redfish"'}, _error("Invalid credentials", "Base.1.8.NoValidSession")
            handler = getattr(self, "_" + method.lower(), None)
            if handler is None:
                return 405, {}, _error("method not allowed")
            return handler(request)

    def _authorised(self, headers):
        token = headers.get("x-auth-token")
        if token:
            return token in self.sessions
        basic = headers.get("authorization", "")
        if basic.startswith("Basic "):
            return base64.b64decode(basic[6:]).decode("utf-8") == "%s:%s" % (USER, PASSWORD)
        return False

    def _get(self, request):
        path = request.path
        if path in self.tasks:
            return self._poll_task(path)
        document = self.load(path)
        if document is None:
            return 404, {}, _error("The resource at the URI %s was not found." % path, "Base.1.8.ResourceMissingAtURI")
        if path in self._transitions:
            final, left = self._transitions[path]
            if left > 0:
                document["PowerState"] = TRANSITION[final]
                self._transitions[path] = (final, left - 1)
        if isinstance(document.get("Members"), list):
            document = self._page(document, request)
        return 200, {"ETag": self._etag(path)}, document

    def _page(self, document, request):
        query = parse_qs(request.query, keep_blank_values=True)
        skip = query.get("$skip") or query.get("$skiptoken")
        members = document["Members"]
        if self.page_size or skip:
            for key in ("Members@odata.nextLink", "@odata.nextLink"):
                document.pop(key, None)
            start = int(skip[0]) if skip else 0
            end = start + self.page_size if self.page_size else len(members)
            document["Members"] = members[start:end]
            if end < len(members):
                document["Members@odata.nextLink"] = "%s?$skip=%d" % (request.path, end)
        if "$expand" in query:
            document["Members"] = [self.load(item["@odata.id"].rstrip("/")) or item for item in document["Members"]]
        return document

    def _post(self, request):
        if request.path == SESSIONS:
            body = request.body or {}
            if body.get("UserName") != USER or body.get("Password") != PASSWORD:
                return 401, {}, _error("Invalid username or password", "Base.1.8.NoValidSession")
            token = "tok-%d-%s" % (next(self._ids), base64.b16encode(os.urandom(8)).decode("ascii"))
            location = "%s/%d" % (SESSIONS, len(self.tokens) + 1)
            self.sessions[token] = location
            self.tokens.append(token)
            return 201, {"X-Auth-Token": token, "Location": location}, {"@odata.id": location, "UserName": USER}
        if request.path.endswith("/Actions/ComputerSystem.Reset"):
            return self._reset(request)
        return 405, {}, _error("POST is not allowed on %s" % request.path)

    def _reset(self, request):
        system_path = request.path.split("/Actions/", 1)[0]
        system = self.load(system_path)
        reset_type = (request.body or {}).get("ResetType")
        allowed = ((system.get("Actions") or {}).get("#ComputerSystem.Reset") or {}).get("ResetType@Redfish.AllowableValues")
        if allowed is not None and reset_type not in allowed:
            return 400, {}, _error("The value %s for ResetType is not in the list of acceptable values." % reset_type,
                                   "Base.1.8.ActionParameterValueNotInList")
        final = "Off" if reset_type in OFF_TYPES else "On"
        system["PowerState"] = final
        self.overlay[system_path] = system
        if self.transition_reads:
            self._transitions[system_path] = (final, self.transition_reads)
        if self.task_polls is None:
            return 204, {}, None
        monitor = "/redfish/v1/TaskService/TaskMonitors/%d" % next(self._ids)
        self.tasks[monitor] = self.task_polls
        return 202, {"Location": monitor}, {"@odata.id": monitor, "TaskState": "Running"}

    def _poll_task(self, path):
        left = self.tasks[path]
        if left > 0:
            self.tasks[path] = left - 1
            return 202, {"Location": path, "Retry-After": "0"}, {"TaskState": "Running", "PercentComplete": 50}
        return 200, {}, {"TaskState": "Completed", "TaskStatus": "OK", "Messages": []}

    def _patch(self, request):
        path, body = request.path, request.body or {}
        if path in self.settings_objects:
            if self.if_match and request.headers.get("if-match") not in ("*", self._etag(path)):
                return 428, {}, _error("An If-Match header with the current ETag is required", "Base.1.8.PreconditionRequired")
            document = self.load(path)
        else:
            document = self.load(path)
            if document is None:
                return 404, {}, _error("The resource at the URI %s was not found." % path)
            if "Boot" not in document:
                return 405, {}, _error("PATCH is not allowed on %s" % path)
        for key, value in body.items():
            if isinstance(value, dict) and isinstance(document.get(key), dict):
                document[key].update(value)
            elif not key.startswith("@"):
                document[key] = value
        self.etags[path] = self.etags.get(path, 1) + 1
        document["@odata.etag"] = self._etag(path)
        self.overlay[path] = document
        return 204, {}, None

    def _delete(self, request):
        for token, location in list(self.sessions.items()):
            if location == request.path:
                del self.sessions[token]
                return 204, {}, None
        return 405, {}, _error("DELETE is not allowed on %s" % request.path)


class _Handler(BaseHTTPRequestHandler):
    def _serve(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw.decode("utf-8")) if raw else None
        except ValueError:
            body = raw
        headers = dict((key.lower(), value) for key, value in self.headers.items())
        status, extra, document = self.server.bmc.handle(self.command, self.path, headers, body)
        payload = json.dumps(document).encode("utf-8") if document is not None else b""
        self.send_response(status)
        for key, value in extra.items():
            self.send_header(key, value)
        if payload:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_PATCH = do_DELETE = _serve

    def log_message(self, *args):
        return None


def client_for(bmc, warnings=None, sleeps=None, **kwargs):
    kwargs.setdefault("username", USER)
    kwargs.setdefault("password", PASSWORD)
    return RedfishClient(bmc.address, warn=(warnings.append if warnings is not None else None),
                         sleep=(sleeps.append if sleeps is not None else (lambda _s: None)), **kwargs)


@pytest.fixture(scope="session")
def tls_cert(tmp_path_factory):
    """A self-signed certificate for 127.0.0.1, made with the openssl command line."""
    directory = tmp_path_factory.mktemp("tls")
    cert, key = str(directory / "cert.pem"), str(directory / "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "2",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=60)
    return cert, key


# -- sessions and authentication ------------------------------------------------------------------------------------

def test_session_is_created_used_and_deleted():
    with ReplayBMC("dmtf") as bmc:
        with client_for(bmc) as client:
            system = client.get("/redfish/v1/Systems/437XR1138R2")
            token = client.token
        assert system["SerialNumber"] == "437XR1138R2"
        assert [repr(call) for call in bmc.requests] == [
            "GET /redfish/v1", "POST /redfish/v1/SessionService/Sessions", "GET /redfish/v1/Systems/437XR1138R2",
            "DELETE /redfish/v1/SessionService/Sessions/1"]
        login, read, logout = bmc.requests[1:]
        assert login.body == {"UserName": USER, "Password": PASSWORD}
        assert "authorization" not in read.headers and read.headers["x-auth-token"] == token == bmc.tokens[0]
        assert logout.headers["x-auth-token"] == token
        assert bmc.sessions == {}
        assert client.auth_used == "session" and client.token is None


def test_basic_auth_sends_credentials_on_each_request_and_creates_no_session():
    with ReplayBMC("dell") as bmc:
        with client_for(bmc, auth="basic") as client:
            client.get("/redfish/v1/Systems/System.Embedded.1")
        expected = "Basic " + base64.b64encode(("%s:%s" % (USER, PASSWORD)).encode()).decode()
        assert [call.method for call in bmc.requests] == ["GET", "GET"]
        assert bmc.requests[1].headers["authorization"] == expected
        assert bmc.tokens == []


def test_no_session_service_falls_back_to_basic_with_a_warning():
    def no_sessions(root):
        root.pop("SessionService")
        root["Links"].pop("Sessions")
        return root
    warnings = []
    with ReplayBMC("gb200", edits={ROOT: no_sessions}) as bmc:
        with client_for(bmc, warnings=warnings) as client:
            client.get("/redfish/v1/Systems/System_0")
        assert client.auth_used == "basic"
        assert [call.method for call in bmc.requests] == ["GET", "GET"]
        assert bmc.requests[1].headers["authorization"].startswith("Basic ")
    assert warnings == ["127.0.0.1:%d is reached over plain HTTP: the credentials travel unencrypted" % bmc.server.server_address[1],
                        "the BMC at 127.0.0.1:%d has no SessionService; using basic authentication" % bmc.server.server_address[1]]


def test_wrong_password_with_basic_auth_is_an_auth_error_without_the_password():
    wrong = "N0t-the-R1ght-0ne"
    with ReplayBMC("dell") as bmc:
        client = client_for(bmc, auth="basic", password=wrong)
        with pytest.raises(BMCAuthError) as info:
            with client:
                client.get("/redfish/v1/Systems/System.Embedded.1")
    assert info.value.message == ("redfish: authentication failed as user 'root' (HTTP 401 on GET "
                                  "/redfish/v1/Systems/System.Embedded.1): Invalid credentials; check bmc_username and bmc_password")
    assert info.value.as_dict() == {"error_kind": "auth_failed", "tool": "redfish", "msg": info.value.message,
                                    "status": 401, "resource": "/redfish/v1/Systems/System.Embedded.1"}
    assert wrong not in json.dumps(info.value.as_dict())


def test_wrong_password_with_session_auth_fails_at_login():
    with ReplayBMC("dgx") as bmc:
        with pytest.raises(BMCAuthError) as info:
            with client_for(bmc, password="bad-pass"):
                pass
    assert info.value.message == ("redfish: authentication failed as user 'root' (HTTP 401 on POST "
                                  "/redfish/v1/SessionService/Sessions): Invalid username or password; check bmc_username "
                                  "and bmc_password")
    assert bmc.tokens == []


def test_an_echoed_password_is_masked_in_errors():
    with ReplayBMC("dmtf") as bmc:
        bmc.fail["/redfish/v1/Chassis/1U"] = [500]
        client = client_for(bmc, auth="basic")
        client.open()
        client.password = "injected"  # the server echoes "injected HTTP 500": the client must mask its own secret
        with pytest.raises(BMCHTTPError) as info:
            client.get("/redfish/v1/Chassis/1U")
    assert info.value.message == "redfish: HTTP 500 on GET /redfish/v1/Chassis/1U: ******** HTTP 500"
    assert info.value.status == 500


# -- retries, errors ------------------------------------------------------------------------------------------------

def test_503_is_retried_with_backoff_then_served():
    sleeps = []
    with ReplayBMC("dgx") as bmc:
        bmc.fail["/redfish/v1/Systems/DGX"] = [503, 503]
        with client_for(bmc, auth="basic", sleeps=sleeps, backoff=0.5) as client:
            system = client.get("/redfish/v1/Systems/DGX")
        assert [repr(call) for call in bmc.calls("GET")] == ["GET /redfish/v1"] + ["GET /redfish/v1/Systems/DGX"] * 3
    assert system["Model"] == "DGXH100"
    assert sleeps == [0, 0]  # the server's Retry-After: 0 wins over the backoff


def test_503_beyond_the_retries_is_an_http_error():
    sleeps = []
    with ReplayBMC("dgx") as bmc:
        bmc.fail["/redfish/v1/Systems/DGX"] = [503] * 5
        with client_for(bmc, auth="basic", sleeps=sleeps, retries=2) as client:
            with pytest.raises(BMCHTTPError) as info:
                client.get("/redfish/v1/Systems/DGX")
    assert info.value.message == "redfish: HTTP 503 on GET /redfish/v1/Systems/DGX: injected HTTP 503"
    assert len(sleeps) == 2


def test_connection_refused_is_retried_then_unreachable():
    sleeps = []
    with ReplayBMC("dmtf") as bmc:
        address = bmc.address
    client = RedfishClient(address, username=USER, password=PASSWORD, retries=2, backoff=1.0, sleep=sleeps.append)
    with pytest.raises(BMCUnreachable) as info:
        client.open()
    assert sleeps == [1.0, 2.0]
    assert info.value.kind == "unreachable"
    assert info.value.message.startswith("redfish: GET /redfish/v1 on %s failed: " % address.split("://")[1])
    assert "Connection refused" in info.value.message


def test_missing_resource_is_an_http_error_with_the_redfish_message():
    with ReplayBMC("gb200") as bmc:
        with client_for(bmc) as client:
            with pytest.raises(BMCHTTPError) as info:
                client.get("/redfish/v1/Systems/System_0/LogServices/SEL")
    assert info.value.status == 404
    assert info.value.message == ("redfish: HTTP 404 on GET /redfish/v1/Systems/System_0/LogServices/SEL: The resource at the "
                                  "URI /redfish/v1/Systems/System_0/LogServices/SEL was not found.")


@pytest.mark.parametrize("address, port, expected", [
    ("10.20.1.11", None, ("https://10.20.1.11", "10.20.1.11")),
    ("10.20.1.11", 8443, ("https://10.20.1.11:8443", "10.20.1.11:8443")),
    ("https://admin:secret@bmc07.lab:443/", None, ("https://bmc07.lab:443", "bmc07.lab:443")),
    ("http://127.0.0.1:8000", None, ("http://127.0.0.1:8000", "127.0.0.1:8000")),
    ("fe80::1", None, ("https://[fe80::1]", "[fe80::1]")),
])
def test_base_url_drops_credentials_and_applies_the_port(address, port, expected):
    assert base_url(address, port) == expected


def test_base_url_rejects_other_schemes():
    with pytest.raises(BMCError) as info:
        base_url("ftp://bmc07")
    assert info.value.message == "redfish: bmc_address 'ftp://bmc07' is not a host name, address or http(s) URL"


# -- TLS ---------------------------------------------------------------------------------------------------------------

def test_self_signed_certificate_is_refused_by_default(tls_cert):
    with ReplayBMC("dmtf", tls=tls_cert) as bmc:
        client = client_for(bmc)
        with pytest.raises(BMCUnreachable) as info:
            client.open()
    assert info.value.message.startswith("redfish: the TLS certificate of %s could not be verified (" % bmc.address)
    assert "CERTIFICATE_VERIFY_FAILED" in info.value.message
    assert info.value.message.endswith("); give the BMC's CA certificate in ca_path, or set validate_certs=false")
    assert bmc.requests == []  # the handshake failed before any request was made


def test_ca_path_trusts_the_bmc_certificate(tls_cert):
    with ReplayBMC("dmtf", tls=tls_cert) as bmc:
        with client_for(bmc, ca_path=tls_cert[0]) as client:
            chassis = client.get("/redfish/v1/Chassis/1U")
        assert [call.method for call in bmc.requests] == ["GET", "POST", "GET", "DELETE"]
    assert chassis["Model"] == "3500RX"


def test_validate_certs_false_accepts_the_certificate(tls_cert):
    with ReplayBMC("dmtf", tls=tls_cert) as bmc:
        with client_for(bmc, validate_certs=False) as client:
            assert client.get(ROOT)["RedfishVersion"] == "1.15.0"


# -- paging, expand ----------------------------------------------------------------------------------------------------

def test_paging_follows_members_next_link():
    """The DGX capture names ?$skip=75 as the next page of its 134 PCIe devices: the service paged by 75."""
    with ReplayBMC("dgx", page_size=75) as bmc:
        with client_for(bmc, auth="basic") as client:
            members = client.members("/redfish/v1/Chassis/DGX/PCIeDevices")
        pages = [call.target for call in bmc.calls("GET")[1:]]
    assert pages == ["/redfish/v1/Chassis/DGX/PCIeDevices?$expand=.($levels=1)", "/redfish/v1/Chassis/DGX/PCIeDevices?$skip=75"]
    assert len(members) == 134
    assert members[0] == {"@odata.id": "/redfish/v1/Chassis/DGX/PCIeDevices/00_00_00"}
    assert [member["@odata.id"].rsplit("/", 1)[1] for member in members[74:76]] == ["00_5F_00", "00_60_00"]
    assert members[-1]["@odata.id"] == "/redfish/v1/Chassis/DGX/PCIeDevices/00_DF_00"


def test_paging_as_captured_lists_each_member_once():
    """Served as captured, the first page already holds all 134 members and still names ?$skip=75."""
    with ReplayBMC("dgx") as bmc:
        with client_for(bmc, auth="basic") as client:
            members = client.members("/redfish/v1/Chassis/DGX/PCIeDevices")
        assert [call.target for call in bmc.calls("GET")][-1] == "/redfish/v1/Chassis/DGX/PCIeDevices?$skip=75"
    assert len(members) == 134 == len(set(member["@odata.id"] for member in members))


def test_odata_next_link_of_the_dmtf_log_is_followed():
    with ReplayBMC("dmtf") as bmc:
        with client_for(bmc) as client:
            entries = client.members("/redfish/v1/Systems/437XR1138R2/LogServices/Log1/Entries", expand=False)
        assert [call.target for call in bmc.calls("GET")][-2:] == [
            "/redfish/v1/Systems/437XR1138R2/LogServices/Log1/Entries",
            "/redfish/v1/Systems/437XR1138R2/LogServices/Log1/Entries?$skiptoken=2"]
    assert [entry["Id"] for entry in entries] == ["1", "2"]


def test_expand_is_used_only_where_the_root_supports_it():
    def no_expand(root):
        root["ProtocolFeaturesSupported"]["ExpandQuery"]["Levels"] = False
        return root
    with ReplayBMC("dell") as bmc:
        with client_for(bmc) as client:
            members = client.members("/redfish/v1/Chassis/System.Embedded.1/PowerSubsystem/PowerSupplies")
        assert bmc.calls("GET")[-1].target.endswith("PowerSupplies?$expand=.($levels=1)")
    assert [member["SerialNumber"] for member in members] == ["PHARP0016L008V", "PHARP0016L008W"]
    with ReplayBMC("dell", edits={ROOT: no_expand}) as bmc:
        with client_for(bmc) as client:
            members = client.members("/redfish/v1/Chassis/System.Embedded.1/PowerSubsystem/PowerSupplies")
        assert bmc.calls("GET")[-1].target == "/redfish/v1/Chassis/System.Embedded.1/PowerSubsystem/PowerSupplies"
    assert members == [{"@odata.id": "/redfish/v1/Chassis/System.Embedded.1/PowerSubsystem/PowerSupplies/PSU.Slot.1"},
                       {"@odata.id": "/redfish/v1/Chassis/System.Embedded.1/PowerSubsystem/PowerSupplies/PSU.Slot.2"}]


@pytest.mark.parametrize("tree", sorted(TREES))
def test_every_captured_root_advertises_expand(tree):
    with open(os.path.join(FIXTURES, TREES[tree], "index.json")) as handle:
        assert expand_supported(json.load(handle)) is True


# -- task monitor ------------------------------------------------------------------------------------------------------

def test_task_monitor_is_polled_until_the_task_completes():
    sleeps = []
    with ReplayBMC("dmtf", task_polls=2) as bmc:
        with client_for(bmc) as client:
            response = client.post("/redfish/v1/Systems/437XR1138R2/Actions/ComputerSystem.Reset", {"ResetType": "ForceOff"})
            assert response.status == 202
            monitor = TaskMonitor(client, response.header("Location"), timeout=60, interval=0.25, sleep=sleeps.append)
            result = monitor.wait()
        polls = [call.target for call in bmc.calls("GET") if "TaskMonitors" in call.target]
    assert polls == ["/redfish/v1/TaskService/TaskMonitors/2"] * 3
    assert result == {"TaskState": "Completed", "TaskStatus": "OK", "Messages": []}
    assert sleeps == [0, 0]


def test_task_monitor_times_out_with_a_clear_error():
    ticks = iter(range(0, 1000, 10))
    with ReplayBMC("dmtf", task_polls=50) as bmc:
        with client_for(bmc) as client:
            response = client.post("/redfish/v1/Systems/437XR1138R2/Actions/ComputerSystem.Reset", {"ResetType": "On"})
            monitor = TaskMonitor(client, response.header("Location"), timeout=30, sleep=lambda _s: None,
                                  clock=lambda: next(ticks))
            with pytest.raises(BMCError) as info:
                monitor.wait()
    assert info.value.message == ("redfish: task /redfish/v1/TaskService/TaskMonitors/2 is still running after 30 s "
                                  "(state Running, 50% done)")
    assert monitor.polls == 3


def test_replay_server_refuses_unauthenticated_reads():
    """The server itself: without credentials only the service root is open."""
    with ReplayBMC("dmtf") as bmc:
        client = RedfishClient(bmc.address, sleep=lambda _s: None)
        with client:
            assert client.get(ROOT)["Id"] == "RootService"
            with pytest.raises(BMCAuthError) as info:
                client.get("/redfish/v1/Systems")
    assert info.value.message == ("redfish: authentication failed without credentials (HTTP 401 on GET /redfish/v1/Systems): "
                                  "Invalid credentials; check bmc_username and bmc_password")
    assert re.match(r"^http://127\.0\.0\.1:\d+$", bmc.address)
