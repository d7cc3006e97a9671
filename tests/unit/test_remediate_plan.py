# SPDX-License-Identifier: GPL-3.0-or-later
"""Remediation policy, plan, blast-radius limit, circuit breaker and history (pure)."""

from __future__ import annotations

import json
import os

import pytest
import yaml

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.module_utils._remediate import history
from ansible_collections.zhisuan.ops.plugins.module_utils._remediate.plan import make_plan
from ansible_collections.zhisuan.ops.plugins.module_utils._remediate.policy import (
    PolicyError, allowed_in_remediation, breaker_threshold, decide, normalize,
)
from ansible_collections.zhisuan.ops.plugins.plugin_utils._diagnosis import diagnose

SHIPPED = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "collections", "ansible_collections", "zhisuan",
                       "ops", "data", "remediation", "policy.yml")


def _host(name, *checks):
    records = [make_check(cid, name, status, component="GPU 3", message=cid, remedy=remedy)
               for cid, status, remedy in checks]
    status = "pass"
    for wanted in ("fail", "error", "warn"):
        if any(c["status"] == wanted for c in records):
            status = wanted
            break
    return {"status": status, "checks": records, "facts": {"diagnosis": diagnose(records)}}


ECC = ("gpu.ecc.volatile_uncorrectable", "fail", "reset_gpu")
XID79 = ("xid.79.events", "fail", "power_cycle")
MISSING = ("gpu.count.present", "fail", "reseat")
REMAP = ("gpu.remap.failure", "fail", "rma")
OK = ("gpu.count.present", "pass", None)


def _policy(**limits):
    return normalize({"limits": limits} if limits else {})


# ---------------------------------------------------------------------------------------------------------- policy

def test_shipped_policy_is_valid_and_says_what_the_docs_say():
    with open(SHIPPED) as handle:
        policy = normalize(yaml.safe_load(handle))
    assert policy["remedies"]["reset_gpu"] == "automatic"
    assert policy["remedies"]["reboot"] == "approval"
    assert policy["limits"] == {"max_nodes": 2, "max_percent": 10, "breaker_failures": 3, "breaker_percent": 20}
    assert decide(policy, "xid.79.events", "power_cycle") == ("power_cycle", "automatic", "xid.79.*")
    assert decide(policy, "gpu.count.present", "reseat") == ("power_cycle", "automatic", "gpu.count.present")


def test_overrides_merge_key_by_key():
    policy = normalize({"remedies": {"reboot": "automatic"}}, {"limits": {"max_nodes": 5}})
    assert policy["remedies"]["reboot"] == "automatic"
    assert policy["remedies"]["reset_gpu"] == "automatic"
    assert policy["limits"]["max_nodes"] == 5
    assert policy["limits"]["max_percent"] == 10


@pytest.mark.parametrize("doc, message", [
    ({"remedies": {"reset_gpu": "sometimes"}},
     "policy: remedies.reset_gpu must be one of automatic, approval, ticket, got 'sometimes'"),
    ({"remedies": {"melt": "automatic"}}, "policy: remedies: unknown remedy 'melt' (known: none, monitor, restart_app, "
     "reset_gpu, reboot, power_cycle, drain, reseat, check_cable, clean_optic, replace_part, rma, update_firmware, tune, "
     "investigate)"),
    ({"limits": {"max_nodes": -1}}, "policy: limits.max_nodes must be >= 0, got -1"),
    ({"limits": {"max_percent": 150}}, "policy: limits.max_percent must be 0..100, got 150"),
    ({"limits": {"max_nodes": True}}, "policy: limits.max_nodes must be an integer, got True"),
    ({"limits": {"blast": 1}}, "policy: unknown limit 'blast'; known: breaker_failures, breaker_percent, max_nodes, "
     "max_percent"),
    ({"causes": [{"match": "xid.*"}]}, "policy: causes[0]: give 'remedy', 'mode' or both"),
    ({"causes": [{"remedy": "reboot"}]}, "policy: causes[0]: a cause is a mapping with a check id pattern in 'match'"),
    ({"act_on": ["broken"]}, "policy: act_on must be a non-empty list of fail, error, warn, got ['broken']"),
    ({"colour": "red"}, "policy: unknown key(s) colour; known: act_on, causes, description, drain_on_ticket, escalation, "
     "limits, remedies, schema"),
    ([], "policy must be a mapping, got list"),
])
def test_bad_policies_are_named(doc, message):
    with pytest.raises(PolicyError) as err:
        normalize(doc)
    assert str(err.value) == message


def test_a_part_to_replace_is_always_a_ticket_even_if_the_site_says_automatic():
    policy = normalize({"remedies": {"rma": "automatic"}})
    assert decide(policy, "gpu.remap.failure", "rma") == ("rma", "ticket", None)


def test_limit_is_the_smaller_of_k_and_p_and_at_least_one():
    assert allowed_in_remediation(_policy(max_nodes=2, max_percent=10), 100)[0] == 2
    assert allowed_in_remediation(_policy(max_nodes=20, max_percent=10), 100)[0] == 10
    assert allowed_in_remediation(_policy(max_nodes=2, max_percent=10), 4)[0] == 1
    assert allowed_in_remediation(_policy(max_nodes=0, max_percent=10), 100)[0] == 0
    assert breaker_threshold(_policy(breaker_failures=3, breaker_percent=20), 100) == 20
    assert breaker_threshold(_policy(breaker_failures=3, breaker_percent=20), 10) == 3
    assert breaker_threshold(_policy(breaker_failures=0, breaker_percent=0), 10) == 1


# ------------------------------------------------------------------------------------------------------------ plan

def test_plan_names_action_why_mode_and_batch():
    hosts = {"n1": _host("n1", ECC), "n2": _host("n2", XID79, MISSING), "n3": _host("n3", OK),
             "n4": _host("n4", REMAP)}
    plan = make_plan(hosts, _policy(max_nodes=10, max_percent=100), fleet=20)
    assert plan["order"] == ["n1", "n2", "n4"]
    n1 = plan["nodes"]["n1"]
    assert (n1["action"], n1["mode"], n1["status"], n1["batch"]) == ("reset_gpu", "automatic", "planned", 1)
    assert n1["why"]["cause"] == "gpu.ecc.volatile_uncorrectable"
    assert n1["why"]["checks"] == ["gpu.ecc.volatile_uncorrectable"]
    assert plan["nodes"]["n2"]["action"] == "power_cycle"
    assert plan["nodes"]["n2"]["why"]["checks"] == ["gpu.count.present", "xid.79.events"]
    assert (plan["nodes"]["n4"]["action"], plan["nodes"]["n4"]["mode"]) == ("ticket", "ticket")
    assert "n3" not in plan["nodes"]
    assert plan["breaker"]["tripped"] is False
    assert [c["id"] for c in plan["checks"]] == ["remediate.breaker.tripped"]
    assert plan["checks"][0]["status"] == "pass"


def test_batches_follow_batch_size():
    hosts = dict(("n%d" % i, _host("n%d" % i, (("gpu.x%d.y" % i), "fail", "reset_gpu"))) for i in range(1, 6))
    plan = make_plan(hosts, _policy(max_nodes=10, max_percent=100, breaker_failures=10), batch_size=2)
    assert [plan["nodes"][n]["batch"] for n in plan["order"]] == [1, 1, 2, 2, 3]


def test_limit_holds_with_ten_faulty_nodes_and_k2():
    hosts = dict(("n%02d" % i, _host("n%02d" % i, ECC)) for i in range(1, 11))
    policy = _policy(max_nodes=2, max_percent=100, breaker_failures=10, breaker_percent=100)
    plan = make_plan(hosts, policy)
    assert plan["order"] == ["n01", "n02"]
    assert plan["deferred"] == ["n%02d" % i for i in range(3, 11)]
    assert plan["nodes"]["n05"]["status"] == "deferred"
    deferred = plan["checks"][1]
    assert (deferred["id"], deferred["status"], deferred["observed"], deferred["remedy"]) == (
        "remediate.limit.deferred", "warn", 8, "monitor")
    assert deferred["message"] == ("8 node(s) wait for a later run: at most 2 node(s) in remediation at once "
                                   "(max_nodes 2, max_percent 100 % of 10 nodes), and 0 were already drained")


def test_already_drained_nodes_count_toward_the_limit_and_operator_drains_are_left_alone():
    hosts = dict(("n%02d" % i, _host("n%02d" % i, ECC)) for i in range(1, 6))
    scheduler = {"n01": {"drain": True, "drained_by_us": False, "reason": "maintenance ticket 42"},
                 "n04": {"drain": True, "drained_by_us": True, "reason": "zhisuan:gpu.ecc.volatile_uncorrectable run x"},
                 "n05": {"drain": False}}
    policy = _policy(max_nodes=3, max_percent=100, breaker_failures=10, breaker_percent=100)
    plan = make_plan(hosts, policy, scheduler=scheduler)
    # n01 (operator) and n04 (ours) are drained: 2 of 3 slots taken; n04 goes on first without a new slot
    assert plan["order"] == ["n04", "n02"]
    assert plan["deferred"] == ["n03", "n05"]
    assert "n01" not in plan["nodes"]
    assert plan["skipped"]["n01"] == ("drained by someone else (maintenance ticket 42): left alone, never resumed by "
                                      "remediation")
    assert plan["limit"]["already_drained"] == ["n01", "n04"]


def test_breaker_trips_on_a_fleet_wide_cause_and_nothing_is_planned():
    hosts = dict(("n%02d" % i, _host("n%02d" % i, ("xid.119.events", "fail", "reset_gpu"))) for i in range(1, 11))
    hosts["n11"] = _host("n11", OK)
    plan = make_plan(hosts, _policy(breaker_failures=3, breaker_percent=50))  # beyond max(3, 5) nodes
    assert plan["breaker"]["tripped"] is True
    assert plan["order"] == []
    assert len(plan["held"]) == 10
    check = plan["checks"][0]
    assert (check["id"], check["host"], check["status"], check["observed"], check["remedy"]) == (
        "remediate.breaker.tripped", "cluster", "fail", 10, "investigate")
    assert check["message"] == ("10 of 11 nodes fail xid.119.events at once: a fleet-wide cause (a driver or firmware "
                                "rollout, the fabric, power or cooling) is not fixed node by node, so no node was "
                                "drained, reset or power-cycled")


def test_approval_waits_unless_the_node_is_approved():
    hosts = {"n1": _host("n1", ("xid.154.events", "fail", "reboot")), "n2": _host("n2", ("xid.151.events", "fail", "reboot"))}
    policy = _policy(max_nodes=5, max_percent=100)
    plan = make_plan(hosts, policy, approved=["n2"])
    assert plan["nodes"]["n1"]["status"] == "awaiting_approval"
    assert plan["nodes"]["n1"]["batch"] is None
    assert plan["order"] == ["n2"]
    assert make_plan(hosts, policy, approved=["all"])["order"] == ["n1", "n2"]


def test_warnings_unreachable_and_app_faults_get_no_action():
    hosts = {"w": _host("w", ("gpu.temperature.gpu", "warn", "investigate")), "a": _host("a", ("xid.13.events", "fail", "restart_app")),
             "u": {"status": "unreachable", "checks": [], "facts": {}}}
    plan = make_plan(hosts, _policy())
    assert plan["nodes"] == {}
    assert plan["skipped"] == {"u": "unreachable in the source run: no diagnosis to act on (check the node and its BMC)"}


# --------------------------------------------------------------------------------------------------------- history

def test_history_records_append_and_durations(tmp_path):
    raw = {"time": "2026-01-01T10:10:00+00:00", "run_id": "r2", "source_run_id": "r1", "node": "n1",
           "cause": "xid.79.events", "action": "power_cycle", "mode": "automatic", "outcome": "repaired",
           "detected": "2026-01-01T10:00:00+00:00", "started": "2026-01-01T10:02:00+00:00",
           "finished": "2026-01-01T10:04:30Z", "resumed": "2026-01-01T10:09:00"}
    record = history.make_record(raw)
    assert record["durations"] == {"detect_to_action_s": 120.0, "action_s": 150.0, "detect_to_repair_s": 540.0}
    failed = history.make_record(dict(raw, outcome="failed", node="n2"))
    assert failed["durations"]["detect_to_repair_s"] is None
    path = history.append(str(tmp_path / "h"), [record])
    history.append(str(tmp_path / "h"), [failed])
    with open(path, "a") as handle:
        handle.write("not json\n")
    warnings = []
    back = history.read(path, warnings.append)
    assert [r["node"] for r in back] == ["n1", "n2"]
    assert back[0] == json.loads(json.dumps(record))
    assert warnings == ["%s line 3: not JSON (Expecting value: line 1 column 1 (char 0)); passed over" % path]


@pytest.mark.parametrize("raw, message", [
    ({"node": "n1", "run_id": "r", "time": "2026-01-01T00:00:00Z", "action": "x", "outcome": "repaired"},
     "history record for n1 lacks cause"),
    ({"node": "n1", "run_id": "r", "time": "2026-01-01T00:00:00Z", "action": "x", "cause": "c", "outcome": "fine"},
     "history record for n1: unknown outcome 'fine' (known: repaired, failed, refused, ticket, awaiting_approval, "
     "deferred, held, skipped, planned, shared_cause, acted, resumed)"),
    ({"node": "n1", "run_id": "r", "time": "yesterday", "action": "x", "cause": "c", "outcome": "failed"},
     "history record for n1: time: 'yesterday' is not an ISO 8601 time"),
])
def test_bad_history_records(raw, message):
    with pytest.raises(history.HistoryError) as err:
        history.make_record(raw)
    assert str(err.value) == message


def test_only_restricts_the_plan_but_the_breaker_counts_every_host():
    hosts = dict(("n%02d" % i, _host("n%02d" % i, ECC)) for i in range(1, 6))
    policy = _policy(max_nodes=5, max_percent=100, breaker_failures=3, breaker_percent=10)
    assert make_plan(hosts, policy, only=["n01"])["breaker"]["tripped"] is True
    policy = _policy(max_nodes=5, max_percent=100, breaker_failures=10, breaker_percent=100)
    assert make_plan(hosts, policy, only=["n01", "n03"])["order"] == ["n01", "n03"]
