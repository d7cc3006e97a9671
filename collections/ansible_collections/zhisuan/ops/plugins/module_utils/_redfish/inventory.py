# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""What redfish_info and redfish_firmware_info read: the ``bmc`` facts (docs/bmc-facts.md) and the firmware inventory.

A list is None when the service offers no resource for it, or the resource could not be read (the reason is in
``errors``); an empty list means the resource was read and lists nothing. Thermal and power data come from the old
``Thermal``/``Power`` resources where a chassis has them (one read each, thresholds inline) and from
``ThermalSubsystem``, ``PowerSubsystem`` and ``Sensors`` where it has only those; fans and power supplies from the
newer resources where the old ones do not list them.
"""

import re

from ansible_collections.zhisuan.ops.plugins.module_utils._redfish import transform_env as env
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.discovery import GPU_TYPES, discover_gpus
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.service import RedfishService, connect, last_segment
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.transform import (
    chassis_facts, drive_facts, firmware_facts, health, link, manager_facts, memory_facts, nic_facts, odata_id,
    pcie_device_facts, processor_facts, processor_type, resource_id, state, storage_facts)


def run_info(module):
    """redfish_info: ``{"bmc": facts}``."""
    with connect(module) as client:
        return {"bmc": collect_bmc(RedfishService(client))}


def run_firmware_info(module):
    """redfish_firmware_info: ``{"firmware": [...], "vendor": ..., "errors": [...]}``."""
    with connect(module) as client:
        service = RedfishService(client)
        firmware = collect_firmware(service)
        return {"firmware": firmware, "vendor": service.adapter.name, "errors": list(service.errors)}


def collect_bmc(service, only_system=False):
    """The ``bmc`` facts. A host system that cannot be read (its member 404s, or the Systems collection does) is
    not fatal: ``system`` is then all null but its ``health``, which is the worst health of the chassis, and the
    GPUs, PCIe devices, sensors, PSUs and fans still come from the Chassis side (and an NVIDIA HGX baseboard).
    ``unreadable`` maps each list to the resources that could not be read while it was gathered (the judge says
    ``error``, not ``fail``, when a count falls short while members could not be read).

    Every ComputerSystem the adapter counts as a host is read (a two-node blade's second node too): its processors,
    GPUs and DIMMs join the lists (each GPU and DIMM names its ``system``), and ``systems`` lists each one's identity.
    ``only_system`` (the inventory names the node's system id, ``bmc_system_id``) reads the service's chosen system
    alone."""
    adapter = service.adapter
    system = service.readable_system()
    manager = service.manager_of(system)
    chassis = service.chassis
    chassis_unread = list(service.unread)
    unreadable = {}

    def tracked(key, read):
        before = len(service.unread)
        value = read()
        found = ["%s (%s)" % item for item in service.unread[before:]]
        if found:
            unreadable[key] = unreadable.get(key, []) + found
        return value

    processors = tracked("processors", lambda: _processors(service, system))
    memory = tracked("memory", lambda: _memory(service, system))
    pcie_devices = tracked("pcie_devices", lambda: _pcie_devices(service, system, chassis or []))
    primary_id = resource_id(system) if system is not None else None
    # every other ComputerSystem that is a host of its own (a two-node blade): its processors and DIMMs count too
    others = [] if only_system else [item for item in _host_systems(service, system) if item is not system]
    other_processors = [(item, tracked("processors", lambda item=item: service.members(link(item, "Processors"))))
                        for item in others]
    other_memory = [tracked("memory", lambda item=item: _memory(service, item)) for item in others]
    memory = _joined([memory] + other_memory)
    gpus = tracked("gpus", lambda: discover_gpus(
        service, [(primary_id, processors)] + [(resource_id(item), found) for item, found in other_processors],
        pcie_devices, primary_id))
    processors = _joined([processors] + [found for _item, found in other_processors])
    # a processor member named as a CPU or FPGA that could not be read is not a missing GPU
    maybe_gpus = [text for text in unreadable.get("processors", []) if not _NOT_GPU.search(last_segment(text.split(" (")[0]))]
    if gpus is None or not any(processor_type(item) in GPU_TYPES for item in processors or []):
        # GPUs from the Chassis side: the chassis that could not be read may hold the others
        maybe_gpus += ["%s (%s)" % item for item in chassis_unread if "/Chassis" in str(item[0])]
    unreadable["gpus"] = maybe_gpus + unreadable.get("gpus", [])
    if not unreadable["gpus"]:
        del unreadable["gpus"]
    system_facts = adapter.system_facts(system if system is not None else {})
    if system is None:
        system_facts["health"] = _worst([health(item) for item in chassis or []])
    storage_seen = {}
    facts = {
        "protocol": "redfish",
        "address": service.client.address,
        "auth": service.client.auth_used,
        "vendor": adapter.name,
        "manager": manager_facts(manager, adapter.version) if manager else None,
        # every Manager the service lists (an NVIDIA tray's HGX baseboard BMC too): each one's own health is judged
        "managers": [manager_facts(item, adapter.version) for item in service.managers if isinstance(item, dict)],
        "system": system_facts,
        "system_readable": system is not None,
        "chassis": None if chassis is None else [chassis_facts(item) for item in chassis],
        "processors": None if processors is None else [processor_facts(item) for item in processors],
        "gpus": gpus,
        "memory": memory,
        "pcie_devices": _each(pcie_devices, pcie_device_facts),
        "nics": tracked("nics", lambda: _each(_gathered(service, chassis or [], "NetworkAdapters"), nic_facts)),
        "drives": tracked("drives", lambda: _each(_drives(service, system, storage_seen), drive_facts)),
        # the Storage members _drives read, with their controllers (health per part: bmc.storage.health)
        "storage": tracked("storage", lambda: _storage(service, storage_seen)),
    }
    facts["systems"] = ([system_facts] if system is not None else []) + [adapter.system_facts(item) for item in others]
    facts.update(tracked("environment", lambda: environment(service, chassis or [])))
    if "environment" in unreadable:
        unreadable["power_supplies"] = unreadable.pop("environment")
    facts["fru"] = None
    facts["errors"] = list(service.errors)
    facts["unreadable"] = unreadable
    facts["expand_fallback"] = service.client.expand_fallback
    return facts


_NOT_GPU = re.compile(r"CPU|FPGA|DIMM|NIC", re.IGNORECASE)


def _host_systems(service, system):
    """The primary system first, then every other ComputerSystem the adapter counts as a host."""
    hosts = [item for item in service.adapter.host_systems(service.systems) if isinstance(item, dict)]
    if system is None:
        return hosts
    return [system] + [item for item in hosts if odata_id(item) != odata_id(system)]


def _memory(service, system):
    """The DIMMs of one system, each naming it (``system``)."""
    found = service.members(link(system, "Memory"))
    return None if found is None else [dict(memory_facts(item), system=resource_id(system)) for item in found]


def _worst(values):
    """The worst of some Status.Health values (None when none is known)."""
    order = ("OK", "Warning", "Critical")
    known = [value for value in values if value in order]
    return max(known, key=order.index) if known else None


def collect_firmware(service):
    """The firmware inventory as ``firmware`` facts (None when the service has no readable one)."""
    adapter = service.adapter
    update = service.try_get(link(service.root, "UpdateService"))
    items = service.members(link(update, "FirmwareInventory")) if update else None
    if items is None:
        return None
    return [firmware_facts(item, adapter.classify_firmware, adapter.version) for item in items
            if adapter.keep_firmware(item, items)]


def _each(items, transform):
    return None if items is None else [transform(item) for item in items]


def _joined(parts):
    """Concatenate the lists of several sources; None when every source was None."""
    found = [part for part in parts if part is not None]
    return None if not found else [item for part in found for item in part]


def _processors(service, system):
    sources = [other for other in service.adapter.processor_systems(service.systems, system) if link(other, "Processors")]
    return _joined([service.members(link(other, "Processors")) for other in sources])


def _gathered(service, chassis, key):
    """The members of the ``key`` collection of every chassis that has one."""
    return _joined([service.members(link(item, key)) for item in chassis if link(item, key)])


def _pcie_devices(service, system, chassis):
    """PCIe devices from the chassis (their standard place), else from the system's ``PCIeDevices`` links."""
    if any(link(item, "PCIeDevices") for item in chassis):
        return _gathered(service, chassis, "PCIeDevices")
    listed = (system or {}).get("PCIeDevices")
    references = [item for item in (listed if isinstance(listed, list) else [])
                  if isinstance(item, dict) and isinstance(item.get("@odata.id"), str)]
    if not references:
        return None
    return service.resolve(references, "%s#/PCIeDevices" % odata_id(system))


def _storage(service, seen):
    """``storage`` facts of the Storage members ``_drives`` read (None when they could not be read); controllers
    from the inline ``StorageControllers``, else the storage's ``Controllers`` collection."""
    if seen.get("members") is None:
        return None
    found = []
    for item in seen["members"]:
        listed = item.get("StorageControllers")
        inline = isinstance(listed, list) and any(isinstance(entry, dict) for entry in listed)
        controllers = None if inline or not link(item, "Controllers") else service.members(link(item, "Controllers"))
        found.append(storage_facts(item, controllers))
    return found


def _drives(service, system, seen=None):
    storage = service.members(link(system, "Storage"))
    if seen is not None:
        seen["members"] = storage
    if storage is None:
        return None
    parts = [[]]
    for controller in storage:
        listed = controller.get("Drives")
        references = [item for item in (listed if isinstance(listed, list) else [])
                      if isinstance(item, dict) and isinstance(item.get("@odata.id"), str)]
        parts.append(service.resolve(references, "%s#/Drives" % (odata_id(controller) or "")))
    return _joined(parts)


def environment(service, chassis):
    """``power_supplies``, ``fans`` and ``sensors`` of every chassis (each None when no chassis offers it)."""
    parts = {"power_supplies": [], "fans": [], "sensors": []}
    for item in chassis:
        for key, value in _chassis_environment(service, item).items():
            parts[key].append(value)
    return dict((key, _joined(values)) for key, values in parts.items())


def _chassis_environment(service, chassis):
    thermal = service.try_get(link(chassis, "Thermal"))
    power = service.try_get(link(chassis, "Power"))
    subsystems = {}

    def subsystem(key):
        if key not in subsystems:
            subsystems[key] = service.try_get(link(chassis, key))
        return subsystems[key]

    sensors = None
    if thermal is not None or power is not None:
        sensors = (env.thermal_sensors(thermal) if thermal else []) + (env.power_sensors(power) if power else [])
    elif link(chassis, "Sensors"):
        found = service.members(link(chassis, "Sensors"))
        sensors = None if found is None else [env.sensor_facts(item) for item in found if state(item) != "Absent"]
    if sensors is None and thermal is None and link(chassis, "ThermalSubsystem") and subsystem("ThermalSubsystem"):
        metrics = service.try_get(link(subsystem("ThermalSubsystem"), "ThermalMetrics"))
        sensors = env.thermal_metrics_sensors(metrics) if metrics is not None else None

    fans = None
    if thermal and thermal.get("Fans"):
        fans = env.thermal_fans(thermal)
    elif link(chassis, "ThermalSubsystem") and subsystem("ThermalSubsystem"):
        found = service.members(link(subsystem("ThermalSubsystem"), "Fans"))
        fans = None if found is None else [env.fan_facts(item) for item in found]
    elif thermal is not None:
        fans = []

    supplies = None
    if power and power.get("PowerSupplies"):
        supplies = env.power_supplies(power)
    elif link(chassis, "PowerSubsystem") and subsystem("PowerSubsystem"):
        found = service.members(link(subsystem("PowerSubsystem"), "PowerSupplies"))
        supplies = None if found is None else [
            env.psu_facts(item, service.try_get(link(item, "Metrics")) if link(item, "Metrics") else None) for item in found]
    elif power is not None:
        supplies = []
    return {"power_supplies": supplies, "fans": fans, "sensors": sensors}
