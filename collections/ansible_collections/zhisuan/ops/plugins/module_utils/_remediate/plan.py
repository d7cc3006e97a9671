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

import datetime
import re

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.module_utils._remediate.escalate import escalate
from ansible_collections.zhisuan.ops.plugins.module_utils._remediate.policy import (
    MACHINE_ACTIONS, NO_ACTION, allowed_in_remediation, breaker_threshold, decide,
)
from ansible_collections.zhisuan.ops.plugins.module_utils._sched.common import DEFAULT_TAG, our_mark

BREAKER_ID = "remediate.breaker.tripped"
LIMIT_ID = "remediate.limit.deferred"
REPEAT_ID = "remediate.repeat.%s"
SHARED_ID = "remediate.shared.%s"
STRANDED_ID = "remediate.stranded.%s"
# the action of a stranded node: no repair, the five verification steps, then the resume
VERIFY = "verify"


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


def breaker(hosts, policy, fleet, explained=()):
    """``(tripped, check)``: the cluster check ``remediate.breaker.tripped``. It trips when one failing check id is
    on more nodes than the threshold at once (a fleet-wide cause: a bad driver rollout is not fixed by resetting
    every node). Failures ``explained`` by a shared component (``(node, family)`` pairs) are localised already and
    not counted."""
    threshold = breaker_threshold(policy, fleet)
    counts = {}
    for name in sorted(hosts):
        for check_id in _failing_ids(hosts[name]):
            if (name, check_id.split(".", 1)[0]) in explained:
                continue
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


def _id_part(text):
    return re.sub(r"[^A-Za-z0-9_-]+", "_", str(text))


def _shared_cause(name, cause_id, shared):
    """The shared cause (``_judge.fleet.shared_causes`` entry) that explains ``name``'s root cause, or None."""
    family = str(cause_id).split(".", 1)[0]
    for cause in shared or ():
        if name in cause["failing"] and cause["family"] == family:
            return cause
    return None


def _repeat_check(name, entry):
    step = entry["escalation"]
    return make_check(REPEAT_ID % _id_part(name), "cluster", "warn", component=name,
                      observed=", ".join("%d x %s" % (n, r) for r, n in sorted(step["tries"].items())),
                      expected="fewer than the policy's escalation.repeats of %s" % step["from"],
                      message="repeat offender: " + step["reason"], remedy=step["to"], evidence=entry["why"]["cause"])


def _shared_checks(plan, shared):
    for cause in shared or ():
        held = [name for name in cause["failing"] if plan["nodes"].get(name, {}).get("status") == "shared_cause"]
        if not held:
            continue
        plan["checks"].append(make_check(
            SHARED_ID % _id_part("%s_%s" % (cause["kind"], cause["name"])), "cluster", "warn",
            component="%s %s" % (cause["kind"], cause["name"]), observed=len(held),
            expected="nodes with a cause of their own",
            message="%d node(s) behind %s %s fail %s together: one cause, one ticket for the %s, no node-by-node "
                    "action" % (len(held), cause["kind"], cause["name"], cause["check_id"], cause["kind"]),
            remedy="investigate", evidence="held: %s" % ", ".join(held)))


def stranded_entry(name, node, tag=DEFAULT_TAG):
    """The plan entry of a stranded node: drained by us (the drain reason carries our mark) and not resumed, with
    nothing that remediation acts on now - a run cut off after its action (AWX cancelled it, a job timeout) left
    it so. It gets no repair: the verification, then the resume. It is drained already, so it takes no new slot of
    the limit (it is counted once, among the drained nodes)."""
    mark = our_mark(node.get("reason"), tag) or {}
    by_run = (" by run %s" % mark["run_id"]) if mark.get("run_id") else ""
    for_cause = (" for %s" % mark["cause"]) if mark.get("cause") else ""
    message = ("%s is %s%s%s (reason '%s') and was never resumed; nothing that remediation acts on fails on it now"
               % (name, node.get("state") or "drained", by_run, for_cause, node.get("reason")))
    return {"action": VERIFY, "remedy": "none", "mode": "automatic", "rule": None,
            "why": {"cause": mark.get("cause") or "scheduler.drain.stranded", "component": "node", "message": message,
                    "remedy": "none", "checks": []},
            "already_drained": True, "batch": None, "status": "planned",
            "stranded": {"run_id": mark.get("run_id"), "cause": mark.get("cause"), "reason": node.get("reason"),
                         "state": node.get("state")}}


def stranded_check(name, entry):
    """The cluster check ``remediate.stranded.<node>`` (warn, investigate): a node our remediation left drained."""
    stranded = entry["stranded"]
    return make_check(STRANDED_ID % _id_part(name), "cluster", "warn", component=name,
                      observed="%s, reason '%s'" % (stranded["state"] or "drained", stranded["reason"]),
                      expected="resumed by the remediation that drained it, or a finding that keeps it drained",
                      message=entry["why"]["message"] + ("; a remediate run verifies it and resumes it (find out "
                                                         "why run %s stopped before its resume)" % (stranded["run_id"] or "?")),
                      remedy="investigate", evidence="drain reason: %s" % stranded["reason"])


def _messages(plan):
    """Each entry's ``message``: what the plan says of the node, in words (the record and the report use it)."""
    for entry in plan["nodes"].values():
        status = entry["status"]
        if status == "planned" and entry.get("stranded"):
            text = "stranded: %s; this run verifies it and resumes it (batch %s)" % (
                entry["why"]["message"], entry["batch"])
        elif status == "planned":
            text = "%s (%s, batch %s)" % (entry["action"], entry["mode"], entry["batch"])
        elif status == "deferred":
            text = "deferred: " + plan["limit"]["text"]
        elif status == "held" and entry.get("leased"):
            lease = entry["leased"]
            text = ("held by run %s: another remediation run (pid %s on %s, since %s) acts on this node; left to it"
                    % (lease.get("run_id"), lease.get("pid"), lease.get("host"), lease.get("time")))
        elif status == "held":
            text = "held: " + plan["breaker"]["check"]["message"]
        elif status == "shared_cause":
            shared = entry["shared"]
            text = ("shared cause: %s %s fails %s for several of its nodes; one ticket for the %s, no action on this "
                    "node" % (shared["kind"], shared["name"], shared["check_id"], shared["kind"]))
        else:
            text = "awaiting approval: add the node to zhisuan_remediate_approve"
        if entry.get("escalation"):
            text += "; escalated from %s: %s" % (entry["escalation"]["from"], entry["escalation"]["reason"])
        entry["message"] = text


def make_plan(hosts, policy, scheduler=None, fleet=None, approved=(), batch_size=1, only=None, history=None,
              now=None, shared=None, tag=DEFAULT_TAG, leased=None):
    """The plan for ``hosts`` (results.json ``hosts``: name -> {status, checks, facts}; ``facts.diagnosis`` holds
    the root cause). ``scheduler``: name -> scheduler_node's ``node`` ({state, drain, drained_by_us, reason}),
    nodes already drained count toward the limit and an operator's drain is never touched. ``approved``: node
    names (or ``all``) whose ``approval`` actions may run; ``only``: plan only these nodes (the breaker still counts
    every host). ``history``: the remediation history's records (a node repaired again and again for one cause goes
    up the policy's escalation ladder, as of ``now``); ``shared``: the shared causes of ``_judge.fleet`` (their nodes
    get one ticket for the component, no action of their own). A node drained by us (``tag``) with nothing to act
    on is stranded (``stranded_entry``): it is verified and resumed. ``leased``: name -> the lease of another
    remediation run that holds the node now (``plugin_utils._lease``): the node is ``held`` (its entry's ``leased``
    says by which run), never acted on by this one. Returns ``{nodes: {name: entry}, order, deferred, held, leased,
    skipped, shared, repeat_offenders, stranded, breaker, limit, checks}`` (docs/remediation.md)."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    scheduler = scheduler or {}
    fleet = fleet or len(hosts)
    approve_all = "all" in approved
    allowed, limit_text = allowed_in_remediation(policy, fleet)
    explained = set((name, cause["family"]) for cause in shared or () for name in cause["failing"])
    tripped, breaker_check = breaker(hosts, policy, fleet, explained)
    drained = sorted(name for name, node in scheduler.items() if node and node.get("drain"))
    candidates, skipped = [], {}
    for name in sorted(set(hosts) | set(scheduler)):
        if only is not None and name not in only:
            continue
        host = hosts.get(name) or {}
        node = scheduler.get(name) or {}
        diagnosis = (host.get("facts") or {}).get("diagnosis") or {}
        cause = diagnosis.get("root_cause") or {}
        if host.get("status") == "unreachable":
            skipped[name] = "unreachable in the source run: no diagnosis to act on (check the node and its BMC)"
            continue
        if diagnosis.get("status") not in policy["act_on"] or not cause or cause.get("remedy") in NO_ACTION:
            if node.get("drain") and node.get("drained_by_us"):
                candidates.append((name, stranded_entry(name, node, tag)))
            continue
        if node.get("drain") and not node.get("drained_by_us"):
            skipped[name] = "drained by someone else (%s): left alone, never resumed by remediation" % (
                node.get("reason") or "no reason given")
            continue
        remedy, mode, rule = decide(policy, cause["id"], cause["remedy"])
        if remedy in NO_ACTION:
            if node.get("drain") and node.get("drained_by_us"):
                candidates.append((name, stranded_entry(name, node, tag)))
            continue
        remedy, step = escalate(history, name, cause["id"], remedy, policy, now)
        if step is not None:
            remedy, mode, dummy = decide(dict(policy, causes=[]), cause["id"], remedy)
        entry = {"action": remedy if remedy in MACHINE_ACTIONS else "ticket", "remedy": remedy, "mode": mode,
                 "rule": rule, "why": _why(host, diagnosis), "already_drained": bool(node.get("drain")),
                 "batch": None, "status": "planned"}
        if step is not None:
            entry["escalation"] = step
        group = _shared_cause(name, cause["id"], shared)
        if group is not None:
            entry.update(action="ticket", mode="ticket", status="shared_cause",
                         shared={"kind": group["kind"], "name": group["name"], "check_id": group["check_id"]})
        elif mode == "approval" and not (approve_all or name in approved):
            entry["status"] = "awaiting_approval"
        candidates.append((name, entry))
    leased = leased or {}
    plan = {"nodes": {}, "order": [], "deferred": [], "held": [], "leased": [], "skipped": skipped, "shared": [],
            "repeat_offenders": [], "stranded": [], "breaker": {"tripped": tripped, "check": breaker_check},
            "limit": {"allowed": allowed, "fleet": fleet, "already_drained": drained, "text": limit_text},
            "checks": [breaker_check]}
    # nodes another run holds: that run acts on them, this one leaves them be (already drained, they take no slot;
    # not stranded either: the run that drained it is still going)
    for name, entry in candidates:
        if name in leased:
            entry.update(status="held", leased=dict(leased[name]))
            plan["nodes"][name] = entry
            plan["held"].append(name)
            plan["leased"].append(name)
    candidates = [(name, entry) for name, entry in candidates if name not in leased]
    for name, entry in candidates:
        if "escalation" in entry:
            plan["repeat_offenders"].append(name)
            plan["checks"].append(_repeat_check(name, entry))
        if "stranded" in entry:
            plan["stranded"].append(name)
            plan["checks"].append(stranded_check(name, entry))
    # nodes explained by a shared component take no action and no slot: the component gets the ticket
    for name, entry in candidates:
        if entry["status"] == "shared_cause":
            plan["shared"].append(name)
            plan["nodes"][name] = entry
    _shared_checks(plan, shared)
    candidates = [(name, entry) for name, entry in candidates if entry["status"] != "shared_cause"]
    if tripped:
        for name, entry in candidates:
            entry["status"] = "held"
            plan["nodes"][name] = entry
            plan["held"].append(name)
        _messages(plan)
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
    _messages(plan)
    if plan["deferred"]:
        plan["checks"].append(make_check(
            LIMIT_ID, "cluster", "warn", component="remediation", observed=len(plan["deferred"]),
            expected=limit_text, remedy="monitor", evidence="already drained: %s; deferred: %s" % (
                ", ".join(drained) or "none", ", ".join(plan["deferred"])),
            message="%d node(s) wait for a later run: %s, and %d were already drained" % (
                len(plan["deferred"]), limit_text, len(drained))))
    return plan
