"""The SSH lab's network: nodes as network namespaces with their own hostname, sshd and lldpd, veth "cables" into
leaf (and spine) switch namespaces, a management bridge the root namespace reaches every sshd through.

API (labctl calls it; the layout and addresses come from ``netplan.build_plan``):

* ``up(run_dir, plan, faults_by_node) -> info``: builds it all (tearing down a stale lab of the same dir first),
  applies the network faults, starts the daemons, waits until every sshd accepts connections; ``info`` is also
  written to ``<run_dir>/net/net.json``.
* ``apply_faults(info, faults_by_node)``: makes every link what the plan and the faults say (rename, up/down, MTU).
* ``down(run_dir)``: ``ssh -O exit`` on the lab's ControlPath sockets, kills every pid of ``ip netns pids`` of each
  namespace, deletes the namespaces and their /etc/netns dirs. Idempotent; touches only namespaces whose
  /etc/netns/<ns>/hosts names this lab dir.
* ``status(info)``, ``host_vars(info, node, python)``, ``ssh_argv(info, node)``.

Real peers only: iproute2 (``ip``), ``unshare`` (util-linux), OpenSSH ``sshd``/``ssh``/``ssh-keygen``, ``lldpd``/
``lldpcli``. Must run as root.
"""

import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

_SIM_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "sim")
if _SIM_DIR not in sys.path:
    sys.path.insert(0, _SIM_DIR)
from _common import process_running  # noqa: E402  (lab/sim: the lab's shared helpers)


def _load_plan():
    name = "zhisuan_lab_net_plan"
    if name not in sys.modules:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "netplan.py")
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


netplan = _load_plan()
NetError = netplan.NetError
# the texts and inventory vars are pure: netplan makes them (named here too, as the API above says)
sshd_config, lldpd_config = netplan.sshd_config, netplan.lldpd_config
ssh_argv, host_vars, tool_wrappers = netplan.ssh_argv, netplan.host_vars, netplan.tool_wrappers
_paths = netplan.lab_paths

SUBDIR = netplan.SUBDIR
RUNTIME_ROOT = netplan.RUNTIME_ROOT
INFO = "net.json"
CABLING_PLAN = "cabling-plan.yml"
NETNS_ETC = Path("/etc/netns")
NETNS_RUN = Path("/run/netns")
CMD_TIMEOUT = 30
START_TIMEOUT = 15.0
STOP_TIMEOUT = 5.0
# program -> Debian package (what `make sysdeps` installs)
PROGRAMS = {"ip": "iproute2", "unshare": "util-linux", "sshd": "openssh-server", "ssh": "openssh-client",
            "ssh-keygen": "openssh-client", "lldpd": "lldpd", "lldpcli": "lldpd"}


# ----------------------------------------------------------------------------------------------- helpers

def _run(argv, timeout=CMD_TIMEOUT, stdin=None, check=True):
    try:
        res = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise NetError(f"{' '.join(argv)}: no answer after {timeout} s") from None
    except OSError as exc:
        raise NetError(f"{argv[0]}: {exc.strerror}") from None
    if check and res.returncode != 0:
        raise NetError(f"{' '.join(argv)}: rc {res.returncode}: {(res.stderr or res.stdout).strip()}")
    return res


def _ip_batch(lines, netns=None):
    if lines:
        _run(["ip"] + (["-n", netns] if netns else []) + ["-batch", "-"], stdin="\n".join(lines) + "\n")


def _parallel(func, items):
    """Run ``func`` over ``items`` in threads (each runs a subprocess); the first error is raised."""
    with ThreadPoolExecutor(max_workers=8) as pool:
        return list(pool.map(func, items))


def _links(netns):
    return json.loads(_run(["ip", "-n", netns, "-j", "link", "show"]).stdout or "[]")


def check_programs():
    missing = [f"{prog} (apt {pkg})" for prog, pkg in PROGRAMS.items() if shutil.which(prog) is None]
    if missing:
        raise NetError(f"the SSH lab needs {', '.join(missing)}")
    if os.geteuid() != 0:
        raise NetError("the SSH lab creates network namespaces: run labctl as root")


def _write(path, text, mode=0o644):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.chmod(tmp, mode)
    os.replace(tmp, path)


def _owner(ns):
    """The lab dir named on the first line of /etc/netns/<ns>/hosts, or None."""
    try:
        with open(NETNS_ETC / ns / "hosts", encoding="utf-8") as fh:
            first = fh.readline().strip()
    except OSError:
        return None
    return first[len("# zhisuan lab "):] if first.startswith("# zhisuan lab ") else None


# ----------------------------------------------------------------------------------------------- up

def _claim(run_dir, plan):
    """Refuse namespaces (and the root veth) of another live lab; tear down stale ones of vanished labs."""
    owner_me = str(Path(run_dir).resolve())
    stale = []
    for ns in netplan.namespaces(plan):
        if not (NETNS_RUN / ns).exists():
            continue
        owner = _owner(ns)
        if owner == owner_me or (owner and not (Path(owner) / ".zhisuan-lab").is_file()):
            stale.append(ns)
        elif owner:
            raise NetError(f"network namespace {ns} belongs to the lab at {owner}; run `labctl.py down --dir {owner}` "
                           f"first or give this scenario another network.prefix")
        else:
            raise NetError(f"network namespace {ns} exists and was not made by a zhisuan lab; give this scenario "
                           f"another network.prefix")
    if stale:
        _teardown(stale, None, plan["mgmt"]["root_if"] if plan["mgmt"]["ns"] in stale else None)
    root_if = plan["mgmt"]["root_if"]
    if _run(["ip", "link", "show", root_if], check=False).returncode == 0:
        raise NetError(f"interface {root_if} exists in the root namespace; choose another network.prefix")
    routes = json.loads(_run(["ip", "-j", "route", "show", "match", plan["network"]["mgmt_net"]]).stdout or "[]")
    clash = [r for r in routes if r.get("dst") not in ("default", None)]
    if clash:
        raise NetError(f"network.mgmt_net {plan['network']['mgmt_net']} overlaps a route of this machine "
                       f"({clash[0].get('dst')} dev {clash[0].get('dev')}); choose another network.mgmt_net")


def _etc_netns(plan, owner):
    for ns, name in ([(n["ns"], n["name"]) for n in plan["nodes"].values()]
                     + [(s["ns"], s["name"]) for s in plan["switches"].values()]
                     + [(plan["mgmt"]["ns"], netplan.MGMT)]):
        _write(NETNS_ETC / ns / "hosts", netplan.hosts_text(plan, owner, name))
        _write(NETNS_ETC / ns / "resolv.conf", netplan.RESOLV_TEXT)
        _write(NETNS_ETC / ns / "hostname", name + "\n")


def _keys(paths, plan):
    key = paths["key"]
    jobs = [("zhisuan-lab", key)] + [(f"root@{name}", os.path.join(paths["daemons"][name]["dir"], "ssh_host_ed25519_key"))
                                     for name in plan["nodes"]]
    for _, path in jobs:   # a fresh key pair at every `up`
        for stale in (path, path + ".pub"):
            if os.path.exists(stale):
                os.unlink(stale)
    _parallel(lambda job: _run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", job[0], "-f", job[1]]), jobs)
    _write(paths["authorized_keys"], Path(key + ".pub").read_text(encoding="utf-8"), mode=0o600)


def _create(plan):
    net, mgmt = plan["network"], plan["mgmt"]
    root = [f"netns add {ns}" for ns in netplan.namespaces(plan)]
    per_ns = dict((ns, ["link set lo up"]) for ns in netplan.namespaces(plan))
    for sw in plan["switches"].values():
        per_ns[sw["ns"]].append(f"link add {netplan.BRIDGE} type bridge stp_state 0")
    per_ns[mgmt["ns"]].append(f"link add {netplan.BRIDGE} type bridge stp_state 0")
    for node in plan["nodes"].values():
        ns = node["ns"]
        for port, info in node["ports"].items():
            sw = plan["switches"][info["switch"]]
            root.append(f"link add {port} netns {ns} type veth peer name {info['switch_port']} netns {sw['ns']}")
            per_ns[ns] += [f"link set {port} mtu {net['mtu']} up", f"addr add {info['address']} dev {port}"]
            per_ns[sw["ns"]].append(f"link set {info['switch_port']} mtu {net['mtu']} master {netplan.BRIDGE} up")
        root.append(f"link add {netplan.MGMT_IF} netns {ns} type veth peer name n{node['index']} netns {mgmt['ns']}")
        per_ns[ns] += [f"link set {netplan.MGMT_IF} up",
                       f"addr add {node['mgmt_address']}/{mgmt['prefixlen']} dev {netplan.MGMT_IF}"]
        per_ns[mgmt["ns"]].append(f"link set n{node['index']} master {netplan.BRIDGE} up")
    for sw in plan["switches"].values():
        if sw.get("uplink"):
            spine = plan["switches"][sw["uplink"]]
            root.append(f"link add {sw['uplink_port']} netns {sw['ns']} type veth peer name {sw['spine_port']} "
                        f"netns {spine['ns']}")
            per_ns[sw["ns"]].append(f"link set {sw['uplink_port']} mtu {net['mtu']} master {netplan.BRIDGE} up")
            per_ns[spine["ns"]].append(f"link set {sw['spine_port']} mtu {net['mtu']} master {netplan.BRIDGE} up")
    root += [f"link add {mgmt['root_if']} type veth peer name up0 netns {mgmt['ns']}",
             f"addr add {mgmt['root_address']}/{mgmt['prefixlen']} dev {mgmt['root_if']}",
             f"link set {mgmt['root_if']} up"]
    per_ns[mgmt["ns"]].append(f"link set up0 master {netplan.BRIDGE} up")
    for ns in [s["ns"] for s in plan["switches"].values()] + [mgmt["ns"]]:
        per_ns[ns].append(f"link set {netplan.BRIDGE} up")
    _ip_batch(root)
    _parallel(lambda item: _ip_batch(item[1], item[0]), list(per_ns.items()))


def _spawn(ns, hostname, argv, log, sysctls=()):
    """Start a daemon in namespace ``ns`` with its own UTS (hostname) and mount namespace; it outlives labctl."""
    script = "".join(f"echo {value} > /proc/sys/{key} && " for key, value in sysctls)
    script += 'hostname "$0" && exec "$@"'
    with open(log, "ab") as out:
        subprocess.Popen(["ip", "netns", "exec", ns, "unshare", "--uts", "--mount", "sh", "-c", script, hostname] + argv,
                         stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                         close_fds=True)


# each rail's ARP answered only on its own port: all rails share the lab's one L2 fabric
NODE_SYSCTLS = (("net/ipv4/conf/all/arp_ignore", 1), ("net/ipv4/conf/all/arp_announce", 2))


def _start_daemons(plan, paths):
    os.makedirs("/run/sshd", mode=0o755, exist_ok=True)   # sshd's privilege separation directory
    os.makedirs("/run/lldpd", mode=0o755, exist_ok=True)  # lldpd's chroot
    for name, sw in plan["switches"].items():
        d = paths["daemons"][name]
        _write(d["lldp_config"], lldpd_config(name, sw["tier"]))
        _spawn(sw["ns"], name, ["lldpd", "-d", "-u", d["lldp_socket"], "-p", d["lldp_pid"], "-I", "swp*",
                                "-O", d["lldp_config"]], os.path.join(d["dir"], "lldpd.log"))
    for name, node in plan["nodes"].items():
        d = paths["daemons"][name]
        _write(Path(d["dir"]) / "sshd_config", sshd_config(node, paths))
        _write(d["lldp_config"], lldpd_config(name, "node"))
        _spawn(node["ns"], name, ["/usr/sbin/sshd", "-D", "-f", os.path.join(d["dir"], "sshd_config"),
                                  "-E", os.path.join(d["dir"], "sshd.log")],
               os.path.join(d["dir"], "sshd.out"), sysctls=NODE_SYSCTLS)
        _spawn(node["ns"], name, ["lldpd", "-d", "-u", d["lldp_socket"], "-p", d["lldp_pid"],
                                  "-I", ",".join(node["ports"]), "-O", d["lldp_config"]],
               os.path.join(d["dir"], "lldpd.log"))


def _wait_ready(plan, paths, timeout=START_TIMEOUT):
    deadline = time.monotonic() + timeout
    waiting = dict((name, node["mgmt_address"]) for name, node in plan["nodes"].items())
    sockets = dict((name, d["lldp_socket"]) for name, d in paths["daemons"].items())
    while waiting or sockets:
        for name, address in list(waiting.items()):
            try:
                with socket.create_connection((address, 22), timeout=0.5) as conn:
                    if conn.recv(4).startswith(b"SSH-"):
                        del waiting[name]
            except OSError:
                pass
        for name, path in list(sockets.items()):
            if os.path.exists(path):
                del sockets[name]
        if time.monotonic() > deadline:
            what = [f"sshd of {n} ({paths['daemons'][n]['dir']}/sshd.log)" for n in waiting]
            what += [f"lldpd of {n} ({paths['daemons'][n]['dir']}/lldpd.log)" for n in sockets]
            raise NetError(f"not ready after {timeout:.0f} s: {', '.join(what)}")
        if waiting or sockets:
            time.sleep(0.05)


def up(run_dir, plan, faults_by_node):
    """Build the network lab of ``plan`` under ``run_dir``; return its info (also in <run_dir>/net/net.json)."""
    check_programs()
    run_dir = str(Path(run_dir).resolve())
    paths = _paths(run_dir, plan)
    down(run_dir)
    _claim(run_dir, plan)
    info = {"schema": 1, "run_dir": run_dir, "namespaces": netplan.namespaces(plan), "plan": plan, "paths": paths,
            "cabling_plan": os.path.join(run_dir, CABLING_PLAN)}
    for d in paths["daemons"].values():
        os.makedirs(d["dir"], exist_ok=True)
    os.makedirs(paths["control_path_dir"], mode=0o700, exist_ok=True)
    os.makedirs(paths["sockets"], mode=0o755, exist_ok=True)
    os.chmod(paths["sockets"], 0o755)
    _write(Path(paths["dir"]) / INFO, json.dumps(info, indent=2) + "\n")   # first: `down` works after a failure
    try:
        _etc_netns(plan, run_dir)
        _keys(paths, plan)
        _create(plan)
        apply_faults(info, faults_by_node)
        _start_daemons(plan, paths)
        _wait_ready(plan, paths)
    except (NetError, OSError) as exc:
        down(run_dir)
        raise NetError(f"network lab: {exc}") from None
    return info


# ----------------------------------------------------------------------------------------------- faults

def apply_faults(info, faults_by_node):
    """Make every node link what the plan and ``faults_by_node`` say: switch-side port name (miswire), switch-side
    admin state (cable_down: the node's port reads NO-CARRIER), node-side MTU. Idempotent."""
    plan = info["plan"]
    states = netplan.link_states(plan, faults_by_node)
    sw_ns_list = [sw["ns"] for sw in plan["switches"].values()]
    node_ns_list = [node["ns"] for node in plan["nodes"].values()]
    found = dict(zip(sw_ns_list + node_ns_list, _parallel(_links, sw_ns_list + node_ns_list)))
    sw_links = dict((ns, dict((link["ifindex"], link) for link in found[ns])) for ns in sw_ns_list)
    renames, finals, node_lines = {}, {}, {}
    for (name, port), state in states.items():
        node = plan["nodes"][name]
        link = next((lk for lk in found[node["ns"]] if lk["ifname"] == port), None)
        sw_ns = plan["switches"][state["switch"]]["ns"]
        peer = sw_links[sw_ns].get(link and link.get("link_index"))
        if link is None or peer is None:
            raise NetError(f"node {name} port {port}: its veth or the switch end is missing in {node['ns']}/{sw_ns}")
        lines = node_lines.setdefault(node["ns"], [])
        if link.get("mtu") != state["node_mtu"]:
            lines.append(f"link set {port} mtu {state['node_mtu']}")
        current = peer["ifname"]
        if current != state["switch_port"]:
            tmp = f"zltmp{peer['ifindex']}"
            renames.setdefault(sw_ns, []).extend([f"link set {current} down", f"link set {current} name {tmp}"])
            current = tmp
        final = finals.setdefault(sw_ns, [])
        if current != state["switch_port"]:
            final.append(f"link set {current} name {state['switch_port']}")
        final.append(f"link set {state['switch_port']} {'up' if state['up'] else 'down'}")
    # two passes: a port may take a name another port is leaving
    _parallel(lambda item: _ip_batch(item[1], item[0]), list(renames.items()))
    _parallel(lambda item: _ip_batch(item[1], item[0]), list(finals.items()) + list(node_lines.items()))
    return states


# ----------------------------------------------------------------------------------------------- down

def _ns_pids(namespaces):
    """Pids whose network namespace is one of ``namespaces`` -- what `ip netns pids` prints, for all at once."""
    wanted = set()
    for ns in namespaces:
        try:
            st = os.stat(NETNS_RUN / ns)
            wanted.add((st.st_dev, st.st_ino))
        except OSError:
            pass
    pids = set()
    if wanted:
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    st = os.stat(f"/proc/{entry}/ns/net")
                except OSError:
                    continue
                if (st.st_dev, st.st_ino) in wanted:
                    pids.add(int(entry))
    pids.discard(os.getpid())
    return pids


def _alive(pid):
    """True while ``pid`` runs (a zombie -- exited, not yet reaped by its parent -- does not)."""
    return process_running(pid)


def _teardown(namespaces, control_path_dir, root_if=None):
    if control_path_dir and os.path.isdir(control_path_dir):
        for entry in os.listdir(control_path_dir):
            sock = os.path.join(control_path_dir, entry)
            _run(["ssh", "-o", f"ControlPath={sock}", "-O", "exit", "zhisuan-lab"], timeout=5, check=False)
        shutil.rmtree(control_path_dir, ignore_errors=True)
    present = [ns for ns in namespaces if (NETNS_RUN / ns).exists()]
    pids = _ns_pids(present)
    for sig, wait in ((signal.SIGTERM, STOP_TIMEOUT), (signal.SIGKILL, STOP_TIMEOUT)):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + wait
        while pids and time.monotonic() < deadline:
            time.sleep(0.05)
            pids = set(p for p in pids if _alive(p))
            if not pids:
                pids = _ns_pids(present)    # anything forked meanwhile (an ssh session being set up)
        if not pids:
            break
    if root_if and _run(["ip", "link", "show", root_if], check=False).returncode == 0:
        # at once: a deleted namespace's veths go later, in the kernel's own time, and `up` may follow at once
        _run(["ip", "link", "del", root_if])
    if present:
        _ip_batch([f"netns del {ns}" for ns in present])
    for ns in namespaces:
        shutil.rmtree(NETNS_ETC / ns, ignore_errors=True)


def read_info(run_dir):
    path = Path(run_dir).resolve() / SUBDIR / INFO
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def down(run_dir):
    """Stop the network lab of ``run_dir`` (nothing if it has none). Returns the namespaces it deleted."""
    info = read_info(run_dir)
    if info is None:
        return []
    me = info["run_dir"]
    # a namespace of the same name that another lab made since is left alone
    mine = [ns for ns in info["namespaces"] if not (NETNS_RUN / ns).exists() or _owner(ns) == me]
    present = [ns for ns in mine if (NETNS_RUN / ns).exists()]
    root_if = info["plan"]["mgmt"]["root_if"] if info["plan"]["mgmt"]["ns"] in mine else None
    _teardown(mine, info["paths"]["control_path_dir"], root_if)
    shutil.rmtree(info["paths"]["sockets"], ignore_errors=True)
    os.unlink(Path(info["paths"]["dir"]) / INFO)
    return present


# ----------------------------------------------------------------------------------------------- views

def _daemons_in(ns):
    """Names (comm) of the processes running in namespace ``ns``."""
    names = set()
    for pid in _ns_pids([ns]):
        try:
            with open(f"/proc/{pid}/comm", encoding="utf-8") as fh:
                names.add(fh.read().strip())
        except OSError:
            pass
    return names


def status(info):
    """{name: {"ns", "namespace": bool, "sshd": bool|None, "lldpd": bool}} for nodes and switches."""
    out = {}
    for name, entry in list(info["plan"]["nodes"].items()) + list(info["plan"]["switches"].items()):
        present = (NETNS_RUN / entry["ns"]).exists()
        running = _daemons_in(entry["ns"]) if present else set()
        out[name] = {"ns": entry["ns"], "namespace": present, "lldpd": "lldpd" in running,
                     "sshd": ("sshd" in running) if name in info["plan"]["nodes"] else None}
    return out
