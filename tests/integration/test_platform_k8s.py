# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The k8s and job families with the REAL kubectl against tests/lab/k8s_standin.py, a STAND-IN for the Kubernetes API
server (no real API server can run where this is built). What it serves are the real captures of tests/fixtures/k8s
edited by tests/lab/k8s_captures.py: the nodes are the captured rke2 GPU node renamed, made an 8-GPU H100 node and
edited per fault; the device-plugin pods are a real kubelet pod (kube-proxy) relabelled as the GPU operator's
device plugin, the crash an edit of its real container status. What this shows: what the role asks kubectl, and how
it judges what kubectl returns - not that a real cluster answers the same."""

from __future__ import annotations

import os
import shutil
import sys

import pytest
import yaml

from .conftest import REPO, run_playbook

sys.path.insert(0, os.path.join(REPO, "tests", "lab"))
import k8s_captures as captures  # noqa: E402  pylint: disable=wrong-import-position
import k8s_standin as standin  # noqa: E402  pylint: disable=wrong-import-position

pytestmark = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
PLAYBOOK = os.path.join(REPO, "tests", "integration", "playbooks", "platform.yml")
HOSTS = ("gpu01", "gpu02", "gpu03", "gpu04")


def captured_node(name, ready=True, allocatable=8):
    """The captured node renamed, with 8 H100 GPUs (capacity, allocatable, GFD count and product edited)."""
    node = captures.set_gpus(captures.node(name), capacity=8, allocatable=allocatable, count=8)
    captures.set_gfd(node, product="NVIDIA-H100-80GB-HBM3")
    return node if ready else captures.set_ready(node, "Unknown")


def plugin_pod(node, crash=False):
    pod = captures.gpu_pod("device_plugin", node, suffix="%s7k2p" % node[-1])
    return captures.crash_loop(pod) if crash else pod


@pytest.fixture
def cluster(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    with open(os.path.join(REPO, "tests", "fixtures", "joblog", "pytorch-watchdog-timeout-basicsr-737.log"), encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    job_pod = standin.pod("ml", "train-k-worker-0", "gpu01", owner_kind="Job", owner_name="train-k", phase="Failed",
                          labels={"job-name": "train-k"})
    log = "".join("2026-11-30T10:42:%02d.000000000Z %s\n" % (i, line) for i, line in enumerate(lines))
    server = standin.serve(
        nodes=[captured_node("gpu01"), captured_node("gpu02", ready=False), captured_node("gpu03", allocatable=6),
               captured_node("gpu04")],
        pods=[plugin_pod("gpu01"), plugin_pod("gpu02"), plugin_pod("gpu03"), plugin_pod("gpu04", crash=True), job_pod],
        logs={("ml", "train-k-worker-0"): log})
    server.kubeconfig = standin.write_kubeconfig(str(tmp_path / "kubeconfig"), server.url)
    yield server
    server.close()


def inventory(tmp_path, cluster):
    hosts = dict((name, {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}) for name in HOSTS)
    doc = {"gpu_nodes": {"hosts": hosts, "vars": {
        "zhisuan_kubeconfig": cluster.kubeconfig, "zhisuan_expected": {"gpu_count": 8}, "zhisuan_gpu_profile": "H100",
        "zhisuan_scheduler": "kubernetes"}}}
    path = tmp_path / "hosts.yml"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def check(document, host, check_id):
    return next(c for c in document["hosts"][host]["checks"] if c["id"] == check_id)


def test_acceptance_tags_k8s_judges_every_gpu_node(tmp_path, cluster):
    runner, document = run_playbook(tmp_path, "acceptance.yml", inventory(tmp_path, cluster), tags="k8s")
    assert runner.rc == 0, runner.stdout.read()
    assert document is not None, runner.stdout.read()[-4000:]
    assert document["run"]["families"] == ["k8s"]
    assert document["hosts"]["gpu01"]["status"] == "pass", document["hosts"]["gpu01"]["checks"]
    ready = check(document, "gpu02", "k8s.node.ready")
    assert (ready["status"], ready["remedy"], ready["observed"]) == ("fail", "investigate", "Unknown")
    assert "Kubelet stopped posting node status." in ready["evidence"]
    alloc = check(document, "gpu03", "k8s.gpu.allocatable")
    assert (alloc["status"], alloc["remedy"], alloc["observed"]) == ("fail", "investigate", 6)
    plugin = check(document, "gpu04", "k8s.pod.device_plugin")
    assert (plugin["status"], plugin["remedy"], plugin["observed"]) == ("fail", "restart_app", "CrashLoopBackOff")
    assert "last terminated: Error (exit 1)" in plugin["evidence"]
    cluster_checks = dict((c["id"], c) for c in document["cluster"]["checks"])
    assert cluster_checks["k8s.cluster.nodes"]["status"] == "fail"
    data = document["cluster"]["k8s"]
    assert (data["gpus_allocatable"], data["gpus_installed"]) == (22, 32) and data["states"]["not_ready"] == 1
    # kubectl asked the stand-in for the node list and the pod list once, whatever the number of hosts
    assert cluster.requests.count(("GET", "/api/v1/nodes")) == 1 and cluster.requests.count(("GET", "/api/v1/pods")) == 1


def test_job_log_of_a_kubernetes_job(tmp_path, cluster):
    runner, document = run_playbook(tmp_path, PLAYBOOK, inventory(tmp_path, cluster), extravars={
        "zhisuan_test_families": ["job"], "zhisuan_job": "train-k", "zhisuan_test_kind": "diagnose",
        "check_job_namespace": "ml"})
    assert runner.rc == 0, runner.stdout.read()
    job = document["cluster"]["job"]
    assert (job["classification"], job["state"], job["nodes"], job["ranks"]) == ("nccl_timeout", "FAILED", ["gpu01"], [0, 1, 2])
    assert ("GET", "/api/v1/namespaces/ml/pods/train-k-worker-0/log") in cluster.requests
    # the availability from the nodes the role read itself: 8 + 6 + 8 allocatable on the Ready nodes of 32 installed
    availability = document["cluster"]["quality"]["cluster_compute_availability"]
    assert (availability["value"], availability["inputs"]["source"]) == (round(22 / 32, 4), "k8s")
