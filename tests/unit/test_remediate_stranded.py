# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Stranded nodes (issue 25): a node our remediation drained (its drain reason carries our mark) and never resumed,
with nothing that remediation acts on now, is planned for verification and resume, takes no new slot of the
blast-radius limit, and is named by the cluster check remediate.stranded.<node>. The Slurm and the Kubernetes
readers give the plan the drain reason it reads the mark from (Kubernetes: the real kubectl against the STAND-IN
API server tests/lab/k8s_standin.py, not a real cluster)."""

from __future__ import annotations

import json
import os
import sys

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.zhisuan.ops.plugins.module_utils._judge import k8s as judge_k8s
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import slurm as judge_slurm
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.module_utils._remediate.plan import make_plan
from ansible_collections.zhisuan.ops.plugins.module_utils._remediate.policy import normalize
from ansible_collections.zhisuan.ops.plugins.module_utils._sched.common import annotate, our_mark
from ansible_collections.zhisuan.ops.plugins.module_utils._sched.slurm import parse_scontrol_node
from ansible_collections.zhisuan.ops.plugins.modules import scheduler_node
from ansible_collections.zhisuan.ops.plugins.plugin_utils._diagnosis import diagnose

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "lab"))
import k8s_standin as standin  # noqa: E402  pylint: disable=wrong-import-position

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "slurm")
MARK = "zhisuan:gpu.ecc.volatile_uncorrectable run 20261203T0810Z-remediate"


def _host(name, *checks):
    records = [make_check(cid, name, status, component="GPU 3", message=cid, remedy=remedy)
               for cid, status, remedy in checks]
    status = "fail" if any(c["status"] == "fail" for c in records) else "pass"
    return {"status": status, "checks": records, "facts": {"diagnosis": diagnose(records)}}


OK = ("gpu.count.present", "pass", None)
ECC = ("gpu.ecc.volatile_uncorrectable", "fail", "reset_gpu")


def _node(reason, drain=True, state="drained"):
    return annotate({"name": "x", "state": state, "drain": drain, "reason": reason}, "zhisuan")


def _policy(**limits):
    return normalize({"limits": limits} if limits else {})


# ------------------------------------------------------------------------------------------------- the drain mark

@pytest.mark.parametrize("reason, mark", [
    (MARK, {"cause": "gpu.ecc.volatile_uncorrectable", "run_id": "20261203T0810Z-remediate",
            "text": "gpu.ecc.volatile_uncorrectable run 20261203T0810Z-remediate"}),
    ("zhisuan: remediation by zhisuan.ops", {"cause": None, "run_id": None, "text": "remediation by zhisuan.ops"}),
    ("maintenance: fan replacement", None),
    ("", None),
    (None, None),
])
def test_our_mark_reads_remediations_drain_reason(reason, mark):
    assert our_mark(reason, "zhisuan") == mark


# ------------------------------------------------------------------------------------------------- the plan rule

def test_a_node_drained_by_us_that_passes_now_is_verified_and_resumed():
    hosts = {"node03": _host("node03", OK), "node04": _host("node04", OK)}
    plan = make_plan(hosts, _policy(), scheduler={"node03": _node(MARK)}, fleet=10)
    entry = plan["nodes"]["node03"]
    assert (entry["action"], entry["remedy"], entry["status"], entry["already_drained"]) == (
        "verify", "none", "planned", True)
    assert entry["stranded"] == {"run_id": "20261203T0810Z-remediate", "cause": "gpu.ecc.volatile_uncorrectable",
                                 "reason": MARK, "state": "drained"}
    assert entry["why"]["cause"] == "gpu.ecc.volatile_uncorrectable"
    assert plan["order"] == ["node03"] and plan["stranded"] == ["node03"] and "node04" not in plan["nodes"]
    assert entry["message"].startswith("stranded: node03 is drained by run 20261203T0810Z-remediate for "
                                       "gpu.ecc.volatile_uncorrectable")
    stranded = [c for c in plan["checks"] if c["id"] == "remediate.stranded.node03"]
    assert len(stranded) == 1
    assert (stranded[0]["host"], stranded[0]["status"], stranded[0]["remedy"]) == ("cluster", "warn", "investigate")
    assert stranded[0]["evidence"] == "drain reason: " + MARK


def test_a_stranded_node_counts_once_against_the_limit():
    # K = 1: the stranded node holds the one slot (it is drained); it is acted on without a second one, and the new
    # failure waits
    hosts = {"node03": _host("node03", OK), "node05": _host("node05", ECC)}
    plan = make_plan(hosts, _policy(max_nodes=1, max_percent=100), scheduler={"node03": _node(MARK)}, fleet=10)
    assert plan["order"] == ["node03"] and plan["deferred"] == ["node05"]
    assert plan["limit"]["already_drained"] == ["node03"]
    # K = 2: one slot for the stranded node, one for the new failure (not two for the stranded one)
    plan = make_plan(hosts, _policy(max_nodes=2, max_percent=100), scheduler={"node03": _node(MARK)}, fleet=10)
    assert plan["order"] == ["node03", "node05"] and plan["deferred"] == []


def test_a_node_drained_by_us_with_its_finding_still_there_is_acted_on_again_not_stranded():
    hosts = {"node03": _host("node03", ECC)}
    plan = make_plan(hosts, _policy(), scheduler={"node03": _node(MARK)}, fleet=10)
    assert plan["nodes"]["node03"]["action"] == "reset_gpu" and "stranded" not in plan["nodes"]["node03"]
    assert plan["stranded"] == [] and not [c for c in plan["checks"] if c["id"].startswith("remediate.stranded.")]


def test_an_operators_drain_is_never_stranded_and_an_idle_node_is_nothing():
    hosts = {"node06": _host("node06", OK), "node07": _host("node07", OK)}
    plan = make_plan(hosts, _policy(), scheduler={"node06": _node("maintenance: fan replacement"),
                                                  "node07": _node(None, drain=False, state="idle")}, fleet=10)
    assert plan["nodes"] == {} and plan["stranded"] == [] and plan["order"] == []


def test_a_scheduler_node_absent_from_the_source_is_stranded_too():
    # remediate from a results.json that does not hold the node: the scheduler still says we drained it
    plan = make_plan({"node04": _host("node04", OK)}, _policy(), scheduler={"node03": _node(MARK)}, fleet=10,
                     only=["node03", "node04"])
    assert plan["stranded"] == ["node03"] and plan["order"] == ["node03"]


def test_the_breaker_holds_a_stranded_node_like_every_other():
    hosts = dict(("node%02d" % i, _host("node%02d" % i, ECC)) for i in range(1, 6))
    hosts["node09"] = _host("node09", OK)
    plan = make_plan(hosts, _policy(), scheduler={"node09": _node(MARK)}, fleet=6)
    assert plan["breaker"]["tripped"] is True and "node09" in plan["held"] and plan["order"] == []
    assert plan["nodes"]["node09"]["message"].startswith("held: ")


def test_a_real_scontrol_node_drained_with_our_mark_is_stranded():
    # captured from the lab's slurmctld with the reason remediate_node sets
    with open(os.path.join(FIXTURES, "scontrol-o-show-node-drained-remediation-mark.txt")) as handle:
        node = annotate(parse_scontrol_node(handle.read(), "node03"), "zhisuan")
    assert (node["state"], node["drain"], node["drained_by_us"]) == ("drained", True, True)
    plan = make_plan({"node03": _host("node03", OK)}, _policy(), scheduler={"node03": node}, fleet=10)
    assert plan["nodes"]["node03"]["stranded"] == {
        "run_id": "20261203T0847Z-remediate", "cause": "gpu.ecc.volatile_uncorrectable",
        "reason": "zhisuan:gpu.ecc.volatile_uncorrectable run 20261203T0847Z-remediate", "state": "drained"}
    state = [c for c in judge_slurm.judge_slurm("node03", {"name": "node03", "node": node})
             if c["id"] == "slurm.node.state"][0]
    assert "held by remediation run 20261203T0847Z-remediate for gpu.ecc.volatile_uncorrectable" in state["message"]


# -------------------------------------------------------------------------------- the judges' words (inspect --tags)

def test_slurm_state_check_no_longer_promises_a_resume():
    with open(os.path.join(FIXTURES, "scontrol-o-show-node-drained.txt")) as handle:
        text = handle.read()
    name = text.split("NodeName=", 1)[1].split()[0]
    node = parse_scontrol_node(text, name)
    checks = judge_slurm.judge_slurm(name, {"name": name, "node": node})
    state = [c for c in checks if c["id"] == "slurm.node.state"][0]
    assert state["status"] == "warn" and "the remediation that drained it resumes it" not in state["message"]
    assert "until a remediate run verifies and resumes it" in state["message"]
    assert "remediate.stranded.%s" % name in state["message"]


def test_k8s_schedulable_check_no_longer_promises_a_resume():
    message = judge_k8s.cordoned_message("gpu01", "zhisuan", MARK)
    assert "resumed by the remediation that drained it" not in message
    assert "run 20261203T0810Z-remediate" in message and "remediate.stranded.gpu01" in message


# ---------------------------------------------------------------------------------- Kubernetes: the reader, the plan

@pytest.fixture
def cluster(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))  # kubectl's discovery cache
    server = standin.serve(nodes=[
        standin.node("gpu01", unschedulable=True, annotations={"zhisuan.ops/drain-reason": MARK}),
        standin.node("gpu02", unschedulable=True, annotations={"zhisuan.ops/drain-reason": "kernel upgrade"}),
        standin.node("gpu03")])
    server.kubeconfig = standin.write_kubeconfig(str(tmp_path / "kubeconfig"), server.url)
    yield server
    server.close()


@pytest.mark.usefixtures("as_node")
def test_kubernetes_a_node_cordoned_by_us_and_healthy_now_is_stranded(cluster, capsys):
    scheduler = {}
    for name in ("gpu01", "gpu02", "gpu03"):
        with patch_module_args({"scheduler": "kubernetes", "kubeconfig": cluster.kubeconfig, "name": name}):
            with pytest.raises(SystemExit) as info:
                scheduler_node.main()
        assert info.value.code == 0
        scheduler[name] = json.loads(capsys.readouterr().out)["node"]
    assert (scheduler["gpu01"]["drained_by_us"], scheduler["gpu02"]["drained_by_other"]) == (True, True)
    hosts = dict((name, _host(name, OK)) for name in scheduler)
    plan = make_plan(hosts, _policy(), scheduler=scheduler, fleet=3)
    assert plan["stranded"] == ["gpu01"] and plan["order"] == ["gpu01"]
    assert plan["nodes"]["gpu01"]["stranded"]["run_id"] == "20261203T0810Z-remediate"
    assert "gpu02" not in plan["nodes"] and "gpu02" not in plan["skipped"]  # someone else's, and nothing to act on
