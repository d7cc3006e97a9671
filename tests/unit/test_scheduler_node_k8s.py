# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""zhisuan.ops.scheduler_node, Kubernetes path: the real kubectl against tests/lab/k8s_standin.py, a STAND-IN for the
API server (standard-library Python; no real API server can run where this is built). These tests show what the
module asks kubectl to do and that kubectl's requests do it; they do not show that a real cluster behaves the same."""

from __future__ import annotations

import json
import os
import sys

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._sched import k8s
from ansible_collections.zhisuan.ops.plugins.modules import scheduler_node

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "lab"))
import k8s_standin as standin  # noqa: E402  pylint: disable=wrong-import-position

pytestmark = pytest.mark.usefixtures("as_node")
ANN = "zhisuan.ops/drain-reason"


@pytest.fixture
def cluster(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))  # kubectl's discovery cache
    server = standin.serve(
        nodes=[standin.node("gpu01"), standin.node("gpu02"), standin.node("gpu03", unschedulable=True)],
        pods=[standin.pod("ml", "train-7d9f-abc12", "gpu01"),
              standin.pod("gpu-operator", "nvidia-device-plugin-x1", "gpu01", owner_kind="DaemonSet", owner_name="nvidia-device-plugin"),
              standin.pod("ml", "done-job-xyz", "gpu01", owner_kind="Job", phase="Succeeded"),
              standin.pod("ml", "serve-5c4d-q1", "gpu02", labels={standin.PDB_LABEL: "block"})],
        daemonsets=[("gpu-operator", "nvidia-device-plugin")])
    server.kubeconfig = standin.write_kubeconfig(str(tmp_path / "kubeconfig"), server.url)
    yield server
    server.close()


def run(cluster, capsys, check_mode=False, **args):
    params = dict({"scheduler": "kubernetes", "kubeconfig": cluster.kubeconfig}, **args)
    if check_mode:
        params["_ansible_check_mode"] = True
    with patch_module_args(params):
        with pytest.raises(SystemExit) as info:
            scheduler_node.main()
    return info.value.code, json.loads(capsys.readouterr().out)


def writes(cluster):
    return [r for r in cluster.requests if r[0] != "GET"]


def test_cordon_keeps_our_reason_in_the_annotation(cluster, capsys):
    code, out = run(cluster, capsys, name="gpu01", state="drained", reason="xid.79 (run r1)")
    assert code == 0 and out["changed"] is True and out["action"] == "drained"
    node = out["node"]
    # a workload pod still runs: cordoned but not drained (the DaemonSet pod and the finished pod do not count)
    assert (node["state"], node["drain"], node["drained_by_us"], node["jobs_running"]) == ("draining", True, True, 1)
    assert node["reason"] == "zhisuan: xid.79 (run r1)" and node["scheduler"] == "kubernetes"
    obj = cluster.nodes["gpu01"]
    assert obj["spec"]["unschedulable"] is True and obj["metadata"]["annotations"][ANN] == "zhisuan: xid.79 (run r1)"
    assert ("ml", "train-7d9f-abc12") in cluster.pods  # a cordon evicts nothing


def test_wait_drained_evicts_the_workload_pods(cluster, capsys):
    code, out = run(cluster, capsys, name="gpu01", state="drained", reason="xid.79 (run r1)", wait_drained=True, timeout=30)
    assert code == 0 and out["changed"] is True and out["action"] == "drained"
    assert (out["node"]["state"], out["node"]["jobs_running"]) == ("drained", 0)
    assert out["msg"] == "drained gpu01 (reason 'zhisuan: xid.79 (run r1)'); no jobs run on it"
    assert ("ml", "train-7d9f-abc12") not in cluster.pods
    assert ("gpu-operator", "nvidia-device-plugin-x1") in cluster.pods  # --ignore-daemonsets
    assert ("POST", "/api/v1/namespaces/ml/pods/train-7d9f-abc12/eviction") in cluster.requests


def test_a_pod_the_disruption_budget_protects_fails_the_wait_and_the_node_stays_cordoned(cluster, capsys):
    code, out = run(cluster, capsys, name="gpu02", state="drained", reason="xid.79 (run r1)", wait_drained=True, timeout=1)
    assert code == 1 and out["failed"] is True and out["error_kind"] == "failed" and out["tool"] == "kubectl"
    assert out["cmd"][-4:] == ["gpu02", "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=1s"]
    assert "disruption budget" in out["stderr"]
    assert cluster.nodes["gpu02"]["spec"]["unschedulable"] is True
    assert cluster.nodes["gpu02"]["metadata"]["annotations"][ANN] == "zhisuan: xid.79 (run r1)"


def test_a_node_cordoned_by_someone_else_is_left_alone(cluster, capsys):
    code, out = run(cluster, capsys, name="gpu03", state="drained", reason="xid.79 (run r1)")
    assert code == 0 and out["action"] == "refused" and out["changed"] is False
    assert out["node"]["drained_by_other"] is True and out["node"]["reason"] is None
    assert out["msg"] == "gpu03 is already drained by someone else (reason 'none'); left as it is, the reason is kept"
    code, out = run(cluster, capsys, name="gpu03", state="resumed")
    assert code == 0 and out["action"] == "refused"
    assert out["msg"] == ("refused to resume gpu03: it was drained by someone else (reason 'none'), not by zhisuan; resume it by "
                          "hand once that work is done")
    code, out = run(cluster, capsys, name="gpu03", state="resumed", strict=True)
    assert code == 1 and out["failed"] is True
    assert writes(cluster) == [] and cluster.nodes["gpu03"]["spec"]["unschedulable"] is True


def test_uncordon_of_ours_removes_the_annotation(cluster, capsys):
    run(cluster, capsys, name="gpu02", state="drained", reason="nvlink (run r1)")
    code, out = run(cluster, capsys, name="gpu02", state="resumed")
    assert code == 0 and out["changed"] is True and out["action"] == "resumed"
    assert (out["node"]["state"], out["node"]["drain"], out["node"]["reason"]) == ("ready", False, None)
    obj = cluster.nodes["gpu02"]
    assert "unschedulable" not in obj["spec"] and ANN not in obj["metadata"]["annotations"] and "taints" not in obj["spec"]
    code, out = run(cluster, capsys, name="gpu02", state="resumed")
    assert code == 0 and out["changed"] is False and out["msg"] == "gpu02 is not drained (ready); nothing to resume"


def test_check_mode_writes_nothing(cluster, capsys):
    code, out = run(cluster, capsys, check_mode=True, name="gpu01", state="drained", reason="x", wait_drained=True)
    assert code == 0 and out["changed"] is True and out["msg"] == "check mode: would drain gpu01"
    assert writes(cluster) == [] and "unschedulable" not in cluster.nodes["gpu01"]["spec"]


def test_unknown_node(cluster, capsys):
    code, out = run(cluster, capsys, name="gpu99", state="drained", reason="x")
    assert code == 1 and out["error_kind"] == "failed"
    assert out["msg"] == 'kubectl: node gpu99 is not known to the API server (Error from server (NotFound): nodes "gpu99" not found)'


@pytest.mark.parametrize("text,message", [
    ("nope", "kubectl: 'kubectl get node -o json' output is not JSON: Expecting value: line 1 column 1 (char 0)"),
    ('{"kind": "Pod", "metadata": {"name": "x"}}', "kubectl: 'kubectl get node -o json' returned kind 'Pod', not Node"),
    ('{"kind": "Node", "metadata": {}}', "kubectl: a Node without metadata.name"),
])
def test_parse_node_bad(text, message):
    with pytest.raises(ParseError) as info:
        k8s.parse_node(text)
    assert info.value.message == message


def test_workload_pods_bad():
    with pytest.raises(ParseError) as info:
        k8s.workload_pods('{"kind": "List"}')
    assert info.value.message == "kubectl: 'kubectl get pods -o json' output has no 'items' list"


def test_check_mode_diff_predicts_the_drained_node(cluster, capsys):
    code, out = run(cluster, capsys, check_mode=True, name="gpu01", state="drained", reason="x")
    assert code == 0 and writes(cluster) == []
    assert (out["diff"]["before"]["state"], out["diff"]["before"]["jobs_running"]) == ("ready", 1)
    after = out["diff"]["after"]
    assert (after["state"], after["drain"], after["reason"], after["jobs_running"]) == ("draining", True, "zhisuan: x", 1)
    code, out = run(cluster, capsys, check_mode=True, name="gpu01", state="drained", reason="x", wait_drained=True)
    assert (out["diff"]["after"]["state"], out["diff"]["after"]["jobs_running"]) == ("drained", 0)
    assert writes(cluster) == []
