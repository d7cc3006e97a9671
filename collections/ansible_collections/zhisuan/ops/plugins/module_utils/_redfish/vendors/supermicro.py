# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Supermicro BMC (X12/X13, H12/H13). No captured tree of a Supermicro BMC is in the fixtures, so this adapter is not
replayed in the tests; its hooks follow NVIDIA/libredfish (MIT) ``src/supermicro.rs``:

- BIOS attributes are PATCHed to the ``Systems/1/Bios`` resource itself (libredfish ``machine_setup`` and
  ``clear_tpm``); the pending values are read back from ``Systems/1/Bios/SD`` (libredfish ``pending``), which has no
  ``Attributes`` at all when nothing is pending ("Supermicro doesn't include the Attributes key if there are no
  pending changes").
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.transform import odata_id
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.vendors.generic import GenericAdapter, any_word, under, vendor_words


class SupermicroAdapter(GenericAdapter):
    name = "supermicro"

    @classmethod
    def matches(cls, root, systems):
        return any_word(vendor_words(root, systems), "supermicro")

    def bios_settings_uri(self, bios):
        return odata_id(bios)

    def bios_pending_uri(self, bios):
        return under("SD", bios)
