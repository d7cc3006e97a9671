# SPDX-License-Identifier: GPL-3.0-or-later
"""The subprocess seam stops its tools with the module: a module process that gets SIGINT, SIGTERM or SIGHUP
(Ansible's worker passes its signal to its process group; a dropped SSH session hangs up) kills the tool's whole
process group, which runs in a session of its own, instead of leaving it to init. Real processes, real signals."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time

import pytest

COLLECTIONS = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "collections"))


def _running(pid):
    """True while ``pid`` runs (a zombie does not count)."""
    try:
        with open("/proc/%d/stat" % pid, encoding="ascii", errors="replace") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait_for(predicate, seconds=10.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def _module(tmp_path, prologue=""):
    """A module-like process that runs a tool (a shell and its sleeping child, one process group) through run()."""
    tool = tmp_path / "tool"
    tool.write_text("#!/bin/sh\necho $$ > %s/tool.pid\nsleep 120 &\necho $! > %s/child.pid\nwait\n" % (tmp_path, tmp_path))
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    code = "\n".join([
        "import os, signal, sys",
        "sys.path.insert(0, %r)" % COLLECTIONS,
        "from ansible_collections.zhisuan.ops.plugins.module_utils._runner import run",
        # the test's own starter may run under nohup (SIGHUP ignored, inherited) or in a shell's background job
        # (SIGINT ignored, inherited, so Python installs no KeyboardInterrupt handler): the module starts with the
        # default dispositions unless the prologue says otherwise
        "signal.signal(signal.SIGHUP, signal.SIG_DFL)",
        "signal.signal(signal.SIGINT, signal.default_int_handler)",
        prologue,
        "run([%r], timeout=60)" % str(tool),
    ])
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert _wait_for(lambda: (tmp_path / "child.pid").exists() and (tmp_path / "child.pid").read_text().strip()), \
        proc.stderr.read() if proc.poll() is not None else "the tool did not start"
    pids = [int((tmp_path / name).read_text()) for name in ("tool.pid", "child.pid")]
    return proc, pids


def _reap(pids):
    for pid in pids:
        if _running(pid):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_to_the_module_kills_the_tools_process_group(tmp_path, signum):
    proc, pids = _module(tmp_path)
    try:
        assert all(_running(pid) for pid in pids)
        proc.send_signal(signum)
        proc.wait(timeout=20)
        # the module still dies of its signal (SIGINT: an uncaught KeyboardInterrupt, which Python ends with SIGINT),
        # and the tool with it
        assert proc.returncode == -signum
        assert _wait_for(lambda: not any(_running(pid) for pid in pids)), "tool processes left running: %s" % pids
    finally:
        _reap(pids)


def test_a_previous_handler_still_runs_after_the_tools_are_killed(tmp_path):
    marker = tmp_path / "handled"
    prologue = ("def handler(signum, frame):\n"
                "    open(%r, 'w').write(str(signum))\n"
                "    os._exit(7)\n"
                "signal.signal(signal.SIGTERM, handler)") % str(marker)
    proc, pids = _module(tmp_path, prologue)
    try:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)
        assert proc.returncode == 7
        assert marker.read_text() == str(int(signal.SIGTERM))
        assert _wait_for(lambda: not any(_running(pid) for pid in pids))
    finally:
        _reap(pids)


def test_an_ignored_sighup_stops_nothing(tmp_path):
    # nohup: SIGHUP ignored; neither the module nor its tool stops on it
    proc, pids = _module(tmp_path, "signal.signal(signal.SIGHUP, signal.SIG_IGN)")
    try:
        proc.send_signal(signal.SIGHUP)
        time.sleep(0.5)
        assert proc.poll() is None
        assert all(_running(pid) for pid in pids)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)
        assert _wait_for(lambda: not any(_running(pid) for pid in pids))
    finally:
        proc.kill() if proc.poll() is None else None
        _reap(pids)


# --- the controller gone: no signal, only the module's output closed (a cut run over SSH) ------------------------

def _orphan_module(tmp_path, tools=1):
    """A module-like process whose stdout is a pipe we hold (as the worker or sshd holds it); it runs the tool, then
    tries another, and writes what each call raised to a file."""
    tool = tmp_path / "tool"
    tool.write_text("#!/bin/sh\necho $$ > %s/tool.pid\nsleep 120 &\necho $! > %s/child.pid\nwait\n"
                    % (tmp_path, tmp_path))
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    code = "\n".join([
        "import os, sys",
        "sys.path.insert(0, %r)" % COLLECTIONS,
        "from ansible_collections.zhisuan.ops.plugins.module_utils._runner import run, ControllerGone",
        "seen = []",
        "for dummy in range(%d):" % tools,
        "    try:",
        "        run([%r], timeout=60)" % str(tool),
        "        seen.append('returned')",
        "    except ControllerGone as exc:",
        "        seen.append(str(exc))",
        "open(%r, 'w').write('\\n'.join(seen))" % str(tmp_path / "seen"),
    ])
    read_end, write_end = os.pipe()
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=write_end, stderr=subprocess.PIPE)
    os.close(write_end)
    assert _wait_for(lambda: (tmp_path / "child.pid").exists() and (tmp_path / "child.pid").read_text().strip()), \
        proc.stderr.read() if proc.poll() is not None else "the tool did not start"
    pids = [int((tmp_path / name).read_text()) for name in ("tool.pid", "child.pid")]
    return proc, pids, read_end


def test_a_module_whose_output_is_closed_stops_its_tool_and_starts_no_other(tmp_path):
    proc, pids, read_end = _orphan_module(tmp_path, tools=2)
    try:
        time.sleep(1.0)
        assert all(_running(pid) for pid in pids)  # a reader there: the tool runs on
        os.close(read_end)  # the worker, or the SSH session, is gone
        proc.wait(timeout=20)
        assert proc.returncode == 0, proc.stderr.read()
        assert _wait_for(lambda: not any(_running(pid) for pid in pids)), "tool processes left running: %s" % pids
        seen = (tmp_path / "seen").read_text().splitlines()
        assert len(seen) == 2
        assert seen[0].startswith("tool: stopped (process group killed): nothing reads this module's output any more")
        assert seen[1].startswith("tool: not started: nothing reads this module's output any more")
    finally:
        _reap(pids)


def test_a_module_writing_to_a_file_is_never_taken_for_orphaned(tmp_path):
    from ansible_collections.zhisuan.ops.plugins.module_utils._runner import controller_gone

    with open(tmp_path / "out", "w") as handle:
        assert controller_gone(handle.fileno()) is False
    read_end, write_end = os.pipe()
    try:
        assert controller_gone(write_end) is False
        os.close(read_end)
        assert controller_gone(write_end) is True
    finally:
        os.close(write_end)
    assert controller_gone(write_end) is False  # a closed descriptor is not a reader gone
