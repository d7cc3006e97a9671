#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: redfish_firmware_info
short_description: The firmware inventory of a server's BMC over Redfish, each item classified by component
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Reads the C(UpdateService/FirmwareInventory) of the BMC and returns each item with its version and the component
    it belongs to, for the C(baseline) rules (BIOS, BMC, CPLD, GPU, NIC firmware against the site baseline).
  - The component is decided from the words of the item's C(Id) and C(Name); root-of-trust, NVSwitch, PCIe switch,
    retimer, FPGA, TPM and CPU firmware count as V(other).
  - "Vendor adapters shape the list: on Dell iDRAC only the installed images are listed (not the C(Previous-)
    rollback image, nor the C(Current-) item that repeats the installed one); on NVIDIA GB200 the C(GB200Nvl-) prefix
    of the BMC version is dropped."
extends_documentation_fragment:
  - zhisuan.ops._redfish
  - zhisuan.ops._attributes
  - zhisuan.ops._attributes.info_module
  - zhisuan.ops._redfish.actiongroup_redfish
seealso:
  - module: zhisuan.ops.redfish_info
"""

EXAMPLES = r"""
- name: Read the firmware inventory
  zhisuan.ops.redfish_firmware_info:
    bmc_address: "{{ bmc_address }}"
    bmc_username: "{{ bmc_username }}"
    bmc_password: "{{ bmc_password }}"
  delegate_to: localhost
  register: fw

- name: Show the BIOS and BMC versions
  ansible.builtin.debug:
    msg: "{{ fw.firmware | selectattr('component', 'in', ['bios', 'bmc']) | map(attribute='version') | list }}"
"""

RETURN = r"""
firmware:
  description:
    - Each firmware item, in the order the BMC lists them; V(null) when the BMC has no readable firmware inventory.
  returned: success
  type: list
  elements: dict
  contains:
    id:
      description: The item's C(Id).
      type: str
      sample: HostBIOS_0
    name:
      description: The item's C(Name).
      type: str
    version:
      description: The version.
      type: str
      sample: "01.01.03"
    component:
      description: One of V(bios), V(bmc), V(cpld), V(gpu), V(nic), V(psu), V(drive), V(other).
      type: str
      sample: bios
    updateable:
      description: Whether the BMC can update it (V(null) when it does not say).
      type: bool
vendor:
  description: The adapter that matched the service.
  returned: success
  type: str
  sample: dell
errors:
  description: The resources that could not be read, C(resource) and C(error).
  returned: success
  type: list
  elements: dict
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._base import run_module
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.argspec import REDFISH_ARGSPEC
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.inventory import run_firmware_info


def main():
    run_module({}, run_firmware_info, shared=(REDFISH_ARGSPEC,))


if __name__ == "__main__":
    main()
