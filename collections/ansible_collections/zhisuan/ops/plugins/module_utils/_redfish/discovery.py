# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Where the GPUs and accelerators of a Redfish service are, found by looking, not by vendor (docs/bmc-facts.md).

Sources, in the order their word counts (an earlier source's GPU is never replaced, only completed):

1. ``Processors`` of type GPU or Accelerator of every ComputerSystem that holds the host's processors (the NVIDIA HGX
   baseboard system too), then the processors a chassis links to (``Links.Processors`` of a baseboard chassis);
2. the vendor's own GPU chassis (``gpu_pcie_devices``: NVIDIA ``HGX_GPU_*``) and every PCIe device one of whose
   functions is a display controller or processing accelerator (``DeviceClass`` DisplayController /
   ProcessingAccelerators, or ``ClassCode`` 0x0300, 0x0302, 0x1200), the BMC's own video (ASPEED, Matrox) excepted;
3. the vendor's documented OEM device list (``oem_gpus``: HPE iLO ``Chassis/1/Devices``).

A GPU is counted once: a candidate that shares a serial number, UUID, PCIe device or slot with one already found is
the same GPU (its missing model, serial, UUID or firmware fill the first one's gaps: a Lenovo XCC GPU processor
without a model takes it from its PCIe device's name). A candidate with none of these keys is added only when no
earlier source found a GPU. Placeholder serials (``00000000000000``, ``N/A``) identify nothing.
"""

import re

from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.transform import (
    gpu_from_pcie_device, gpu_from_processor, link, odata_id, processor_type, resource_id, text)

GPU_TYPES = ("GPU", "Accelerator")
GPU_DEVICE_CLASSES = ("DisplayController", "ProcessingAccelerators")
GPU_CLASS_CODES = ("0300", "0302", "1200")
# the BMC's own VGA (ASPEED AST2x00, Matrox G200 of iLO) is a display controller, not a GPU
BMC_VIDEO_VENDORS = ("0x1a03", "0x102b")
_BMC_VIDEO = re.compile(r"ASPEED|Matrox|Embedded Video|\bVGA\b", re.IGNORECASE)
# parts an OEM list or PCIe view types as GPU that are not one: the HGX baseboard itself, its NVSwitches
NOT_A_GPU = re.compile(r"NV ?Switch|Baseboard|\bUBB\b|\bHGX\b.*\b\d+ ?GPU|PCIe ?Switch|Retimer|Bridge", re.IGNORECASE)
_PLACEHOLDER = re.compile(r"^(0+|N/?A|NONE|NULL|UNKNOWN|NOT ?(AVAILABLE|SPECIFIED|SET|PRESENT)|TO BE FILLED.*|DEFAULT.*|"
                          r"X+|F+|-+|\?+)$", re.IGNORECASE)
_SLOT = re.compile(r"\bslot\s*#?\s*(\d+)\b", re.IGNORECASE)


def identifying(serial):
    """A serial number that names one part (None for blanks and placeholders such as ``00000000000000``)."""
    value = text(serial)
    return None if value is None or _PLACEHOLDER.match(value) else value


def slot_of(value):
    """The slot number in a location text (``PCI-E Slot 3``, ``Slot 3``), else None."""
    match = _SLOT.search(value or "") if isinstance(value, str) else None
    return match.group(1) if match else None


def keys_of(gpu):
    """The keys that say two sightings are one GPU."""
    found = set()
    if identifying(gpu.get("serial")):
        found.add("serial:" + gpu["serial"])
    if text(gpu.get("uuid")) and not _PLACEHOLDER.match(gpu["uuid"].replace("-", "")):
        found.add("uuid:" + gpu["uuid"].lower())
    for uri in gpu.get("_pcie") or []:
        found.add("pcie:" + uri.rstrip("/"))
    if gpu.get("location") and slot_of(gpu["location"]):
        found.add("slot:%s:%s" % (gpu.get("system") or "", slot_of(gpu["location"])))
    return found


def _location_text(resource):
    """A location as text: ``Location`` (iLO), ``Slot.Location`` or ``Location.PartLocation`` (DMTF)."""
    value = resource.get("Location")
    if isinstance(value, str):
        return text(value)
    for where in (value, (resource.get("Slot") or {}).get("Location") if isinstance(resource.get("Slot"), dict) else None):
        if isinstance(where, dict):
            part = where.get("PartLocation") if isinstance(where.get("PartLocation"), dict) else {}
            label = text(part.get("ServiceLabel")) or text(where.get("Info"))
            if label:
                return label
            if part.get("LocationOrdinalValue") is not None and text(part.get("LocationType")):
                return "%s %s" % (part["LocationType"], part["LocationOrdinalValue"])
    return None


def _links(resource, key):
    value = (resource.get("Links") or {}).get(key) if isinstance(resource.get("Links"), dict) else None
    values = value if isinstance(value, list) else [value]
    return [item["@odata.id"] for item in values if isinstance(item, dict) and isinstance(item.get("@odata.id"), str)]


def _system_of(resource, systems, default):
    """The id of the ComputerSystem a resource belongs to: its URI under ``Systems/<id>``, a ``ComputerSystems`` link,
    else ``default``."""
    uri = odata_id(resource) or ""
    for system in systems:
        base = (odata_id(system) or "").rstrip("/")
        if base and uri.startswith(base + "/"):
            return resource_id(system)
    linked = _links(resource, "ComputerSystems")
    for system in systems:
        if odata_id(system) in linked:
            return resource_id(system)
    return default


def _known(gpu):
    """A placeholder model, UUID or firmware version (``N/A``) is no value, so that another sighting can fill it (a
    placeholder serial is kept as the BMC wrote it, but identifies nothing)."""
    for field in ("model", "uuid", "firmware_version"):
        if gpu.get(field) is not None and _PLACEHOLDER.match(gpu[field]):
            gpu[field] = None
    return gpu


def from_processor(processor, system_id):
    gpu = _known(gpu_from_processor(processor))
    gpu["system"] = system_id
    gpu["location"] = _location_text(processor)
    gpu["_pcie"] = _links(processor, "PCIeDevice")
    gpu["_uri"] = odata_id(processor)
    return gpu


def is_gpu_function(function):
    """Whether a PCIe function is a GPU or accelerator (and not the BMC's own video)."""
    vendor = (text(function.get("VendorId")) or "").lower()
    if vendor in BMC_VIDEO_VENDORS or _BMC_VIDEO.search(text(function.get("Name")) or ""):
        return False
    if text(function.get("DeviceClass")) in GPU_DEVICE_CLASSES:
        return True
    code = (text(function.get("ClassCode")) or "").lower()
    code = code[2:] if code.startswith("0x") else code
    return len(code) >= 4 and code[:4] in GPU_CLASS_CODES


def _model_from_name(name):
    """A PCIe name that is a product name (``NVIDIA L40``, ``NVIDIA A100-SXM4-40GB``), not a label (``GPU1``)."""
    name = text(name)
    if name and re.search(r"[A-Za-z]", name) and not re.match(r"^(GPU|PCIe Device|Device|Slot)\s*_?\d*$", name, re.IGNORECASE):
        return name
    return None


def from_pcie_device(device, system_id):
    gpu = _known(gpu_from_pcie_device(device))
    gpu["model"] = gpu["model"] or _model_from_name(device.get("Name"))
    gpu["system"] = system_id
    gpu["location"] = _location_text(device)
    gpu["_pcie"] = [odata_id(device)] if odata_id(device) else []
    gpu["_uri"] = odata_id(device)
    return gpu


def is_gpu_device(device, functions):
    """A PCIe device is a GPU when one of its functions is, and its own name does not say baseboard or switch."""
    label = " ".join(filter(None, [text(device.get("Name")), text(device.get("Model")), text(device.get("Description"))]))
    if NOT_A_GPU.search(label) or _BMC_VIDEO.search(label):
        return False
    return any(is_gpu_function(item) for item in functions or [])


def merge(found, candidates, keyless_ok):
    """Add ``candidates`` to ``found``: one that shares a key with a GPU found fills its gaps; a new one is added when
    it has keys, or ``keyless_ok``."""
    for candidate in candidates:
        keys = keys_of(candidate)
        same = next((gpu for gpu in found if keys & keys_of(gpu)), None)
        if same is not None:
            for field in ("model", "serial", "uuid", "firmware_version", "health", "location"):
                if same.get(field) is None and candidate.get(field) is not None:
                    same[field] = candidate[field]
            same["_pcie"] = list(same.get("_pcie") or []) + [uri for uri in candidate.get("_pcie") or []
                                                             if uri not in (same.get("_pcie") or [])]
            continue
        if keys or keyless_ok:
            found.append(candidate)
    return found


def public(gpus):
    """The facts: the private keys used while merging dropped."""
    return [dict((key, value) for key, value in gpu.items() if not key.startswith("_")) for gpu in gpus]


def discover_gpus(service, processor_sets, pcie_devices, default_system):
    """The GPUs of the service. ``processor_sets`` is ``[(system id, [Processor, ...] or None)]`` (None: that
    collection could not be read); ``pcie_devices`` the PCIe devices read for the facts (or None). Returns None when
    no source could be looked at, else the list (which may be empty)."""
    adapter = service.adapter
    systems = [system for system in service.systems if isinstance(system, dict)]
    looked = False
    found = []
    seen = set()
    for system_id, processors in processor_sets:
        if processors is None:
            continue
        looked = True
        for item in processors:
            seen.add((odata_id(item) or "").rstrip("/"))
            if processor_type(item) in GPU_TYPES and not NOT_A_GPU.search(text(item.get("Model")) or ""):
                merge(found, [from_processor(item, system_id)], True)
    # processors a (baseboard) chassis links to that no system's Processors collection listed
    read_under = set(uri.rsplit("/", 1)[0] + "/" for uri in seen if "/" in uri)
    linked = []
    for chassis in service.chassis or []:
        linked.extend(uri for uri in _links(chassis, "Processors")
                      if uri.rstrip("/") not in seen and not any(uri.startswith(prefix) for prefix in read_under))
    if linked:
        extra = service.resolve([{"@odata.id": uri} for uri in sorted(set(linked))], "Chassis#/Links/Processors") or []
        looked = True
        merge(found, [from_processor(item, _system_of(item, systems, default_system)) for item in extra
                      if processor_type(item) in GPU_TYPES and not NOT_A_GPU.search(text(item.get("Model")) or "")],
              not found)
    vendor_devices = adapter.gpu_pcie_devices(service)
    if vendor_devices:
        looked = True
        merge(found, [from_pcie_device(item, _system_of(item, systems, default_system)) for item in vendor_devices
                      if not NOT_A_GPU.search(" ".join(filter(None, [text(item.get("Name")), text(item.get("Model"))])))],
              not found)
    if pcie_devices is not None:
        looked = True
        candidates = []
        known = set(uri.rstrip("/") for gpu in found for uri in gpu.get("_pcie") or [])
        for device in pcie_devices:
            if (odata_id(device) or "").rstrip("/") in known:
                # a GPU found already names this device: it completes that GPU (a model from its name), and its
                # functions need not be read
                candidates.append(from_pcie_device(device, _system_of(device, systems, default_system)))
                continue
            functions = service.members(link(device, "PCIeFunctions")) if link(device, "PCIeFunctions") else None
            if is_gpu_device(device, functions):
                candidates.append(from_pcie_device(device, _system_of(device, systems, default_system)))
        merge(found, candidates, not found)
    oem = adapter.oem_gpus(service, default_system)
    if oem is not None:
        looked = True
        merge(found, oem, not found)
    return public(found) if looked else None
