# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The output cap as a user sets it (the modules' max_output option, node_collect's per-family options, the check
action's variables) and what a program over it becomes: the task's typed failure, then the family's ``error`` check,
the other families untouched. Real programs behind the seam."""

from __future__ import annotations

import json
import os
import stat

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.zhisuan.ops.plugins.module_utils import _runner
from ansible_collections.zhisuan.ops.plugins.modules import gpu_info, node_collect, xid_info
from ansible_collections.zhisuan.ops.plugins.plugin_utils._check_vars import COLLECT, family_options
from ansible_collections.zhisuan.ops.plugins.plugin_utils._hostvars import UNDEFINED
from ansible_collections.zhisuan.ops.plugins.plugin_utils._judging import judge_collected

pytestmark = pytest.mark.usefixtures("as_node")

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "fixtures")
A100_XML = os.path.join(FIXTURES, "nvidia-smi", "q-x-a100-sxm4-80gb-mig-535.xml")


def _program(tmp_path, name, body):
    path = tmp_path / name
    path.write_text("#!/bin/sh\n%s" % body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def _run(module, args, capsys):
    with patch_module_args(args):
        with pytest.raises(SystemExit) as info:
            module.main()
    return info.value.code, json.loads(capsys.readouterr().out)


@pytest.fixture(autouse=True)
def _defaults_after():
    yield
    _runner.set_output_limit(None)


def test_a_module_option_caps_its_program_and_fails_typed(tmp_path, capsys):
    # nvidia-smi -q -x that prints the real capture and then loops (a driver in a bad state printing without end)
    smi = _program(tmp_path, "nvidia-smi", 'case "$1" in -q) cat %s; yes "<gpu>" ;; *) : ;; esac\n' % A100_XML)
    code, out = _run(gpu_info, {"nvidia_smi_path": smi, "max_output": 2}, capsys)
    assert code == 1 and out["failed"] is True
    assert (out["error_kind"], out["tool"], out["limit"]) == ("output_too_large", "nvidia-smi", 2 * _runner.MIB)
    assert out["msg"] == "nvidia-smi: output over 2 MiB (process group killed); raise max_output if this much is expected"
    assert out["stdout"].startswith("<?xml")
    # judged: the gpu family's error check, as for the other tool errors
    checks, summary, _ = judge_collected("gpu", "node01", out)
    assert [(c["id"], c["status"], c["observed"]) for c in checks] == [("gpu.collect.nvidia_smi", "error", "output too large")]
    assert checks[0]["message"] == out["msg"] and summary == {}


@pytest.mark.parametrize("bad", [0, -3])
def test_a_cap_that_is_not_positive_is_a_bad_option(tmp_path, capsys, bad):
    code, out = _run(xid_info, {"src": os.devnull, "max_output": bad}, capsys)
    assert code == 1 and out["error_kind"] == "bad_option"
    assert out["msg"] == "max_output must be a positive number of MiB, got %s" % bad


def test_node_collect_caps_one_family_and_the_next_starts_from_the_defaults(tmp_path, capsys):
    endless = _program(tmp_path, "journalctl", "cat /dev/zero\n")
    smi = _program(tmp_path, "nvidia-smi", 'case "$1" in -q) cat %s ;; *) : ;; esac\n' % A100_XML)
    # the A100 capture is ~40 KiB: a 1 MiB cap left over from xid would not stop it, so run xid's cap small and
    # give gpu none; the order is gpu, xid, ... so check the cap is reset after xid by a family that follows it
    dcgmi = _program(tmp_path, "dcgmi", "head -c 1500000 /dev/zero | tr '\\000' ' '; echo '{}'\n")
    options = {"gpu": {"nvidia_smi_path": smi}, "xid": {"source": "journalctl", "journalctl_path": endless,
                                                        "max_output": 1},
               "dcgm_health": {"dcgmi_path": dcgmi}}
    code, out = _run(node_collect, {"families": ["gpu", "xid", "dcgm_health"], "options": options}, capsys)
    assert code == 0
    collected = out["collected"]
    assert "failed" not in collected["gpu"] and collected["gpu"]["gpu"]["gpus"]
    assert collected["xid"]["failed"] is True and collected["xid"]["error_kind"] == "output_too_large"
    assert collected["xid"]["msg"].startswith("journalctl: output over 1 MiB")
    # 1.5 MB from dcgmi is over xid's 1 MiB but under dcgmi's own 32 MiB: not stopped
    assert collected["dcgm_health"].get("error_kind") != "output_too_large", collected["dcgm_health"]
    checks, _, _ = judge_collected("xid", "node01", collected["xid"])
    assert [(c["id"], c["status"], c["observed"]) for c in checks] == [("xid.collect.kernel_log", "error",
                                                                        "output too large")]


class View(object):
    def __init__(self, variables):
        self.variables = variables

    def lookup(self, source):
        value = self.variables
        for key in (source,) if isinstance(source, str) else source:
            if not isinstance(value, dict) or key not in value:
                return UNDEFINED
            value = value[key]
        return value


def test_the_check_action_takes_the_cap_from_the_role_variable_else_the_inventory():
    families = ["gpu", "xid", "dcgm", "tuning"]
    unset = family_options(COLLECT, families, {}, View({}))
    assert all("max_output" not in unset[name] for name in families)  # the runner's per-tool defaults apply
    site = View({"zhisuan_tool_max_output": {"nvidia_smi": 128, "journalctl": "16"}, "check_xid_max_output": 8})
    options = family_options(COLLECT, families, {}, site)
    assert options["gpu"]["max_output"] == 128 and options["xid"]["max_output"] == 8
    assert "max_output" not in options["dcgm"]
