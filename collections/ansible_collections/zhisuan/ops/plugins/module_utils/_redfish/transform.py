# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Pure normalisation of Redfish resources into the ``bmc`` facts of docs/bmc-facts.md (inventory, firmware, log).

Every function reads its input and builds new dicts; nothing here does I/O or changes what it was given. Values a
resource does not carry are None; blank strings (some BMCs send ``" "``) are None too. The thermal and power
readings are in transform_env.py.
"""

import datetime
import math
import re

from ansible_collections.zhisuan.ops.plugins.module_utils._safe_parse import fromisoformat

HEALTH = {"ok": "OK", "warning": "Warning", "critical": "Critical"}
PROCESSOR_TYPES = {"cpu": "CPU", "gpu": "GPU", "accelerator": "Accelerator", "fpga": "FPGA"}
POWER_STATES = ("On", "Off", "PoweringOn", "PoweringOff")
_DATE_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)?$")

# Firmware inventory classification (see classify_firmware). Order matters: root-of-trust, switch and InfoROM
# items name a BMC, BIOS or GPU too (EROT_BMC_0, HGX_InfoROM_GPU_SXM_1), so they are decided first: ``gpu`` is the
# GPU firmware (VBIOS) alone, which the baseline compares.
_OTHER_FIRST = re.compile(r"^(EROT|IROT|ROT\d*|TPM|NVSWITCH|FPGA|CPU|INFOROM)$|RETIMER|PCIESWITCH")
_COMPONENT_TOKENS = (
    ("bios", re.compile(r"^(BIOS|UEFI|HOSTBIOS|SBIOS)$")),
    ("bmc", re.compile(r"^(BMC|HOSTBMC|IDRAC|ILO\d*|XCC|IMM\d*)$")),
    ("cpld", re.compile(r"^CPLD")),
    ("gpu", re.compile(r"^(GPU|VBIOS)$")),
    ("nic", re.compile(r"^(NIC|CX\d+|CONNECTX\d*|INFINIBAND|ETHERNET|HCA|NETWORK)$")),
    ("psu", re.compile(r"^(PSU|POWERSUPPLY)$")),
    ("drive", re.compile(r"^(DISK|DRIVE|NVME|SSD|HDD)$")),
)


# -- small helpers ----------------------------------------------------------------------------------------------

MAX_NUMBER = 1e15  # no Redfish reading, capacity in MiB or count comes near; beyond it a value is unreadable
_NUMBER = re.compile(r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$")


def text(value):
    """A string field: stripped, None when missing, blank or not a scalar (a list or object where text belongs)."""
    if value is None or isinstance(value, (dict, list)):
        return None
    value = str(value).strip()
    return value or None


def number(value, limit=MAX_NUMBER):
    """A numeric field as a finite float: None for missing, boolean, non-numeric (``N/A``, ``1.2.3``, Unicode
    digits), infinite or NaN values, and for magnitudes above ``limit`` (``1e308`` is no reading)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return float(value) if abs(value) <= limit else None
    if isinstance(value, float):
        return value if math.isfinite(value) and abs(value) <= limit else None
    if not isinstance(value, str) or not _NUMBER.match(value.strip()):
        return None
    try:
        result = float(value.strip())
    except (ValueError, OverflowError):
        return None
    return result if math.isfinite(result) and abs(result) <= limit else None


def integer(value, limit=MAX_NUMBER):
    result = number(value, limit)
    return int(result) if result is not None else None


def big_integer(value):
    """An integer that may be large (``CapacityBytes``): up to 2**63, else None."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value if 0 <= value < 2 ** 63 else None
    return integer(value, limit=2.0 ** 63)


def _status(resource):
    status = resource.get("Status") if isinstance(resource, dict) else None
    return status if isinstance(status, dict) else {}


def health(resource):
    """``Status.Health`` of a resource, normalised to OK | Warning | Critical | None."""
    value = _status(resource).get("Health")
    return HEALTH.get(value.strip().lower()) if isinstance(value, str) else None


def health_rollup(resource):
    """``Status.HealthRollup`` (the worst health of the resource and what it contains), normalised as ``health``."""
    value = _status(resource).get("HealthRollup")
    return HEALTH.get(value.strip().lower()) if isinstance(value, str) else None


def state(resource):
    return text(_status(resource).get("State"))


def odata_id(resource):
    """The ``@odata.id`` of a resource (a string), else None."""
    value = resource.get("@odata.id") if isinstance(resource, dict) else None
    return value if isinstance(value, str) and value else None


def link(resource, key):
    """The ``@odata.id`` a resource's property ``key`` points at, or None."""
    value = resource.get(key) if isinstance(resource, dict) else None
    target = value.get("@odata.id") if isinstance(value, dict) else None
    return target if isinstance(target, str) and target else None


def resource_id(resource):
    """``Id``, else the last segment of ``@odata.id``."""
    value = text((resource or {}).get("Id"))
    if value is None and odata_id(resource):
        value = odata_id(resource).rstrip("/").rsplit("/", 1)[-1] or None
    return value


def slug(name):
    """An id for array members that have only a name (old Thermal/Power): ``"CPU1 Temp"`` → ``"CPU1_Temp"``."""
    value = re.sub(r"[^A-Za-z0-9.]+", "_", name or "").strip("_")
    return value or None


def power_state(value):
    value = text(value)
    return value if value in POWER_STATES else None


def _dict(value):
    return value if isinstance(value, dict) else {}


# -- inventory ----------------------------------------------------------------------------------------------------

def manager_facts(manager, version=None):
    version = version or (lambda value: value)
    return {
        "id": resource_id(manager),
        "model": text(manager.get("Model")),
        "firmware_version": version(text(manager.get("FirmwareVersion"))),
        "health": health(manager),
    }


def system_facts(system):
    return {
        "id": resource_id(system),
        "manufacturer": text(system.get("Manufacturer")),
        "model": text(system.get("Model")),
        "serial": text(system.get("SerialNumber")),
        "sku": text(system.get("SKU")),
        "uuid": text(system.get("UUID")),
        "bios_version": text(system.get("BiosVersion")),
        "power_state": power_state(system.get("PowerState")),
        "health": health(system),
    }


def chassis_facts(chassis):
    return {
        "id": resource_id(chassis),
        "name": text(chassis.get("Name")),
        "manufacturer": text(chassis.get("Manufacturer")),
        "model": text(chassis.get("Model")),
        "serial": text(chassis.get("SerialNumber")),
        "part_number": text(chassis.get("PartNumber")),
        "health": health(chassis),
    }


def processor_type(processor):
    value = text(processor.get("ProcessorType"))
    if value is None:
        return None
    return PROCESSOR_TYPES.get(value.lower(), "other")


def processor_facts(processor):
    return {
        "id": resource_id(processor),
        "type": processor_type(processor),
        "manufacturer": text(processor.get("Manufacturer")),
        "model": text(processor.get("Model")),
        "serial": text(processor.get("SerialNumber")),
        "health": health(processor),
        "state": state(processor),
    }


def gpu_from_processor(processor):
    return {
        "id": resource_id(processor),
        "model": text(processor.get("Model")),
        "serial": text(processor.get("SerialNumber")),
        "uuid": text(processor.get("UUID")),
        "firmware_version": text(processor.get("FirmwareVersion")),
        "health": health(processor),
        "source": "processor",
    }


def gpu_from_pcie_device(device):
    return {
        "id": resource_id(device),
        "model": text(device.get("Model")),
        "serial": text(device.get("SerialNumber")),
        "uuid": text(device.get("UUID")),
        "firmware_version": text(device.get("FirmwareVersion")),
        "health": health(device),
        "source": "pcie_device",
    }


def memory_facts(memory):
    return {
        "id": resource_id(memory),
        "capacity_mib": integer(memory.get("CapacityMiB")),
        "type": text(memory.get("MemoryDeviceType")) or text(memory.get("MemoryType")),
        "manufacturer": text(memory.get("Manufacturer")),
        "part_number": text(memory.get("PartNumber")),
        "serial": text(memory.get("SerialNumber")),
        "health": health(memory),
        "state": state(memory),
    }


def pcie_device_facts(device):
    return {
        "id": resource_id(device),
        "name": text(device.get("Name")),
        "manufacturer": text(device.get("Manufacturer")),
        "model": text(device.get("Model")),
        "device_class": text(device.get("DeviceClass")),
        "health": health(device),
        "firmware_version": text(device.get("FirmwareVersion")),
        "state": state(device),
        "health_rollup": health_rollup(device),
    }


def nic_facts(adapter):
    """A NetworkAdapter: ``ports`` sums its controllers' NetworkPortCount (None when none says)."""
    listed = adapter.get("Controllers")
    controllers = [item for item in (listed if isinstance(listed, list) else []) if isinstance(item, dict)]
    counts = [integer(_dict(item.get("ControllerCapabilities")).get("NetworkPortCount"), limit=4096) for item in controllers]
    counts = [count for count in counts if count is not None and count >= 0]
    firmware = [text(item.get("FirmwarePackageVersion")) for item in controllers]
    return {
        "id": resource_id(adapter),
        "name": text(adapter.get("Name")),
        "manufacturer": text(adapter.get("Manufacturer")),
        "model": text(adapter.get("Model")),
        "ports": sum(counts) if counts else None,
        "firmware_version": next((value for value in firmware if value), None),
        "health": health(adapter),
        "state": state(adapter),
        "health_rollup": health_rollup(adapter),
    }


def drive_facts(drive):
    return {
        "id": resource_id(drive),
        "name": text(drive.get("Name")),
        "model": text(drive.get("Model")),
        "serial": text(drive.get("SerialNumber")),
        "capacity_bytes": big_integer(drive.get("CapacityBytes")),
        "media": text(drive.get("MediaType")),
        "health": health(drive),
        "state": state(drive),
        "failure_predicted": drive.get("FailurePredicted") if isinstance(drive.get("FailurePredicted"), bool) else None,
    }


def storage_facts(storage, controllers=None):
    """A Storage resource: its health and rollup, its controllers (the inline ``StorageControllers``, else the
    members of its ``Controllers`` collection given as ``controllers``) and the ids of its drives."""
    listed = storage.get("StorageControllers")
    inline = [item for item in (listed if isinstance(listed, list) else []) if isinstance(item, dict)]
    drives = storage.get("Drives")
    return {
        "id": resource_id(storage),
        "name": text(storage.get("Name")),
        "health": health(storage),
        "health_rollup": health_rollup(storage),
        "state": state(storage),
        "controllers": [{
            "id": text(item.get("MemberId")) or resource_id(item),
            "name": text(item.get("Name")),
            "model": text(item.get("Model")),
            "firmware_version": text(item.get("FirmwareVersion")),
            "health": health(item),
            "health_rollup": health_rollup(item),
            "state": state(item),
        } for item in (inline or [item for item in controllers or [] if isinstance(item, dict)])],
        "drives": [(item["@odata.id"].rstrip("/").rsplit("/", 1)[-1]) for item in (drives if isinstance(drives, list) else [])
                   if isinstance(item, dict) and isinstance(item.get("@odata.id"), str)],
    }


# -- firmware -----------------------------------------------------------------------------------------------------

def classify_firmware(item):
    """Component of a SoftwareInventory item, from the words of its Id and Name: bios | bmc | cpld | gpu | nic |
    psu | drive | other. ``HGX_FW_GPU_SXM_1`` → gpu, ``HGX_InfoROM_GPU_SXM_1`` and ``EROT_BMC_0`` (a root of trust)
    → other, ``Installed-25227-6.00.30.00__iDRAC.Embedded.1-1`` → bmc."""
    words = re.split(r"[^A-Z0-9]+", ("%s %s" % (text(item.get("Id")) or "", text(item.get("Name")) or "")).upper())
    words = [word for word in words if word]
    joined = " ".join(words)
    if any(_OTHER_FIRST.search(word) for word in words):
        return "other"
    if "POWER SUPPLY" in joined:
        return "psu"
    for component, pattern in _COMPONENT_TOKENS:
        if any(pattern.search(word) for word in words):
            return component
    return "other"


def firmware_facts(item, classify=classify_firmware, version=None):
    """A SoftwareInventory item. ``description``, ``software_id`` and ``related`` (the ``RelatedItem`` URIs) are what
    the judge's firmware table (data/firmware_classes.yml) reads besides the Id and Name."""
    version = version or (lambda value: value)
    updateable = item.get("Updateable")
    related = item.get("RelatedItem")
    return {
        "id": resource_id(item),
        "name": text(item.get("Name")),
        "version": version(text(item.get("Version"))),
        "component": classify(item),
        "updateable": updateable if isinstance(updateable, bool) else None,
        "description": text(item.get("Description")),
        "software_id": text(item.get("SoftwareId")),
        "related": [entry["@odata.id"] for entry in (related if isinstance(related, list) else [])
                    if isinstance(entry, dict) and isinstance(entry.get("@odata.id"), str)],
        "health": health(item),
        "state": state(item),
    }


# -- log entries --------------------------------------------------------------------------------------------------

def parse_time(value):
    """An aware UTC datetime from a Redfish DateTime (``Z`` or an offset; no offset counts as UTC), or None."""
    value = text(value)
    if value is None or not _DATE_TIME.match(value):
        return None
    candidate = value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value
    try:
        moment = fromisoformat(candidate)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.timezone.utc)
    return moment.astimezone(datetime.timezone.utc)


def utc_text(value):
    """``value`` as ``YYYY-MM-DDTHH:MM:SS+00:00`` when it parses, else the text as the BMC gave it."""
    moment = parse_time(value)
    return moment.isoformat() if moment is not None else text(value)


def log_source(service):
    """``SEL`` for a SEL log service, else ``<owner>/<service Id>`` (``HGX_Baseboard_0/EventLog``)."""
    ident = resource_id(service) or ""
    if text(service.get("LogEntryType")) == "SEL" or ident.lower() == "sel":
        return "SEL"
    parts = (odata_id(service) or "").rstrip("/").split("/")
    owner = parts[-3] if len(parts) >= 3 and parts[-2] == "LogServices" else None
    return "%s/%s" % (owner, ident) if owner else ident


def log_entry_facts(entry, source):
    severity = text(entry.get("Severity"))
    return {
        "id": resource_id(entry),
        "created": utc_text(entry.get("Created") or entry.get("EventTimestamp")),
        "severity": HEALTH.get(severity.lower(), severity) if severity else None,
        "message": text(entry.get("Message")),
        "message_id": text(entry.get("MessageId")),
        "source": source,
        "sensor": text(entry.get("SensorType")),
    }
