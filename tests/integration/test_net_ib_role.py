# SPDX-License-Identifier: GPL-3.0-or-later
"""check_net with an InfiniBand cabling plan: the play's first node runs iblinkinfo (the REAL capture of an EDR
fabric, its CA names edited to the play's nodes), fabric_consistency judges the plan's IB links against that view.
Fault: node02's cable pulled - its switch port reads Down/Polling as the capture's idle ports do."""

from __future__ import annotations

import os
import re

import yaml

from .conftest import REPO, checks_by_status, run_playbook
from .test_net_role import FIXTURES, RDMA, _node, _script

IB_PLAN = {"links": [{"node": node, "port": port, "switch": "leaf01", "switch_port": swp}
                     for node in ("node01", "node02") for port, swp in (("eth0", "swp1"), ("eth1", "swp2"))]
           + [{"node": "node01", "port": "HCA-1/1", "switch": "ib-leaf01", "switch_port": 18},
              {"node": "node02", "port": "HCA-1/1", "switch": "ib-leaf01", "switch_port": 17}],
           "switches": {"leaf01": {"tier": "leaf", "uplink": "spine01"},
                        "ib-leaf01": {"tier": "leaf", "guid": "0x506b4b0300820910"}}}


def _capture(pulled):
    with open(os.path.join(FIXTURES, "ib", "iblinkinfo-edr-sb7700-2ca-1switch.txt")) as handle:
        text = handle.read().replace('"n01 HCA-1"', '"node01 HCA-1"').replace('"n02 HCA-1"', '"node02 HCA-1"')
        text = text.replace("CA: n02 HCA-1:", "CA: node02 HCA-1:")
    if pulled:
        lines = text.splitlines(True)
        down = [line for line in lines if re.match(r"^\s+2\s+5\[", line)][0]
        text = "".join(down.replace("    5[", "   17[") if "   17[  ] ==( 4X" in line else line for line in lines)
        # the CA's own view goes with it: its port is no longer linked
        text = "".join(line for line in text.splitlines(True) if "0xec0d9a03003d62be" not in line)
    return text


def test_check_net_role_judges_ib_cabling_from_the_fabric_view(tmp_path):
    empty = tmp_path / "empty.log"
    empty.write_text("")
    plan = tmp_path / "cabling-plan.yml"
    plan.write_text(yaml.safe_dump(IB_PLAN))
    capture = tmp_path / "iblinkinfo.txt"
    capture.write_text(_capture(pulled=True))
    hosts = {name: _node(tmp_path, name, [], "ip-j-link-veth-netns.json", "lldpcli-json-show-neighbors-2if.json", empty)
             for name in ("node01", "node02")}
    for name, host in hosts.items():
        host["zhisuan_tools"]["iblinkinfo"] = _script(tmp_path / name / "iblinkinfo", "cat %s\n" % capture)
        host["zhisuan_tools"].pop("dmesg")  # preflight refuses an empty tool path; journalctl is read first anyway
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(yaml.safe_dump({"all": {"children": {"gpu_nodes": {"hosts": hosts}}, "vars": {
        "zhisuan_cabling_plan": str(plan),
        "zhisuan_expected": {"net": {"interfaces": ["eth0", "eth1"], "hcas": 9, "rate_gbps": 400, "rdma_devices": RDMA}},
    }}}))
    runner, document = run_playbook(tmp_path, os.path.join(REPO, "tests", "integration", "playbooks", "net.yml"),
                                    str(inventory))
    assert runner.rc == 0, runner.stdout.read()
    assert checks_by_status(document, "node01") == [], [c["message"] for c in document["hosts"]["node01"]["checks"] if c["status"] != "pass"]
    assert checks_by_status(document, "node02") == [("cabling.ib.hca_1_1.neighbor", "fail", "HCA-1/1", "check_cable")]
    passed = [c for c in document["hosts"]["node01"]["checks"] if c["id"] == "cabling.ib.hca_1_1.neighbor"]
    assert [c["status"] for c in passed] == ["pass"]
    links = document["cluster"]["fabric"]["cabling"]["links"]
    assert [(item["node"], item["port"], item["status"]) for item in links if "/" in item["port"]] == [
        ("node01", "HCA-1/1", "ok"), ("node02", "HCA-1/1", "missing")]
