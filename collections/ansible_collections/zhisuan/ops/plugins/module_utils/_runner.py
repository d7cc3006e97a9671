# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""The one subprocess seam: every external program runs through ``run``.

* a timeout on every call; on expiry the whole process group is killed (SIGKILL), not just the child;
* ``LANG=C``/``LC_ALL=C`` so parsers see the C locale's output;
* typed errors: ``ToolNotFound``, ``ToolTimeout``, ``ToolFailed`` (``ParseError`` comes from the parsers).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import (
    ToolFailed,
    ToolNotFound,
    ToolTimeout,
)

DEFAULT_TIMEOUT = 60
# Captured stdout/stderr kept in an error (enough to diagnose, small enough for results.json).
_KEEP = 2000


class CmdResult(object):
    __slots__ = ("argv", "rc", "stdout", "stderr")

    def __init__(self, argv, rc, stdout, stderr):
        self.argv = argv
        self.rc = rc
        self.stdout = stdout
        self.stderr = stderr


def resolve(program, tool=None):
    """Absolute path of ``program`` (a name looked up in PATH, or a path). Raises ToolNotFound."""
    tool = tool or os.path.basename(program)
    if os.sep in program:
        if not os.path.isfile(program):
            raise ToolNotFound(tool, "not found at %s" % program)
        if not os.access(program, os.X_OK):
            raise ToolNotFound(tool, "%s is not executable" % program)
        return program
    found = shutil.which(program)
    if not found:
        raise ToolNotFound(tool, "%s not found in PATH (%s); set its path in zhisuan_tools" % (program, os.environ.get("PATH", "")))
    return found


def _clip(text):
    if len(text) > _KEEP:
        return text[:_KEEP] + "\n[... %d more characters]" % (len(text) - _KEEP)
    return text


def _first_line(*texts):
    for text in texts:
        for line in text.splitlines():
            if line.strip():
                return line.strip()
    return "no output"


def _kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    try:
        proc.communicate(timeout=5)
    except (subprocess.TimeoutExpired, ValueError, OSError):
        # a grandchild that escaped the group may hold the pipes; do not wait for it
        pass


def run(argv, timeout=DEFAULT_TIMEOUT, tool=None, ok_rcs=(0,), data=None, env=None, cwd=None):
    """Run ``argv`` (a list, never a shell string) and return a CmdResult.

    ``ok_rcs`` lists the exit codes that are not failures (``None`` accepts any).
    ``env`` adds variables to the inherited environment (the locale is always C); ``cwd`` is the working directory
    of the program (the module's own stays as it is).
    """
    if not argv:
        raise ValueError("run() needs a non-empty argv")
    tool = tool or os.path.basename(argv[0])
    if timeout is None or timeout <= 0:
        raise ValueError("%s: a positive timeout is required" % tool)
    argv = [resolve(argv[0], tool)] + [str(arg) for arg in argv[1:]]
    child_env = dict(os.environ)
    if env:
        child_env.update(env)
    child_env["LANG"] = "C"
    child_env["LC_ALL"] = "C"
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE if data is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=child_env,
            cwd=cwd,
            start_new_session=True,
            close_fds=True,
        )
    except OSError as exc:
        raise ToolNotFound(tool, "could not start %s: %s" % (argv[0], exc), cmd=argv)
    try:
        out, err = proc.communicate(input=data.encode("utf-8") if data is not None else None, timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        raise ToolTimeout(tool, "timed out after %s s (process group killed)" % timeout, cmd=argv)
    stdout = out.decode("utf-8", "replace")
    stderr = err.decode("utf-8", "replace")
    if ok_rcs is not None and proc.returncode not in ok_rcs:
        raise ToolFailed(
            tool,
            "exited with rc %s: %s" % (proc.returncode, _first_line(stderr, stdout)),
            cmd=argv,
            rc=proc.returncode,
            stdout=_clip(stdout),
            stderr=_clip(stderr),
        )
    return CmdResult(argv, proc.returncode, stdout, stderr)
