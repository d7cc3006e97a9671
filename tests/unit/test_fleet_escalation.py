# SPDX-License-Identifier: GPL-3.0-or-later
"""Shared-component localisation (fleet.shared.*) and escalation from the remediation history (pure)."""

from __future__ import annotations

import datetime

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.module_utils._judge.fleet import (
    FleetError, judge_fleet, placement, shared_causes,
)
from ansible_collections.zhisuan.ops.plugins.module_utils._remediate import history
from ansible_collections.zhisuan.ops.plugins.module_utils._remediate.escalate import escalate, tries
from ansible_collections.zhisuan.ops.plugins.module_utils._remediate.plan import make_plan
from ansible_collections.zhisuan.ops.plugins.module_utils._remediate.policy import PolicyError, normalize
from ansible_collections.zhisuan.ops.plugins.plugin_utils._diagnosis import diagnose

NOW = datetime.datetime(2026, 12, 1, 12, 0, tzinfo=datetime.timezone.utc)
PORT = ("rdma.port.state", "fail", "check_cable")
ECC = ("gpu.ecc.volatile_uncorrectable", "fail", "reset_gpu")
XID79 = ("xid.79.events", "fail", "power_cycle")
OK = ("gpu.count.present", "pass", None)


def _host(name, *checks):
    records = [make_check(cid, name, status, component="port 1" if cid.startswith("rdma") else "GPU 3",
                          message=cid, remedy=remedy) for cid, status, remedy in checks]
    status = "fail" if any(c["status"] == "fail" for c in records) else "pass"
    return {"status": status, "checks": records, "facts": {"diagnosis": diagnose(records)}}


def _fleet(size=32, per_leaf=8, failing_leaf=None, failing=0, gpu_node=None):
    """``size`` nodes, ``per_leaf`` behind each leaf (leaf01..), two racks per leaf; ``failing`` nodes of
    ``failing_leaf`` fail rdma.port.state; ``gpu_node`` fails a GPU check."""
    hosts, host_vars, links = {}, {}, []
    for index in range(size):
        name = "node%02d" % (index + 1)
        leaf = "leaf%02d" % (index // per_leaf + 1)
        links.append({"node": name, "port": "eth1", "switch": leaf, "switch_port": "swp%d" % (index % per_leaf + 1)})
        host_vars[name] = {"zhisuan_rack": "R%02d" % (index // (per_leaf // 2) + 1), "zhisuan_pdu": ["pdu-a", "pdu-b"]}
        bad = leaf == failing_leaf and index % per_leaf < failing
        checks = [PORT if bad else ("rdma.port.state", "pass", None)]
        if name == gpu_node:
            checks.append(ECC)
        hosts[name] = _host(name, OK, *checks)
    switches = dict(("leaf%02d" % (i + 1), {"tier": "leaf", "uplink": "spine01"}) for i in range(size // per_leaf))
    return hosts, placement(host_vars, {"links": links, "switches": switches})


def test_placement_reads_rack_feed_leaf_and_spine():
    hosts, where = _fleet(size=16)
    assert where["node01"] == {"rack": ["R01"], "pdu": ["pdu-a", "pdu-b"], "leaf": ["leaf01"], "spine": ["spine01"]}
    assert where["node16"]["leaf"] == ["leaf02"]
    assert placement({"n": {"zhisuan_rack": None}}, {"links": "not a list"}) == {
        "n": {"rack": [], "pdu": [], "leaf": [], "spine": []}}


def test_six_of_eight_nodes_behind_one_leaf_are_the_leaf():
    hosts, where = _fleet(failing_leaf="leaf03", failing=6)
    causes = shared_causes(hosts, where)
    assert [(c["kind"], c["name"], c["family"], len(c["failing"]), len(c["nodes"])) for c in causes][0] == (
        "leaf", "leaf03", "rdma", 6, 8)
    checks = judge_fleet(hosts, where)
    leaf = [c for c in checks if c["id"] == "fleet.shared.leaf.leaf03"]
    assert len(leaf) == 1 and leaf[0]["status"] == "fail" and leaf[0]["remedy"] == "investigate"
    assert leaf[0]["message"].startswith("leaf leaf03: 6 of its 8 nodes fail rdma.port.state (75 %), the rest of the "
                                         "fleet 0 %: check the switch")
    # the spine and the power feeds hold every node: a fleet-wide cause is the breaker's, never a shared component
    assert not any(c["id"].startswith(("fleet.shared.spine", "fleet.shared.pdu")) for c in checks)


def test_scattered_failures_name_no_component():
    hosts, where = _fleet()
    for name in ("node01", "node10", "node19", "node28"):  # one per leaf
        hosts[name] = _host(name, PORT)
    checks = judge_fleet(hosts, where)
    assert [(c["id"], c["status"]) for c in checks] == [("fleet.shared.components.localised", "pass")]


def test_two_failing_nodes_are_below_the_minimum_count():
    hosts, where = _fleet(failing_leaf="leaf02", failing=2)
    assert shared_causes(hosts, where) == []
    assert shared_causes(hosts, where, {"min_nodes": 2})[0]["name"] in ("leaf02", "R03", "R04")


def test_a_component_no_worse_than_the_rest_is_not_named():
    hosts, where = _fleet(size=16, failing_leaf="leaf01", failing=4)
    for name in ("node09", "node10", "node11"):  # leaf02: 3 of 8 fail as well
        hosts[name] = _host(name, PORT)
    names = [(c["kind"], c["name"]) for c in shared_causes(hosts, where)]
    assert ("leaf", "leaf01") not in names  # 50 % vs 37.5 % of the rest: not 4 x


def test_no_placement_is_a_skip_and_bad_thresholds_are_named():
    hosts, dummy = _fleet(size=8)
    assert judge_fleet(hosts, {})[0]["status"] == "skip"
    with pytest.raises(FleetError, match="unknown key 'min'"):
        shared_causes(hosts, {}, {"min": 1})
    with pytest.raises(FleetError, match="ratio must be a positive number, got inf"):
        shared_causes(hosts, {}, {"ratio": float("inf")})


def test_plan_holds_the_switch_nodes_and_remediates_the_gpu_node():
    hosts, where = _fleet(size=24, failing_leaf="leaf03", failing=6, gpu_node="node02")
    policy = normalize({})
    plan = make_plan(hosts, policy, shared=shared_causes(hosts, where), now=NOW)
    held = ["node%02d" % n for n in range(17, 23)]
    assert plan["shared"] == held
    assert all(plan["nodes"][name]["status"] == "shared_cause" and plan["nodes"][name]["action"] == "ticket"
               for name in held)
    assert plan["order"] == ["node02"] and plan["nodes"]["node02"]["action"] == "reset_gpu"
    # six nodes fail one check, but the switch explains them: the breaker stays closed
    assert plan["breaker"]["tripped"] is False
    shared = [c for c in plan["checks"] if c["id"].startswith("remediate.shared.")]
    assert [(c["id"], c["observed"]) for c in shared] == [("remediate.shared.leaf_leaf03", 6)]
    assert plan["nodes"]["node17"]["message"].startswith("shared cause: leaf leaf03 fails rdma.port.state")
    # without the localisation the same run trips the breaker and holds the GPU node too
    blind = make_plan(hosts, policy, now=NOW)
    assert blind["breaker"]["tripped"] is True and "node02" in blind["held"]


def _records(node, cause, *remedies, days_ago=1, outcome="repaired"):
    out = []
    for index, remedy in enumerate(remedies):
        finished = (NOW - datetime.timedelta(days=days_ago, hours=index)).isoformat()
        out.append(history.make_record({"time": finished, "run_id": "r%d" % index, "node": node, "cause": cause,
                                        "remedy": remedy, "action": remedy, "outcome": outcome,
                                        "finished": finished}))
    return out


def test_three_resets_for_one_cause_escalate_to_a_power_cycle_then_an_rma():
    policy = normalize({})
    cause = "gpu.ecc.volatile_uncorrectable"
    two = _records("node07", cause, "reset_gpu", "reset_gpu")
    assert escalate(two, "node07", cause, "reset_gpu", policy, NOW) == ("reset_gpu", None)
    three = _records("node07", cause, "reset_gpu", "reset_gpu", "reset_gpu")
    remedy, step = escalate(three, "node07", cause, "reset_gpu", policy, NOW)
    assert (remedy, step["from"], step["tries"]) == ("power_cycle", "reset_gpu", {"reset_gpu": 3})
    assert "3 x reset_gpu within 30 days" in step["reason"]
    after_cycle = three + _records("node07", cause, "power_cycle")
    assert escalate(after_cycle, "node07", cause, "reset_gpu", policy, NOW)[0] == "rma"
    # other nodes, other causes, tickets and records outside the window do not count
    noise = (_records("node08", cause, "reset_gpu", "reset_gpu", "reset_gpu")
             + _records("node07", "xid.48.events", "reset_gpu", "reset_gpu", "reset_gpu")
             + _records("node07", cause, "reset_gpu", "reset_gpu", "reset_gpu", days_ago=40)
             + _records("node07", cause, "reset_gpu", "reset_gpu", "reset_gpu", outcome="ticket"))
    assert tries(noise + two, "node07", cause, 30, NOW) == {"reset_gpu": 2}
    assert escalate(noise + two, "node07", cause, "reset_gpu", policy, NOW) == ("reset_gpu", None)


def test_escalated_plan_entries_and_repeat_offender_checks():
    policy = normalize({"escalation": {"repeats": 3}})
    hosts = {"node07": _host("node07", ECC), "node03": _host("node03", XID79)}
    records = (_records("node07", "gpu.ecc.volatile_uncorrectable", "reset_gpu", "reset_gpu", "reset_gpu")
               + _records("node03", "xid.79.events", "power_cycle", "power_cycle", "power_cycle"))
    plan = make_plan(hosts, policy, history=records, now=NOW)
    assert plan["nodes"]["node07"]["remedy"] == "power_cycle" and plan["nodes"]["node07"]["mode"] == "automatic"
    assert plan["nodes"]["node03"]["remedy"] == "rma" and plan["nodes"]["node03"]["action"] == "ticket"
    assert plan["repeat_offenders"] == ["node03", "node07"]
    repeat = dict((c["id"], c) for c in plan["checks"] if c["id"].startswith("remediate.repeat."))
    assert sorted(repeat) == ["remediate.repeat.node03", "remediate.repeat.node07"]
    assert repeat["remediate.repeat.node07"]["remedy"] == "power_cycle"
    assert "escalated from reset_gpu" in plan["nodes"]["node07"]["message"]


@pytest.mark.parametrize("escalation, message", [
    ({"ladder": ["reset_gpu"]}, "escalation.ladder must list two or more distinct remedies"),
    ({"ladder": ["reset_gpu", "melt"]}, "unknown remedy 'melt'"),
    ({"repeats": 0}, "escalation.repeats must be >= 1, got 0"),
    ({"window": 3}, "escalation: unknown key(s) window"),
    ("often", "escalation must be a mapping"),
])
def test_bad_escalation_policies_are_named(escalation, message):
    with pytest.raises(PolicyError, match=message.replace("(", r"\(").replace(")", r"\)")):
        normalize({"escalation": escalation})


def test_one_check_per_component_when_several_families_fail_behind_it():
    hosts, where = _fleet(failing_leaf="leaf02", failing=5)
    for index in range(9, 14):  # the same five nodes also lose their LLDP neighbour
        name = "node%02d" % index
        hosts[name]["checks"].append(make_check("cabling.eth1.neighbor", name, "fail", remedy="check_cable"))
    checks = [c for c in judge_fleet(hosts, where) if c["id"].startswith("fleet.shared.leaf")]
    assert [c["id"] for c in checks] == ["fleet.shared.leaf.leaf02"]
    assert "also " in checks[0]["message"] and "cabling: failing node09" in checks[0]["evidence"]
