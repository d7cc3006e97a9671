# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""The shared connection options of every Redfish module. Mirrored 1:1 by plugins/doc_fragments/_redfish.py."""

from ansible.module_utils.common.parameters import env_fallback

DEFAULT_TIMEOUT = 30

REDFISH_ARGSPEC = {
    "bmc_address": {"type": "str", "required": True},
    "bmc_username": {"type": "str", "fallback": (env_fallback, ["ZHISUAN_BMC_USERNAME"])},
    "bmc_password": {"type": "str", "no_log": True, "fallback": (env_fallback, ["ZHISUAN_BMC_PASSWORD"])},
    "bmc_port": {"type": "int"},
    "auth": {"type": "str", "choices": ["auto", "basic", "session"], "default": "auto"},
    "validate_certs": {"type": "bool", "default": True},
    "ca_path": {"type": "path"},
    "timeout": {"type": "int", "default": DEFAULT_TIMEOUT},
}
