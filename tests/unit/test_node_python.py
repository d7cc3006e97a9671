# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The node-side files keep to Python 3.6 (tests/node_python.py): the static check is the gate, the compile with
each interpreter found here backs it (skipped, with the reason, where that Python is not installed)."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir))
import node_python  # noqa: E402  (tests/node_python.py)

COLL = node_python.COLL


def _rel(path):
    return os.path.relpath(path, COLL)


def test_node_side_files_keep_to_python_36():
    problems = node_python.static_check()
    assert problems == [], "node-side code needs a newer Python than 3.6:\n" + "\n".join(problems)


def test_node_side_files_are_the_modules_and_what_they_import():
    files = [_rel(path) for path in node_python.node_side_files()]
    modules = sorted(name for name in os.listdir(os.path.join(COLL, "plugins", "modules")) if name.endswith(".py"))
    assert [name for name in files if name.startswith("plugins/modules/")] == ["plugins/modules/" + m for m in modules]
    # imported by modules, directly or through another module_utils file, and the packages on the way
    for expected in ("plugins/module_utils/_safe_parse.py", "plugins/module_utils/_runner.py",
                     "plugins/module_utils/_redfish/vendors/__init__.py", "plugins/module_utils/_sched/__init__.py"):
        assert expected in files
    # the judges run in action plugins on the controller: not shipped to nodes
    assert not [name for name in files if name.startswith("plugins/module_utils/_judge/")]
    assert not [name for name in files if name.startswith(("plugins/action/", "plugins/plugin_utils/"))]


@pytest.mark.parametrize("source,line,feature", [
    ("from __future__ import annotations\n", 1, "from __future__ import annotations"),
    ("import os\nfrom dataclasses import dataclass\n", 2, "module dataclasses"),
    ("import importlib.metadata\n", 1, "module importlib.metadata"),
    ("def f(items):\n    if (n := len(items)) > 1:\n        return n\n", 2, "assignment expression (:="),
    ("def f(a, /, b):\n    return a\n", 1, "positional-only parameters"),
    ("def f(a: list[str]):\n    return a\n", 1, "builtin generic list[...]"),
    ("def f(a) -> 'str' | None:\n    return a\n", 1, "X | Y union in an annotation"),
    ("Rows = dict[str, int]\n", 1, "builtin generic dict[...]"),
    ("def f(text):\n    return text.removeprefix('x')\n", 2, "str.removeprefix()"),
    ("def f(text):\n    return text.isascii()\n", 2, "str.isascii()"),
    ("import datetime\nx = datetime.datetime.fromisoformat('2024-01-01')\n", 2, "datetime.fromisoformat()"),
    ("import math\nx = math.prod([1, 2])\n", 2, "math.prod()"),
    ("import shlex\nx = shlex.join(['a'])\n", 2, "shlex.join"),
    ("import functools\n@functools.cache\ndef f():\n    pass\n", 2, "functools.cache"),
    ("from typing import Literal\n", 1, "typing.Literal"),
    ("import subprocess\nsubprocess.run(['ls'],\n    capture_output=True)\n", 3, "subprocess capture_output="),
    ("import subprocess\nsubprocess.run(['ls'], text=True)\n", 2, "subprocess text="),
    ("match = 1\nmatch match:\n    case 1:\n        pass\n", 2, "match statement"),
    ("x = list(zip([1], [2], strict=True))\n", 1, "zip(strict=)"),
    ("import yaml\n", 1, "import of yaml, not in the standard library"),
])
def test_static_check_names_file_line_and_feature(tmp_path, source, line, feature):
    path = tmp_path / "node_file.py"
    path.write_text(source, encoding="utf-8")
    problems = node_python.static_check([str(path)])
    assert len(problems) == 1, problems
    assert problems[0].startswith("%s:%d: %s" % (path, line, feature))


@pytest.mark.parametrize("source", [
    "from __future__ import absolute_import, division, print_function\n",
    "import json\nimport subprocess\nsubprocess.run(['ls'], universal_newlines=True, timeout=5)\n",
    "from typing import List, Optional\n\ndef f(a: List[str]) -> Optional[str]:\n    return a[0] if a else None\n",
    "def f():\n    import yaml\n    return yaml\n",
    "try:\n    import pynvml\nexcept ImportError:\n    pynvml = None\n",
    "text = 'a'\nok = text.startswith('x')\n",
    "from ansible.module_utils.basic import AnsibleModule\n",
])
def test_static_check_passes_what_python_36_runs(tmp_path, source):
    path = tmp_path / "node_file.py"
    path.write_text(source, encoding="utf-8")
    assert node_python.static_check([str(path)]) == []


@pytest.mark.parametrize("version", node_python.COMPILE_VERSIONS)
def test_node_side_files_compile_with_each_python(version):
    python = node_python.find_interpreter(version)
    if python is None:
        pytest.skip("python%s is not installed here (PATH, pyenv): the static check stands for it" % version)
    ok, output = node_python.compile_with(python)
    assert ok, "python%s cannot compile the node-side files:\n%s" % (version, output)


def test_compile_names_the_file_and_line_python_36_refuses(tmp_path):
    python = node_python.find_interpreter("3.6")
    if python is None:
        pytest.skip("python3.6 is not installed here (PATH, pyenv)")
    path = tmp_path / "walrus.py"
    path.write_text("x = 1\nif (y := x):\n    pass\n", encoding="utf-8")
    ok, output = node_python.compile_with(python, [str(path)])
    assert not ok
    assert "walrus.py:2: invalid syntax" in output
