# SPDX-License-Identifier: GPL-3.0-or-later
"""The lab's kernel log (lab/sim/kernel_log.py): journalctl and dmesg replaying a real kernel log capture, with
`xid` faults injected by editing a real Xid line; run through labctl in a temporary directory."""

from __future__ import annotations

import datetime
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from ansible.module_utils.testing import patch_module_args

from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import xid
from ansible_collections.zhisuan.ops.plugins.module_utils._judge.xid import judge_xid
from ansible_collections.zhisuan.ops.plugins.modules import xid_info
from ansible_collections.zhisuan.ops.plugins.plugin_utils._xid_catalog import load_catalog

REPO = Path(__file__).resolve().parents[2]
LABCTL = REPO / "lab" / "labctl.py"
KERNEL_LOG = REPO / "tests" / "fixtures" / "kernel-log"
BASE = (KERNEL_LOG / "dev-kmsg-nvswitch.log").read_text().splitlines()
BASE_MESSAGES = [line.split(";", 1)[1] for line in BASE]
BASE_USEC = [int(line.split(",")[2]) for line in BASE]
TEMPLATE = (KERNEL_LOG / "dmesg-decode-iso-xid13-xid43-large.log").read_text().splitlines()[0]
DGX_BUSES = ["07", "0f", "47", "4e", "87", "90", "b7", "bd"]
JOURNAL = ["_TRANSPORT=kernel", "-o", "short-iso", "--no-pager"]
DMESG = ["--decode", "--time-format=iso"]
JOURNAL_RE = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\+0000 (\S+) kernel: (.*)$")
DMESG_RE = re.compile(r"^kern  :(info  |warn  ): (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d),(\d{6})\+00:00 (.*)$")

SCENARIO = {
    "name": "kernel-log",
    "defaults": {"model": "a100", "gpus": 8},
    "nodes": {
        "healthy01": {},
        "fallen01": {"faults": [{"kind": "xid", "gpu": 3, "code": 79}]},
        "dbe01": {"faults": [{"kind": "xid", "gpu": 1, "code": 48}, {"kind": "xid", "gpu": 1, "code": 63}]},
        "app01": {"faults": [{"kind": "xid", "gpu": 0, "code": 13}]},
        "reboot01": {"faults": [{"kind": "xid", "gpu": 6, "code": 154,
                                 "text": "GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)"}]},
        "nojournal01": {"faults": ["no_journal", {"kind": "xid", "gpu": 2, "code": 119}]},
        "hang01": {"faults": [{"kind": "hang", "tool": "journalctl"}, {"kind": "xid", "gpu": 5, "code": 79}]},
    },
}


def labctl(*args):
    return subprocess.run([sys.executable, str(LABCTL), *map(str, args)], capture_output=True, text=True, timeout=60)


def up(tmp_path, scenario):
    path = tmp_path / "scenario.yml"
    path.write_text(yaml.safe_dump(scenario, sort_keys=False))
    run_dir, inv = tmp_path / "run", tmp_path / "hosts.yml"
    return labctl("up", "--scenario", path, "--dir", run_dir, "--inventory", inv), inv


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    res, inv = up(tmp_path_factory.mktemp("klog"), SCENARIO)
    assert res.returncode == 0, res.stderr
    return yaml.safe_load(inv.read_text())["all"]["children"]["gpu_nodes"]["hosts"]


def tool(lab, node, name, *args, timeout=20):
    return subprocess.run([lab[node]["zhisuan_tools"][name], *args], capture_output=True, text=True, timeout=timeout)


def journal(lab, node, *extra):
    res = tool(lab, node, "journalctl", *(JOURNAL + ["--since=-24h"] + list(extra)))
    assert (res.returncode, res.stderr) == (0, "")
    return res.stdout.splitlines()


def run_module(args, capsys):
    with patch_module_args(args):
        with pytest.raises(SystemExit) as info:
            xid_info.main()
    return info.value.code, json.loads(capsys.readouterr().out)


# ------------------------------------------------------------------------------------- healthy node

def test_wrappers_for_both_tools(lab):
    tools = lab["healthy01"]["zhisuan_tools"]
    assert {"journalctl", "dmesg"} <= set(tools)
    assert all(Path(tools[name]).is_file() for name in ("journalctl", "dmesg"))


def test_healthy_journal_is_the_real_capture(lab):
    lines = journal(lab, "healthy01")
    assert len(lines) == len(BASE) == 47
    parsed = [JOURNAL_RE.match(line).groups() for line in lines]
    assert [message for _, _, message in parsed] == BASE_MESSAGES
    assert set(host for _, host, _ in parsed) == {"healthy01"}
    assert xid.parse("\n".join(lines))["events"] == []


def test_healthy_dmesg_is_the_real_capture(lab):
    res = tool(lab, "healthy01", "dmesg", *DMESG)
    assert res.returncode == 0
    parsed = [DMESG_RE.match(line).groups() for line in res.stdout.splitlines()]
    assert [message for _, _, _, message in parsed] == BASE_MESSAGES
    assert set(level for level, _, _, _ in parsed) == {"info  "}
    # wall clock = boot + the record's microseconds since boot, the last record falling on a whole second
    assert [int(micro) for _, _, micro, _ in parsed] == [(usec - BASE_USEC[-1]) % 1000000 for usec in BASE_USEC]


# -------------------------------------------------------------------------------------- xid faults

def test_xid_line_is_the_real_line_edited(lab):
    last = journal(lab, "fallen01")[-1]
    assert JOURNAL_RE.match(last).group(3) == (
        "NVRM: Xid (PCI:0000:4e:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.")
    app = journal(lab, "app01")[-1]
    assert JOURNAL_RE.match(app).group(3) == TEMPLATE.split("+00:00 ", 1)[1].replace("PCI:0000:38:00", "PCI:0000:07:00")


def test_xid_lines_follow_the_capture_a_second_apart(lab):
    res = tool(lab, "dbe01", "dmesg", *DMESG)
    lines = res.stdout.splitlines()
    assert len(lines) == 49
    assert [DMESG_RE.match(line).group(4) for line in lines[:47]] == BASE_MESSAGES
    tail = [DMESG_RE.match(line).groups() for line in lines[-3:]]
    assert [level for level, _, _, _ in tail] == ["info  ", "warn  ", "warn  "]
    assert tail[1][3].startswith("NVRM: Xid (PCI:0000:0f:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable")
    assert tail[2][3] == "NVRM: Xid (PCI:0000:0f:00): 63, pid=1896, Row Remapper: New row marked for remapping, reset gpu to activate."
    # the Xid lines come one second after the capture's last line, each
    seconds = [datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S") for _, stamp, _, _ in tail]
    assert [(b - a).total_seconds() for a, b in zip(seconds, seconds[1:])] == [1.0, 1.0]
    assert [micro for _, _, micro, _ in tail] == ["000000"] * 3
    events = xid.parse("\n".join(lines))["events"]
    assert [(e["code"], e["pci_bus_id"]) for e in events] == [(48, "0000:0F:00.0"), (63, "0000:0F:00.0")]


@pytest.mark.parametrize("node, code, status, remedy, needle", [
    ("fallen01", 79, "fail", "power_cycle", "bucket RESTART_BM"),
    ("dbe01", 48, "fail", "reset_gpu", "DRAIN_AND_RESET per the catalog"),
    ("app01", 13, "warn", "restart_app", "not a node fault by itself"),
    ("reboot01", 154, "fail", "reboot", "0x2 (Node Reboot Required)"),
])
def test_faults_are_found_by_the_rules(lab, node, code, status, remedy, needle):
    parsed = xid.parse("\n".join(journal(lab, node)))
    checks = judge_xid(node, dict(parsed, source="journalctl", since="-24h"), load_catalog())
    check = [c for c in checks if c["id"] == "xid.%d.events" % code][0]
    assert (check["status"], check["remedy"]) == (status, remedy)
    assert needle in check["message"]


def test_healthy_node_has_only_the_log_check(lab):
    parsed = xid.parse("\n".join(journal(lab, "healthy01")))
    checks = judge_xid("healthy01", dict(parsed, source="journalctl", since="-24h"), load_catalog())
    assert [(c["id"], c["status"]) for c in checks] == [("xid.log.readable", "pass")]


# ---------------------------------------------------------------------------- the tools' behaviour

def test_since_window(lab):
    assert tool(lab, "fallen01", "journalctl", *(JOURNAL + ["--since=-30s"])).stdout == "-- No entries --\n"
    recent = tool(lab, "fallen01", "journalctl", *(JOURNAL + ["--since", "-5min"])).stdout.splitlines()
    assert 1 <= len(recent) < 48 and "): 79, " in recent[-1]
    everything = tool(lab, "fallen01", "journalctl", *JOURNAL).stdout.splitlines()
    assert len(everything) == 48

    def since(text):
        return tool(lab, "fallen01", "journalctl", *(JOURNAL + ["--since=" + text])).stdout

    assert since("2020-01-01").count("\n") == since("2020-01-01 10:00").count("\n") == 48
    assert since("2099-01-01 10:00:00") == "-- No entries --\n"
    assert "): 79, " in since("-1h 2min").splitlines()[-1]


def test_journalctl_refuses_a_bad_time(lab):
    res = tool(lab, "healthy01", "journalctl", *(JOURNAL + ["--since=bogus"]))
    assert (res.returncode, res.stdout, res.stderr) == (1, "", "Failed to parse timestamp: bogus\n")


def test_no_journal(lab):
    res = tool(lab, "nojournal01", "journalctl", *JOURNAL)
    assert (res.returncode, res.stdout, res.stderr) == (0, "-- No entries --\n", "No journal files were found.\n")


@pytest.mark.parametrize("args, message", [
    ([], "lab journalctl/dmesg: unsupported arguments: (none) (the lab implements journalctl _TRANSPORT=kernel (or -k) "
         "-o short-iso[-precise] [--no-pager] [--since=TIME]; dmesg --decode --time-format=iso)\n"),
    (["-k", "-o", "json"], "lab journalctl: unsupported arguments: -k -o json (the lab implements only "
                           "_TRANSPORT=kernel (or -k) -o short-iso[-precise] [--no-pager] [--since=TIME])\n"),
    (["--decode"], "lab dmesg: unsupported arguments: --decode (the lab implements only --decode --time-format=iso)\n"),
])
def test_unsupported_arguments(lab, args, message):
    res = tool(lab, "healthy01", "dmesg", *args)
    assert (res.returncode, res.stdout, res.stderr) == (2, "", message)


# --------------------------------------------------------------------------------- the module on it

def test_module_reads_the_lab_journal(lab, capsys):
    tools = lab["fallen01"]["zhisuan_tools"]
    code, out = run_module({"journalctl_path": tools["journalctl"], "dmesg_path": tools["dmesg"]}, capsys)
    assert code == 0
    facts = out["xid"]
    assert (facts["source"], facts["lines"], facts["fallback"]) == ("journalctl", 48, None)
    assert [(e["code"], e["pci_bus_id"]) for e in facts["events"]] == [(79, "0000:4E:00.0")]


def test_module_falls_back_when_the_lab_node_has_no_journal(lab, capsys):
    tools = lab["nojournal01"]["zhisuan_tools"]
    code, out = run_module({"journalctl_path": tools["journalctl"], "dmesg_path": tools["dmesg"]}, capsys)
    assert code == 0
    assert (out["xid"]["source"], out["xid"]["fallback"]) == (
        "dmesg", "journalctl: shows no kernel messages: No journal files were found.")
    assert [(e["code"], e["pci_bus_id"]) for e in out["xid"]["events"]] == [(119, "0000:47:00.0")]


def test_module_falls_back_when_journalctl_hangs(lab, capsys):
    tools = lab["hang01"]["zhisuan_tools"]
    code, out = run_module({"journalctl_path": tools["journalctl"], "dmesg_path": tools["dmesg"], "timeout": 2}, capsys)
    assert code == 0
    assert (out["xid"]["source"], out["xid"]["fallback"]) == (
        "dmesg", "journalctl: timed out after 2 s (process group killed)")
    assert [e["code"] for e in out["xid"]["events"]] == [79]


# ------------------------------------------------------------------------------- scenario checks

@pytest.mark.parametrize("fault, message", [
    ({"kind": "xid", "gpu": 8, "code": 79}, "fault 'xid' names gpu 8, the node has GPUs 0..7"),
    ({"kind": "xid", "gpu": 0, "code": 64}, "fault 'xid' code 64 needs a 'text': the lab has real message texts only "
                                            "for Xid 13, 43, 48, 63, 79, 119, 154"),
    ({"kind": "xid", "gpu": 0, "code": -1, "text": "x"}, "fault 'xid' code must be >= 0, got -1"),
    ({"kind": "xid", "gpu": 0}, "fault 'xid' is missing parameter(s) ['code']"),
])
def test_bad_faults_fail_at_up(tmp_path, fault, message):
    res, _ = up(tmp_path, {"nodes": {"n1": {"faults": [fault]}}})
    assert res.returncode != 0
    assert res.stderr.startswith("labctl: error: scenario ")
    assert res.stderr.rstrip("\n").endswith("node n1: faults[0]: " + message)


def test_a_code_with_text_needs_no_default(tmp_path):
    res, inv = up(tmp_path, {"nodes": {"n1": {"faults": [
        {"kind": "xid", "gpu": 0, "code": 64, "text": "pid=1896, Row Remapper: remapping failure"}]}}})
    assert res.returncode == 0, res.stderr
    hosts = yaml.safe_load(inv.read_text())["all"]["children"]["gpu_nodes"]["hosts"]
    last = tool(hosts, "n1", "journalctl", *JOURNAL).stdout.splitlines()[-1]
    assert last.endswith("kernel: NVRM: Xid (PCI:0000:07:00): 64, pid=1896, Row Remapper: remapping failure")


def test_times_are_stable_across_calls(lab):
    # the burn-in's stability watch compares the log before and after: a running lab must not move its own events
    first = tool(lab, "fallen01", "dmesg", *DMESG).stdout
    assert first and tool(lab, "fallen01", "dmesg", *DMESG).stdout == first
    journal = tool(lab, "fallen01", "journalctl", *JOURNAL).stdout
    assert tool(lab, "fallen01", "journalctl", *JOURNAL).stdout == journal


# ----------------------------------------------------------------- after_s and log_later (issue 24 items 7-8)

def test_xid_lines_keep_their_spacing_and_the_log_runs_on_after_them(tmp_path):
    scenario = {"name": "spacing", "defaults": {"model": "a100", "gpus": 8}, "nodes": {"n1": {"faults": [
        {"kind": "xid", "gpu": 0, "code": 13}, {"kind": "xid", "gpu": 0, "code": 13, "after_s": 60},
        {"kind": "log_later", "after_s": 7200}]}}}
    res, inv = up(tmp_path, scenario)
    assert res.returncode == 0, res.stderr
    hosts = yaml.safe_load(inv.read_text())["all"]["children"]["gpu_nodes"]["hosts"]
    out = tool(hosts, "n1", "dmesg", *DMESG).stdout
    events = xid.parse(out)["events"]
    times = [xid.time_key(event)[1] for event in events]
    assert len(events) == 2 and round(times[1] - times[0], 3) == 60.0
    shape = xid.log_shape(out)
    assert round(xid.time_key(shape["log_end"])[1] - times[1], 3) == 7200.0
    # the record the log runs on with is the base capture's own last one
    assert out.splitlines()[-1].endswith(BASE_MESSAGES[-1])
    facts = dict(xid.parse(out), source="dmesg", since=None, **shape)
    [check] = [c for c in judge_xid("n1", facts, load_catalog()) if c["id"] == "xid.13.events"]
    assert (check["status"], check["remedy"]) == ("warn", "investigate")  # the same place twice: never cleared


@pytest.mark.parametrize("fault,message", [
    ({"kind": "xid", "gpu": 0, "code": 13, "after_s": 0}, "fault 'xid' after_s must be > 0"),
    ({"kind": "log_later", "after_s": -1}, "fault 'log_later' after_s must be > 0"),
])
def test_spacing_that_cannot_be_is_refused_at_up(tmp_path, fault, message):
    res, _inv = up(tmp_path, {"name": "bad", "defaults": {"model": "a100", "gpus": 8},
                              "nodes": {"n1": {"faults": [fault]}}})
    assert res.returncode != 0 and message in res.stderr
