# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""A run's folder and the names in it: unique run ids, the folder claimed exclusively, and file names made from
inventory host names (or run ids) that cannot leave the folder.

* ``new_run_id``: ``<YYYYmmddTHHMMSSZ>-<kind>-<microseconds><4 hex>``. The leading ``<time>Z-<kind>`` is the shape
  ids always had (a reader that parses it still does; ids of one kind still sort by time); the tail makes two runs
  started in the same second two runs.
* ``claim_run_dir``: ``os.mkdir`` of ``<out root>/<id>``, retried with a new id when another run took it.
* ``safe_name``: the one rule for a name used as a file name (history entries, evidence bundles, tickets).
* ``inside``: a path under a folder, refused (``RunDirError`` naming what it was for) when it resolves outside.
"""

from __future__ import annotations

import datetime
import errno
import hashlib
import os
import re
import secrets

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
CLAIM_ATTEMPTS = 8


class RunDirError(Exception):
    """A run folder could not be claimed, or a path would leave it; the message names the path and the host."""


def safe_name(text, default="unnamed"):
    """``text`` as one file name: runs of characters other than letters, digits, ``.``, ``_`` and ``-`` become ``_``,
    leading and trailing dots go (no ``..``, no hidden file). A name that had to change gets ``-`` and 8 hex digits
    of its SHA-1, so that ``a/b`` and ``a_b`` never share a file; an empty result is ``default``."""
    text = str(text if text is not None else "")
    name = _UNSAFE.sub("_", text).strip(".")
    if name == text and name:
        return name
    return "%s-%s" % (name or default, hashlib.sha1(text.encode("utf-8", "surrogateescape")).hexdigest()[:8])


def inside(root, *parts, **kwargs):
    """``root`` joined with ``parts``; raises RunDirError (``what`` names the path's purpose, e.g. the host) when the
    result, symlinks resolved, is not ``root`` itself or below it."""
    what = kwargs.get("what") or "a path"
    path = os.path.join(root, *[str(part) for part in parts])
    top = os.path.realpath(root)
    real = os.path.realpath(path)
    if real != top and not real.startswith(top.rstrip(os.sep) + os.sep):
        raise RunDirError("%s: %s resolves to %s, outside the run folder %s; refused" % (what, path, real, top))
    return path


def host_path(root, host, subdir=None, suffix=""):
    """The per-host file or folder ``<root>[/<subdir>]/<safe host name><suffix>``, checked to stay inside ``root``."""
    parts = ([subdir] if subdir else []) + [safe_name(host, default="host") + (suffix or "")]
    return inside(root, *parts, what="host %r" % (host,))


def new_run_id(kind, now=None, token=None):
    """A new run id: ``<UTC time to the second>Z-<kind>-<microseconds><4 random hex digits>``."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    token = token if token is not None else secrets.token_hex(2)
    return "%s-%s-%s%s" % (now.strftime("%Y%m%dT%H%M%SZ"), safe_name(kind, default="run"), now.strftime("%f"), token)


def claim_run_dir(out_root, kind, run_id=None, dest=None, make_id=new_run_id):
    """``(run id, folder)`` of a new run. ``dest`` (a folder the inventory fixed) or a given ``run_id`` are the
    user's choice and used as they are (created when missing). Otherwise a new id's folder under ``out_root`` is
    created with ``os.mkdir``, which only one run can do; when it exists, a new id is tried (``CLAIM_ATTEMPTS``)."""
    try:
        if dest:
            os.makedirs(dest, exist_ok=True)
            return run_id or make_id(kind), dest
        os.makedirs(out_root, exist_ok=True)
        if run_id:
            path = inside(out_root, run_id, what="run id %r" % (run_id,))
            os.makedirs(path, exist_ok=True)
            return run_id, path
        for dummy in range(CLAIM_ATTEMPTS):
            run_id = make_id(kind)
            path = os.path.join(out_root, run_id)
            try:
                os.mkdir(path)
            except OSError as exc:
                if exc.errno != errno.EEXIST:
                    raise
                continue
            return run_id, path
    except OSError as exc:
        raise RunDirError("cannot create the run folder under %s: %s" % (dest or out_root, exc))
    raise RunDirError("cannot claim a run folder under %s: %d new ids were all taken" % (out_root, CLAIM_ATTEMPTS))
