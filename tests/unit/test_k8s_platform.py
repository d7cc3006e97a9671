# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The k8s family: parsers of kubectl's node and pod JSON and the rules (_judge/k8s.py) through the platform_checks
filter, on the real captures of tests/fixtures/k8s (byte-exact; PROVENANCE.md): the Node is the captured rke2 GPU
node, the GPU platform's pods are real kubelet pods relabelled, and every fault is an edit of them made by
tests/lab/k8s_captures.py."""

from __future__ import annotations

import hashlib
import json
import os
import sys

import pytest
from hypothesis import given

from ansible_collections.zhisuan.ops.plugins.filter.platform_checks import platform_checks
from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import k8s as rules
from ansible_collections.zhisuan.ops.plugins.module_utils._sched import k8s_nodes
from fuzzing import FUZZ, assert_total, fixture_json, fixture_text, json_text_mutations

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "lab"))
import k8s_captures as captures  # noqa: E402  pylint: disable=wrong-import-position

NODES = "k8s/" + captures.NODES
PODS = "k8s/" + captures.PODS
PLUGIN = "nvidia-device-plugin-daemonset-x7k2p"


def node_list(*edits):
    """The captured NodeList with its one Node edited by each of ``edits`` (k8s_captures functions)."""
    doc = fixture_json(NODES)
    for edit in edits:
        edit(doc["items"][0])
    return json.dumps(doc)


def plugin(*edits):
    pod = captures.gpu_pod("device_plugin", "nori")
    for edit in edits:
        edit(pod)
    return pod


def pods_text(*pods):
    return json.dumps(captures.pod_list(*pods))


def judge(nodes_text, pods=(), installed=1, **kwargs):
    collected = {"k8s": {"nodes": k8s_nodes.parse_nodes(nodes_text), "pods": k8s_nodes.parse_pods(pods_text(*pods))}}
    return platform_checks(collected, "k8s_node", host="nori", installed=installed, installed_source="gpu_info", **kwargs)


def by_id(result):
    return dict((c["id"], c) for c in result["checks"])


def test_captures_are_the_published_bytes():
    # byte-exact copies (PROVENANCE.md): the edgexr raw string with its leading newline, the gpud file without a
    # trailing one
    for name, size, digest in ((captures.NODES, 23715, "de8cf35ab7dc1cf235202161496b0359739f6210caf5c1789632bb1ed40391fb"),
                               (captures.PODS, 51187, "22cd83afba183e43a754ef511b8d853b815854bb5c9ff286a63efc6bd81de02b")):
        with open(os.path.join(captures.FIXTURES, name), "rb") as handle:
            data = handle.read()
        assert (len(data), hashlib.sha256(data).hexdigest()) == (size, digest), name


def test_real_capture_parses_to_the_nodes_gpu_facts():
    node = k8s_nodes.parse_nodes(fixture_text(NODES))["nori"]
    assert node["ready"] is True and node["ready_reason"] == "KubeletReady"
    assert node["conditions"] == {"NetworkUnavailable": False, "MemoryPressure": False, "DiskPressure": False,
                                  "PIDPressure": False}
    assert (node["gpu_capacity"], node["gpu_allocatable"]) == (1, 1)
    assert node["gfd"] == {"product": "NVIDIA-A16-4Q", "driver": "550.90.07", "cuda": "12.4", "count": 1, "present": True}
    assert node["unschedulable"] is False and node["taints"] == []
    assert node["kubelet_version"] == "v1.31.6+rke2r1"


def test_real_pod_capture_holds_no_gpu_platform_pod():
    # the kubelet's pods (vector, kube-proxy) are read and left out: neither is part of the GPU platform
    assert k8s_nodes.parse_pods(fixture_text(PODS)) == []
    assert [k8s_nodes.component_of(p["metadata"]["name"], p["metadata"]["ownerReferences"][0]["name"])
            for p in fixture_json(PODS)["items"]] == [None, None]


@pytest.mark.parametrize("component, namespace, containers", [
    ("device_plugin", "gpu-operator", [("nvidia-device-plugin", False, 1)]),
    ("dcgm_exporter", "gpu-operator", [("toolkit-validation", True, 0), ("nvidia-dcgm-exporter", False, 0)]),
    ("validator", "gpu-operator", [("driver-validation", True, 0), ("nvidia-operator-validator", False, 0)]),
    ("network_operator", "nvidia-network-operator", [("rdma-shared-dp", False, 1)]),
])
def test_relabelled_real_pod_parses_as_its_component(component, namespace, containers):
    pod = k8s_nodes.parse_pods(pods_text(captures.gpu_pod(component, "nori")))[0]
    assert (pod["component"], pod["namespace"], pod["node"], pod["status"], pod["ready"]) == (component, namespace, "nori", "Running", True)
    assert [(c["name"], c["init"], c["restarts"]) for c in pod["containers"]] == containers
    # the captured states are kept: the init container's real Completed exit, the main container's real start
    assert all(c["state"] == ("terminated" if c["init"] else "running") for c in pod["containers"])


def test_relabel_changes_identity_and_keeps_the_captured_status():
    base = captures.captured_pod("kube-proxy-hfqwt")
    pod = captures.gpu_pod("device_plugin", "gpu07")
    assert pod["metadata"]["ownerReferences"][0]["kind"] == "DaemonSet" and pod["spec"]["nodeName"] == "gpu07"
    assert pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"][0]["matchFields"][0]["values"] == ["gpu07"]
    assert pod["metadata"]["uid"] != base["metadata"]["uid"]
    status = pod["status"]["containerStatuses"][0]
    assert status["image"] == "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"
    assert status["imageID"].startswith("nvcr.io/nvidia/k8s-device-plugin@sha256:7089559ce615")
    assert (status["state"], status["restartCount"], status["containerID"]) == (
        base["status"]["containerStatuses"][0]["state"], 1, base["status"]["containerStatuses"][0]["containerID"])


def test_healthy_node_passes_every_check():
    checks = by_id(judge(fixture_text(NODES), [plugin()], profile="A16", baseline={"nvidia_driver": "550", "cuda": "12.4"}))
    assert all(c["status"] == "pass" for c in checks.values()), [c for c in checks.values() if c["status"] != "pass"]
    assert set(checks) >= {"k8s.node.ready", "k8s.gpu.capacity", "k8s.gpu.allocatable", "k8s.labels.product",
                           "k8s.labels.driver", "k8s.labels.cuda", "k8s.pod.device_plugin"}
    assert checks["k8s.pod.device_plugin"]["observed"] == "Running, 1 restarts"  # the captured restartCount


def test_not_ready_node_fails_with_the_kubelet_reason():
    text = node_list(lambda n: captures.set_ready(n, "False", message="container runtime network not ready"))
    result = judge(text, [plugin()])
    check = by_id(result)["k8s.node.ready"]
    assert check["status"] == "fail" and check["remedy"] == "investigate" and check["observed"] == "NotReady"
    assert "KubeletNotReady" in check["message"] and "container runtime network not ready" in check["evidence"]
    # the node lifecycle controller's taints (the edit adds them, NoSchedule and NoExecute) mirror the condition the
    # ready check judged: no second finding, none per effect
    node = json.loads(text)["items"][0]
    assert sorted(t["effect"] for t in node["spec"]["taints"] if t["key"] == "node.kubernetes.io/not-ready") == [
        "NoExecute", "NoSchedule"]
    assert not [c for c in result["checks"] if c["id"].startswith("k8s.taint.")]


def test_node_the_kubelet_stopped_posting_is_unknown():
    checks = by_id(judge(node_list(lambda n: captures.set_ready(n, "Unknown")), [plugin()]))
    check = checks["k8s.node.ready"]
    assert (check["status"], check["observed"], check["remedy"]) == ("fail", "Unknown", "investigate")
    assert "Kubelet stopped posting node status." in check["evidence"]


def test_fewer_allocatable_than_capacity_is_a_fail_that_sends_to_the_gpu_checks():
    checks = by_id(judge(node_list(lambda n: captures.set_gpus(n, capacity=8, allocatable=6, count=8)), [plugin()], installed=8))
    assert checks["k8s.gpu.capacity"]["status"] == "pass"
    assert checks["k8s.gpu.allocatable"]["status"] == "fail" and checks["k8s.gpu.allocatable"]["observed"] == 6
    assert "gpu and xid" in checks["k8s.gpu.allocatable"]["message"]


def test_capacity_below_installed_gpus_restarts_the_device_plugin():
    check = by_id(judge(fixture_text(NODES), [plugin()], installed=8))["k8s.gpu.capacity"]
    assert check["status"] == "fail" and check["remedy"] == "restart_app" and check["observed"] == 1
    assert check["expected"] == "== 8"


def test_crashing_device_plugin_is_restart_app_with_its_last_state():
    pod = plugin(lambda p: captures.crash_loop(p, restarts=7))
    status = pod["status"]["containerStatuses"][0]
    assert status["state"]["waiting"]["message"].startswith(
        "back-off 5m0s restarting failed container=nvidia-device-plugin pod=%s_gpu-operator(" % PLUGIN)
    check = by_id(judge(fixture_text(NODES), [pod]))["k8s.pod.device_plugin"]
    assert check["status"] == "fail" and check["remedy"] == "restart_app" and check["observed"] == "CrashLoopBackOff"
    assert "last terminated: Error (exit 1) at %s" % captures.EDIT_TIME in check["evidence"]
    assert "after 7 restarts" in check["message"]


def test_init_error_of_an_operator_pod_is_investigate():
    exporter = captures.init_error(captures.gpu_pod("dcgm_exporter", "nori", suffix="n6jqs"))
    checks = by_id(judge(fixture_text(NODES), [plugin(), exporter]))
    check = checks["k8s.pod.dcgm_exporter"]
    assert check["status"] == "fail" and check["remedy"] == "investigate" and check["observed"] == "Init:Error"
    assert "toolkit-validation (init): terminated (Error), ready=False, restarts=3" in check["evidence"]
    assert checks["k8s.pod.device_plugin"]["status"] == "pass"


def test_flaky_operator_validator_warns():
    validator = captures.gpu_pod("validator", "nori")
    validator["status"]["containerStatuses"][0]["restartCount"] = 9
    check = by_id(judge(fixture_text(NODES), [plugin(), validator]))["k8s.pod.validator"]
    assert (check["status"], check["remedy"], check["observed"]) == ("warn", "monitor", "Running, 9 restarts")


def test_gpu_node_without_device_plugin_pod_fails():
    check = by_id(judge(fixture_text(NODES), []))["k8s.pod.device_plugin"]
    assert check["status"] == "fail" and check["observed"] == "absent"


def test_taints_and_cordon_ours_versus_an_operators():
    def ours(item):
        item["spec"]["unschedulable"] = True
        item["spec"]["taints"] = [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"},
                                  {"key": "zhisuan.ops/repair", "value": "xid79", "effect": "NoSchedule"}]
        item["metadata"]["annotations"]["zhisuan.ops/drain-reason"] = "zhisuan: xid.79"

    def theirs(item):
        item["spec"]["unschedulable"] = True
        item["spec"]["taints"] = [{"key": "maintenance", "value": "psu", "effect": "NoExecute"},
                                  {"key": "maintenance", "value": "psu", "effect": "NoSchedule"}]
    mine = by_id(judge(node_list(ours), [plugin()]))
    assert mine["k8s.node.schedulable"]["remedy"] == "monitor" and mine["k8s.node.schedulable"]["status"] == "warn"
    assert mine["k8s.taint.zhisuan_ops_repair"]["remedy"] == "monitor"
    other = by_id(judge(node_list(theirs), [plugin()]))
    assert other["k8s.node.schedulable"]["remedy"] == "investigate"
    assert other["k8s.taint.maintenance"]["status"] == "warn" and other["k8s.taint.maintenance"]["remedy"] == "investigate"
    # one check for the key, both effects in it
    taints = [c for c in judge(node_list(theirs), [plugin()])["checks"] if c["id"] == "k8s.taint.maintenance"]
    assert len(taints) == 1 and taints[0]["observed"] == "maintenance=psu:NoExecute, maintenance=psu:NoSchedule"


def test_labels_against_profile_and_baseline():
    checks = by_id(judge(fixture_text(NODES), [plugin()], profile="H100", baseline={"nvidia_driver": "535", "cuda": "12.4"}))
    assert checks["k8s.labels.product"]["status"] == "fail" and checks["k8s.labels.product"]["observed"] == "NVIDIA-A16-4Q"
    assert checks["k8s.labels.driver"]["status"] == "fail" and checks["k8s.labels.cuda"]["status"] == "pass"


def test_edited_gfd_labels_mismatch_the_baseline():
    text = node_list(lambda n: captures.set_gfd(n, product="NVIDIA-H100-80GB-HBM3", driver="535.161.08", cuda="12.2"))
    node = k8s_nodes.parse_nodes(text)["nori"]
    assert node["gfd"] == {"product": "NVIDIA-H100-80GB-HBM3", "driver": "535.161.08", "cuda": "12.2", "count": 1, "present": True}
    checks = by_id(judge(text, [plugin()], profile="H100", baseline={"nvidia_driver": "550", "cuda": "12.4"}))
    assert checks["k8s.labels.product"]["status"] == "pass"
    assert (checks["k8s.labels.driver"]["status"], checks["k8s.labels.driver"]["observed"]) == ("fail", "535.161.08")
    assert (checks["k8s.labels.cuda"]["status"], checks["k8s.labels.cuda"]["observed"]) == ("fail", "12.2")


def test_node_the_api_server_does_not_know():
    result = platform_checks({"k8s": {"nodes": {}, "pods": []}}, "k8s_node", host="gpu09", installed=8)
    assert [(c["id"], c["status"]) for c in result["checks"]] == [("k8s.node.registered", "fail")]


def test_failed_collect_is_one_error_check():
    result = platform_checks({"failed": True, "msg": "kubectl: exited with rc 1", "error_kind": "failed"}, "k8s_node", host="nori")
    assert [(c["id"], c["status"]) for c in result["checks"]] == [("k8s.collect.kubectl", "error")]


def test_cluster_counts_states_and_gpus():
    healthy = k8s_nodes.parse_nodes(fixture_text(NODES))
    sick = k8s_nodes.parse_nodes(node_list(lambda n: captures.set_ready(n, "Unknown")))
    nodes = {"nori": healthy["nori"], "nori2": dict(sick["nori"], name="nori2")}
    checks, data = rules.judge_cluster(nodes, {"nori": 1, "nori2": 1, "nori3": 1})
    got = dict((c["id"], c) for c in checks)
    assert data["states"] == {"ready": 1, "not_ready": 1, "cordoned": 0, "missing": 1}
    assert got["k8s.cluster.nodes"]["status"] == "fail"
    assert (data["gpus_allocatable"], data["gpus_installed"]) == (1, 3) and got["k8s.cluster.gpus"]["status"] == "fail"
    assert data["availability"] == pytest.approx(1 / 3, abs=1e-3)


@pytest.mark.parametrize("text, detail", [
    ("not json", "not JSON"), ('{"kind": "List"}', "no 'items' list"), ('{"items": [{"metadata": {}}]}', "without metadata.name"),
])
def test_bad_node_output_is_a_typed_error(text, detail):
    with pytest.raises(ParseError) as info:
        k8s_nodes.parse_nodes(text)
    assert detail in str(info.value) and info.value.tool == "kubectl"


@FUZZ
@given(json_text_mutations(fixture_text(NODES)))
def test_node_parser_is_total(text):
    assert_total("k8s_nodes.parse_nodes", k8s_nodes.parse_nodes, text)


@FUZZ
@given(json_text_mutations(pods_text(captures.gpu_pod("dcgm_exporter", "nori"), plugin(captures.crash_loop))))
def test_pod_parser_is_total(text):
    assert_total("k8s_nodes.parse_pods", k8s_nodes.parse_pods, text)


@FUZZ
@given(json_text_mutations(fixture_text(PODS)))
def test_pod_parser_is_total_on_the_capture(text):
    assert_total("k8s_nodes.parse_pods", k8s_nodes.parse_pods, text)


def test_the_judge_takes_the_platform_parts_and_names_a_bad_count():
    """The roles judge the platform with zhisuan.ops.judge (issue 29 item 3): the same rules as the filter, and an
    inventory count that is not a number is an error naming it, never a facts error."""
    from ansible_collections.zhisuan.ops.plugins.plugin_utils._judging import judge_family
    collected = {"k8s": {"nodes": k8s_nodes.parse_nodes(node_list()), "pods": []}}
    name = sorted(collected["k8s"]["nodes"])[0]
    checks, summary, unreachable = judge_family("k8s_node", "node01", collected, context={"node": name, "installed": 8})
    filtered = platform_checks(collected, "k8s_node", host="node01", node=name, installed=8)
    assert (checks, summary, unreachable) == (filtered["checks"], filtered["summary"], False)
    assert summary["node"] == name and checks
    with pytest.raises(ValueError, match=r"^installed must be a number of GPUs, got 'eight'$"):
        judge_family("k8s_node", "node01", collected, context={"node": name, "installed": "eight"})
