# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""``mlnx_qos -i IF`` (NVIDIA/Mellanox OFED) -> RoCE QoS facts: trust mode, PFC priorities, DSCP map.

``{"dcbx_mode": "OS controlled", "trust": "dscp", "pfc_enabled": [3], "dscp2prio": {0: [7, 6, ...], ...},
"cable_len": 7, "tc": {0: {"tsa": "vendor", "ratelimit": "unlimited", "priorities": [1]}}}``. Pure function, standard
library only. Output without a ``Priority trust state`` line raises ``ParseError``.
"""

import re

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._safe_parse import is_ascii_digits, to_int

TOOL = "mlnx_qos"

_PRIO_DSCP_RE = re.compile(r"^\s*prio:([0-9]{1,3})\s+dscp:([0-9,]*)\s*$")
_TC_RE = re.compile(r"^tc:\s*([0-9]{1,3})\s+ratelimit:\s*([^,]+),\s*tsa:\s*(\S+)")
_TC_PRIO_RE = re.compile(r"^\s*priority:\s*([0-9\s]+)$")


def parse_mlnx_qos(text, warn=None):
    facts = {"dcbx_mode": None, "trust": None, "pfc_enabled": None, "dscp2prio": {}, "cable_len": None, "tc": {}}
    priorities = None
    tc = None
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("DCBX mode:"):
            facts["dcbx_mode"] = stripped.split(":", 1)[1].strip()
        elif stripped.startswith("Priority trust state:"):
            facts["trust"] = stripped.split(":", 1)[1].strip()
        elif stripped.startswith("Cable len:"):
            value = stripped.split(":", 1)[1].strip()
            facts["cable_len"] = to_int(value) if is_ascii_digits(value) else None
        elif stripped.startswith("priority ") and not stripped.startswith("priority:"):
            priorities = [int(item) for item in stripped.split()[1:] if is_ascii_digits(item)]
        elif stripped.startswith("enabled ") and priorities is not None:
            flags = stripped.split()[1:]
            facts["pfc_enabled"] = [prio for prio, flag in zip(priorities, flags) if flag == "1"]
        elif _PRIO_DSCP_RE.match(line):
            match = _PRIO_DSCP_RE.match(line)
            values = [int(item) for item in match.group(2).split(",") if is_ascii_digits(item.strip())]
            facts["dscp2prio"].setdefault(int(match.group(1)), []).extend(values)
        elif _TC_RE.match(stripped):
            match = _TC_RE.match(stripped)
            tc = {"ratelimit": match.group(2).strip(), "tsa": match.group(3), "priorities": []}
            facts["tc"][int(match.group(1))] = tc
        elif _TC_PRIO_RE.match(line) and tc is not None:
            tc["priorities"].extend(int(item) for item in _TC_PRIO_RE.match(line).group(1).split())
        elif warn is not None and not stripped.startswith(("dscp2prio", "PFC configuration", "buffer", "Receive buffer",
                                                           "default priority", "tc:")):
            warn("mlnx_qos: unread line %r; please report" % stripped)
    if facts["trust"] is None:
        raise ParseError(TOOL, "no 'Priority trust state' line in the mlnx_qos output")
    return facts
