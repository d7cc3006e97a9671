# SPDX-License-Identifier: GPL-3.0-or-later
"""The subprocess seam, with real processes: timeouts kill the whole group, errors are typed."""

from __future__ import annotations

import os
import stat
import time

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError, ToolFailed, ToolNotFound, ToolTimeout
from ansible_collections.zhisuan.ops.plugins.module_utils._runner import attach, clip, first_line, run, tool_failed


def _script(tmp_path, name, body):
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_runs_with_c_locale_and_returns_output(tmp_path):
    prog = _script(tmp_path, "loc", 'echo "$LANG $LC_ALL"; echo err >&2\n')
    result = run([prog], timeout=5, env={"LANG": "zh_CN.UTF-8"})
    assert result.rc == 0
    assert result.stdout == "C C\n"
    assert result.stderr == "err\n"


def test_not_found_in_path_names_the_tool():
    with pytest.raises(ToolNotFound) as info:
        run(["zhisuan-no-such-program"], timeout=5, tool="nvidia-smi")
    assert str(info.value).startswith("nvidia-smi: zhisuan-no-such-program not found in PATH")
    assert info.value.kind == "not_found"


def test_not_found_at_path(tmp_path):
    with pytest.raises(ToolNotFound) as info:
        run([str(tmp_path / "missing")], timeout=5, tool="dcgmi")
    assert str(info.value) == "dcgmi: not found at %s" % (tmp_path / "missing")


def test_not_executable(tmp_path):
    path = tmp_path / "plain"
    path.write_text("echo hi\n")
    with pytest.raises(ToolNotFound, match="is not executable"):
        run([str(path)], timeout=5)


def test_failure_keeps_cmd_rc_and_streams(tmp_path):
    prog = _script(tmp_path, "fail", 'echo "NVIDIA-SMI has failed"; exit 9\n')
    with pytest.raises(ToolFailed) as info:
        run([prog, "-q"], timeout=5, tool="nvidia-smi")
    err = info.value
    assert err.rc == 9
    assert err.cmd == [prog, "-q"]
    assert err.stdout == "NVIDIA-SMI has failed\n"
    assert str(err) == "nvidia-smi: exited with rc 9: NVIDIA-SMI has failed"
    assert err.as_dict()["error_kind"] == "failed"


def test_ok_rcs_accepts_listed_codes(tmp_path):
    prog = _script(tmp_path, "rc1", "exit 1\n")
    assert run([prog], timeout=5, ok_rcs=(0, 1)).rc == 1
    assert run([prog], timeout=5, ok_rcs=None).rc == 1


def test_timeout_kills_the_whole_process_group(tmp_path):
    pidfile = tmp_path / "child.pid"
    # the shell starts a grandchild that would outlive a plain kill of the shell
    prog = _script(tmp_path, "hang", 'sleep 300 & echo $! > %s; wait\n' % pidfile)
    start = time.monotonic()
    with pytest.raises(ToolTimeout) as info:
        run([prog], timeout=1, tool="nvidia-smi")
    assert time.monotonic() - start < 10
    assert str(info.value) == "nvidia-smi: timed out after 1 s (process group killed)"
    grandchild = int(pidfile.read_text())
    for _ in range(50):
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            break
        # a zombie until reaped by init counts as gone for our purpose
        try:
            with open("/proc/%d/stat" % grandchild) as handle:
                if handle.read().split(")")[1].split()[0] == "Z":
                    break
        except (FileNotFoundError, ProcessLookupError):  # reaped since the kill(0) above
            break
        time.sleep(0.1)
    else:
        pytest.fail("grandchild %d survived the timeout" % grandchild)


def test_stdin_data(tmp_path):
    prog = _script(tmp_path, "cat", "cat\n")
    assert run([prog], timeout=5, data="hello").stdout == "hello"


@pytest.mark.parametrize("timeout", [0, -1, None])
def test_a_timeout_is_required(timeout):
    with pytest.raises(ValueError, match="a positive timeout is required"):
        run(["true"], timeout=timeout)


def test_cwd_is_the_programs_not_ours(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    prog = _script(tmp_path, "pwd", "pwd\n")
    before = os.getcwd()
    assert run([prog], timeout=5, cwd=str(work)).stdout == "%s\n" % work
    assert os.getcwd() == before


def test_clip_keeps_the_head_or_the_tail_and_says_how_much_was_cut():
    text = "a" * 1500 + "b" * 1500
    assert clip(text) == "a" * 1500 + "b" * 500 + "\n[... 1000 more characters]"
    assert clip(text, tail=True) == "[... 1000 characters before]\n" + "a" * 500 + "b" * 1500
    assert clip("short") == "short" and clip(None) is None
    assert clip("abcdef", keep=4) == "abcd\n[... 2 more characters]"


def test_first_line_is_the_first_non_blank_line_of_the_first_text_that_has_one():
    assert first_line("\n  \n", None, "  \n second stream \nmore") == "second stream"
    assert first_line("", None) == "no output"


def test_tool_failed_is_built_from_the_run_with_clipped_streams(tmp_path):
    prog = _script(tmp_path, "noisy", 'printf "%03000d" 0; echo " late reason" >&2; exit 3\n')
    result = run([prog, "--x"], timeout=5, ok_rcs=None)
    err = tool_failed(result, "fio")
    assert isinstance(err, ToolFailed)
    assert (str(err), err.cmd, err.rc) == ("fio: exited with rc 3: late reason", [prog, "--x"], 3)
    assert err.stdout == "0" * 2000 + "\n[... 1000 more characters]" and err.stderr == " late reason\n"
    tail = tool_failed(result, "ib_write_bw", "exited with rc 3", tail=True, error=ParseError)
    assert (type(tail), str(tail)) == (ParseError, "ib_write_bw: exited with rc 3")
    assert tail.stdout == "[... 1000 characters before]\n" + "0" * 2000
    assert tool_failed(result).tool == "noisy"


def test_attach_gives_a_parse_error_the_run_it_came_from(tmp_path):
    prog = _script(tmp_path, "half", 'echo "{ not json"\n')
    result = run([prog], timeout=5)
    err = attach(ParseError("fio", "no JSON report"), result)
    assert err.as_dict() == {"error_kind": "unparsable", "tool": "fio", "msg": "fio: no JSON report", "cmd": [prog], "rc": 0,
                             "stdout": "{ not json\n", "stderr": ""}
