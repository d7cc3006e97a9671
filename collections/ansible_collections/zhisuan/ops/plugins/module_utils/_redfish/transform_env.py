# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Pure normalisation of thermal and power resources into ``sensors``, ``fans`` and ``power_supplies`` facts.

Both generations are read: the deprecated ``Thermal`` and ``Power`` resources (arrays of temperatures, fans,
voltages, power controls and power supplies, thresholds inline) and the newer ``ThermalSubsystem`` (``Fans``
members, ``ThermalMetrics``), ``PowerSubsystem`` (``PowerSupplies`` members and their ``Metrics``) and
``Sensors`` resources. Sensors whose state is ``Absent`` are left out of ``sensors``; absent fans and power supplies
are kept, with their state.
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.transform import (
    health, number, resource_id, slug, state, text)

THRESHOLD_KEYS = (
    ("lower_fatal", "LowerThresholdFatal", "LowerFatal"),
    ("lower_critical", "LowerThresholdCritical", "LowerCritical"),
    ("lower_caution", "LowerThresholdNonCritical", "LowerCaution"),
    ("upper_caution", "UpperThresholdNonCritical", "UpperCaution"),
    ("upper_critical", "UpperThresholdCritical", "UpperCritical"),
    ("upper_fatal", "UpperThresholdFatal", "UpperFatal"),
)
SENSOR_KINDS = {"temperature": "temperature", "voltage": "voltage", "current": "current", "power": "power",
                "rotational": "fan"}
FAN_UNITS = {"rpm": "RPM", "percent": "Percent", "%": "Percent"}


def _array_id(item):
    return slug(text(item.get("Name"))) or text(item.get("MemberId"))


def _absent(item):
    return state(item) == "Absent"


def _old_thresholds(item):
    return dict((name, number(item.get(old))) for name, old, _new in THRESHOLD_KEYS)


def _sensor(ident, name, kind, reading, units, item_health, thresholds=None, item_state=None):
    """One ``sensors`` fact; ``state`` is there only when the BMC reports the sensor other than Enabled (a
    ``Disabled`` power control, a sensor ``StandbyOffline``)."""
    fact = {
        "id": ident,
        "name": name,
        "kind": kind,
        "reading": reading,
        "units": units,
        "health": item_health,
        "thresholds": thresholds if thresholds is not None else dict((key, None) for key, _o, _n in THRESHOLD_KEYS),
    }
    if item_state not in (None, "Enabled"):
        fact["state"] = item_state
    return fact


# -- the deprecated Thermal and Power resources ---------------------------------------------------------------

def thermal_sensors(thermal):
    """Temperatures and fans of a ``Thermal`` resource as sensors."""
    result = []
    for item in thermal.get("Temperatures") or []:
        if isinstance(item, dict) and not _absent(item):
            result.append(_sensor(_array_id(item), text(item.get("Name")), "temperature", number(item.get("ReadingCelsius")),
                                  "Cel", health(item), _old_thresholds(item), state(item)))
    for item in thermal.get("Fans") or []:
        if isinstance(item, dict) and not _absent(item):
            units = FAN_UNITS.get((text(item.get("ReadingUnits")) or "").lower())
            result.append(_sensor(_array_id(item), text(item.get("Name")) or text(item.get("FanName")), "fan",
                                  number(item.get("Reading")), "%" if units == "Percent" else units, health(item),
                                  _old_thresholds(item), state(item)))
    return result


def thermal_fans(thermal):
    """The ``Fans`` array of a ``Thermal`` resource as fans."""
    result = []
    for item in thermal.get("Fans") or []:
        if isinstance(item, dict):
            result.append({
                "id": _array_id(item),
                "name": text(item.get("Name")) or text(item.get("FanName")),
                "reading": number(item.get("Reading")),
                "units": FAN_UNITS.get((text(item.get("ReadingUnits")) or "").lower()),
                "health": health(item),
                "state": state(item),
            })
    return result


def power_sensors(power):
    """Voltages and power controls (consumed watts) of a ``Power`` resource as sensors."""
    result = []
    for item in power.get("Voltages") or []:
        if isinstance(item, dict) and not _absent(item):
            result.append(_sensor(_array_id(item), text(item.get("Name")), "voltage", number(item.get("ReadingVolts")), "V",
                                  health(item), _old_thresholds(item), state(item)))
    for item in power.get("PowerControl") or []:
        if isinstance(item, dict) and not _absent(item) and item.get("PowerConsumedWatts") is not None:
            result.append(_sensor(_array_id(item), text(item.get("Name")), "power", number(item.get("PowerConsumedWatts")),
                                  "W", health(item), item_state=state(item)))
    return result


def power_supplies(power):
    """The ``PowerSupplies`` array of a ``Power`` resource."""
    result = []
    for item in power.get("PowerSupplies") or []:
        if isinstance(item, dict):
            output = item.get("PowerOutputWatts")
            result.append({
                "id": _array_id(item),
                "name": text(item.get("Name")),
                "model": text(item.get("Model")),
                "serial": text(item.get("SerialNumber")),
                "firmware_version": text(item.get("FirmwareVersion")),
                "capacity_watts": number(item.get("PowerCapacityWatts")),
                "input_watts": number(item.get("PowerInputWatts")),
                "output_watts": number(output if output is not None else item.get("LastPowerOutputWatts")),
                "health": health(item),
                "state": state(item),
            })
    return result


# -- ThermalSubsystem, PowerSubsystem and Sensors -------------------------------------------------------------------

def fan_facts(fan):
    """A ``Fan`` resource (ThermalSubsystem/Fans member). ``SpeedPercent.SpeedRPM`` wins over ``Reading``: some
    services (AMI on DGX H100) put RPM in ``Reading`` too, and Dell sends only ``SpeedRPM``."""
    speed = fan.get("SpeedPercent") or {}
    rpm = number(speed.get("SpeedRPM"))
    reading = rpm if rpm is not None else number(speed.get("Reading"))
    units = "RPM" if rpm is not None else ("Percent" if reading is not None else None)
    return {
        "id": resource_id(fan),
        "name": text(fan.get("Name")),
        "reading": reading,
        "units": units,
        "health": health(fan),
        "state": state(fan),
    }


def psu_facts(psu, metrics=None):
    """A ``PowerSupply`` resource with its ``PowerSupplyMetrics`` (None when not read)."""
    metrics = metrics or {}
    return {
        "id": resource_id(psu),
        "name": text(psu.get("Name")),
        "model": text(psu.get("Model")),
        "serial": text(psu.get("SerialNumber")),
        "firmware_version": text(psu.get("FirmwareVersion")),
        "capacity_watts": number(psu.get("PowerCapacityWatts")),
        "input_watts": number((metrics.get("InputPowerWatts") or {}).get("Reading")),
        "output_watts": number((metrics.get("OutputPowerWatts") or {}).get("Reading")),
        "health": health(psu),
        "state": state(psu),
    }


def thermal_metrics_sensors(metrics):
    """``ThermalMetrics.TemperatureReadingsCelsius`` as temperature sensors (these carry no thresholds)."""
    result = []
    for item in metrics.get("TemperatureReadingsCelsius") or []:
        if not isinstance(item, dict):
            continue
        source = text(item.get("DataSourceUri"))
        ident = source.rstrip("/").rsplit("/", 1)[-1] if source else slug(text(item.get("DeviceName")))
        result.append(_sensor(ident, text(item.get("DeviceName")), "temperature", number(item.get("Reading")), "Cel", None))
    return result


def sensor_facts(sensor):
    """A ``Sensor`` resource (a Chassis ``Sensors`` member), thresholds from ``Thresholds.*.Reading``."""
    limits = sensor.get("Thresholds") or {}
    thresholds = dict((name, number((limits.get(new) or {}).get("Reading"))) for name, _old, new in THRESHOLD_KEYS)
    kind = SENSOR_KINDS.get((text(sensor.get("ReadingType")) or "").lower(), "other")
    return _sensor(resource_id(sensor), text(sensor.get("Name")), kind, number(sensor.get("Reading")),
                   text(sensor.get("ReadingUnits")), health(sensor), thresholds, state(sensor))
