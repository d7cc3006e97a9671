# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The judge's dispatch edge given facts of the wrong type (issue 25 item 7): real facts of every family, and the GPU
facts the families name GPUs by, with values turned into other types (a string where a list is, a list where a
mapping is, None, numbers as strings) the way a fact cache or a templated variable hands them back. The judge never
raises: it returns checks, and where the rules could not read the facts, an ``error`` check naming the family."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzzing import FUZZ, assert_total, fixture_text, type_mutations
from test_fuzz_gpu import FACTS_CASES, well_formed
from test_fuzz_host import HOST_FACTS, TUNING_EXPECTED
from test_fuzz_net import NET_FACTS, NIC_EXPECTED, STORAGE_FACTS
from test_fuzz_redfish import DOCUMENTS, read_everything

from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import nvbandwidth
from ansible_collections.zhisuan.ops.plugins.module_utils._sched import k8s_nodes, slurm_nodes
from ansible_collections.zhisuan.ops.plugins.module_utils._sched.joblog import parse_log
from ansible_collections.zhisuan.ops.plugins.module_utils._storage import smartctl
from ansible_collections.zhisuan.ops.plugins.plugin_utils._judging import FAMILIES, judge_family

pytestmark = pytest.mark.fuzz

GPU = FACTS_CASES["gpu"][0]
BMC = read_everything(dict((path, json.dumps(document)) for path, document in DOCUMENTS["nvidia-dgx-h100-viking"].items()))

# family -> (real facts, judge options besides gpu_facts)
CASES = {
    "gpu": (GPU, {"profile": "a100", "expected": {"gpu_count": 8}}),
    "xid": (FACTS_CASES["xid"][0], {}),
    "dcgm": (FACTS_CASES["dcgm_diag"][0], {}),
    "dcgm_health": (FACTS_CASES["dcgm_health"][0], {}),
    "burn": (FACTS_CASES["burn"][0], {"profile": "a100"}),
    "burn_stability": ({"before": GPU, "during": [GPU], "after": GPU, "xid_before": FACTS_CASES["xid"][0],
                        "xid_after": FACTS_CASES["xid"][0]}, {}),
    "gpu_bandwidth": (nvbandwidth.parse(fixture_text("nvbandwidth/nvbandwidth-v0.2-h800x8-525.105.17-ce.txt")), {}),
    "nccl": (FACTS_CASES["nccl"][0], {"profile": "a100_40gb"}),
    "tuning": (HOST_FACTS, {"expected": TUNING_EXPECTED}),
    "storage": (STORAGE_FACTS, {}),
    "storage_aggregate": ({"node01": STORAGE_FACTS, "node02": STORAGE_FACTS, "node03": {}}, {}),
    "nic": (NET_FACTS, {"expected": NIC_EXPECTED}),
    "rdma_ports": (NET_FACTS, {"expected": {"hcas": 8, "rate_gbps": 400}}),
    "cabling": (NET_FACTS, {}),
    "bmc": (BMC["facts"], {"expected": {"gpu_count": 8, "psu_count": 2}, "context": {"log": BMC["log"]}}),
    "baseline": (BMC["firmware"], {"context": {"baseline": {"bmc": "24.03", "bios": ["1.0"]}}}),
    "drive": ({"devices": ["/dev/nvme0"], "errors": [], "drives": [smartctl.parse_drive(fixture_text(
        "smartctl/nvme-null-SAMSUNG_MZWLL3T2HAJQ-00005-nvme0.json"), device="/dev/nvme0")]}, {}),
}
# the post-repair verification, a remediation's outcome and the plan's word: graded from the checks the other
# families made of these real facts (issue 29 item 3)
_GPU_CHECKS = judge_family("gpu", "n1", {"gpu": GPU}, profile="a100", expected={"gpu_count": 8})[0]
_WHY = {"cause": "gpu.ecc", "checks": [c["id"] for c in _GPU_CHECKS[:2]], "component": _GPU_CHECKS[0]["component"]}
CASES.update({
    "verify": ({"checks": _GPU_CHECKS, "recheck": [_GPU_CHECKS[0]["id"]],
                "power": {"read": True, "result": {"before": {"power_state": "On"}}}, "reachable": True}, {}),
    "remediate": ({"action": "reset_gpu", "outcome": "repaired", "message": "reset_gpu fixed gpu.ecc",
                   "remedy": "reset_gpu", "why": _WHY, "stranded": None, "history_errors": ["disk full"],
                   "history_file": "/srv/h/remediation.jsonl"}, {}),
    "remediate_plan": ({"entry": {"status": "deferred", "action": "reset_gpu", "mode": "automatic", "batch": 2,
                                  "message": "deferred", "remedy": "reset_gpu", "why": _WHY},
                        "skipped": False, "skip_reason": None, "check_mode": False, "history_error": "disk full"}, {}),
})


# the cluster platform (issue 29 item 3): real kubectl, scontrol and job log captures; the node parts judge node01
# under its scheduler name in the captures
_K8S = {"nodes": k8s_nodes.parse_nodes(fixture_text("k8s/kubectl-get-nodes-edgexr-gpuNodesSampleOutput.json")),
        "pods": k8s_nodes.parse_pods(fixture_text("k8s/kubelet-pods-gpud-readonly.json"))}
_SLURM = {"nodes": slurm_nodes.parse_nodes(fixture_text("slurm/scontrol-o-show-node-4-mixed-states.txt")),
          "partitions": slurm_nodes.parse_partitions(fixture_text("slurm/scontrol-o-show-partition.txt"))}
_JOB = dict(parse_log(fixture_text("joblog/nccl-cuda-oom-alloc-nccl-844.log")), id="4127", name="train",
            state="FAILED", nodes=["node01", "node02"])
CASES.update({
    "k8s_node": (_K8S, {"context": {"node": sorted(_K8S["nodes"])[0], "installed": 8}}),
    "k8s_cluster": (_K8S, {"context": {"installed": dict((name, 8) for name in _K8S["nodes"])}}),
    "slurm_node": (_SLURM, {"context": {"node": sorted(_SLURM["nodes"])[0], "installed": 8}}),
    "slurm_cluster": (_SLURM, {"context": {"installed": dict((name, 8) for name in _SLURM["nodes"])}}),
    "job": (_JOB, {"context": {"hostmap": {"node01": "node01"}}}),
})


def _judged(family, facts, gpu_facts):
    real, options = CASES[family]
    collected = {FAMILIES[family].facts_key: facts}
    (checks, summary, unreachable), _ = assert_total("judge_family(%s)" % family, judge_family, family, "n1", collected,
                                                     gpu_facts=gpu_facts, allowed=(), finite=False, **options)
    well_formed(checks)
    assert isinstance(summary, dict) and unreachable is False
    json.dumps([checks, summary], default=str)
    return checks


def test_every_family_of_the_registry_has_real_facts_here():
    assert sorted(CASES) == sorted(name for name in FAMILIES if name != "nccl_bisect")


@pytest.mark.parametrize("family", sorted(CASES))
def test_real_facts_are_judged_without_a_facts_error(family):
    checks = _judged(family, CASES[family][0], GPU)
    assert checks and not [check for check in checks if check["observed"] == "facts of the wrong type"]


@pytest.mark.parametrize("family", sorted(CASES))
@pytest.mark.parametrize("odd", ["a string", ["a", "list"], 42, None, True])
def test_facts_that_are_not_a_mapping_are_an_error_check_naming_the_family(family, odd):
    checks = _judged(family, odd, GPU)
    assert [check["status"] for check in checks if check["status"] == "error"], checks
    if odd is None or isinstance(odd, (str, list, int)):
        named = [check for check in checks if check["status"] == "error" and FAMILIES[family].name in check["id"]]
        assert named, checks


@pytest.mark.parametrize("family", sorted(CASES))
def test_facts_of_the_wrong_type_never_raise(family):
    real = CASES[family][0]

    @FUZZ
    @given(st.sampled_from(("facts", "gpu_facts", "both")).flatmap(
        lambda which: st.tuples(type_mutations(real) if which != "gpu_facts" else st.just(real),
                                type_mutations(GPU) if which != "facts" else st.just(GPU))))
    def run(pair):
        facts, gpu_facts = pair
        _judged(family, facts, gpu_facts)
    run()
