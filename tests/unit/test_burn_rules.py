# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Burn-in rules: the real 8x A100 gpu-burn facts, value-edited into slow, idle, faulty and dead GPUs."""

from __future__ import annotations

import copy
import os

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import gpu_burn, nvidia_smi
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import burn
from ansible_collections.zhisuan.ops.plugins.plugin_utils._profiles import load_profiles

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures")
BUSES = ("07", "0F", "47", "4E", "87", "90", "B7", "BD")


@pytest.fixture(scope="module")
def real_burn():
    with open(os.path.join(FIXTURES, "gpu-burn", "gpu-burn-8xA100-80GB-all-OK.log"), encoding="utf-8", newline="") as fh:
        facts = gpu_burn.parse(fh.read())
    facts.update(duration_s=900)
    return facts


@pytest.fixture(scope="module")
def a100_node(real_burn):
    """GPU facts of an 8-GPU node: the real A100 XML capture's GPU copied 8 times with the burn log's UUIDs and a
    DGX A100's bus ids (identity values edited), and MIG turned off (the capture's GPU is in MIG mode with 4 MIG
    devices: ``mig_mode`` Disabled, no MIG device, as on a GPU that never had MIG on)."""
    with open(os.path.join(FIXTURES, "nvidia-smi", "q-x-a100-sxm4-80gb-mig-535.xml"), encoding="utf-8") as fh:
        one = nvidia_smi.parse_xml(fh.read())
    node = copy.deepcopy(one)
    node["gpus"] = []
    for index, burned in enumerate(real_burn["gpus"]):
        gpu = copy.deepcopy(one["gpus"][0])
        gpu.update(index=index, uuid=burned["uuid"], pci_bus_id="0000:%s:00.0" % BUSES[index],
                   mig_mode={"current": "Disabled", "pending": "Disabled"}, mig_devices=None)
        node["gpus"].append(gpu)
    node["attached_gpus"] = 8
    return node


@pytest.fixture(scope="module")
def a100():
    return load_profiles()["a100"]


def by_id(checks, check_id):
    return [check for check in checks if check["id"] == check_id]


def edited(facts, gpu, **values):
    facts = copy.deepcopy(facts)
    facts["gpus"][gpu].update(values)
    return facts


def test_healthy_node_passes_with_the_a100_floor(real_burn, a100, a100_node):
    checks = burn.judge_burn("node01", real_burn, a100, gpu_facts=a100_node)
    assert len(checks) == 1 + 8 * len(burn.GPU_CHECK_IDS)
    assert [check["id"] for check in checks[1:5]] == list(burn.GPU_CHECK_IDS)
    assert set(check["status"] for check in checks) == {"pass"}
    assert set(check["remedy"] for check in checks) == {"none"}
    first = by_id(checks, "burn.gflops.throughput")[0]
    assert first["component"] == u"GPU 0 (GPU-b876c63f\u2026, 0000:07:00.0)"
    assert first["observed"] == 16990.5 and first["expected"] == ">= 15200 Gflop/s"
    assert first["message"] == ("GPU 0 ran at 16990.5 Gflop/s (FP64 with tensor cores), at or above the a100 floor of "
                                "15200 Gflop/s")
    peers = by_id(checks, "burn.gflops.peers")[4]
    assert peers["observed"] == "99.5 %"
    assert peers["message"] == "GPU 4 ran at 16890 Gflop/s, 99.5 % of the median of its 7 peers (16973.5 Gflop/s)"
    assert checks[0]["message"] == "gpu-burn tested all 8 GPUs"


def test_slow_gpu_among_peers_fails_even_without_a_floor(real_burn):
    facts = edited(real_burn, 3, gflops_median=14000, gflops_final=14010)
    checks = burn.judge_burn("node02", facts, None)
    peer = by_id(checks, "burn.gflops.peers")[3]
    assert (peer["status"], peer["remedy"], peer["observed"]) == ("fail", "investigate", "82.5 %")
    assert peer["message"].startswith("GPU 3 ran at 14000 Gflop/s, 82.5 % of the median of its 7 peers (16973.5 Gflop/s): "
                                      "a GPU slower than its peers")
    throughput = by_id(checks, "burn.gflops.throughput")[3]
    assert throughput["status"] == "pass"
    assert "no FP64 with tensor cores floor for this model" in throughput["message"]
    others = [check for check in checks if check is not peer]
    assert set(check["status"] for check in others) == {"pass", "skip"}
    assert by_id(checks, "burn.count.tested")[0]["status"] == "skip"


def test_slightly_slow_gpu_warns(real_burn):
    checks = burn.judge_burn("n", edited(real_burn, 2, gflops_median=16000), None)
    peer = by_id(checks, "burn.gflops.peers")[2]
    assert (peer["status"], peer["observed"]) == ("warn", "94.4 %")


def test_peer_thresholds_are_site_overridable(real_burn):
    facts = edited(real_burn, 2, gflops_median=16000)
    checks = burn.judge_burn("n", facts, None, thresholds={"burn_peer_warn_pct": "90", "burn_peer_fail_pct": 80})
    assert by_id(checks, "burn.gflops.peers")[2]["status"] == "pass"
    with pytest.raises(ValueError, match="burn_peer_fail_pct"):
        burn.judge_burn("n", facts, None, thresholds={"burn_peer_warn_pct": 80, "burn_peer_fail_pct": 90})


def test_whole_node_below_the_floor(real_burn, a100):
    facts = copy.deepcopy(real_burn)
    for gpu in facts["gpus"]:
        gpu["gflops_median"] = 15000
    checks = burn.judge_burn("n", facts, a100)
    throughput = by_id(checks, "burn.gflops.throughput")
    assert [check["status"] for check in throughput] == ["fail"] * 8
    assert throughput[0]["message"].startswith("GPU 0 ran at 15000 Gflop/s (FP64 with tensor cores), below the a100 floor "
                                               "of 15200 Gflop/s")
    assert [check["status"] for check in by_id(checks, "burn.gflops.peers")] == ["pass"] * 8


def test_floor_follows_the_burn_mode(real_burn, a100):
    facts = copy.deepcopy(real_burn)
    facts["tensor_cores"] = False
    assert burn.floor_for(a100, facts) is None
    assert burn.burn_mode(facts) == ("fp64", "FP64")
    assert burn.floor_for(a100, real_burn) == 15200
    override = dict(a100, burn=dict(a100["burn"], gflops_floor_fp64="9000"))
    assert burn.floor_for(override, facts) == 9000


def test_zero_gflops_fails_although_gpu_burn_says_ok(real_burn, a100):
    facts = edited(real_burn, 5, gflops_median=0, gflops_final=0, gflops_samples=[], reports=0, processed=0)
    assert facts["gpus"][5]["verdict"] == "OK"
    checks = burn.judge_burn("n", facts, a100)
    zero = by_id(checks, "burn.gflops.throughput")[5]
    assert (zero["status"], zero["remedy"], zero["observed"]) == ("fail", "reset_gpu", 0)
    assert zero["message"] == ("GPU 5 did no work during the 900 s burn (0 Gflop/s) although gpu-burn says OK, while its "
                               "peers ran: the GPU is stuck; drain the node, reset the GPU and burn again (RMA if it "
                               "repeats)")
    assert by_id(checks, "burn.gflops.peers")[5]["status"] == "fail"
    assert by_id(checks, "burn.verdict.result")[5]["status"] == "pass"
    # The idle GPU is not a peer of the others.
    assert by_id(checks, "burn.gflops.peers")[0]["message"].endswith("of its 6 peers (16949.75 Gflop/s)")


def test_no_gpu_did_any_work(real_burn):
    facts = copy.deepcopy(real_burn)
    for gpu in facts["gpus"]:
        gpu.update(gflops_median=0, gflops_final=0)
    checks = burn.judge_burn("n", facts, None)
    throughput = by_id(checks, "burn.gflops.throughput")
    assert [(check["status"], check["remedy"]) for check in throughput] == [("fail", "investigate")] * 8
    assert "neither did any other GPU" in throughput[0]["message"]
    assert [check["status"] for check in by_id(checks, "burn.gflops.peers")] == ["skip"] * 8


def test_compare_errors_without_memory_errors_mean_rma(real_burn, a100_node):
    facts = edited(real_burn, 6, errors=12, verdict="FAULTY")
    checks = burn.judge_burn("n", facts, None, gpu_facts=a100_node)
    errors = by_id(checks, "burn.errors.count")[6]
    assert (errors["status"], errors["remedy"], errors["observed"]) == ("fail", "rma", 12)
    assert errors["message"] == ("GPU 6 returned 12 wrong results (results that differ from the reference) during the "
                                 "burn; no memory error explains it, so the GPU computes wrong results silently: take "
                                 "it out of service and return it (RMA)")
    verdict = by_id(checks, "burn.verdict.result")[6]
    assert (verdict["status"], verdict["remedy"], verdict["observed"]) == ("fail", "rma", "FAULTY")


def test_compare_errors_with_an_ecc_error_mean_reset(real_burn, a100_node):
    node = copy.deepcopy(a100_node)
    node["gpus"][6]["ecc"]["volatile_uncorrected"] = 2
    facts = edited(real_burn, 6, errors=1, verdict="FAULTY")
    checks = burn.judge_burn("n", facts, None, gpu_facts=node)
    errors = by_id(checks, "burn.errors.count")[6]
    assert (errors["status"], errors["remedy"]) == ("fail", "reset_gpu")
    assert "ecc.volatile_uncorrected=2" in errors["message"] and errors["evidence"].endswith(
        "after the burn: ecc.volatile_uncorrected=2")
    assert by_id(checks, "burn.verdict.result")[6]["remedy"] == "reset_gpu"


def test_a_dead_worker(real_burn):
    facts = edited(real_burn, 1, died=True, verdict="FAULTY")
    verdict = by_id(burn.judge_burn("n", facts, None), "burn.verdict.result")[1]
    assert (verdict["status"], verdict["remedy"]) == ("fail", "reset_gpu")
    assert "worker died" in verdict["message"]
    missing = by_id(burn.judge_burn("n", edited(real_burn, 1, verdict=None), None), "burn.verdict.result")[1]
    assert (missing["status"], missing["message"]) == ("error", "GPU 1: gpu-burn printed no verdict for this GPU")


def test_fewer_gpus_tested_than_the_driver_lists(real_burn, a100_node, a100):
    facts = copy.deepcopy(real_burn)
    facts["gpus"] = facts["gpus"][:7]
    facts["tested_gpus"] = 7
    check = burn.judge_burn("n", facts, a100, gpu_facts=a100_node)[0]
    assert (check["id"], check["status"], check["observed"], check["expected"]) == ("burn.count.tested", "fail", 7, "== 8")
    assert check["message"].startswith("gpu-burn tested only 7 of 8 GPUs (GPUs the driver lists)")
    by_profile = burn.judge_burn("n", facts, a100)[0]
    assert (by_profile["status"], by_profile["message"][:44]) == ("fail", "gpu-burn tested only 7 of 8 GPUs (profile a1")


def test_no_facts_is_an_error():
    checks = burn.judge_burn("n", None, None)
    assert [(check["id"], check["status"], check["remedy"]) for check in checks] == [
        ("burn.count.tested", "error", "investigate")]


def test_summary_for_the_report(real_burn, a100):
    summary = burn.summarize_burn(edited(real_burn, 6, errors=3, verdict="FAULTY"), a100)
    assert summary == {
        "duration_s": 900, "mode": "FP64 with tensor cores", "gpus": 8, "gflops_median": 16963.5,
        "gflops_min": 16890, "gflops_max": 17135, "gflops_floor": 15200, "errors": 3, "faulty": [6],
        "profile": "a100",
    }
    assert burn.summarize_burn(None) == {}


def _in_mig(node, *indexes):
    node = copy.deepcopy(node)
    for index in indexes:
        node["gpus"][index]["mig_mode"] = {"current": "Enabled", "pending": "Enabled"}
    return node


def test_a_gpu_in_mig_mode_is_skipped_with_its_reason_not_counted_missing(real_burn, a100, a100_node):
    # GPU 5 in MIG mode: gpu-burn (CUDA) burns the 7 whole GPUs; the burn log's GPU 5 record removed
    facts = copy.deepcopy(real_burn)
    del facts["gpus"][5]
    checks = burn.judge_burn("node01", facts, a100, gpu_facts=_in_mig(a100_node, 5))
    tested = by_id(checks, "burn.count.tested")[0]
    assert tested["status"] == "pass" and tested["expected"] == "== 7"
    assert "less GPU 5 in MIG mode" in tested["evidence"]
    untested = by_id(checks, "burn.mig.untested")
    assert [(c["status"], c["component"]) for c in untested] == [("skip", "GPU 5")]
    assert "in MIG mode and was not burned as a whole GPU: disable MIG" in untested[0]["message"]
    # the same log with no GPU in MIG mode: one GPU short is a failure
    assert by_id(burn.judge_burn("node01", facts, a100, gpu_facts=a100_node), "burn.count.tested")[0]["status"] == \
        "fail"


def test_every_gpu_in_mig_mode_skips_the_burn(a100, a100_node):
    facts = {"gpus": [], "tested_gpus": 0}
    checks = burn.judge_burn("node01", facts, a100, gpu_facts=_in_mig(a100_node, *range(8)))
    assert [(c["id"], c["status"]) for c in checks] == [("burn.count.tested", "skip")]
    assert checks[0]["message"].startswith("gpu-burn tested no GPU: GPU 0, GPU 1, GPU 2, GPU 3, GPU 4, GPU 5, GPU 6, "
                                           "GPU 7 are in MIG mode")
    # without MIG, a burn that tested nothing fails
    assert burn.judge_burn("node01", facts, a100, gpu_facts=a100_node)[0]["status"] == "fail"
