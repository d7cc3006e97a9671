# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""zhisuan.ops.node_collect: several families in one module run, each returning what its own module returns for the
same options (compared with the module itself, run the same way), a failing family beside families that work, wrong
options of one family, and check mode. Real programs behind the seam: shell scripts that print real captures."""

from __future__ import annotations

import json
import os
import stat

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.zhisuan.ops.plugins.modules import dcgm_diag, gpu_info, node_collect, xid_info

pytestmark = pytest.mark.usefixtures("as_node")

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "fixtures")
A100_XML = os.path.join(FIXTURES, "nvidia-smi", "q-x-a100-sxm4-80gb-mig-535.xml")
KERNEL_LOG = os.path.join(FIXTURES, "kernel-log", "dmesg-decode-iso-xid13-xid43-large.log")
DIAG_T4 = os.path.join(FIXTURES, "dcgm", "dcgmi-diag-r3-j-tesla-t4-pass.json")


def _program(tmp_path, name, body):
    path = tmp_path / name
    path.write_text("#!/bin/sh\n%s" % body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def _run(module, args, capsys, check_mode=False):
    if check_mode:
        args = dict(args, _ansible_check_mode=True)
    with patch_module_args(args):
        with pytest.raises(SystemExit) as info:
            module.main()
    return info.value.code, json.loads(capsys.readouterr().out)


def _nvidia_smi(tmp_path):
    # -q -x prints the real A100 capture; nvlink -s prints nothing (a GPU without NVLink states to show)
    return _program(tmp_path, "nvidia-smi", 'case "$1" in -q) cat %s ;; *) : ;; esac\n' % A100_XML)


def _without_invocation(result):
    return dict((key, value) for key, value in result.items() if key != "invocation")


def test_each_family_returns_what_its_own_module_returns(tmp_path, capsys):
    smi = _nvidia_smi(tmp_path)
    dcgmi = _program(tmp_path, "dcgmi", "cat %s\n" % DIAG_T4)
    options = {"gpu": {"nvidia_smi_path": smi}, "xid": {"src": KERNEL_LOG, "since": ""},
               "dcgm": {"dcgmi_path": dcgmi, "level": 3}}
    code, out = _run(node_collect, {"families": ["dcgm", "xid", "gpu"], "options": options}, capsys)
    assert code == 0 and "failed" not in out and out["changed"] is False
    collected = out["collected"]
    assert list(collected) == ["gpu", "xid", "dcgm"]  # the GPU facts first, whatever the order given
    assert sorted(out["timing"]) == ["dcgm", "gpu", "xid"] and all(s >= 0 for s in out["timing"].values())
    for name, module in (("gpu", gpu_info), ("xid", xid_info), ("dcgm", dcgm_diag)):
        dummy, alone = _run(module, options[name], capsys)
        assert collected[name] == _without_invocation(alone), name
    assert len(collected["gpu"]["gpu"]["gpus"]) >= 1
    assert {event["code"] for event in collected["xid"]["xid"]["events"]} >= {13, 43}
    assert collected["dcgm"]["dcgm"]["level"] == 3


def test_a_failing_family_is_its_module_failure_and_the_others_run(tmp_path, capsys):
    smi = _nvidia_smi(tmp_path)
    missing = str(tmp_path / "no-such-dcgmi")
    hangs = _program(tmp_path, "journalctl", "sleep 30\n")
    options = {"gpu": {"nvidia_smi_path": smi}, "dcgm_health": {"dcgmi_path": missing},
               "xid": {"source": "journalctl", "journalctl_path": hangs, "timeout": 1}}
    code, out = _run(node_collect, {"families": ["gpu", "xid", "dcgm_health"], "options": options}, capsys)
    assert code == 0 and "failed" not in out  # the task itself does not fail
    collected = out["collected"]
    assert "failed" not in collected["gpu"] and collected["gpu"]["gpu"]["gpus"]
    health = collected["dcgm_health"]
    assert health["failed"] is True and health["error_kind"] == "not_found" and health["tool"] == "dcgmi"
    assert "dcgm_health" not in health
    dummy, alone = _run(xid_info, options["xid"], capsys)
    assert collected["xid"]["failed"] is True and collected["xid"]["error_kind"] == "timed_out"
    assert collected["xid"]["msg"] == alone["msg"]


def test_wrong_options_fail_that_family_only(tmp_path, capsys):
    smi = _nvidia_smi(tmp_path)
    options = {"gpu": {"nvidia_smi_path": smi}, "dcgm": {"level": 7}, "xid": {"src": KERNEL_LOG, "timeout": 0},
               "tuning": "not a dictionary"}
    code, out = _run(node_collect, {"families": ["gpu", "xid", "dcgm", "tuning"], "options": options}, capsys)
    assert code == 0
    collected = out["collected"]
    assert "failed" not in collected["gpu"]
    dcgm = collected["dcgm"]
    assert dcgm["failed"] is True and dcgm["error_kind"] == "bad_option" and dcgm["tool"] == "zhisuan.ops.dcgm_diag"
    assert "level" in dcgm["msg"] and "7" in dcgm["msg"]
    assert collected["xid"]["failed"] is True and "timeout must be a positive number" in collected["xid"]["msg"]
    assert collected["tuning"]["error_kind"] == "bad_option" and "dictionary" in collected["tuning"]["msg"]


def test_check_mode_skips_the_diagnostic_only(tmp_path, capsys):
    smi = _nvidia_smi(tmp_path)
    calls = tmp_path / "calls"
    dcgmi = _program(tmp_path, "dcgmi", "echo \"$@\" >> %s\ncat %s\n" % (calls, DIAG_T4))
    options = {"gpu": {"nvidia_smi_path": smi}, "dcgm": {"dcgmi_path": dcgmi, "level": 3}}
    code, out = _run(node_collect, {"families": ["gpu", "dcgm"], "options": options}, capsys, check_mode=True)
    assert code == 0
    assert out["collected"]["dcgm"]["skipped"] is True and "check mode" in out["collected"]["dcgm"]["msg"]
    assert out["collected"]["gpu"]["gpu"]["gpus"]
    assert not calls.exists()  # dcgmi diag never ran


def test_an_unknown_family_is_refused(capsys):
    code, out = _run(node_collect, {"families": ["gpu", "nccl"]}, capsys)
    assert code == 1 and out["failed"] is True and "nccl" in out["msg"]
