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
_THERMAL_UNITS = ("degrees C", "degrees F")
_RANK = {None: 0, "OK": 1, "Warning": 2, "Critical": 3}
PSU_ENTITY = 10
# Discrete states of a power supply (IPMI sensor type 08h) and of the supplies' redundancy sensor (generic event
# type 0Bh, IPMI 2.0 table 42-2), and what they mean for its health.
_PSU_CRITICAL = re.compile(r"failure detected|ac lost|input lost|out[- ]of[- ]range|config(uration)? error|"
                           r"insufficient resources", re.I)
_PSU_WARNING = re.compile(r"predictive failure|non-redundant|redundancy lost|redundancy degraded", re.I)


# The part a sensor or an SEL record is about (``cpu | dimm | gpu | psu | fan | drive``, else None): IPMI names
# no part, so it is read from the vendor's sensor name (Supermicro ``P1-DIMMA1 Temp``, ``PS1 Status``, HPE
# ``04-P1 DIMM 1-6``, ``54-P/S 1 Inlet``, ``Fan Block 1``, ``12-HD Max``, IBM ``DASD Backplane 1``, OpenBMC
# ``p0_core4_temp``, ``dimm9``) and, for SEL records, first from the sensor type. Checked in order, the first match
# wins (``PS 1 Fan Fault`` is a supply's fan: psu). Voltage-regulator and rail sensors (``VRMCpu1 Temp``,
# ``PVDDQ_AB``, ``Vcpu``, ``BB +1.5V P1 DDR3``) belong to the board, not to the part they feed; network links and
# ports (HPE ``LOM_Link_P1``, ``NIC_Link_02P1``: port 1, not processor 1) are no part either.
_NOT_A_PART = re.compile(r"vrm|vrd|(^|[^a-z])vr([^a-z]|$)|vddq|vcore|vccin|vccio|vccp|vtt|pvdd|vsoc|ddr[0-9]?|"
                         r"[0-9]v([^a-z]|$)|^v(cpu|dimm|mem|pch)|link|nic|lom|port", re.I)
PART_NAMES = (
    ("psu", re.compile(r"(^|[^a-z])ps ?[0-9]|psu|power ?supply|pwr ?supply|p/s", re.I)),
    ("gpu", re.compile(r"gpu", re.I)),
    ("dimm", re.compile(r"dimm|pmm|(^|[^a-z])mem([^a-z]|ory|$)", re.I)),
    ("drive", re.compile(r"hdd|ssd|nvme|disk|(^|[^a-z])drive|dasd|(^|[^a-z])hd([^a-z]|$)|dr_stat", re.I)),
    ("fan", re.compile(r"fan", re.I)),
    ("cpu", re.compile(r"cpu|processor|(^|[^a-z])p[0-9]([^a-z0-9]|$)", re.I)),
)
# SEL sensor types (ipmitool's names) -> the part they are about.
PART_TYPES = {"Processor": "cpu", "Memory": "dimm", "Power Supply": "psu", "Fan": "fan", "Cooling Device": "fan",
              "Drive Slot / Bay": "drive"}


def part_of(name, sensor_type=None):
    """``cpu | dimm | gpu | psu | fan | drive`` or None for a sensor name (and an SEL record's sensor type)."""
    if sensor_type in PART_TYPES:
        return PART_TYPES[sensor_type]
    if not name or _NOT_A_PART.search(name):
        return None
    for part, pattern in PART_NAMES:
        if pattern.search(name):
            return part
    return None


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
            "part": part_of(s["name"]),
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
    """One power supply per SDR entity 10.<n>: health from its discrete states (printed alone or after a reading)
    and its sensors' status; the supplies' redundancy sensor is one entry too (non-redundant: Warning)."""
    if sdr is None:
        return None
    psus, thermal_only = {}, set()
    for record in sdr:
        if record["entity_id"] != PSU_ENTITY:
            continue
        # An entity that only has temperature sensors is a thermal zone on a supply (HPE iLO puts ``Temp 12`` at
        # 10.4), not a supply: it is not listed (its temperatures are in ``sensors``).
        if record["entity"] not in psus:
            thermal_only.add(record["entity"])
        if record["units"] not in _THERMAL_UNITS:
            thermal_only.discard(record["entity"])
        psu = psus.setdefault(record["entity"], {
            "id": record["entity"], "name": None, "model": None, "serial": None, "firmware_version": None,
            "capacity_watts": None, "input_watts": None, "output_watts": None, "health": None, "state": None})
        health = _health(record["status"])
        if record["units"] == "Watts":
            key = "output_watts" if re.search(r"out", record["name"], re.I) else "input_watts"
            psu[key] = record["reading"]
        # A status sensor's states, whether ipmitool prints them alone (``Presence detected, Failure detected``) or
        # after the sensor's reading (HPE iLO: ``0 Watts, Presence detected, Failure detected``).
        if record["states"] and record["status"] != "ns":
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
        if entity in thermal_only:
            continue
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
    data, not decoded: ``severity`` None), with its ``manufacturer`` where its IANA number is known; ``part`` the
    part the record is about (``part_of``: sensor type, else sensor name).
    """
    if sel is None:
        return None
    return [{"id": record["id"], "created": record["created"], "severity": record["severity"],
             "message": record["message"], "message_id": None, "source": "SEL", "sensor": record["sensor"],
             "class": record.get("class", "hardware"), "oem": bool(record.get("oem")),
             "manufacturer": record.get("manufacturer"),
             "part": None if record.get("oem") else part_of(record.get("sensor"), record.get("sensor_type"))}
            for record in sel]
