# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""InfiniBand / RoCE port error counters as growth over a window (issue 24 item 5): sysfs read from the real
``/sys/class/infiniband`` tree of prometheus/procfs' test fixtures (ib/sysfs-infiniband-procfs-fixtures.ttar,
hfi1_0, mlx4_0 ports 1-2, mlx5_0), the second reading made by editing counter files of that tree."""

from __future__ import annotations

import os

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._judge import _rdma
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._ib_counters import port_error_checks
from ansible_collections.zhisuan.ops.plugins.module_utils._net import ib, ib_counters

TTAR = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "ib", "sysfs-infiniband-procfs-fixtures.ttar")


def unpack(root):
    """Write the ttar excerpt's files under ``root`` (``Path:`` / ``Lines: n`` / n lines / ``Mode:``)."""
    with open(TTAR, encoding="utf-8") as handle:
        lines = handle.read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("Directory: "):
            os.makedirs(os.path.join(root, line[len("Directory: "):][len("fixtures/"):]), exist_ok=True)
        elif line.startswith("Path: "):
            count = int(lines[i + 1].split(": ")[1])
            path = os.path.join(root, line[len("Path: "):][len("fixtures/"):])
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as out:
                out.write("".join(text + "\n" for text in lines[i + 2:i + 2 + count]))
            i += 1 + count
        i += 1
    return root


def bump(root, dev, port, counter, by):
    path = os.path.join(root, "sys", "class", "infiniband", dev, "ports", str(port), "counters", counter)
    with open(path, encoding="utf-8") as handle:
        value = int(handle.read())
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("%d\n" % (value + by))


@pytest.fixture()
def tree(tmp_path):
    return unpack(str(tmp_path))


def test_the_real_tree_reads_every_port(tree):
    counters = ib_counters.read_counters(tree)
    assert sorted((dev, port) for dev, ports in counters.items() for port in ports) == [
        ("hfi1_0", 1), ("mlx4_0", 1), ("mlx4_0", 2), ("mlx5_0", 1)]
    assert set(counters["mlx4_0"][1]) == set(ib_counters.ERROR_COUNTERS)
    assert counters["mlx4_0"][1]["symbol_error"] == 0 and counters["mlx4_0"][1]["link_downed"] == 0
    # the same tree is what the rdma family's port state reader sees
    assert sorted(ib.read_sysfs(tree)["devices"]) == ["hfi1_0", "mlx4_0", "mlx5_0"]


def judged(tree, edits, window=60, thresholds=None):
    before = ib_counters.read_counters(tree)
    for dev, port, counter, by in edits:
        bump(tree, dev, port, counter, by)
    warnings = []
    delta = ib_counters.counter_deltas(before, ib_counters.read_counters(tree), window, warn=warnings.append)
    checks = port_error_checks("node07", delta, thresholds)
    return [(c["component"], c["status"], c["remedy"]) for c in checks], checks, warnings


def test_no_growth_passes(tree):
    brief, dummy, warnings = judged(tree, [])
    assert brief == [("hfi1_0 port 1", "pass", "none"), ("mlx4_0 port 1", "pass", "none"),
                     ("mlx4_0 port 2", "pass", "none"), ("mlx5_0 port 1", "pass", "none")]
    assert warnings == []


@pytest.mark.parametrize("counter, remedy", [("link_downed", "check_cable"),
                                             ("local_link_integrity_errors", "check_cable"),
                                             ("excessive_buffer_overrun_errors", "investigate")])
def test_any_growth_of_a_fatal_counter_fails(tree, counter, remedy):
    brief, checks, dummy = judged(tree, [("mlx4_0", 2, counter, 1)])
    assert brief[2] == ("mlx4_0 port 2", "fail", remedy)
    assert checks[2]["observed"] == "%s +1" % counter
    assert [c[1] for c in brief[:2]] == ["pass", "pass"]


def test_symbol_errors_fail_above_120_an_hour_and_warn_below(tree):
    # 60 s window: 120/h allows 2; 3 fail, 2 warn
    brief, checks, dummy = judged(tree, [("mlx4_0", 1, "symbol_error", 3)])
    assert brief[1] == ("mlx4_0 port 1", "fail", "check_cable")
    assert "180 an hour, more than 120" in checks[1]["message"]
    brief, checks, dummy = judged(tree, [("mlx4_0", 1, "symbol_error", 2)])
    assert brief[1] == ("mlx4_0 port 1", "warn", "monitor")
    # a site's own figure
    brief, dummy, dummy = judged(tree, [("mlx4_0", 1, "symbol_error", 3)],
                                 thresholds={"ib_symbol_error_per_hour_max": 600})
    assert brief[1] == ("mlx4_0 port 1", "warn", "monitor")


def test_link_error_recovery_warns(tree):
    brief, checks, dummy = judged(tree, [("hfi1_0", 1, "link_error_recovery", 1)])
    assert brief[0] == ("hfi1_0 port 1", "warn", "monitor")
    assert "1 link error recoveries" in checks[0]["message"]


def test_a_counter_that_went_down_is_unknown_not_a_fault(tree):
    bump(tree, "mlx4_0", 1, "symbol_error", 50)
    before = ib_counters.read_counters(tree)
    bump(tree, "mlx4_0", 1, "symbol_error", -50)  # cleared with perfquery -x between the readings
    warnings = []
    delta = ib_counters.counter_deltas(before, ib_counters.read_counters(tree), 60, warn=warnings.append)
    assert delta["mlx4_0"][1]["deltas"]["symbol_error"] is None
    assert warnings == ["mlx4_0 port 1: symbol_error went down from 50 to 0 between the readings (reset or wrapped); "
                        "its growth is unknown"]
    check = port_error_checks("node07", delta)[1]
    assert check["status"] == "pass" and "symbol_error +?" in check["evidence"]


def test_a_damaged_counter_file_reads_as_unknown(tree):
    path = os.path.join(tree, "sys", "class", "infiniband", "mlx4_0", "ports", "1", "counters", "link_downed")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("N/A\n")
    assert ib_counters.read_counters(tree)["mlx4_0"][1]["link_downed"] is None
    assert ib_counters.parse_counter("18446744073709551615") == 18446744073709551615
    assert ib_counters.parse_counter("1e3") is None


def test_the_rdma_family_adds_one_errors_check_per_port_after_the_port_checks(tree):
    facts = ib.read_sysfs(tree)
    before = ib_counters.read_counters(tree)
    bump(tree, "mlx4_0", 2, "link_downed", 2)
    facts["counters_delta"] = ib_counters.counter_deltas(before, ib_counters.read_counters(tree), 5)
    checks = _rdma.judge_rdma_ports("node07", facts)
    errors = [(c["component"], c["status"], c["remedy"]) for c in checks if c["id"] == "rdma.port.errors"]
    assert errors == [("hfi1_0 port 1", "pass", "none"), ("mlx4_0 port 1", "pass", "none"),
                      ("mlx4_0 port 2", "fail", "check_cable"), ("mlx5_0 port 1", "pass", "none")]
    assert checks[-1]["id"] == "rdma.port.errors"
    # without a second reading there is no such check
    del facts["counters_delta"]
    assert not [c for c in _rdma.judge_rdma_ports("node07", facts) if c["id"] == "rdma.port.errors"]
