# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Dell iDRAC 9 (PowerEdge). Quirks, seen in the captured R750 tree (tests/fixtures/redfish/dell-poweredge-r750-h100-pcie)
or documented in NVIDIA/libredfish (MIT) ``src/dell.rs``:

- The SEL is ``Managers/iDRAC.Embedded.1/LogServices/Sel``; the Lifecycle Controller log ``Lclog`` beside it is
  Dell's event log (the capture's LogServices collection lists Sel, Lclog and FaultList; libredfish
  ``get_system_event_log``).
- Pending BIOS settings are PATCHed to ``Systems/System.Embedded.1/Bios/Settings`` with
  ``"@Redfish.SettingsApplyTime": {"ApplyTime": "OnReset"}`` (libredfish ``set_bios``).
- iDRAC offers ``PowerCycle`` as a ResetType (listed in the capture's ComputerSystem.Reset action).
- The FirmwareInventory lists, per component, the ``Installed-`` image, the ``Previous-`` one kept for rollback and a
  ``Current-`` item that repeats the installed one (capture: ``Installed-159-1.8.2__BIOS.Setup.1-1``,
  ``Current-159-1.8.2__BIOS.Setup.1-1``, ``Previous-159-1.2.4__BIOS.Setup.1-1``). Only what runs is reported.
- Item names mislead (the iDRAC Service Module's names the iDRAC, the diagnostics' names UEFI): items are
  classified by the FQDD in their Id (``iDRAC.Embedded.1-1``, ``Diagnostics.Embedded.1:LC.Embedded.1``).
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.transform import classify_firmware, resource_id
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.vendors.generic import GenericAdapter, any_word, under, vendor_words


def _component(ident):
    """The FQDD of a Dell FirmwareInventory Id (``Installed-159-1.8.2__BIOS.Setup.1-1`` → ``BIOS.Setup.1-1``)."""
    return ident.split("__", 1)[1] if "__" in ident else ident


class DellAdapter(GenericAdapter):
    name = "dell"
    power_cycle_assumed = True

    @classmethod
    def matches(cls, root, systems):
        return any_word(vendor_words(root, systems), "dell")

    def log_services(self, service, which):
        if which == "all":
            return GenericAdapter.log_services(self, service, which)
        manager = service.manager_of(service.system)
        names = ["LogServices/Sel"] + (["LogServices/Lclog"] if which == "events" else [])
        found = [service.try_get(under(name, manager)) for name in names] if manager else []
        return [item for item in found if item]

    def bios_settings_uri(self, bios):
        return under("Settings", bios)

    def bios_patch_body(self, attributes):
        return {"@Redfish.SettingsApplyTime": {"ApplyTime": "OnReset"}, "Attributes": dict(attributes)}

    def classify_firmware(self, item):
        return classify_firmware({"Id": _component(resource_id(item) or "")})

    def keep_firmware(self, item, items):
        ident = resource_id(item) or ""
        if ident.startswith("Previous-"):
            return False
        if ident.startswith("Current-"):
            installed = [resource_id(other) or "" for other in items]
            return not any(other.startswith("Installed-") and _component(other) == _component(ident) for other in installed)
        return True
