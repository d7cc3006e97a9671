# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""zhisuan.ops.gpu_burn as Ansible runs it: arguments in, exit_json/fail_json out, with real programs behind the
seam (shell scripts that print the real capture, fail the way gpu_burn fails, or hang)."""

from __future__ import annotations

import json
import os
import stat

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import burn_collect
from ansible_collections.zhisuan.ops.plugins.modules import gpu_burn

pytestmark = pytest.mark.usefixtures("as_node")

CAPTURE = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "gpu-burn",
                                       "gpu-burn-8xA100-80GB-all-OK.log"))


def _program(directory, body):
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "gpu_burn"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def _run(args, capsys):
    with patch_module_args(args):
        with pytest.raises(SystemExit) as info:
            gpu_burn.main()
    out = json.loads(capsys.readouterr().out)
    return info.value.code, out


def test_runs_gpu_burn_with_its_flags_in_its_directory(tmp_path, capsys):
    calls = tmp_path / "calls"
    prog = _program(tmp_path / "opt", 'echo "$(pwd) $*" >> %s\ncat %s\n' % (calls, CAPTURE))
    here = os.getcwd()
    code, out = _run({"gpu_burn_path": prog, "duration": 60, "doubles": True, "tensor_cores": True}, capsys)
    assert code == 0, out
    assert os.getcwd() == here
    assert calls.read_text() == "%s -d -tc 60\n" % (tmp_path / "opt")
    assert out["changed"] is False
    burn = out["burn"]
    assert (burn["duration_s"], burn["cmd"], burn["workdir"]) == (60, [prog, "-d", "-tc", "60"], str(tmp_path / "opt"))
    assert (burn["doubles"], burn["tensor_cores"], burn["tested_gpus"]) == (True, True, 8)
    assert isinstance(burn["elapsed_s"], float)
    first = burn["gpus"][0]
    assert (first["index"], first["gflops_final"], first["gflops_median"], first["gflops_samples"], first["errors"],
            first["verdict"]) == (0, 16942, 16990.5, [7150, 17039, 16942], 0, "OK")


def test_single_precision_and_a_workdir(tmp_path, capsys):
    calls = tmp_path / "calls"
    workdir = tmp_path / "kernels"
    workdir.mkdir()
    prog = _program(tmp_path / "bin", 'echo "$(pwd) $*" >> %s\ncat %s\n' % (calls, CAPTURE))
    code, out = _run({"gpu_burn_path": prog, "duration": 5, "workdir": str(workdir)}, capsys)
    assert code == 0, out
    assert calls.read_text() == "%s 5\n" % workdir
    # The captured run was -d -tc and its workers say so: the facts report what ran, not what was asked.
    assert (out["burn"]["doubles"], out["burn"]["tensor_cores"]) == (True, True)


def test_default_timeout_is_duration_plus_margin():
    assert burn_collect.default_timeout(900) == 1020


def test_runs_in_the_programs_directory_with_the_duration_last(tmp_path):
    calls = tmp_path / "calls"
    prog = _program(tmp_path, 'echo "$(pwd) $@" > %s\ncat %s\n' % (calls, CAPTURE))
    facts = burn_collect.run_burn(prog, 900)
    assert calls.read_text() == "%s 900\n" % tmp_path
    assert len(facts["gpus"]) == 8


def test_hang_is_killed_and_reported(tmp_path, capsys):
    prog = _program(tmp_path, "sleep 60\n")
    code, out = _run({"gpu_burn_path": prog, "duration": 1, "timeout": 1}, capsys)
    assert code == 1
    assert out["error_kind"] == "timed_out"
    assert out["msg"] == "gpu_burn: timed out after 1 s (process group killed)"
    assert out["cmd"] == [prog, "1"]


def test_no_cuda_device_fails_with_gpu_burns_reason(tmp_path, capsys):
    prog = _program(tmp_path, "echo 'GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-b876c63f-396c-f826-5cd0-6b8409990352)'\n"
                              "echo \"Couldn't init CUDA: Error (gpu_burn-drv.cpp:385): no CUDA-capable device is "
                              "detected\" >&2\necho 'No CUDA devices' >&2\nexit 19\n")
    code, out = _run({"gpu_burn_path": prog, "duration": 10}, capsys)
    assert code == 1
    assert (out["error_kind"], out["tool"], out["rc"]) == ("failed", "gpu_burn", 19)
    assert out["msg"] == ("gpu_burn: exited with rc 19: Couldn't init CUDA: Error (gpu_burn-drv.cpp:385): "
                          "no CUDA-capable device is detected")
    assert out["cmd"] == [prog, "10"]


def test_truncated_output_is_unparsable_with_the_command(tmp_path, capsys):
    prog = _program(tmp_path, "head -c 30000 %s\n" % CAPTURE)
    code, out = _run({"gpu_burn_path": prog, "duration": 10}, capsys)
    assert code == 1
    assert out["error_kind"] == "unparsable"
    assert out["msg"] == ("gpu_burn: output is truncated: 112 progress records (last at 100 %) but no "
                          "'Tested N GPUs' summary")
    assert (out["cmd"], out["rc"]) == ([prog, "10"], 0)
    assert out["stdout"].startswith("[... 28000 characters before]\n")


def test_missing_program_and_workdir(tmp_path, capsys):
    code, out = _run({"gpu_burn_path": str(tmp_path / "none"), "duration": 10}, capsys)
    assert (code, out["error_kind"], out["msg"]) == (1, "not_found", "gpu_burn: not found at %s" % (tmp_path / "none"))
    prog = _program(tmp_path, "exit 0\n")
    code, out = _run({"gpu_burn_path": prog, "duration": 10, "workdir": str(tmp_path / "nowhere")}, capsys)
    assert (code, out["error_kind"]) == (1, "not_found")
    assert out["msg"] == ("gpu_burn: working directory %s does not exist (gpu_burn needs its compare kernel there)"
                          % (tmp_path / "nowhere"))


def test_check_mode_does_not_run(tmp_path, capsys):
    calls = tmp_path / "calls"
    prog = _program(tmp_path, "echo ran >> %s\n" % calls)
    code, out = _run({"gpu_burn_path": prog, "duration": 10, "_ansible_check_mode": True}, capsys)
    assert code == 0
    assert out["skipped"] is True
    assert "does not support check mode" in out["msg"]
    assert not calls.exists()


@pytest.mark.parametrize("args, message", [
    ({"duration": 0}, "duration must be a positive number of seconds, got 0"),
    ({"duration": 10, "timeout": 0}, "timeout must be a positive number of seconds, got 0"),
])
def test_bad_numbers(args, message, capsys):
    code, out = _run(args, capsys)
    assert (code, out["msg"]) == (1, message)
