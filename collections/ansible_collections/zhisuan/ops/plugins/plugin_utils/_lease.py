# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""Node leases: two remediation runs at once never act on the same node.

A run that plans to act on a node claims its lease first: ``<history dir>/leases/<safe node name>.json`` holding
the run id, the controller's host name, the process id of the run (``ansible-playbook``) and its start time, and
the time. Every
claim and release happens under one lock (``flock`` of ``leases/.lock``, with a timeout), so two runs claiming at
once see each other. A lease of another run is respected while that run may still be going: its process is alive
on this controller, or it was taken on another controller (an AWX job in its own container) less than
``MAX_AGE_H`` hours ago. A lease whose process is gone (the run was cut off: SIGKILL, a lost controller) is stale
and taken over; so is one older than ``MAX_AGE_H`` or one that cannot be read. The run releases its leases when it
records its nodes (the record play), or, stopped before (SIGTERM, SIGHUP, Ctrl-C), when its process exits (the
run-record callback, ``_run_record.RunRecorder.release_leases``); a killed run's leases are taken over by the next run
on the same controller.
"""

from __future__ import annotations

import datetime
import errno
import json
import os
import socket

from ansible_collections.zhisuan.ops.plugins.module_utils._remediate.history import HistoryError, lock
from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import atomic_write
from ansible_collections.zhisuan.ops.plugins.plugin_utils._run_dir import safe_name

DIR_NAME = "leases"
LOCK_NAME = ".lock"
# a lease taken on another controller, whose process cannot be looked at from here, holds this long
MAX_AGE_H = 24.0


def _utcnow():
    return datetime.datetime.now(datetime.timezone.utc)


def lease_path(history_dir, node):
    return os.path.join(history_dir, DIR_NAME, safe_name(node, default="node") + ".json")


def _proc_stat(pid):
    """(state, start time in clock ticks since boot) of process ``pid`` from /proc, or None where there is no /proc
    entry to read."""
    try:
        with open("/proc/%d/stat" % int(pid), "r") as handle:
            text = handle.read()
    except (OSError, TypeError, ValueError):
        return None
    fields = text[text.rfind(")") + 2:].split()
    return (fields[0], fields[19]) if len(fields) > 19 else None


def process_start(pid):
    """The start time of process ``pid`` (clock ticks since boot, as /proc has it), or None."""
    stat = _proc_stat(pid)
    return stat[1] if stat else None


def _alive(pid, start=None):
    """Whether process ``pid`` still runs: it exists, is no zombie (killed, not yet reaped by its parent) and, when
    ``start`` is known, started then (not a new process that got the number)."""
    try:
        os.kill(int(pid), 0)
    except (OSError, TypeError, ValueError) as exc:
        # EPERM: the process exists, it is another user's
        if getattr(exc, "errno", None) != errno.EPERM:
            return False
    stat = _proc_stat(pid)
    if stat is None:
        return True
    return stat[0] != "Z" and (start is None or str(start) == stat[1])


def holder(history_dir, node):
    """The lease of ``node`` as written ({run_id, host, pid, time}), or None when there is none. A file that cannot
    be read as one is ``{"damaged": <why>}``."""
    path = lease_path(history_dir, node)
    try:
        with open(path, "r", encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        return {"damaged": "%s: %s" % (path, exc)}
    if not isinstance(data, dict) or not data.get("run_id"):
        return {"damaged": "%s: not a lease" % path}
    return data


def stale(lease, now=None, here=None, max_age_h=MAX_AGE_H):
    """Why ``lease`` no longer holds its node (a text), or None while its run may still be going."""
    if lease.get("damaged"):
        return "damaged (%s)" % lease["damaged"]
    now = now or _utcnow()
    here = here or socket.gethostname()
    try:
        taken = datetime.datetime.fromisoformat(str(lease.get("time")))
    except ValueError:
        taken = None
    if taken is not None and taken.tzinfo is None:
        taken = taken.replace(tzinfo=datetime.timezone.utc)
    if taken is None:
        return "its time %r is not an ISO 8601 time" % (lease.get("time"),)
    if lease.get("host") == here:
        if not _alive(lease.get("pid"), lease.get("start")):
            return "its run (pid %s on %s) is gone" % (lease.get("pid"), here)
        return None
    age_h = (now - taken).total_seconds() / 3600.0
    if age_h > max_age_h:
        return "taken on %s %.1f h ago, over the %g h a lease holds" % (lease.get("host"), age_h, max_age_h)
    return None


class _Locked(object):
    """The claims lock of a history folder (``leases/.lock``), held for one claim or release."""

    def __init__(self, history_dir, timeout):
        self.folder = os.path.join(history_dir, DIR_NAME)
        self.timeout = timeout
        self.fd = None

    def __enter__(self):
        try:
            os.makedirs(self.folder, exist_ok=True)
            path = os.path.join(self.folder, LOCK_NAME)
            self.fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise HistoryError("cannot open the node leases in %s: %s" % (self.folder, exc))
        try:
            lock(self.fd, path, self.timeout, what="claim or release a node lease in")
        except BaseException:
            os.close(self.fd)
            raise
        return self

    def __exit__(self, *exc):
        os.close(self.fd)
        return False


def claim(history_dir, nodes, run_id, pid, host=None, now=None, timeout=None, max_age_h=MAX_AGE_H):
    """Claim the lease of each of ``nodes`` for ``run_id`` (process ``pid`` on ``host``, default this one). Returns
    ``(claimed, held)``: the nodes this run holds now (its own earlier leases included), and ``{node: lease}`` of
    those another run holds (``lease``: run_id, host, pid, time as written). A stale lease is taken over (its
    ``took_over`` is kept in the new one). Raises HistoryError when the folder or the lock cannot be had."""
    host = host or socket.gethostname()
    now = now or _utcnow()
    claimed, held = [], {}
    with _Locked(history_dir, timeout):
        for node in nodes:
            current = holder(history_dir, node)
            if current is not None and current.get("run_id") == run_id and not current.get("damaged"):
                claimed.append(node)
                continue
            why = stale(current, now, host, max_age_h) if current is not None else None
            if current is not None and why is None:
                held[node] = dict((key, current.get(key)) for key in ("run_id", "host", "pid", "time"))
                continue
            lease = {"node": node, "run_id": run_id, "host": host, "pid": int(pid),
                     "time": now.replace(microsecond=0).isoformat()}
            if host == socket.gethostname():
                lease["start"] = process_start(pid)
            if current is not None:
                lease["took_over"] = {"run_id": current.get("run_id"), "why": why}
            try:
                atomic_write(lease_path(history_dir, node), json.dumps(lease, sort_keys=True) + "\n")
            except OSError as exc:
                raise HistoryError("cannot write the lease of node %s in %s: %s" % (node, history_dir, exc))
            claimed.append(node)
    return claimed, held


def live(history_dir, now=None, host=None, max_age_h=MAX_AGE_H):
    """``{node: lease}`` of the leases in ``history_dir`` whose run may still be going (read only, no lock: what an
    inspection needs to tell a node a running remediation holds from a stranded one)."""
    folder = os.path.join(history_dir, DIR_NAME)
    out = {}
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return out
    for name in names:
        if not name.endswith(".json") or name.startswith("."):
            continue
        try:
            with open(os.path.join(folder, name), "r", encoding="utf-8") as handle:
                lease = json.load(handle)
        except (OSError, ValueError, UnicodeDecodeError):
            continue
        if isinstance(lease, dict) and lease.get("node") and lease.get("run_id") and \
                stale(lease, now, host, max_age_h) is None:
            out[lease["node"]] = dict((key, lease.get(key)) for key in ("run_id", "host", "pid", "time"))
    return out


def release(history_dir, run_id, nodes=None, timeout=None):
    """Release the leases ``run_id`` holds (of ``nodes``, default every one); another run's are left alone.
    Returns the nodes released."""
    folder = os.path.join(history_dir, DIR_NAME)
    if not os.path.isdir(folder):
        return []
    released = []
    with _Locked(history_dir, timeout):
        for name in sorted(os.listdir(folder)):
            if not name.endswith(".json") or name.startswith("."):
                continue
            path = os.path.join(folder, name)
            try:
                with open(path, "r", encoding="utf-8") as handle:
                    lease = json.load(handle)
            except (OSError, ValueError, UnicodeDecodeError):
                continue
            if not isinstance(lease, dict) or lease.get("run_id") != run_id:
                continue
            if nodes is not None and lease.get("node") not in nodes:
                continue
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise HistoryError("cannot release the lease %s: %s" % (path, exc))
            released.append(lease.get("node"))
    return released
