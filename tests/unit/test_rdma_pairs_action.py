# SPDX-License-Identifier: GPL-3.0-or-later
"""zhisuan.ops.rdma_pairs on the controller: both sides of every pair merged into one record, the fabric addresses,
the floor from the profile."""

from __future__ import annotations

import pytest

from ansible_collections.zhisuan.ops.plugins.action.rdma_pairs import ActionModule, merge_sides


def side(host, role, status="ok", value=201.802, round_number=1, server="a", client="b", message=None):
    return {"host": host, "role": role, "status": status, "value": value, "round": round_number, "server": server,
            "client": client, "port": 18515, "message": message}


def test_client_value_is_the_pair_value():
    pairs = merge_sides({"a": [side("a", "server", value=190.0)], "b": [side("b", "client", value=191.0)],
                         "c": [{"role": "idle", "status": "idle"}]})
    assert pairs == [{"server": "a", "client": "b", "round": 1, "port": 18515, "status": "ok", "value": 191.0,
                      "message": None}]


def test_server_value_when_the_client_failed():
    pairs = merge_sides({"a": [side("a", "server", value=190.0)],
                         "b": [side("b", "client", status="error", value=None, message="x: failed")]})
    assert (pairs[0]["status"], pairs[0]["value"]) == ("ok", 190.0)


def test_timeout_wins_over_error_and_keeps_both_messages():
    pairs = merge_sides({"a": [side("a", "server", status="timeout", value=None, message="ib_write_bw: timed out")],
                         "b": [side("b", "client", status="error", value=None, message="ib_write_bw: no RDMA device")]})
    assert pairs[0]["status"] == "timeout"
    assert pairs[0]["message"] == "client: ib_write_bw: no RDMA device; server: ib_write_bw: timed out"


def test_a_host_that_reported_nothing_leaves_the_other_side():
    pairs = merge_sides({"a": [], "b": [side("b", "client", value=88.0, round_number=2)]})
    assert [(p["round"], p["value"]) for p in pairs] == [(2, 88.0)]


def test_loopback_carries_its_server_side():
    loop = dict(side("a", "loopback", server="a", client="a"), server_side={"status": "ok", "value": 200.0})
    assert merge_sides({"a": [loop]})[0]["value"] == 201.802


def test_addresses_fall_back_to_ansible_host_then_local_then_name():
    hostvars = {"a": {"zhisuan_fabric_address": "10.0.0.1", "ansible_host": "192.0.2.1"}, "b": {"ansible_host": "192.0.2.2"},
                "c": {"ansible_connection": "local"}, "d": {}}
    assert ActionModule._addresses(["a", "b", "c", "d"], "zhisuan_fabric_address", {"hostvars": hostvars}) == {
        "a": "10.0.0.1", "b": "192.0.2.2", "c": "127.0.0.1", "d": "d"}


def args(**extra):
    out = {"floor": None, "ceiling": None, "profile": None, "profiles_dir": None, "profile_overrides": {}}
    out.update(extra)
    return out


def test_floor_from_inventory_or_the_profile():
    assert ActionModule._floor(args(floor=350)) == 350
    assert ActionModule._floor(args(profile="h200")) == 360
    assert ActionModule._floor(args(profile="h200", profile_overrides={"ib_write_bw_floor_gbps": 370})) == 370
    with pytest.raises(ValueError, match="^profile l40s has no ib_write_bw_floor_gbps; set zhisuan_thresholds.rdma.floor_gbps$"):
        ActionModule._floor(args(profile="l40s"))
    with pytest.raises(ValueError, match="^no floor: set zhisuan_thresholds.rdma.floor_gbps"):
        ActionModule._floor(args())
    with pytest.raises(ValueError, match="^a latency test needs a ceiling: set zhisuan_thresholds.rdma.ceiling_us$"):
        ActionModule._floor(args(profile="h200", test="ib_write_lat"))
    with pytest.raises(ValueError, match="^unknown GPU profile 'x100'"):
        ActionModule._floor(args(profile="x100"))


def test_no_floor_is_one_error_check_and_the_matrix_is_kept():
    pairs = merge_sides({"a": [side("a", "server")], "b": [side("b", "client")]})
    out = ActionModule._unjudged(args(test="ib_write_bw", unit="Gb/s", schedule="full_mesh", rounds=1), ["a", "b"], pairs,
                                 "no floor: set zhisuan_thresholds.rdma.floor_gbps")
    assert [(c["id"], c["host"], c["status"], c["remedy"]) for c in out["cluster_checks"]] == [
        ("rdma.pairs.floor", "cluster", "error", "investigate")]
    assert out["cluster_checks"][0]["message"] == \
        "The 1 measured pairs were not judged: no floor: set zhisuan_thresholds.rdma.floor_gbps"
    assert out["host_checks"] == {} and out["suspects"] == []
    assert out["cluster_data"]["fabric"]["rdma_pairs"]["pairs"] == [
        {"a": "a", "b": "b", "round": 1, "value": 201.802, "status": "skip"}]
