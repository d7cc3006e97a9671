#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: redfish_boot
short_description: Set the boot source override of a server (PXE once, BIOS setup, ...) over Redfish
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Sets C(Boot.BootSourceOverrideTarget), C(BootSourceOverrideEnabled) and, if given, C(BootSourceOverrideMode) of
    the host's ComputerSystem, only when they differ. It does not reboot.
  - A target the BMC does not list in C(BootSourceOverrideTarget@Redfish.AllowableValues) fails the task.
  - On NVIDIA systems the override is PATCHed to the system's settings object (C(Systems/DGX/SD),
    C(Systems/System_0/Settings)), where it is staged (RV(staged)); the values staged there count as current.
extends_documentation_fragment:
  - zhisuan.ops._redfish
  - zhisuan.ops._attributes
  - zhisuan.ops._redfish.actiongroup_redfish
attributes:
  check_mode:
    support: full
    details:
      - Reads the override, plans the PATCH and returns it in RV(actions) with C(changed); sends nothing.
  diff_mode:
    support: full
    details:
      - Shows the override before and after.
options:
  target:
    description:
      - The boot source, a Redfish C(BootSourceOverrideTarget) value such as V(Pxe), V(Hdd), V(Cd), V(Usb),
        V(BiosSetup), V(UefiHttp) or V(None).
      - Required unless O(enabled=Disabled).
    type: str
  enabled:
    description:
      - V(Once) for the next boot only, V(Continuous) for every boot, V(Disabled) to remove the override.
    type: str
    choices: [Once, Continuous, Disabled]
    default: Once
  mode:
    description: The boot mode for the override, V(UEFI) or V(Legacy); left as it is when not given.
    type: str
    choices: [UEFI, Legacy]
seealso:
  - module: zhisuan.ops.redfish_power
"""

EXAMPLES = r"""
- name: PXE boot once (reinstall), then power cycle
  zhisuan.ops.redfish_boot:
    bmc_address: "{{ bmc_address }}"
    bmc_username: "{{ bmc_username }}"
    bmc_password: "{{ bmc_password }}"
    target: Pxe
    enabled: Once
  delegate_to: localhost

- name: Remove any boot override
  zhisuan.ops.redfish_boot:
    bmc_address: "{{ bmc_address }}"
    bmc_username: "{{ bmc_username }}"
    bmc_password: "{{ bmc_password }}"
    enabled: Disabled
  delegate_to: localhost
"""

RETURN = r"""
boot:
  description: The override after the task (in check mode, as predicted), C(target), C(enabled), C(mode).
  returned: success
  type: dict
  sample: {target: Pxe, enabled: Once, mode: UEFI}
staged:
  description: Whether the override goes to a settings object rather than the system itself.
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
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.settings import run_boot


def main():
    argument_spec = dict(
        target=dict(type="str"),
        enabled=dict(type="str", choices=["Once", "Continuous", "Disabled"], default="Once"),
        mode=dict(type="str", choices=["UEFI", "Legacy"]),
    )
    run_module(argument_spec, run_boot, shared=(REDFISH_ARGSPEC,))


if __name__ == "__main__":
    main()
