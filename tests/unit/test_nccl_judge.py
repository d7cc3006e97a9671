# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""NCCL rules on facts parsed from the real captures (values edited for the faults), and the judge registry."""

from __future__ import annotations

import copy
import os

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._judge import nccl as rules
from ansible_collections.zhisuan.ops.plugins.module_utils._net import nccl as parser
from ansible_collections.zhisuan.ops.plugins.plugin_utils._judging import Context, judge_collected
from ansible_collections.zhisuan.ops.plugins.plugin_utils._profiles import load_profiles

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "nccl-tests")
PROFILES = load_profiles()
A100 = PROFILES["a100_40gb"]


def _facts(name="all_reduce_perf"):
    with open(os.path.join(FIXTURES, "%s-1node-8xA100-40GB.log" % name), encoding="utf-8") as handle:
        return parser.parse(handle.read(), op=name)


def _scaled(facts, factor):
    facts = copy.deepcopy(facts)
    for point in facts["points"]:
        for name in ("out_of_place", "in_place"):
            point[name]["busbw"] = round(point[name]["busbw"] * factor, 2)
    return facts


def _by_id(checks):
    return dict((check["id"], check) for check in checks)


def test_healthy_node_passes_at_8_gib_not_on_the_average():
    checks = _by_id(rules.judge_nccl("node01", _facts(), A100))
    busbw = checks["nccl.all_reduce_perf.busbw"]
    assert busbw["status"] == "pass" and busbw["observed"] == 235.03
    assert busbw["expected"] == ">= 228 GB/s at 8 GiB"
    assert "avg_busbw (not judged)=68.4" in busbw["evidence"]
    assert checks["nccl.all_reduce_perf.coverage"]["status"] == "pass"
    # the capture ran without validation (-c 0): wrong values would go unseen
    assert checks["nccl.all_reduce_perf.wrong"]["status"] == "skip"


def test_slow_node_fails_with_investigate():
    check = _by_id(rules.judge_nccl("node01", _scaled(_facts(), 0.7), A100))["nccl.all_reduce_perf.busbw"]
    assert check["status"] == "fail" and check["remedy"] == "investigate"
    assert check["observed"] == 164.52
    assert check["message"] == ("all_reduce_perf reached only 164.52 GB/s bus bandwidth at 8 GiB, 72.2% of the 228 GB/s "
                                "floor: check the GPUs' NVLink state, Fabric Manager, PCIe ACS and clocks (gpu and tuning "
                                "checks), then rerun")


def test_slow_node_with_nvlink_down_resets_the_gpu():
    gpu_facts = {"gpus": [{"index": 0, "nvlink": {"active": 12, "total": 12}},
                          {"index": 4, "nvlink": {"active": 11, "total": 12}}]}
    check = _by_id(rules.judge_nccl("node01", _scaled(_facts(), 0.7), A100, gpu_facts=gpu_facts))["nccl.all_reduce_perf.busbw"]
    assert check["status"] == "fail" and check["remedy"] == "reset_gpu"
    assert "GPU 4 11/12 links up" in check["message"]


def test_wrong_values_fail():
    facts = _facts()
    facts["out_of_bounds"], facts["out_of_bounds_ok"] = 3, False
    check = _by_id(rules.judge_nccl("node01", facts, A100))["nccl.all_reduce_perf.wrong"]
    assert check["status"] == "fail" and check["remedy"] == "investigate" and check["observed"] == 3
    facts = _facts()
    facts["params"]["validation"] = 1
    facts["points"][-1]["in_place"]["wrong"] = 7
    check = _by_id(rules.judge_nccl("node01", facts, A100))["nccl.all_reduce_perf.wrong"]
    assert check["status"] == "fail" and "#wrong: 8 GiB=7" in check["evidence"]
    facts = _facts()
    facts["params"]["validation"] = 1
    assert _by_id(rules.judge_nccl("node01", facts, A100))["nccl.all_reduce_perf.wrong"]["status"] == "pass"


def test_small_sweep_warns_and_judges_the_largest_size():
    facts = _facts()
    facts["points"] = [point for point in facts["points"] if point["bytes"] <= 268435456]
    checks = _by_id(rules.judge_nccl("node01", facts, A100))
    assert checks["nccl.all_reduce_perf.coverage"]["status"] == "warn"
    assert checks["nccl.all_reduce_perf.coverage"]["message"] == (
        "all_reduce_perf measured only up to 256 MiB, below the 8 GiB that reaches peak bus bandwidth: rerun with -e 8G or more")
    busbw = checks["nccl.all_reduce_perf.busbw"]
    assert busbw["status"] == "fail" and busbw["observed"] == 222.4


def test_judge_bytes_and_floor_overrides():
    thresholds = {"nccl_judge_bytes": 1073741824, "nccl_busbw_floor_gbs": 240}
    facts = _facts()
    facts["points"] = [point for point in facts["points"] if point["bytes"] <= 1073741824]
    checks = _by_id(rules.judge_nccl("node01", facts, A100, thresholds=thresholds))
    assert checks["nccl.all_reduce_perf.coverage"]["status"] == "pass"
    assert checks["nccl.all_reduce_perf.busbw"]["status"] == "fail"
    assert "threshold nccl_busbw_floor_gbs" in checks["nccl.all_reduce_perf.busbw"]["evidence"]


def test_no_floor_skips():
    check = _by_id(rules.judge_nccl("node01", _facts("all_gather_perf"), A100))["nccl.all_gather_perf.busbw"]
    assert check["status"] == "skip" and check["observed"] == 223.39
    assert "set thresholds.nccl_busbw_floor_gbs" in check["message"]


def test_multi_node_run_is_a_cluster_check_with_the_fabric_floor():
    facts = _scaled(_facts(), 0.7)
    facts["nodes"] = ["node01", "node02", "node03"]
    checks = rules.judge_nccl("node01", facts, A100)
    assert set(check["host"] for check in checks) == {"cluster"}
    busbw = _by_id(checks)["nccl.all_reduce_perf.busbw"]
    assert busbw["status"] == "fail" and busbw["expected"] == ">= 185 GB/s at 8 GiB"
    assert busbw["component"] == "3 nodes: node01, node02, node03"
    assert rules.is_slow(facts, A100) is True
    assert rules.is_slow(_scaled(_facts(), 1.0) | {"nodes": ["a", "b"]}, A100) is False


def test_bisection_checks():
    checks = rules.judge_bisection({"done": ["node05"], "reason": "the group was fast without node05 and slow with it", "state": {"steps": 6}})
    assert [(c["id"], c["host"], c["component"], c["status"], c["remedy"]) for c in checks] == [
        ("nccl.bisect.suspect", "cluster", "node05", "fail", "drain")]
    checks = rules.judge_bisection({"done": [], "reason": "every smaller group was fast", "state": {"steps": 2}},
                                   nodes=["a", "b", "c", "d"])
    assert checks[0]["status"] == "warn" and checks[0]["message"].startswith("Bisection named no slow node after 2 runs")
    checks = rules.judge_bisection({"done": [], "unresolved": ["a", "b"], "reason": "every group with a, b stayed slow",
                                    "state": {"steps": 1}})
    assert [(c["component"], c["status"], c["remedy"]) for c in checks] == [
        ("a", "warn", "investigate"), ("b", "warn", "investigate")]


def test_summary_shape():
    summary = rules.summarize_nccl(_facts(), A100)
    assert summary["op"] == "all_reduce_perf" and summary["scope"] == "localhost" and summary["unit"] == "GB/s"
    assert summary["floor"] == 228 and summary["judged_bytes"] == 8589934592 and summary["busbw"] == 235.03
    assert summary["points"][-1] == {"bytes": 8589934592, "algbw": 134.3, "busbw": 235.03, "time_us": 63959.0,
                                     "wrong": None}


def test_registry_judges_and_reports_collect_errors():
    ctx = Context(profiles=PROFILES, gpu_facts={"gpus": [{"index": 0, "name": "NVIDIA A100-SXM4-40GB"}]})
    checks, summary, unreachable = judge_collected("nccl", "node01", {"nccl": _facts()}, ctx)
    assert not unreachable and summary["profile"] == "a100_40gb"
    assert _by_id(checks)["nccl.all_reduce_perf.busbw"]["status"] == "pass"
    checks, summary, dummy = judge_collected("nccl", "node01", {"failed": True, "error_kind": "timed_out",
                                                                "msg": "mpirun: timed out after 60 s"}, ctx)
    assert [(c["id"], c["status"], c["observed"]) for c in checks] == [("nccl.collect.nccl_tests", "error", "timed out")]
    checks, summary, dummy = judge_collected("nccl_bisect", "node01", {"bisect": {"done": ["n2"], "nodes": ["n1", "n2"]}}, ctx)
    assert checks[0]["component"] == "n2" and summary["suspects"] == ["n2"]


@pytest.mark.parametrize("facts", [None, {}, {"points": "x"}])
def test_no_facts_is_an_error(facts):
    checks = rules.judge_nccl("node01", facts, A100)
    assert [(c["id"], c["status"]) for c in checks] == [("nccl.collect.nccl_tests", "error")]
