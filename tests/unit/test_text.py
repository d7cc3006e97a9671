# SPDX-License-Identifier: GPL-3.0-or-later
"""natural_key: the one natural sort order of host, GPU and port names."""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._text import natural_key


def test_numbers_inside_names_sort_by_value():
    names = ["node10", "node2", "node1", "gpu-b2", "gpu-a10", "gpu-a9", "node02"]
    assert sorted(names, key=natural_key) == ["gpu-a9", "gpu-a10", "gpu-b2", "node1", "node2", "node02", "node10"]


def test_mixed_kinds_and_non_ascii_digits_do_not_raise():
    names = ["10", "a", "1a", "a1", "x\u00b2", "x2", "", None, 3]
    ordered = sorted(names, key=natural_key)
    assert ordered == ["", "1a", 3, "10", None, "a", "a1", "x2", "x\u00b2"]
