# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""NVIDIA GPU servers: GB200 NVL compute trays (OpenBMC) and DGX H100 (AMI MegaRAC BMC with an HGX baseboard).

Quirks, each seen in the captured trees (tests/fixtures/redfish/nvidia-*) or documented in NVIDIA's own Redfish
client, NVIDIA/libredfish (MIT), ``src/nvidia_gbx00.rs`` and ``src/nvidia_viking.rs``:

- The host is one ComputerSystem (``DGX``, ``System_0``); the GPUs are the Processors of type GPU of a second one,
  ``HGX_Baseboard_0``, managed by the HGX BMC (both captures). Their PCIe view is under ``Chassis/HGX_GPU_*``.
- The boot override is PATCHed to the system's ``@Redfish.Settings`` object (``Systems/DGX/SD``,
  ``Systems/System_0/Settings``), not the system (libredfish ``set_boot_override`` in both files).
- GB200: the SEL is ``Systems/<host>/LogServices/SEL`` (libredfish ``nvidia_gbx00.rs`` ``get_system_event_log``);
  GPU and CPU events are in ``Systems/HGX_Baseboard_0/LogServices/EventLog`` and ``Managers/BMC_0/LogServices/EventLog``
  (capture). The BMC firmware version carries a ``GB200Nvl-`` prefix (``FW_BMC_0`` ``GB200Nvl-24.12-8`` in the
  capture; libredfish ``get_firmware`` strips it).
- DGX H100: the SEL is under the manager, ``Managers/BMC/LogServices/SEL`` (libredfish ``nvidia_viking.rs``: "nvidia
  dgx stores the sel as part of the manager"); BIOS settings go to ``Bios/SD`` and boot settings to ``Systems/DGX/SD``,
  each PATCH with an ``If-Match`` header (libredfish ``patch_bios_attributes``/``set_boot_override``; the NVIDIA DGX
  H100 user guide, "Redfish API support", shows ``If-Match: *``).
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import BMCError
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.wire import recordable
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.transform import link, resource_id
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.vendors.generic import GenericAdapter, any_word, under, vendor_words

BASEBOARD = "HGX_Baseboard"
GPU_CHASSIS = "HGX_GPU"
GB200_BMC_PREFIX = "GB200Nvl-"


def _is_baseboard(system):
    return (resource_id(system) or "").startswith(BASEBOARD)


class NvidiaAdapter(GenericAdapter):
    """NVIDIA OpenBMC (GB200 NVL; also the base of the DGX adapter)."""

    name = "nvidia"

    @classmethod
    def matches(cls, root, systems):
        words = vendor_words(root, systems)
        return any_word(words, "nvidia") or any(_is_baseboard(system) for system in systems or [])

    def primary_system(self, systems):
        """The host system; None when only the HGX baseboard could be read (the baseboard is not the host: the
        facts then come from the baseboard's GPUs and the Chassis side)."""
        hosts = [system for system in systems if not _is_baseboard(system)]
        return hosts[0] if hosts else None

    def host_systems(self, systems):
        """The hosts: every system but the HGX baseboard (whose GPUs are the host's)."""
        return [system for system in systems or [] if not _is_baseboard(system)]

    def processor_systems(self, systems, primary):
        return ([primary] if primary is not None else []) + [
            system for system in systems if _is_baseboard(system) and system is not primary]

    def gpu_pcie_devices(self, service):
        devices = []
        for chassis in service.chassis or []:
            if (resource_id(chassis) or "").startswith(GPU_CHASSIS):
                devices.extend(service.members(link(chassis, "PCIeDevices")) or [])
        return devices

    def sel_owner(self, service):
        """Whose LogServices hold the SEL: the host system on OpenBMC."""
        return service.system

    def log_services(self, service, which):
        if which == "all":
            return GenericAdapter.log_services(self, service, which)
        found = [service.try_get(under("LogServices/SEL", self.sel_owner(service)))]
        if which == "events":
            owners = [service.manager_of(service.system)] + [system for system in service.systems if _is_baseboard(system)]
            found.extend(service.try_get(under("LogServices/EventLog", owner)) for owner in owners if owner)
        return [item for item in found if item]

    def boot_uri(self, system):
        settings = ((system.get("@Redfish.Settings") or {}).get("SettingsObject") or {}).get("@odata.id")
        return settings or GenericAdapter.boot_uri(self, system)

    def version(self, value):
        if value and value.startswith(GB200_BMC_PREFIX):
            return value[len(GB200_BMC_PREFIX):]
        return value


class NvidiaDgxAdapter(NvidiaAdapter):
    """NVIDIA DGX H100/H200 (AMI MegaRAC BMC; root ``Vendor: AMI``, systems made by NVIDIA)."""

    @classmethod
    def matches(cls, root, systems):
        words = vendor_words(root, systems)
        return any_word(words, "ami") and any_word(words, "nvidia")

    def sel_owner(self, service):
        return service.manager_of(service.system)

    def settings_headers(self, client, uri):
        """``If-Match`` with the resource's ETag (the ETag header, else its ``@odata.etag``; ``*`` when it has neither
        or cannot be read)."""
        etag = None
        try:
            response = client.request("GET", uri)
            body = response.data if isinstance(response.data, dict) else {}
            etag = response.header("ETag") or body.get("@odata.etag")
        except BMCError as exc:
            if not recordable(exc):
                raise
        return {"If-Match": etag or "*"}
