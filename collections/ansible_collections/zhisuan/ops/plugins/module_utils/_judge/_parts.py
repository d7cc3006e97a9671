# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""The parts of a node, for the asset list's component rows (docs/results.md, ``assets-components.csv``).

Pure: each function takes one family's collected facts (the ones its rules judge) and returns the parts those facts
really hold, each a mapping of the keys of PART_KEYS that have a value (no key for what the facts do not say):

``kind``          gpu | cpu | dimm | drive | psu | nic | fru (BMC); gpu (nvidia-smi); nic | optic (ethtool); hca
``slot``          where it sits: the BMC's location or id, the PCI bus id, the interface or RDMA device name
``manufacturer``, ``model``, ``part_number``, ``serial``, ``firmware``
``extra_id``      another identity: a GPU UUID, a NIC's MAC address, an HCA's node GUID
``source``        bmc | nvidia-smi | ethtool | ibstat

The family summaries keep them (``facts.bmc.parts``, ``facts.gpu.devices``, ``facts.net.parts``,
``facts.rdma.parts``), so the asset list is written from what the run judged, never from a second reading.
``placeholder_serial`` says which serial numbers are no identity at all (what BMCs show for an unprogrammed FRU).
"""

from __future__ import annotations

import re

from ansible_collections.zhisuan.ops.plugins.module_utils._text import natural_key

PART_KEYS = ("kind", "slot", "manufacturer", "model", "part_number", "serial", "firmware", "extra_id", "source")

# Serial numbers the real trees and tools show for "no serial" (tests/fixtures/redfish: "", "N/A", 14 zeros, the
# GH200 CPLD's literal "CPLDSerialNumber", the HPE Cray GPUs' "01234567890123456789AB"; SMBIOS templates: "To Be
# Filled By O.E.M.", "Default string", "Not Specified", "0123456789"), compared upper-cased without blanks.
_PLACEHOLDERS = frozenset((
    "", "N/A", "NA", "NONE", "NULL", "UNKNOWN", "NOTSPECIFIED", "NOTAVAILABLE", "NOTAPPLICABLE", "TOBEFILLEDBYO.E.M.",
    "DEFAULTSTRING", "SYSTEMSERIALNUMBER", "CHASSISSERIALNUMBER", "BASEBOARDSERIALNUMBER", "SERIALNUMBER",
    "123456789", "1234567890", "0123456789", "01234567890123456789AB", "[NOTSPECIFIED]", "[UNKNOWN]",
))
_ONE_CHARACTER = re.compile(r"^(.)\1*$")


def placeholder_serial(value):
    """Whether ``value`` is no serial number: empty, a placeholder word, one character repeated (``00000000000000``,
    ``FFFFFFFF``), a template's "...SerialNumber", or shorter than 4 characters (``01``)."""
    if not isinstance(value, str):
        return True
    squeezed = re.sub(r"\s+", "", value).upper()
    if squeezed in _PLACEHOLDERS or len(squeezed) < 4 or _ONE_CHARACTER.match(squeezed):
        return True
    return squeezed.endswith("SERIALNUMBER") or "O.E.M" in squeezed


def _text(value):
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        value = value.strip()
        return value or None
    return None


def _part(kind, source, slot=None, manufacturer=None, model=None, part_number=None, serial=None, firmware=None,
          extra_id=None):
    values = {"kind": kind, "slot": _text(slot), "manufacturer": _text(manufacturer), "model": _text(model),
              "part_number": _text(part_number), "serial": _text(serial), "firmware": _text(firmware),
              "extra_id": _text(extra_id), "source": source}
    return dict((key, values[key]) for key in PART_KEYS if values[key] is not None)


def _items(value):
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _memory_model(item):
    kind = _text(item.get("type"))
    size = item.get("capacity_mib")
    size = "%d MiB" % size if isinstance(size, (int, float)) and not isinstance(size, bool) and size > 0 else None
    return " ".join(word for word in (kind, size) if word) or None


def bmc_parts(facts):
    """The parts in the ``bmc`` facts (docs/bmc-facts.md): GPUs, CPUs, DIMMs (not the empty sockets), drives,
    power supplies, the NICs the BMC lists, and (IPMI) the FRU devices. A part the BMC lists twice is one row."""
    facts = facts if isinstance(facts, dict) else {}
    parts = []
    for gpu in _items(facts.get("gpus")):
        parts.append(_part("gpu", "bmc", slot=gpu.get("location") or gpu.get("id"), model=gpu.get("model"),
                           serial=gpu.get("serial"), firmware=gpu.get("firmware_version"), extra_id=gpu.get("uuid")))
    for cpu in _items(facts.get("processors")):
        if cpu.get("type") == "CPU" and cpu.get("state") != "Absent":
            parts.append(_part("cpu", "bmc", slot=cpu.get("id"), manufacturer=cpu.get("manufacturer"),
                               model=cpu.get("model"), serial=cpu.get("serial")))
    for dimm in _items(facts.get("memory")):
        if dimm.get("state") == "Absent" or dimm.get("capacity_mib") == 0:
            continue
        parts.append(_part("dimm", "bmc", slot=dimm.get("id"), manufacturer=dimm.get("manufacturer"),
                           model=_memory_model(dimm), part_number=dimm.get("part_number"), serial=dimm.get("serial")))
    for drive in _items(facts.get("drives")):
        parts.append(_part("drive", "bmc", slot=drive.get("id") or drive.get("name"), model=drive.get("model"),
                           serial=drive.get("serial")))
    for psu in _items(facts.get("power_supplies")):
        if psu.get("state") == "Absent":
            continue
        parts.append(_part("psu", "bmc", slot=psu.get("name") or psu.get("id"), model=psu.get("model"),
                           serial=psu.get("serial"), firmware=psu.get("firmware_version")))
    for nic in _items(facts.get("nics")):
        parts.append(_part("nic", "bmc", slot=nic.get("id") or nic.get("name"), manufacturer=nic.get("manufacturer"),
                           model=nic.get("model"), firmware=nic.get("firmware_version")))
    for fru in _items(facts.get("fru")):
        parts.append(_part("fru", "bmc", slot=fru.get("id"), manufacturer=fru.get("manufacturer"),
                           model=fru.get("product"), part_number=fru.get("part_number"), serial=fru.get("serial")))
    return _unique(parts)


def gpu_parts(facts):
    """The GPUs of the ``gpu`` facts (nvidia-smi, docs/gpu-facts.md): PCI bus id, name, serial, VBIOS, UUID."""
    facts = facts if isinstance(facts, dict) else {}
    return _unique([_part("gpu", "nvidia-smi", slot=gpu.get("pci_bus_id") or gpu.get("index"), model=gpu.get("name"),
                          serial=gpu.get("serial"), firmware=gpu.get("vbios_version"), extra_id=gpu.get("uuid"))
                    for gpu in _items(facts.get("gpus"))])


def net_parts(interfaces):
    """The NICs and their optics of the ``net`` facts' interfaces (``{name: nic facts}``, docs/net-facts.md): a NIC
    with its driver, firmware and MAC address; an optic with its vendor, part number and serial (``ethtool -m``)."""
    parts = []
    for name in sorted(interfaces if isinstance(interfaces, dict) else {}, key=natural_key):
        nic = interfaces[name] if isinstance(interfaces[name], dict) else {}
        if nic.get("present") is False:
            continue
        if nic.get("driver") or nic.get("firmware") or nic.get("address"):
            parts.append(_part("nic", "ethtool", slot=name, model=nic.get("driver"), firmware=nic.get("firmware"),
                               extra_id=nic.get("address")))
        optics = nic.get("optics") if isinstance(nic.get("optics"), dict) else {}
        if optics.get("serial") or optics.get("part_number") or optics.get("vendor"):
            parts.append(_part("optic", "ethtool", slot=name, manufacturer=optics.get("vendor"),
                               model=optics.get("transceiver") or optics.get("identifier"),
                               part_number=optics.get("part_number"), serial=optics.get("serial")))
    return parts


def hca_parts(ib):
    """The RDMA devices of the ``net.ib`` facts: CA type, firmware and node GUID (``ibstat`` or sysfs)."""
    devices = (ib or {}).get("devices") if isinstance(ib, dict) else None
    devices = devices if isinstance(devices, dict) else {}
    return [_part("hca", "ibstat", slot=name, model=(devices[name] or {}).get("ca_type"),
                  firmware=(devices[name] or {}).get("fw"), extra_id=(devices[name] or {}).get("node_guid"))
            for name in sorted(devices, key=natural_key) if isinstance(devices[name], dict)]


def _unique(parts):
    seen = set()
    out = []
    for part in parts:
        key = (part.get("kind"), part.get("slot"), part.get("serial"), part.get("model"))
        if key not in seen:
            seen.add(key)
            out.append(part)
    return out
