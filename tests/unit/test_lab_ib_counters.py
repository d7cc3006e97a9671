# SPDX-License-Identifier: GPL-3.0-or-later
"""The lab's InfiniBand counters (lab/sim/ib_counters_sysfs.py, issue 24 item 5): the real counters of procfs' test
tree on every CA of the lab's ibstat capture, read back by the collection's own sysfs reader; the ticker grows a
faulted counter; labctl refuses the sim without a network and a fault it cannot place."""

from __future__ import annotations

import json
import os
import sys

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._net import ib_counters

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
sys.path.insert(0, os.path.join(REPO, "lab", "sim"))
try:
    import ib_counters_sysfs as sim  # noqa: E402  pylint: disable=wrong-import-position
    from _common import LabError  # noqa: E402  pylint: disable=wrong-import-position
finally:
    sys.path.remove(os.path.join(REPO, "lab", "sim"))

GROW = {"kind": "ib_counter_growth", "device": "mlx5_1", "counter": "symbol_error", "per_second": 2.0}


def test_every_ca_gets_the_captures_counters(tmp_path):
    sim.write_root(str(tmp_path), [])
    read = ib_counters.read_counters(str(tmp_path))
    assert sorted(read) == sorted(sim.devices()) and "mlx5_0" in read and "mlx5_bond_0" in read
    capture = sim.capture_counters()
    assert read["mlx5_4"][1] == dict((name, capture[name]) for name in ib_counters.ERROR_COUNTERS)


def test_growth_is_per_second_times_the_time_and_the_ticker_writes_it(tmp_path):
    assert sim.files_of([GROW], elapsed=10.0)[("mlx5_1", "symbol_error")] == sim.capture_counters()["symbol_error"] + 20
    root = tmp_path / "root"
    sim.write_root(str(root), [GROW])
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"node": "n02", "index": 2, "gpus": 8, "faults": [GROW]}))
    (tmp_path / sim.TICKER_JSON).write_text(json.dumps([{"root": str(root), "state": str(state)}]))
    before = ib_counters.read_counters(str(root))
    sim.tick(str(tmp_path), rounds=3)  # three rounds, TICK_S apart: about a second
    after = ib_counters.read_counters(str(root))
    deltas = ib_counters.counter_deltas(before, after, 1)
    assert deltas["mlx5_1"][1]["deltas"]["symbol_error"] >= 2
    assert deltas["mlx5_0"][1]["deltas"]["symbol_error"] == 0 and deltas["mlx5_1"][1]["deltas"]["link_downed"] == 0


@pytest.mark.parametrize("fault,message", [
    (dict(GROW, device="mlx5_2"), "device 'mlx5_2' is not a CA of the lab's ibstat capture"),
    (dict(GROW, counter="symbol_errors"), "counter 'symbol_errors' is not one of"),
    (dict(GROW, per_second=0), "per_second must be > 0"),
])
def test_a_fault_the_lab_cannot_place_is_refused(fault, message):
    with pytest.raises(LabError, match=message):
        sim.check_fault(fault, {"gpus": 8})
