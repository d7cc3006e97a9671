# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The slow-node bisection planner, driven against simulated clusters (a run is slow when it includes a slow node)."""

from __future__ import annotations

import json
import math

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._net import bisect


def _drive(nodes, is_slow, **kwargs):
    """Drive the planner like the playbook does; return (suspects, reason, runs); unresolved nodes in _drive.last."""
    plan = bisect.start(nodes, **kwargs)
    runs = []
    while "run" in plan:
        group = plan["run"]
        assert len(group) >= 2 and len(set(group)) == len(group)
        runs.append(group)
        # the state travels through Ansible variables: it must survive JSON
        plan = bisect.next_step(json.loads(json.dumps(plan["state"])), is_slow(group))
    _drive.unresolved = plan["unresolved"]
    return plan["done"], plan["reason"], runs


def _cluster(count):
    return ["node%02d" % index for index in range(1, count + 1)]


@pytest.mark.parametrize("count", [4, 5, 6, 7, 8, 13, 16, 31, 64])
def test_one_slow_node_is_found_wherever_it_is(count):
    nodes = _cluster(count)
    for slow in nodes:
        suspects, reason, runs = _drive(nodes, lambda group: slow in group)
        assert suspects == [slow], (count, slow, runs)
        assert reason.startswith("the group was fast without %s and slow with it" % slow)
        # halving both halves per level plus the drop-one tests of the last small group
        assert len(runs) <= 2 * math.ceil(math.log2(count)) + 3, (count, slow, len(runs))


def test_sixty_four_nodes_take_a_dozen_runs():
    suspects, dummy, runs = _drive(_cluster(64), lambda group: "node37" in group)
    assert suspects == ["node37"]
    assert len(runs) == 12
    assert runs[0] == _cluster(32) and runs[1] == _cluster(64)[32:]


def test_none_slow_names_nobody():
    suspects, reason, runs = _drive(_cluster(8), lambda group: False)
    assert suspects == []
    assert reason == "every smaller group was fast: the slowness needs the whole set (look at the fabric, not a node)"
    assert runs == [_cluster(8)[:4], _cluster(8)[4:]]


def test_two_slow_nodes_in_different_halves():
    suspects, dummy, runs = _drive(_cluster(16), lambda group: "node03" in group or "node12" in group)
    assert suspects == ["node03", "node12"]


def test_three_nodes_resolve_without_a_good_node():
    suspects, dummy, runs = _drive(_cluster(3), lambda group: "node02" in group)
    assert suspects == ["node02"]
    assert runs == [["node02", "node03"], ["node01", "node03"], ["node01", "node02"]]


def test_two_nodes_cannot_be_told_apart():
    suspects, reason, runs = _drive(_cluster(2), lambda group: True)
    assert runs == [] and suspects == [] and _drive.unresolved == ["node01", "node02"]
    assert reason == ("every group with node01, node02 stayed slow and no single node could be blamed (no group was "
                      "ever fast: look at the fabric or the test set-up)")


def test_everything_slow_reports_the_leaves_whole():
    suspects, reason, dummy = _drive(_cluster(4), lambda group: True)
    assert suspects == [] and _drive.unresolved == _cluster(4)


def test_two_slow_nodes_in_one_small_group_are_unresolved():
    suspects, reason, dummy = _drive(_cluster(6), lambda group: "node01" in group or "node02" in group)
    assert suspects == [] and _drive.unresolved == ["node01", "node02", "node03"]
    assert reason == "every group with node01, node02, node03 stayed slow and no single node could be blamed"


def test_max_steps_stops():
    suspects, reason, runs = _drive(_cluster(64), lambda group: "node05" in group, max_steps=3)
    assert len(runs) == 3 and reason == "stopped after 3 runs (max_steps)"


@pytest.mark.parametrize("nodes, kwargs, message", [
    (["a"], {}, "bisection needs at least 2 nodes, got 1"),
    (["a", "a", "b"], {}, "bisection: duplicate node names in ['a', 'a', 'b']"),
    (["a", "b", "c", "d"], {"min_split": 3}, "bisection: min_split must be at least 4 (each half needs 2 nodes)"),
])
def test_bad_start(nodes, kwargs, message):
    with pytest.raises(ValueError) as info:
        bisect.start(nodes, **kwargs)
    assert str(info.value) == message


def test_bad_next_step():
    plan = bisect.start(_cluster(4))
    with pytest.raises(ValueError) as info:
        bisect.next_step(plan["state"], "yes")
    assert str(info.value) == "bisection: the last result must be true (slow) or false (fast), got 'yes'"
    done = _drive(_cluster(4), lambda group: False)
    assert done[0] == []
    with pytest.raises(ValueError) as info:
        bisect.next_step({"current": None}, True)
    assert str(info.value) == "bisection: no run is pending in this state (call start first, or it is done)"


def test_filter_drives_the_same_planner():
    from ansible.errors import AnsibleFilterError

    from ansible_collections.zhisuan.ops.plugins.filter.nccl_bisect import nccl_bisect

    plan = nccl_bisect(_cluster(4))
    assert plan["run"] == ["node01", "node02"]
    plan = nccl_bisect(plan["state"], last_slow="false")
    assert plan["run"] == ["node03", "node04"]
    plan = nccl_bisect(plan["state"], last_slow=True)
    assert plan["run"] == ["node04", "node01"]
    with pytest.raises(AnsibleFilterError) as info:
        nccl_bisect("node01")
    assert str(info.value) == "nccl_bisect: the input must be a list of nodes or a bisection state, got str"
    with pytest.raises(AnsibleFilterError) as info:
        nccl_bisect(plan["state"], last_slow="maybe")
    assert str(info.value).startswith("nccl_bisect: The value 'maybe' is not a valid boolean.")
