# SPDX-License-Identifier: GPL-3.0-or-later
"""zhisuan.ops.xid_info as Ansible runs it: arguments in, exit_json/fail_json out, with real programs behind the
seam (shell scripts that print a real kernel log capture, fail, hang, or print what journalctl prints when the node
keeps no journal)."""

from __future__ import annotations

import datetime
import json
import os
import re
import stat
import time

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.zhisuan.ops.plugins.modules import xid_info

pytestmark = pytest.mark.usefixtures("as_node")

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "kernel-log")
LARGE = os.path.join(FIXTURES, "dmesg-decode-iso-xid13-xid43-large.log")
CTIME_119 = os.path.join(FIXTURES, "dmesg-ctime-xid119-gsp-rpc-timeout-xe9680.log")
JOURNAL_ARGS = ["_TRANSPORT=kernel", "-o", "short-iso", "--no-pager"]


def _program(tmp_path, name, body):
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def _journal_capture(tmp_path):
    """The real ctime capture with each "[Sun Feb 23 16:24:18 2025] " prefix edited into journalctl -o short-iso's
    "2025-02-23T16:24:18+0000 xe9680 kernel: " (systemd 252; see test_xid.as_journal_short_iso)."""
    out = []
    with open(CTIME_119, encoding="utf-8") as handle:
        for line in handle.read().splitlines():
            stamp, message = re.match(r"^\[(.{24})\] (.*)$", line).groups()
            when = time.strftime("%Y-%m-%dT%H:%M:%S", time.strptime(stamp, "%a %b %d %H:%M:%S %Y"))
            out.append("%s+0000 xe9680 kernel: %s\n" % (when, message))
    path = tmp_path / "journal-short-iso.txt"
    path.write_text("".join(out))
    return str(path)


def _run(args, capsys):
    with patch_module_args(args):
        with pytest.raises(SystemExit) as info:
            xid_info.main()
    out = json.loads(capsys.readouterr().out)
    return info.value.code, out


def _calls(path):
    return path.read_text().splitlines() if path.exists() else []


def test_journalctl_is_asked_for_the_kernel_transport(tmp_path, capsys):
    calls = tmp_path / "calls"
    journal = _program(tmp_path, "journalctl", 'echo "$@" >> %s\ncat %s\n' % (calls, _journal_capture(tmp_path)))
    code, out = _run({"journalctl_path": journal, "dmesg_path": "/nonexistent/dmesg"}, capsys)
    assert code == 0
    assert out["changed"] is False
    assert _calls(calls) == ["_TRANSPORT=kernel -o short-iso --no-pager --since=-24h"]
    facts = out["xid"]
    assert (facts["source"], facts["since"], facts["lines"], facts["fallback"]) == ("journalctl", "-24h", 43, None)
    assert facts["command"] == [journal] + JOURNAL_ARGS + ["--since=-24h"]
    assert [(e["code"], e["pci_bus_id"], e["time"], e["pid"], e["process"]) for e in facts["events"]] == [
        (119, "0000:9B:00.0", "2025-02-23T16:24:18+00:00", 2024380, "nvidia-smi"),
        (119, "0000:9B:00.0", "2025-02-23T16:24:24+00:00", 2024380, "nvidia-smi"),
        (119, "0000:9B:00.0", "2025-02-23T16:24:30+00:00", 2024380, "nvidia-smi"),
        (119, "0000:9B:00.0", "2025-02-23T16:27:12+00:00", 1263500, "cache_mgr_main"),
        (119, "0000:9B:00.0", "2025-02-23T16:30:13+00:00", 1240590, "gpud"),
    ]
    assert (facts["outside_window"], facts["unparsed"]) == (0, [])


def test_since_is_passed_through_and_empty_means_everything(tmp_path, capsys):
    calls = tmp_path / "calls"
    journal = _program(tmp_path, "journalctl", 'echo "$@" >> %s\ncat %s\n' % (calls, _journal_capture(tmp_path)))
    _run({"journalctl_path": journal, "since": "yesterday"}, capsys)
    _run({"journalctl_path": journal, "since": ""}, capsys)
    assert _calls(calls) == ["_TRANSPORT=kernel -o short-iso --no-pager --since=yesterday",
                             "_TRANSPORT=kernel -o short-iso --no-pager"]


def test_missing_journalctl_falls_back_to_dmesg_and_applies_the_window(tmp_path, capsys):
    calls = tmp_path / "calls"
    dmesg = _program(tmp_path, "dmesg", 'echo "$@" >> %s\ncat %s\n' % (calls, LARGE))
    code, out = _run({"journalctl_path": "/nonexistent/journalctl", "dmesg_path": dmesg}, capsys)
    assert code == 0
    facts = out["xid"]
    assert _calls(calls) == ["--decode --time-format=iso"]
    assert (facts["source"], facts["since"], facts["lines"]) == ("dmesg", "-24h", 636)
    assert facts["fallback"] == "journalctl: not found at /nonexistent/journalctl"
    # the capture is from January 2025: every event is older than 24 hours
    assert (facts["events"], facts["outside_window"]) == ([], 636)
    code, out = _run({"journalctl_path": "/nonexistent/journalctl", "dmesg_path": dmesg, "since": ""}, capsys)
    assert (len(out["xid"]["events"]), out["xid"]["outside_window"], out["xid"]["since"]) == (636, 0, None)
    code, out = _run({"journalctl_path": "/nonexistent/journalctl", "dmesg_path": dmesg,
                      "since": "2025-01-21 04:00:00"}, capsys)
    # the window is the node's local time, the dmesg times carry their zone: count independently
    cutoff = time.mktime((2025, 1, 21, 4, 0, 0, 0, 0, -1))
    with open(LARGE, encoding="utf-8") as handle:
        stamps = [datetime.datetime.fromisoformat(line.split()[3].replace(",", ".")).timestamp()
                  for line in handle.read().splitlines()]
    kept = out["xid"]["events"]
    assert len(kept) == sum(1 for stamp in stamps if stamp >= cutoff)
    assert out["xid"]["outside_window"] == 636 - len(kept)


def test_no_journal_falls_back(tmp_path, capsys):
    # what systemd 252's journalctl prints on a node that keeps no journal (rc 0)
    journal = _program(tmp_path, "journalctl", "echo '-- No entries --'\necho 'No journal files were found.' >&2\n")
    dmesg = _program(tmp_path, "dmesg", "cat %s\n" % CTIME_119)
    code, out = _run({"journalctl_path": journal, "dmesg_path": dmesg, "since": ""}, capsys)
    assert code == 0
    assert out["xid"]["source"] == "dmesg"
    assert out["xid"]["fallback"] == "journalctl: shows no kernel messages: No journal files were found."
    assert [e["code"] for e in out["xid"]["events"]] == [119] * 5


def test_journalctl_timeout_falls_back(tmp_path, capsys):
    journal = _program(tmp_path, "journalctl", "sleep 60\n")
    dmesg = _program(tmp_path, "dmesg", "cat %s\n" % CTIME_119)
    code, out = _run({"journalctl_path": journal, "dmesg_path": dmesg, "timeout": 1, "since": ""}, capsys)
    assert code == 0
    assert out["xid"]["source"] == "dmesg"
    assert out["xid"]["fallback"] == "journalctl: timed out after 1 s (process group killed)"


def test_source_journalctl_does_not_fall_back(tmp_path, capsys):
    calls = tmp_path / "calls"
    journal = _program(tmp_path, "journalctl", "echo 'Failed to parse timestamp: x' >&2\nexit 1\n")
    dmesg = _program(tmp_path, "dmesg", 'echo dmesg >> %s\n' % calls)
    code, out = _run({"journalctl_path": journal, "dmesg_path": dmesg, "source": "journalctl"}, capsys)
    assert code == 1
    assert (out["error_kind"], out["tool"], out["rc"]) == ("failed", "journalctl", 1)
    assert out["msg"] == "journalctl: exited with rc 1: Failed to parse timestamp: x"
    assert _calls(calls) == []


def test_source_dmesg_skips_journalctl(tmp_path, capsys):
    calls = tmp_path / "calls"
    journal = _program(tmp_path, "journalctl", 'echo journalctl >> %s\n' % calls)
    dmesg = _program(tmp_path, "dmesg", 'echo dmesg >> %s\ncat %s\n' % (calls, CTIME_119))
    code, out = _run({"journalctl_path": journal, "dmesg_path": dmesg, "source": "dmesg", "since": ""}, capsys)
    assert code == 0
    assert _calls(calls) == ["dmesg"]
    assert (out["xid"]["source"], out["xid"]["fallback"], len(out["xid"]["events"])) == ("dmesg", None, 5)


def test_both_tools_fail(tmp_path, capsys):
    code, out = _run({"journalctl_path": "/nonexistent/journalctl", "dmesg_path": "/nonexistent/dmesg"}, capsys)
    assert code == 1
    assert (out["error_kind"], out["tool"], out["msg"]) == ("not_found", "dmesg", "dmesg: not found at /nonexistent/dmesg")


def test_saved_file(capsys):
    code, out = _run({"src": CTIME_119, "journalctl_path": "/nonexistent/journalctl"}, capsys)
    assert code == 0
    facts = out["xid"]
    assert (facts["source"], facts["since"], facts["lines"], facts["command"]) == ("file", None, 43, None)
    assert [e["time"] for e in facts["events"]] == ["2025-02-23T16:24:18", "2025-02-23T16:24:24",
                                                    "2025-02-23T16:24:30", "2025-02-23T16:27:12", "2025-02-23T16:30:13"]


def test_saved_file_with_a_window(capsys):
    # ctime stamps are the node's local time, and so is the window: the test holds in any time zone
    code, out = _run({"src": CTIME_119, "since": "2025-02-23 16:27:00"}, capsys)
    assert code == 0
    assert [e["time"] for e in out["xid"]["events"]] == ["2025-02-23T16:27:12", "2025-02-23T16:30:13"]
    assert out["xid"]["outside_window"] == 3


def test_missing_saved_file(tmp_path, capsys):
    path = str(tmp_path / "gone.log")
    code, out = _run({"src": path}, capsys)
    assert code == 1
    assert (out["error_kind"], out["msg"]) == (
        "not_found", "kernel log: cannot read saved log %s: No such file or directory" % path)


def test_bad_since(capsys):
    code, out = _run({"src": CTIME_119, "since": "last tuesday"}, capsys)
    assert code == 1
    assert out["msg"] == ("since 'last tuesday' is not a time window this module understands; use '-<N><unit>' "
                          "(s, min, h, d, w; e.g. -24h, -1h 30min), 'YYYY-MM-DD [HH:MM[:SS]]', today, yesterday")


def test_unreadable_xid_line_is_a_warning(tmp_path, capsys):
    with open(CTIME_119, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    bad = lines[2].replace("): 119, ", "): abc, ")
    src = tmp_path / "edited.log"
    src.write_text("\n".join(lines + [bad]) + "\n")
    code, out = _run({"src": str(src)}, capsys)
    assert code == 0
    assert out["xid"]["unparsed"] == [bad]
    warnings = [w["event"]["msg"] if isinstance(w, dict) else w for w in out["warnings"]]  # 2.19: WarningSummary
    assert warnings == ["kernel log line 44 mentions 'NVRM: Xid' but is not an Xid line this collection can "
                        "read; please report: %s" % bad]


def test_bad_source_choice(capsys):
    code, out = _run({"source": "syslog"}, capsys)
    assert code == 1
    assert out["msg"] == "value of source must be one of: auto, journalctl, dmesg, got: syslog"
