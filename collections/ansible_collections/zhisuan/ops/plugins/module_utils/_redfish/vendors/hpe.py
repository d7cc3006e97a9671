# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""HPE iLO 5/6 (ProLiant). No captured tree of an iLO is in the fixtures, so this adapter is not replayed in the
tests; its hooks follow HPE's documentation and NVIDIA/libredfish (MIT) ``src/hpe.rs``:

- The system event log is the Integrated Management Log ``Systems/1/LogServices/IML``; the iLO's own event log is
  ``Managers/1/LogServices/IEL`` (HPE iLO RESTful API, "Log services",
  https://servermanagementportal.ext.hpe.com/docs/redfishservices/ilos/supplementdocuments/logservices;
  libredfish ``get_system_event_log`` and ``get_bmc_event_log``).
- Pending BIOS settings go to ``Systems/1/Bios/Settings`` (libredfish ``Systems/{}/Bios/settings/``), which the Bios
  resource also names in ``@Redfish.Settings``: the generic rule finds it.
"""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.vendors.generic import GenericAdapter, any_word, under, vendor_words


class HpeAdapter(GenericAdapter):
    name = "hpe"

    @classmethod
    def matches(cls, root, systems):
        words = vendor_words(root, systems)
        return "hp" in words or any_word(words, "hpe", "hewlett")

    def log_services(self, service, which):
        if which == "all":
            return GenericAdapter.log_services(self, service, which)
        found = [service.try_get(under("LogServices/IML", service.system))]
        manager = service.manager_of(service.system)
        if which == "events" and manager:
            found.append(service.try_get(under("LogServices/IEL", manager)))
        return [item for item in found if item]
