# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""The adapter interface, implemented for a service that follows DMTF Redfish (DSP0266/DSP0268) as written.

Every vendor adapter subclasses ``GenericAdapter`` and overrides only the hooks its quirks need; shared code calls
the hooks and never asks which vendor it talks to. Hooks:

- ``matches(root, systems)``: whether this adapter fits the service (class method);
- where things are: ``primary_system``, ``host_systems`` (every ComputerSystem that is a host), ``processor_systems``
  (where GPUs are), ``gpu_pcie_devices``, ``oem_gpus`` (a vendor's own device list), ``log_services`` (the SEL,
  vendor event logs, or all);
- settings: ``bios_settings_uri``, ``bios_pending_uri``, ``bios_patch_body``, ``settings_headers``, ``boot_uri``;
- power: ``reset_types`` (a power state → the ResetType values to POST, in order);
- firmware and values: ``keep_firmware``, ``classify_firmware``, ``version``, ``system_facts``.
"""

import re

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import BMCError
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish import transform
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.transform import odata_id, resource_id

TOOL = "redfish"
RESET_TYPES = {
    "on": "On",
    "graceful_off": "GracefulShutdown",
    "force_off": "ForceOff",
    "graceful_restart": "GracefulRestart",
    "force_restart": "ForceRestart",
    "power_cycle": "PowerCycle",
}
# words in a LogService id that say it holds no events (logs.py adds the services it reads none of)
EVENTLESS = ("dump", "diagnostic", "debugtoken", "crash")
_NOT_EVENTS = re.compile("|".join(EVENTLESS), re.IGNORECASE)


def vendor_words(root, systems):
    """Lower-case names a service uses for its maker: root ``Vendor``, ``Product``, ``Oem`` keys, and each
    system's ``Manufacturer``."""
    words = set()
    root = root if isinstance(root, dict) else {}
    for value in (root.get("Vendor"), root.get("Product")):
        if isinstance(value, str) and value.strip():
            words.add(value.strip().lower())
    oem = root.get("Oem")
    words.update(str(key).lower() for key in (oem if isinstance(oem, dict) else {}))
    for system in systems or []:
        if isinstance(system, dict) and isinstance(system.get("Manufacturer"), str) and system["Manufacturer"].strip():
            words.add(system["Manufacturer"].strip().lower())
    return words


def any_word(words, *prefixes):
    return any(word.startswith(prefix) for word in words for prefix in prefixes)


def is_event_log(uri):
    """Whether a LogService URI is an event log (dump, diagnostic and crash-dump services are not)."""
    return not _NOT_EVENTS.search(uri.rstrip("/").rsplit("/", 1)[-1])


def is_sel(service):
    return transform.text(service.get("LogEntryType")) == "SEL" or (resource_id(service) or "").lower() == "sel"


def under(uri, resource):
    """``uri`` below ``resource`` (``<resource @odata.id>/<uri>``)."""
    return (odata_id(resource) or "").rstrip("/") + "/" + uri


class GenericAdapter(object):
    """DMTF Redfish as the specification writes it (the DMTF public-rackmount1 mockup follows it)."""

    name = "generic"
    # Whether power_cycle may POST PowerCycle when the BMC does not list its ResetType values.
    power_cycle_assumed = False

    @classmethod
    def matches(cls, root, systems):
        return True

    # -- where things are -----------------------------------------------------------------------------------------

    def primary_system(self, systems):
        """The host's ComputerSystem: the first one listed."""
        return systems[0] if systems else None

    def host_systems(self, systems):
        """Every ComputerSystem that is a host of its own (a two-node blade lists two), in the order listed."""
        return list(systems or [])

    def processor_systems(self, systems, primary):
        """The systems whose Processors are read (GPUs are the processors of type GPU among them)."""
        return [primary] if primary is not None else []

    def gpu_pcie_devices(self, service):
        """PCIe devices of the vendor's own GPU chassis, beside those found by their PCIe function class."""
        return []

    def oem_gpus(self, service, system_id):
        """GPUs from a vendor's own device list (``gpus`` facts with the private merge keys of discovery.py), or
        None when the vendor has none."""
        return None

    def log_services(self, service, which):
        """The LogService resources for ``which``: ``sel`` (the System Event Log; without a service typed SEL, the
        system's own logs), ``events`` (the event logs of the host system and its manager) or ``all`` (every
        event log of every manager and system)."""
        if which == "all":
            owners = list(service.managers) + list(service.systems)
        else:
            owners = [owner for owner in (service.manager_of(service.system), service.system) if owner]
        found = []
        for owner in owners:
            found.extend(service.log_services_of(owner, keep=is_event_log) or [])
        if which != "sel":
            return found
        sel = [item for item in found if is_sel(item)]
        mine = (odata_id(service.system) or "").rstrip("/") + "/"
        return sel or [item for item in found if (odata_id(item) or "").startswith(mine)]

    # -- BIOS and boot settings -----------------------------------------------------------------------------------

    def bios_settings_uri(self, bios):
        """Where pending BIOS settings are PATCHed: the Bios resource's ``@Redfish.Settings`` object, else
        ``<Bios>/Settings``."""
        settings = ((bios.get("@Redfish.Settings") or {}).get("SettingsObject") or {}).get("@odata.id")
        return settings or under("Settings", bios)

    def bios_pending_uri(self, bios):
        """Where the pending BIOS settings are read back."""
        return self.bios_settings_uri(bios)

    def bios_patch_body(self, attributes):
        return {"Attributes": dict(attributes)}

    def settings_headers(self, client, uri):
        """Extra headers for a PATCH of ``uri`` (BIOS or boot settings)."""
        return {}

    def boot_uri(self, system):
        """Where the boot override is PATCHed: the system itself."""
        return odata_id(system)

    # -- power ----------------------------------------------------------------------------------------------------

    def reset_types(self, state, allowed):
        """The ResetType values that bring ``state`` about, in order. ``allowed`` is what the BMC lists (None when
        it does not say). power_cycle is PowerCycle where offered, else ForceOff then On."""
        if state == "power_cycle":
            if (allowed is not None and "PowerCycle" in allowed) or (allowed is None and self.power_cycle_assumed):
                return ["PowerCycle"]
            return [self.pick("force_off", allowed), self.pick("on", allowed)]
        return [self.pick(state, allowed)]

    def pick(self, state, allowed):
        wanted = RESET_TYPES[state]
        if allowed is None or wanted in allowed:
            return wanted
        if wanted == "On" and "ForceOn" in allowed:
            return "ForceOn"
        raise BMCError(TOOL, "the BMC does not offer ResetType %s for %s (it offers: %s)"
                       % (wanted, state, ", ".join(allowed) or "nothing"))

    # -- firmware and values --------------------------------------------------------------------------------------

    def keep_firmware(self, item, items):
        """Whether a FirmwareInventory item is reported (all are)."""
        return True

    def classify_firmware(self, item):
        return transform.classify_firmware(item)

    def version(self, value):
        """A firmware version as reported, normalised where the vendor decorates it."""
        return value

    def system_facts(self, system):
        return transform.system_facts(system)
