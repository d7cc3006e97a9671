# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""The remediation plan (pure): from a run's host records, the site policy and the scheduler's view of the nodes,
which node gets which action, why, in which mode and batch — within the blast-radius limit, or nothing at all when
the circuit breaker trips (see docs/remediation.md)."""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.module_utils._remediate.policy import (
    MACHINE_ACTIONS, NO_ACTION, allowed_in_remediation, breaker_threshold, decide,
)

BREAKER_ID = "remediate.breaker.tripped"
LIMIT_ID = "remediate.limit.deferred"


def _failing_ids(host):
    return sorted(set(c["id"] for c in host.get("checks") or [] if c.get("status") == "fail"))


def _why(host, diagnosis):
    cause = diagnosis.get("root_cause") or {}
    findings = [c for c in host.get("checks") or [] if c.get("status") in ("fail", "error")]
    return {
        "cause": cause.get("id"),
        "component": cause.get("component"),
        "message": cause.get("message"),
        "remedy": cause.get("remedy"),
        "checks": sorted(set(c["id"] for c in findings)),
    }


def breaker(hosts, policy, fleet):
    """``(tripped, check)``: the cluster check ``remediate.breaker.tripped``. It trips when one failing check id is
    on more nodes than the threshold at once (a fleet-wide cause: a bad driver rollout is not fixed by resetting
    every node)."""
    threshold = breaker_threshold(policy, fleet)
    counts = {}
    for name in sorted(hosts):
        for check_id in _failing_ids(hosts[name]):
            counts.setdefault(check_id, []).append(name)
    worst = sorted(counts.items(), key=lambda item: (-len(item[1]), item[0]))
    expected = "<= %d node(s) per failing check (breaker_failures %d, breaker_percent %s %% of %d)" % (
        threshold, policy["limits"]["breaker_failures"], policy["limits"]["breaker_percent"], fleet)
    tripped = [(check_id, nodes) for check_id, nodes in worst if len(nodes) > threshold]
    if not tripped:
        top = len(worst[0][1]) if worst else 0
        return False, make_check(BREAKER_ID, "cluster", "pass", component="remediation", observed=top,
                                 expected=expected, message="no failing check is on more than %d node(s)" % threshold,
                                 evidence=", ".join("%s: %d" % (c, len(n)) for c, n in worst[:3]))
    check_id, nodes = tripped[0]
    message = ("%d of %d nodes fail %s at once: a fleet-wide cause (a driver or firmware rollout, the fabric, power "
               "or cooling) is not fixed node by node, so no node was drained, reset or power-cycled"
               % (len(nodes), fleet, check_id))
    evidence = "; ".join("%s on %s" % (c, ", ".join(n)) for c, n in tripped)
    return True, make_check(BREAKER_ID, "cluster", "fail", component="remediation", observed=len(nodes),
                            expected=expected, message=message, remedy="investigate", evidence=evidence)


def make_plan(hosts, policy, scheduler=None, fleet=None, approved=(), batch_size=1, only=None):
    """The plan for ``hosts`` (results.json ``hosts``: name -> {status, checks, facts}; ``facts.diagnosis`` holds
    the root cause). ``scheduler``: name -> scheduler_node's ``node`` ({state, drain, drained_by_us, reason}),
    nodes already drained count toward the limit and an operator's drain is never touched. ``approved``: node
    names (or ``all``) whose ``approval`` actions may run; ``only``: plan only these nodes (the breaker still counts
    every host). Returns
    ``{nodes: {name: entry}, order, deferred, held, skipped, breaker, limit, checks}`` (docs/remediation.md)."""
    scheduler = scheduler or {}
    fleet = fleet or len(hosts)
    approve_all = "all" in approved
    allowed, limit_text = allowed_in_remediation(policy, fleet)
    tripped, breaker_check = breaker(hosts, policy, fleet)
    drained = sorted(name for name, node in scheduler.items() if node and node.get("drain"))
    candidates, skipped = [], {}
    for name in sorted(hosts):
        if only is not None and name not in only:
            continue
        host = hosts[name]
        node = scheduler.get(name) or {}
        diagnosis = (host.get("facts") or {}).get("diagnosis") or {}
        cause = diagnosis.get("root_cause") or {}
        if host.get("status") == "unreachable":
            skipped[name] = "unreachable in the source run: no diagnosis to act on (check the node and its BMC)"
            continue
        if diagnosis.get("status") not in policy["act_on"] or not cause:
            continue
        if cause.get("remedy") in NO_ACTION:
            continue
        if node.get("drain") and not node.get("drained_by_us"):
            skipped[name] = "drained by someone else (%s): left alone, never resumed by remediation" % (
                node.get("reason") or "no reason given")
            continue
        remedy, mode, rule = decide(policy, cause["id"], cause["remedy"])
        if remedy in NO_ACTION:
            continue
        entry = {"action": remedy if remedy in MACHINE_ACTIONS else "ticket", "remedy": remedy, "mode": mode,
                 "rule": rule, "why": _why(host, diagnosis), "already_drained": bool(node.get("drain")),
                 "batch": None, "status": "planned"}
        if mode == "approval" and not (approve_all or name in approved):
            entry["status"] = "awaiting_approval"
        candidates.append((name, entry))
    plan = {"nodes": {}, "order": [], "deferred": [], "held": [], "skipped": skipped,
            "breaker": {"tripped": tripped, "check": breaker_check},
            "limit": {"allowed": allowed, "fleet": fleet, "already_drained": drained, "text": limit_text},
            "checks": [breaker_check]}
    if tripped:
        for name, entry in candidates:
            entry["status"] = "held"
            plan["nodes"][name] = entry
            plan["held"].append(name)
        return plan
    # nodes already in remediation (drained by us earlier) go first and take no new slot
    candidates.sort(key=lambda item: (not item[1]["already_drained"], item[0]))
    busy = len(drained)
    acting = []
    for name, entry in candidates:
        plan["nodes"][name] = entry
        if entry["status"] == "awaiting_approval":
            continue
        if entry["already_drained"]:
            acting.append(name)
        elif busy < allowed:
            busy += 1
            acting.append(name)
        else:
            entry["status"] = "deferred"
            plan["deferred"].append(name)
    for position, name in enumerate(acting):
        plan["nodes"][name]["batch"] = position // max(int(batch_size), 1) + 1
        plan["order"].append(name)
    if plan["deferred"]:
        plan["checks"].append(make_check(
            LIMIT_ID, "cluster", "warn", component="remediation", observed=len(plan["deferred"]),
            expected=limit_text, remedy="monitor", evidence="already drained: %s; deferred: %s" % (
                ", ".join(drained) or "none", ", ".join(plan["deferred"])),
            message="%d node(s) wait for a later run: %s, and %d were already drained" % (
                len(plan["deferred"]), limit_text, len(drained))))
    return plan
