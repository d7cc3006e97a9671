# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The SSH lab's pure parts (lab/net/netplan.py and the text/vars netlab.py writes): the scenario's ``network`` key,
address allocation, the cabling plan, the network faults and what they make of each link; and labctl's validation
of network scenarios (no namespace is created here: see tests/integration/test_ssh_lab.py)."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
LABCTL = REPO / "lab" / "labctl.py"


def _load(name, path):
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


netlab = _load("zhisuan_lab_net", REPO / "lab" / "net" / "netlab.py")
netplan = netlab.netplan
NetError = netplan.NetError

FABRIC = {"transport": "ssh", "leaves": 2, "spine": True, "ports": ["eth0", "eth1"], "mtu": 9000}
NAMES = [f"node{i:02d}" for i in range(1, 9)]


def plan_of(network=None, names=None):
    return netplan.build_plan(netplan.parse_network(network or FABRIC), names or NAMES)


def test_parse_network_fills_defaults():
    assert netplan.parse_network(None) is None
    assert netplan.parse_network({"transport": "ssh"}) == {
        "transport": "ssh", "leaves": 1, "spine": False, "ports": ["eth0", "eth1"], "mtu": 9000,
        "prefix": "zl-", "mgmt_net": "10.99.0.0/24"}


@pytest.mark.parametrize("doc, message", [
    ([], "network: expected a mapping, got list"),
    ({"transport": "ssh", "spines": 1}, "network: unknown key(s) ['spines']; allowed: ['leaves', 'mgmt_net', 'mtu', "
                                        "'ports', 'prefix', 'spine', 'transport']"),
    ({}, "network: 'transport' must be one of ['ssh'], got None"),
    ({"transport": "local"}, "network: 'transport' must be one of ['ssh'], got 'local'"),
    ({"transport": "ssh", "leaves": 0}, "network: 'leaves' must be an integer 1..16, got 0"),
    ({"transport": "ssh", "leaves": True}, "network: 'leaves' must be an integer 1..16, got True"),
    ({"transport": "ssh", "spine": "yes"}, "network: 'spine' must be true or false, got 'yes'"),
    ({"transport": "ssh", "ports": []}, "network: 'ports' must be a list of 1..8 interface names, got []"),
    ({"transport": "ssh", "ports": ["eth0", "mgmt0"]},
     "network: port 'mgmt0' is not a usable interface name (lower-case letters and digits, at most 15, not lo, "
     "mgmt0 or swp*)"),
    ({"transport": "ssh", "ports": ["swp1"]}, "network: port 'swp1' is not a usable interface name"),
    ({"transport": "ssh", "ports": ["Eth0"]}, "network: port 'Eth0' is not a usable interface name"),
    ({"transport": "ssh", "ports": ["eth0", "eth0"]}, "network: 'ports' has duplicates: ['eth0', 'eth0']"),
    ({"transport": "ssh", "mtu": 1000}, "network: 'mtu' must be an integer 1280..9216, got 1000"),
    ({"transport": "ssh", "prefix": "zl"}, "network: 'prefix' must be a lower-case letter, up to 8 letters/digits "
                                           "and a '-' (e.g. 'zl-'), got 'zl'"),
    ({"transport": "ssh", "mgmt_net": "10.99.0.0/16"}, "network: 'mgmt_net' must be a private IPv4 /24 network, "
                                                       "got '10.99.0.0/16'"),
    ({"transport": "ssh", "mgmt_net": "8.8.8.0/24"}, "network: 'mgmt_net' must be a private IPv4 /24 network"),
    ({"transport": "ssh", "mgmt_net": "nope"}, "network: 'mgmt_net' must be an IPv4 /24 network like "
                                               "'10.99.0.0/24', got 'nope'"),
])
def test_parse_network_errors(doc, message):
    with pytest.raises(NetError) as err:
        netplan.parse_network(doc)
    assert str(err.value).startswith(message)


def test_check_names():
    net = netplan.parse_network(FABRIC)
    netplan.check_names(net, NAMES)
    with pytest.raises(NetError, match=r"node name\(s\) \['leaf02', 'mgmt'\] are the names of the lab's switches"):
        netplan.check_names(net, ["node01", "leaf02", "mgmt"])
    with pytest.raises(NetError, match=r"2 leaves for 1 node\(s\); every leaf needs a node"):
        netplan.check_names(net, ["node01"])
    with pytest.raises(NetError, match="an SSH lab has at most 253 nodes, got 254"):
        netplan.check_names(net, [f"n{i}" for i in range(254)])


def test_plan_addresses_and_leaf_blocks():
    plan = plan_of()
    n1, n4, n5 = plan["nodes"]["node01"], plan["nodes"]["node04"], plan["nodes"]["node05"]
    assert (n1["ns"], n1["mgmt_address"], n1["fabric_address"], n1["leaf"]) == ("zl-node01", "10.99.0.1", "10.10.0.1", "leaf01")
    assert n1["ports"] == {"eth0": {"rail": 0, "switch": "leaf01", "switch_port": "swp1", "address": "10.10.0.1/24"},
                           "eth1": {"rail": 1, "switch": "leaf01", "switch_port": "swp2", "address": "10.10.1.1/24"}}
    assert n4["ports"]["eth1"]["switch_port"] == "swp8" and n4["leaf"] == "leaf01"
    assert n5["leaf"] == "leaf02" and n5["ports"]["eth0"]["switch_port"] == "swp1"
    assert n5["ports"]["eth1"]["address"] == "10.10.1.5/24" and n5["mgmt_address"] == "10.99.0.5"
    assert plan["mgmt"] == {"ns": "zl-mgmt", "root_if": "zl-mgmt", "root_address": "10.99.0.254", "prefixlen": 24}
    assert netplan.namespaces(plan) == [f"zl-node{i:02d}" for i in range(1, 9)] + [
        "zl-leaf01", "zl-leaf02", "zl-spine01", "zl-mgmt"]


def test_plan_uneven_blocks_and_no_spine():
    plan = plan_of({"transport": "ssh", "leaves": 3, "ports": ["ib0"], "prefix": "t1-", "mgmt_net": "192.168.7.0/24"},
                   ["a", "b", "c", "d", "e"])
    assert [plan["nodes"][n]["leaf"] for n in "abcde"] == ["leaf01", "leaf01", "leaf02", "leaf02", "leaf03"]
    assert [plan["nodes"][n]["ports"]["ib0"]["switch_port"] for n in "abcde"] == ["swp1", "swp2", "swp1", "swp2", "swp1"]
    assert plan["nodes"]["e"]["mgmt_address"] == "192.168.7.5" and plan["mgmt"]["root_address"] == "192.168.7.254"
    assert set(plan["switches"]) == {"leaf01", "leaf02", "leaf03"}
    assert "uplink" not in plan["switches"]["leaf01"] and plan["switches"]["leaf03"]["ns"] == "t1-leaf03"


def test_cabling_plan_is_the_intended_wiring():
    cabling = netplan.cabling_plan(plan_of())
    assert cabling["mtu"] == 9000
    assert cabling["switches"] == {
        "leaf01": {"tier": "leaf", "uplink": "spine01", "uplink_port": "swp9", "spine_port": "swp1"},
        "leaf02": {"tier": "leaf", "uplink": "spine01", "uplink_port": "swp9", "spine_port": "swp2"},
        "spine01": {"tier": "spine"}}
    assert len(cabling["links"]) == 16
    assert cabling["links"][3] == {"node": "node02", "port": "eth1", "switch": "leaf01", "switch_port": "swp4"}
    assert cabling["links"][-1] == {"node": "node08", "port": "eth1", "switch": "leaf02", "switch_port": "swp8"}
    # YAML round trip: what labctl writes is what a reader gets back
    assert yaml.safe_load(yaml.safe_dump(cabling)) == cabling


def fault(kind, **params):
    return netplan_normalize(dict(kind=kind, **params))


def netplan_normalize(raw):
    common = sys.modules["_common"]
    return common.normalize_fault(raw, netplan.FAULT_KINDS)


def test_link_states_apply_faults():
    plan = plan_of()
    states = netplan.link_states(plan, {
        "node02": [fault("miswire", port="eth1")],
        "node03": [fault("miswire", port="eth0", switch_port="swp12")],
        "node04": [fault("mtu", port="eth0", value=1500), {"kind": "xid", "gpu": 0, "code": 79, "text": ""}],
        "node05": [fault("cable_down", port="eth1")],
        "node06": [fault("miswire", port="eth0")],
    })
    assert states[("node01", "eth0")] == {
        "switch": "leaf01", "planned_port": "swp1", "switch_port": "swp1", "up": True, "node_mtu": 9000}
    # default landing port: the lowest the plan (node ports 1-8, uplink 9) and the explicit miswires leave free
    assert states[("node02", "eth1")]["switch_port"] == "swp10"
    assert states[("node03", "eth0")]["switch_port"] == "swp12"
    assert states[("node06", "eth0")]["switch_port"] == "swp10" and states[("node06", "eth0")]["switch"] == "leaf02"
    assert states[("node04", "eth0")]["node_mtu"] == 1500 and states[("node04", "eth1")]["node_mtu"] == 9000
    assert states[("node05", "eth1")]["up"] is False and states[("node05", "eth0")]["up"] is True


@pytest.mark.parametrize("faults, message", [
    ({"node02": [fault("miswire", port="eth1", switch_port="swp9")]},
     "network: node node02: miswire eth1: leaf01 swp9 is already cabled (planned or another miswire); pick a free port"),
    ({"node02": [fault("miswire", port="eth1", switch_port="swp11")],
      "node03": [fault("miswire", port="eth0", switch_port="swp11")]},
     "network: node node03: miswire eth0: leaf01 swp11 is already cabled (planned or another miswire); pick a free port"),
    ({"node04": [fault("mtu", port="eth0", value=9000)]},
     "network: node node04: mtu eth0: value 9000 is the plan's MTU; a fault must differ"),
    ({"node05": [fault("cable_down", port="eth1"), fault("cable_down", port="eth1")]},
     "network: node node05: cable_down eth1: given twice"),
])
def test_link_states_errors(faults, message):
    with pytest.raises(NetError) as err:
        netplan.link_states(plan_of(), faults)
    assert str(err.value) == message


def test_check_fault():
    node = {"net_ports": ["eth0", "eth1"]}
    netplan.check_fault(fault("mtu", port="eth1", value=1500), node)
    with pytest.raises(NetError) as err:
        netplan.check_fault(fault("cable_down", port="eth0"), {"gpus": 8}, "faults[0]")
    assert str(err.value) == ("faults[0]: fault 'cable_down' is a network fault; it needs a scenario with a 'network' "
                              "(the SSH lab)")
    with pytest.raises(NetError, match=r"fault 'miswire': port 'eth2' is not one of the node's ports \['eth0', 'eth1'\]"):
        netplan.check_fault(fault("miswire", port="eth2"), node)
    with pytest.raises(NetError, match="fault 'miswire': switch_port must be swp1..swp9999, got 'Ethernet1/1'"):
        netplan.check_fault(fault("miswire", port="eth0", switch_port="Ethernet1/1"), node)
    with pytest.raises(NetError, match="fault 'mtu': value must be 1280..9216, got 100"):
        netplan.check_fault(fault("mtu", port="eth0", value=100), node)


def test_generated_texts():
    plan = plan_of()
    hosts = netplan.hosts_text(plan, "/tmp/lab", "leaf01").splitlines()
    assert hosts[0] == "# zhisuan lab /tmp/lab" and "127.0.1.1\tleaf01" in hosts
    assert "10.99.0.8\tnode08" in hosts and "10.10.1.8\tnode08-eth1" in hosts
    paths = {"authorized_keys": "/l/net/authorized_keys", "daemons": {"node03": {"dir": "/l/net/node03"}}}
    config = netlab.sshd_config(plan["nodes"]["node03"], paths).splitlines()
    for line in ("ListenAddress 10.99.0.3", "HostKey /l/net/node03/ssh_host_ed25519_key", "UsePAM no",
                 "PermitRootLogin prohibit-password", "PasswordAuthentication no",
                 "AuthorizedKeysFile /l/net/authorized_keys", "PidFile /l/net/node03/sshd.pid"):
        assert line in config
    assert netlab.lldpd_config("leaf01", "leaf").splitlines()[1:] == [
        "configure lldp tx-interval 1", "configure lldp portidsubtype ifname"]
    assert netlab.lldpd_config("node01", "node").splitlines()[1:] == ["configure lldp tx-interval 1"]


def test_host_vars_and_ssh_argv():
    plan = plan_of()
    info = {"plan": plan, "cabling_plan": "/l/cabling-plan.yml",
            "paths": {"key": "/l/net/id_ed25519", "control_path_dir": "/l/net/cp",
                      "daemons": {"node02": {"lldp_socket": "/l/net/node02/lldpd.sock"}}}}
    hv = netlab.host_vars(info, "node02", "/venv/bin/python")
    assert hv == {
        "ansible_connection": "ssh", "ansible_host": "10.99.0.2", "ansible_user": "root",
        "ansible_ssh_private_key_file": "/l/net/id_ed25519",
        "ansible_ssh_common_args": "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o IdentitiesOnly=yes "
                                   "-o LogLevel=ERROR",
        "ansible_control_path_dir": "/l/net/cp", "ansible_python_interpreter": "/venv/bin/python",
        "ansible_pipelining": True, "zhisuan_fabric_address": "10.10.0.2", "zhisuan_cabling_plan": "/l/cabling-plan.yml",
        "zhisuan_lldp_socket": "/l/net/node02/lldpd.sock"}
    assert netlab.ssh_argv(info, "node02")[-1] == "root@10.99.0.2"
    assert netlab.tool_wrappers(info, "node02")["lldpcli"].splitlines()[-1].endswith(
        ' -u /l/net/node02/lldpd.sock "$@"')


def test_control_path_dir_stays_short(tmp_path):
    plan = plan_of()
    assert netlab._paths("/tmp/lab", plan)["control_path_dir"] == "/tmp/lab/net/cp"
    deep = "/tmp/" + "d" * 70
    cp = netlab._paths(deep, plan)["control_path_dir"]
    assert cp.startswith("/tmp/zl-cp-") and len(cp) == len("/tmp/zl-cp-") + 10
    assert netlab._paths(deep, plan)["daemons"]["leaf01"]["lldp_socket"].startswith("/run/zl-lab/")
    with pytest.raises(NetError, match="is too long for the lldpd socket path /run/zl-lab/"):
        netlab._paths("/tmp/lab", plan_of(names=["n" * 80]))


# ------------------------------------------------------------------------ labctl: validation of network scenarios

def labctl(*args):
    return subprocess.run([sys.executable, str(LABCTL), *map(str, args)], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("body, message", [
    ({"nodes": {"n1": {"faults": [{"kind": "miswire", "port": "eth0"}]}}},
     "node n1: faults[0]: fault 'miswire' is a network fault; it needs a scenario with a 'network' (the SSH lab)"),
    ({"network": {"transport": "ssh", "mtu": 100}, "nodes": {"n1": {}}}, "network: 'mtu' must be an integer 1280..9216"),
    ({"network": {"transport": "ssh"}, "nodes": {"n1": {"faults": [{"kind": "cable_down", "port": "eth3"}]}}},
     "node n1: faults[0]: fault 'cable_down': port 'eth3' is not one of the node's ports ['eth0', 'eth1']"),
    ({"network": {"transport": "ssh"}, "nodes": {"n1": {"faults": [{"kind": "mtu", "port": "eth0"}]}}},
     "node n1: faults[0]: fault 'mtu' is missing parameter(s) ['value']"),
    ({"network": {"transport": "ssh", "leaves": 2}, "nodes": {"n1": {}}},
     "network: 2 leaves for 1 node(s); every leaf needs a node"),
    ({"network": {"transport": "ssh"}, "nodes": {"n1": {"faults": [{"kind": "miswire", "port": "eth0", "switch_port": "swp2"}]}}},
     "network: node n1: miswire eth0: leaf01 swp2 is already cabled"),
])
def test_bad_network_scenario(tmp_path, body, message):
    scen = tmp_path / "bad.yml"
    scen.write_text(yaml.safe_dump({"name": "bad", **body}))
    res = labctl("up", "--scenario", scen, "--dir", tmp_path / "run", "--inventory", tmp_path / "hosts.yml")
    assert res.returncode == 1
    assert f"scenario {scen}" in res.stderr and message in res.stderr, res.stderr
    assert not (tmp_path / "run").exists() and not (tmp_path / "hosts.yml").exists()


def test_fabric_scenario_validates():
    labmod = _load("zhisuan_labctl_for_netlab_tests", LABCTL)
    scenario = labmod.load_scenario(REPO / "lab" / "scenarios" / "fabric.yml")
    assert scenario["network"] == {"transport": "ssh", "leaves": 2, "spine": True, "ports": ["eth0", "eth1"],
                                   "mtu": 9000, "prefix": "zl-", "mgmt_net": "10.99.0.0/24"}
    faults = dict((n["name"], [f for f in n["faults"] if f["kind"] in netplan.FAULT_KINDS]) for n in scenario["nodes"])
    assert faults["node02"] == [{"kind": "miswire", "port": "eth1", "switch_port": ""}]
    assert faults["node04"] == [{"kind": "mtu", "port": "eth0", "value": 1500}]
    assert faults["node05"] == [{"kind": "cable_down", "port": "eth1"}]
    plan = labmod.check_network(scenario["network"], scenario["nodes"], "network")
    assert netplan.link_states(plan, faults)[("node02", "eth1")]["switch_port"] == "swp10"
