# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The node's Python against the controller's ansible-core (issue 27 item 2; plugin_utils/_preflight.py), and the
probe itself run by this machine's own Python."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ansible_collections.zhisuan.ops.plugins.plugin_utils._preflight import (
    NODE_PYTHON_PROBE,
    node_python_minimum,
    node_python_problem,
    parse_python_version,
)


@pytest.mark.parametrize("ansible, minimum", [
    ("2.16.14", (3, 6)), ("2.17.7", (3, 7)), ("2.18.3", (3, 8)), ("2.19.4", (3, 8)),
    # a newer line than the table knows: the newest known minimum; an older one: never below the collection's 3.6
    ("2.21.0", (3, 8)), ("2.15.13", (3, 6)), ("2.19.0rc1", (3, 8)),
])
def test_the_minimum_node_python_of_each_ansible_core_line(ansible, minimum):
    assert node_python_minimum(ansible) == minimum


def test_a_too_old_python_is_named_with_its_fix():
    message = node_python_problem("3.6.8\n", "2.19.4", "/usr/libexec/platform-python")
    assert message.startswith("the node's Python 3.6.8 (/usr/libexec/platform-python) is older than ansible-core "
                              "2.19.4 runs modules with (Python 3.8 or newer on the node)")
    assert "set ansible_python_interpreter for this node to a Python 3.8+" in message
    assert node_python_problem("3.7.17", "2.17.7", "python3") is None  # 2.17 runs 3.7
    assert "older than ansible-core 2.17.7" in node_python_problem("3.6.15", "2.17.7", "python3")
    assert node_python_problem("3.10.12", "2.19.4", "python3") is None
    # Python 2 on the node: the same message
    assert node_python_problem("2.7.18", "2.16.14", "/usr/bin/python") .startswith("the node's Python 2.7.18")


def test_an_unreadable_probe_is_no_finding():
    assert parse_python_version("") is None and parse_python_version("Python 3.6.8") is None
    assert parse_python_version("warning: x\n3.9.18\n") == (3, 9, 18)
    assert node_python_problem("bash: python3: command not found", "2.19.4", "python3") is None


def test_the_probe_is_what_a_real_python_answers():
    out = subprocess.run([sys.executable, "-c", NODE_PYTHON_PROBE], capture_output=True, text=True, timeout=30,
                         check=True).stdout
    assert parse_python_version(out) == tuple(sys.version_info[:3])
