#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: redfish_bios
short_description: Read BIOS attributes over Redfish, and set wanted values as pending settings
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Reads the BIOS attributes of the host (RV(attributes)) and the settings already pending for the next boot
    (RV(pending)).
  - With O(attributes), compares each wanted value with the pending one, else the current one, and PATCHes only the
    differences to the BIOS settings object, where they stay pending until the host reboots. It never reboots; see
    RV(reboot_required) and M(zhisuan.ops.redfish_power).
  - "Where the settings go depends on the vendor: the Bios resource's C(@Redfish.Settings) object in general
    (C(Bios/Settings) on Dell, with C(@Redfish.SettingsApplyTime) C(OnReset); C(Bios/SD) with an C(If-Match) header
    on DGX H100; C(Bios/Pending) on Lenovo; the C(Bios) resource itself on Supermicro)."
  - An attribute name the BIOS does not have fails the task and changes nothing.
extends_documentation_fragment:
  - zhisuan.ops._redfish
  - zhisuan.ops._attributes
  - zhisuan.ops._redfish.actiongroup_redfish
attributes:
  check_mode:
    support: full
    details:
      - Reads the attributes, plans the PATCH and returns it in RV(actions) with C(changed); sends nothing.
  diff_mode:
    support: full
    details:
      - Shows the attributes that change, before (pending or current) and after.
options:
  attributes:
    description:
      - Wanted BIOS attributes, name to value, with the vendor's attribute names (V(SriovGlobalEnable) on Dell,
        V(SRIOVEnable) on DGX H100, ...).
      - A value equal to the current one as text (V(3) and V("3"), V(true) and V("true")) is not a change; values
        are sent in the type of the current value.
      - Without it the module only reads.
    type: dict
seealso:
  - module: zhisuan.ops.redfish_power
"""

EXAMPLES = r"""
- name: Read the BIOS attributes
  zhisuan.ops.redfish_bios:
    bmc_address: "{{ bmc_address }}"
    bmc_username: "{{ bmc_username }}"
    bmc_password: "{{ bmc_password }}"
  delegate_to: localhost
  register: bios

- name: Stage the site's BIOS baseline on a Dell GPU server, then reboot if anything changed
  zhisuan.ops.redfish_bios:
    bmc_address: "{{ bmc_address }}"
    bmc_username: "{{ bmc_username }}"
    bmc_password: "{{ bmc_password }}"
    attributes:
      SriovGlobalEnable: Enabled
      SysProfile: PerfOptimized
  delegate_to: localhost
  register: staged

- name: Apply the pending settings
  zhisuan.ops.redfish_power:
    bmc_address: "{{ bmc_address }}"
    bmc_username: "{{ bmc_username }}"
    bmc_password: "{{ bmc_password }}"
    state: graceful_restart
  delegate_to: localhost
  when: staged.changed
"""

RETURN = r"""
attributes:
  description: The current BIOS attributes (as the BIOS last booted with them).
  returned: success
  type: dict
  sample: {SriovGlobalEnable: Disabled, SysProfile: PerfPerWattOptimizedDapc}
pending:
  description: The attributes pending for the next boot, after this task (in check mode, as predicted).
  returned: success
  type: dict
  sample: {SriovGlobalEnable: Enabled}
settings_uri:
  description: Where pending settings are PATCHed.
  returned: success
  type: str
  sample: /redfish/v1/Systems/System.Embedded.1/Bios/Settings
reboot_required:
  description: Whether settings are pending, so that a reboot is needed to apply them.
  returned: success
  type: bool
actions:
  description: The PATCH sent, or planned in check mode; empty when nothing was to be done.
  returned: success
  type: list
  elements: str
system:
  description: The C(Id) of the ComputerSystem.
  returned: success
  type: str
vendor:
  description: The adapter that matched the service.
  returned: success
  type: str
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._base import run_module
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.argspec import REDFISH_ARGSPEC
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.settings import run_bios


def main():
    argument_spec = dict(
        attributes=dict(type="dict"),
    )
    run_module(argument_spec, run_bios, shared=(REDFISH_ARGSPEC,))


if __name__ == "__main__":
    main()
