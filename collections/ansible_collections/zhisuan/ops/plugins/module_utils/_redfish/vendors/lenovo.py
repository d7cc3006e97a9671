# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Lenovo XClarity Controller (XCC, ThinkSystem). No captured tree of an XCC is in the fixtures, so this adapter is
not replayed in the tests; its hooks follow Lenovo's documentation and NVIDIA/libredfish (MIT) ``src/lenovo.rs``:

- Pending BIOS settings are PATCHed to ``Systems/1/Bios/Pending`` (XCC REST API, "PATCH - Update pending BIOS
  settings", https://pubs.lenovo.com/xcc-restapi/update_pending_bios_settings_patch; libredfish ``set_bios``).
- The system event log is ``Systems/1/LogServices/PlatformLog`` (``StandardLog`` on older XCC firmware); the audit
  log ``Systems/1/LogServices/AuditLog`` is the BMC's event log (libredfish ``get_bmc_event_log``).
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.vendors.generic import GenericAdapter, any_word, under, vendor_words


class LenovoAdapter(GenericAdapter):
    name = "lenovo"

    @classmethod
    def matches(cls, root, systems):
        return any_word(vendor_words(root, systems), "lenovo")

    def log_services(self, service, which):
        if which == "all":
            return GenericAdapter.log_services(self, service, which)
        system = service.system
        found = [service.first_readable([under("LogServices/PlatformLog", system), under("LogServices/StandardLog", system)])]
        if which == "events":
            found.append(service.try_get(under("LogServices/AuditLog", system)))
        return [item for item in found if item]

    def bios_settings_uri(self, bios):
        return under("Pending", bios)
