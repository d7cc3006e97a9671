# SPDX-License-Identifier: GPL-3.0-or-later
"""The lab's optional fabric tools (issue 16): iblinkinfo (the real EDR capture, a node's cable moved onto another
switch port), mlnx_qos (the real trust-dscp capture, trust and DSCP map edits) and the ECN sysfs files (the real
rdma-qos report laid out as files, a priority switched off), read back by the collection's own parsers, and the
scenario checks of labctl."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._judge import _ib_cabling
from ansible_collections.zhisuan.ops.plugins.module_utils._net import ecn, iblinkinfo, qos

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
SIM = os.path.join(REPO, "lab", "sim")
FIXTURES = os.path.join(REPO, "tests", "fixtures")
SWITCH = "MF0;SB7700:MSB7700/U1"


def _read(*parts):
    with open(os.path.join(FIXTURES, *parts), encoding="utf-8") as handle:
        return handle.read()


def _states(tmp_path, faults_by_node):
    """A lab dir's node state files (<dir>/nodes/<node>/state.json); returns the first node's path."""
    paths = []
    for index, (node, faults) in enumerate(faults_by_node.items(), 1):
        folder = tmp_path / "nodes" / node
        folder.mkdir(parents=True)
        (folder / "state.json").write_text(json.dumps({"schema": 1, "node": node, "index": index, "gpus": 8,
                                                       "faults": faults}))
        paths.append(folder / "state.json")
    return paths[0]


def _run(name, state, *args):
    return subprocess.run([sys.executable, "-I", "-S", os.path.join(SIM, name), "--state", str(state)] + list(args),
                          capture_output=True, text=True, timeout=30, check=False)


def test_iblinkinfo_healthy_fabric_is_the_capture(tmp_path):
    state = _states(tmp_path, {"n01": [], "n02": []})
    result = _run("iblinkinfo.py", state)
    assert (result.returncode, result.stdout) == (0, _read("ib", "iblinkinfo-edr-sb7700-2ca-1switch.txt"))
    assert _run("iblinkinfo.py", state, "-l").returncode == 2


def test_iblinkinfo_shows_every_nodes_miswire_whichever_node_runs_it(tmp_path):
    # the fault is on n02; n01 runs iblinkinfo (the play's first node) and sees it
    state = _states(tmp_path, {"n01": [], "n02": [{"kind": "ib_miswire", "switch_port": 5}]})
    result = _run("iblinkinfo.py", state)
    assert result.returncode == 0, result.stderr
    capture = _read("ib", "iblinkinfo-edr-sb7700-2ca-1switch.txt").splitlines()
    lines = result.stdout.splitlines()
    assert len(lines) == len(capture) and sum(a != b for a, b in zip(lines, capture)) == 3
    links = dict((link["host"], link) for link in iblinkinfo.fabric_facts(result.stdout)["links"])
    assert (links["n02"]["switch_port"], links["n02"]["up"], links["n01"]["switch_port"]) == (5, True, 18)
    plan = {"links": [{"node": "n02", "port": "HCA-1/1", "fabric": "ib", "switch": SWITCH, "switch_port": 17}]}
    view = dict(iblinkinfo.fabric_facts(result.stdout), error=None)
    [check] = _ib_cabling.judge_ib_cabling(view, plan)["n02"]
    assert (check["status"], check["remedy"], check["observed"]) == ("fail", "check_cable", "%s port 5" % SWITCH)


def test_mlnx_qos_healthy_port_is_the_capture_and_faults_edit_it(tmp_path):
    faults = [{"kind": "dscp_prio", "port": "eth0", "dscp": 26, "prio": 5},
              {"kind": "qos_trust", "port": "eth1", "trust": "pcp"}]
    state = _states(tmp_path, {"n03": faults})
    capture = _read("qos", "mlnx_qos-i-eth4-trust-dscp-pfc3.txt")
    assert _run("mlnx_qos.py", state, "-i", "eth2").stdout == capture
    eth0 = qos.parse_mlnx_qos(_run("mlnx_qos.py", state, "-i", "eth0").stdout)
    healthy = qos.parse_mlnx_qos(capture)
    assert eth0["trust"] == "dscp" and eth0["dscp2prio"] != healthy["dscp2prio"]
    assert 26 in healthy["dscp2prio"][3] and 26 not in eth0["dscp2prio"][3] and eth0["dscp2prio"][5][0] == 26
    assert sorted(sum(eth0["dscp2prio"].values(), [])) == list(range(64))
    assert qos.parse_mlnx_qos(_run("mlnx_qos.py", state, "-i", "eth1").stdout)["trust"] == "pcp"
    bad = _run("mlnx_qos.py", state, "--trust", "dscp")
    assert bad.returncode == 2 and "unsupported arguments" in bad.stderr


def test_ecn_sysfs_files_are_the_capture_and_ecn_off_clears_one_priority(tmp_path):
    sys.path.insert(0, SIM)
    try:
        import ecn_sysfs  # pylint: disable=import-outside-toplevel
    finally:
        sys.path.remove(SIM)
    ecn_sysfs.write_root(str(tmp_path), ["eth0", "eth1"], [{"kind": "ecn_off", "port": "eth0", "priority": 3,
                                                            "point": "np"}])
    assert (tmp_path / "sys/class/net/eth1/ecn/roce_np/enable/3").read_text() == "1\n"
    assert ecn.read_ecn(str(tmp_path), "eth1") == {"np": list(range(8)), "rp": list(range(8)), "cnp_dscp": 48,
                                                   "errors": []}
    assert ecn.read_ecn(str(tmp_path), "eth0")["np"] == [0, 1, 2, 4, 5, 6, 7]


def _labctl(*args):
    return subprocess.run([sys.executable, os.path.join(REPO, "lab", "labctl.py")] + [str(a) for a in args],
                          capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.parametrize("scenario, message", [
    ("nodes: {n02: {faults: [{kind: ib_miswire, switch_port: 5}]}}",
     "fault 'ib_miswire' belongs to the optional lab simulator 'iblinkinfo'; list it in the scenario's 'optional'"),
    ("optional: [ecn_sysfs]\nnodes: {n01: {}}", "optional 'ecn_sysfs' writes files per network port: it needs a 'network'"),
    ("optional: [iblinkinfo]\nnodes: {n02: {faults: [{kind: ib_miswire, switch_port: 17}]}}",
     "switch_port must be an idle port of the switch (1-16), got 17"),
    ("optional: [iblinkinfo]\nnodes: {node01: {faults: [{kind: ib_miswire, switch_port: 5}]}}",
     "is for a node the fabric capture holds (n01, n02), not 'node01'"),
    ("optional: [nvidia_smi]\nnodes: {n01: {}}", "'optional' must be a list of optional lab simulators"),
])
def test_scenarios_with_optional_tools_are_checked(tmp_path, scenario, message):
    path = tmp_path / "s.yml"
    path.write_text(scenario + "\n")
    result = _labctl("up", "--scenario", path, "--dir", tmp_path / "lab", "--inventory", tmp_path / "hosts.yml")
    assert result.returncode != 0 and message in result.stderr, result.stderr


def test_optional_tools_join_zhisuan_tools_only_when_listed(tmp_path):
    import yaml  # pylint: disable=import-outside-toplevel
    for listed in (False, True):
        folder = tmp_path / str(listed)
        folder.mkdir()
        path = folder / "s.yml"
        path.write_text(("optional: [mlnx_qos]\n" if listed else "") + "nodes: {n01: {}}\n")
        result = _labctl("up", "--scenario", path, "--dir", folder / "lab", "--inventory", folder / "hosts.yml")
        assert result.returncode == 0, result.stderr
        try:
            hosts = yaml.safe_load((folder / "hosts.yml").read_text())["all"]["children"]["gpu_nodes"]["hosts"]
            tools = hosts["n01"]["zhisuan_tools"]
            assert ("mlnx_qos" in tools, "iblinkinfo" in tools, "zhisuan_host_root" in hosts["n01"]) == (listed, False, False)
            assert "nvidia_smi" in tools
        finally:
            _labctl("down", "--dir", folder / "lab")
