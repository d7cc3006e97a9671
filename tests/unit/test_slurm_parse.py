# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_sched/slurm.py parsers on real Slurm 22.05.8 output captured from the lab's slurmctld (tests/fixtures/slurm/),
and the drain/resume decision of _sched/common.py on the nodes they read."""

from __future__ import annotations

import json
import os
import time

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._sched import common, slurm

FIX = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "slurm")


def read(name):
    with open(os.path.join(FIX, name), encoding="utf-8") as handle:
        return handle.read()


def node(fixture, name):
    return slurm.parse_scontrol_node(read(fixture), name)


# ------------------------------------------------------------------------------------------ scontrol -o show node

@pytest.mark.parametrize("fixture,name,raw,state,drain,responding", [
    ("scontrol-o-show-node-idle.txt", "node02", "IDLE", "idle", False, True),
    ("scontrol-o-show-node-drained.txt", "node01", "IDLE+DRAIN", "drained", True, True),
    ("scontrol-o-show-node-draining.txt", "node03", "MIXED+DRAIN", "draining", True, True),
    ("scontrol-o-show-node-drained-operator.txt", "node03", "IDLE+DRAIN", "drained", True, True),
    ("scontrol-o-show-node-down.txt", "node04", "DOWN", "down", False, True),
    ("scontrol-o-show-node-resumed-not-responding.txt", "node01", "IDLE+NOT_RESPONDING", "idle*", False, False),
])
def test_scontrol_states(fixture, name, raw, state, drain, responding):
    got = node(fixture, name)
    assert (got["name"], got["raw_state"], got["state"], got["drain"], got["responding"]) == (name, raw, state, drain, responding)
    assert got["partitions"] == ["gpu"] and got["gres"] == "gpu:8"


def test_scontrol_reason_with_user_and_time():
    got = node("scontrol-o-show-node-drained.txt", "node01")
    assert got["reason"] == "zhisuan: gpu.ecc.volatile_uncorrectable on GPU 3 (run 20261130T2300Z)"
    assert (got["reason_user"], got["reason_time"]) == ("root", "2026-11-30T23:00:37")
    op = node("scontrol-o-show-node-draining.txt", "node03")
    assert (op["reason"], op["reason_user"], op["reason_time"]) == ("fan replacement, ticket OPS-1432", "root", "2026-11-30T23:00:38")
    assert op["cpus_alloc"] == 1


def test_scontrol_idle_node_has_no_reason():
    got = node("scontrol-o-show-node-idle.txt", "node02")
    assert (got["reason"], got["reason_user"], got["reason_time"], got["cpus_alloc"]) == (None, None, None, 0)


def test_scontrol_down_node():
    got = node("scontrol-o-show-node-down.txt", "node04")
    assert got["down"] is True and got["reason"] == "operator: PSU swap"


def test_reason_holding_equals_signs_and_brackets():
    # a real line with its reason edited: '=' and '[' inside the reason do not split it
    line = read("scontrol-o-show-node-drained.txt").replace(
        "zhisuan: gpu.ecc.volatile_uncorrectable on GPU 3 (run 20261130T2300Z)", "zhisuan: check=gpu.ecc [GPU 3] run=r1")
    got = slurm.parse_scontrol_node(line, "node01")
    assert (got["reason"], got["reason_user"], got["reason_time"]) == ("zhisuan: check=gpu.ecc [GPU 3] run=r1", "root", "2026-11-30T23:00:37")


def test_two_nodes_in_one_output_pick_the_one_asked():
    text = read("scontrol-o-show-node-idle.txt") + read("scontrol-o-show-node-draining.txt")
    assert [n["name"] for n in slurm.parse_scontrol_nodes(text)] == ["node02", "node03"]
    assert slurm.parse_scontrol_node(text, "node03")["state"] == "draining"


@pytest.mark.parametrize("text,name,message", [
    ("", "node01", "scontrol: no node in the output of 'scontrol -o show node'"),
    ("Node nodeXX not found\n", "nodeXX", "scontrol: no NodeName= or State= in a line of 'scontrol -o show node': 'Node nodeXX not found'"),
    (None, "node09", "scontrol: node node09 is not in the output of 'scontrol -o show node node09'"),
])
def test_scontrol_bad_output(text, name, message):
    text = read("scontrol-o-show-node-idle.txt") if text is None else text
    with pytest.raises(ParseError) as info:
        slurm.parse_scontrol_node(text, name)
    assert info.value.message == message


def test_scontrol_bad_number():
    text = read("scontrol-o-show-node-idle.txt").replace("CPUAlloc=0", "CPUAlloc=x")
    with pytest.raises(ParseError) as info:
        slurm.parse_scontrol_node(text, "node02")
    assert info.value.message == "scontrol: CPUAlloc=x is not a number"


# ------------------------------------------------------------------------------------------ state words

@pytest.mark.parametrize("word,state,drain,responding", [
    ("DRAIN", "drained", True, True),
    ("DRAINED", "drained", True, True),
    ("DRAINING", "draining", True, True),
    ("drained", "drained", True, True),
    ("draining", "draining", True, True),
    ("drain", "drained", True, True),
    ("drng", "draining", True, True),
    ("drain*", "drained*", True, False),
    ("idle*", "idle*", False, False),
    ("IDLE+NOT_RESPONDING", "idle*", False, False),
    ("MIXED+DRAIN", "draining", True, True),
    ("ALLOCATED+DRAIN", "draining", True, True),
    ("IDLE+COMPLETING+DRAIN", "draining", True, True),
    ("DOWN+DRAIN", "drained", True, True),
    ("mix", "mixed", False, True),
    ("alloc", "allocated", False, True),
    ("down*", "down*", False, False),
])
def test_state_words(word, state, drain, responding):
    got = slurm.state_of(word)
    assert (got["state"], got["drain"], got["responding"]) == (state, drain, responding)


@pytest.mark.parametrize("word,message", [("", "slurm: empty node state"), ("IDLE+?", None), ("??", "slurm: unknown node state '??'")])
def test_bad_state_words(word, message):
    if message is None:  # an unknown flag is kept, not an error
        assert slurm.state_of(word)["flags"] == ["?"]
        return
    with pytest.raises(ParseError) as info:
        slurm.state_of(word)
    assert info.value.message == message


def test_sinfo_words_of_the_capture():
    # sinfo -N -o "%N %t %T %E": the short and the long word decode to the same state
    for line in read("sinfo-N-states.txt").splitlines():
        if line.startswith("NODELIST"):
            continue
        name, short, long_word = line.split()[:3]
        assert slurm.state_of(short)["state"] == slurm.state_of(long_word)["state"] == long_word, name


# ------------------------------------------------------------------------------------------ sinfo --json

@pytest.fixture
def utc(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_sinfo_json(utc):
    nodes = slurm.parse_sinfo_json(read("sinfo-json-mixed-states.json"))
    assert sorted(nodes) == ["node01", "node02", "node03", "node04"]
    assert [(n["raw_state"], n["state"]) for n in (nodes[k] for k in sorted(nodes))] == [
        ("IDLE+DRAIN", "drained"), ("IDLE", "idle"), ("MIXED+DRAIN", "draining"), ("DOWN", "down")]
    # the same reason, user and time as scontrol prints for the same node
    assert nodes["node03"]["reason"] == "fan replacement, ticket OPS-1432"
    assert (nodes["node03"]["reason_user"], nodes["node03"]["reason_time"]) == ("root", "2026-11-30T23:00:38")
    assert nodes["node02"]["reason"] is None and nodes["node02"]["reason_time"] is None
    assert nodes["node03"]["cpus_alloc"] == 1


def test_sinfo_json_slurm_23_02_data_parser_v0039():
    """Issue 12: Slurm 23.02's ``sinfo --json`` (data_parser v0.0.39: a ``sinfo`` list of node groups, the state as a
    list) from rivosinc/prometheus-slurm-exporter's fixtures; every value below is read from the file."""
    text = read("sinfo-json-23.02.5-dataparser-v0.0.39.json")
    doc = json.loads(text)
    assert doc["meta"]["Slurm"]["release"] == "23.02.5" and doc["meta"]["plugins"]["data_parser"] == "data_parser/v0.0.39"
    nodes = slurm.parse_sinfo_json(text)
    assert sorted(nodes) == doc["sinfo"][0]["nodes"]["nodes"] == ["localhost"]
    node = nodes["localhost"]
    assert (node["raw_state"], node["state"], node["drain"], node["down"], node["responding"]) == (
        "ALLOCATED", "allocated", False, False, True)
    assert node["partitions"] == [doc["sinfo"][0]["partition"]["name"]] == ["debug"]
    assert node["cpus_alloc"] == doc["sinfo"][0]["cpus"]["allocated"] == 1
    assert (node["reason"], node["reason_user"], node["reason_time"], node["gres"]) == (None, None, None, None)


def test_sinfo_json_slurm_23_02_node_in_two_partitions():
    """The same node listed once per partition by ``sinfo -N --json`` (23.02.4): one node, both partitions."""
    text = read("sinfo-json-23.02.4-dataparser-v0.0.39-two-partitions.json")
    doc = json.loads(text)
    assert [entry["nodes"]["nodes"] for entry in doc["sinfo"]] == [["cs11"], ["cs11"]]
    nodes = slurm.parse_sinfo_json(text)
    assert list(nodes) == ["cs11"]
    assert nodes["cs11"]["partitions"] == [entry["partition"]["name"] for entry in doc["sinfo"]] == ["hw", "hw-h"]
    assert (nodes["cs11"]["state"], nodes["cs11"]["cpus_alloc"]) == ("mixed", 54)


@pytest.mark.parametrize("edit,message", [
    # edits of the 23.02.5 capture: the damage a sinfo JSON reader must name instead of crashing on
    (lambda doc: doc["sinfo"][0]["node"].update(state=[]),
     "sinfo: an entry of 'sinfo --json' has no node names or no node state: "),
    (lambda doc: doc["sinfo"][0].update(nodes={"nodes": "localhost"}),
     "sinfo: an entry of 'sinfo --json' has no node names or no node state: "),
    (lambda doc: doc["sinfo"][0]["node"].update(state=["IDLE?"]), "sinfo: node localhost: unknown node state 'IDLE?'"),
    (lambda doc: doc.update(sinfo=[]), "sinfo: 'sinfo --json' lists no node (read 0 nodes)"),
    (lambda doc: doc["sinfo"].append(7), "sinfo: an entry of 'sinfo --json' is not an object: 7"),
])
def test_sinfo_json_23_02_damaged(edit, message):
    doc = json.loads(read("sinfo-json-23.02.5-dataparser-v0.0.39.json"))
    edit(doc)
    with pytest.raises(ParseError) as info:
        slurm.parse_sinfo_json(json.dumps(doc))
    assert info.value.message.startswith(message)


@pytest.mark.parametrize("text,message", [
    ("", "sinfo: 'sinfo --json' output is not JSON: empty output (read 0 lines)"),
    ('{"nodes": [' * 100 + "]}" * 100, "sinfo: 'sinfo --json' output is not JSON: nested deeper than 64 levels"),
    ('{"nodes": [{"name": "n1", "state": "idle", "alloc_cpus": NaN}]}',
     "sinfo: 'sinfo --json' output is not JSON: NaN is not a number JSON allows"),
])
def test_sinfo_json_empty_deep_nan(text, message):
    with pytest.raises(ParseError) as info:
        slurm.parse_sinfo_json(text)
    assert info.value.message == message


@pytest.mark.parametrize("text,message", [
    ("{", "sinfo: 'sinfo --json' output is not JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
    ('{"meta": {}}', "sinfo: 'sinfo --json' output has no 'nodes' list"),
    ('{"nodes": [{"name": "node01"}]}', "sinfo: a node of 'sinfo --json' has no name or no state: {'name': 'node01'}"),
])
def test_sinfo_json_bad(text, message):
    with pytest.raises(ParseError) as info:
        slurm.parse_sinfo_json(text)
    assert info.value.message == message


# ------------------------------------------------------------------------------------------ squeue

def test_count_jobs():
    assert slurm.count_jobs(read("squeue-h-w-node03-running.txt")) == 1
    assert slurm.count_jobs("") == 0
    assert slurm.count_jobs("12\n13_4\n14+0\n") == 3
    with pytest.raises(ParseError) as info:
        slurm.count_jobs("squeue: error: Invalid node name nodeXX\n")
    assert info.value.message == "squeue: not a job id in 'squeue -h -o %i' output: 'squeue: error: Invalid node name nodeXX'"


# ------------------------------------------------------------------------------------------ the decision

def decided(fixture, name, state, tag="zhisuan"):
    return common.plan(common.annotate(node(fixture, name), tag), state, tag)


def test_plan_on_real_nodes():
    assert decided("scontrol-o-show-node-idle.txt", "node02", "drained") == ("drain", "drain node02")
    assert decided("scontrol-o-show-node-drained.txt", "node01", "drained") == (
        "none", "node01 is already drained by zhisuan (reason 'zhisuan: gpu.ecc.volatile_uncorrectable on GPU 3 (run 20261130T2300Z)' "
        "set by root at 2026-11-30T23:00:37)")
    assert decided("scontrol-o-show-node-draining.txt", "node03", "drained") == (
        "refused", "node03 is already drained by someone else (reason 'fan replacement, ticket OPS-1432' set by root at "
        "2026-11-30T23:00:38); left as it is, the reason is kept")
    assert decided("scontrol-o-show-node-drained.txt", "node01", "resumed") == ("resume", "resume node01")
    assert decided("scontrol-o-show-node-drained-operator.txt", "node03", "resumed") == (
        "refused", "refused to resume node03: it was drained by someone else (reason 'fan replacement, ticket OPS-1432' set by "
        "root at 2026-11-30T23:00:38), not by zhisuan; resume it by hand once that work is done")
    assert decided("scontrol-o-show-node-down.txt", "node04", "resumed") == (
        "refused", "refused to resume node04: it is down (reason 'operator: PSU swap' set by root at 2026-11-30T23:00:38), "
        "not drained by zhisuan; find out why before resuming it")
    assert decided("scontrol-o-show-node-idle.txt", "node02", "resumed") == ("none", "node02 is not drained (idle); nothing to resume")
    # another tag: our own drain is someone else's
    assert decided("scontrol-o-show-node-drained.txt", "node01", "resumed", tag="ops")[0] == "refused"


def test_tagged_reason():
    assert common.tagged_reason("zhisuan", "gpu.ecc (run r1)") == "zhisuan: gpu.ecc (run r1)"
    assert common.tagged_reason("zhisuan", "zhisuan: already tagged") == "zhisuan: already tagged"
    assert common.tagged_reason("zhisuan", None) == "zhisuan: remediation by zhisuan.ops"
    assert common.is_ours("zhisuanx: no", "zhisuan") is False and common.is_ours(None, "zhisuan") is False
