# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Pair schedules for RDMA pair tests: pure functions from a node list to rounds.

A schedule is a list of rounds; a round is a list of pairs ``{"server": a, "client": b}`` that run at the same
time, so no node appears in two pairs of one round. Kinds (as peers schedule pair tests: AzHC, GCP's cluster health scanner, SuperBench):

* ``loopback``: one round, every node with itself (two local HCAs through the switch, as Azure's checks do);
* ``full_mesh``: every unordered pair exactly once, by the circle method (a 1-factorization of K_N): N-1 rounds of
  N/2 pairs for even N; for odd N a bye is added and there are N rounds of (N-1)/2 pairs;
* ``random``: one round of random disjoint pairs (an odd node out gets a random partner in a second round), and
  ``repair_round``: every suspect re-paired with known-good nodes (GCP's cluster health scanner second pass);
* ``topology``: from a cabling plan, same-leaf pairs first, then pairs across the spine, then across spines.

``assign_ports`` gives each pair of a round its own TCP port (lab nodes may all share one address).
"""

from __future__ import annotations

import random

KINDS = ("loopback", "full_mesh", "random", "topology")
DEFAULT_BASE_PORT = 18515


def _nodes(nodes):
    """The node names in order, each once; a node listed twice is a ValueError (it would pair with itself)."""
    out = []
    seen = set()
    for node in nodes or []:
        if not isinstance(node, str) or not node:
            raise ValueError("node names must be non-empty strings, got %r" % (node,))
        if node in seen:
            raise ValueError("node %s is listed twice" % node)
        seen.add(node)
        out.append(node)
    return out


def _pair(server, client):
    return {"server": server, "client": client}


def loopback(nodes):
    """One round: each node is its own server and client."""
    nodes = _nodes(nodes)
    return [[_pair(node, node) for node in nodes]] if nodes else []


def circle(nodes):
    """Full mesh by the circle method: fix the first node, rotate the others one place per round.

    Each node serves in about half of its pairs: a rotating node is the server while it sits in the first half of
    the circle; the fixed node alternates round by round.
    """
    nodes = _nodes(nodes)
    if len(nodes) < 2:
        return []
    ring = list(nodes)
    if len(ring) % 2:
        ring.append(None)  # the bye: whoever meets it sits the round out
    count = len(ring)
    rounds = []
    for number in range(count - 1):
        pairs = []
        for i in range(count // 2):
            first, second = ring[i], ring[count - 1 - i]
            if first is None or second is None:
                continue
            if i == 0 and number % 2:
                first, second = second, first
            pairs.append(_pair(first, second))
        rounds.append(pairs)
        ring = [ring[0], ring[-1]] + ring[1:-1]
    return rounds


def random_pairs(nodes, seed=None):
    """One round of random disjoint pairs; with an odd count the node left over meets a random partner in a
    second round (a node never runs two tests at once)."""
    nodes = _nodes(nodes)
    if len(nodes) < 2:
        return []
    rng = random.Random(seed)
    shuffled = list(nodes)
    rng.shuffle(shuffled)
    rounds = [[_pair(shuffled[i], shuffled[i + 1]) for i in range(0, len(shuffled) - 1, 2)]]
    if len(shuffled) % 2:
        left = shuffled[-1]
        rounds.append([_pair(rng.choice(shuffled[:-1]), left)])
    return rounds


def repair_round(suspects, good, seed=None):
    """Re-pair every suspect with a known-good node (the good node serves, the suspect is the client).

    Good nodes are cycled in a seeded random order; when there are more suspects than good nodes the pairs spill
    into further rounds, so no good node runs two tests at once. No good node: ValueError.
    """
    suspects = _nodes(suspects)
    good = [node for node in _nodes(good) if node not in suspects]
    if not suspects:
        return []
    if not good:
        raise ValueError("no known-good node to re-pair the %d suspect(s) with" % len(suspects))
    order = list(good)
    random.Random(seed).shuffle(order)
    rounds = []
    for start in range(0, len(suspects), len(order)):
        batch = suspects[start:start + len(order)]
        rounds.append([_pair(order[i], suspect) for i, suspect in enumerate(batch)])
    return rounds


def _leaf_map(nodes, plan):
    """node -> (leaf switch, its uplink) from a cabling plan; the node's first link in plan order decides."""
    if not isinstance(plan, dict):
        raise ValueError("the cabling plan must be a mapping with 'links' (and 'switches')")
    links = plan.get("links") or []
    switches = plan.get("switches") or {}
    leaf = {}
    for number, link in enumerate(links):
        if not isinstance(link, dict) or not link.get("node") or not link.get("switch"):
            raise ValueError("cabling plan links[%d] needs 'node' and 'switch'" % number)
        leaf.setdefault(link["node"], link["switch"])
    missing = [node for node in nodes if node not in leaf]
    if missing:
        raise ValueError("node(s) not in the cabling plan: %s" % ", ".join(missing))
    out = {}
    for node in nodes:
        switch = leaf[node]
        info = switches.get(switch) or {}
        out[node] = (switch, info.get("uplink"))
    return out


def _tier(first, second):
    """0 same leaf, 1 different leaves under one spine, 2 across spines (or an unknown uplink)."""
    if first[0] == second[0]:
        return 0
    if first[1] and first[1] == second[1]:
        return 1
    return 2


def topology_rounds(nodes, plan):
    """Same-leaf pairs first, then pairs across the spine, then across spines: one round per tier present.

    Each round pairs nodes greedily in node order at exactly that tier, so a slow round points at a layer of the
    fabric and a slow pair in a good round at a node or a cable.
    """
    nodes = _nodes(nodes)
    where = _leaf_map(nodes, plan)
    rounds = []
    for tier in (0, 1, 2):
        used = set()
        pairs = []
        for i, first in enumerate(nodes):
            if first in used:
                continue
            for second in nodes[i + 1:]:
                if second not in used and _tier(where[first], where[second]) == tier:
                    used.update((first, second))
                    pairs.append(_pair(first, second))
                    break
        if pairs:
            rounds.append(pairs)
    return rounds


def plan_rounds(kind, nodes, seed=None, cabling_plan=None):
    """Rounds of one schedule kind (``KINDS``)."""
    if kind == "loopback":
        return loopback(nodes)
    if kind == "full_mesh":
        return circle(nodes)
    if kind == "random":
        return random_pairs(nodes, seed)
    if kind == "topology":
        return topology_rounds(nodes, cabling_plan or {})
    raise ValueError("unknown schedule kind %r (known: %s)" % (kind, ", ".join(KINDS)))


def assign_ports(rounds, base_port=DEFAULT_BASE_PORT):
    """Copies of the rounds where pair i of each round listens on ``base_port + i``."""
    if not 1 <= int(base_port) <= 65535:
        raise ValueError("base_port must be 1..65535, got %r" % (base_port,))
    widest = max([len(pairs) for pairs in rounds] or [0])
    if int(base_port) + widest - 1 > 65535:
        raise ValueError("base_port %s leaves no room for %d pairs in one round" % (base_port, widest))
    return [[dict(pair, port=int(base_port) + i) for i, pair in enumerate(pairs)] for pairs in rounds]


def check_rounds(rounds):
    """Problems of a schedule (a node twice in a round, a malformed pair), as messages; [] when sound."""
    problems = []
    for number, pairs in enumerate(rounds, start=1):
        seen = set()
        for pair in pairs:
            if not isinstance(pair, dict) or not pair.get("server") or not pair.get("client"):
                problems.append("round %d: a pair needs 'server' and 'client', got %r" % (number, pair))
                continue
            for node in set((pair["server"], pair["client"])):
                if node in seen:
                    problems.append("round %d: node %s is in two pairs" % (number, node))
                seen.add(node)
    return problems
