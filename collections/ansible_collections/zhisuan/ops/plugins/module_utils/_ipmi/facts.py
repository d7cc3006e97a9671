# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Parsed ipmitool outputs -> the ``bmc`` facts of docs/bmc-facts.md (protocol ``ipmi``), ``firmware`` and ``log``.

Pure functions. IPMI has no processor, memory, PCIe, NIC or drive inventory: those lists are ``null``. Power
supplies are the SDR's power-supply entities (entity id 10) with their status sensor's states; fans are the RPM
sensors (and percent or unreadable sensors named like a fan); ``sensors`` holds every threshold-based sensor.
"""

import re

from ansible_collections.zhisuan.ops.plugins.module_utils._ipmi.parse import HEALTH, THRESHOLD_FACTS

# IANA enterprise number (mc info "Manufacturer ID") -> the vendor adapter names of the Redfish side.
VENDORS = {10876: "supermicro", 674: "dell", 11: "hpe", 47196: "hpe", 19046: "lenovo", 5703: "nvidia",
           37945: "inspur"}
UNITS = {"degrees C": "Cel", "degrees F": "[degF]", "Volts": "V", "Amps": "A", "Watts": "W", "RPM": "RPM",
         "percent": "%"}
KINDS = {"degrees C": "temperature", "degrees F": "temperature", "Volts": "voltage", "Amps": "current",
         "Watts": "power", "RPM": "fan"}
_RANK = {None: 0, "OK": 1, "Warning": 2, "Critical": 3}
PSU_ENTITY = 10
# Discrete states of a power supply (IPMI sensor type 08h) and what they mean for its health.
_PSU_CRITICAL = re.compile(r"failure detected|ac lost|input lost|out[- ]of[- ]range|config(uration)? error", re.I)
_PSU_WARNING = re.compile(r"predictive failure", re.I)


def _worst(*values):
    return max(values, key=lambda value: _RANK.get(value, 0))


def _sensor_id(name):
    return re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_") or name


def _health(status):
    return HEALTH.get((status or "").lower())


def sensor_facts(sensors):
    """Every threshold-based sensor of ``ipmitool sensor`` (discrete ones are read from ``sdr elist``)."""
    out = []
    for s in sensors or []:
        if s["discrete"]:
            continue
        units = s["units"]
        out.append({
            "id": _sensor_id(s["name"]),
            "name": s["name"],
            "kind": KINDS.get(units, "fan" if units in ("percent", None) and "fan" in s["name"].lower() else "other"),
            "reading": s["reading"],
            "units": UNITS.get(units, units),
            "health": _health(s["status"]),
            "thresholds": dict((THRESHOLD_FACTS[key], value) for key, value in s["thresholds"].items()),
        })
    return out


def fan_facts(sensors):
    return [{"id": s["id"], "name": s["name"], "reading": s["reading"],
             "units": {"RPM": "RPM", "%": "Percent"}.get(s["units"]), "health": s["health"],
             "state": "Absent" if s["reading"] is None and s["health"] is None else "Enabled"}
            for s in sensors if s["kind"] == "fan"]


def psu_facts(sdr):
    """One power supply per SDR entity 10.<n>: health from its discrete states and its sensors' status."""
    if sdr is None:
        return None
    psus = {}
    for record in sdr:
        if record["entity_id"] != PSU_ENTITY:
            continue
        psu = psus.setdefault(record["entity"], {
            "id": record["entity"], "name": None, "model": None, "serial": None, "firmware_version": None,
            "capacity_watts": None, "input_watts": None, "output_watts": None, "health": None, "state": None})
        health = _health(record["status"])
        if record["units"] == "Watts":
            key = "output_watts" if re.search(r"out", record["name"], re.I) else "input_watts"
            psu[key] = record["reading"]
        if record["units"] is None and record["status"] != "ns":
            psu["name"] = psu["name"] or record["name"]
            states = " ".join(record["states"])
            if _PSU_CRITICAL.search(states):
                health = "Critical"
            elif _PSU_WARNING.search(states):
                health = "Warning"
            else:
                health = _worst(health, "OK")
            if "presence detected" in states.lower():
                psu["state"] = "Enabled"
        psu["health"] = _worst(psu["health"], health)
    out = []
    for entity in sorted(psus, key=lambda key: [int(part) for part in key.split(".")]):
        psu = psus[entity]
        psu["name"] = psu["name"] or "Power supply %s" % entity.split(".")[1]
        out.append(psu)
    return out


def _field(fru, *keys):
    for device in fru or []:
        for key in keys:
            value = device["fields"].get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()
    return None


def fru_facts(fru):
    if fru is None:
        return None
    out = []
    for device in fru:
        fields = device["fields"]
        if not fields:
            continue

        def first(*keys):
            return _field([{"fields": fields}], *keys)

        out.append({"id": device["id"], "product": first("product_name", "board_product"),
                    "manufacturer": first("product_manufacturer", "board_mfg"),
                    "serial": first("product_serial", "board_serial"),
                    "part_number": first("product_part_number", "board_part_number")})
    return out


def _power_state(chassis):
    power = (chassis or {}).get("system_power")
    return {"on": "On", "off": "Off"}.get(power)


def _system_health(chassis):
    """What ``chassis status`` reports: power faults are Critical, fan and drive faults a Warning."""
    if not chassis:
        return None
    if any(chassis.get(key) is True for key in ("power_overload", "main_power_fault", "power_control_fault")):
        return "Critical"
    if any(chassis.get(key) is True for key in ("cooling_fan_fault", "drive_fault")):
        return "Warning"
    return "OK"


def build(address, mc, chassis, fru, sensors, sdr, errors):
    """The ``bmc`` facts from the parsed outputs (any of them None when its command failed)."""
    sensor_list = sensor_facts(sensors) if sensors is not None else None
    main_fru = [device for device in fru or [] if device["id"] == "0"] or fru
    chassis_list = None
    if fru is not None or chassis is not None:
        intrusion = (chassis or {}).get("chassis_intrusion")
        chassis_list = [{"id": "0", "name": _field(main_fru, "chassis_type"),
                         "manufacturer": _field(main_fru, "product_manufacturer", "board_mfg"),
                         "model": _field(main_fru, "product_name"),
                         "serial": _field(main_fru, "chassis_serial"),
                         "part_number": _field(main_fru, "chassis_part_number"),
                         "health": "Warning" if intrusion is True else (None if intrusion is None else "OK")}]
    available = (mc.get("device_available") or "").lower()
    return {
        "protocol": "ipmi",
        "address": address,
        "vendor": VENDORS.get(mc.get("manufacturer_id"), "generic"),
        "manager": {"id": "BMC", "model": mc.get("product_name"), "firmware_version": mc.get("firmware_revision"),
                    "health": "OK" if available.startswith("yes") else ("Warning" if available else None)},
        "system": {"id": None, "manufacturer": _field(main_fru, "product_manufacturer", "board_mfg"),
                   "model": _field(main_fru, "product_name", "board_product"),
                   "serial": _field(main_fru, "product_serial", "board_serial"),
                   "sku": None, "uuid": None, "bios_version": None,
                   "power_state": _power_state(chassis), "health": _system_health(chassis)},
        "chassis": chassis_list,
        "processors": None,
        "gpus": None,
        "memory": None,
        "pcie_devices": None,
        "nics": None,
        "drives": None,
        "power_supplies": psu_facts(sdr),
        "fans": fan_facts(sensor_list) if sensor_list is not None else None,
        "sensors": sensor_list,
        "fru": fru_facts(fru),
        "errors": list(errors),
    }


def firmware(mc):
    """IPMI sees one firmware: the BMC's (``mc info`` Firmware Revision)."""
    if not mc.get("firmware_revision"):
        return []
    return [{"id": "BMC", "name": "BMC Firmware", "version": mc["firmware_revision"], "component": "bmc",
             "updateable": None}]


def log(sel):
    """SEL records -> log entries (``source: SEL``); None when the SEL could not be read.

    ``class`` (hardware | audit | informational) as the SEL reader gives it; ``oem`` marks an OEM record (vendor
    data, not decoded: ``severity`` None), with its ``manufacturer`` where its IANA number is known.
    """
    if sel is None:
        return None
    return [{"id": record["id"], "created": record["created"], "severity": record["severity"],
             "message": record["message"], "message_id": None, "source": "SEL", "sensor": record["sensor"],
             "class": record.get("class", "hardware"), "oem": bool(record.get("oem")),
             "manufacturer": record.get("manufacturer")}
            for record in sel]
