# SPDX-License-Identifier: GPL-3.0-or-later
"""The check_net role end to end on two local nodes: tools that replay real captures (the lab's ethtool -m and
ibstat simulators with faults, captured ip/ethtool/lldpctl/syslog output), a cabling plan, results.json checked."""

from __future__ import annotations

import json
import os
import stat
import sys

import yaml

from .conftest import REPO, checks_by_status, run_playbook

FIXTURES = os.path.join(REPO, "tests", "fixtures")
SIM = os.path.join(REPO, "lab", "sim")

PLAN = {"links": [{"node": node, "port": port, "switch": "leaf01", "switch_port": swp}
                  for node in ("node01", "node02") for port, swp in (("eth0", "swp1"), ("eth1", "swp2"))],
        "switches": {"leaf01": {"tier": "leaf", "uplink": "spine01"}}}
RDMA = ["mlx5_0", "mlx5_1", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7", "mlx5_8", "mlx5_9"]


def _script(path, body):
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def fx(*parts):
    return os.path.join(FIXTURES, *parts)


def _node(tmp_path, name, faults, links, lldp, syslog):
    base = tmp_path / name
    base.mkdir()
    state = base / "state.json"
    state.write_text(json.dumps({"schema": 1, "node": name, "index": 1, "gpus": 8, "faults": faults}))
    sim = "%s -I -S %s/%%s --state %s" % (sys.executable, SIM, state)
    tools = {
        "ethtool": _script(base / "ethtool", 'case "$1" in\n  -m) exec %s "$@" ;;\n  -i) cat %s ;;\n  -S) cat %s ;;\n'
                           '  eth1) cat %s ;;\n  *) cat %s ;;\nesac\n' % (
                               sim % "ethtool.py", fx("ethtool", "ethtool-i-veth-eth0.txt"), fx("ethtool", "ethtool-S-veth-eth0.txt"),
                               fx("ethtool", "ethtool-veth-eth1-nocarrier-settings.txt" if "nocarrier" in links
                                  else "ethtool-veth-eth0-settings.txt"), fx("ethtool", "ethtool-veth-eth0-settings.txt"))),
        "ip": _script(base / "ip", "cat %s\n" % fx("ip", links)),
        "ibstat": _script(base / "ibstat", 'exec %s "$@"\n' % (sim % "ibstat.py")),
        "lldpctl": _script(base / "lldpctl", "cat %s\n" % fx("lldp", lldp)),
        "journalctl": _script(base / "journalctl", "cat %s\n" % syslog),
        "dmesg": "",
    }
    return {"ansible_connection": "local", "ansible_python_interpreter": sys.executable, "zhisuan_tools": tools}


def test_check_net_role(tmp_path):
    empty = tmp_path / "empty.log"
    empty.write_text("")
    plan = tmp_path / "cabling-plan.yml"
    plan.write_text(yaml.safe_dump(PLAN))
    hosts = {
        "node01": _node(tmp_path, "node01", [], "ip-j-link-veth-netns.json", "lldpcli-json-show-neighbors-2if.json", empty),
        "node02": _node(tmp_path, "node02", [{"kind": "dirty_optic", "port": "eth0", "rx_dbm": -16.2},
                                             {"kind": "ib_port_down", "device": "mlx5_1"}],
                        "ip-j-link-veth-nocarrier.json", "lldpcli-json-show-neighbors-2if-renamed-swp7.json",
                        os.path.join(FIXTURES, "kernel-log", "syslog-ib-link-flap-ib6.txt")),
    }
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(yaml.safe_dump({"all": {"children": {"gpu_nodes": {"hosts": hosts}}, "vars": {
        "zhisuan_cabling_plan": str(plan),
        "zhisuan_expected": {"net": {"interfaces": ["eth0", "eth1"], "hcas": 9, "rate_gbps": 400, "rdma_devices": RDMA}},
    }}}))
    runner, document = run_playbook(tmp_path, os.path.join(REPO, "tests", "integration", "playbooks", "net.yml"),
                                    str(inventory))
    assert runner.rc == 0, runner.stdout.read()
    assert checks_by_status(document, "node01") == []
    assert document["hosts"]["node01"]["status"] == "pass"
    assert checks_by_status(document, "node02") == [
        ("cabling.eth1.neighbor", "fail", "eth1", "check_cable"),
        ("nic.link.state", "fail", "eth1", "check_cable"),
        ("nic.optic.alarm", "fail", "eth0", "clean_optic"),
        ("nic.optic.rx_power", "fail", "eth0", "clean_optic"),
        ("rdma.port.state", "fail", "mlx5_1 port 1", "check_cable"),
    ]
    assert document["hosts"]["node02"]["facts"]["net"]["interfaces"]["eth0"]["rx_power_dbm"] == -16.2
    links = document["cluster"]["fabric"]["cabling"]["links"]
    assert [(item["node"], item["port"], item["status"]) for item in links] == [
        ("node01", "eth0", "ok"), ("node01", "eth1", "ok"), ("node02", "eth0", "ok"), ("node02", "eth1", "miswired")]
    cluster = dict(((c["id"], c["component"]), c["status"]) for c in document["cluster"]["checks"])
    assert cluster[("nic.mtu.consistency", "rail eth1")] == "pass"
    assert cluster[("rdma.rate.consistency", "rail mlx5_1")] == "fail"
    rate = [c for c in document["cluster"]["checks"] if c["id"] == "rdma.rate.consistency" and c["component"] == "rail mlx5_1"]
    assert rate[0]["message"] == "Link rate (Gb/s) on rail mlx5_1 differs from the best node (400.0) on 1 node(s): node02 has 10.0"
