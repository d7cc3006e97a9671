# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The lab's simulated dcgmi (lab/sim/dcgmi.py) through labctl in a temporary directory: the real T4 capture
replayed per GPU, levels 1-4, the dcgm_fail fault, a hung dcgmi, and scenario validation."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import dcgm
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import dcgm as rules

REPO = Path(__file__).resolve().parents[2]
LABCTL = REPO / "lab" / "labctl.py"
FIXTURES = REPO / "tests" / "fixtures" / "dcgm"
CAPTURE = FIXTURES / "dcgmi-diag-r3-j-tesla-t4-pass.json"
DEPLOYMENT = ["Denylist", "NVML Library", "CUDA Main Library", "Permissions and OS Blocks", "Persistence Mode",
              "Environment Variables", "Page Retirement/Row Remap", "Graphics Processes", "Inforom"]
PER_GPU = ["PCIe", "GPU Memory", "Diagnostic", "EUD Test", "Targeted Stress", "Targeted Power", "Memory Bandwidth"]

SCENARIO = {
    "name": "dcgm",
    "defaults": {"model": "a100", "gpus": 8},
    "nodes": {
        "ok01": {},
        "one01": {"gpus": 1},
        "mem01": {"faults": [{"kind": "dcgm_fail", "test": "memory", "gpu": 2}]},
        "pm01": {"gpus": 2, "faults": [{"kind": "dcgm_fail", "test": "Persistence Mode", "gpu": 1,
                                        "warning": "Persistence mode for GPU 1 is disabled."}]},
        "hang01": {"faults": [{"kind": "hang", "tool": "dcgmi"}]},
    },
}


def load_sim():
    spec = importlib.util.spec_from_file_location("zhisuan_test_sim_dcgmi", REPO / "lab" / "sim" / "dcgmi.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def labctl(*args):
    return subprocess.run([sys.executable, str(LABCTL), *map(str, args)], capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("dcgmlab")
    scenario = tmp / "dcgm.yml"
    scenario.write_text(yaml.safe_dump(SCENARIO))
    res = labctl("up", "--scenario", scenario, "--dir", tmp / "run", "--inventory", tmp / "hosts.yml")
    assert res.returncode == 0, res.stderr
    hosts = yaml.safe_load((tmp / "hosts.yml").read_text())["all"]["children"]["gpu_nodes"]["hosts"]
    yield hosts
    labctl("down", "--dir", tmp / "run")


def dcgmi(hosts, node, *args, timeout=30):
    return subprocess.run([hosts[node]["zhisuan_tools"]["dcgmi"], *args], capture_output=True, timeout=timeout)


def names(facts):
    return [test["name"] for test in facts["tests"]]


def test_wrapper_per_node(lab):
    for name, hv in lab.items():
        wrapper = Path(hv["zhisuan_tools"]["dcgmi"])
        assert wrapper.name == "dcgmi" and os.access(wrapper, os.X_OK)
        assert wrapper.parent == Path(hv["zhisuan_tools"]["nvidia_smi"]).parent


def test_one_gpu_node_replays_the_capture(lab):
    r = dcgmi(lab, "one01", "diag", "-r", "3", "-j")
    assert r.returncode == 0 and r.stderr == b""
    capture = CAPTURE.read_text().splitlines()
    out = r.stdout.decode().splitlines()
    # Only the capture's hand-touched line differs: dcgmi prints '"status" : ', as on every other line.
    assert [(i, a, b) for i, (a, b) in enumerate(zip(capture, out)) if a != b] == [
        (32, '\t\t\t\t\t\t\t\t"status": "Pass"', '\t\t\t\t\t\t\t\t"status" : "Pass"')]
    assert len(out) == len(capture) and r.stdout.endswith(b"}\n")


def test_writer_prints_real_dcgm4_output_byte_exact():
    sim = load_sim()
    for name in ("dcgmi-diag-r2-j-gb10-4.5.2-plugins-allowed.json", "dcgmi-diag-r2-j-gb10-4.5.2-plugins-gated.json",
                 "dcgmi-health-c-j-healthy.json"):
        raw = (FIXTURES / name).read_text()
        assert sim.dump(json.loads(raw)) == raw, name


def test_eight_gpu_node_per_gpu_results(lab):
    r = dcgmi(lab, "ok01", "diag", "-r", "3", "-j")
    assert r.returncode == 0
    facts = dcgm.parse_diag(r.stdout.decode(), level=3)
    assert names(facts) == DEPLOYMENT + PER_GPU and facts["overall"] == "Pass"
    for test in facts["tests"]:
        expected = [None] if test["name"] in DEPLOYMENT else list(range(8))
        assert [result["gpu"] for result in test["results"]] == expected, test["name"]
    memory = [t for t in facts["tests"] if t["name"] == "GPU Memory"][0]
    assert memory["results"][5]["info"] == ["GPU 5 Allocated 15206918958 bytes (97.3%)"]
    assert [t for t in facts["tests"] if t["name"] == "EUD Test"][0]["results"][7]["status"] == "Skip"


@pytest.mark.parametrize("level, expected", [
    ("1", DEPLOYMENT),
    ("2", DEPLOYMENT + ["PCIe", "GPU Memory"]),
    ("3", DEPLOYMENT + PER_GPU),
    ("4", DEPLOYMENT + PER_GPU),
])
def test_levels(lab, level, expected):
    r = dcgmi(lab, "ok01", "diag", "-r", level, "-j")
    assert r.returncode == 0
    assert names(dcgm.parse_diag(r.stdout.decode())) == expected


def test_gpu_list(lab):
    r = dcgmi(lab, "ok01", "diag", "-r", "2", "-j", "-i", "1,3")
    assert r.returncode == 0
    facts = dcgm.parse_diag(r.stdout.decode())
    assert [result["gpu"] for result in facts["tests"][-1]["results"]] == [1, 3]
    bad = dcgmi(lab, "ok01", "diag", "-r", "2", "-j", "-i", "8")
    assert bad.returncode == 2 and b"GPU ids 0..7 on this node" in bad.stderr


def test_dcgm_fail_fault(lab):
    r = dcgmi(lab, "mem01", "diag", "-r", "3", "-j")
    assert r.returncode == 226
    facts = dcgm.parse_diag(r.stdout.decode(), level=3)
    assert facts["overall"] == "Fail"
    memory = [t for t in facts["tests"] if t["name"] == "GPU Memory"][0]
    assert [x["status"] for x in memory["results"]] == ["Pass", "Pass", "Fail"] + ["Pass"] * 5
    assert memory["results"][2]["warnings"][0]["text"] == (
        "A memory mismatch was detected on GPU 2, but no error was reported by CUDA or NVML.")
    failing = [c for c in rules.judge_dcgm_diag("mem01", facts) if c["status"] != "pass" and c["status"] != "skip"]
    assert [(c["id"], c["component"], c["status"], c["remedy"]) for c in failing] == [
        ("dcgm.memory.result", "GPU 2", "fail", "reset_gpu")]
    # Level 1 does not run the memory test: the fault has nothing to edit.
    assert dcgmi(lab, "mem01", "diag", "-r", "1", "-j").returncode == 0


def test_dcgm_fail_on_a_deployment_test(lab):
    r = dcgmi(lab, "pm01", "diag", "-r", "1", "-j")
    assert r.returncode == 226
    facts = dcgm.parse_diag(r.stdout.decode(), level=1)
    [check] = [c for c in rules.judge_dcgm_diag("pm01", facts) if c["id"] == "dcgm.software.result"]
    assert (check["status"], check["remedy"]) == ("fail", "tune")
    assert "Persistence mode for GPU 1 is disabled." in check["message"]
    assert lab["pm01"]["zhisuan_lab_faults"] == [{"kind": "dcgm_fail", "test": "Persistence Mode", "gpu": 1,
                                                  "warning": "Persistence mode for GPU 1 is disabled."}]


def test_health_replays_the_capture(lab):
    r = dcgmi(lab, "mem01", "health", "-c", "-j")
    assert r.returncode == 0
    assert r.stdout == (FIXTURES / "dcgmi-health-c-j-healthy.json").read_bytes()


def test_hang(lab):
    proc = subprocess.Popen([lab["hang01"]["zhisuan_tools"]["dcgmi"], "diag", "-r", "1", "-j"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            proc.communicate(timeout=2)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    # nvidia-smi of the same node still answers: the hang names dcgmi only.
    smi = subprocess.run([lab["hang01"]["zhisuan_tools"]["nvidia_smi"], "-q", "-x"], capture_output=True, timeout=30)
    assert smi.returncode == 0


@pytest.mark.parametrize("args", [["diag", "-r", "5", "-j"], ["diag", "-r", "3"], ["health", "-c"], ["discovery", "-l"]])
def test_unsupported_arguments(lab, args):
    r = dcgmi(lab, "ok01", *args)
    assert r.returncode == 2 and r.stdout == b""
    assert r.stderr.decode().startswith("lab dcgmi: unsupported arguments: %s (the lab implements only" % " ".join(args))


@pytest.mark.parametrize("fault, message", [
    ({"kind": "dcgm_fail", "test": "Melted", "gpu": 0}, "test 'Melted' is not in the dcgmi capture; known: Denylist"),
    ({"kind": "dcgm_fail", "test": "memory", "gpu": 8}, "fault 'dcgm_fail' names gpu 8, the node has GPUs 0..7"),
    ({"kind": "dcgm_fail", "test": "EUD Test", "gpu": 0}, "test 'EUD Test' has no default warning text; give 'warning'"),
    ({"kind": "dcgm_fail", "gpu": 0}, "fault 'dcgm_fail' is missing parameter(s) ['test'"),
])
def test_bad_fault(tmp_path, fault, message):
    scenario = tmp_path / "bad.yml"
    scenario.write_text(yaml.safe_dump({"name": "bad", "nodes": {"n1": {"faults": [fault]}}}))
    res = labctl("up", "--scenario", scenario, "--dir", tmp_path / "run", "--inventory", tmp_path / "hosts.yml")
    assert res.returncode == 1
    assert "node n1: faults[0]" in res.stderr and message in res.stderr, res.stderr
    assert not (tmp_path / "run").exists()
