# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Pure rules over an RDMA pair matrix: tell a slow NODE from a slow LINK.

Input: one record per pair test ``{server, client, round, value, status: ok|timeout|error, message}`` (``value``
in Gb/s for bandwidth tests, usec for latency tests). A pair is *low* when its value is under the floor (bandwidth)
or over the ceiling (latency).

* A node is **slow** when at least ``node_fraction`` (default 0.5) of the partners it was measured with gave a low
  pair, it was measured with at least two partners, and most of those low partners are *fine elsewhere* (they have
  a good pair with some other node and are not themselves low with ``node_fraction`` of their other partners).
  Host check ``rdma.node.bandwidth`` fails with remedy ``investigate`` (HCA, PCIe link, NUMA, cable of that node).
* A low pair whose two nodes are not slow is a **slow link/path**: cluster check ``rdma.pair.<a>.<b>`` (names sorted)
  fails with remedy ``check_cable``. When the matrix cannot tell (a node measured with one partner only), the pair
  check fails with ``investigate`` and both nodes get a ``warn``: re-pair them with known-good nodes.
* Pairs that timed out or failed give host checks ``rdma.pair.timeout`` / ``rdma.pair.error`` (status ``error``).
"""

from __future__ import annotations

import re
import statistics

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._readings import items, reading, text
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._util import fmt, to_number

DEFAULT_NODE_FRACTION = 0.5


def _median(values):
    return statistics.median(values) if values else None


class Matrix(object):
    """The pair records, indexed by node, with the low/high verdict of each measured pair."""

    def __init__(self, pairs, floor=None, ceiling=None, nodes=None):
        if floor is None and ceiling is None:
            raise ValueError("a bandwidth floor or a latency ceiling is needed to judge RDMA pairs")
        self.floor = floor
        self.ceiling = ceiling
        self.pairs = []
        self.nodes = list(nodes or [])
        for number, pair in enumerate(items(pairs)):
            if not isinstance(pair, dict) or not text(pair.get("server")) or not text(pair.get("client")):
                raise ValueError("pair record %d needs 'server' and 'client'" % number)
            record = dict(pair)
            record["low"] = self._low(record)
            record["value"] = reading(record.get("value"))
            round_number = record.get("round")
            record["round"] = round_number if reading(round_number, 0, None) is not None else None
            self.pairs.append(record)
            for node in (record["server"], record["client"]):
                if node not in self.nodes:
                    self.nodes.append(node)

    def _low(self, pair):
        """True (low), False (at the floor) or None (not measured: failed, or a value that is not a finite,
        non-negative, possible number, which is never taken for a good one)."""
        value = reading(pair.get("value"))
        if pair.get("status", "ok") != "ok" or value is None:
            return None
        if self.floor is not None:
            return value < self.floor
        return value > self.ceiling

    def measured(self, node, excluding=None):
        """(partner, pair) of every measured cross-node pair of ``node``."""
        out = []
        for pair in self.pairs:
            if pair["low"] is None or pair["server"] == pair["client"]:
                continue
            if node in (pair["server"], pair["client"]):
                partner = pair["client"] if pair["server"] == node else pair["server"]
                if partner != excluding:
                    out.append((partner, pair))
        return out

    def low_fraction(self, node, excluding=None):
        measured = self.measured(node, excluding)
        if not measured:
            return None
        return sum(1 for _partner, pair in measured if pair["low"]) / float(len(measured))

    def fine_elsewhere(self, partner, node, fraction):
        others = self.measured(partner, excluding=node)
        if not any(not pair["low"] for _other, pair in others):
            return False
        return self.low_fraction(partner, excluding=node) < fraction


def slow_nodes(matrix, fraction=DEFAULT_NODE_FRACTION):
    """Nodes low with at least ``fraction`` of their partners while most of those partners are fine elsewhere."""
    slow = []
    for node in matrix.nodes:
        measured = matrix.measured(node)
        if len(measured) < 2 or matrix.low_fraction(node) < fraction:
            continue
        low_partners = [partner for partner, pair in measured if pair["low"]]
        fine = [partner for partner in low_partners if matrix.fine_elsewhere(partner, node, fraction)]
        if fine and len(fine) * 2 >= len(low_partners):
            slow.append(node)
    # loopback pairs: a node low with itself is slow (there is no cable between two nodes to blame)
    for pair in matrix.pairs:
        if pair["server"] == pair["client"] and pair["low"] and pair["server"] not in slow:
            slow.append(pair["server"])
    return slow


def _id_part(node):
    return re.sub(r"[^a-z0-9_]+", "_", node.lower())


def _pair_id(pair):
    """``rdma.pair.<a>.<b>``, the two node names sorted (a link has no direction) and reduced to the characters a
    check id allows (the component names the nodes exactly)."""
    if pair["server"] == pair["client"]:
        return "rdma.pair.%s.loopback" % _id_part(pair["server"])
    return "rdma.pair.%s.%s" % tuple(sorted((_id_part(pair["server"]), _id_part(pair["client"]))))


def _expected_text(matrix, unit):
    return (">= %s %s" % (fmt(matrix.floor), unit)) if matrix.floor is not None else ("<= %s %s" % (fmt(matrix.ceiling), unit))


def _evidence(pair, unit):
    value = "N/A" if pair.get("value") is None else "%s %s" % (fmt(pair["value"]), unit)
    return "round %s: server %s, client %s, port %s: %s" % (
        pair.get("round", "?"), pair["server"], pair["client"], pair.get("port", "?"), value)


def _cluster_checks(matrix, slow, unit, test):
    checks = []
    low = [pair for pair in matrix.pairs if pair["low"]]
    for pair in low:
        if pair["server"] == pair["client"]:
            continue
        culprit = [node for node in (pair["server"], pair["client"]) if node in slow]
        if culprit:
            continue  # explained by the slow node: reported on that host
        ambiguous = min(len(matrix.measured(pair["server"])), len(matrix.measured(pair["client"]))) < 2
        if ambiguous:
            message = ("%s between %s and %s is %s %s, under the floor; each node was measured with this partner only, "
                       "so a slow node cannot be told from a slow link: re-pair both with known-good nodes"
                       % (test, pair["server"], pair["client"], fmt(pair["value"]), unit))
            remedy = "investigate"
        else:
            message = ("%s between %s and %s is %s %s while both nodes reach the floor with their other partners: "
                       "a slow link or path (cable, optic, switch port or route between them)"
                       % (test, pair["server"], pair["client"], fmt(pair["value"]), unit))
            remedy = "check_cable"
        checks.append(make_check(_pair_id(pair), "cluster", "fail", component="%s <-> %s" % (pair["server"], pair["client"]),
                                 observed=pair["value"], expected=_expected_text(matrix, unit), message=message,
                                 remedy=remedy, evidence=_evidence(pair, unit)))
    measured = [pair for pair in matrix.pairs if pair["low"] is not None]
    good = len([pair for pair in measured if not pair["low"]])
    status = "pass" if measured and good == len(measured) else "fail" if measured else "error"
    checks.append(make_check(
        "rdma.pairs.summary", "cluster", status, component="%d nodes, %d pairs" % (len(matrix.nodes), len(matrix.pairs)),
        observed="%d/%d pairs at the floor" % (good, len(measured)), expected="every pair %s" % _expected_text(matrix, unit),
        message=("%d of %d measured %s pairs reach the floor; %d slow node(s), %d pair(s) not measured"
                 % (good, len(measured), test, len(slow), len(matrix.pairs) - len(measured))),
        remedy=None if status == "pass" else "investigate",
        evidence="low pairs: %s" % (", ".join("%s-%s" % (p["server"], p["client"]) for p in matrix.pairs if p["low"]) or "none")))
    return checks


def _node_check(matrix, node, slow, unit, test):
    measured = matrix.measured(node)
    values = [pair["value"] for _partner, pair in measured]
    loop = [pair for pair in matrix.pairs if pair["server"] == pair["client"] == node and pair["low"] is not None]
    values += [pair["value"] for pair in loop]
    median = _median(values)
    low_partners = sorted(partner for partner, pair in measured if pair["low"])
    evidence = ", ".join("%s=%s" % (partner, fmt(pair["value"])) for partner, pair in measured)
    if loop:
        evidence = ", ".join(filter(None, [evidence, "loopback=%s" % fmt(loop[0]["value"])]))
    component = "%s (%d partner%s)" % (node, len(measured), "" if len(measured) == 1 else "s")
    expected = _expected_text(matrix, unit)
    if not values:
        return make_check("rdma.node.bandwidth", node, "error", component=component, observed="no result",
                          expected=expected, message="no %s pair of %s gave a result (see rdma.pair.timeout/error)" % (test, node),
                          remedy="investigate", evidence="")
    if node in slow:
        if loop and not measured:
            message = "%s loopback on %s is %s %s, under the floor" % (test, node, fmt(median), unit)
        else:
            message = ("%s is slow with %d of its %d partners (median %s %s) while those partners reach the floor "
                       "with other nodes: the node itself (HCA, its PCIe link or NUMA placement, firmware, its cable)"
                       % (node, len(low_partners), len(measured), fmt(median), unit))
        return make_check("rdma.node.bandwidth", node, "fail", component=component, observed=median, expected=expected,
                          message=message, remedy="investigate", evidence=evidence)
    ambiguous = [partner for partner in low_partners
                 if partner not in slow and min(len(measured), len(matrix.measured(partner))) < 2]
    if ambiguous:
        return make_check("rdma.node.bandwidth", node, "warn", component=component, observed=median, expected=expected,
                          message=("%s is low with %s, its only measured partner: node or link cannot be told apart; "
                                   "re-pair it with a known-good node" % (node, ", ".join(ambiguous))),
                          remedy="investigate", evidence=evidence)
    message = "%s reaches the floor with %d of %d partners (median %s %s)" % (
        node, len(measured) - len(low_partners), len(measured), fmt(median), unit)
    if low_partners:
        message += "; low only with %s (see the pair and node checks)" % ", ".join(low_partners)
    return make_check("rdma.node.bandwidth", node, "pass", component=component, observed=median, expected=expected,
                      message=message, evidence=evidence)


def _problem_checks(matrix, node, test):
    checks = []
    for status, check_id, what in (("timeout", "rdma.pair.timeout", "timed out"), ("error", "rdma.pair.error", "failed")):
        bad = [pair for pair in matrix.pairs if node in (pair["server"], pair["client"]) and pair.get("status") == status]
        if not bad:
            checks.append(make_check(check_id, node, "pass", component=node, observed=0, expected="0",
                                     message="no %s pair test of %s %s" % (test, node, what)))
            continue
        peers = []
        for pair in bad:
            peers.append(pair["client"] if pair["server"] == node else pair["server"])
        checks.append(make_check(
            check_id, node, "error", component=node, observed=len(bad), expected="0",
            message="%d %s pair test(s) of %s %s (with %s): %s" % (
                len(bad), test, node, what, ", ".join(peers), bad[0].get("message") or "no message"),
            remedy="investigate",
            evidence="; ".join("%s-%s round %s: %s" % (p["server"], p["client"], p.get("round", "?"), p.get("message") or "")
                               for p in bad)[:2000]))
    return checks


def analyze(pairs, floor=None, ceiling=None, unit="Gb/s", test="ib_write_bw", schedule=None, rounds=None,
            thresholds=None, nodes=None):
    """Judge a pair matrix. Returns ``{host_checks: {node: [checks]}, cluster_checks, cluster_data, slow_nodes,
    slow_links, suspects, good}`` where ``cluster_data`` is ``{"fabric": {"rdma_pairs": ...}}`` (docs/results.md).

    ``nodes`` orders the nodes (and adds those that have no pair record, which get an ``error`` check).
    ``suspects``: nodes in a low, failed or timed-out pair that are not yet proven slow — the nodes a second pass
    re-pairs with ``good`` ones (every pair measured and at the floor).
    """
    thresholds = thresholds or {}
    fraction = to_number(thresholds.get("node_fraction", DEFAULT_NODE_FRACTION), "rdma node_fraction")
    floor = None if floor is None else to_number(floor, "rdma floor")
    ceiling = None if ceiling is None else to_number(ceiling, "rdma ceiling")
    matrix = Matrix(pairs, floor=floor, ceiling=ceiling, nodes=nodes)
    slow = slow_nodes(matrix, fraction)
    host_checks = {}
    for node in matrix.nodes:
        host_checks[node] = [_node_check(matrix, node, slow, unit, test)] + _problem_checks(matrix, node, test)
    cluster_checks = _cluster_checks(matrix, slow, unit, test)
    slow_links = [check["component"] for check in cluster_checks if check["remedy"] == "check_cable"]
    bad = set()
    for pair in matrix.pairs:
        if pair["low"] or pair["low"] is None:
            bad.update((pair["server"], pair["client"]))
    suspects = [node for node in matrix.nodes if node in bad and node not in slow]
    good = [node for node in matrix.nodes if node not in bad]
    data_pairs = []
    for pair in matrix.pairs:
        status = "error" if pair["low"] is None else "fail" if pair["low"] else "pass"
        data_pairs.append({"a": pair["server"], "b": pair["client"], "round": pair.get("round"),
                           "value": pair.get("value"), "status": status})
    round_count = rounds if rounds is not None else len(set(p.get("round") for p in matrix.pairs if p.get("round")))
    cluster_data = {"fabric": {"rdma_pairs": {
        "test": test, "unit": unit, "floor": floor if floor is not None else ceiling, "schedule": schedule,
        "rounds": round_count, "nodes": list(matrix.nodes), "pairs": data_pairs}}}
    return {"host_checks": host_checks, "cluster_checks": cluster_checks, "cluster_data": cluster_data,
            "slow_nodes": slow, "slow_links": slow_links, "suspects": suspects, "good": good}


def summarize(analysis):
    """A line of facts for the report: node count, pair count, slow nodes and links."""
    data = analysis["cluster_data"]["fabric"]["rdma_pairs"]
    return {"test": data["test"], "schedule": data["schedule"], "rounds": data["rounds"], "nodes": len(data["nodes"]),
            "pairs": len(data["pairs"]), "low_pairs": len([p for p in data["pairs"] if p["status"] == "fail"]),
            "slow_nodes": list(analysis["slow_nodes"]), "slow_links": list(analysis["slow_links"])}
