# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""HPE iLO 5/6 (ProLiant, Apollo). Hooks follow HPE's documentation, NVIDIA/libredfish (MIT) ``src/hpe.rs`` and the
iLO 5 trees of Cray-HPE/csm-redfish-interface-emulator (mockup ``XL675d_A100``):

- The system event log is the Integrated Management Log ``Systems/1/LogServices/IML``; the iLO's own event log is
  ``Managers/1/LogServices/IEL`` (HPE iLO RESTful API, "Log services",
  https://servermanagementportal.ext.hpe.com/docs/redfishservices/ilos/supplementdocuments/logservices;
  libredfish ``get_system_event_log`` and ``get_bmc_event_log``).
- iLO 5 lists the GPUs of an Apollo 6500 (XL675d with an HGX A100 board) in its own device inventory,
  ``Chassis/1/Devices`` (linked from the chassis' ``Oem.Hpe.Links.Devices``; ``HpeServerDevice``, ``DeviceType:
  GPU``), which also types the HGX baseboard and the NVSwitches as GPU; the Redfish ``PCIeDevices`` of that
  chassis answer "Invalid URI" and no Processor is a GPU. Those devices are read as GPUs, the baseboard and
  switches excepted; the firmware version is ``FirmwareVersion.Current.VersionString``.
- Pending BIOS settings go to ``Systems/1/Bios/Settings`` (libredfish ``Systems/{}/Bios/settings/``), which the Bios
  resource also names in ``@Redfish.Settings``: the generic rule finds it.
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._redfish import discovery
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.transform import health, link, odata_id, resource_id, state, text
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.vendors.generic import GenericAdapter, any_word, under, vendor_words


def device_gpu(device, system_id):
    """An ``HpeServerDevice`` of type GPU as ``gpus`` facts (None when it is not a present GPU)."""
    name = text(device.get("Name"))
    if text(device.get("DeviceType")) != "GPU" or state(device) == "Absent":
        return None
    if discovery.NOT_A_GPU.search(" ".join(filter(None, [name, text(device.get("Location"))]))):
        return None
    firmware = device.get("FirmwareVersion")
    current = firmware.get("Current") if isinstance(firmware, dict) else None
    version = text(current.get("VersionString")) if isinstance(current, dict) else text(firmware)
    instances = device.get("DeviceInstances") if isinstance(device.get("DeviceInstances"), list) else []
    return {"id": resource_id(device), "model": name, "serial": text(device.get("SerialNumber")), "uuid": None,
            "firmware_version": None if version in (None, "N/A") else version, "health": health(device),
            "source": "oem_device", "system": system_id, "location": text(device.get("Location")),
            "_pcie": [item["@odata.id"] for item in instances if isinstance(item, dict) and isinstance(item.get("@odata.id"), str)],
            "_uri": odata_id(device)}


class HpeAdapter(GenericAdapter):
    name = "hpe"

    @classmethod
    def matches(cls, root, systems):
        words = vendor_words(root, systems)
        return "hp" in words or any_word(words, "hpe", "hewlett")

    def oem_gpus(self, service, system_id):
        found = None
        for chassis in service.chassis or []:
            hpe = (chassis.get("Oem") or {}).get("Hpe") if isinstance(chassis.get("Oem"), dict) else None
            uri = link((hpe or {}).get("Links") if isinstance(hpe, dict) else None, "Devices")
            devices = service.members(uri) if uri else None
            if devices is None:
                continue
            found = (found or []) + [gpu for gpu in (device_gpu(item, system_id) for item in devices) if gpu]
        return found

    def log_services(self, service, which):
        if which == "all":
            return GenericAdapter.log_services(self, service, which)
        found = [service.try_get(under("LogServices/IML", service.system))]
        manager = service.manager_of(service.system)
        if which == "events" and manager:
            found.append(service.try_get(under("LogServices/IEL", manager)))
        return [item for item in found if item]
