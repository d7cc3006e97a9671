# SPDX-License-Identifier: GPL-3.0-or-later
"""Pair schedules: the circle method's properties for N = 2..64, the other kinds, ports."""

from __future__ import annotations

import itertools

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._net import schedule


def names(count):
    return ["node%02d" % i for i in range(1, count + 1)]


@pytest.mark.parametrize("count", range(2, 65))
def test_circle_covers_every_pair_once_in_the_fewest_rounds(count):
    nodes = names(count)
    rounds = schedule.circle(nodes)
    assert len(rounds) == (count - 1 if count % 2 == 0 else count)
    seen = []
    for pairs in rounds:
        in_round = [node for pair in pairs for node in (pair["server"], pair["client"])]
        assert len(in_round) == len(set(in_round)), "a node twice in one round"
        assert len(pairs) == count // 2
        seen.extend(frozenset((pair["server"], pair["client"])) for pair in pairs)
    assert sorted(seen, key=sorted) == sorted((frozenset(p) for p in itertools.combinations(nodes, 2)), key=sorted)
    assert schedule.check_rounds(rounds) == []


def test_circle_balances_server_and_client_roles():
    rounds = schedule.circle(names(8))
    serves = dict((node, 0) for node in names(8))
    for pairs in rounds:
        for pair in pairs:
            serves[pair["server"]] += 1
    assert all(3 <= count <= 4 for count in serves.values()), serves


def test_circle_of_one_or_none_is_empty():
    assert schedule.circle(["a"]) == []
    assert schedule.circle([]) == []


def test_duplicate_node_is_refused():
    with pytest.raises(ValueError, match="^node a is listed twice$"):
        schedule.circle(["a", "b", "a"])


def test_loopback_is_one_round_of_self_pairs():
    assert schedule.loopback(["a", "b"]) == [[{"server": "a", "client": "a"}, {"server": "b", "client": "b"}]]
    assert schedule.check_rounds(schedule.loopback(["a", "b"])) == []


@pytest.mark.parametrize("count", [2, 7, 16])
def test_random_pairs_are_disjoint_and_cover_every_node(count):
    nodes = names(count)
    rounds = schedule.random_pairs(nodes, seed=3)
    assert schedule.check_rounds(rounds) == []
    covered = set(node for pairs in rounds for pair in pairs for node in (pair["server"], pair["client"]))
    assert covered == set(nodes)
    assert len(rounds) == (1 if count % 2 == 0 else 2)
    assert rounds == schedule.random_pairs(nodes, seed=3)


def test_repair_round_pairs_each_suspect_with_a_good_node():
    rounds = schedule.repair_round(["s1", "s2", "s3"], ["g1", "g2"], seed=1)
    assert len(rounds) == 2
    assert schedule.check_rounds(rounds) == []
    pairs = [pair for batch in rounds for pair in batch]
    assert sorted(pair["client"] for pair in pairs) == ["s1", "s2", "s3"]
    assert set(pair["server"] for pair in pairs) <= {"g1", "g2"}


def test_repair_round_without_good_nodes():
    with pytest.raises(ValueError, match=r"^no known-good node to re-pair the 1 suspect\(s\) with$"):
        schedule.repair_round(["s1"], ["s1"])
    assert schedule.repair_round([], ["g1"]) == []


PLAN = {
    "links": [{"node": n, "port": "ib0", "switch": sw, "switch_port": "p%d" % i}
              for i, (n, sw) in enumerate([("a", "leaf01"), ("b", "leaf01"), ("c", "leaf02"), ("d", "leaf02"),
                                           ("e", "leaf03"), ("f", "leaf03")])],
    "switches": {"leaf01": {"tier": "leaf", "uplink": "spine01"}, "leaf02": {"tier": "leaf", "uplink": "spine01"},
                 "leaf03": {"tier": "leaf", "uplink": "spine02"}},
}


def test_topology_rounds_same_leaf_then_spine_then_across_spines():
    rounds = schedule.topology_rounds(list("abcdef"), PLAN)
    as_sets = [[{p["server"], p["client"]} for p in pairs] for pairs in rounds]
    assert as_sets == [[{"a", "b"}, {"c", "d"}, {"e", "f"}], [{"a", "c"}, {"b", "d"}], [{"a", "e"}, {"b", "f"}]]
    assert schedule.check_rounds(rounds) == []


def test_topology_needs_every_node_in_the_plan():
    with pytest.raises(ValueError, match="^node\\(s\\) not in the cabling plan: z$"):
        schedule.topology_rounds(["a", "z"], PLAN)


def test_assign_ports_per_pair_of_a_round():
    rounds = schedule.assign_ports(schedule.circle(names(4)), base_port=20000)
    assert [[pair["port"] for pair in pairs] for pairs in rounds] == [[20000, 20001]] * 3
    with pytest.raises(ValueError, match="^base_port 65535 leaves no room for 2 pairs in one round$"):
        schedule.assign_ports(schedule.circle(names(4)), base_port=65535)


def test_plan_rounds_dispatch_and_unknown_kind():
    assert schedule.plan_rounds("full_mesh", names(4)) == schedule.circle(names(4))
    with pytest.raises(ValueError, match="^unknown schedule kind 'ring'"):
        schedule.plan_rounds("ring", names(4))


def test_check_rounds_reports_a_node_twice():
    assert schedule.check_rounds([[{"server": "a", "client": "b"}, {"server": "b", "client": "c"}]]) == [
        "round 1: node b is in two pairs"]
