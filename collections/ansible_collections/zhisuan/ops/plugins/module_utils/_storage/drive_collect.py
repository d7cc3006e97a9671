# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""The drive family's collector (``zhisuan.ops.check`` ``drive``): every NVMe drive's SMART / Health log, read
with ``smartctl -j -a <device>`` through the one subprocess seam.

The drives are the ``devices`` given, else the NVMe controllers the kernel lists (``<root>/sys/class/nvme/nvme*``
-> ``/dev/nvmeN``). A drive smartctl cannot read is named in ``errors`` ([{device, error}]) and the others are read;
smartctl missing or hanging fails the family (its error check).
"""

import os
import re

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import OptionError, ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._runner import run
from ansible_collections.zhisuan.ops.plugins.module_utils._storage import smartctl
from ansible_collections.zhisuan.ops.plugins.module_utils._text import natural_key

DRIVE_ARGSPEC = dict(
    smartctl_path=dict(type="str", default="smartctl"),
    devices=dict(type="list", elements="str", default=[]),
    root=dict(type="path", default="/"),
)
_CONTROLLER = re.compile(r"^nvme[0-9]+$")
_DEVICE = re.compile(r"^/dev/[A-Za-z0-9_][A-Za-z0-9_./-]*$")


def nvme_controllers(root):
    """``/dev/nvmeN`` for every NVMe controller under ``<root>/sys/class/nvme`` (none when the folder is absent)."""
    try:
        names = os.listdir(os.path.join(root, "sys", "class", "nvme"))
    except OSError:
        return []
    return ["/dev/%s" % name for name in sorted(names, key=natural_key) if _CONTROLLER.match(name)]


def collect_drives(module):
    params = module.params
    devices = list(params["devices"] or []) or nvme_controllers(params["root"])
    bad = [device for device in devices if not _DEVICE.match(device)]
    if bad:
        raise OptionError("devices", "the drive devices must be paths under /dev, got %s" % ", ".join(bad))
    drives, errors = [], []
    for device in devices:
        result = run([params["smartctl_path"], "-j", "-a", device], timeout=params["timeout"], tool=smartctl.TOOL,
                     ok_rcs=None)
        try:
            drives.append(smartctl.parse_drive(result.stdout, device=device, warn=module.warn))
        except ParseError as exc:
            errors.append({"device": device, "error": exc.message, "rc": result.rc})
    return {"drive": {"devices": devices, "drives": drives, "errors": errors}}
