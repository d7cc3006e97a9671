# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""A NIC's ``net`` facts (net_info) in the types the NIC rules compare (pure): what was there but unreadable is named
in the NIC's ``errors`` so the rule says so instead of passing."""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._readings import (
    flag, items, mapping, reading, shown, text, unreadable,
)


# (fact, lowest, highest) of the numbers a NIC's facts hold; outside: unreadable.
_NIC_NUMBERS = (("speed_mbps", 1, 10 ** 7), ("mtu", 1, 2 ** 31))
_OPTIC_NUMBERS = ("temperature_c", "voltage_v", "bias_ma", "tx_power_mw", "tx_power_dbm", "rx_power_mw", "rx_power_dbm")


def _optic_values(value):
    """A module reading (one number, or a list per channel) with unreadable numbers as None; None for no reading."""
    if isinstance(value, list):
        return [reading(item, low=None) for item in value]
    return reading(value, low=None)


def _clean_optics(optics):
    if not isinstance(optics, dict) or not optics:
        return None
    clean = dict(optics)
    for key in _OPTIC_NUMBERS:
        clean[key] = _optic_values(optics.get(key))
    for key in ("alarms", "warnings", "implausible"):
        clean[key] = [item for item in items(optics.get(key)) if isinstance(item, str)]
    clean["thresholds"] = dict((key, reading(value, low=None)) for key, value in mapping(optics.get("thresholds")).items())
    return clean


def _clean_delta(delta, errors):
    if delta is None:
        return None
    if not isinstance(delta, dict):
        errors.setdefault("counters", "counter increments are not readable: %s" % shown(delta))
        return None
    clean = dict(delta)
    for key in ("errors", "discards", "pause", "pause_per_s", "seconds"):
        value = delta.get(key)
        if unreadable(value):
            errors.setdefault("counters", "counter increment %s is not readable: %s" % (key, shown(value)))
            return None
        clean[key] = value
    clean["counters"] = dict((name, value) for name, value in mapping(delta.get("counters")).items()
                             if reading(value) is not None)
    return clean


def clean_nic(raw):
    """A NIC's facts with every value of the type the rules compare; what was there but unreadable is named in
    ``errors`` (``settings`` for speed/link, ``mtu``, ``counters``) so the rule says so instead of passing."""
    nic = dict(raw) if isinstance(raw, dict) else {"errors": {"settings": "the facts of this interface are not a "
                                                                          "mapping: %s" % shown(raw)}}
    errors = dict((str(key), str(value)) for key, value in mapping(nic.get("errors")).items() if value)
    for key, low, high in _NIC_NUMBERS:
        value = nic.get(key)
        if unreadable(value, low, high):
            errors.setdefault("settings" if key == "speed_mbps" else key, "%s is not readable: %s" % (key, shown(value)))
        nic[key] = reading(value, low, high)
    for key in ("link", "carrier", "admin_up"):
        nic[key] = flag(nic.get(key))
    for key in ("operstate", "duplex", "port", "optics_reason"):
        nic[key] = text(nic.get(key))
    nic["present"] = nic.get("present") is not False
    nic["optics"] = _clean_optics(nic.get("optics"))
    nic["counters_delta"] = _clean_delta(nic.get("counters_delta"), errors)
    nic["errors"] = errors
    return nic
