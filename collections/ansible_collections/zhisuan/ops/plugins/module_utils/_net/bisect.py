# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Find the slow node(s) behind a collective-only symptom (a multi-node NCCL run below its floor), one run at a time.

A planner the playbook drives: ``plan = start(nodes)``, then repeatedly ``plan = next_step(plan["state"], slow)``
where ``slow`` says whether the last group asked for (``plan["run"]``) was slow, until ``plan`` has ``done``::

    {"run": [nodes...], "state": {...}}            # run one multi-node test on these nodes, report slow or not
    {"done": [suspects...], "unresolved": [nodes...], "reason": "...", "state": {...}}

The method (sichek's ``nccltest_allreduce_perf_bisect.py``, shared/REFERENCE.md section 3): the whole set is known
slow; halve it and test both halves, recursing into every half that stays slow (so two slow nodes in different
halves are both found); a slow group of fewer than ``min_split`` nodes is a leaf, resolved by dropping one node at a
time (padded with nodes already proven good so every run has at least two nodes): the node whose removal makes the
run fast is a suspect. The nodes of a leaf where no removal helps (or that cannot be padded) are ``unresolved``:
slow together, none to blame alone. When no half is slow the slowness needs the
whole set (a fabric or switch problem): no node is named. Everything in ``state`` is plain data (JSON-safe).
"""

from __future__ import annotations

MIN_NODES = 2


def _halves(group):
    middle = (len(group) + 1) // 2
    return [group[:middle], group[middle:]]


def start(nodes, min_split=4, max_steps=200):
    """The first step for ``nodes`` (a multi-node set whose run was slow)."""
    nodes = list(nodes)
    if len(set(nodes)) != len(nodes):
        raise ValueError("bisection: duplicate node names in %s" % nodes)
    if len(nodes) < MIN_NODES:
        raise ValueError("bisection needs at least %d nodes, got %d" % (MIN_NODES, len(nodes)))
    if min_split < 2 * MIN_NODES:
        raise ValueError("bisection: min_split must be at least %d (each half needs %d nodes)" % (2 * MIN_NODES, MIN_NODES))
    state = {"nodes": nodes, "min_split": min_split, "max_steps": max_steps, "steps": 0, "queue": [], "leaves": [],
             "good": [], "suspects": [], "unresolved": [], "current": None, "drop": None}
    _split_or_leaf(state, nodes)
    return _advance(state)


def _split_or_leaf(state, group):
    if len(group) >= state["min_split"]:
        state["queue"].extend({"group": half, "drop": None, "leaf": None} for half in _halves(group))
    else:
        state["leaves"].append(group)


def _fillers(state, leaf, count):
    return [node for node in state["good"] if node not in leaf][:count]


def _queue_leaf(state, leaf):
    """Drop-one tests of a slow leaf, each padded with good nodes to ``MIN_NODES``."""
    tests = []
    for node in leaf:
        rest = [other for other in leaf if other != node]
        rest += _fillers(state, leaf, max(0, MIN_NODES - len(rest)))
        if len(rest) < MIN_NODES:
            return False
        tests.append({"group": rest, "drop": node, "leaf": leaf})
    state["queue"].extend(tests)
    state.setdefault("leaf_results", {})[",".join(leaf)] = []
    return True


def _advance(state):
    while not state["queue"] and state["leaves"]:
        leaf = state["leaves"].pop(0)
        if not _queue_leaf(state, leaf):
            state["unresolved"].extend(leaf)
    if state["queue"] and state["steps"] < state["max_steps"]:
        state["current"] = state["queue"].pop(0)
        state["steps"] += 1
        return {"run": list(state["current"]["group"]), "state": state}
    state["current"] = None
    suspects = sorted(set(state["suspects"]), key=state["nodes"].index)
    unresolved = sorted(set(state["unresolved"]) - set(suspects), key=state["nodes"].index)
    if state["queue"]:
        reason = "stopped after %d runs (max_steps)" % state["steps"]
    elif suspects:
        reason = "the group was fast without %s and slow with %s" % (
            ", ".join(suspects), "it" if len(suspects) == 1 else "each of them")
    elif unresolved:
        reason = "every group with %s stayed slow and no single node could be blamed%s" % (
            ", ".join(unresolved), "" if state["good"] else " (no group was ever fast: look at the fabric or the test set-up)")
    elif state["good"]:
        reason = "every smaller group was fast: the slowness needs the whole set (look at the fabric, not a node)"
    else:
        reason = "no node could be named"
    return {"done": suspects, "unresolved": unresolved, "reason": reason, "state": state}


def next_step(state, last_slow):
    """The step after the last run (``last_slow``: whether ``state``'s current group was slow)."""
    if isinstance(last_slow, dict):
        last_slow = last_slow.get("slow")
    if not isinstance(state, dict) or state.get("current") is None:
        raise ValueError("bisection: no run is pending in this state (call start first, or it is done)")
    if not isinstance(last_slow, bool):
        raise ValueError("bisection: the last result must be true (slow) or false (fast), got %r" % (last_slow,))
    test = state["current"]
    if test["drop"] is None:
        if last_slow:
            _split_or_leaf(state, test["group"])
        else:
            state["good"].extend(node for node in test["group"] if node not in state["good"])
    else:
        key = ",".join(test["leaf"])
        results = state["leaf_results"][key]
        results.append(last_slow)
        if not last_slow:
            state["suspects"].append(test["drop"])
        if len(results) == len(test["leaf"]) and all(results):
            state["unresolved"].extend(test["leaf"])
    return _advance(state)
