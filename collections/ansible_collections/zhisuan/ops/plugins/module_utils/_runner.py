# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""The one subprocess seam: every external program runs through ``run``.

* a timeout on every call; on expiry the whole process group is killed (SIGKILL), not just the child;
* ``LANG=C``/``LC_ALL=C`` so parsers see the C locale's output;
* typed errors: ``ToolNotFound``, ``ToolTimeout``, ``ToolFailed`` (``ParseError`` comes from the parsers);
* one truncation rule for a tool's output kept in an error or a result (``clip``), one first-line rule for a short
  reason (``first_line``), and one constructor for a failed run (``tool_failed``): call sites build neither by hand.
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
KEEP = 2000


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


def clip(text, keep=KEEP, tail=False):
    """``text`` cut to ``keep`` characters with a note of how many were dropped: the head (the default), or the tail
    (``tail=True``, for tools that print their verdict last). ``None`` stays ``None``."""
    if text is None or len(text) <= keep:
        return text
    if tail:
        return "[... %d characters before]\n%s" % (len(text) - keep, text[-keep:])
    return text[:keep] + "\n[... %d more characters]" % (len(text) - keep)


def first_line(*texts):
    """The first non-blank line of the first text that has one (stripped), else ``no output``."""
    for text in texts:
        for line in (text or "").splitlines():
            if line.strip():
                return line.strip()
    return "no output"


def tool_failed(result, tool=None, detail=None, tail=False, error=ToolFailed):
    """The typed error for a finished run that failed: ``<tool>: <detail>`` (default ``exited with rc N: <first line
    of stderr, else stdout>``) with the run's ``cmd``, ``rc`` and clipped ``stdout``/``stderr``. ``error`` may be
    another ZhisuanError class (ParseError for output that did not parse)."""
    tool = tool or os.path.basename(result.argv[0])
    if detail is None:
        detail = "exited with rc %s: %s" % (result.rc, first_line(result.stderr, result.stdout))
    return error(tool, detail, cmd=result.argv, rc=result.rc, stdout=clip(result.stdout, tail=tail),
                 stderr=clip(result.stderr, tail=tail))


def attach(exc, result, tail=False):
    """``exc`` (a ZhisuanError raised over a run's output, e.g. a ParseError) with the run's ``cmd``, ``rc`` and clipped
    ``stdout``/``stderr`` set: ``raise attach(exc, result)``."""
    exc.cmd, exc.rc = result.argv, result.rc
    exc.stdout, exc.stderr = clip(result.stdout, tail=tail), clip(result.stderr, tail=tail)
    return exc


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
    result = CmdResult(argv, proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))
    if ok_rcs is not None and result.rc not in ok_rcs:
        raise tool_failed(result, tool)
    return result
