# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""The controller side of zhisuan.ops.job_wait: who is still waiting, and one progress line a minute for them all.

Every worker waiting on the same task marks itself in one directory (a file per host); the first whose turn is due
(the directory's ``.printed`` file older than the period) prints the line for all of them, so the console gets a
line a minute for the whole batch instead of a retry line per node per poll.
"""

from __future__ import annotations

import fcntl
import os
import time


def _fmt_duration(seconds):
    seconds = int(seconds)
    if seconds < 60:
        return "%d s" % seconds
    return "%d min %02d s" % (seconds // 60, seconds % 60)


def progress_line(what, hosts, waited):
    """``"<what>: still waiting on 16 nodes (node01, node02, node03 and 13 more) after 2 min 00 s"``: the nodes this
    task is waiting on now (with fewer forks than nodes, the others' jobs run on meanwhile and are waited on next)."""
    hosts = sorted(hosts)
    shown = ", ".join(hosts[:3])
    if len(hosts) > 3:
        shown += " and %d more" % (len(hosts) - 3)
    return "%s: still waiting on %d node%s (%s) after %s" % (
        what, len(hosts), "" if len(hosts) == 1 else "s", shown or "none", _fmt_duration(waited))


def verdict(status, what, host, jid, waited, timeout):
    """One poll of ``async_status`` -> ``None`` (wait on), or the end: ``("done", {})`` when the job finished (its own
    result says whether it failed), ``("vanished", fields)`` when the node no longer has the job (its job file gone:
    the node rebooted or the async directory was cleaned), ``("timed_out", fields)`` past ``timeout`` seconds;
    ``fields`` are what the task returns with a failure."""
    status = status or {}
    msg = str(status.get("msg") or "")
    gone = "could not find job" in msg.lower()
    # A job that ended is the module's own result with finished set by async_status (no 'started': that key is only
    # in the job file while the job runs), failed or not: done, never vanished.
    if status.get("finished") and not gone:
        return "done", {}
    if status.get("failed") and (gone or not status.get("started")):
        return "vanished", {
            "failed": True, "error_kind": "vanished", "tool": "job_wait", "ansible_job_id": jid,
            "waited_s": round(waited, 1),
            "msg": "%s on %s: the node no longer has async job %s (%s) after %s; the node may have rebooted or "
                   "its async directory been cleaned, so the job's result is lost" % (
                       what, host, jid, msg or "no job file", _fmt_duration(waited))}
    if status.get("finished"):
        return "done", {}
    if waited >= timeout:
        return "timed_out", {
            "failed": True, "error_kind": "timed_out", "tool": "job_wait", "ansible_job_id": jid,
            "waited_s": round(waited, 1),
            "msg": "%s on %s did not finish within %s s (async job %s)" % (what, host, timeout, jid)}
    return None


class ProgressBoard(object):
    """The shared directory of one waiting task (``path``) and this worker's host in it."""

    def __init__(self, path, host, clock=time.time):
        self.path = path
        self.host = host
        self.clock = clock

    def _mark(self):
        return os.path.join(self.path, "host-" + self.host.replace(os.sep, "_"))

    def join(self):
        os.makedirs(self.path, exist_ok=True)
        with open(self._mark(), "w"):
            pass
        stamp = os.path.join(self.path, ".printed")
        if not os.path.exists(stamp):
            # the first line comes one period after the wait began, not at once
            with open(stamp, "a"):
                pass

    def leave(self):
        try:
            os.unlink(self._mark())
        except OSError:
            pass
        if not self.waiting():
            for name in (".printed", ".lock"):
                try:
                    os.unlink(os.path.join(self.path, name))
                except OSError:
                    pass
            try:
                os.rmdir(self.path)
            except OSError:
                pass

    def waiting(self):
        try:
            names = os.listdir(self.path)
        except OSError:
            return []
        return [name[len("host-"):] for name in names if name.startswith("host-")]

    def due(self, period):
        """Whether this worker prints now: the last line is ``period`` seconds old (one worker wins, under a lock)."""
        stamp = os.path.join(self.path, ".printed")
        try:
            with open(os.path.join(self.path, ".lock"), "a") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                try:
                    last = os.stat(stamp).st_mtime
                except OSError:
                    last = 0
                now = self.clock()
                if now - last < period:
                    return False
                with open(stamp, "a"):
                    pass
                os.utime(stamp, (now, now))
                return True
        except OSError:
            return False
