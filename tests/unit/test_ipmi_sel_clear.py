# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""zhisuan.ops.ipmi_sel_clear: the ``sel info`` parser on captures, and the module as Ansible runs it against LIVE
BMCs, the lab's OpenIPMI ipmi_sim (lab/bmc/ipmi_sim.py) reached with the real ipmitool. Needs `ipmi_sim`, `sdrcomp`
and `ipmitool` (make sysdeps)."""

from __future__ import annotations

import importlib.util
import json
import os
import stat
import subprocess

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._ipmi.parse import parse_sel_elist
from ansible_collections.zhisuan.ops.plugins.module_utils._ipmi.sel_clear import is_cleared_record, parse_sel_info, plan
from ansible_collections.zhisuan.ops.plugins.modules import ipmi_info, ipmi_sel_clear

pytestmark = pytest.mark.usefixtures("as_node")

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
FIXTURES = os.path.join(REPO, "tests", "fixtures", "ipmitool")
# The record BMCs log when their SEL was cleared (Event Logging Disabled, offset 02h), as `ipmitool sel add` reads it.
CLEARED_RECORD = "0x04 0x10 0x72 0x6f 0x02 0xff 0xff\n"
UNCORRECTABLE = ("Critical", "Memory DIMM Status | Uncorrectable ECC | Asserted")


def _load_lab():
    spec = importlib.util.spec_from_file_location("zhisuan_lab_bmc_ipmi_sim_selclear",
                                                  os.path.join(REPO, "lab", "bmc", "ipmi_sim.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


LAB = _load_lab()
NODES = {
    "sel01": {"faults": ["sel_critical"]},
    "clean01": {},
    "cleared01": {"faults": ["sel_critical"]},
    "badcred01": {"faults": ["bmc_bad_credentials"]},
}


def fixture(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        return handle.read()


# ------------------------------------------------------------------------------------------------ parser, on captures

def test_sel_info_with_one_entry():
    info = parse_sel_info(fixture("ipmi-sim-sel-info-one-entry.txt"))
    assert (info["entries"], info["overflow"]) == (1, False)
    assert info["fields"]["Last Add Time"].endswith(" UTC") and info["fields"]["Last Del Time"] == "Not Available"


def test_sel_info_after_a_clear():
    info = parse_sel_info(fixture("ipmi-sim-sel-info-empty.txt"))
    assert (info["entries"], info["overflow"], info["fields"]["Free Space"]) == (0, False, "16000 bytes")


def test_sel_info_without_entries_is_a_parse_error():
    with pytest.raises(ParseError) as error:
        parse_sel_info(fixture("ipmi-sim-sel-clear.txt"))
    assert error.value.message == ("ipmitool: no 'Entries : <number>' line in the output of `ipmitool sel info`: "
                                   "'Clearing SEL.  Please allow a few seconds to erase.\\n'")


def test_sel_info_with_an_edited_count_that_is_not_a_number():
    text = fixture("ipmi-sim-sel-info-one-entry.txt").replace("Entries          : 1", "Entries          : unknown")
    with pytest.raises(ParseError):
        parse_sel_info(text)


def test_the_cleared_record_is_recognised():
    records = parse_sel_elist(fixture("ipmi-sim-sel-elist-log-cleared.txt"), utc=True)
    assert [(r["sensor_type"], r["event"]) for r in records] == [("Event Logging Disabled", "Log area reset/cleared ()")]
    assert is_cleared_record(records[0]) is True
    faults = parse_sel_elist(fixture("ipmi-sim-sel-elist-faults.txt"), utc=True)
    assert faults and [is_cleared_record(r) for r in faults] == [False] * len(faults)


@pytest.mark.parametrize("entries, only_cleared, expected", [
    (0, False, (False, "the SEL is empty")),
    (1, True, (False, "the SEL holds only the record of its last clear")),
    (1, False, (True, "sel clear")),
    (300, False, (True, "sel clear")),
])
def test_plan(entries, only_cleared, expected):
    assert plan(entries, only_cleared) == expected


# ------------------------------------------------------------------------------------------------- live, on ipmi_sim

@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("ipmiselclear")
    infos = LAB.start(run_dir, NODES)
    yield infos
    LAB.stop(run_dir)


def bmc_args(info, **extra):
    args = {"bmc_address": info["address"], "bmc_port": info["port"], "bmc_username": info["username"],
            "bmc_password": info["password"], "timeout": 10}
    args.update(extra)
    return args


def run(module, args, capsys):
    with patch_module_args(args):
        with pytest.raises(SystemExit) as info:
            module.main()
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert LAB.PASSWORD not in text and LAB.BAD_PASSWORD not in text
    return info.value.code, json.loads(captured.out)


def sel_log(info, capsys):
    code, out = run(ipmi_info, bmc_args(info), capsys)
    assert code == 0, out
    return [(entry["severity"], entry["message"]) for entry in out["log"]]


def logging_ipmitool(tmp_path):
    """The real ipmitool behind a wrapper that records its command lines."""
    path = tmp_path / "ipmitool"
    path.write_text('#!/bin/sh\necho "$@" >> %s\nexec ipmitool "$@"\n' % (tmp_path / "argv.log"))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def commands(tmp_path):
    return [line.split(" -E ")[1] for line in (tmp_path / "argv.log").read_text().splitlines()]


def test_check_mode_then_clear_then_nothing_to_do(lab, capsys, tmp_path):
    info = lab["sel01"]
    assert sel_log(info, capsys) == [UNCORRECTABLE]
    ipmitool = logging_ipmitool(tmp_path)

    code, out = run(ipmi_sel_clear, bmc_args(info, ipmitool_path=ipmitool, _ansible_check_mode=True, _ansible_diff=True), capsys)
    assert (code, out["changed"], out["entries_before"], out["actions"]) == (0, True, 1, ["sel clear"])
    assert out["msg"] == "would run sel clear (1 entries)"
    assert out["diff"] == {"before": {"entries": 1}, "after": {"entries": 0}}
    assert sel_log(info, capsys) == [UNCORRECTABLE]  # check mode left it

    code, out = run(ipmi_sel_clear, bmc_args(info, ipmitool_path=ipmitool), capsys)
    assert (code, out["changed"], out["entries_before"], out["msg"]) == (0, True, 1, "ran sel clear (1 entries before)")
    assert sel_log(info, capsys) == []

    code, out = run(ipmi_sel_clear, bmc_args(info, ipmitool_path=ipmitool), capsys)
    assert (code, out["changed"], out["entries_before"], out["actions"], out["msg"]) == (0, False, 0, [], "the SEL is empty")
    # one entry: its record is read to see whether it is the cleared record; `sel clear` ran once
    assert commands(tmp_path) == ["sel info", "sel elist", "sel info", "sel elist", "sel clear", "sel info"]


def test_an_empty_sel_is_not_cleared(lab, capsys):
    code, out = run(ipmi_sel_clear, bmc_args(lab["clean01"]), capsys)
    assert (code, out["changed"], out["entries_before"], out["actions"]) == (0, False, 0, [])


def test_a_sel_holding_only_the_cleared_record_is_not_cleared_again(lab, capsys, tmp_path):
    info = lab["cleared01"]
    assert run(ipmi_sel_clear, bmc_args(info), capsys)[1]["changed"] is True
    # what real BMCs do after a clear: log "Event Logging Disabled | Log area reset/cleared" (added with ipmitool)
    (tmp_path / "event.txt").write_text(CLEARED_RECORD)
    env = dict(os.environ, IPMI_PASSWORD=info["password"], TZ="UTC")
    added = subprocess.run(["ipmitool"] + LAB.ipmitool_args(info) + ["sel", "add", str(tmp_path / "event.txt")],
                           capture_output=True, text=True, timeout=20, env=env, check=False)
    assert added.returncode == 0, added.stderr
    assert sel_log(info, capsys) == [("OK", "Event Logging Disabled #0x72 | Log area reset/cleared () | Asserted")]
    code, out = run(ipmi_sel_clear, bmc_args(info), capsys)
    assert (code, out["changed"], out["entries_before"], out["msg"]) == (
        0, False, 1, "the SEL holds only the record of its last clear")


def test_wrong_password_fails_without_the_password(lab, capsys):
    info = lab["badcred01"]
    code, out = run(ipmi_sel_clear, bmc_args(info), capsys)
    assert (code, out["error_kind"]) == (1, "auth_failed")
    assert out["msg"] == ("ipmitool: the BMC at 127.0.0.1:%d refused the session for user 'admin': RAKP 2 HMAC is "
                          "invalid (check bmc_username and bmc_password)" % info["port"])
