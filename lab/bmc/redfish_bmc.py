"""One lab BMC: authentication, sessions and the stateful parts of a Redfish service over a faulted captured tree.

``Bmc.handle(method, target, headers, body) -> Reply`` is the whole service; lab/bmc/redfish_server.py puts it
behind HTTPS. What changes (power, BIOS settings, boot override — set on the system, or staged on its settings
object as DGX and GB200 take it —, cleared logs) lives in the node's state file, so
it survives a restart of the server; sessions live in memory (a BMC reboot ends them too). Standard library only.

Error bodies follow the DMTF ``redfish-error.v1_0_2`` schema (``{"error": {"code", "message",
"@Message.ExtendedInfo": [Message]}}``, http://redfish.dmtf.org/schemas/v1/redfish-error.v1_0_2.json) with
messages of the DMTF Base.1.16.0 registry (https://redfish.dmtf.org/registries/Base.1.16.0.json).
"""

import base64
import copy
import datetime
import hashlib
import hmac
import json
import os
import secrets
import sys
import threading
import time
from urllib.parse import parse_qs, unquote, urlsplit

try:
    from . import redfish_tree as rt
    from .redfish_messages import Reply, error
except ImportError:  # run as a script (python -I) or loaded by path
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import redfish_tree as rt
    from redfish_messages import Reply, error

# When a tree's Reset action names a @Redfish.ActionInfo that was not captured (DGX H100, GB200), these are
# allowed and the ActionInfo is served with them (ActionInfo schema shape, see README).
FALLBACK_RESET_TYPES = ("On", "ForceOff", "GracefulShutdown", "GracefulRestart", "ForceRestart", "PowerCycle", "Nmi")
# ComputerSystem schema enums, used when the tree gives no @Redfish.AllowableValues for the property.
BOOT_ENUMS = {
    "BootSourceOverrideTarget": ("None", "Pxe", "Floppy", "Cd", "Usb", "Hdd", "BiosSetup", "Utilities", "Diags", "UefiShell",
                                 "UefiTarget", "SDCard", "UefiHttp", "RemoteDrive", "UefiBootNext", "Recovery"),
    "BootSourceOverrideEnabled": ("Disabled", "Once", "Continuous"),
    "BootSourceOverrideMode": ("Legacy", "UEFI"),
}
SESSIONS = rt.ROOT + "/SessionService/Sessions"
STATE_SCHEMA = 1
# Query parameters the lab serves (Redfish spec DSP0266 "Query parameters"); another one starting with $ is 501,
# ``only`` and ``excerpt`` (Redfish-defined, not supported here) are 400, other names are ignored as the spec says.
QUERY_SUPPORTED = ("$expand", "$skip", "$skiptoken", "$top")
QUERY_REFUSED = ("only", "excerpt")
SCHEMAS = "http://redfish.dmtf.org/schemas/v1/"
ODATA = rt.ROOT + "/odata"
METADATA = rt.ROOT + "/$metadata"


def iso(epoch):
    return datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S+00:00")


def etag(doc):
    return '"%s"' % hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:16]


class Bmc:
    """A BMC over ``docs`` (a faulted tree). ``clock`` is injectable; ``power_delay_s`` is how long a power change
    spends in PoweringOn/PoweringOff (a restart: half in each); 0 makes changes immediate."""

    def __init__(self, node, tree, docs, username, password, state_file, power_delay_s=1.0, clock=time.time):
        self.node, self.tree, self.docs = node, tree, docs
        self._user, self._password = username, password
        self.state_file, self.delay, self.clock = state_file, float(power_delay_s), clock
        self.lock = threading.RLock()
        # called with the ISO time when a system finishes booting (the lab clears the node's power-cycle faults)
        self.on_boot = None
        self.sessions = {}  # id -> {"token", "user"}
        self.systems, self.reset_targets, self.allowed, self.action_infos = {}, {}, {}, {}
        self.settings = {}  # settings object path -> (system, bios)
        self.boot_settings = {}  # a system's own settings object (DGX .../SD, GB200 .../Settings) -> system
        for system in rt.systems(docs):
            action = docs[system]["Actions"]["#ComputerSystem.Reset"]
            self.reset_targets[rt.norm_path(action.get("target", system + "/Actions/ComputerSystem.Reset"))] = system
            self.allowed[system] = self._allowable(action)
            bios, settings = rt.bios_paths(docs, system)
            if settings:
                self.settings[settings] = (system, bios)
            self.systems[system] = bios
            staged = rt.link(docs[system], "@Redfish.Settings", "SettingsObject")
            if staged and staged not in docs and staged != settings:
                self.boot_settings[staged] = system
        self.clear_targets = {}
        for service, entries in rt.log_services(docs).items():
            target = docs[service]["Actions"]["#LogService.ClearLog"].get("target", service + "/Actions/LogService.ClearLog")
            self.clear_targets[rt.norm_path(target)] = (service, entries)
        self.has_sessions = rt.link(docs.get(rt.ROOT, {}), "SessionService") is not None
        self.state = self._load_state()

    # ------------------------------------------------------------------------------------------- state
    def _allowable(self, action):
        if isinstance(action.get("ResetType@Redfish.AllowableValues"), list):
            return list(action["ResetType@Redfish.AllowableValues"])
        info = action.get("@Redfish.ActionInfo")
        if isinstance(info, str) and rt.norm_path(info) in self.docs:
            for param in self.docs[rt.norm_path(info)].get("Parameters", []):
                if param.get("Name") == "ResetType" and isinstance(param.get("AllowableValues"), list):
                    return list(param["AllowableValues"])
        if isinstance(info, str):
            self.action_infos[rt.norm_path(info)] = list(FALLBACK_RESET_TYPES)
        return list(FALLBACK_RESET_TYPES)

    def _fresh_state(self):
        return {"schema": STATE_SCHEMA, "node": self.node, "tree": self.tree, "cleared_logs": {},
                "systems": {path: {"power_state": self.docs[path].get("PowerState") or "On", "transition": None,
                                   "bios_pending": {}, "bios_applied": {}, "boot": {}, "boot_pending": {},
                                   "last_reset": None}
                            for path in self.systems}}

    def _load_state(self):
        if not os.path.exists(self.state_file):
            state = self._fresh_state()
            self._save(state)
            return state
        try:
            with open(self.state_file, encoding="utf-8") as fh:
                state = json.load(fh)
        except (OSError, ValueError) as exc:
            raise rt.BmcLabError(f"bmc {self.node}: cannot read state file {self.state_file}: {exc}") from None
        if not isinstance(state, dict) or state.get("schema") != STATE_SCHEMA or state.get("tree") != self.tree \
                or set(state.get("systems", {})) != set(self.systems):
            raise rt.BmcLabError(f"bmc {self.node}: state file {self.state_file} is not a state of tree {self.tree} "
                                 f"(schema {STATE_SCHEMA}); delete it to start fresh")
        for sysstate in state["systems"].values():
            sysstate.setdefault("boot_pending", {})  # state files written before boot could be staged
        return state

    def _save(self, state=None):
        state = self.state if state is None else state
        tmp = "%s.tmp%d" % (self.state_file, os.getpid())
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(state, fh, indent=2, sort_keys=True)
            fh.write("\n")
        os.replace(tmp, self.state_file)

    def _settle(self):
        """Finish power transitions whose time has come (BIOS pending settings apply at the boot)."""
        now, changed = self.clock(), False
        for sysstate in self.state["systems"].values():
            trans = sysstate["transition"]
            if trans and now >= trans["phases"][-1][1]:
                self._finish(sysstate, trans)
                changed = True
        if changed:
            self._save()

    def _finish(self, sysstate, trans):
        sysstate["power_state"], sysstate["transition"] = trans["final"], None
        if trans["boot"]:
            sysstate["bios_applied"].update(sysstate["bios_pending"])
            sysstate["bios_pending"] = {}
            sysstate["boot"].update(sysstate["boot_pending"])  # a staged override is taken at this boot, and used by it
            sysstate["boot_pending"] = {}
            if sysstate["boot"].get("BootSourceOverrideEnabled") == "Once":
                sysstate["boot"]["BootSourceOverrideEnabled"] = "Disabled"
            sysstate["last_reset"] = iso(trans["phases"][-1][1])
            if self.on_boot is not None:
                self.on_boot(sysstate["last_reset"])

    def power_state(self, system):
        sysstate = self.state["systems"][system]
        trans, now = sysstate["transition"], self.clock()
        if trans:
            for name, until in trans["phases"]:
                if now < until:
                    return name
            return trans["final"]
        return sysstate["power_state"]

    # ----------------------------------------------------------------------------------------- requests
    def handle(self, method, target, headers, body):
        """One request -> Reply. ``headers`` needs a case-insensitive ``get`` (http.server's message has one)."""
        reply = self._handle(method, target, headers, body)
        path = rt.norm_path(unquote(urlsplit(target).path))
        if method in ("GET", "HEAD") and reply.status == 200 or reply.status == 405:
            # Allow on GET/HEAD and on 405, Cache-Control and the schema (Link rel=describedby): DSP0266 "Response
            # headers"
            reply.headers.setdefault("Allow", ", ".join(self.allowed_methods(path)))
            reply.headers.setdefault("Cache-Control", "no-cache")
            described = self._described_by(reply.body)
            if described and reply.status == 200:
                reply.headers.setdefault("Link", "<%s>; rel=describedby" % described)
        return reply

    def _handle(self, method, target, headers, body):
        parts = urlsplit(target)
        path, query = rt.norm_path(unquote(parts.path)), parse_qs(parts.query, keep_blank_values=True)
        if method == "HEAD":
            method = "GET"
        version = headers.get("OData-Version")
        if version is not None and version.strip() != "4.0":
            return Reply(412)  # DSP0266 "Request headers": an unsupported OData-Version is 412 Precondition Failed
        if method == "GET" and path == "/redfish":
            return Reply(200, {"v1": "/redfish/v1/"})
        # the OData service and metadata documents are open to anyone (DSP0266 "Service requests")
        if method == "GET" and path == ODATA:
            return Reply(200, self._odata_service())
        if method == "GET" and path == METADATA:
            return Reply(200, self._metadata(), content_type="application/xml;charset=utf-8")
        if method == "POST" and path == SESSIONS + "/Members":
            path = SESSIONS  # a POST to a collection's Members is a POST to the collection
        public = (method == "GET" and path == rt.ROOT) or (method == "POST" and path == SESSIONS and self.has_sessions)
        with self.lock:
            if not public and self.authenticate(headers) is None:
                return error(401, "NoValidSession", headers={"WWW-Authenticate": 'Basic realm="Redfish"'})
            self._settle()
            if method == "GET":
                for name in query:
                    if name in QUERY_SUPPORTED:
                        continue
                    if name.startswith("$"):
                        return error(501, "QueryNotSupported")
                    if name in QUERY_REFUSED:
                        return error(400, "QueryNotSupportedOnResource")
                return self._get(path, query)
            if method == "POST":
                return self._post(path, body)
            if method == "PATCH":
                return self._patch(path, headers, body)
            if method == "DELETE" and self.has_sessions and path.startswith(SESSIONS + "/"):
                return self._delete_session(path)
            return error(405, "OperationNotAllowed")

    def allowed_methods(self, path):
        """The methods ``path`` takes (the Allow header)."""
        methods = ["GET", "HEAD"]
        if path in self.reset_targets or path in self.clear_targets or (self.has_sessions and path == SESSIONS):
            methods = ["POST"]
        if path in self.settings or path in self.systems or path in self.boot_settings:
            methods.append("PATCH")
        if self.has_sessions and path.startswith(SESSIONS + "/"):
            methods.append("DELETE")
        return methods

    @staticmethod
    def _described_by(body):
        """The DMTF JSON schema of a resource, from its ``@odata.type`` (``#Chassis.v1_14_0.Chassis``)."""
        kind = body.get("@odata.type") if isinstance(body, dict) else None
        if not isinstance(kind, str) or not kind.startswith("#") or "." not in kind:
            return None
        namespace = kind[1:].rsplit(".", 1)[0]
        return SCHEMAS + namespace + ".json"

    def _odata_service(self):
        """The OData service document: the service root and each resource the root links to (DSP0266)."""
        root = self.docs.get(rt.ROOT, {})
        value = [{"name": "Service", "kind": "Singleton", "url": rt.ROOT + "/"}]
        for name, item in sorted(root.items()):
            if isinstance(item, dict) and isinstance(item.get("@odata.id"), str) and name != "Links":
                value.append({"name": name, "kind": "Singleton", "url": item["@odata.id"]})
        return {"@odata.context": METADATA, "value": value}

    def _metadata(self):
        """The OData metadata document (CSDL): a reference to the DMTF schema of every type the tree serves and
        the service's EntityContainer, extending the ServiceRoot's."""
        namespaces = {}
        for doc in self.docs.values():
            kind = doc.get("@odata.type") if isinstance(doc, dict) else None
            if isinstance(kind, str) and kind.startswith("#") and kind.count(".") >= 1:
                versioned = kind[1:].rsplit(".", 1)[0]
                family = versioned.split(".", 1)[0]
                namespaces.setdefault(family, set()).update({family, versioned})
        root_type = self.docs.get(rt.ROOT, {}).get("@odata.type", "#ServiceRoot.v1_0_0.ServiceRoot")
        container = root_type[1:].rsplit(".", 1)[0] + ".ServiceContainer"
        lines = ['<?xml version="1.0" encoding="UTF-8"?>',
                 '<edmx:Edmx xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx" Version="4.0">']
        for family in sorted(namespaces):
            lines.append('  <edmx:Reference Uri="%s%s_v1.xml">' % (SCHEMAS, family))
            lines.extend('    <edmx:Include Namespace="%s"/>' % name for name in sorted(namespaces[family]))
            lines.append("  </edmx:Reference>")
        lines += ["  <edmx:DataServices>",
                  '    <Schema xmlns="http://docs.oasis-open.org/odata/ns/edm" Namespace="Service">',
                  '      <EntityContainer Name="Service" Extends="%s"/>' % container,
                  "    </Schema>", "  </edmx:DataServices>", "</edmx:Edmx>", ""]
        return "\n".join(lines).encode("utf-8")

    def authenticate(self, headers):
        token = headers.get("X-Auth-Token")
        if token:
            for sess in self.sessions.values():
                if hmac.compare_digest(sess["token"].encode(), token.encode()):
                    return sess["user"]
        auth = headers.get("Authorization") or ""
        if auth[:6].lower() == "basic ":
            try:
                user, _, password = base64.b64decode(auth[6:].strip(), validate=True).decode("utf-8").partition(":")
            except (ValueError, UnicodeDecodeError):
                return None
            if self.credentials_ok(user, password):
                return user
        return None

    def credentials_ok(self, user, password):
        return hmac.compare_digest(user.encode(), self._user.encode()) & hmac.compare_digest(password.encode(), self._password.encode())

    def _json(self, body):
        try:
            data = json.loads(body.decode("utf-8") if body else "{}")
        except (ValueError, UnicodeDecodeError):
            return None
        return data if isinstance(data, dict) else None

    # ---------------------------------------------------------------------------------------------- GET
    def _get(self, path, query):
        doc = self.render(path)
        if doc is None:
            return error(404, "InvalidURI", path)
        expand = (query.get("$expand") or [""])[0].split("(", 1)[0]
        if expand in (".", "*", "~"):
            doc = self._expand(doc, expand)
        if isinstance(doc.get("Members"), list):
            paging = {}
            for name in ("$skip", "$skiptoken", "$top"):
                if name in query:
                    value = query[name][0]
                    if not value.isdigit():
                        return error(400, "QueryParameterValueTypeError", value, name)
                    paging[name] = int(value)
            if paging:
                members = doc["Members"]
                start = paging.get("$skip", paging.get("$skiptoken", 0))
                end = start + paging["$top"] if "$top" in paging else len(members)
                doc["Members"] = members[start:end]
                doc.pop("Members@odata.nextLink", None)
                doc.pop("@odata.nextLink", None)  # the DMTF mockup's spelling
                if end < len(members):
                    doc["Members@odata.nextLink"] = f"{path}?$skip={end}" + (f"&$top={paging['$top']}" if "$top" in paging else "")
        return Reply(200, doc, {"ETag": etag(doc)})

    def render(self, path):
        """The resource as a client sees it now (a copy), or None."""
        if self.has_sessions and (path == rt.ROOT + "/SessionService" or path == SESSIONS or path.startswith(SESSIONS + "/")):
            return self._session_doc(path)
        if path in self.action_infos:
            return {"@odata.id": path, "@odata.type": "#ActionInfo.v1_1_2.ActionInfo", "Id": rt.last_segment(path),
                    "Name": "Reset Action Info", "Parameters": [{"Name": "ResetType", "Required": True, "DataType": "String",
                                                                 "AllowableValues": list(self.action_infos[path])}]}
        if path in self.settings:
            system, bios = self.settings[path]
            doc = {"@odata.id": path, "@odata.type": self.docs[bios].get("@odata.type"), "Id": "Settings",
                   "Name": "BIOS Configuration Pending Settings"}
            if "AttributeRegistry" in self.docs[bios]:
                doc["AttributeRegistry"] = self.docs[bios]["AttributeRegistry"]
            doc["Attributes"] = dict(self.state["systems"][system]["bios_pending"])
            return doc
        if path in self.boot_settings:
            system = self.boot_settings[path]
            return {"@odata.id": path, "@odata.type": self.docs[system].get("@odata.type"), "Id": rt.last_segment(path),
                    "Name": "System Pending Settings", "Boot": dict(self.state["systems"][system]["boot_pending"])}
        for service, entries in self.clear_targets.values():
            if path.startswith(entries + "/") and service in self.state["cleared_logs"]:
                return None
        if path in self.docs:
            doc = copy.deepcopy(self.docs[path])
        else:
            parent = self.render(path.rsplit("/", 1)[0]) if path.startswith(rt.ROOT + "/") else None
            found = [m for m in (parent or {}).get("Members", []) if isinstance(m, dict) and len(m) > 1
                     and rt.norm_path(m.get("@odata.id", "")) == path]
            return copy.deepcopy(found[0]) if found else None
        self._overlay(path, doc)
        return doc

    def _overlay(self, path, doc):
        if path in self.systems:
            sysstate = self.state["systems"][path]
            doc["PowerState"] = self.power_state(path)
            if sysstate["boot"] and isinstance(doc.get("Boot"), dict):
                doc["Boot"].update(sysstate["boot"])
            if sysstate["last_reset"] and "LastResetTime" in doc:
                doc["LastResetTime"] = sysstate["last_reset"]
        for system, bios in self.systems.items():
            if path == bios and isinstance(doc.get("Attributes"), dict):
                doc["Attributes"].update(self.state["systems"][system]["bios_applied"])
            chassis = [rt.norm_path(c.get("@odata.id", "")) for c in self.docs[system].get("Links", {}).get("Chassis", [])]
            if path in chassis and "PowerState" in doc:
                doc["PowerState"] = self.power_state(system)
        for service, entries in self.clear_targets.values():
            if path == entries and service in self.state["cleared_logs"]:
                doc["Members"], doc["Members@odata.count"] = [], 0
                doc.pop("Members@odata.nextLink", None)
                doc.pop("@odata.nextLink", None)

    def _expand(self, doc, mode):
        def visit(value, in_links):
            if isinstance(value, dict):
                ref = value.get("@odata.id")
                if len(value) == 1 and isinstance(ref, str) and "#" not in ref and (mode == "*" or (mode == ".") != in_links):
                    return self.render(rt.norm_path(ref)) or value
                return {key: visit(item, in_links or key == "Links") for key, item in value.items()}
            if isinstance(value, list):
                return [visit(item, in_links) for item in value]
            return value
        return {key: (visit(item, key == "Links") if key != "@odata.id" else item) for key, item in doc.items()}

    # ----------------------------------------------------------------------------------------- sessions
    def _session_doc(self, path):
        if path == rt.ROOT + "/SessionService":
            # Shape of the DMTF public-rackmount1 mockup's SessionService (SessionTimeout is not enforced here).
            return {"@odata.id": path, "@odata.type": "#SessionService.v1_1_8.SessionService", "Id": "SessionService",
                    "Name": "Session Service", "Description": "Session Service", "Status": {"State": "Enabled", "Health": "OK"},
                    "ServiceEnabled": True, "SessionTimeout": 30, "Sessions": {"@odata.id": SESSIONS}}
        if path == SESSIONS:
            members = [{"@odata.id": f"{SESSIONS}/{sid}"} for sid in sorted(self.sessions)]
            return {"@odata.id": SESSIONS, "@odata.type": "#SessionCollection.SessionCollection", "Name": "Session Collection",
                    "Members@odata.count": len(members), "Members": members}
        sid = path[len(SESSIONS) + 1:]
        if sid not in self.sessions:
            return None
        return {"@odata.id": path, "@odata.type": "#Session.v1_6_0.Session", "Id": sid, "Name": "User Session",
                "Description": "Manager User Session", "UserName": self.sessions[sid]["user"]}

    def _create_session(self, body):
        data = self._json(body)
        if data is None:
            return error(400, "MalformedJSON")
        for name in ("UserName", "Password"):
            if not isinstance(data.get(name), str):
                return error(400, "PropertyMissing", name)
        if not self.credentials_ok(data["UserName"], data["Password"]):
            return error(401, "ResourceAtUriUnauthorized", SESSIONS, "Invalid username or password")
        sid = secrets.token_hex(8).upper()
        self.sessions[sid] = {"token": secrets.token_hex(16), "user": data["UserName"]}
        return Reply(201, self._session_doc(f"{SESSIONS}/{sid}"),
                     {"Location": f"{SESSIONS}/{sid}", "X-Auth-Token": self.sessions[sid]["token"]})

    def _delete_session(self, path):
        sid = path[len(SESSIONS) + 1:]
        if sid not in self.sessions:
            return error(404, "InvalidURI", path)
        del self.sessions[sid]
        return Reply(204)

    # --------------------------------------------------------------------------------------------- POST
    def _post(self, path, body):
        if self.has_sessions and path == SESSIONS:
            return self._create_session(body)
        if path in self.reset_targets:
            return self._reset(self.reset_targets[path], body)
        if path in self.clear_targets:
            if self._json(body) is None:
                return error(400, "MalformedJSON")
            self.state["cleared_logs"][self.clear_targets[path][0]] = iso(self.clock())
            self._save()
            return Reply(204)
        return error(405, "OperationNotAllowed")

    def _reset(self, system, body):
        data = self._json(body)
        if data is None:
            return error(400, "MalformedJSON")
        kind = data.get("ResetType")
        if kind is None:
            return error(400, "ActionParameterMissing", "ComputerSystem.Reset", "ResetType")
        if kind not in self.allowed[system]:
            return error(400, "ActionParameterValueNotInList", kind, "ResetType", "ComputerSystem.Reset")
        sysstate = self.state["systems"][system]
        if sysstate["transition"]:
            return error(409, "ResourceInUse")
        now, delay, on = self.clock(), self.delay, sysstate["power_state"] == "On"
        if kind == "PushPowerButton":
            kind = "GracefulShutdown" if on else "On"
        restart = kind in ("GracefulRestart", "ForceRestart", "PowerCycle")
        if (kind in ("On", "ForceOn") or restart) and not on:
            trans = {"phases": [["PoweringOn", now + delay]], "final": "On", "boot": True}
        elif restart:
            trans = {"phases": [["PoweringOff", now + delay / 2], ["PoweringOn", now + delay]], "final": "On", "boot": True}
        elif kind in ("ForceOff", "GracefulShutdown") and on:
            trans = {"phases": [["PoweringOff", now + delay]], "final": "Off", "boot": False}
        else:  # Nmi, or already in the asked state: nothing changes
            return Reply(204)
        if delay > 0:
            sysstate["transition"] = trans
        else:
            self._finish(sysstate, trans)
        self._save()
        return Reply(204)

    # -------------------------------------------------------------------------------------------- PATCH
    def _patch(self, path, headers, body):
        if path not in self.settings and path not in self.systems and path not in self.boot_settings:
            return error(405, "OperationNotAllowed")
        match = headers.get("If-Match")
        if match and match.strip() != "*" and match.strip() != etag(self.render(path)):
            return error(412, "PreconditionFailed")
        data = self._json(body)
        if data is None:
            return error(400, "MalformedJSON")
        if not data:
            return error(400, "EmptyJSON")
        if path in self.settings:
            reply = self._patch_bios(path, data)
        elif path in self.boot_settings:
            reply = self._patch_boot(self.boot_settings[path], data, staged=True)
        else:
            reply = self._patch_boot(path, data)
        if reply is not None:
            return reply
        self._save()
        doc = self.render(path)
        return Reply(200, doc, {"ETag": etag(doc)})

    def _patch_bios(self, path, data):
        system, bios = self.settings[path]
        for key in data:
            if key not in ("Attributes", "@Redfish.SettingsApplyTime"):
                return error(400, "PropertyUnknown", key)
        attrs, current = data.get("Attributes"), self.docs[bios].get("Attributes", {})
        if not isinstance(attrs, dict):
            return error(400, "PropertyValueTypeError", json.dumps(attrs), "Attributes")
        if not attrs:
            return error(400, "EmptyJSON")
        for name, value in attrs.items():
            if name not in current:
                return error(400, "PropertyUnknown", name)
            if not rt.same_json_type(current[name], value) or isinstance(value, (dict, list)):
                return error(400, "PropertyValueTypeError", json.dumps(value), name)
        self.state["systems"][system]["bios_pending"].update(attrs)
        return None

    def _patch_boot(self, system, data, staged=False):
        """``Boot`` set on the system, or with ``staged`` held on its settings object until the next boot."""
        doc = self.docs[system]
        for key in data:
            if key != "Boot":
                return error(400, "PropertyNotWritable" if key in doc else "PropertyUnknown", key)
        boot, captured = data["Boot"], doc.get("Boot")
        if not isinstance(boot, dict) or not isinstance(captured, dict):
            return error(400, "PropertyValueTypeError", json.dumps(boot), "Boot")
        for key, value in boot.items():
            if key not in BOOT_ENUMS or key not in captured:
                return error(400, "PropertyNotWritable" if key in captured else "PropertyUnknown", "Boot/" + key)
            if not isinstance(value, str):
                return error(400, "PropertyValueTypeError", json.dumps(value), key)
            allowed = captured.get(key + "@Redfish.AllowableValues") or BOOT_ENUMS[key]
            if value not in allowed:
                return error(400, "PropertyValueNotInList", value, key)
        self.state["systems"][system]["boot_pending" if staged else "boot"].update(boot)
        return None
