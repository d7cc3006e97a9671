# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The seam's bounded reads, with real processes: a program that prints without end is stopped at its output cap
with a typed error, the module's memory stays bounded, and a streamed stdout reaches its filter line by line."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import textwrap
import time

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils import _runner
from ansible_collections.zhisuan.ops.plugins.module_utils._base import failure_fields
from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ToolOutputTooLarge
from ansible_collections.zhisuan.ops.plugins.module_utils._runner import MIB, output_limit, run, set_output_limit

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
COLLECTIONS = os.path.join(ROOT, "collections")


def _script(tmp_path, name, body):
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


@pytest.fixture(autouse=True)
def _no_override():
    set_output_limit(None)
    yield
    set_output_limit(None)


def _gone(pid):
    for _ in range(50):
        try:
            with open("/proc/%d/stat" % pid) as handle:
                if handle.read().split(")")[1].split()[0] == "Z":
                    return True
        except (FileNotFoundError, ProcessLookupError):
            return True
        time.sleep(0.1)
    return False


def test_endless_output_stops_at_the_cap_with_a_typed_error_and_the_group_killed(tmp_path):
    pidfile = tmp_path / "yes.pid"
    # yes runs as a grandchild: a kill of the shell alone would leave it printing
    prog = _script(tmp_path, "storm", "yes 'NVRM: unrelated storm line' & echo $! > %s; wait\n" % pidfile)
    with pytest.raises(ToolOutputTooLarge) as info:
        run([prog], timeout=30, tool="journalctl", max_output=MIB)
    err = info.value
    assert str(err) == "journalctl: output over 1 MiB (process group killed); raise max_output if this much is expected"
    assert err.kind == "output_too_large" and err.limit == MIB and err.cmd == [prog]
    assert err.stdout.startswith("NVRM: unrelated storm line\nNVRM: unrelated storm line\n")
    assert err.stdout.endswith("more characters]")
    assert _gone(int(pidfile.read_text())), "the printing grandchild survived the cap"
    fields = failure_fields(err)
    assert (fields["error_kind"], fields["tool"], fields["limit"]) == ("output_too_large", "journalctl", MIB)


def test_stderr_counts_against_the_cap(tmp_path):
    prog = _script(tmp_path, "errstorm", "yes oops >&2\n")
    with pytest.raises(ToolOutputTooLarge) as info:
        run([prog], timeout=30, tool="dcgmi", max_output=256 * 1024)
    assert str(info.value).startswith("dcgmi: output over 0.25 MiB")
    assert info.value.stderr.startswith("oops\noops\n") and info.value.stdout == ""


def test_output_under_the_cap_is_returned_whole(tmp_path):
    prog = _script(tmp_path, "some", "head -c 300000 /dev/zero | tr '\\000' x; echo; echo done >&2\n")
    result = run([prog], timeout=30, max_output=400000)
    assert result.stdout == "x" * 300000 + "\n" and result.stderr == "done\n"


def test_caps_per_tool_caller_and_user():
    # the table: a kernel log and nvidia-smi -q -x may print far more than ethtool
    assert output_limit("journalctl") > output_limit("ethtool")
    assert output_limit("nvidia-smi") > output_limit("ethtool")
    assert output_limit("ethtool") == _runner.MAX_OUTPUT_MIB["ethtool"] * MIB
    assert output_limit("zhisuan-unknown-tool") == _runner.DEFAULT_MAX_OUTPUT_MIB * MIB
    # the caller's per-call cap, then the user's override over both
    assert output_limit("ethtool", max_output=12345) == 12345
    set_output_limit(3)
    assert output_limit("ethtool", max_output=12345) == 3 * MIB == output_limit("journalctl")
    set_output_limit(None)
    assert output_limit("journalctl") == _runner.MAX_OUTPUT_MIB["journalctl"] * MIB


@pytest.mark.parametrize("bad", [0, -1, True, "8"])
def test_a_bad_user_cap_is_refused(bad):
    with pytest.raises(ValueError, match="max_output must be a positive number of MiB"):
        set_output_limit(bad)


def test_the_user_cap_applies_to_the_next_run(tmp_path):
    prog = _script(tmp_path, "yes", "yes\n")
    set_output_limit(1)
    with pytest.raises(ToolOutputTooLarge, match="^ethtool: output over 1 MiB"):
        run([prog], timeout=30, tool="ethtool", max_output=64 * MIB)


def test_streamed_stdout_reaches_the_filter_line_by_line(tmp_path):
    prog = _script(tmp_path, "lines", "printf 'one\\n\\nthree\\r\\nno newline'; echo err >&2\n")
    seen = []
    result = run([prog], timeout=10, on_line=seen.append)
    assert seen == ["one", "", "three\r", "no newline"]
    assert result.stdout == "one\n\nthree\r\nno newline" and result.stderr == "err\n"


def test_a_stream_holds_only_a_partial_line_against_the_cap(tmp_path):
    # 8 MiB of lines through a 1 MiB cap: the filter sees them all; a line longer than the cap is what stops it
    prog = _script(tmp_path, "many", "yes 'a kernel line' | head -n 600000\n")
    count = [0]

    def count_line(line):
        count[0] += 1

    result = run([prog], timeout=60, max_output=MIB, on_line=count_line)
    assert count[0] == 600000 and len(result.stdout) == _runner._STREAM_HEAD
    endless = _script(tmp_path, "oneline", "cat /dev/zero\n")
    with pytest.raises(ToolOutputTooLarge, match="output over 1 MiB"):
        run([endless], timeout=30, max_output=MIB, on_line=count_line)


def test_a_timeout_still_applies_to_a_quiet_program(tmp_path):
    prog = _script(tmp_path, "quiet", "sleep 30\n")
    with pytest.raises(_runner.ToolTimeout):
        run([prog], timeout=1, on_line=lambda line: None)


PEAK_CHILD = textwrap.dedent("""
    import sys
    from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ToolOutputTooLarge
    from ansible_collections.zhisuan.ops.plugins.module_utils._runner import run
    try:
        run([sys.argv[1]], timeout=120, tool=sys.argv[2])
        print("no error")
    except ToolOutputTooLarge as exc:
        print(exc.message)
    with open("/proc/self/status") as handle:
        print([line.split()[1] for line in handle if line.startswith("VmHWM:")][0])
""")


def test_the_modules_peak_memory_stays_bounded_for_an_endless_tool():
    # before the cap, `yes` read until the timeout cost the module 2-3 bytes per byte printed (GiB in seconds)
    child = subprocess.run([sys.executable, "-c", PEAK_CHILD, shutil.which("yes"), "journalctl"], capture_output=True,
                           text=True, timeout=180, env=dict(os.environ, PYTHONPATH=COLLECTIONS))
    assert child.returncode == 0, child.stderr
    message, peak_kib = child.stdout.split("\n")[:2]
    assert message.startswith("journalctl: output over %d MiB" % _runner.MAX_OUTPUT_MIB["journalctl"])
    assert int(peak_kib) < 200 * 1024, "peak RSS %s KiB" % peak_kib
