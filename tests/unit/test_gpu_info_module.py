# SPDX-License-Identifier: GPL-3.0-or-later
"""zhisuan.ops.gpu_info as Ansible runs it: arguments in, exit_json/fail_json out, with real programs behind the
seam (shell scripts that print a real capture, fail like a node without a driver, or hang)."""

from __future__ import annotations

import json
import os
import stat

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.zhisuan.ops.plugins.modules import gpu_info

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "nvidia-smi")


def _program(tmp_path, body):
    path = tmp_path / "nvidia-smi"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def _run(args, capsys):
    with patch_module_args(args):
        with pytest.raises(SystemExit) as info:
            gpu_info.main()
    out = json.loads(capsys.readouterr().out)
    return info.value.code, out


def test_runs_nvidia_smi_xml_once(tmp_path, capsys):
    calls = tmp_path / "calls"
    capture = os.path.join(FIXTURES, "q-x-tesla-t4-515.xml")
    prog = _program(tmp_path, 'echo "$@" >> %s\ncat %s\n' % (calls, capture))
    code, out = _run({"nvidia_smi_path": prog}, capsys)
    assert code == 0
    assert out["changed"] is False
    assert calls.read_text() == "-q -x\n"
    gpu = out["gpu"]
    assert gpu["source"] == "xml"
    assert gpu["driver_version"] == "515.105.01"
    assert [(g["name"], g["pci_bus_id"], g["pcie"]["width_current"], g["pcie"]["width_max"]) for g in gpu["gpus"]] == [
        ("Tesla T4", "0000:00:1E.0", 8, 16)]


def test_reads_a_saved_text_dump(capsys):
    src = os.path.join(FIXTURES, "q-h100x8-535.161.08-hw-power-brake-slowdown.txt")
    code, out = _run({"src": src, "nvidia_smi_path": "/nonexistent/nvidia-smi"}, capsys)
    assert code == 0
    gpu = out["gpu"]
    assert gpu["source"] == "text"
    assert len(gpu["gpus"]) == 8
    assert gpu["gpus"][0]["throttle"]["hw_power_brake_slowdown"] is True


def test_driver_not_loaded_fails_with_typed_error(tmp_path, capsys):
    prog = _program(tmp_path, "echo \"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\"\n"
                              "exit 9\n")
    code, out = _run({"nvidia_smi_path": prog}, capsys)
    assert code == 1
    assert out["failed"] is True
    assert out["error_kind"] == "failed"
    assert out["tool"] == "nvidia-smi"
    assert out["rc"] == 9
    assert out["cmd"] == [prog, "-q", "-x"]
    assert out["msg"] == "nvidia-smi: exited with rc 9: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."


def test_hang_is_killed_and_reported(tmp_path, capsys):
    prog = _program(tmp_path, "sleep 60\n")
    code, out = _run({"nvidia_smi_path": prog, "timeout": 1}, capsys)
    assert code == 1
    assert out["error_kind"] == "timed_out"
    assert out["msg"] == "nvidia-smi: timed out after 1 s (process group killed)"


def test_unparsable_output(tmp_path, capsys):
    prog = _program(tmp_path, "echo '<nvidia_smi_log><gpu'\n")
    code, out = _run({"nvidia_smi_path": prog}, capsys)
    assert code == 1
    assert out["error_kind"] == "unparsable"
    assert out["msg"].startswith("nvidia-smi: ")


def test_missing_program_and_missing_dump(tmp_path, capsys):
    code, out = _run({"nvidia_smi_path": str(tmp_path / "none")}, capsys)
    assert (code, out["error_kind"], out["msg"]) == (1, "not_found", "nvidia-smi: not found at %s" % (tmp_path / "none"))
    code, out = _run({"src": str(tmp_path / "dump.txt")}, capsys)
    assert code == 1
    assert out["msg"] == "nvidia-smi: cannot read saved output %s: No such file or directory" % (tmp_path / "dump.txt")


def test_bad_timeout(capsys):
    code, out = _run({"timeout": 0}, capsys)
    assert code == 1
    assert out["msg"] == "timeout must be a positive number of seconds, got 0"
