# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""A node judged from its saved outputs (``zhisuan_saved_outputs``: a folder on the controller a site sent), with
the readers and rules of a live run (issue 23 item 3).

The folder holds one file per tool, named by the tool (``FILES``); ``<folder>/<host>`` is used instead when it is a
folder, so that one folder can carry several nodes. Each node part read this way gets its module's saved-output
options (``src``, ``nvlink_src``, ``tool``) pointing at the files found; a part whose file is not there is not
collected and is named in the node's facts (``saved_outputs_missing``). Pure functions of the file system.
"""

from __future__ import annotations

import os

# part -> option -> the file names it is read from, first found wins; every part needs its ``src``.
FILES = (
    ("gpu", (("src", ("nvidia-smi-q.xml", "nvidia-smi-q.txt")), ("nvlink_src", ("nvidia-smi-nvlink-s.txt",)),
             ("nvlink_remote_src", ("nvidia-smi-nvlink-R.txt",)),
             ("nvlink_capabilities_src", ("nvidia-smi-nvlink-c.txt",)))),
    ("gpu_bandwidth", (("src", ("nvbandwidth.txt", "bandwidthTest.txt")),)),
    ("xid", (("src", ("journalctl-k.txt", "dmesg.txt")),)),
    ("dcgm", (("src", ("dcgmi-diag.json",)),)),
    ("dcgm_health", (("src", ("dcgmi-health.json",)),)),
)
# options of a live run that do not apply to a saved file: the Xid window is the file's (a case sent last week is
# read whole), and nothing is run or waited for
DROPPED = {"xid": ("since", "source"), "gpu": ("nvlink_errors_window", "nvlink_remote"),
           "gpu_bandwidth": ("nvlink_traffic",)}
# the parts a saved output can stand for (the others are collected on a live node only)
READABLE = tuple(name for name, dummy in FILES)


def node_folder(folder, host):
    """The folder of ``host``'s saved outputs: ``<folder>/<host>`` when that is a folder, else ``folder``.
    Raises ValueError when neither is a folder."""
    if not folder or not os.path.isdir(folder):
        raise ValueError("zhisuan_saved_outputs names %r, which is not a folder on the controller" % (folder,))
    own = os.path.join(folder, host)
    return own if os.path.isdir(own) else folder


def saved_options(folder, families, options):
    """``(families to read, options per family, files read, families not in the folder)`` for the node parts
    ``families`` (a bandwidth file adds gpu_bandwidth when gpu is among them), with ``options`` (the live run's,
    per family) given the saved-output options."""
    files = dict(FILES)
    wanted = list(families)
    if "gpu" in wanted and "gpu_bandwidth" not in wanted:
        wanted.append("gpu_bandwidth")
    read, out, used, missing = [], {}, [], []
    for name in wanted:
        if name not in files:
            missing.append(name)
            continue
        found = {}
        for option, names in files[name]:
            for file_name in names:
                path = os.path.join(folder, file_name)
                if os.path.isfile(path):
                    found[option] = path
                    used.append(file_name)
                    if file_name == "bandwidthTest.txt":
                        found["tool"] = "bandwidthTest"
                    break
        if "src" not in found:
            if name in families:
                missing.append(name)
            continue
        given = dict((key, value) for key, value in (options.get(name) or {}).items()
                     if key not in DROPPED.get(name, ()))
        given.update(found)
        read.append(name)
        out[name] = given
    return read, out, used, missing
