# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The lab's nccl-tests and mpirun: the real captures replayed through labctl's wrappers, with value-edited faults."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ansible_collections.zhisuan.ops.plugins.module_utils._net import nccl as parser

REPO = Path(__file__).resolve().parents[2]
LABCTL = REPO / "lab" / "labctl.py"
CAPTURE = REPO / "tests" / "fixtures" / "nccl-tests" / "all_reduce_perf-1node-8xA100-40GB.log"
SCENARIO = {
    "name": "nccl-unit",
    "defaults": {"model": "a100", "gpus": 8},
    "nodes": {
        "n1": {},
        "n2": {"faults": [{"kind": "nccl_slow", "factor": 0.7}]},
        "n3": {"faults": [{"kind": "nccl_wrong", "count": 4}]},
        "n4": {"gpus": 4},
    },
}


def labctl(*args):
    return subprocess.run([sys.executable, str(LABCTL), *map(str, args)], capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    base = tmp_path_factory.mktemp("nccllab")
    scenario = base / "scenario.yml"
    scenario.write_text(yaml.safe_dump(SCENARIO))
    result = labctl("up", "--scenario", scenario, "--dir", base / "lab", "--inventory", base / "hosts.yml")
    assert result.returncode == 0, result.stderr
    yield base
    labctl("down", "--dir", base / "lab")


def _tool(lab, node, tool, *args):
    return subprocess.run([str(lab / "lab" / "nodes" / node / "bin" / tool), *map(str, args)], capture_output=True,
                          text=True, timeout=60)


def test_inventory_names_the_tools(lab):
    hosts = yaml.safe_load((lab / "hosts.yml").read_text())["all"]["children"]["gpu_nodes"]["hosts"]
    tools = hosts["n1"]["zhisuan_tools"]
    for tool in ("all_reduce_perf", "all_gather_perf", "mpirun"):
        assert tools[tool] == str(lab / "lab" / "nodes" / "n1" / "bin" / tool)


def test_healthy_replay_is_the_capture(lab):
    out = _tool(lab, "n1", "all_reduce_perf", "-b", "1", "-e", "8G", "-f", "2", "-g", "8", "-c", "0", "-n", "20", "-w", "5")
    assert out.returncode == 0, out.stderr
    assert out.stdout.replace(" on n1 ", " on localhost ") == CAPTURE.read_text()


def test_slow_node_single_and_in_a_multi_node_run(lab):
    single = parser.parse(_tool(lab, "n2", "all_reduce_perf", "-b", "8G", "-e", "8G", "-g", "8").stdout)
    assert [p["out_of_place"]["busbw"] for p in single["points"]] == [164.68]
    (lab / "hostfile").write_text("n1 slots=8\nn2 slots=8\n")
    out = _tool(lab, "n1", "mpirun", "--hostfile", lab / "hostfile", "-np", 16, "/x/all_reduce_perf", "-b", "8G",
                "-e", "8G", "-g", "1")
    facts = parser.parse(out.stdout)
    assert facts["nodes"] == ["n1", "n2"] and len(facts["devices"]) == 16
    assert facts["points"][-1]["out_of_place"]["busbw"] == 164.68
    healthy = parser.parse(_tool(lab, "n1", "mpirun", "-H", "n1:8,n4:4", "/x/all_gather_perf", "-b", "8G", "-e", "8G",
                                 "-g", "1").stdout)
    assert healthy["points"][-1]["out_of_place"]["busbw"] == 223.39 and len(healthy["devices"]) == 12


def test_wrong_values(lab):
    facts = parser.parse(_tool(lab, "n3", "all_gather_perf", "-b", "1G", "-e", "8G", "-g", "8").stdout)
    assert facts["out_of_bounds"] == 4 and facts["out_of_bounds_ok"] is False


@pytest.mark.parametrize("node, tool, args, rc, err", [
    ("n4", "all_reduce_perf", ["-g", "8"], 3, "lab all_reduce_perf: -g 8: the node has 4 GPUs\n"),
    ("n1", "all_reduce_perf", ["-z", "1"], 2, "lab all_reduce_perf: unsupported arguments: -z 1 (the lab implements "
                                              "-b -e -f -g -c -n -w)\n"),
    ("n1", "mpirun", ["-H", "n1:8,nX:8", "/x/all_reduce_perf", "-g", "1"], 3, "is not a node of this lab"),
    ("n1", "mpirun", ["-H", "n1:8,n2:8", "-np", "8", "/x/all_reduce_perf", "-g", "1"], 3,
     "lab mpirun: mpirun: -np 8 but the hosts give 16 slots (the lab runs exactly one rank per slot)\n"),
])
def test_errors(lab, node, tool, args, rc, err):
    out = _tool(lab, node, tool, *args)
    assert out.returncode == rc and err in out.stderr and out.stdout == ""


def test_bad_fault_fails_at_up(tmp_path):
    scenario = tmp_path / "s.yml"
    scenario.write_text(yaml.safe_dump({"nodes": {"n1": {"faults": [{"kind": "nccl_slow", "factor": 1.5}]}}}))
    result = labctl("up", "--scenario", scenario, "--dir", tmp_path / "lab", "--inventory", tmp_path / "h.yml")
    assert result.returncode != 0
    assert "faults[0]: 'factor' must be in (0, 1] (0.7 = 30 % low), got 1.5" in result.stderr
