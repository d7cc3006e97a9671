# SPDX-License-Identifier: GPL-3.0-or-later
"""The SSH lab for real: `labctl up` of lab/scenarios/fabric.yml builds 8 nodes as network namespaces with their own
hostname, sshd and lldpd, cabled to two leaves and a spine; Ansible reaches every node over SSH; the real lldpd of
each node sees the switch port the plan says (or the miswired one, or none for a pulled cable); `down` leaves
nothing behind. Needs root and the apt packages iproute2, openssh-server, openssh-client, lldpd."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

import pytest
import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
LABCTL = os.path.join(REPO, "lab", "labctl.py")
BIN = os.path.dirname(sys.executable)
# The fabric scenario with its own namespace prefix and management subnet, so this test never meets a lab that
# someone started from fabric.yml as it is (zl-*, 10.99.0.0/24) on the same machine.
PREFIX, MGMT_NET = "zit-", "10.98.0.0/24"
NODES = [f"node{i:02d}" for i in range(1, 9)]
# node -> port -> (switch, port) that the node's lldpd must report
EXPECTED = dict((n, {"eth0": (f"leaf0{1 + (i - 1) // 4}", f"swp{2 * ((i - 1) % 4) + 1}"),
                     "eth1": (f"leaf0{1 + (i - 1) // 4}", f"swp{2 * ((i - 1) % 4) + 2}")}) for i, n in enumerate(NODES, 1))
EXPECTED["node02"]["eth1"] = ("leaf01", "swp10")      # miswire: the first port the plan leaves free
del EXPECTED["node05"]["eth1"]                         # cable_down: no neighbour

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the SSH lab creates network namespaces: needs root")


def labctl(*args, timeout=120):
    return subprocess.run([sys.executable, LABCTL, *map(str, args)], capture_output=True, text=True, timeout=timeout)


def neighbours(lab_dir, node):
    """{port: (system name, port id)} from the node's own lldpd (lldpcli's JSON: a mapping or a list of them)."""
    hv = yaml.safe_load(open(os.path.join(os.path.dirname(lab_dir), "hosts.yml"), encoding="utf-8"))
    sock = hv["all"]["children"]["gpu_nodes"]["hosts"][node]["zhisuan_lldp_socket"]
    res = subprocess.run(["ip", "netns", "exec", PREFIX + node, "lldpcli", "-u", sock, "-f", "json", "show", "neighbors"],
                         capture_output=True, text=True, timeout=20)
    assert res.returncode == 0, (node, res.stderr)
    interfaces = json.loads(res.stdout)["lldp"].get("interface", [])
    out = {}
    for entry in interfaces if isinstance(interfaces, list) else [interfaces]:
        for port, data in entry.items():
            out[port] = (next(iter(data["chassis"])), data["port"]["id"]["value"])
    return out


def ansible_adhoc(tmp_path, inventory, module, args=""):
    """Run one module on every node with ansible-runner (ad hoc); return {host: result} of the ok events."""
    import ansible_runner

    tmp_path.mkdir()
    runner = ansible_runner.run(private_data_dir=str(tmp_path), inventory=str(inventory), host_pattern="gpu_nodes",
                                module=module, module_args=args, quiet=True, timeout=120,
                                envvars={"ANSIBLE_CONFIG": os.path.join(REPO, "ansible.cfg"),
                                         "PATH": BIN + os.pathsep + os.environ["PATH"]})
    results = dict((ev["event_data"]["host"], ev["event_data"]["res"]) for ev in runner.events
                   if ev.get("event") == "runner_on_ok")
    return runner.rc, results


@pytest.fixture(scope="module")
def fabric(tmp_path_factory):
    for program in ("ip", "sshd", "ssh", "lldpd", "lldpcli"):
        assert shutil.which(program), f"{program} missing: apt install iproute2 openssh-server openssh-client lldpd"
    tmp = tmp_path_factory.mktemp("ssh")
    doc = yaml.safe_load(open(os.path.join(REPO, "lab", "scenarios", "fabric.yml"), encoding="utf-8"))
    doc["network"].update(prefix=PREFIX, mgmt_net=MGMT_NET)
    scenario = tmp / "fabric.yml"
    scenario.write_text(yaml.safe_dump(doc))
    lab_dir, inventory = tmp / "lab", tmp / "hosts.yml"
    res = labctl("up", "--scenario", scenario, "--dir", lab_dir, "--inventory", inventory)
    assert res.returncode == 0, res.stderr
    try:
        yield {"dir": str(lab_dir), "inventory": inventory, "up": res}
    finally:
        labctl("down", "--dir", lab_dir)


def test_inventory_sends_ansible_over_ssh(fabric):
    hosts = yaml.safe_load(fabric["inventory"].read_text())["all"]["children"]["gpu_nodes"]["hosts"]
    assert list(hosts) == NODES
    hv = hosts["node03"]
    assert (hv["ansible_connection"], hv["ansible_host"], hv["ansible_user"]) == ("ssh", "10.98.0.3", "root")
    assert hv["ansible_python_interpreter"] == sys.executable and hv["ansible_pipelining"] is True
    assert "StrictHostKeyChecking=no" in hv["ansible_ssh_common_args"]
    assert hv["ansible_control_path_dir"] == os.path.join(fabric["dir"], "net", "cp")
    assert hv["zhisuan_fabric_address"] == "10.10.0.3"
    plan = yaml.safe_load(open(hv["zhisuan_cabling_plan"], encoding="utf-8"))
    assert {"node": "node02", "port": "eth1", "switch": "leaf01", "switch_port": "swp4"} in plan["links"]
    assert plan["switches"]["leaf02"]["uplink"] == "spine01"


def test_ansible_reaches_every_node_over_ssh_with_its_own_hostname(fabric, tmp_path):
    rc, hosts = ansible_adhoc(tmp_path / "ping", fabric["inventory"], "ansible.builtin.ping")
    assert rc == 0 and sorted(hosts) == NODES
    assert all(result["ping"] == "pong" for result in hosts.values())
    rc, hosts = ansible_adhoc(tmp_path / "hostname", fabric["inventory"], "ansible.builtin.command", "hostname")
    assert rc == 0 and dict((h, r["stdout"]) for h, r in hosts.items()) == dict((n, n) for n in NODES)


def test_lldp_shows_the_plan_the_miswire_and_the_pulled_cable(fabric):
    deadline, seen = time.monotonic() + 20, {}
    while time.monotonic() < deadline:     # lldpd sends every second; wait until every node converged
        seen = dict((node, neighbours(fabric["dir"], node)) for node in NODES)
        if seen == EXPECTED:
            break
        time.sleep(0.5)
    assert seen == EXPECTED


def test_mtu_carrier_and_fabric_seen_from_the_nodes(fabric):
    hv = yaml.safe_load(fabric["inventory"].read_text())["all"]["children"]["gpu_nodes"]["hosts"]

    def ssh(node, command):
        argv = ["ssh", "-i", hv[node]["ansible_ssh_private_key_file"], "-o", "BatchMode=yes"]
        argv += hv[node]["ansible_ssh_common_args"].split() + [f"root@{hv[node]['ansible_host']}", command]
        return subprocess.run(argv, capture_output=True, text=True, timeout=30)

    links = dict((lk["ifname"], lk) for lk in json.loads(ssh("node04", "ip -j link show").stdout))
    assert (links["eth0"]["mtu"], links["eth1"]["mtu"]) == (1500, 9000)
    links = dict((lk["ifname"], lk) for lk in json.loads(ssh("node05", "ip -j link show").stdout))
    assert "NO-CARRIER" in links["eth1"]["flags"] and "LOWER_UP" in links["eth0"]["flags"]
    # across the spine on rail 0: node08's sshd listens on management only, so "refused" proves the path
    probe = ("python3 -c 'import socket\ntry: socket.create_connection((\"10.10.0.8\", 22), timeout=3)\n"
             "except ConnectionRefusedError: print(\"reachable\")'")
    assert ssh("node01", probe).stdout.strip() == "reachable"
    # the simulated tools of the lab still work on an SSH node (same filesystem)
    res = ssh("node03", f"{hv['node03']['zhisuan_tools']['nvidia_smi']} -q -x")
    assert res.returncode == 0 and "<attached_gpus>8</attached_gpus>" in res.stdout


def test_fault_changes_a_running_link_and_status(fabric):
    res = labctl("fault", "--dir", fabric["dir"], "node03", "add", "cable_down", "port=eth0")
    assert res.returncode == 0, res.stderr
    flags = json.loads(subprocess.run(["ip", "-n", PREFIX + "node03", "-j", "link", "show", "eth0"],
                                      capture_output=True, text=True, check=True).stdout)[0]["flags"]
    assert "NO-CARRIER" in flags
    assert labctl("fault", "--dir", fabric["dir"], "node03", "clear").returncode == 0
    flags = json.loads(subprocess.run(["ip", "-n", PREFIX + "node03", "-j", "link", "show", "eth0"],
                                      capture_output=True, text=True, check=True).stdout)[0]["flags"]
    assert "LOWER_UP" in flags
    status = labctl("status", "--dir", fabric["dir"]).stdout
    assert "  node08       netns zit-node08 up, lldpd running, sshd running" in status
    assert "  spine01      netns zit-spine01 up, lldpd running" in status


def test_down_leaves_nothing(tmp_path):
    doc = yaml.safe_load(open(os.path.join(REPO, "lab", "scenarios", "fabric.yml"), encoding="utf-8"))
    doc["network"].update(prefix="zid-", mgmt_net="10.97.0.0/24")
    del doc["nodes"]["node08"]
    (tmp_path / "s.yml").write_text(yaml.safe_dump(doc))
    lab_dir = tmp_path / "lab"
    try:
        _up_twice_then_down(tmp_path, lab_dir)
    finally:
        labctl("down", "--dir", lab_dir)
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    assert "zid-" not in netns
    assert not [d for d in os.listdir("/etc/netns") if d.startswith("zid-")] if os.path.isdir("/etc/netns") else True
    assert subprocess.run(["ip", "link", "show", "zid-mgmt"], capture_output=True).returncode != 0
    left = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if str(lab_dir).encode() in fh.read():
                    left.append(pid)
        except OSError:
            pass
    assert left == [] and not lab_dir.exists() and not (tmp_path / "h.yml").exists()
    assert labctl("down", "--dir", lab_dir).returncode == 0      # idempotent


def _up_twice_then_down(tmp_path, lab_dir):
    assert labctl("up", "--scenario", tmp_path / "s.yml", "--dir", lab_dir, "--inventory", tmp_path / "h.yml").returncode == 0
    assert labctl("up", "--scenario", tmp_path / "s.yml", "--dir", lab_dir, "--inventory", tmp_path / "h.yml").returncode == 0
    # a persistent ssh master, as Ansible leaves one per host: `down` must close it (ssh -O exit)
    hv = yaml.safe_load((tmp_path / "h.yml").read_text())["all"]["children"]["gpu_nodes"]["hosts"]["node01"]
    master = ["ssh", "-i", hv["ansible_ssh_private_key_file"], "-o", "BatchMode=yes", "-o", "ControlMaster=auto",
              "-o", "ControlPersist=300", "-o", f"ControlPath={hv['ansible_control_path_dir']}/m01"]
    res = subprocess.run(master + hv["ansible_ssh_common_args"].split() + [f"root@{hv['ansible_host']}", "hostname"],
                         capture_output=True, text=True, timeout=30)
    assert res.stdout == "node01\n" and os.listdir(hv["ansible_control_path_dir"]), res.stderr
    res = labctl("down", "--dir", lab_dir)
    assert res.returncode == 0, res.stderr
