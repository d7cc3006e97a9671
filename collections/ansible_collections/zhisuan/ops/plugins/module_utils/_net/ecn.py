# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""RoCE ECN (DCQCN) enablement from sysfs: ``/sys/class/net/<if>/ecn/roce_np/enable/<prio>`` (notification point:
the receiver sends CNPs) and ``.../ecn/roce_rp/enable/<prio>`` (reaction point: the sender slows down), one file per
priority 0-7 holding ``0`` or ``1`` (mlx5 driver). ``read_ecn`` gives ``{"np": [enabled priorities], "rp": [...],
"cnp_dscp": int or None, "errors": [...]}`` or ``None`` where the NIC exposes no ``ecn/`` directory (not a mlx5
port, a VF, or a driver without it). A file that does not hold ``0``/``1`` is an entry in ``errors`` (its priority is
left out), never a guess.
"""

import os

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._safe_parse import is_ascii_digits, to_int

TOOL = "sysfs ecn"
PRIORITIES = tuple(range(8))


def parse_enable(text):
    """One ``enable/<prio>`` file's text -> True/False; anything but ``0``/``1`` raises ParseError."""
    value = (text or "").strip()
    if value not in ("0", "1"):
        raise ParseError(TOOL, "an ECN enable file holds %r, not 0 or 1" % value[:40])
    return value == "1"


def _read(path):
    try:
        with open(path) as handle:
            return handle.read(64)
    except (IOError, OSError):
        return None


def read_ecn(root, ifname):
    base = os.path.join(root, "sys", "class", "net", ifname, "ecn")
    if not os.path.isdir(base):
        return None
    facts = {"np": None, "rp": None, "cnp_dscp": None, "errors": []}
    for point in ("np", "rp"):
        folder = os.path.join(base, "roce_%s" % point, "enable")
        if not os.path.isdir(folder):
            continue
        enabled = []
        for prio in PRIORITIES:
            text = _read(os.path.join(folder, str(prio)))
            if text is None:
                facts["errors"].append("roce_%s/enable/%d: not readable" % (point, prio))
                continue
            try:
                if parse_enable(text):
                    enabled.append(prio)
            except ParseError as exc:
                facts["errors"].append("roce_%s/enable/%d: %s" % (point, prio, exc.message))
        facts[point] = enabled
    dscp = (_read(os.path.join(base, "roce_np", "cnp_dscp")) or "").strip()
    facts["cnp_dscp"] = to_int(dscp) if is_ascii_digits(dscp) and len(dscp) <= 2 else None
    return facts
