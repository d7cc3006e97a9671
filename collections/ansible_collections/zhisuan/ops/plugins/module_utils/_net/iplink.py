# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""``ip -j link`` JSON -> ``{name: {mtu, operstate, flags, address, link_type, admin_up, carrier}}``.

Pure function, standard library only. ``admin_up`` is the ``UP`` flag (``ip link set IF up``); ``carrier`` is
``False`` when the kernel flags ``NO-CARRIER`` (no cable, peer down) and ``LOWER_UP`` is missing.
"""

from __future__ import annotations

import json

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError

TOOL = "ip"


def parse_links(text, warn=None):
    """Parse ``ip -j link`` (a JSON list of links). Raises ParseError on anything else."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ParseError(TOOL, "ip -j link did not print JSON: %s" % exc)
    if not isinstance(data, list):
        raise ParseError(TOOL, "ip -j link printed %s, not a list of links" % type(data).__name__)
    links = {}
    for entry in data:
        if not isinstance(entry, dict) or not entry.get("ifname"):
            if warn is not None:
                warn("ip -j link: an entry without 'ifname' was skipped: %r" % (entry,))
            continue
        flags = list(entry.get("flags") or [])
        links[entry["ifname"]] = {
            "mtu": entry.get("mtu"),
            "operstate": entry.get("operstate"),
            "flags": flags,
            "address": entry.get("address"),
            "link_type": entry.get("link_type"),
            "admin_up": "UP" in flags,
            "carrier": "LOWER_UP" in flags and "NO-CARRIER" not in flags,
        }
    return links


def is_loopback(link):
    return link.get("link_type") == "loopback" or "LOOPBACK" in (link.get("flags") or [])
