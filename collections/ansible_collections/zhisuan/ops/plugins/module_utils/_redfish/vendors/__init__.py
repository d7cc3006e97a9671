# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Vendor adapters, one class per BMC family behind the interface of ``generic.GenericAdapter``."""

from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.vendors.dell import DellAdapter
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.vendors.generic import GenericAdapter
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.vendors.hpe import HpeAdapter
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.vendors.inspur import InspurAdapter
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.vendors.lenovo import LenovoAdapter
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.vendors.nvidia import NvidiaAdapter, NvidiaDgxAdapter
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.vendors.supermicro import SupermicroAdapter

# Most specific first; GenericAdapter matches everything and comes last.
ADAPTERS = (DellAdapter, HpeAdapter, LenovoAdapter, SupermicroAdapter, InspurAdapter, NvidiaDgxAdapter, NvidiaAdapter,
            GenericAdapter)


def select_adapter(root, systems):
    """An instance of the first adapter whose ``matches(root, systems)`` is true."""
    for adapter in ADAPTERS:
        if adapter.matches(root, systems):
            return adapter()
    return GenericAdapter()
