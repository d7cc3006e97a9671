# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Pure parsers of ipmitool's text output: ``sensor``, ``sdr elist``, ``mc info``, ``chassis status``,
``chassis power status`` and ``fru print`` (``sel elist`` is in ``_sel``).

Each takes the text and a ``warn(msg)`` callback: a line that does not fit is reported ("please report") and
skipped; output with nothing readable at all raises ``ParseError`` naming the command.
"""

import re

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._ipmi import _sel
from ansible_collections.zhisuan.ops.plugins.module_utils._safe_parse import to_float

TOOL = "ipmitool"
# ``sel elist`` lives in _sel; one import point for the callers.
parse_sel_elist = _sel.parse_sel_elist
sel_severity = _sel.sel_severity

# ipmitool's threshold columns, in its order, and their names in the facts.
THRESHOLD_KEYS = ("lnr", "lcr", "lnc", "unc", "ucr", "unr")
THRESHOLD_FACTS = {"lnr": "lower_fatal", "lcr": "lower_critical", "lnc": "lower_caution",
                   "unc": "upper_caution", "ucr": "upper_critical", "unr": "upper_fatal"}
# Sensor status words (`sensor` prints ok/nc/cr/nr/na; `sdr elist` also lnc/unc/lcr/ucr/lnr/unr/ns).
HEALTH = {"ok": "OK", "nc": "Warning", "lnc": "Warning", "unc": "Warning",
          "cr": "Critical", "lcr": "Critical", "ucr": "Critical", "nr": "Critical", "lnr": "Critical", "unr": "Critical",
          "na": None, "ns": None}
_NUMBER = re.compile(r"^[-+]?[0-9]+(?:\.[0-9]+)?$")
_READING = re.compile(r"^([-+]?[0-9]+(?:\.[0-9]+)?) ([A-Za-z% ]*[A-Za-z%])(?:, (.*))?$")


def _ignore(msg):
    pass


def _lines(text):
    return [line for line in (text or "").splitlines() if line.strip()]


def health(status, warn=_ignore, where="sensor"):
    """IPMI status word -> OK | Warning | Critical | None."""
    key = (status or "").strip().lower()
    if key not in HEALTH:
        warn("ipmitool: unknown status %r of %s; please report" % (status, where))
        return None
    return HEALTH[key]


def _float(value, warn, where):
    value = value.strip()
    if value.lower() in ("na", ""):
        return None
    number = to_float(value) if _NUMBER.match(value) else None
    if number is None:
        warn("ipmitool: %s: %r is not a number; please report" % (where, value))
    return number


def parse_sensor(text, warn=_ignore):
    """``ipmitool sensor`` -> one record per line: name, reading, units, status, discrete, state, thresholds.

    Discrete sensors print ``discrete`` as units, their reading in hex and the sensor's state bits (IPMI Get Sensor
    Reading bytes 3 and 4) as the status: those become ``discrete: true``, ``reading: null`` and ``state`` (int).
    """
    out = []
    for line in _lines(text):
        fields = [field.strip() for field in line.split("|")]
        if len(fields) != 10 or not fields[0]:
            warn("ipmitool sensor: unexpected line %r; please report" % line[:200])
            continue
        name, reading, units, status = fields[:4]
        record = {"name": name, "units": units or None, "discrete": units == "discrete", "reading": None,
                  "status": status.lower(), "state": None,
                  "thresholds": dict((key, _float(value, warn, "%s %s" % (name, key)))
                                     for key, value in zip(THRESHOLD_KEYS, fields[4:]))}
        if record["discrete"]:
            record["status"] = None
            if re.match(r"^0x[0-9a-fA-F]{1,4}$", status):
                record["state"] = int(status, 16)
            elif status.lower() != "na":
                warn("ipmitool sensor: %s: unexpected state %r; please report" % (name, status))
        else:
            record["reading"] = _float(reading, warn, name)
            if record["status"] not in HEALTH:
                warn("ipmitool sensor: %s: unknown status %r; please report" % (name, status))
        out.append(record)
    if not out:
        raise ParseError(TOOL, "no sensor line in the output of `ipmitool sensor`: %r" % (text or "")[:120])
    return out


_NO_READING = ("no reading", "disabled", "not readable", "")


def _sdr_list_row(fields):
    """One ``sdr list`` / ``sdr`` row (``name | reading or state | status``): no sensor number, no entity."""
    name, value, status = fields
    record = {"name": name, "number": None, "status": status.lower(), "entity": None, "entity_id": None,
              "entity_instance": None, "reading": None, "units": None, "states": [], "text": value, "state": None}
    reading = _READING.match(value)
    if reading:
        record["reading"], record["units"] = to_float(reading.group(1)), reading.group(2)
    elif re.match(r"^0x[0-9a-fA-F]{2,4}$", value):
        record["state"] = int(value, 16)               # a discrete sensor's state bits, undecoded by ipmitool
    elif value.lower() not in _NO_READING:
        record["states"] = [state.strip() for state in value.split(",") if state.strip()]
    return record


def parse_sdr_elist(text, warn=_ignore):
    """``ipmitool sdr elist`` -> name, number, status, entity (``id.instance``), reading/units or states, text.

    Also reads ``sdr list`` / ``sdr`` rows (``name | reading | status``: ``number`` and ``entity`` None, a discrete
    sensor's state bits in ``state``). A line that is no row (``Unable to send command: Invalid argument`` that
    some BMCs make ipmitool print between the rows) is warned and skipped; the other rows are kept.
    """
    out = []
    for line in _lines(text):
        fields = [field.strip() for field in line.split("|")]
        if len(fields) == 3 and fields[0] and fields[2]:
            record = _sdr_list_row(fields)
            if record["status"] not in HEALTH:
                warn("ipmitool sdr list: %s: unknown status %r; please report" % (record["name"], fields[2]))
            out.append(record)
            continue
        if len(fields) != 5 or not re.match(r"^[0-9A-Fa-f]{2}h$", fields[1]):
            warn("ipmitool sdr elist: unexpected line %r; please report" % line[:200])
            continue
        name, number, status, entity, description = fields
        record = {"name": name, "number": int(number[:-1], 16), "status": status.lower(), "entity": entity,
                  "entity_id": None, "entity_instance": None, "reading": None, "units": None, "states": [],
                  "text": description, "state": None}
        match = re.match(r"^([0-9]{1,3})\.([0-9]{1,3})$", entity)
        if match:
            record["entity_id"], record["entity_instance"] = int(match.group(1)), int(match.group(2))
        else:
            warn("ipmitool sdr elist: %s: unexpected entity %r; please report" % (name, entity))
        reading = _READING.match(description)
        if reading:
            record["reading"], record["units"] = to_float(reading.group(1)), reading.group(2)
            if record["reading"] is None:
                warn("ipmitool sdr elist: %s: unreadable reading %r; please report" % (name, reading.group(1)))
            states = reading.group(3) or ""
        elif description.lower() in _NO_READING:
            states = ""
        else:
            states = description
        record["states"] = [state.strip() for state in states.split(",") if state.strip()]
        if record["status"] not in HEALTH:
            warn("ipmitool sdr elist: %s: unknown status %r; please report" % (name, status))
        out.append(record)
    if not out:
        raise ParseError(TOOL, "no sensor line in the output of `ipmitool sdr elist`: %r" % (text or "")[:120])
    return out


def _key(label):
    return re.sub(r"[^a-z0-9]+", "_", label.strip().lower()).strip("_")


def _key_values(text, command, warn):
    """``Key : value`` lines; indented lines that follow a key continue it as a list (``mc info``'s support list)."""
    fields, last = {}, None
    for line in _lines(text):
        if line.startswith((" ", "\t")) and last is not None:
            if not isinstance(fields[last], list):
                fields[last] = [fields[last]] if fields[last] else []
            fields[last].append(line.strip())
            continue
        label, sep, value = line.partition(":")
        if not sep or not label.strip():
            warn("ipmitool %s: unexpected line %r; please report" % (command, line[:200]))
            continue
        last = _key(label)
        fields[last] = value.strip()
    return fields


def parse_mc_info(text, warn=_ignore):
    """``ipmitool mc info`` -> device id, firmware revision, IPMI version, manufacturer, product, support lists."""
    raw = _key_values(text, "mc info", warn)
    if "firmware_revision" not in raw and "device_id" not in raw:
        raise ParseError(TOOL, "no Device ID or Firmware Revision in the output of `ipmitool mc info`: %r"
                         % (text or "")[:120])

    def number(key):
        match = re.match(r"^([0-9]{1,9})", raw.get(key) or "") if isinstance(raw.get(key), str) else None
        return int(match.group(1)) if match else None

    def text_of(key):
        value = raw.get(key)
        return value if isinstance(value, str) and value else None

    product_name = text_of("product_name")
    if product_name and product_name.lower().startswith("unknown"):
        product_name = None
    return {
        "device_id": number("device_id"),
        "device_revision": number("device_revision"),
        "firmware_revision": text_of("firmware_revision"),
        "ipmi_version": text_of("ipmi_version"),
        "manufacturer_id": number("manufacturer_id"),
        "manufacturer_name": text_of("manufacturer_name"),
        "product_id": number("product_id"),
        "product_name": product_name,
        "device_available": text_of("device_available"),
        "provides_device_sdrs": text_of("provides_device_sdrs"),
        "additional_device_support": list(raw.get("additional_device_support") or []),
        "aux_firmware_rev_info": list(raw.get("aux_firmware_rev_info") or []),
    }


_BOOL = {"true": True, "false": False, "active": True, "inactive": False}


def parse_chassis_status(text, warn=_ignore):
    """``ipmitool chassis status`` -> system_power (on/off), the fault flags (bool), restore policy, last event."""
    raw = _key_values(text, "chassis status", warn)
    if "system_power" not in raw:
        raise ParseError(TOOL, "no 'System Power' line in the output of `ipmitool chassis status`: %r" % (text or "")[:120])
    out = {}
    for key, value in raw.items():
        value = value if isinstance(value, str) else " ".join(value)
        if key in ("system_power", "power_restore_policy", "last_power_event", "front_panel_control"):
            out[key] = value or None
        elif value.lower() in _BOOL:
            out[key] = _BOOL[value.lower()]
        else:
            out[key] = value or None
    if out["system_power"] not in ("on", "off"):
        warn("ipmitool chassis status: unexpected System Power %r; please report" % out["system_power"])
    return out


def parse_power_status(text):
    """``ipmitool chassis power status`` -> ``on`` | ``off``."""
    match = re.search(r"Chassis Power is (on|off)\b", text or "")
    if not match:
        raise ParseError(TOOL, "no 'Chassis Power is on|off' in the output of `ipmitool chassis power status`: %r"
                         % (text or "")[:120])
    return match.group(1)


def parse_fru_print(text, warn=_ignore):
    """``ipmitool fru print`` -> one record per FRU device: ``id``, ``description``, its fields, ``error``.

    Field labels become snake_case keys (``Product Serial`` -> ``product_serial``); repeated labels (``Board
    Extra``) become lists. A device that cannot be read keeps the line ipmitool printed in ``error``.
    """
    devices = []
    for line in _lines(text):
        label, sep, value = line.partition(":")
        if sep and label.strip() == "FRU Device Description":
            value = value.strip()
            match = re.search(r"\(ID ([0-9]+)\)\s*$", value)
            devices.append({"id": match.group(1) if match else None,
                            "description": re.sub(r"\s*\(ID [0-9]+\)\s*$", "", value), "fields": {}, "error": None})
        elif not devices:
            warn("ipmitool fru print: line before the first FRU device %r; please report" % line[:200])
        elif sep and label.startswith((" ", "\t")) and label.strip():
            key, value = _key(label), value.strip()
            fields = devices[-1]["fields"]
            if key in fields:
                fields[key] = (fields[key] if isinstance(fields[key], list) else [fields[key]]) + [value]
            else:
                fields[key] = value
        else:
            device = devices[-1]
            device["error"] = (device["error"] + "; " if device["error"] else "") + line.strip()
    if not devices and _lines(text):
        raise ParseError(TOOL, "no 'FRU Device Description' in the output of `ipmitool fru print`: %r" % (text or "")[:120])
    return devices
