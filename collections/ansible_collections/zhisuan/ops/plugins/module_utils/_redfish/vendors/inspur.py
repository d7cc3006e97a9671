# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Inspur (IEIT) servers (NF5280M5 and kin). No captured tree of an Inspur BMC is in the fixtures, so this adapter is
not replayed in the tests. The one quirk with a public source, a ComputerSystem read from an NF5280M5 and posted in
bb-Ricardo/check_redfish issue #72 (https://github.com/bb-Ricardo/check_redfish/issues/72):

- ``BiosVersion`` carries the build time after the version, ``"4.1.20 (2021/07/16 17:09:46)"``; the version alone is
  reported, so that baselines compare versions.
- The same system links its storage as ``Systems/1/Storages``; links are followed as given, so no hook is needed.
"""

import re

from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.vendors.generic import GenericAdapter, any_word, vendor_words

_BUILD_TIME = re.compile(r"\s*\([^)]*\)\s*$")


class InspurAdapter(GenericAdapter):
    name = "inspur"

    @classmethod
    def matches(cls, root, systems):
        return any_word(vendor_words(root, systems), "inspur", "ieit")

    def system_facts(self, system):
        facts = GenericAdapter.system_facts(self, system)
        if facts["bios_version"]:
            facts["bios_version"] = _BUILD_TIME.sub("", facts["bios_version"]) or facts["bios_version"]
        return facts
