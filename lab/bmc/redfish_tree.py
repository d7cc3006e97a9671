"""Captured Redfish trees as the lab's BMCs serve them: loading, what a tree holds, and the fault edits.

A tree is ``tests/fixtures/redfish/<name>/`` in the captured ``<path>/index.json`` layout rooted at
``/redfish/v1``; it loads as ``{"/redfish/v1/...": document}``. Faults are value edits on those documents
(made once, when the lab's Redfish server starts); nothing here invents a resource shape. Standard library only.
"""

import copy
import json
import os
import re
import sys

_SIM_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "sim")
if _SIM_DIR not in sys.path:
    sys.path.insert(0, _SIM_DIR)
import _common  # noqa: E402  (the lab's shared fault format)

FIXTURES_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                            "tests", "fixtures", "redfish")
ROOT = "/redfish/v1"


def _corpus_trees(fixtures_dir):
    """Every captured tree of the corpus folder (a sub-folder with a root ``index.json``), sorted: the lab can serve
    any of them, so a scenario can meet a mixed fleet as a site does (issue 22 item 8)."""
    try:
        names = os.listdir(fixtures_dir)
    except OSError:
        return ()
    return tuple(sorted(n for n in names if os.path.isfile(os.path.join(fixtures_dir, n, "index.json"))))


TREES = _corpus_trees(FIXTURES_DIR)

# Resource.State values of the Redfish Resource schema (Resource.v1_x "State" enum).
RESOURCE_STATES = ("Enabled", "Disabled", "StandbyOffline", "StandbySpare", "InTest", "Starting", "Absent",
                   "UnavailableOffline", "Deferring", "Quiesced", "Updating", "Qualified", "Degraded")

# kind -> {param: type or (type, default)}, the lab/sim/_common.py convention. `object` = any JSON scalar.
FAULT_KINDS = {
    "bmc_down": {},
    "bmc_bad_credentials": {},
    "psu_failed": {"id": (str, ""), "state": (str, "UnavailableOffline")},
    "sel_critical": {"message": (str, ""), "log": (str, "")},
    "old_firmware": {"component": str, "version": (str, "")},
    "bios_off": {"attribute": str, "value": object},
    "gpu_missing_bmc": {"id": (str, "")},
}


class BmcLabError(ValueError):
    """A BMC lab configuration or fault that cannot be honoured, with a message naming what is wrong."""


# ----------------------------------------------------------------------------------------------- loading

def norm_path(path):
    """``/redfish/v1/`` -> ``/redfish/v1``; no query, no trailing slash."""
    path = path.split("?", 1)[0].split("#", 1)[0]
    while len(path) > 1 and path.endswith("/"):
        path = path[:-1]
    return path


_LOADED = {}


def load_tree(name, fixtures_dir=FIXTURES_DIR):
    """``{path: document}`` for every ``index.json`` of the named tree (read once per process: do not modify it;
    ``apply_faults`` returns a copy)."""
    if (name, fixtures_dir) not in _LOADED:
        _LOADED[(name, fixtures_dir)] = _read_tree(name, fixtures_dir)
    return _LOADED[(name, fixtures_dir)]


def _read_tree(name, fixtures_dir):
    if name not in TREES:
        raise BmcLabError(f"unknown Redfish tree {name!r}; known trees: {', '.join(TREES)}")
    base = os.path.join(fixtures_dir, name)
    if not os.path.isfile(os.path.join(base, "index.json")):
        raise BmcLabError(f"Redfish tree {name!r} not found (looked for {base}/index.json)")
    docs = {}
    for dirpath, _dirs, files in os.walk(base):
        if "index.json" not in files:
            continue
        rel = os.path.relpath(dirpath, base)
        path = ROOT if rel == "." else ROOT + "/" + rel.replace(os.sep, "/")
        with open(os.path.join(dirpath, "index.json"), encoding="utf-8") as fh:
            try:
                docs[path] = json.load(fh)
            except ValueError as exc:
                raise BmcLabError(f"Redfish tree {name!r}: {path}/index.json is not JSON: {exc}") from None
    return docs


def link(doc, *keys):
    """``doc[k1][k2]...["@odata.id"]`` normalized, or None."""
    for key in keys:
        if not isinstance(doc, dict):
            return None
        doc = doc.get(key)
    if isinstance(doc, dict) and isinstance(doc.get("@odata.id"), str):
        return norm_path(doc["@odata.id"])
    return None


def odata_type(doc):
    return doc.get("@odata.type", "") if isinstance(doc, dict) else ""


def member_ids(doc):
    return [norm_path(m["@odata.id"]) for m in doc.get("Members", []) if isinstance(m, dict) and "@odata.id" in m]


def last_segment(path):
    return path.rsplit("/", 1)[-1]


# ------------------------------------------------------------------------------------ what a tree holds

def systems(docs):
    """ComputerSystems that carry a ``#ComputerSystem.Reset`` action (the host), in path order."""
    return [path for path in sorted(docs)
            if "#ComputerSystem." in odata_type(docs[path]) and "#ComputerSystem.Reset" in docs[path].get("Actions", {})]


def bios_paths(docs, system):
    """(Bios path, settings object path) of a system, each None when the tree does not hold it."""
    bios = link(docs[system], "Bios")
    if bios is None or bios not in docs:
        return None, None
    return bios, link(docs[bios], "@Redfish.Settings", "SettingsObject")


def log_services(docs):
    """LogService path -> entries collection path, for every LogService with a ClearLog action and Entries."""
    out = {}
    for path, doc in docs.items():
        if "#LogService." in odata_type(doc) and "#LogService.ClearLog" in doc.get("Actions", {}):
            entries = link(doc, "Entries")
            if entries is not None:
                out[path] = entries
    return dict(sorted(out.items()))


def sel_service(docs):
    """The tree's SEL: a LogService with LogEntryType SEL; else one whose entries are SEL entries; else the first
    LogService (path order) with a ClearLog action and a non-empty captured Entries collection."""
    services = log_services(docs)
    for path in services:
        if docs[path].get("LogEntryType") == "SEL":
            return path
    for path, entries in services.items():
        if any(m.get("EntryType") == "SEL" for m in _entries(docs, entries)):
            return path
    for path, entries in services.items():
        if _entries(docs, entries):
            return path
    return None


def _entries(docs, entries):
    """Full LogEntry bodies of a collection: expanded members, or the member resources captured as files."""
    out = []
    for member in docs.get(entries, {}).get("Members", []):
        if len(member) > 1:
            out.append(member)
        elif norm_path(member.get("@odata.id", "")) in docs:
            out.append(docs[norm_path(member["@odata.id"])])
    return out


def firmware_inventory(docs):
    """The FirmwareInventory collection path named by the UpdateService, or None."""
    update = link(docs.get(ROOT, {}), "UpdateService")
    return link(docs[update], "FirmwareInventory") if update in docs else None


def gpu_processors(docs):
    """[(collection path, processor path)] for every captured Processor whose ProcessorType is GPU."""
    out = []
    for path in sorted(docs):
        if odata_type(docs[path]).startswith("#ProcessorCollection."):
            for member in member_ids(docs[path]):
                if docs.get(member, {}).get("ProcessorType") == "GPU":
                    out.append((path, member))
    return out


def power_supplies(docs):
    """[(collection path, power supply path)] for every captured PowerSupply of a PowerSubsystem."""
    out = []
    for path in sorted(docs):
        if odata_type(docs[path]).startswith("#PowerSupplyCollection."):
            out.extend((path, member) for member in member_ids(docs[path]) if member in docs)
    return out


def describe(docs):
    """What a client needs to know about a (faulted) tree: the paths of the stateful parts."""
    out = {"systems": []}
    for system in systems(docs):
        bios, settings = bios_paths(docs, system)
        out["systems"].append({"path": system,
                               "reset_target": docs[system]["Actions"]["#ComputerSystem.Reset"].get("target"),
                               "bios": bios, "bios_settings": settings})
    sel = sel_service(docs)
    out["sel"] = sel
    out["sel_clear_target"] = docs[sel]["Actions"]["#LogService.ClearLog"].get("target") if sel else None
    out["sel_entries"] = log_services(docs).get(sel)
    out["firmware_inventory"] = firmware_inventory(docs)
    out["gpus"] = [gpu for _coll, gpu in gpu_processors(docs)]
    out["power_supplies"] = [psu for _coll, psu in power_supplies(docs)]
    return out


# ------------------------------------------------------------------------------------------------ faults

def normalize_fault(fault, where):
    """``{"kind": ..., **params}`` with defaults filled in; a bare string names a kind (lab/sim/_common.py)."""
    try:
        return _common.normalize_fault(fault, FAULT_KINDS, where)
    except _common.LabError as exc:
        raise BmcLabError(str(exc)) from None


def normalize_faults(faults, where="faults"):
    if faults is None:
        return []
    if not isinstance(faults, list):
        raise BmcLabError(f"{where}: must be a list, got {type(faults).__name__}")
    return [normalize_fault(fault, f"{where}[{i}]") for i, fault in enumerate(faults)]


def apply_faults(docs, tree, faults, started, where="faults"):
    """A faulted deep copy of ``docs``. ``started`` (an ISO time) stamps injected log entries."""
    docs = copy.deepcopy(docs)
    for i, fault in enumerate(normalize_faults(faults, where)):
        edit = _EDITS.get(fault["kind"])
        if edit is not None:
            try:
                edit(docs, fault, started)
            except BmcLabError as exc:
                raise BmcLabError(f"{where}[{i}]: {fault['kind']}: tree {tree}: {exc}") from None
    return docs


def _pick(candidates, wanted, docs, what):
    """The candidate path whose last segment or Id is ``wanted``; without ``wanted``, None (caller's default)."""
    for path in candidates:
        if wanted in (last_segment(path), docs[path].get("Id")):
            return path
    names = ", ".join(sorted(last_segment(path) for path in candidates)) or "none"
    raise BmcLabError(f"no {what} {wanted!r}; the tree has: {names}")


def _fail_psu(docs, fault, _started):
    psus = power_supplies(docs)
    if not psus:
        raise BmcLabError("no PowerSupply resource (its PowerSupplies collection is empty or was not captured)")
    if fault["state"] not in RESOURCE_STATES:
        raise BmcLabError(f"state {fault['state']!r} is not a Resource.State value ({', '.join(RESOURCE_STATES)})")
    paths = [psu for _coll, psu in psus]
    if fault["id"]:
        path = _pick(paths, fault["id"], docs, "PowerSupply")
    else:
        present = [p for p in paths if (docs[p].get("Status") or {}).get("State") != "Absent"]
        if not present:
            raise BmcLabError("every PowerSupply is Absent")
        path = present[0]
    _set_failed(docs[path], fault["state"])
    # The same supply in the older Power resource: PowerSupplies[i], i = its place in the PowerSubsystem collection.
    coll = [c for c, p in psus if p == path][0]
    index = member_ids(docs[coll]).index(path)
    power = docs.get(coll.rsplit("/PowerSubsystem/", 1)[0] + "/Power")
    if power and index < len(power.get("PowerSupplies", [])):
        _set_failed(power["PowerSupplies"][index], fault["state"])


def _set_failed(doc, state):
    status = doc.setdefault("Status", {})
    status["Health"] = "Critical"
    status["State"] = state
    if "HealthRollup" in status:
        status["HealthRollup"] = "Critical"


def _add_critical_entry(docs, fault, started):
    services = log_services(docs)
    if fault["log"]:
        service = _pick(list(services), fault["log"], docs, "LogService with a ClearLog action")
    else:
        service = sel_service(docs)
    if service is None:
        raise BmcLabError("no LogService with a ClearLog action and captured entries")
    coll_path = services[service]
    coll = docs.get(coll_path)
    template = _entries(docs, coll_path) if coll else []
    if not template:
        raise BmcLabError(f"{coll_path} holds no captured entry to copy")
    ids = [m.get("Id") for m in template]
    numeric = [int(i) for i in ids if isinstance(i, str) and i.isdigit()]
    src = max(template, key=lambda m: int(m["Id"])) if numeric and len(numeric) == len(ids) else template[-1]
    old_id = str(src.get("Id"))
    new_id = str(max(numeric) + 1) if numeric else "lab-1"
    entry = copy.deepcopy(src)
    entry.pop("@Redfish.Copyright", None)
    entry["@odata.id"] = f"{coll_path}/{new_id}"
    entry["Id"] = new_id
    for key in ("Name", "Description"):
        if isinstance(entry.get(key), str):
            entry[key] = re.sub(r"\b%s\b" % re.escape(old_id), new_id, entry[key])
    if isinstance(entry.get("AdditionalDataURI"), str):
        entry["AdditionalDataURI"] = entry["AdditionalDataURI"].replace(f"/{old_id}/", f"/{new_id}/")
    entry["Severity"] = "Critical"
    entry["Created"] = started
    if "EventTimestamp" in entry:
        entry["EventTimestamp"] = started
    if fault["message"]:
        entry["Message"] = fault["message"]
    members = coll["Members"]
    expanded = any(len(m) > 1 for m in members)
    order = [last_segment(norm_path(m.get("@odata.id", ""))) for m in members]
    descending = len(order) > 1 and all(i.isdigit() for i in order) and int(order[0]) > int(order[-1])
    item = entry if expanded else {"@odata.id": entry["@odata.id"]}
    if descending:
        members.insert(0, item)
    else:
        members.append(item)
    coll["Members@odata.count"] = len(members)
    if not expanded or norm_path(src.get("@odata.id", "")) in docs:  # the entries are also resources of their own
        docs[entry["@odata.id"]] = entry


def older_version(version):
    """The version with its last non-zero run of digits lowered by one (width kept): 1.8.2 -> 1.8.1,
    GB200Nvl-24.12-8 -> GB200Nvl-24.12-7, 2.7.20 -> 2.7.19."""
    runs = list(re.finditer(r"\d+", version))
    for match in reversed(runs):
        value = int(match.group())
        if value > 0:
            text = str(value - 1).zfill(len(match.group())) if match.group().startswith("0") else str(value - 1)
            return version[:match.start()] + text + version[match.end():]
    return None


def _old_firmware(docs, fault, _started):
    inventory = firmware_inventory(docs)
    if inventory is None or inventory not in docs:
        raise BmcLabError("no UpdateService FirmwareInventory collection")
    members = [m for m in member_ids(docs[inventory]) if m in docs]
    path = _pick(members, fault["component"], docs, "FirmwareInventory component")
    old = docs[path].get("Version")
    if not isinstance(old, str):
        raise BmcLabError(f"{path} has no Version string")
    new = fault["version"] or older_version(old)
    if new is None:
        raise BmcLabError(f"cannot derive a version older than {old!r}; give 'version'")
    if new == old:
        raise BmcLabError(f"version {new!r} is the captured version")
    docs[path]["Version"] = new
    # Vendor summaries of the inventory that repeat the version (AMI: Oem.Ami.FirmwareInventory[].DataSourceUri).
    for item in _walk(docs[inventory]):
        if norm_path(str(item.get("DataSourceUri", ""))) == path and item.get("Version") == old:
            item["Version"] = new


def _walk(value):
    if isinstance(value, dict):
        yield value
        for item in value.values():
            yield from _walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item)


def _bios_off(docs, fault, _started):
    found = [bios_paths(docs, system)[0] for system in systems(docs)]
    found = [bios for bios in found if bios is not None and isinstance(docs[bios].get("Attributes"), dict)]
    if not found:
        raise BmcLabError("no Bios resource with Attributes")
    attrs = docs[found[0]]["Attributes"]
    name, value = fault["attribute"], fault["value"]
    if name not in attrs:
        raise BmcLabError(f"attribute {name!r} is not in {found[0]} Attributes ({len(attrs)} attributes)")
    if not same_json_type(attrs[name], value):
        raise BmcLabError(f"attribute {name!r} is {json.dumps(attrs[name])} in the capture; {value!r} is not of that type")
    if attrs[name] == value:
        raise BmcLabError(f"attribute {name!r} is already {json.dumps(value)} in the capture")
    attrs[name] = value


def same_json_type(old, new):
    """Whether ``new`` may replace ``old`` (booleans are not numbers; ints may become floats and back)."""
    if isinstance(old, bool) or isinstance(new, bool):
        return isinstance(old, bool) and isinstance(new, bool)
    if isinstance(old, (int, float)):
        return isinstance(new, (int, float))
    if old is None:
        return True
    return isinstance(new, type(old))


def _gpu_missing(docs, fault, _started):
    gpus = gpu_processors(docs)
    if not gpus:
        raise BmcLabError("no Processor with ProcessorType GPU")
    paths = [gpu for _coll, gpu in gpus]
    path = _pick(paths, fault["id"], docs, "GPU Processor") if fault["id"] else paths[-1]
    coll = [c for c, g in gpus if g == path][0]
    docs[coll]["Members"] = [m for m in docs[coll]["Members"] if norm_path(m.get("@odata.id", "")) != path]
    docs[coll]["Members@odata.count"] = len(docs[coll]["Members"])
    for sub in [p for p in docs if p == path or p.startswith(path + "/")]:
        del docs[sub]


# ------------------------------------------------------------------------------------------------ identity

# Serial numbers the captures hold that are no identity (left as they are: every real node shows them alike).
_NO_SERIAL = re.compile(r"^(.)\1*$|^(N/?A|NONE|UNKNOWN|NOT ?SPECIFIED|TO BE FILLED BY O\.E\.M\.|DEFAULT STRING|"
                        r"0?123456789(0|0123456789AB)?|.*SERIAL ?NUMBER)$", re.IGNORECASE)


def node_serial(serial, index):
    """The serial number a lab node with ``index`` shows for a captured ``serial``: the capture's with the node's
    index appended as 3 digits (``1662923610124`` -> ``1662923610124007`` on node 7; trailing blanks kept). One
    tree served to several nodes then gives each node its own serials, as real nodes have; two serials that
    differ in the capture still differ. Placeholders (empty, ``N/A``, one character repeated) and values shorter
    than 4 characters are kept as captured."""
    if not isinstance(serial, str):
        return serial
    core = serial.rstrip()
    if len(core.strip()) < 4 or _NO_SERIAL.match(core.strip()):
        return serial
    return f"{core}{index:03d}{serial[len(core):]}"


def set_identity(docs, index):
    """Every ``SerialNumber`` of ``docs`` made the node's own (``node_serial``): the system, chassis, GPUs, DIMMs,
    drives, PSUs, wherever the tree keeps one (OEM sections too). Edits ``docs`` in place (give it the copy
    ``apply_faults`` returns, never ``load_tree``'s) and returns it."""
    for document in docs.values():
        for item in _walk(document):
            if isinstance(item.get("SerialNumber"), str):
                item["SerialNumber"] = node_serial(item["SerialNumber"], index)
    return docs


_EDITS = {
    "psu_failed": _fail_psu,
    "sel_critical": _add_critical_entry,
    "old_firmware": _old_firmware,
    "bios_off": _bios_off,
    "gpu_missing_bmc": _gpu_missing,
}
