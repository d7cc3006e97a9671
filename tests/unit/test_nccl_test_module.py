# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""zhisuan.ops.nccl_test as Ansible runs it, with real programs behind the seam: the lab's nccl-tests/mpirun
simulator (the real captures, value-edited) and shell scripts that fail like nccl-tests and mpirun do."""

from __future__ import annotations

import json
import os
import stat
import sys

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.zhisuan.ops.plugins.modules import nccl_test

pytestmark = pytest.mark.usefixtures("as_node")

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
SIM = os.path.join(REPO, "lab", "sim", "nccl_tests.py")


def _program(path, body):
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def _lab(tmp_path, faults_by_node):
    """A lab directory: <lab>/nodes/<node>/state.json and a logging wrapper per tool for the first node."""
    wrappers = {}
    for index, (node, faults) in enumerate(faults_by_node.items(), start=1):
        base = tmp_path / "lab" / "nodes" / node
        base.mkdir(parents=True)
        (base / "state.json").write_text(json.dumps({"schema": 1, "node": node, "index": index, "model": "a100",
                                                     "capture": "unused", "gpus": 8, "faults": faults}))
        if index == 1:
            for tool in ("all_reduce_perf", "mpirun"):
                wrappers[tool] = _program(tmp_path / tool, 'echo "$@" >> %s\nexec %s -I -S %s --state %s "$@"\n' % (
                    tmp_path / "calls", sys.executable, SIM, base / "state.json"))
    return wrappers


def _run(args, capsys):
    with patch_module_args(args):
        with pytest.raises(SystemExit) as info:
            nccl_test.main()
    return info.value.code, json.loads(capsys.readouterr().out)


def test_single_node(tmp_path, capsys):
    tools = _lab(tmp_path, {"node01": []})
    code, out = _run({"nccl_tests_path": tools["all_reduce_perf"], "max_bytes": "8G", "min_bytes": "1G"}, capsys)
    assert code == 0, out
    facts = out["nccl"]
    assert facts["op"] == "all_reduce_perf" and facts["nodes"] == ["node01"] and len(facts["devices"]) == 8
    assert [point["bytes"] for point in facts["points"]] == [2 ** 30, 2 ** 31, 2 ** 32, 2 ** 33]
    assert facts["points"][-1]["out_of_place"]["busbw"] == 235.26
    assert facts["params"]["validation"] == 1 and facts["out_of_bounds"] == 0
    assert (tmp_path / "calls").read_text() == "-b 1G -e 8G -f 2 -g 8 -c 1 -n 20\n"


def test_multi_node_through_mpirun_is_as_slow_as_its_slowest_node(tmp_path, capsys):
    tools = _lab(tmp_path, {"node01": [], "node02": [{"kind": "nccl_slow", "factor": 0.5}], "node03": []})
    code, out = _run({"nccl_tests_path": "/opt/nccl-tests/build/all_reduce_perf", "mpirun_path": tools["mpirun"],
                      "hosts": ["node01", "node02", "node03"], "min_bytes": "8G", "env": {"NCCL_IB_HCA": "mlx5"},
                      "mpirun_args": ["--allow-run-as-root"], "warmup_iters": 2}, capsys)
    assert code == 0, out
    facts = out["nccl"]
    assert facts["nodes"] == ["node01", "node02", "node03"] and facts["hosts_printed"] == facts["nodes"]
    assert len(facts["devices"]) == 24 and facts["devices"][9]["host"] == "node02"
    assert facts["points"][-1]["out_of_place"]["busbw"] == 117.63
    call = (tmp_path / "calls").read_text().split()
    assert call[:2] == ["--hostfile"] + call[1:2] and call[2:] == [
        "-np", "24", "-x", "NCCL_IB_HCA=mlx5", "--allow-run-as-root", "/opt/nccl-tests/build/all_reduce_perf",
        "-b", "8G", "-e", "8G", "-f", "2", "-g", "1", "-c", "1", "-n", "20", "-w", "2"]
    # the hostfile lived in a private temporary directory, removed after the run
    assert not os.path.exists(call[1])


def test_nccl_failure(tmp_path, capsys):
    prog = _program(tmp_path / "all_reduce_perf", "echo \"node07: Test NCCL failure common.cu:958 'unhandled system error'\"\n"
                    "echo ' .. node07 pid 4242: Test failure common.cu:842'\nexit 2\n")
    code, out = _run({"nccl_tests_path": prog}, capsys)
    assert code == 1 and out["failed"]
    assert out["msg"] == ("nccl-tests: all_reduce_perf exited with rc 2: Test NCCL failure on node07 at common.cu:958: "
                          "'unhandled system error'")
    assert out["error_kind"] == "failed" and out["rc"] == 2


def test_mpirun_failure(tmp_path, capsys):
    prog = _program(tmp_path / "mpirun", "echo 'mpirun was unable to launch the specified application as it could not "
                    "access' >&2\nexit 1\n")
    code, out = _run({"mpirun_path": prog, "hosts": ["a", "b"]}, capsys)
    assert out["msg"] == ("mpirun: all_reduce_perf exited with rc 1: mpirun: mpirun was unable to launch the specified "
                          "application as it could not access")


def test_garbage_is_a_parse_error(tmp_path, capsys):
    prog = _program(tmp_path / "all_gather_perf", "echo hello\n")
    code, out = _run({"nccl_tests_path": prog, "op": "all_gather_perf"}, capsys)
    assert out["error_kind"] == "unparsable"
    assert out["msg"] == ("nccl-tests: all_gather_perf: no result table (no '#  size count type … busbw' header) "
                          "in the output")


def test_timeout_kills(tmp_path, capsys):
    prog = _program(tmp_path / "all_reduce_perf", "sleep 30\n")
    code, out = _run({"nccl_tests_path": prog, "timeout": 1}, capsys)
    assert out["error_kind"] == "timed_out" and out["msg"] == "nccl-tests: timed out after 1 s (process group killed)"


@pytest.mark.parametrize("args, msg", [
    ({"max_bytes": "8 GB"}, "max_bytes must be a byte count with an optional K, M or G suffix (e.g. 8G), got '8 GB'"),
    ({"hosts": ["a", "a"]}, "hosts lists a node twice: a, a"),
    ({"hosts": ["a", "b;rm"]}, "host 'b;rm' is not a host name or address"),
    ({"env": {"BAD NAME": "1"}}, "env: 'BAD NAME' is not an environment variable name"),
    ({"gpus_per_node": 0}, "gpus_per_node must be at least 1, got 0"),
])
def test_bad_arguments(args, msg, capsys):
    code, out = _run(args, capsys)
    assert out["failed"] and out["msg"] == msg
