# SPDX-License-Identifier: GPL-3.0-or-later
"""SIGTERM and SIGHUP stop a run the way Ctrl-C does (plugin_utils/_run_record.py ``stop_on_signals``): the SIGINT
handler in place (Ansible's task queue manager's, which passes the signal to its workers and raises
KeyboardInterrupt) runs, and the run ends with SystemExit(128 + signal), so atexit still writes its record. Each case
runs in its own Python process with real signals."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

COLLECTIONS = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "collections"))

# a stand-in for Ansible's main process: a SIGINT handler like the task queue manager's (it records the call and
# raises KeyboardInterrupt), an atexit hook that writes what it saw, and a signal sent to itself mid-"run"
PROGRAM = r"""
import atexit, json, os, signal, sys, time
sys.path.insert(0, %(collections)r)
from ansible_collections.zhisuan.ops.plugins.plugin_utils._run_record import stop_on_signals
seen = {"interrupt": [], "note": [], "exit": None}
def interrupt(signum, frame):
    seen["interrupt"].append(signum)
    raise KeyboardInterrupt()
signal.signal(signal.SIGINT, interrupt)
stop_on_signals(lambda signum: seen["note"].append(signum))
def at_exit():
    os.kill(os.getpid(), %(signum)d)  # a second signal while the record is written: ignored
    time.sleep(0.1)
    with open(%(out)r, "w") as handle:
        json.dump(seen, handle)
atexit.register(at_exit)
try:
    os.kill(os.getpid(), %(signum)d)
    time.sleep(10)
except SystemExit as exc:
    seen["exit"] = exc.code
    raise
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_stop_signal_takes_the_interrupt_road_and_exits_128_plus_its_number(tmp_path, signum):
    out = tmp_path / "seen.json"
    code = PROGRAM % {"collections": COLLECTIONS, "signum": int(signum), "out": str(out)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=30)
    assert proc.returncode == 128 + signum, proc.stderr
    seen = json.loads(out.read_text())
    # the note once (the second signal, during atexit, was ignored), the SIGINT road once, the exit code kept
    assert seen == {"note": [int(signum)], "interrupt": [int(signal.SIGINT)], "exit": 128 + signum}


def test_without_a_callable_sigint_handler_the_run_still_ends(tmp_path):
    out = tmp_path / "seen.json"
    code = (PROGRAM % {"collections": COLLECTIONS, "signum": int(signal.SIGTERM), "out": str(out)}).replace(
        "signal.signal(signal.SIGINT, interrupt)", "signal.signal(signal.SIGINT, signal.SIG_IGN)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=30)
    assert proc.returncode == 143, proc.stderr
    assert json.loads(out.read_text()) == {"note": [15], "interrupt": [], "exit": 143}
