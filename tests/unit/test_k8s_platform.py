# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The k8s family: parsers of kubectl's node and pod JSON (the node is a real capture, tests/fixtures/k8s, faults made
by editing it) and the rules (_judge/k8s.py) through the platform_checks filter."""

from __future__ import annotations

import copy
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
import k8s_standin as standin  # noqa: E402  pylint: disable=wrong-import-position

NODES = "k8s/kubectl-get-nodes-gpu-rke2-nori.json"


def node_list(edit=None):
    doc = copy.deepcopy(fixture_json(NODES))
    if edit:
        edit(doc["items"][0])
    return json.dumps(doc)


def condition(item, kind):
    return next(c for c in item["status"]["conditions"] if c["type"] == kind)


def gpu_pod(name, owner, status=None, init=None, phase="Running"):
    """A Pod of the GPU platform, written per the v1 API reference (no real pod capture is in the fixtures)."""
    pod = standin.pod("gpu-operator", name, "nori", owner_kind="DaemonSet", owner_name=owner, phase=phase)
    pod["status"]["containerStatuses"] = status or [{"name": "main", "ready": True, "restartCount": 0,
                                                    "state": {"running": {"startedAt": "2025-03-19T20:45:00Z"}}}]
    if init is not None:
        pod["status"]["initContainerStatuses"] = init
    return pod


def pods_text(*pods):
    return json.dumps({"kind": "PodList", "apiVersion": "v1", "items": list(pods)})


def judge(nodes_text, pods=(), installed=1, **kwargs):
    collected = {"k8s": {"nodes": k8s_nodes.parse_nodes(nodes_text), "pods": k8s_nodes.parse_pods(pods_text(*pods))}}
    return platform_checks(collected, "k8s_node", host="nori", installed=installed, installed_source="gpu_info", **kwargs)


def by_id(result):
    return dict((c["id"], c) for c in result["checks"])


def test_real_capture_parses_to_the_nodes_gpu_facts():
    node = k8s_nodes.parse_nodes(fixture_text(NODES))["nori"]
    assert node["ready"] is True and node["ready_reason"] == "KubeletReady"
    assert node["conditions"] == {"NetworkUnavailable": False, "MemoryPressure": False, "DiskPressure": False,
                                  "PIDPressure": False}
    assert (node["gpu_capacity"], node["gpu_allocatable"]) == (1, 1)
    assert node["gfd"] == {"product": "NVIDIA-A16-4Q", "driver": "550.90.07", "cuda": "12.4", "count": 1, "present": True}
    assert node["unschedulable"] is False and node["taints"] == []


def test_healthy_node_passes_every_check():
    checks = by_id(judge(fixture_text(NODES), [gpu_pod("nvidia-device-plugin-daemonset-hkt9j", "nvidia-device-plugin-daemonset")],
                         profile="A16", baseline={"nvidia_driver": "550", "cuda": "12.4"}))
    assert all(c["status"] == "pass" for c in checks.values()), [c for c in checks.values() if c["status"] != "pass"]
    assert set(checks) >= {"k8s.node.ready", "k8s.gpu.capacity", "k8s.gpu.allocatable", "k8s.labels.product",
                           "k8s.labels.driver", "k8s.labels.cuda", "k8s.pod.device_plugin"}


def test_not_ready_node_fails_with_the_kubelet_reason():
    def edit(item):
        cond = condition(item, "Ready")
        cond.update(status="False", reason="KubeletNotReady", message="container runtime network not ready")
    check = by_id(judge(node_list(edit), [gpu_pod("nvidia-device-plugin-daemonset-hkt9j", "nvidia-device-plugin-daemonset")]))["k8s.node.ready"]
    assert check["status"] == "fail" and check["remedy"] == "investigate" and check["observed"] == "NotReady"
    assert "KubeletNotReady" in check["message"] and "container runtime network not ready" in check["evidence"]


def test_fewer_allocatable_than_capacity_is_a_fail_that_sends_to_the_gpu_checks():
    def edit(item):
        item["status"]["capacity"]["nvidia.com/gpu"] = "8"
        item["status"]["allocatable"]["nvidia.com/gpu"] = "6"
    checks = by_id(judge(node_list(edit), [gpu_pod("nvidia-device-plugin-daemonset-hkt9j", "nvidia-device-plugin-daemonset")], installed=8))
    assert checks["k8s.gpu.capacity"]["status"] == "pass"
    assert checks["k8s.gpu.allocatable"]["status"] == "fail" and checks["k8s.gpu.allocatable"]["observed"] == 6
    assert "gpu and xid" in checks["k8s.gpu.allocatable"]["message"]


def test_capacity_below_installed_gpus_restarts_the_device_plugin():
    check = by_id(judge(fixture_text(NODES), [gpu_pod("nvidia-device-plugin-daemonset-hkt9j", "nvidia-device-plugin-daemonset")],
                        installed=8))["k8s.gpu.capacity"]
    assert check["status"] == "fail" and check["remedy"] == "restart_app" and check["observed"] == 1
    assert check["expected"] == "== 8"


def test_crashing_device_plugin_is_restart_app_with_its_last_state():
    crash = [{"name": "nvidia-device-plugin", "ready": False, "restartCount": 7,
              "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 5m0s restarting failed container"}},
              "lastState": {"terminated": {"reason": "Error", "exitCode": 1, "finishedAt": "2025-03-19T23:10:00Z"}}}]
    check = by_id(judge(fixture_text(NODES), [gpu_pod("nvidia-device-plugin-daemonset-hkt9j", "nvidia-device-plugin-daemonset",
                                                      status=crash)]))["k8s.pod.device_plugin"]
    assert check["status"] == "fail" and check["remedy"] == "restart_app" and check["observed"] == "CrashLoopBackOff"
    assert "last terminated: Error (exit 1)" in check["evidence"]


def test_init_error_of_an_operator_pod_is_investigate():
    init = [{"name": "driver-validation", "ready": False, "restartCount": 3,
             "state": {"terminated": {"reason": "Error", "exitCode": 1}}}]
    waiting = [{"name": "nvidia-dcgm-exporter", "ready": False, "restartCount": 0, "state": {"waiting": {"reason": "PodInitializing"}}}]
    checks = by_id(judge(fixture_text(NODES), [
        gpu_pod("nvidia-device-plugin-daemonset-hkt9j", "nvidia-device-plugin-daemonset"),
        gpu_pod("nvidia-dcgm-exporter-n6jqs", "nvidia-dcgm-exporter", status=waiting, init=init, phase="Pending")]))
    check = checks["k8s.pod.dcgm_exporter"]
    assert check["status"] == "fail" and check["remedy"] == "investigate" and check["observed"] == "Init:Error"


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
        item["spec"]["taints"] = [{"key": "maintenance", "value": "psu", "effect": "NoExecute"}]
    pods = [gpu_pod("nvidia-device-plugin-daemonset-hkt9j", "nvidia-device-plugin-daemonset")]
    mine = by_id(judge(node_list(ours), pods))
    assert mine["k8s.node.schedulable"]["remedy"] == "monitor" and mine["k8s.node.schedulable"]["status"] == "warn"
    assert mine["k8s.taint.zhisuan_ops_repair"]["remedy"] == "monitor"
    other = by_id(judge(node_list(theirs), pods))
    assert other["k8s.node.schedulable"]["remedy"] == "investigate"
    assert other["k8s.taint.maintenance"]["status"] == "warn" and other["k8s.taint.maintenance"]["remedy"] == "investigate"


def test_labels_against_profile_and_baseline():
    pods = [gpu_pod("nvidia-device-plugin-daemonset-hkt9j", "nvidia-device-plugin-daemonset")]
    checks = by_id(judge(fixture_text(NODES), pods, profile="H100", baseline={"nvidia_driver": "535", "cuda": "12.4"}))
    assert checks["k8s.labels.product"]["status"] == "fail" and checks["k8s.labels.product"]["observed"] == "NVIDIA-A16-4Q"
    assert checks["k8s.labels.driver"]["status"] == "fail" and checks["k8s.labels.cuda"]["status"] == "pass"


def test_node_the_api_server_does_not_know():
    result = platform_checks({"k8s": {"nodes": {}, "pods": []}}, "k8s_node", host="gpu09", installed=8)
    assert [(c["id"], c["status"]) for c in result["checks"]] == [("k8s.node.registered", "fail")]


def test_failed_collect_is_one_error_check():
    result = platform_checks({"failed": True, "msg": "kubectl: exited with rc 1", "error_kind": "failed"}, "k8s_node", host="nori")
    assert [(c["id"], c["status"]) for c in result["checks"]] == [("k8s.collect.kubectl", "error")]


def test_cluster_counts_states_and_gpus():
    def not_ready(item):
        condition(item, "Ready")["status"] = "Unknown"
    healthy = k8s_nodes.parse_nodes(fixture_text(NODES))
    sick = k8s_nodes.parse_nodes(node_list(not_ready))
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
@given(json_text_mutations(pods_text(gpu_pod("nvidia-device-plugin-daemonset-hkt9j", "nvidia-device-plugin-daemonset"))))
def test_pod_parser_is_total(text):
    assert_total("k8s_nodes.parse_pods", k8s_nodes.parse_pods, text)
