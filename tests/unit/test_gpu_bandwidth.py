# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Host<->device and device<->device bandwidth (issue 16): nvbandwidth's real 8x H800 output parsed, judged against
the model profiles' floors (shared/REFERENCE.md 1c, AzNHC check_gpu_bw), faults made by editing the capture, the
collect path with real programs behind the runner seam, and the lab simulator's bandwidth_low fault end to end."""

from __future__ import annotations

import json
import os
import stat
import sys

import pytest
from hypothesis import given

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError, ToolFailed
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import nvbandwidth
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu.bandwidth_collect import DEFAULT_TESTCASES, run_nvbandwidth
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import bandwidth as rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge.gpu import merge_profile
from ansible_collections.zhisuan.ops.plugins.plugin_utils._judging import Context, judge_collected
from ansible_collections.zhisuan.ops.plugins.plugin_utils._profiles import load_profiles

from fuzzing import FUZZ, assert_total, text_mutations

HERE = os.path.dirname(__file__)
REPO = os.path.abspath(os.path.join(HERE, os.pardir, os.pardir))
FIXTURE = os.path.join(HERE, os.pardir, "fixtures", "nvbandwidth", "nvbandwidth-v0.2-h800x8-525.105.17-ce.txt")
with open(FIXTURE, encoding="utf-8") as _handle:
    CAPTURE = _handle.read()
PROFILES = load_profiles()
H2D_ROW = "0     55.28     55.30     55.32     55.30     55.31     55.34     55.32     55.34"


def judged(text, profile="h800", thresholds=None):
    profile = PROFILES[profile] if isinstance(profile, str) else profile
    return rules.judge_bandwidth("h800node", nvbandwidth.parse(text), profile, thresholds=thresholds)


def brief(checks, check_id):
    return [(c["component"].split(" (")[0], c["status"], c["observed"], c["remedy"]) for c in checks
            if c["id"] == check_id]


# ------------------------------------------------------------------------------------------------ parser

def test_real_capture_parses():
    facts = nvbandwidth.parse(CAPTURE)
    assert (facts["version"], facts["driver_version"], facts["cuda_runtime_version"]) == ("v0.2", "525.105.17", "11080")
    assert [d["name"] for d in facts["devices"]] == ["NVIDIA H800"] * 8
    assert list(facts["testcases"]) == ["host_to_device_memcpy_ce", "device_to_host_memcpy_ce",
                                        "host_to_device_bidirectional_memcpy_ce", "device_to_host_bidirectional_memcpy_ce",
                                        "device_to_device_memcpy_read_ce", "device_to_device_memcpy_write_ce"]
    assert facts["unparsed"] == [] and facts["waived"] == 0
    assert nvbandwidth.per_gpu(facts, "host_to_device_memcpy_ce")[1] == 55.30
    assert facts["testcases"]["device_to_host_memcpy_ce"]["sum"] == 441.05
    pairs = nvbandwidth.pairs(facts, "device_to_device_memcpy_read_ce")
    assert len(pairs) == 56 and min(pairs, key=lambda p: p[2]) == (0, 4, 171.88)


@pytest.mark.parametrize("text, says", [
    ("\x00\x07", "binary data"),
    ("nvbandwidth Version: v0.2\nBuilt from Git version: 42e94d2\n", "no 'Running <testcase>.' block"),
])
def test_unreadable_output_is_a_typed_parse_error(text, says):
    with pytest.raises(ParseError) as info:
        nvbandwidth.parse(text)
    assert info.value.tool == "nvbandwidth" and says in info.value.detail


@FUZZ
@given(text_mutations(CAPTURE))
def test_parser_and_rules_are_total_on_damaged_captures(text):
    facts = assert_total("nvbandwidth.parse", nvbandwidth.parse, text)
    if isinstance(facts, dict):
        assert_total("bandwidth.judge_bandwidth", rules.judge_bandwidth, "n", facts, PROFILES["h100"])


# ------------------------------------------------------------------------------------------------ rules

def test_healthy_h800_passes_host_checks_and_skips_p2p_without_a_floor():
    checks = judged(CAPTURE)
    assert len(checks) == 8 * 3
    assert set(c["status"] for c in checks if c["id"] in ("gpu.bandwidth.h2d", "gpu.bandwidth.d2h")) == {"pass"}
    p2p = [c for c in checks if c["id"] == "gpu.bandwidth.p2p"]
    assert [c["status"] for c in p2p] == ["skip"] * 8
    assert p2p[0]["message"] == ("GPU 0: device-to-device read (slowest peer) bandwidth 171.88 GB/s (GPU 0 -> GPU 4); "
                                 "no floor for a h800 (profile p2p_bw_floor_gbs)")
    assert checks[0]["message"] == "GPU 0: device-to-host bandwidth 55.15 GB/s (floor 48 GB/s)"


def test_one_slow_pcie_link_fails_with_reseat():
    # the fault: GPU 3's host-to-device figure edited to what an x4 link gives (IBM Autopilot: ~25 % of peak)
    assert CAPTURE.count(H2D_ROW) == 1
    text = CAPTURE.replace(H2D_ROW, H2D_ROW.replace("55.30     55.31", "12.10     55.31"))
    checks = judged(text)
    assert [b for b in brief(checks, "gpu.bandwidth.h2d") if b[1] != "pass"] == [("GPU 3", "fail", "12.1 GB/s", "reseat")]
    failing = [c for c in checks if c["status"] == "fail"][0]
    assert failing["expected"] == ">= 48 GB/s"
    assert "below the 48 GB/s floor of a h800: the PCIe path is degraded" in failing["message"]
    assert set(c["status"] for c in checks if c["id"] == "gpu.bandwidth.d2h") == {"pass"}


def test_near_the_floor_warns():
    text = CAPTURE.replace(H2D_ROW, H2D_ROW.replace("55.30     55.31", "49.00     55.31"))
    assert [b for b in brief(judged(text), "gpu.bandwidth.h2d") if b[1] != "pass"] == [
        ("GPU 3", "warn", "49 GB/s", "monitor")]


def test_a_slow_nvlink_pair_fails_both_gpus_with_reset():
    profile = merge_profile(PROFILES["h800"], {"p2p_bw_floor_gbs": 160})  # a site floor under the capture's 172
    row0 = "0       N/A    172.16    172.24    171.99    171.88    172.16    172.16    172.16"
    assert CAPTURE.count(row0) == 1
    text = CAPTURE.replace(row0, row0.replace("171.88", " 90.00"))
    bad = [b for b in brief(judged(text, profile), "gpu.bandwidth.p2p") if b[1] != "pass"]
    assert bad == [("GPU 0", "fail", "90 GB/s", "reset_gpu"), ("GPU 4", "fail", "90 GB/s", "reset_gpu")]
    assert "(GPU 0 -> GPU 4)" in [c for c in judged(text, profile) if c["status"] == "fail"][1]["message"]


def test_not_run_testcase_skips_and_no_facts_is_an_error():
    only_h2d = CAPTURE[:CAPTURE.index("Running device_to_host_memcpy_ce.")]
    checks = judged(only_h2d)
    assert set(c["status"] for c in checks if c["id"] != "gpu.bandwidth.h2d") == {"skip"}
    assert "device_to_host_memcpy_ce not run or waived" in [c for c in checks if c["id"] == "gpu.bandwidth.d2h"][0]["message"]
    [error] = rules.judge_bandwidth("n", None, PROFILES["h800"])
    assert (error["id"], error["status"]) == ("gpu.bandwidth.facts", "error")


def test_summary():
    assert rules.summarize_bandwidth(nvbandwidth.parse(CAPTURE)) == {
        "h2d_min_gbs": 55.28, "d2h_min_gbs": 55.09, "p2p_min_gbs": 171.88, "version": "v0.2", "profile": None}


# ------------------------------------------------------------------------------------------------ collect

def _script(tmp_path, body):
    prog = tmp_path / "nvbandwidth"
    prog.write_text("#!/bin/sh\n" + body)
    prog.chmod(prog.stat().st_mode | stat.S_IXUSR)
    return str(prog)


def test_collect_runs_the_testcases_and_reads_the_output(tmp_path):
    (tmp_path / "out.txt").write_text(CAPTURE)
    prog = _script(tmp_path, 'echo "$@" > %s/args; cat %s/out.txt\n' % (tmp_path, tmp_path))
    facts = run_nvbandwidth(prog, DEFAULT_TESTCASES, 30)
    assert (tmp_path / "args").read_text().split() == ["-t", "host_to_device_memcpy_ce", "-t",
                                                        "device_to_host_memcpy_ce", "-t", "device_to_device_memcpy_read_ce"]
    assert facts["cmd"][0] == prog and len(facts["devices"]) == 8


def test_collect_failure_is_tool_failed(tmp_path):
    prog = _script(tmp_path, 'echo "cudaErrorNoDevice: no CUDA-capable device is detected" >&2; exit 1\n')
    with pytest.raises(ToolFailed) as info:
        run_nvbandwidth(prog, DEFAULT_TESTCASES, 30)
    assert info.value.message == "nvbandwidth: exited with rc 1: cudaErrorNoDevice: no CUDA-capable device is detected"


def test_lab_fault_is_judged_through_the_registry(tmp_path):
    """The lab simulator (real capture, device names of the node's A100s, GPU 5 host-to-device edited to 12 GB/s),
    collected and judged as the judge action does: the A100 profile (floor 21 GB/s) is found from the device names."""
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"schema": 1, "node": "unit01", "index": 1, "model": "a100", "gpus": 8,
                                 "capture": os.path.join(HERE, os.pardir, "fixtures", "nvidia-smi",
                                                         "q-x-a100-sxm4-80gb-mig-535.xml"),
                                 "faults": [{"kind": "bandwidth_low", "gpu": 5, "testcase": "host_to_device_memcpy_ce",
                                             "gbs": 12}]}))
    prog = _script(tmp_path, 'exec %s -I -S %s --state %s "$@"\n'
                   % (sys.executable, os.path.join(REPO, "lab", "sim", "nvbandwidth.py"), state))
    # the host testcases only: the capture's device-to-device figures are an H800's 8-link NVLink, not an A100's
    host = ("host_to_device_memcpy_ce", "device_to_host_memcpy_ce")
    facts = run_nvbandwidth(prog, host, 30)
    assert list(facts["testcases"]) == list(host)
    assert facts["devices"][0]["name"] == "NVIDIA A100-SXM4-80GB"
    checks, summary, unreachable = judge_collected("gpu_bandwidth", "unit01", {"bandwidth": facts},
                                                   Context(profiles=PROFILES))
    assert unreachable is False and (summary["h2d_min_gbs"], summary["profile"]) == (12.0, "a100")
    assert [(c["id"], c["component"].split(" (")[0], c["remedy"]) for c in checks if c["status"] == "fail"] == [
        ("gpu.bandwidth.h2d", "GPU 5", "reseat")]
    assert sum(1 for c in checks if c["id"] == "gpu.bandwidth.p2p" and c["status"] == "skip") == 8
