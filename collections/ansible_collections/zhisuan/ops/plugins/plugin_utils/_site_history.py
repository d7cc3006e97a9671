# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""One history per site: the one rule that says which history folder a run keeps itself in and reads.

The histories of every site live under one root, ``<reports>/history`` (the ``history`` folder beside the runs
folder, ``results_out_root``), one folder per site: ``<root>/<site key>``. The key is

* from ``zhisuan_site_name`` when the inventory sets it: the name's words in lower-case ASCII joined by ``-`` (at
  most 40 characters; after ``site`` when they hold no letter, e.g. a name in Chinese) and 8 hex digits of the SHA-1 of the
  name itself, so names that differ only in case, spaces, slashes or non-ASCII letters never share a history;
* else from the inventory's folder (``inventory_dir``): ``inventory-<folder name's words>-<8 hex digits>`` of the
  folder's path relative to the project (the checkout the playbooks are in; its absolute path when outside), so two
  inventories in two folders are two histories and a checkout moved elsewhere keeps its keys;
* else (hosts given on the command line, no inventory folder) ``no-site``.

``zhisuan_history_dir`` overrides all of it: that folder, whatever the site. The key is recorded in the run
(``results.json`` ``run.site_key``), so a saved run re-rendered later reads its own site's history; a record from
before the key (no ``run.site_key``) takes the key of its ``run.site.name``, and one without either reads the root
itself, where every run was kept before there was one history per site (the flat layout, ``legacy``).
"""

from __future__ import annotations

import hashlib
import os
import re

# a site name as text, the rule run.site follows
from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import _site_text as _text

NO_SITE_KEY = "no-site"
HISTORY_FOLDER = "history"
SLUG_MAX = 40
# a key is one folder name: lower-case ASCII words and hex digits joined by "-" (results-v1.json run.site_key)
KEY_PATTERN = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_WORDS = re.compile(r"[A-Za-z0-9]+")
# what the flat layout (before one history per site) left in the root: kept runs, their index, the remediation log
LEGACY_LOG = "remediation.jsonl"
LEGACY_INDEX = "index"


def _digest(kind, text):
    return hashlib.sha1(("%s:%s" % (kind, text)).encode("utf-8", "surrogateescape")).hexdigest()[:8]


def _slug(text, default):
    """The ASCII words of ``text``, lower-case, joined by ``-`` (at most SLUG_MAX characters), after ``default`` when
    they hold no letter (a name in Chinese with a hall number: ``site-2``)."""
    slug = "-".join(word.lower() for word in _WORDS.findall(text))[:SLUG_MAX].strip("-")
    if not re.search(r"[a-z]", slug):
        slug = ("%s-%s" % (default, slug)).strip("-")
    return slug


def site_key(site_name=None, inventory_dir=None, project_dir=None):
    """The history key of a site (see the module doc): from ``site_name`` (``zhisuan_site_name``), else from
    ``inventory_dir`` (relative to ``project_dir`` when inside it), else ``NO_SITE_KEY``. Pure: no file is read
    (paths are only normalised, not resolved)."""
    name = _text(site_name)
    if name:
        return "%s-%s" % (_slug(name, "site"), _digest("site", name))
    folder = _text(inventory_dir)
    if folder:
        folder = os.path.normpath(os.path.abspath(folder))
        where = folder
        if project_dir:
            project = os.path.normpath(os.path.abspath(str(project_dir)))
            if folder == project or folder.startswith(project.rstrip(os.sep) + os.sep):
                where = os.path.relpath(folder, project)
        return "inventory-%s-%s" % (_slug(os.path.basename(folder), "root"), _digest("inventory", where))
    return NO_SITE_KEY


def default_root(out_root):
    """The root of the site histories for runs written under ``out_root`` (``results_out_root``): the ``history``
    folder beside it (``reports/history`` for ``reports/out``)."""
    return os.path.join(os.path.dirname(os.path.normpath(os.path.abspath(out_root))), HISTORY_FOLDER)


def run_history_dir(root, key, override=None):
    """The history folder of a run: ``override`` (``zhisuan_history_dir``) when given, else ``<root>/<key>``."""
    if _text(override):
        return os.path.abspath(str(override))
    if not KEY_PATTERN.match(str(key or "")):
        raise ValueError("a site key is lower-case ASCII words and digits joined by '-', not %r" % (key,))
    return os.path.join(os.path.abspath(root), key)


def record_key(run):
    """``(key, problem)`` of a saved run (``results.json`` ``run``): its ``site_key``; a record without one takes
    the key of its ``site.name``; ``(None, None)`` when it has neither (a run kept before one history per site: its
    history is the root itself). A ``site_key`` that is not a key is ``(None, problem)``."""
    run = run if isinstance(run, dict) else {}
    if "site_key" in run:
        key = run.get("site_key")
        if isinstance(key, str) and KEY_PATTERN.match(key):
            return key, None
        return None, "run.site_key %r is not a site key (lower-case ASCII words and digits joined by '-')" % (key,)
    name = _text((run.get("site") or {}).get("name") if isinstance(run.get("site"), dict) else None)
    if name:
        return site_key(name), None
    return None, None


def record_history_dir(root, run):
    """``(folder, problem)``: the history a saved run reads under ``root`` (``record_key``): ``<root>/<key>``, the
    root itself for a record from before one history per site, None (and the problem) for a broken key."""
    key, problem = record_key(run)
    if problem:
        return None, problem
    if key is None:
        return os.path.abspath(root), None
    return run_history_dir(root, key), None


def legacy_entries(root):
    """``(runs, log)`` the flat layout left directly in ``root``: the number of kept runs (``*.json`` files) and
    whether the remediation log is there. (0, False) when the root is missing or holds only site folders."""
    try:
        names = os.listdir(root)
    except OSError:
        return 0, False
    runs = 0
    for name in names:
        if name.endswith(".json") and not name.startswith(".") and os.path.isfile(os.path.join(root, name)):
            runs += 1
    return runs, os.path.isfile(os.path.join(root, LEGACY_LOG))


def legacy_warning(root, history_dir):
    """The warning for a run whose site history is ``history_dir`` under ``root`` while ``root`` still holds the
    flat layout's runs or remediation log, which that history does not read; None when there is nothing there (or
    the run's history is not a site folder of ``root``)."""
    root = os.path.abspath(root)
    history_dir = os.path.abspath(history_dir)
    if os.path.dirname(history_dir) != root:
        return None
    runs, log = legacy_entries(root)
    if not runs and not log:
        return None
    held = " and ".join(part for part in ("%d kept run%s" % (runs, "" if runs == 1 else "s") if runs else "",
                                          LEGACY_LOG if log else "") if part)
    moved = " ".join(part for part in ("%s/*.json" % root if runs else "",
                                       "%s/%s" % (root, LEGACY_INDEX) if os.path.isdir(os.path.join(root, LEGACY_INDEX))
                                       else "",
                                       "%s/%s" % (root, LEGACY_LOG) if log else "") if part)
    return ("zhisuan.ops: %s holds %s of the one history every site shared before one history per site; this "
            "site's history is %s, which does not read them. If they are this site's, move them there: "
            "mkdir -p %s && mv %s %s/ (or set zhisuan_history_dir: %s to keep one shared history; docs/history.md)"
            % (root, held, history_dir, history_dir, moved, history_dir, root))
