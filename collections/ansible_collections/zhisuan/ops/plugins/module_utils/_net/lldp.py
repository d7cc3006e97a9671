# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""lldpd's JSON (``lldpctl -f json``, ``lldpcli -f json show neighbors``) -> neighbours per local interface.

lldpd's JSON writer collapses a list of one into a mapping, so the shape depends on the count: with one
interface ``lldp.interface`` is ``{"eth0": {...}}``, with several it is ``[{"eth0": {...}}, {"eth1": {...}}]``
(an interface with two neighbours appears twice in the list); ``chassis`` is keyed by the system name, or holds
``id`` directly when the neighbour sends none; with no neighbour at all ``lldp`` is ``{}``. Both shapes are read.

The switch port is the port id when its subtype names a port (``ifname``, ``local``), else the port description
(lldpd's default port id is the MAC, with the port name in the description). Pure functions, standard library only.
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._safe_parse import load_json, text_or_none, to_int

TOOL = "lldpctl"
_NAME_SUBTYPES = ("ifname", "local", "ifalias")


def _as_list(value):
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _value(value):
    """A field lldpd prints as a string, or as ``{"value": ...}`` (mgmt-ip, descr of some versions): text or None."""
    if isinstance(value, dict):
        value = value.get("value")
    return text_or_none(value)


def _chassis(chassis):
    """``(system name or None, chassis mapping)``."""
    if not isinstance(chassis, dict):
        return None, {}
    if "id" in chassis and isinstance(chassis.get("id"), dict):
        return None, chassis
    for name, body in chassis.items():
        return name, body if isinstance(body, dict) else {}
    return None, {}


def _neighbor(body):
    name, chassis = _chassis(body.get("chassis"))
    port = body.get("port") if isinstance(body.get("port"), dict) else {}
    port_id = port.get("id") if isinstance(port.get("id"), dict) else {}
    descr = _value(port.get("descr"))
    id_type = text_or_none(port_id.get("type"))
    id_value = _value(port_id.get("value"))
    if id_type in _NAME_SUBTYPES and id_value:
        switch_port = id_value
    else:
        switch_port = descr or id_value
    chassis_id = chassis.get("id") if isinstance(chassis.get("id"), dict) else {}
    ttl = to_int(port.get("ttl"))
    return {
        "switch": text_or_none(name) or _value(chassis_id.get("value")),
        "switch_port": switch_port,
        "switch_descr": _value(chassis.get("descr")),
        "chassis_id": _value(chassis_id.get("value")),
        "port_id": id_value,
        "port_id_type": id_type,
        "port_descr": descr,
        "mgmt_ip": [ip for ip in (_value(item) for item in _as_list(chassis.get("mgmt-ip"))) if ip],
        "via": text_or_none(body.get("via")),
        "ttl": ttl if ttl is not None and ttl >= 0 else None,
    }


def parse_neighbors(text, warn=None):
    """``{local interface: [neighbour, ...]}``; ``{}`` when lldpd sees no neighbour."""
    data = load_json(text, TOOL, "lldpctl -f json did not print JSON: %s")
    if not isinstance(data, dict) or not isinstance(data.get("lldp"), dict):
        raise ParseError(TOOL, "lldpctl -f json printed no 'lldp' object")
    result = {}
    for entry in _as_list(data["lldp"].get("interface")):
        if not isinstance(entry, dict):
            if warn is not None:
                warn("lldpctl: an interface entry that is not an object was skipped: %r" % (entry,))
            continue
        for ifname, body in entry.items():
            if not isinstance(body, dict):
                continue
            result.setdefault(ifname, []).append(_neighbor(body))
    return result


def first_neighbors(neighbors):
    """``{IF: {switch, switch_port, switch_descr, ..., neighbors: n}}`` (the first neighbour of each interface)."""
    result = {}
    for ifname, entries in neighbors.items():
        if entries:
            summary = dict(entries[0])
            summary["neighbors"] = len(entries)
            result[ifname] = summary
    return result
