# SPDX-License-Identifier: GPL-3.0-or-later
"""zhisuan.ops.gpu_info as Ansible runs it: arguments in, exit_json/fail_json out, with real programs behind the
seam (shell scripts that print a real capture, fail like a node without a driver, or hang)."""

from __future__ import annotations

import json
import os
import stat
import sys

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.zhisuan.ops.plugins.modules import gpu_info

pytestmark = pytest.mark.usefixtures("as_node")

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "nvidia-smi")
REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
LAB_SIM = os.path.join(REPO, "lab", "sim", "nvidia_smi.py")
A100_XML = os.path.join(FIXTURES, "q-x-a100-sxm4-80gb-mig-535.xml")


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


def _warnings(out):
    """The module's warnings as text (ansible-core 2.19 returns them as WarningSummary records)."""
    return [item["event"]["msg"] if isinstance(item, dict) else item for item in out.get("warnings", [])]


def _lab_node(tmp_path, faults=(), gpus=8):
    """A lab node: the lab's nvidia-smi simulator (real A100 captures, value-edited faults) behind a wrapper that
    logs its arguments."""
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"schema": 1, "node": "unit01", "index": 1, "model": "a100", "capture": A100_XML,
                                 "gpus": gpus, "faults": list(faults)}))
    calls = tmp_path / "calls"
    prog = _program(tmp_path, 'echo "$@" >> %s\nexec %s -I -S %s --state %s "$@"\n'
                    % (calls, sys.executable, LAB_SIM, state))
    return prog, calls, state


def test_runs_nvidia_smi_xml_once(tmp_path, capsys):
    calls = tmp_path / "calls"
    capture = os.path.join(FIXTURES, "q-x-tesla-t4-515.xml")
    nvlink = os.path.join(FIXTURES, "excerpt-l40s-nvlink-s.txt")
    prog = _program(tmp_path, 'echo "$@" >> %s\nif [ "$1" = nvlink ]; then cat %s; else cat %s; fi\n'
                    % (calls, nvlink, capture))
    code, out = _run({"nvidia_smi_path": prog}, capsys)
    assert code == 0
    assert out["changed"] is False
    assert calls.read_text() == "-q -x\nnvlink -s\n"
    assert out["gpu"]["nvlink_error"] is None
    # the L40S form names a masked UUID that is not the T4's: not attached, and said so
    assert out["gpu"]["gpus"][0]["nvlink"] is None
    assert _warnings(out) == ["nvidia-smi nvlink: GPU 0 (GPU-00000000-0000-0000-0000-000000000000) is not among the GPUs "
                              "of nvidia-smi -q; its NVLink state is ignored"]
    gpu = out["gpu"]
    assert gpu["source"] == "xml"
    assert gpu["driver_version"] == "515.105.01"
    assert [(g["name"], g["pci_bus_id"], g["pcie"]["width_current"], g["pcie"]["width_max"]) for g in gpu["gpus"]] == [
        ("Tesla T4", "0000:00:1E.0", 8, 16)]


def test_nvlink_false_runs_only_the_xml_query(tmp_path, capsys):
    prog, calls, _ = _lab_node(tmp_path)
    code, out = _run({"nvidia_smi_path": prog, "nvlink": False}, capsys)
    assert code == 0
    assert calls.read_text() == "-q -x\n"
    assert [g["nvlink"] for g in out["gpu"]["gpus"]] == [None] * 8
    assert out["gpu"]["nvlink_error"] is None


def test_lab_node_nvlink_states_matched_by_uuid(tmp_path, capsys):
    prog, calls, _ = _lab_node(tmp_path, faults=[{"kind": "nvlink_down", "gpu": 3, "link": 5},
                                                 {"kind": "gpu_missing", "gpu": 0}])
    code, out = _run({"nvidia_smi_path": prog}, capsys)
    assert code == 0, out
    assert calls.read_text() == "-q -x\nnvlink -s\n"
    gpus = out["gpu"]["gpus"]
    assert [g["index"] for g in gpus] == [1, 2, 3, 4, 5, 6, 7]
    assert [(g["nvlink"]["active"], g["nvlink"]["total"]) for g in gpus] == [(12, 12)] * 2 + [(11, 12)] + [(12, 12)] * 4
    assert gpus[2]["nvlink"]["links"][5] == {"link": 5, "active": False, "speed_gbs": None}
    assert gpus[2]["nvlink"]["links"][4] == {"link": 4, "active": True, "speed_gbs": 25.0}
    assert out["gpu"]["nvlink_error"] is None
    assert _warnings(out) == []


@pytest.mark.parametrize("nvlink_body, error", [
    ('echo "lab nvidia-smi: nvlink broke" >&2; exit 3', "nvidia-smi nvlink: exited with rc 3: lab nvidia-smi: nvlink broke"),
    ("cat %s" % A100_XML, "nvidia-smi nvlink: line 1 is not a 'GPU n: <name> (UUID: ...)' header, so this is not "
                          "nvidia-smi nvlink -s output: '<?xml version=\"1.0\" encoding=\"UTF-8\"?>'"),
    ("sleep 30", "nvidia-smi nvlink: timed out after 1 s (process group killed)"),
])
def test_nvlink_failure_keeps_the_gpu_facts(tmp_path, capsys, nvlink_body, error):
    prog = _program(tmp_path, 'if [ "$1" = nvlink ]; then %s; fi\ncat %s\n' % (nvlink_body, A100_XML))
    code, out = _run({"nvidia_smi_path": prog, "timeout": 1}, capsys)
    assert code == 0
    assert out["gpu"]["nvlink_error"] == error
    assert out["gpu"]["gpus"][0]["name"] == "NVIDIA A100-SXM4-80GB"
    assert out["gpu"]["gpus"][0]["nvlink"] is None


def test_nvlink_nonzero_exit_with_gpu_blocks_is_kept_with_a_warning(tmp_path, capsys):
    mig = os.path.join(FIXTURES, "excerpt-h100-mig-nvlink-s.txt")
    prog = _program(tmp_path, 'if [ "$1" = nvlink ]; then cat %s; exit 3; fi\ncat %s\n' % (mig, A100_XML))
    code, out = _run({"nvidia_smi_path": prog}, capsys)
    assert code == 0
    assert out["gpu"]["nvlink_error"] is None
    assert _warnings(out) == ["nvidia-smi nvlink -s exited with rc 3 but printed the state of 1 GPU(s); kept",
                              "nvidia-smi nvlink: GPU 0 (GPU-00000000-0000-0000-0000-000000000000) is not among the GPUs "
                              "of nvidia-smi -q; its NVLink state is ignored"]


def test_reads_a_saved_text_dump(capsys):
    src = os.path.join(FIXTURES, "q-h100x8-535.161.08-hw-power-brake-slowdown.txt")
    code, out = _run({"src": src, "nvidia_smi_path": "/nonexistent/nvidia-smi"}, capsys)
    assert code == 0
    gpu = out["gpu"]
    assert gpu["source"] == "text"
    assert len(gpu["gpus"]) == 8
    assert gpu["gpus"][0]["throttle"]["hw_power_brake_slowdown"] is True
    assert [g["nvlink"] for g in gpu["gpus"]] == [None] * 8 and gpu["nvlink_error"] is None


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
