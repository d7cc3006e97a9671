# SPDX-License-Identifier: GPL-3.0-or-later
"""The module edge (_base.run_module): the one place where typed errors become fail_json, and where AnsibleModule's
own checks of option combinations are declared."""

from __future__ import annotations

import json

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.zhisuan.ops.plugins.module_utils._base import positive, run_module
from ansible_collections.zhisuan.ops.plugins.module_utils._errors import OptionError, Refused, ToolTimeout

SPEC = {"state": {"type": "str", "choices": ["on", "off"]}, "target": {"type": "str"}, "other": {"type": "str"}}


def _run(capsys, args, runner, **checks):
    with patch_module_args(args):
        with pytest.raises(SystemExit) as info:
            run_module(SPEC, runner, **checks)
    return info.value.code, json.loads(capsys.readouterr().out)


def _ok(module):
    return {"seen": module.params["target"]}


def test_required_if_is_checked_by_ansible_module_before_the_runner_runs(capsys):
    code, out = _run(capsys, {"state": "on"}, _ok, required_if=[("state", "on", ["target"])])
    assert code == 1 and out["msg"] == "state is on but all of the following are missing: target"
    code, out = _run(capsys, {"state": "on", "target": "pxe"}, _ok, required_if=[("state", "on", ["target"])])
    assert (code, out["seen"], out["changed"]) == (0, "pxe", False)


def test_mutually_exclusive_required_one_of_and_required_together(capsys):
    code, out = _run(capsys, {"target": "a", "other": "b"}, _ok, mutually_exclusive=[("target", "other")])
    assert code == 1 and out["msg"] == "parameters are mutually exclusive: target|other"
    code, out = _run(capsys, {}, _ok, required_one_of=[("target", "other")])
    assert code == 1 and out["msg"] == "one of the following is required: target, other"
    code, out = _run(capsys, {"target": "a"}, _ok, required_together=[("target", "other")])
    assert code == 1 and out["msg"] == "parameters are required together: target, other"


def test_an_unknown_keyword_is_a_programming_error():
    with pytest.raises(TypeError, match="unknown keyword.s. required_ifs"):
        run_module(SPEC, _ok, required_ifs=[])


def test_a_typed_error_becomes_fail_json_over_the_result_it_carries(capsys):
    def refuse(module):
        raise Refused("ipmitool", "the chassis power is off; state=cycle needs it on", result={
            "changed": False, "power_state": "Off", "msg": "overwritten by the error"})

    code, out = _run(capsys, {}, refuse)
    assert code == 1
    assert (out["failed"], out["error_kind"], out["tool"], out["power_state"], out["changed"]) == (
        True, "refused", "ipmitool", "Off", False)
    assert out["msg"] == "the chassis power is off; state=cycle needs it on"

    def slow(module):
        raise ToolTimeout("scontrol", "node01 is still draining", result={"changed": True, "action": "drained"})

    code, out = _run(capsys, {}, slow)
    assert (code, out["msg"], out["error_kind"], out["changed"], out["action"]) == (
        1, "scontrol: node01 is still draining", "timed_out", True, "drained")


def test_option_errors_name_the_option_and_keep_their_own_words(capsys):
    def check(module):
        positive({"wait_timeout": 0}, "wait_timeout")

    code, out = _run(capsys, {}, check)
    assert (code, out["msg"], out["error_kind"], out["tool"]) == (
        1, "wait_timeout must be a positive number of seconds, got 0", "bad_option", "wait_timeout")
    code, out = _run(capsys, {"timeout": -5}, _ok)
    assert (code, out["msg"], out["error_kind"]) == (1, "timeout must be a positive number of seconds, got -5", "bad_option")
    assert positive({"wait_timeout": None}, "wait_timeout") is None and positive({"t": 2}, "t") == 2
    assert OptionError("jobs", "job a: bs is required").as_dict() == {
        "error_kind": "bad_option", "tool": "jobs", "msg": "job a: bs is required"}
