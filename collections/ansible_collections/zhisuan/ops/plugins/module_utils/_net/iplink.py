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

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._safe_parse import list_of_str, load_json, text_or_none, to_int

TOOL = "ip"


def parse_links(text, warn=None):
    """Parse ``ip -j link`` (a JSON list of links). Raises ParseError on anything else.

    Every field is read by its type: ``ifname`` must be a non-empty string (else the entry is skipped with a
    warning), ``flags`` a list of strings (other items are dropped), ``mtu`` a positive integer (else ``None``).
    An empty list is an error: every Linux node has at least its loopback.
    """
    data = load_json(text, TOOL, "ip -j link did not print JSON: %s")
    if not isinstance(data, list):
        raise ParseError(TOOL, "ip -j link printed %s, not a list of links" % type(data).__name__)
    if not data:
        raise ParseError(TOOL, "ip -j link listed no interface (not even the loopback)")
    links = {}
    for entry in data:
        name = entry.get("ifname") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name:
            if warn is not None:
                warn("ip -j link: an entry without a readable 'ifname' was skipped: %s" % repr(entry)[:200])
            continue
        flags = list_of_str(entry.get("flags"))
        mtu = to_int(entry.get("mtu"))
        links[name] = {
            "mtu": mtu if mtu is not None and mtu > 0 else None,
            "operstate": text_or_none(entry.get("operstate")),
            "flags": flags,
            "address": text_or_none(entry.get("address")),
            "link_type": text_or_none(entry.get("link_type")),
            "admin_up": "UP" in flags,
            "carrier": "LOWER_UP" in flags and "NO-CARRIER" not in flags,
        }
    if not links:
        raise ParseError(TOOL, "ip -j link listed %d entries and none has a readable 'ifname'" % len(data))
    return links


def is_loopback(link):
    flags = link.get("flags")
    return link.get("link_type") == "loopback" or (isinstance(flags, list) and "LOOPBACK" in flags)
