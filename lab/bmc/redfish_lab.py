"""Start and stop the lab's Redfish BMCs (lab/bmc/redfish_server.py) for a lab run directory.

    start(run_dir, bmcs, power_delay_s=1.0, timeout=30) -> {node: {"address", "port", "username", "password", "ca_path"}}
    endpoints(run_dir)  -> the same mapping, read back from the config of a started lab
    restart(run_dir, timeout=30) -> the same mapping (same ports, credentials, CA; state files kept)
    running(run_dir)    -> the server's pid, or None
    stop(run_dir, timeout=10) -> True if a server was stopped

``bmcs`` is ``[{"node": str, "tree": one of TREES, "faults": [...]}]`` (faults: see FAULT_KINDS and lab/README.md).
Everything lives under ``<run_dir>/bmc/``: ``redfish.json`` (config, mode 0600: it holds the password),
``redfish.pid``, ``redfish.log`` (requests and the server's own output), ``ca.pem`` (the lab CA: give it to clients
as ``ca_path``), ``server.pem``/``server.key``/``ca.key`` and ``state/<node>.json`` (what changed: power, BIOS,
boot override, cleared logs). Bad configurations raise ``BmcLabError`` (a ValueError) before anything starts.
"""

import datetime
import json
import os
import secrets
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request

try:
    from . import redfish_tree as rt
except ImportError:  # loaded by path
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import redfish_tree as rt

from _common import process_running  # noqa: E402  (lab/sim, on the path since redfish_tree)

BmcLabError = rt.BmcLabError
TREES = rt.TREES
FAULT_KINDS = rt.FAULT_KINDS
SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "redfish_server.py")
USERNAME = "admin"
BMC_KEYS = {"node", "tree", "faults", "index"}
_PROCS = {}  # pid -> Popen of servers this process started (to reap them)


def _paths(run_dir):
    bmc_dir = os.path.join(os.path.abspath(run_dir), "bmc")
    return {"dir": bmc_dir, "config": os.path.join(bmc_dir, "redfish.json"), "pid": os.path.join(bmc_dir, "redfish.pid"),
            "log": os.path.join(bmc_dir, "redfish.log"), "ca": os.path.join(bmc_dir, "ca.pem"), "state": os.path.join(bmc_dir, "state")}


def _free_ports(count):
    socks = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind(("127.0.0.1", 0))
            socks.append(sock)
        return [sock.getsockname()[1] for sock in socks]
    finally:
        for sock in socks:
            sock.close()


def validate(bmcs, started="1970-01-01T00:00:00+00:00"):
    """Normalized ``bmcs`` (faults checked against each tree), or BmcLabError."""
    if not isinstance(bmcs, list) or not bmcs:
        raise BmcLabError("bmcs: expected a non-empty list of {node, tree, faults}")
    out, seen = [], set()
    for i, item in enumerate(bmcs):
        where = f"bmcs[{i}]"
        if not isinstance(item, dict):
            raise BmcLabError(f"{where}: expected a mapping with node, tree, faults")
        unknown = sorted(set(item) - BMC_KEYS)
        if unknown:
            raise BmcLabError(f"{where}: unknown key(s) {unknown}; allowed: {sorted(BMC_KEYS)}")
        node = item.get("node")
        if not isinstance(node, str) or not node or "/" in node or node.startswith("."):
            raise BmcLabError(f"{where}: 'node' must be a node name, got {node!r}")
        if node in seen:
            raise BmcLabError(f"{where}: node {node!r} given twice")
        seen.add(node)
        where = f"bmc {node}"
        tree = item.get("tree")
        if tree not in TREES:
            raise BmcLabError(f"{where}: unknown Redfish tree {tree!r}; known trees: {', '.join(TREES)}")
        faults = rt.normalize_faults(item.get("faults"), f"{where}: faults")
        rt.apply_faults(rt.load_tree(tree), tree, faults, started, f"{where}: faults")
        index = item.get("index", i)
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index <= 999:
            raise BmcLabError(f"{where}: 'index' must be an integer 0..999 (it numbers the node's serials), "
                              f"got {index!r}")
        out.append({"node": node, "tree": tree, "faults": faults, "index": index})
    return out


def start(run_dir, bmcs, power_delay_s=1.0, timeout=30.0):
    """Start one server for all ``bmcs``; return when every listener answers. Fresh state: any state files of an
    earlier lab in ``run_dir`` are removed."""
    paths = _paths(run_dir)
    if running(run_dir):
        raise BmcLabError(f"the Redfish BMCs of {run_dir} are already running (pid {running(run_dir)}); stop them first")
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S+00:00")
    bmcs = validate(bmcs, started)
    os.makedirs(paths["state"], exist_ok=True)
    for name in os.listdir(paths["state"]):
        os.unlink(os.path.join(paths["state"], name))
    password = secrets.token_urlsafe(12)
    specs = []
    for bmc, port in zip(bmcs, _free_ports(len(bmcs))):
        spec = {"node": bmc["node"], "port": port, "tree": bmc["tree"], "username": USERNAME, "password": password,
                "faults": bmc["faults"], "index": bmc["index"],
                "state_file": os.path.join(paths["state"], bmc["node"] + ".json")}
        node_state = os.path.join(os.path.abspath(run_dir), "nodes", bmc["node"], "state.json")
        if os.path.isdir(os.path.dirname(node_state)):  # a lab node: a boot of its BMC clears its power-cycle faults
            spec["node_state"] = node_state
        if any(fault["kind"] == "bmc_bad_credentials" for fault in bmc["faults"]):
            spec["inventory_password"] = secrets.token_urlsafe(12)
        specs.append(spec)
    cfg = {"schema": 1, "started": started, "power_delay_s": float(power_delay_s), "tls_dir": paths["dir"],
           "log": paths["log"], "bmcs": specs}
    fd = os.open(paths["config"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(cfg, fh, indent=2)
        fh.write("\n")
    _launch(run_dir, timeout)
    return endpoints(run_dir)


def endpoints(run_dir):
    """``{node: {"address", "port", "username", "password", "ca_path"}}`` of a started lab (the inventory's view:
    a ``bmc_bad_credentials`` node gets a password the BMC rejects)."""
    paths = _paths(run_dir)
    try:
        with open(paths["config"], encoding="utf-8") as fh:
            cfg = json.load(fh)
    except (OSError, ValueError) as exc:
        raise BmcLabError(f"no Redfish lab in {run_dir} (cannot read {paths['config']}: {exc})") from None
    return {spec["node"]: {"address": "127.0.0.1", "port": spec["port"], "username": spec["username"],
                           "password": spec.get("inventory_password", spec["password"]), "ca_path": paths["ca"]}
            for spec in cfg["bmcs"]}


def restart(run_dir, timeout=30.0):
    """Stop and start the server again with the same config: ports, credentials, CA and state are kept."""
    stop(run_dir)
    _launch(run_dir, timeout)
    return endpoints(run_dir)


def _launch(run_dir, timeout):
    paths = _paths(run_dir)
    with open(paths["log"], "ab") as log:
        proc = subprocess.Popen([sys.executable, "-I", SERVER, "--config", paths["config"]],  # pylint: disable=consider-using-with
                                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                close_fds=True)
    _PROCS[proc.pid] = proc
    with open(paths["pid"], "w", encoding="utf-8") as fh:
        fh.write(f"{proc.pid}\n")
    with open(paths["config"], encoding="utf-8") as fh:
        cfg = json.load(fh)
    listening = [spec["port"] for spec in cfg["bmcs"]
                 if not any(fault["kind"] == "bmc_down" for fault in spec.get("faults", []))]
    deadline = time.monotonic() + timeout
    pending = list(listening)
    while pending:
        if proc.poll() is not None:
            stop(run_dir)
            raise BmcLabError(f"the Redfish server exited with rc {proc.returncode}; its log ({paths['log']}) ends:\n"
                              + _tail(paths["log"]))
        if os.path.exists(paths["ca"]) and _answers(pending[0], paths["ca"]):
            pending.pop(0)
            continue
        if time.monotonic() > deadline:
            stop(run_dir)
            raise BmcLabError(f"the Redfish BMCs did not answer within {timeout} s (port {pending[0]}); see {paths['log']}")
        time.sleep(0.05)


def _answers(port, ca_path):
    context = ssl.create_default_context(cafile=ca_path)
    try:
        with urllib.request.urlopen(f"https://127.0.0.1:{port}/redfish/v1", context=context, timeout=2) as resp:
            return resp.status == 200
    except (OSError, urllib.error.URLError):
        return False


def _tail(path, lines=15):
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return "".join(fh.readlines()[-lines:])
    except OSError:
        return "(no log)\n"


def _alive(pid):
    proc = _PROCS.get(pid)
    if proc is not None:
        return proc.poll() is None
    return process_running(pid)


def running(run_dir):
    """The server's pid if it is running (its pidfile names a live process group leader running our server)."""
    try:
        with open(_paths(run_dir)["pid"], encoding="utf-8") as fh:
            pid = int(fh.read().strip())
        if pid in _PROCS and _PROCS[pid].poll() is not None:  # our child, exited (and now reaped)
            return None
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            cmdline = fh.read()
    except (OSError, ValueError):
        return None
    if SERVER.encode() not in cmdline or not _alive(pid) or os.getpgid(pid) != pid:
        return None
    return pid


def stop(run_dir, timeout=10.0):
    """Kill the server's process group (SIGTERM, then SIGKILL after ``timeout``) and wait for it."""
    paths = _paths(run_dir)
    pid = running(run_dir)
    if pid is None:
        if os.path.exists(paths["pid"]):
            os.unlink(paths["pid"])
        return False
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + timeout
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        if not _alive(pid):
            break
    if _alive(pid):
        raise BmcLabError(f"the Redfish server (pid {pid}) survived SIGKILL for {timeout} s")
    _PROCS.pop(pid, None)
    os.unlink(paths["pid"])
    return True
