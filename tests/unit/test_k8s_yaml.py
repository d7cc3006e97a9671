# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``kubectl get nodes/pods -o yaml`` (issue 23): a kind v1.26 node list (kubernetes/autoscaler's kwok test data) and
OpenShift 3.7's ``oc get node/pod -o yaml`` (RedHatInsights/insights-core's test data), read by _sched/k8s_nodes.py
item by item; the saved-output entry points ``src``/``pods_src`` of k8s_node_info."""

from __future__ import annotations

import os

from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.zhisuan.ops.plugins.module_utils._sched import k8s_nodes
from fuzzing import FIXTURES, FUZZ, CollectModule, assert_total, fixture_text, text_mutations

KIND = "k8s/kubectl-get-nodes-yaml-kind-1.26-autoscaler-kwok.yaml"
OC_NODE = "k8s/oc-get-node-yaml-openshift-3.7-insights-core.yaml"
OC_POD = "k8s/oc-get-pod-yaml-openshift-3.x-insights-core.yaml"
JSON_NODES = "k8s/kubectl-get-nodes-edgexr-gpuNodesSampleOutput.json"


def test_kubectl_yaml_node_list():
    nodes = k8s_nodes.parse_nodes(fixture_text(KIND))
    assert [(n["name"], n["ready"], n["kubelet_version"], [t["effect"] for t in n["taints"]]) for n in nodes.values()] == [
        ("kind-control-plane", True, "v1.26.3", ["NoSchedule"]), ("kind-worker", True, "v1.26.3", [])]
    assert nodes["kind-worker"]["conditions"] == {"MemoryPressure": False, "DiskPressure": False, "PIDPressure": False}


def test_oc_yaml_node_with_unquoted_times_and_a_cordon():
    nodes = k8s_nodes.parse_nodes(fixture_text(OC_NODE))
    master = nodes["master37"]
    # 3.7 has no Ready condition in this capture and is cordoned (spec.unschedulable)
    assert (master["ready"], master["unschedulable"], master["kubelet_version"]) == (None, True, "v1.7.6+a08f5eeb62")


def test_yaml_pods_are_read_and_the_gpu_platform_filter_applies():
    warnings = []
    items = k8s_nodes._load_list(fixture_text(OC_POD), "kubectl get pods -o json", warnings)
    assert [i["metadata"]["name"] for i in items] == ["hello-pod", "router-1-1-w27o2"]
    assert warnings == [] and k8s_nodes.parse_pods(fixture_text(OC_POD)) == []


def test_a_damaged_item_is_a_warning_naming_its_line_and_the_others_are_read():
    lines = fixture_text(KIND).splitlines()
    worker = next(i for i, line in enumerate(lines) if "name: kind-worker" in line and line.startswith("    name:"))
    lines[worker] = "    name: [kind-worker"  # an unclosed flow sequence in the second item
    warnings = []
    nodes = k8s_nodes.parse_nodes("\n".join(lines), warnings)
    assert list(nodes) == ["kind-control-plane"]
    assert warnings[0].startswith("the YAML document is damaged") and warnings[1].startswith("line ")
    second_item = [i for i, line in enumerate(lines) if line.startswith("- apiVersion")][1] + 1
    assert warnings[1].startswith("line %d:" % second_item)


def test_a_truncated_yaml_keeps_the_items_before_the_cut():
    text = fixture_text(KIND)
    cut = text[:text.index("    name: kind-worker") + 10]
    warnings = []
    nodes = k8s_nodes.parse_nodes(cut, warnings)
    assert list(nodes) == ["kind-control-plane"] and warnings == [
        "items[1]: a Node without metadata.name in 'kubectl get nodes -o json': left out"]


def test_json_still_reads_as_before():
    assert list(k8s_nodes.parse_nodes(fixture_text(JSON_NODES))) == ["nori"]


def test_k8s_node_info_reads_saved_outputs():
    module = CollectModule({"kubectl_path": "/nonexistent/kubectl", "kubeconfig": None, "context": None, "timeout": 10,
                            "src": os.path.join(FIXTURES, KIND), "pods_src": os.path.join(FIXTURES, OC_POD)})
    facts = k8s_nodes.collect_k8s_facts(module)["k8s"]
    assert sorted(facts["nodes"]) == ["kind-control-plane", "kind-worker"] and facts["pods"] == []
    assert facts["warnings"] == [] and module.warnings == []


@FUZZ
@given(st.sampled_from([KIND, OC_NODE, OC_POD]).flatmap(lambda path: text_mutations(fixture_text(path))))
def test_yaml_readers_are_total(text):
    assert_total("k8s_nodes.parse_nodes yaml", k8s_nodes.parse_nodes, text)
    assert_total("k8s_nodes.parse_pods yaml", k8s_nodes.parse_pods, text)
