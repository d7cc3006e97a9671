# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""InfiniBand / RoCE port error counters from sysfs, read twice a window apart (issue 24 item 5).

``<root>/sys/class/infiniband/<dev>/ports/<n>/counters/<name>``: one decimal number per file (the PMA counters the
kernel exports for InfiniBand and RoCE ports alike). ``read_counters`` reads the error counters of every port;
``counter_deltas`` turns two readings into the growth of each counter over the window (a counter that went down was
reset or wrapped between the readings: its growth is unknown, ``None``, with a warning). Only the reading touches
the file system; ``parse_counter`` and ``counter_deltas`` are pure. Standard library only.
"""

import os

from ansible_collections.zhisuan.ops.plugins.module_utils._safe_parse import is_ascii_digits

# The error counters judged (rdma.port.errors); data and packet counters are not read.
ERROR_COUNTERS = ("link_downed", "excessive_buffer_overrun_errors", "local_link_integrity_errors", "symbol_error",
                  "link_error_recovery", "port_rcv_errors", "port_rcv_remote_physical_errors", "port_xmit_discards")
_MAX_DIGITS = 20  # a 64-bit counter


def parse_counter(text):
    """One counter file's text -> int, or ``None`` for anything that is not a plain decimal number."""
    value = (text or "").strip()
    if not value or len(value) > _MAX_DIGITS or not is_ascii_digits(value):
        return None
    return int(value)


def _read(path):
    try:
        with open(path, "rb") as handle:
            return handle.read(64).decode("ascii", "replace")
    except (IOError, OSError):
        return None


def read_counters(root="/", devices=None):
    """``{dev: {port: {counter: int or None}}}`` for every port with a ``counters`` directory; a counter file that is
    missing or unreadable is ``None``. ``devices`` limits the devices read (default all)."""
    base = os.path.join(root, "sys", "class", "infiniband")
    try:
        names = sorted(os.listdir(base))
    except (IOError, OSError):
        return {}
    out = {}
    for name in names:
        if devices and name not in devices:
            continue
        ports_dir = os.path.join(base, name, "ports")
        try:
            ports = [item for item in os.listdir(ports_dir) if is_ascii_digits(item)]
        except (IOError, OSError):
            continue
        for number in sorted(ports, key=int):
            cdir = os.path.join(ports_dir, number, "counters")
            if not os.path.isdir(cdir):
                continue
            out.setdefault(name, {})[int(number)] = dict(
                (counter, parse_counter(_read(os.path.join(cdir, counter)))) for counter in ERROR_COUNTERS)
    return out


def counter_deltas(before, after, window_s, warn=None):
    """``{dev: {port: {"window_s", "deltas": {counter: growth or None}}}}`` from two ``read_counters`` results.

    A port seen only once is left out; a counter unreadable in either reading, or lower in the second (reset or
    wrapped), has growth ``None`` (the latter with a warning)."""
    warn = warn or (lambda message: None)
    out = {}
    for name, ports in sorted((after or {}).items()):
        for number, second in sorted((ports or {}).items()):
            first = ((before or {}).get(name) or {}).get(number)
            if first is None:
                continue
            deltas = {}
            for counter in ERROR_COUNTERS:
                old, new = first.get(counter), second.get(counter)
                if old is None or new is None:
                    deltas[counter] = None
                elif new < old:
                    warn("%s port %s: %s went down from %d to %d between the readings (reset or wrapped); its "
                         "growth is unknown" % (name, number, counter, old, new))
                    deltas[counter] = None
                else:
                    deltas[counter] = new - old
            out.setdefault(name, {})[number] = {"window_s": window_s, "deltas": deltas, "after": dict(second)}
    return out
