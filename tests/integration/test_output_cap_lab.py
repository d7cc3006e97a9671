# SPDX-License-Identifier: GPL-3.0-or-later
"""A lab node whose nvidia-smi prints without end (the lab's `flood` fault): the inspection stops it at its output
cap, records the typed error as the gpu family's ``error`` check in results.json, and the other node is judged as
usual (issue 25 item 5)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._runner import MAX_OUTPUT_MIB
from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import validate

from .conftest import REPO, run_playbook, start_lab

@pytest.fixture(scope="module")
def inspected(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("flood")
    inventory = start_lab(tmp_path, "default.yml", nodes=2)
    try:
        subprocess.run([sys.executable, os.path.join(REPO, "lab", "labctl.py"), "fault", "--dir", str(tmp_path / "lab"),
                        "node01", "add", "flood", "tool=nvidia-smi"], check=True, capture_output=True, timeout=60)
        runner, dummy = run_playbook(tmp_path, "inspect.yml", inventory, limit="node01,node02",
                                     extravars={"zhisuan_run_id": "flood-1", "zhisuan_families": ["gpu"]})
        assert runner.rc == 0, runner.stdout.read()
        yield json.loads((tmp_path / "out" / "flood-1" / "results.json").read_text())
    finally:
        subprocess.run([sys.executable, os.path.join(REPO, "lab", "labctl.py"), "down", "--dir", str(tmp_path / "lab")],
                       capture_output=True, timeout=60)


def test_the_endless_tool_is_the_gpu_familys_typed_error_check(inspected):
    assert validate(inspected) == []
    assert inspected["run"]["families"] == ["gpu"]
    checks = inspected["hosts"]["node01"]["checks"]
    errors = [check for check in checks if check["status"] == "error"]
    assert [(check["id"], check["observed"]) for check in errors] == [("gpu.collect.nvidia_smi", "output too large")]
    assert errors[0]["message"].startswith("nvidia-smi: output over %d MiB (process group killed)"
                                           % MAX_OUTPUT_MIB["nvidia-smi"])
    assert "cmd: " in errors[0]["evidence"] and "-q -x" in errors[0]["evidence"]
    assert inspected["hosts"]["node01"]["status"] == "error"


def test_the_other_node_is_judged_as_usual(inspected):
    other = inspected["hosts"]["node02"]
    ids = [check["id"] for check in other["checks"]]
    assert "gpu.collect.nvidia_smi" not in ids and any(i.startswith("gpu.ecc.") for i in ids)
    assert not [check for check in other["checks"] if check["status"] == "error"]
