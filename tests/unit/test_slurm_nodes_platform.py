# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The slurm family: parsers of scontrol's node, partition and job lines and of the jobcomp/filetxt log (captured on
the lab's real Slurm 22.05, tests/fixtures/slurm) and the rules (_judge/slurm.py) through platform_checks."""

from __future__ import annotations

import pytest
from hypothesis import given

from ansible_collections.zhisuan.ops.plugins.filter.platform_checks import platform_checks
from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import slurm as rules
from ansible_collections.zhisuan.ops.plugins.module_utils._sched import slurm_nodes
from fuzzing import FUZZ, assert_total, fixture_text, text_mutations

MIXED = "slurm/scontrol-o-show-node-4-mixed-states.txt"
IDLE = "slurm/scontrol-o-show-node-4-idle.txt"
PARTITION = "slurm/scontrol-o-show-partition.txt"


def facts(nodes_path=MIXED, edit=None):
    text = fixture_text(nodes_path)
    if edit:
        text = edit(text)
    return {"slurm": {"nodes": slurm_nodes.parse_nodes(text),
                      "partitions": slurm_nodes.parse_partitions(fixture_text(PARTITION))}}


def check(collected, host, installed=8):
    result = platform_checks(collected, "slurm_node", host=host, installed=installed, installed_source="gpu_info")
    return dict((c["id"], c) for c in result["checks"])


def test_nodes_of_the_lab_capture():
    nodes = slurm_nodes.parse_nodes(fixture_text(MIXED))
    assert [(n["name"], n["state"], n["gpus"]) for n in nodes.values()] == [
        ("node01", "idle", 8), ("node02", "drained", 8), ("node03", "drained", 8), ("node04", "down", 8)]
    assert nodes["node02"]["reason"] == "zhisuan: rdma check failed" and nodes["node02"]["reason_user"] == "root"


@pytest.mark.parametrize("gres, gpus", [("gpu:8", 8), ("gpu:a100:4(S:0-1),gpu:h100:4", 8), ("(null)", None),
                                        ("shard:8", None), ("gpu:tesla:2,mps:200", 2)])
def test_gres_gpus(gres, gpus):
    assert slurm_nodes.gres_gpus(gres) == gpus


def test_states_and_remedies_per_node():
    collected = facts()
    assert check(collected, "node01")["slurm.node.state"]["status"] == "pass"
    ours = check(collected, "node02")["slurm.node.state"]
    assert (ours["status"], ours["remedy"]) == ("warn", "monitor")
    other = check(collected, "node03")["slurm.node.state"]
    assert (other["status"], other["remedy"]) == ("warn", "investigate") and "operator: fan swap OPS-1" in other["message"]
    down = check(collected, "node04")["slurm.node.state"]
    assert (down["status"], down["remedy"]) == ("fail", "investigate") and "PSU swap" in down["message"]


def test_not_responding_node_restarts_slurmd():
    collected = facts(IDLE, lambda text: text.replace("NodeName=node01 ", "NodeName=node01 ", 1).replace(
        "State=IDLE ThreadsPerCore", "State=IDLE+NOT_RESPONDING ThreadsPerCore", 1))
    got = check(collected, "node01")["slurm.node.state"]
    assert (got["status"], got["remedy"], got["observed"]) == ("fail", "restart_app", "idle*")


def test_gres_against_the_gpus_installed():
    collected = facts(IDLE)
    assert check(collected, "node01", installed=8)["slurm.gres.gpu"]["status"] == "pass"
    more = check(collected, "node01", installed=7)["slurm.gres.gpu"]
    assert (more["status"], more["remedy"]) == ("fail", "investigate")
    fewer = check(collected, "node01", installed=10)["slurm.gres.gpu"]
    assert (fewer["status"], fewer["remedy"]) == ("warn", "tune")
    none = check(facts(IDLE, lambda t: t.replace("Gres=gpu:8", "Gres=(null)")), "node01")["slurm.gres.gpu"]
    assert none["status"] == "fail" and none["observed"] == 0


def test_unknown_node_fails_registered():
    assert check(facts(), "node09")["slurm.node.registered"]["status"] == "fail"


def test_cluster_partitions_and_gpus():
    collected = facts()
    checks, data = rules.judge_cluster(collected["slurm"]["nodes"], collected["slurm"]["partitions"],
                                       {"node01": 8, "node02": 8, "node03": 8, "node04": 8})
    got = dict((c["id"], c) for c in checks)
    assert data == {"states": {"idle": 1, "drained": 2, "down": 1}, "gpus_usable": 8, "gpus_installed": 32,
                    "availability": 0.25}
    assert got["slurm.cluster.nodes"]["status"] == "fail"
    assert got["slurm.partition.gpu.gpus"]["status"] == "warn" and got["slurm.partition.gpu.gpus"]["observed"] == 8
    assert got["slurm.cluster.gpus"]["status"] == "fail"


def test_partition_down_fails():
    parts = slurm_nodes.parse_partitions(fixture_text(PARTITION).replace("State=UP", "State=DOWN"))
    checks, dummy = rules.judge_cluster(slurm_nodes.parse_nodes(fixture_text(IDLE)), parts, {"node01": 8})
    assert next(c for c in checks if c["id"] == "slurm.partition.gpu.gpus")["status"] == "fail"


def test_jobs_and_jobcomp_of_the_lab():
    failed = slurm_nodes.parse_job(fixture_text("slurm/scontrol-o-show-job-failed.txt"))
    assert (failed["id"], failed["state"], failed["nodes"], failed["exit_code"]) == ("1", "FAILED", ["node01", "node02"], "1:0")
    assert failed["stdout"].endswith("train-a-1.out")
    requeued = slurm_nodes.parse_job(fixture_text("slurm/scontrol-o-show-job-requeued.txt"))
    assert (requeued["state"], requeued["restarts"], requeued["nodes"]) == ("PENDING", 1, [])
    records = slurm_nodes.parse_jobcomp(fixture_text("slurm/jobcomp-filetxt-requeue.txt"))
    assert [(r["id"], r["state"]) for r in records] == [("1", "FAILED"), ("2", "PENDING"), ("2", "CANCELLED")]


@pytest.mark.parametrize("func, text, detail", [
    (slurm_nodes.parse_partitions, "Nodes=node01 TotalCPUs=4", "no PartitionName="),
    (slurm_nodes.parse_job, "nothing here", "no JobId= line"),
    (slurm_nodes.parse_jobcomp, "UserId=root Name=x", "no JobId= or JobState="),
    (slurm_nodes.expand_hostlist, "node[a-c]", "not a Slurm host list"),
])
def test_bad_input_is_a_typed_error(func, text, detail):
    with pytest.raises(ParseError) as info:
        func(text)
    assert detail in str(info.value)


@FUZZ
@given(text_mutations(fixture_text(MIXED)))
def test_node_parser_is_total(text):
    assert_total("slurm_nodes.parse_nodes", slurm_nodes.parse_nodes, text)


@FUZZ
@given(text_mutations(fixture_text("slurm/jobcomp-filetxt-requeue.txt")))
def test_jobcomp_parser_is_total(text):
    assert_total("slurm_nodes.parse_jobcomp", slurm_nodes.parse_jobcomp, text)


@FUZZ
@given(text_mutations(fixture_text("slurm/scontrol-o-show-job-failed.txt")))
def test_job_parser_is_total(text):
    assert_total("slurm_nodes.parse_job", slurm_nodes.parse_job, text)


def test_sinfo_json_of_the_same_lab_agrees_with_scontrol():
    from ansible_collections.zhisuan.ops.plugins.module_utils._sched.slurm import parse_sinfo_json  # pylint: disable=import-outside-toplevel
    sinfo = parse_sinfo_json(fixture_text("slurm/sinfo-json-22.05-mixed-states.json"))
    scontrol = slurm_nodes.parse_nodes(fixture_text(MIXED))
    assert dict((n, (v["state"], slurm_nodes.gres_gpus(v["gres"]))) for n, v in sinfo.items()) == \
        dict((n, (v["state"], v["gpus"])) for n, v in scontrol.items())
