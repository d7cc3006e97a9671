# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""zhisuan.ops.dcgm_diag and dcgm_health as Ansible runs them, with real programs behind the seam: shell scripts
that print a real capture (tests/fixtures/dcgm), exit non-zero with a failed test's JSON, print dcgmi's host
engine error, or hang."""

from __future__ import annotations

import json
import os
import stat

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import dcgm_collect
from ansible_collections.zhisuan.ops.plugins.modules import dcgm_diag, dcgm_health

pytestmark = pytest.mark.usefixtures("as_node")

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "fixtures", "dcgm")
T4 = os.path.join(FIXTURES, "dcgmi-diag-r3-j-tesla-t4-pass.json")
GB10 = os.path.join(FIXTURES, "dcgmi-diag-r2-j-gb10-4.5.2-plugins-allowed.json")
HEALTHY = os.path.join(FIXTURES, "dcgmi-health-c-j-healthy.json")
NO_HOST_ENGINE = ("Error: unable to establish a connection to the specified host: localhost; "
                  "Error: Unable to connect to host engine. Host engine connection invalid/disconnected.")


def _program(tmp_path, body):
    path = tmp_path / "dcgmi"
    path.write_text("#!/bin/sh\necho \"$@\" >> %s\n%s" % (tmp_path / "calls", body))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def _calls(tmp_path):
    calls = tmp_path / "calls"
    return calls.read_text() if calls.exists() else ""


def _run(module, args, capsys):
    with patch_module_args(args):
        with pytest.raises(SystemExit) as info:
            module.main()
    return info.value.code, json.loads(capsys.readouterr().out)


# ---------------------------------------------------------------------------------------------- diag

def test_diag_runs_the_level_once(tmp_path, capsys):
    prog = _program(tmp_path, "cat %s\n" % T4)
    code, out = _run(dcgm_diag, {"dcgmi_path": prog, "level": 3}, capsys)
    assert code == 0 and out["changed"] is False and "failed" not in out
    assert _calls(tmp_path) == "diag -r 3 -j\n"
    facts = out["dcgm"]
    assert (facts["level"], facts["overall"], facts["rc"], facts["schema"]) == (3, "Pass", 0, "2.x/3.x")
    assert [t["name"] for t in facts["tests"]][-3:] == ["Targeted Stress", "Targeted Power", "Memory Bandwidth"]
    assert "warnings" not in out


def test_diag_gpu_list_and_default_level(tmp_path, capsys):
    prog = _program(tmp_path, "cat %s\n" % T4)
    code, out = _run(dcgm_diag, {"dcgmi_path": prog, "gpus": [0, 1]}, capsys)
    assert code == 0 and out["dcgm"]["level"] == 1
    assert _calls(tmp_path) == "diag -r 1 -j -i 0,1\n"


def test_failed_test_exits_non_zero_but_is_facts(tmp_path, capsys):
    """dcgmi exits 226 with a failed test (the GB10 capture's run) and still prints the JSON: not a task failure."""
    prog = _program(tmp_path, "cat %s\nexit 226\n" % GB10)
    code, out = _run(dcgm_diag, {"dcgmi_path": prog, "level": 2}, capsys)
    assert code == 0 and "failed" not in out
    facts = out["dcgm"]
    assert (facts["overall"], facts["rc"], facts["version"]) == ("Fail", 226, "4.5.2")
    assert facts["tests"][0]["results"][0]["warnings"][0]["error_id"] == 29
    assert "warnings" not in out


def test_non_zero_rc_without_a_failed_test_warns(tmp_path, capsys):
    prog = _program(tmp_path, "cat %s\nexit 1\n" % T4)
    code, out = _run(dcgm_diag, {"dcgmi_path": prog}, capsys)
    assert code == 0 and out["dcgm"]["rc"] == 1
    # ansible-core 2.19 returns warnings as WarningSummary records
    assert [item["event"]["msg"] for item in out["warnings"]] == [
        "dcgmi diag exited with rc 1 although no test reported Fail"]


def test_hung_diag_times_out(tmp_path, capsys):
    prog = _program(tmp_path, "sleep 60\n")
    code, out = _run(dcgm_diag, {"dcgmi_path": prog, "level": 3, "timeout": 1}, capsys)
    assert code == 1 and out["failed"] is True
    assert (out["error_kind"], out["tool"]) == ("timed_out", "dcgmi")
    assert out["msg"] == "dcgmi: timed out after 1 s (process group killed)"
    assert out["cmd"] == [prog, "diag", "-r", "3", "-j"]


@pytest.mark.parametrize("params, timeout", [
    ({"level": 1}, 120), ({"level": 2}, 600), ({"level": 3}, 1800), ({"level": 4}, 7200), ({"level": 4, "timeout": 30}, 30),
])
def test_timeout_per_level(tmp_path, capsys, monkeypatch, params, timeout):
    seen = []

    def recording_run(argv, **kwargs):
        seen.append(kwargs["timeout"])
        return real_run(argv, **kwargs)
    real_run = dcgm_collect.run
    monkeypatch.setattr(dcgm_collect, "run", recording_run)
    prog = _program(tmp_path, "cat %s\n" % T4)
    code, out = _run(dcgm_diag, dict(params, dcgmi_path=prog), capsys)
    assert code == 0 and seen == [timeout]


def test_no_host_engine(tmp_path, capsys):
    """dcgmi's own text (dcgmi/Command.cpp) when no nv-hostengine answers; dcgmi returns -21 -> rc 235."""
    prog = _program(tmp_path, "echo 'Error: unable to establish a connection to the specified host: localhost'\n"
                              "echo 'Error: Unable to connect to host engine. Host engine connection invalid/disconnected.'\n"
                              "exit 235\n")
    code, out = _run(dcgm_diag, {"dcgmi_path": prog}, capsys)
    assert code == 1
    assert (out["error_kind"], out["rc"]) == ("failed", 235)
    assert out["msg"] == "dcgmi: exited with rc 235: " + NO_HOST_ENGINE
    assert out["stdout"].startswith("Error: unable to establish")


@pytest.mark.parametrize("body, kind, msg", [
    ("echo 'Running diagnostics...'\n", "unparsable",
     "dcgmi: the output of `dcgmi diag -j` is not JSON: 'Running diagnostics...'"),
    ("head -c 1500 %s\n" % T4, "unparsable",
     "dcgmi: the JSON document of `dcgmi diag -j` is incomplete or invalid "
     "(Unterminated string starting at: line 103 column 18 (char 1457))"),
    ("echo 'segfault' >&2\nexit 139\n", "failed", "dcgmi: exited with rc 139: segfault"),
    ("head -c 1500 %s\nexit 226\n" % T4, "failed", "dcgmi: exited with rc 226: the JSON document of `dcgmi diag -j` is "
     "incomplete or invalid (Unterminated string starting at: line 103 column 18 (char 1457))"),
    ("exit 3\n", "failed", "dcgmi: exited with rc 3: no output; expected the JSON document of `dcgmi diag -j`"),
])
def test_unreadable_diag_output(tmp_path, capsys, body, kind, msg):
    code, out = _run(dcgm_diag, {"dcgmi_path": _program(tmp_path, body)}, capsys)
    assert code == 1
    assert (out["error_kind"], out["msg"]) == (kind, msg)


def test_diag_does_not_run_in_check_mode(tmp_path, capsys):
    prog = _program(tmp_path, "cat %s\n" % T4)
    code, out = _run(dcgm_diag, {"dcgmi_path": prog, "_ansible_check_mode": True}, capsys)
    assert code == 0 and out["skipped"] is True
    assert "does not support check mode" in out["msg"]
    assert _calls(tmp_path) == ""


@pytest.mark.parametrize("params, msg", [
    ({"level": 5}, "value of level must be one of: 1, 2, 3, 4, got: 5"),
    ({"gpus": [0, -1]}, "gpus must be DCGM GPU ids (0, 1, ...), got [-1]"),
    ({"timeout": 0}, "timeout must be a positive number of seconds, got 0"),
])
def test_bad_diag_options(tmp_path, capsys, params, msg):
    prog = _program(tmp_path, "cat %s\n" % T4)
    code, out = _run(dcgm_diag, dict(params, dcgmi_path=prog), capsys)
    assert code == 1 and out["msg"] == msg
    assert _calls(tmp_path) == ""


def test_missing_dcgmi(tmp_path, capsys):
    code, out = _run(dcgm_diag, {"dcgmi_path": str(tmp_path / "none")}, capsys)
    assert (code, out["error_kind"], out["msg"]) == (1, "not_found", "dcgmi: not found at %s" % (tmp_path / "none"))


# --------------------------------------------------------------------------------------------- health

def test_health_healthy(tmp_path, capsys):
    prog = _program(tmp_path, "cat %s\n" % HEALTHY)
    code, out = _run(dcgm_health, {"dcgmi_path": prog}, capsys)
    assert code == 0 and out["changed"] is False
    assert _calls(tmp_path) == "health -c -j\n"
    assert out["dcgm_health"] == {"overall": "Healthy", "entities": [], "incidents": [],
                                  "header": ["Health Monitor Report"], "messages": [], "rc": 0}


def test_health_runs_in_check_mode(tmp_path, capsys):
    prog = _program(tmp_path, "cat %s\n" % HEALTHY)
    code, out = _run(dcgm_health, {"dcgmi_path": prog, "_ansible_check_mode": True}, capsys)
    assert code == 0 and out["dcgm_health"]["overall"] == "Healthy"


def test_health_watches_not_enabled(tmp_path, capsys):
    """dcgmi/Health.cpp prints this and returns DCGM_ST_GENERIC_ERROR (-1 -> rc 255)."""
    prog = _program(tmp_path, "echo 'Error: Health watches not enabled. Please enable watches. '\nexit 255\n")
    code, out = _run(dcgm_health, {"dcgmi_path": prog}, capsys)
    assert code == 1
    assert (out["error_kind"], out["rc"]) == ("failed", 255)
    assert out["msg"] == "dcgmi: exited with rc 255: Error: Health watches not enabled. Please enable watches."


def test_health_hang(tmp_path, capsys):
    code, out = _run(dcgm_health, {"dcgmi_path": _program(tmp_path, "sleep 60\n"), "timeout": 1}, capsys)
    assert (code, out["error_kind"], out["msg"]) == (1, "timed_out", "dcgmi: timed out after 1 s (process group killed)")
