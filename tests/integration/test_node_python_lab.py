# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A node whose Python is older than the controller's ansible-core runs modules with (issue 27 item 2): its checks
say so - the interpreter, its version, the minimum and the fix - never a bare MODULE FAILURE, and the other nodes
run as usual.

No Python older than 3.8 can be installed on this machine (Debian 12 ships 3.11; PyPI and apt carry no older
interpreter), so node02's interpreter is a stand-in script: it answers a version probe as RHEL 8's platform Python
3.6.8 does, and fails a module with the SyntaxError Python 3.6 gives on ansible-core 2.19's module_utils. What is
under test is the product's side: the check action's probe after a module failure, and the message.

Run ``flock /work/lab.lock timeout 900 .venv/bin/python -m pytest -q tests/integration/test_node_python_lab.py``."""

from __future__ import annotations

import os
import stat

import yaml

from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import validate

from .conftest import run_playbook, start_lab, stop_lab

OLD_PYTHON = """#!/bin/sh
# stand-in for RHEL 8's /usr/libexec/platform-python (Python 3.6.8): the version probe, and a module it cannot parse
case "$*" in
  *version_info*) echo 3.6.8; exit 0 ;;
esac
cat > /dev/null
echo '  File "/tmp/ansible_zhisuan.ops.node_collect_payload.zip/ansible/module_utils/basic.py", line 5' >&2
echo '    from __future__ import annotations' >&2
echo 'SyntaxError: future feature annotations is not defined' >&2
exit 1
"""


def test_a_node_with_a_too_old_python_is_named_with_the_fix(tmp_path):
    inventory = start_lab(tmp_path, "default.yml", nodes=2)
    try:
        python = tmp_path / "python3.6"
        python.write_text(OLD_PYTHON)
        python.chmod(python.stat().st_mode | stat.S_IXUSR)
        with open(inventory) as handle:
            data = yaml.safe_load(handle)
        hosts = data["all"]["children"]["gpu_nodes"]["hosts"]
        hosts["node02"]["ansible_python_interpreter"] = str(python)
        with open(inventory, "w") as handle:
            yaml.safe_dump(data, handle)
        runner, document = run_playbook(tmp_path, "acceptance.yml", inventory, tags="gpu,xid")
    finally:
        stop_lab(tmp_path)
    stdout = runner.stdout.read()
    assert runner.rc == 0, stdout[-4000:]
    assert validate(document) == []
    assert document["hosts"]["node01"]["status"] == "pass"
    old = document["hosts"]["node02"]
    assert old["status"] == "error"
    errors = [c for c in old["checks"] if c["status"] == "error"]
    assert errors and all(c["observed"] == "unsupported python" for c in errors), errors
    for check in errors:
        assert check["message"].startswith("the node's Python 3.6.8 (%s) is older than ansible-core 2." % python)
        assert "(Python 3.8 or newer on the node): set ansible_python_interpreter" in check["message"]
        assert "MODULE FAILURE" not in check["message"]
    assert sorted(c["id"].split(".")[0] for c in errors) == ["gpu", "xid"]
    assert os.path.exists(python)
