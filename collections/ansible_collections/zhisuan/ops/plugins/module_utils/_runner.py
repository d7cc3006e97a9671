# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""The one subprocess seam: every external program runs through ``run``.

* a timeout on every call; on expiry the whole process group is killed (SIGKILL), not just the child;
* ``LANG=C``/``LC_ALL=C`` so parsers see the C locale's output;
* typed errors: ``ToolNotFound``, ``ToolTimeout``, ``ToolFailed``, ``ToolOutputTooLarge`` (``ParseError`` comes
  from the parsers);
* bounded reads: stdout and stderr are read as they come, never buffered without limit; a program that prints more
  than its cap (``MAX_OUTPUT`` per tool, the caller's ``max_output``, the user's override) is stopped (process group
  killed) with ``ToolOutputTooLarge``; ``on_line`` streams stdout line by line to a filter instead of keeping it;
* a tool stops with its module: SIGINT, SIGTERM or SIGHUP reaching the module (Ansible's worker passes its own signal
  to its process group; a dropped SSH session hangs up) kills the process group of every tool still running, which
  runs in a session of its own and would run on after the module (``guard_signals``);
* a tool stops with its controller: no signal crosses SSH (a cut run kills its ssh client, a ControlPersist master
  and the node's sshd live on, and sshd only closes the session's pipes), so while a tool runs the module watches
  its own stdout; once nothing reads it (the worker or the SSH session is gone) every running tool's process group
  is killed and no further tool starts in this module run (``controller_gone``, ``ControllerGone``);
* one truncation rule for a tool's output kept in an error or a result (``clip``), one first-line rule for a short
  reason (``first_line``), and one constructor for a failed run (``tool_failed``): call sites build neither by hand.
"""

import os
import select
import selectors
import shutil
import signal
import stat
import subprocess
import threading
import time

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import (
    ToolFailed,
    ToolNotFound,
    ToolOutputTooLarge,
    ToolTimeout,
)

DEFAULT_TIMEOUT = 60
# Captured stdout/stderr kept in an error (enough to diagnose, small enough for results.json).
KEEP = 2000

MIB = 1024 * 1024
# Output caps (stdout and stderr together, in MiB) per tool name: the most a healthy run of the tool prints, with a
# wide margin. What is read is held in memory (about 2-3 bytes of the module's memory per byte printed), so a
# looping tool or a kernel-log storm must stop at a cap, not at the timeout. The table in docs/gpu-facts.md
# ("Output caps") mirrors it; the user overrides it with the modules' max_output option (zhisuan_tool_max_output).
DEFAULT_MAX_OUTPUT_MIB = 32
MAX_OUTPUT_MIB = {
    # a kernel log read whole (the network family's link events; the Xid read streams and filters instead)
    "journalctl": 64,
    "dmesg": 32,
    # nvidia-smi -q -x: some 100-250 KiB per GPU; nvidia-smi nvlink -s / -e / -R a few KiB per link
    "nvidia-smi": 64,
    "nvidia-smi nvlink": 16,
    "nvidia-smi nvlink -e": 16,
    "nvidia-smi nvlink -R": 16,
    "nvidia-smi topo": 4,
    # job logs (kubectl logs --all-containers), nccl-tests and mpirun over many ranks
    "kubectl": 64,
    "nccl-tests": 64,
    "mpirun": 64,
    "dcgmi": 32,
    "gpu_burn": 32,
    "fio": 32,
    "nvbandwidth": 16,
    # lspci -vvv on a host with hundreds of PCIe functions
    "lspci": 16,
    "scontrol": 16,
    "squeue": 16,
    "iblinkinfo": 16,
    "ibstat": 8,
    "lldpctl": 8,
    "ip": 8,
    "ipmitool": 8,
    "ethtool": 4,
    "mlnx_qos": 4,
}
# The user's cap (MiB) for every program of this module run (the max_output option), set at the module edge.
_OVERRIDE = {"max_output_mib": None}
# Bytes read from a pipe at a time, and the head of a streamed stdout kept for an error's evidence.
_CHUNK = 64 * 1024
_STREAM_HEAD = 2 * KEEP


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


def set_output_limit(mib):
    """The user's output cap in MiB for every program run from now on in this process (the modules' ``max_output``
    option; ``None`` restores the per-tool defaults). It wins over the caller's and the table's."""
    if mib is not None and (isinstance(mib, bool) or not isinstance(mib, (int, float)) or mib <= 0):
        raise ValueError("max_output must be a positive number of MiB, got %r" % (mib,))
    _OVERRIDE["max_output_mib"] = mib


def output_limit(tool, max_output=None):
    """The output cap in bytes for ``tool``: the user's override, else the caller's ``max_output`` (bytes), else
    ``MAX_OUTPUT_MIB[tool]``, else ``DEFAULT_MAX_OUTPUT_MIB``."""
    if _OVERRIDE["max_output_mib"] is not None:
        return int(_OVERRIDE["max_output_mib"] * MIB)
    if max_output is not None:
        return int(max_output)
    return int(MAX_OUTPUT_MIB.get(tool, DEFAULT_MAX_OUTPUT_MIB) * MIB)


def _mib(limit):
    return "%g" % round(limit / float(MIB), 3)


class _OverLimit(Exception):
    def __init__(self, out, err):
        super().__init__("output over limit")
        self.out = out
        self.err = err


def _feed(stream, data):
    try:
        stream.write(data)
    except (OSError, ValueError):  # the program closed its stdin, or was killed
        pass
    finally:
        try:
            stream.close()
        except (OSError, ValueError):
            pass


def _emit(on_line, block):
    # one decode per block: a newline never falls inside a UTF-8 sequence, so lines decode as they would alone
    for line in block.decode("utf-8", "replace").split("\n"):
        on_line(line)


def feed_lines(pending, chunk, on_line):
    """Add ``chunk`` (bytes) to ``pending`` (a bytearray) and hand every complete line in it to ``on_line``; only a
    partial last line stays in ``pending``. The one line splitter of a program's stdout and of a saved file."""
    pending += chunk
    end = pending.rfind(b"\n")
    if end >= 0:
        block = bytes(pending[:end])
        del pending[:end + 1]
        _emit(on_line, block)


def flush_lines(pending, on_line):
    """Hand what is left in ``pending`` (a last line without a newline) to ``on_line``."""
    if pending:
        _emit(on_line, bytes(pending))
        del pending[:]


def read_saved(path, tool, what="saved output", error=ToolNotFound):
    """The text of a saved output a user hands a module instead of running the tool (``src``). Raises ``error``
    naming the tool and the file: ``<tool>: cannot read <what> <path>: <reason>``."""
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", "replace")
    except (IOError, OSError) as exc:
        raise error(tool, "cannot read %s %s: %s" % (what, path, exc.strerror or exc))


def _read(proc, data, timeout, limit, on_line):
    """stdout and stderr of ``proc`` as bytes, read as they come until both close, then the exit waited for; raises
    subprocess.TimeoutExpired past ``timeout`` and _OverLimit past ``limit`` bytes held. With ``on_line``, stdout's
    complete lines go to it as they arrive (only a partial line is held) and stdout returns its first bytes. Every
    ``WATCH_S`` it looks at the module's stdout and raises _Gone when nothing reads it any more."""
    deadline = time.monotonic() + timeout
    watch = time.monotonic() + WATCH_S
    if data is not None:
        writer = threading.Thread(target=_feed, args=(proc.stdin, data))
        writer.daemon = True
        writer.start()
    held = {proc.stdout.fileno(): bytearray(), proc.stderr.fileno(): bytearray()}
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    head = bytearray()
    selector = selectors.DefaultSelector()
    try:
        for fd in held:
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map():
            now = time.monotonic()
            remaining = deadline - now
            if remaining <= 0:
                raise subprocess.TimeoutExpired(proc.args, timeout)
            if now >= watch:
                if controller_gone():
                    raise _Gone()
                watch = now + WATCH_S
            for key, _event in selector.select(min(remaining, max(watch - now, 0.01))):
                chunk = os.read(key.fd, _CHUNK)
                if not chunk:
                    selector.unregister(key.fd)
                    continue
                if key.fd == out_fd and on_line is not None:
                    if len(head) < _STREAM_HEAD:
                        head += chunk[:_STREAM_HEAD - len(head)]
                    feed_lines(held[key.fd], chunk, on_line)
                else:
                    held[key.fd] += chunk
                if len(held[out_fd]) + len(held[err_fd]) > limit:
                    raise _OverLimit(bytes(head if on_line is not None else held[out_fd][:_STREAM_HEAD]),
                                     bytes(held[err_fd][:_STREAM_HEAD]))
    finally:
        selector.close()
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise subprocess.TimeoutExpired(proc.args, timeout)
    proc.wait(timeout=remaining)
    out = held[out_fd]
    if on_line is not None:
        flush_lines(out, on_line)
        out = head
    return out, held[err_fd]


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


# --- a tool stops with its module (signals) -------------------------------------------------------------------
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# process groups of the tools running now, from any thread (set.add/discard and list(set) hold the GIL: no lock,
# which the signal handler could find held by the code it interrupted)
_RUNNING = set()
_PREVIOUS = {}


def _stop_tools(signum, frame):
    """Kill every running tool's process group, then let the signal do what it did before this handler."""
    for pgid in list(_RUNNING):
        try:
            os.killpg(pgid, signal.SIGKILL)
        except OSError:
            pass
    previous = _PREVIOUS.pop(signum, signal.SIG_DFL)
    signal.signal(signum, previous)
    if callable(previous):
        return previous(signum, frame)
    os.kill(os.getpid(), signum)
    return None


def guard_signals():
    """Stop the running tools on SIGINT, SIGTERM and SIGHUP (installed from the main thread; ``run`` calls it, once
    is enough). A signal the process ignores (SIG_IGN, e.g. SIGHUP under nohup) stays ignored: it stops no tool."""
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in STOP_SIGNALS:
        current = signal.getsignal(signum)
        if current is _stop_tools or current == signal.SIG_IGN:
            continue
        _PREVIOUS[signum] = signal.SIG_DFL if current is None else current
        signal.signal(signum, _stop_tools)


# --- a tool stops with its controller (the module's output closed) --------------------------------------------
# seconds between two looks at the module's stdout while a tool runs
WATCH_S = 0.5
# set once the module's stdout was found without a reader: no tool starts after that
_ORPHANED = []


class ControllerGone(ToolFailed):
    """The module's output has no reader any more: the run that started it was cut off (its worker or its SSH
    session is gone); the tool was stopped, or not started."""


def controller_gone(fd=1):
    """Whether ``fd`` (the module's stdout: a pipe to Ansible's worker, or to sshd over SSH) lost its reader. Only a
    pipe or a socket can; a file, a terminal or a closed descriptor never counts as gone."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        return False
    poller = select.poll()
    poller.register(fd, 0)
    try:
        events = poller.poll(0)
    except OSError:
        return False
    return any(event & (select.POLLERR | select.POLLHUP) for _fd, event in events)


def _orphaned(tool, argv, started):
    """Kill every running tool's process group and return the error of ``tool`` (``started``: it was running)."""
    if not _ORPHANED:
        _ORPHANED.append(True)
    for pgid in list(_RUNNING):
        try:
            os.killpg(pgid, signal.SIGKILL)
        except OSError:
            pass
    what = "stopped (process group killed)" if started else "not started"
    return ControllerGone(tool, "%s: nothing reads this module's output any more (the run was cut off; over SSH no "
                                "signal reaches the node)" % what, cmd=argv)


class _Gone(Exception):
    pass


def run(argv, timeout=DEFAULT_TIMEOUT, tool=None, ok_rcs=(0,), data=None, env=None, cwd=None, max_output=None,
        on_line=None):
    """Run ``argv`` (a list, never a shell string) and return a CmdResult.

    ``ok_rcs`` lists the exit codes that are not failures (``None`` accepts any).
    ``env`` adds variables to the inherited environment (the locale is always C); ``cwd`` is the working directory
    of the program (the module's own stays as it is).
    ``max_output`` (bytes) caps what the program may print, stdout and stderr together (default: ``output_limit``);
    past it the process group is killed and ``ToolOutputTooLarge`` raised. ``on_line(text)`` receives stdout line by
    line (without the newline) as it arrives, so only a partial line counts against the cap; the result's
    ``stdout`` then holds only the first few KiB, for an error's evidence.
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
    guard_signals()
    if _ORPHANED:
        raise _orphaned(tool, argv, False)
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
    _RUNNING.add(proc.pid)
    limit = output_limit(tool, max_output)
    try:
        out, err = _read(proc, data.encode("utf-8") if data is not None else None, timeout, limit, on_line)
    except _Gone:
        _kill_group(proc)
        raise _orphaned(tool, argv, True)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        raise ToolTimeout(tool, "timed out after %s s (process group killed)" % timeout, cmd=argv)
    except _OverLimit as over:
        _kill_group(proc)
        raise ToolOutputTooLarge(
            tool, "output over %s MiB (process group killed); raise max_output if this much is expected" % _mib(limit),
            limit=limit, cmd=argv, stdout=clip(over.out.decode("utf-8", "replace")),
            stderr=clip(over.err.decode("utf-8", "replace")))
    except BaseException:
        _kill_group(proc)
        raise
    finally:
        _RUNNING.discard(proc.pid)
    result = CmdResult(argv, proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))
    if ok_rcs is not None and result.rc not in ok_rcs:
        raise tool_failed(result, tool)
    return result
