# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Shared-component localisation (cluster checks ``fleet.shared.<kind>.<name>``): when several nodes fail the same
family, is it each node, or something they share — a leaf switch, a spine, a rack, a power feed?

Where each node sits comes from the inventory and the cabling plan (``placement``): ``zhisuan_rack``,
``zhisuan_pdu`` (one feed or a list), the leaf switch of each planned link and that leaf's ``uplink`` (the spine).

The statistic (docs/fleet.md), per family F and component C with ``n`` nodes of which ``k`` fail F:

- ``share = k / n``; ``rest = (K - k) / (N - n)``, the failing share among the fleet's other nodes (K failing of N);
- C is a shared cause when ``k >= min_nodes`` (3), ``share >= min_share`` (0.5) and
  ``share >= ratio * rest`` (4), and C does not hold the whole fleet (a fleet-wide cause is the circuit breaker's);
- the component explaining the most failing nodes wins: one whose failing nodes are all failing nodes of a component
  already named (a rack behind a failing leaf switch) is not named again.

Pure functions, standard library only.
"""

from __future__ import annotations

import re

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check

KINDS = ("leaf", "spine", "rack", "pdu")
DEFAULTS = {"min_nodes": 3, "min_share": 0.5, "ratio": 4.0}
# Fabric families point at a switch; everything else shared by a rack or a feed points at power or cooling.
_FABRIC = ("nic", "rdma", "cabling", "nccl")


class FleetError(ValueError):
    """A localisation setting that cannot be used; the message names it."""


def settings(overrides=None):
    """``DEFAULTS`` with a site's ``zhisuan_thresholds.fleet`` over them; raises FleetError naming the key."""
    out = dict(DEFAULTS)
    for key, value in (overrides or {}).items():
        if key not in DEFAULTS:
            raise FleetError("fleet thresholds: unknown key %r (known: %s)" % (key, ", ".join(sorted(DEFAULTS))))
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or value > 10 ** 6:
            raise FleetError("fleet thresholds: %s must be a positive number, got %r" % (key, value))
        out[key] = value
    return out


def _name(value):
    """A component name as an id part (dots would split the check id)."""
    return re.sub(r"[^A-Za-z0-9_-]+", "_", str(value))


def _names(value):
    if value is None or value == "":
        return []
    if isinstance(value, (list, tuple)):
        return [str(item) for item in value if item not in (None, "")]
    return [str(value)]


def placement(host_vars, plan=None):
    """``{host: {kind: [component names]}}`` from each host's variables (``zhisuan_rack``, ``zhisuan_pdu``) and
    the cabling plan's links and switches (leaf of each link, the leaf's ``uplink`` as spine)."""
    plan = plan if isinstance(plan, dict) else {}
    switches = plan.get("switches") if isinstance(plan.get("switches"), dict) else {}
    links = [link for link in plan.get("links") or [] if isinstance(link, dict)] if isinstance(
        plan.get("links"), list) else []
    out = {}
    for host, variables in (host_vars or {}).items():
        variables = variables if isinstance(variables, dict) else {}
        where = {"rack": _names(variables.get("zhisuan_rack")), "pdu": _names(variables.get("zhisuan_pdu")),
                 "leaf": [], "spine": []}
        for link in links:
            if str(link.get("node")) != str(host) or link.get("switch") in (None, ""):
                continue
            leaf = str(link["switch"])
            if leaf not in where["leaf"]:
                where["leaf"].append(leaf)
            info = switches.get(leaf) if isinstance(switches.get(leaf), dict) else {}
            for spine in _names(info.get("uplink")):
                if spine not in where["spine"]:
                    where["spine"].append(spine)
        out[host] = where
    return out


def failing_families(hosts):
    """``{family: {host: [failing check ids]}}`` over results.json ``hosts`` (status ``fail`` only: an ``error``
    is a tool that could not run, not evidence of a shared fault)."""
    out = {}
    for host, record in (hosts or {}).items():
        record = record if isinstance(record, dict) else {}
        for check in record.get("checks") or []:
            if not isinstance(check, dict) or check.get("status") != "fail":
                continue
            family = str(check.get("id") or "").split(".", 1)[0]
            if family:
                out.setdefault(family, {}).setdefault(host, [])
                if check["id"] not in out[family][host]:
                    out[family][host].append(check["id"])
    return out


def _percent(value):
    return "%d %%" % round(value * 100)


def _most_common(ids):
    counts = {}
    for check_id in ids:
        counts[check_id] = counts.get(check_id, 0) + 1
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[0][0]


def shared_causes(hosts, where, thresholds=None):
    """The components that fail a family far more often than the rest of the fleet, strongest first:
    ``[{kind, name, family, nodes, failing, share, rest, check_id}]`` (``nodes``/``failing`` sorted names)."""
    limits = settings(thresholds)
    fleet = sorted(set(hosts or {}) & set(where or {}))
    total = len(fleet)
    found = []
    for family, failing_hosts in sorted(failing_families(dict((h, hosts[h]) for h in fleet)).items()):
        failing_all = set(failing_hosts)
        for kind in KINDS:
            members = {}
            for host in fleet:
                for name in where[host].get(kind) or []:
                    members.setdefault(name, []).append(host)
            for name, nodes in sorted(members.items()):
                failing = sorted(set(nodes) & failing_all)
                n, k = len(nodes), len(failing)
                if n >= total or k < limits["min_nodes"]:
                    continue
                share = float(k) / n
                rest = float(len(failing_all) - k) / (total - n)
                if share < limits["min_share"] or share < limits["ratio"] * rest:
                    continue
                ids = [check_id for host in failing for check_id in failing_hosts[host]]
                found.append({"kind": kind, "name": name, "family": family, "nodes": sorted(nodes),
                              "failing": failing, "share": share, "rest": rest, "check_id": _most_common(ids)})
    # the component that explains the most failing nodes wins: a rack whose failing nodes all sit behind a named
    # leaf switch is that switch's fault, not a second cause
    found.sort(key=lambda item: (-len(item["failing"]), -item["share"], KINDS.index(item["kind"]), item["name"]))
    kept = []
    for cause in found:
        if not any(other["family"] == cause["family"] and set(cause["failing"]) <= set(other["failing"])
                   for other in kept):
            kept.append(cause)
    return kept


def _message(cause):
    kind, family = cause["kind"], cause["family"]
    if kind in ("leaf", "spine"):
        action = "check the switch, its uplinks and its cabling" if family in _FABRIC else \
            "check what the switch carries for these nodes"
    elif kind == "pdu":
        action = "check the power feed"
    else:
        action = "check the rack's power, cooling and top-of-rack switch"
    return "%s %s: %d of its %d nodes fail %s (%s), the rest of the fleet %s: %s, not each node" % (
        kind, cause["name"], len(cause["failing"]), len(cause["nodes"]), cause["check_id"],
        _percent(cause["share"]), _percent(cause["rest"]), action)


def judge_fleet(hosts, where, thresholds=None):
    """Cluster checks: one ``fleet.shared.<kind>.<name>`` fail per shared cause (remedy ``investigate``), or one
    ``fleet.shared.components.localised`` pass/skip saying none was found or nothing says where nodes sit."""
    placed = [host for host in (where or {}) if any((where[host] or {}).get(kind) for kind in KINDS)]
    if not placed:
        return [make_check("fleet.shared.components.localised", "cluster", "skip", component="fleet",
                           message="Nothing says where the nodes sit (zhisuan_rack, zhisuan_pdu, zhisuan_cabling_plan),"
                                   " so no shared component was looked for")]
    causes = shared_causes(hosts, where, thresholds)
    limits = settings(thresholds)
    expected = "fewer than %d failing nodes, or under %s of a component's nodes, or under %s x the rest of the fleet" % (
        limits["min_nodes"], _percent(limits["min_share"]), limits["ratio"])
    if not causes:
        return [make_check("fleet.shared.components.localised", "cluster", "pass", component="fleet",
                           observed=0, expected=expected,
                           message="No rack, power feed or switch has more failing nodes than the rest of the fleet")]
    checks = []
    by_component = {}
    for cause in causes:  # strongest first: the first cause of a component speaks for it
        by_component.setdefault((cause["kind"], cause["name"]), []).append(cause)
    for (kind, name), group in by_component.items():
        first = group[0]
        message = _message(first)
        if len(group) > 1:
            message += "; also %s" % ", ".join("%s (%d nodes)" % (c["check_id"], len(c["failing"])) for c in group[1:])
        checks.append(make_check(
            "fleet.shared.%s.%s" % (kind, _name(name)), "cluster", "fail",
            component="%s %s" % (kind, name), observed=len(first["failing"]), expected=expected,
            message=message, remedy="investigate",
            evidence="; ".join("%s: failing %s" % (c["family"], ", ".join(c["failing"])) for c in group)
            + "; members: %s" % ", ".join(first["nodes"])))
    return checks
