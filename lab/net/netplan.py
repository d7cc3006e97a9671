"""The SSH lab's network, the pure part: the scenario's ``network`` key, address allocation, the intended wiring
(the cabling plan), the network fault kinds and what each makes of a link, the daemons' configuration texts and
the inventory host vars. No I/O; ``netlab.py`` does the work.

Shape of the lab (lab/README.md, "SSH lab nodes"):

* node ``<n>`` (lab index ``i``) is the network namespace ``<prefix><n>`` with a management port ``mgmt0`` at
  ``<mgmt_net>.<i>`` and one port per rail (``ports``, default ``eth0``, ``eth1``) at ``10.10.<rail>.<i>/24``;
* nodes are split in contiguous blocks over ``leaves`` leaf switches (``<prefix>leaf01`` …); on its leaf, the node
  at block position ``p`` has port ``ports[k]`` cabled to ``swp<p * len(ports) + k + 1>``; every leaf's uplink is
  ``swp<ports per leaf + 1>``, cabled to the spine (``<prefix>spine01``) port ``swp<leaf number>``;
* every switch bridges all its ``swp*`` ports (one L2 fabric; each rail is its own IP subnet);
* the namespace ``<prefix>mgmt`` bridges every node's ``mgmt0`` and the root namespace's ``<prefix>mgmt`` veth,
  which holds ``<mgmt_net>.254``.
"""

import hashlib
import ipaddress
import os
import re
import sys
from pathlib import Path

_SIM_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "sim")
if _SIM_DIR not in sys.path:
    sys.path.insert(0, _SIM_DIR)
from _common import LabError  # noqa: E402

TRANSPORTS = ("ssh",)
NETWORK_KEYS = {"transport", "leaves", "spine", "ports", "mtu", "prefix", "mgmt_net"}
DEFAULT_PORTS = ("eth0", "eth1")
DEFAULT_MTU = 9000
MTU_RANGE = (1280, 9216)
DEFAULT_PREFIX = "zl-"
DEFAULT_MGMT_NET = "10.99.0.0/24"
FABRIC_NET = "10.10.{rail}.{host}"
MAX_LEAVES = 16
MAX_PORTS = 8
MAX_NODES = 253                      # one /24 per rail and for management; .254 is the root namespace
MGMT_IF = "mgmt0"                    # the node's management port
BRIDGE = "br0"                       # the bridge of every switch namespace and of the management namespace
SPINE = "spine01"
MGMT = "mgmt"
ROOT_HOST = 254
SUBDIR = "net"                       # <lab dir>/net: the SSH lab's files
RUNTIME_ROOT = Path("/run/zl-lab")   # the lldpd sockets of every lab, one dir per lab dir (sha1 of its path)
SOCKET_PATH_MAX = 100                # sun_path is 108 bytes; ssh adds a 17-character suffix to ControlPath sockets
PORT_RE = re.compile(r"^[a-z][a-z0-9]{0,14}$")
SWITCH_PORT_RE = re.compile(r"^swp([1-9][0-9]{0,3})$")
PREFIX_RE = re.compile(r"^[a-z][a-z0-9]{0,8}-$")

# Network faults, in the simulators' format (lab/sim/_common.py): kind -> {param: type or (type, default)}.
FAULT_KINDS = {
    # the cable of `port` lands on another port of the same switch (default: the first port the plan leaves free);
    # the switch's LLDP then names that port
    "miswire": {"port": str, "switch_port": (str, "")},
    # the cable is pulled: the switch end is down, so the node's port reads NO-CARRIER and has no LLDP neighbour
    "cable_down": {"port": str},
    # the node's port MTU is `value` instead of the plan's (the switch keeps the plan's)
    "mtu": {"port": str, "value": int},
}


class NetError(LabError):
    """A network scenario or fault problem (labctl reports it as a LabError)."""


def _int(value, name, low, high, where):
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise NetError(f"{where}: '{name}' must be an integer {low}..{high}, got {value!r}")
    return value


def parse_network(doc, where="network"):
    """Validate a scenario's ``network`` mapping; return it normalized (defaults filled in), or None if absent."""
    if doc is None:
        return None
    if not isinstance(doc, dict):
        raise NetError(f"{where}: expected a mapping, got {type(doc).__name__}")
    unknown = sorted(set(doc) - NETWORK_KEYS)
    if unknown:
        raise NetError(f"{where}: unknown key(s) {unknown}; allowed: {sorted(NETWORK_KEYS)}")
    if doc.get("transport") not in TRANSPORTS:
        raise NetError(f"{where}: 'transport' must be one of {list(TRANSPORTS)}, got {doc.get('transport')!r}")
    leaves = _int(doc.get("leaves", 1), "leaves", 1, MAX_LEAVES, where)
    spine = doc.get("spine", False)
    if not isinstance(spine, bool):
        raise NetError(f"{where}: 'spine' must be true or false, got {spine!r}")
    ports = doc.get("ports", list(DEFAULT_PORTS))
    if not isinstance(ports, list) or not 1 <= len(ports) <= MAX_PORTS:
        raise NetError(f"{where}: 'ports' must be a list of 1..{MAX_PORTS} interface names, got {ports!r}")
    for port in ports:
        if not isinstance(port, str) or not PORT_RE.match(port) or port in ("lo", MGMT_IF) or port.startswith("swp"):
            raise NetError(f"{where}: port {port!r} is not a usable interface name (lower-case letters and digits, "
                           f"at most 15, not lo, {MGMT_IF} or swp*)")
    if len(set(ports)) != len(ports):
        raise NetError(f"{where}: 'ports' has duplicates: {ports}")
    mtu = _int(doc.get("mtu", DEFAULT_MTU), "mtu", MTU_RANGE[0], MTU_RANGE[1], where)
    prefix = doc.get("prefix", DEFAULT_PREFIX)
    if not isinstance(prefix, str) or not PREFIX_RE.match(prefix):
        raise NetError(f"{where}: 'prefix' must be a lower-case letter, up to 8 letters/digits and a '-' "
                       f"(e.g. {DEFAULT_PREFIX!r}), got {prefix!r}")
    mgmt_net = doc.get("mgmt_net", DEFAULT_MGMT_NET)
    try:
        net = ipaddress.IPv4Network(mgmt_net)
    except (ValueError, TypeError):
        raise NetError(f"{where}: 'mgmt_net' must be an IPv4 /24 network like {DEFAULT_MGMT_NET!r}, got {mgmt_net!r}") from None
    if net.prefixlen != 24 or not net.is_private:
        raise NetError(f"{where}: 'mgmt_net' must be a private IPv4 /24 network, got {mgmt_net!r}")
    return {"transport": doc["transport"], "leaves": leaves, "spine": spine, "ports": list(ports), "mtu": mtu,
            "prefix": prefix, "mgmt_net": str(net)}


def switch_names(network):
    names = [f"leaf{n:02d}" for n in range(1, network["leaves"] + 1)]
    return names + ([SPINE] if network["spine"] else [])


def check_names(network, names, where="network"):
    """Node names must not clash with the switches' or the management namespace's."""
    if len(names) > MAX_NODES:
        raise NetError(f"{where}: an SSH lab has at most {MAX_NODES} nodes, got {len(names)}")
    if network["leaves"] > len(names):
        raise NetError(f"{where}: {network['leaves']} leaves for {len(names)} node(s); every leaf needs a node")
    reserved = set(switch_names(network)) | {MGMT}
    clash = sorted(set(names) & reserved)
    if clash:
        raise NetError(f"{where}: node name(s) {clash} are the names of the lab's switches/management namespace")


def leaf_of(position, count, leaves):
    """Leaf number (1-based) of the node at 0-based ``position`` of ``count``: contiguous, near-equal blocks."""
    return position * leaves // count + 1


def build_plan(network, names):
    """The lab's layout: namespaces, addresses and links. ``names`` in lab order (index = position + 1)."""
    prefix, ports, count = network["prefix"], network["ports"], len(names)
    mgmt = ipaddress.IPv4Network(network["mgmt_net"])
    blocks = {}
    for pos, name in enumerate(names):
        blocks.setdefault(leaf_of(pos, count, network["leaves"]), []).append(name)
    per_leaf = max(len(block) for block in blocks.values()) * len(ports)
    nodes, switches, links = {}, {}, []
    for number in range(1, network["leaves"] + 1):
        leaf = f"leaf{number:02d}"
        sw = {"name": leaf, "ns": prefix + leaf, "tier": "leaf", "ports": []}
        if network["spine"]:
            sw.update({"uplink": SPINE, "uplink_port": f"swp{per_leaf + 1}", "spine_port": f"swp{number}"})
            sw["ports"].append(sw["uplink_port"])
        switches[leaf] = sw
    if network["spine"]:
        switches[SPINE] = {"name": SPINE, "ns": prefix + SPINE, "tier": "spine",
                           "ports": [f"swp{n}" for n in range(1, network["leaves"] + 1)]}
    for index, name in enumerate(names, start=1):
        number = leaf_of(index - 1, count, network["leaves"])
        leaf = f"leaf{number:02d}"
        position = blocks[number].index(name)
        node = {"name": name, "index": index, "ns": prefix + name, "leaf": leaf,
                "mgmt_address": str(mgmt.network_address + index), "ports": {}}
        for rail, port in enumerate(ports):
            switch_port = f"swp{position * len(ports) + rail + 1}"
            node["ports"][port] = {"rail": rail, "switch": leaf, "switch_port": switch_port,
                                   "address": FABRIC_NET.format(rail=rail, host=index) + "/24"}
            switches[leaf]["ports"].append(switch_port)
            links.append({"node": name, "port": port, "switch": leaf, "switch_port": switch_port})
        node["fabric_address"] = node["ports"][ports[0]]["address"].split("/")[0]
        nodes[name] = node
    for sw in switches.values():
        sw["ports"].sort(key=port_number)
    return {"network": network, "nodes": nodes, "switches": switches, "links": links,
            "mgmt": {"ns": prefix + MGMT, "root_if": prefix + MGMT, "root_address": str(mgmt.network_address + ROOT_HOST),
                     "prefixlen": mgmt.prefixlen}}


def port_number(name):
    match = SWITCH_PORT_RE.match(name)
    return int(match.group(1)) if match else 0


def cabling_plan(plan):
    """The INTENDED wiring, as the lab writes it to <lab dir>/cabling-plan.yml."""
    switches = {}
    for name, sw in plan["switches"].items():
        entry = {"tier": sw["tier"]}
        if sw.get("uplink"):
            entry.update({"uplink": sw["uplink"], "uplink_port": sw["uplink_port"], "spine_port": sw["spine_port"]})
        switches[name] = entry
    return {"mtu": plan["network"]["mtu"], "links": [dict(link) for link in plan["links"]], "switches": switches}


def check_fault(fault, node, where="fault"):
    """Range checks of one network fault against its node (``node["net_ports"]``: the node's ports, or None)."""
    ports = node.get("net_ports")
    if not ports:
        raise NetError(f"{where}: fault {fault['kind']!r} is a network fault; it needs a scenario with a "
                       f"'network' (the SSH lab)")
    if fault["port"] not in ports:
        raise NetError(f"{where}: fault {fault['kind']!r}: port {fault['port']!r} is not one of the node's ports {ports}")
    if fault["kind"] == "miswire" and fault["switch_port"] and not SWITCH_PORT_RE.match(fault["switch_port"]):
        raise NetError(f"{where}: fault 'miswire': switch_port must be swp1..swp9999, got {fault['switch_port']!r}")
    if fault["kind"] == "mtu":
        low, high = MTU_RANGE[0], MTU_RANGE[1]
        if not low <= fault["value"] <= high:
            raise NetError(f"{where}: fault 'mtu': value must be {low}..{high}, got {fault['value']}")


def link_states(plan, faults_by_node, where="network"):
    """What each link is, faults applied: ``{(node, port): {"switch", "planned_port", "switch_port", "up",
    "node_mtu"}}``. Checks what one node's faults cannot: a ``miswire`` onto a port the plan or another miswire
    uses, a fault given twice for one port, an MTU fault equal to the plan's."""
    mtu = plan["network"]["mtu"]
    states = {}
    for link in plan["links"]:
        states[(link["node"], link["port"])] = {"switch": link["switch"], "planned_port": link["switch_port"],
                                                "switch_port": link["switch_port"], "up": True, "node_mtu": mtu}
    taken = dict((sw, set(info["ports"])) for sw, info in plan["switches"].items())
    pending = []
    for name in plan["nodes"]:
        seen = set()
        for i, fault in enumerate(faults_by_node.get(name) or []):
            if fault.get("kind") not in FAULT_KINDS:
                continue
            fwhere = f"{where}: node {name}: {fault['kind']} {fault['port']}"
            if (fault["kind"], fault["port"]) in seen:
                raise NetError(f"{fwhere}: given twice")
            seen.add((fault["kind"], fault["port"]))
            state = states[(name, fault["port"])]
            if fault["kind"] == "cable_down":
                state["up"] = False
            elif fault["kind"] == "mtu":
                if fault["value"] == mtu:
                    raise NetError(f"{fwhere}: value {mtu} is the plan's MTU; a fault must differ")
                state["node_mtu"] = fault["value"]
            elif fault["switch_port"]:
                if fault["switch_port"] in taken[state["switch"]]:
                    raise NetError(f"{fwhere}: {state['switch']} {fault['switch_port']} is already cabled "
                                   f"(planned or another miswire); pick a free port")
                taken[state["switch"]].add(fault["switch_port"])
                state["switch_port"] = fault["switch_port"]
            else:
                pending.append(state)
    for state in pending:  # default landing ports after the explicit ones: the lowest port nobody uses
        used = taken[state["switch"]]
        number = next(n for n in range(1, len(used) + 2) if f"swp{n}" not in used)
        state["switch_port"] = f"swp{number}"
        used.add(state["switch_port"])
    return states


def namespaces(plan):
    """Every namespace of the lab: nodes, switches (leaves, then the spine), management."""
    return ([node["ns"] for node in plan["nodes"].values()] + [sw["ns"] for sw in plan["switches"].values()]
            + [plan["mgmt"]["ns"]])


def hosts_text(plan, owner, own_name):
    """/etc/netns/<ns>/hosts: this namespace's name, every node's management and fabric addresses. The first line
    names the lab dir that owns the namespace (netlab reads it back before it touches a namespace)."""
    lines = [f"# zhisuan lab {owner}", "127.0.0.1\tlocalhost", f"127.0.1.1\t{own_name}",
             "::1\tlocalhost ip6-localhost ip6-loopback"]
    for node in plan["nodes"].values():
        lines.append(f"{node['mgmt_address']}\t{node['name']}")
        for port, info in node["ports"].items():
            lines.append(f"{info['address'].split('/')[0]}\t{node['name']}-{port}")
    return "\n".join(lines) + "\n"


RESOLV_TEXT = ("# zhisuan lab: no DNS inside the lab's namespaces (names are in /etc/hosts); fail fast, not after 5 s\n"
               "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n")


# ----------------------------------------------------------------------------------------------- texts and vars

def lab_paths(run_dir, plan):
    """Where a lab's files go: key pair, ControlPath dir, per-daemon dirs; the lldpd sockets under /run/zl-lab."""
    base = Path(run_dir).resolve() / SUBDIR
    digest = hashlib.sha1(str(base).encode()).hexdigest()[:10]
    cp_dir = base / "cp"
    if len(str(cp_dir)) + 11 > SOCKET_PATH_MAX - 17:
        cp_dir = Path("/tmp") / ("zl-cp-" + digest)
    # lldpcli is setuid _lldpd: its socket must be reachable by that user, whatever the lab dir's modes are
    sockets = RUNTIME_ROOT / digest
    paths = {"dir": str(base), "key": str(base / "id_ed25519"), "authorized_keys": str(base / "authorized_keys"),
             "control_path_dir": str(cp_dir), "sockets": str(sockets), "daemons": {}}
    for name in list(plan["nodes"]) + list(plan["switches"]):
        sock = sockets / f"{name}.lldpd.sock"
        if len(str(sock)) > SOCKET_PATH_MAX:
            raise NetError(f"node name {name!r} is too long for the lldpd socket path {sock} (at most {SOCKET_PATH_MAX} "
                           f"characters)")
        # lldpd reads its configuration through lldpcli too: it sits next to the socket
        paths["daemons"][name] = {"dir": str(base / name), "lldp_socket": str(sock), "lldp_pid": str(base / name / "lldpd.pid"),
                                  "lldp_config": str(sockets / f"{name}.lldpd.conf")}
    return paths


def sshd_config(node, paths):
    d = paths["daemons"][node["name"]]["dir"]
    return "\n".join([
        f"# zhisuan lab: sshd of node {node['name']} (namespace {node['ns']}); generated by lab/net/netlab.py",
        f"ListenAddress {node['mgmt_address']}",
        "Port 22",
        f"HostKey {d}/ssh_host_ed25519_key",
        f"PidFile {d}/sshd.pid",
        f"AuthorizedKeysFile {paths['authorized_keys']}",
        "PermitRootLogin prohibit-password",
        "PubkeyAuthentication yes",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "UsePAM no",
        "StrictModes no",          # the lab dir may sit under a world-writable /tmp
        "UseDNS no",
        "PrintMotd no",
        "PrintLastLog no",
        "MaxStartups 64:30:128",
        "Subsystem sftp internal-sftp",
        "AcceptEnv LANG LC_*",
        "",
    ])


def lldpd_config(name, tier):
    lines = [f"# zhisuan lab: lldpd of {name}; generated by lab/net/netlab.py",
             "configure lldp tx-interval 1"]
    if tier != "node":   # switches send their port name as the port ID, as switch OSes do
        lines.append("configure lldp portidsubtype ifname")
    return "\n".join(lines) + "\n"


def ssh_common_args():
    return "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o IdentitiesOnly=yes -o LogLevel=ERROR"


def ssh_argv(info, name):
    """ssh to a lab node as root (for tests and people): ``ssh_argv(info, "node01") + ["hostname"]``."""
    node = info["plan"]["nodes"][name]
    return ["ssh", "-i", info["paths"]["key"], "-o", "BatchMode=yes", "-o", "ConnectTimeout=10"] + \
        ssh_common_args().split() + [f"root@{node['mgmt_address']}"]


def tool_wrappers(info, name):
    """{program: wrapper text} of a node's real LLDP client, bound to the node's own lldpd socket."""
    sock = info["paths"]["daemons"][name]["lldp_socket"]
    out = {}
    for tool in ("lldpcli", "lldpctl"):
        out[tool] = ("#!/bin/sh\n"
                     f"# zhisuan lab: the real {tool}, talking to the lldpd of node {name} (generated by lab/net/netlab.py)\n"
                     f'exec /usr/sbin/{tool} -u {sock} "$@"\n')
    return out


def host_vars(info, name, python):
    """The inventory host vars that send Ansible to node ``name`` over SSH."""
    node = info["plan"]["nodes"][name]
    d = info["paths"]["daemons"][name]
    return {
        "ansible_connection": "ssh",
        "ansible_host": node["mgmt_address"],
        "ansible_user": "root",
        "ansible_ssh_private_key_file": info["paths"]["key"],
        "ansible_ssh_common_args": ssh_common_args(),
        "ansible_control_path_dir": info["paths"]["control_path_dir"],
        "ansible_python_interpreter": python,
        "ansible_pipelining": True,
        "zhisuan_fabric_address": node["fabric_address"],
        "zhisuan_cabling_plan": info["cabling_plan"],
        "zhisuan_lldp_socket": d["lldp_socket"],
    }
