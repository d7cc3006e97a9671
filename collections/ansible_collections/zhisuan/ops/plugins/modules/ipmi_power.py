#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: ipmi_power
short_description: Power a server on, off, reset or cycle it through its BMC over IPMI, and wait for the state
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Reads the chassis power state with C(ipmitool chassis power status), sends C(ipmitool chassis power <verb>)
    when the state asks for it, and waits until the BMC reports the power state the action ends in.
  - O(state=on), O(state=off) and O(state=soft_off) are idempotent. O(state=reset) and O(state=cycle) always act,
    and fail without acting when the chassis is off (they need it on; use O(state=on)).
extends_documentation_fragment:
  - zhisuan.ops._ipmi
  - zhisuan.ops._ipmi.actiongroup
  - zhisuan.ops._attributes
attributes:
  check_mode:
    support: full
    details:
      - Reads the power state and returns what would be sent and the state it would end in; sends nothing.
  diff_mode:
    support: full
    details:
      - Shows the power state before and after (predicted in check mode).
options:
  state:
    description:
      - V(on) powers the chassis up (C(chassis power on)).
      - V(soft_off) asks the operating system to shut down (ACPI, C(chassis power soft)); the power goes off when
        it has. Raise O(wait_timeout) for hosts that take long to shut down.
      - V(off) cuts the power at once (C(chassis power off)).
      - V(reset) is a hard reset (C(chassis power reset)); the power stays on.
      - V(cycle) powers the chassis off and on again (C(chassis power cycle)).
    type: str
    required: true
    choices: ["on", soft_off, "off", reset, cycle]
  wait:
    description:
      - Wait until C(chassis power status) reports the state the action ends in (V(On) for on, reset and cycle,
        V(Off) for off and soft_off).
    type: bool
    default: true
  wait_timeout:
    description:
      - Seconds to wait for that state before the task fails with C(error_kind=timed_out).
    type: int
    default: 300
seealso:
  - module: zhisuan.ops.ipmi_info
notes:
  - O(timeout) applies to each ipmitool call; the status is polled every half second while waiting.
  - ipmi_sim and many BMCs answer C(chassis power cycle) on a chassis that is off by powering it on; this module
    refuses instead, so a node that was switched off on purpose stays off.
"""

EXAMPLES = r"""
- name: Power cycle a node through its BMC (the remedy power_cycle)
  zhisuan.ops.ipmi_power:
    bmc_address: "{{ bmc_address }}"
    bmc_username: "{{ bmc_username }}"
    bmc_password: "{{ bmc_password }}"
    state: cycle
  delegate_to: localhost

- name: Make sure every node is powered on before the delivery checks
  zhisuan.ops.ipmi_power:
    bmc_address: "{{ bmc_address }}"
    bmc_username: "{{ bmc_username }}"
    bmc_password: "{{ bmc_password }}"
    state: "on"
  delegate_to: localhost

- name: Shut a node down gracefully, waiting up to ten minutes
  zhisuan.ops.ipmi_power:
    bmc_address: "{{ bmc_address }}"
    bmc_username: "{{ bmc_username }}"
    bmc_password: "{{ bmc_password }}"
    state: soft_off
    wait_timeout: 600
  delegate_to: localhost
"""

RETURN = r"""
power_state:
  description:
    - The chassis power state after the task, V(On) or V(Off) (in check mode, the state it would end in).
    - V(null) when the task did not wait (O(wait=false)).
  returned: success
  type: str
  sample: "On"
actions:
  description: The ipmitool commands sent (in check mode, that would be sent).
  returned: always
  type: list
  elements: str
  sample: ["chassis power cycle"]
transitions:
  description: The power states read while waiting, in order (changes only), e.g. V([Off, On]) for a cycle.
  returned: success
  type: list
  elements: str
  sample: ["Off", "On"]
diff:
  description: C(before) and C(after), each C({power_state}).
  returned: success
  type: dict
msg:
  description: What was done, or why nothing was.
  returned: always
  type: str
  sample: "ran chassis power cycle; the chassis power is on"
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._base import run_module
from ansible_collections.zhisuan.ops.plugins.module_utils._ipmi.argv import IPMI_ARGSPEC
from ansible_collections.zhisuan.ops.plugins.module_utils._ipmi.power import set_power


def main():
    argument_spec = dict(
        state=dict(type="str", required=True, choices=["on", "soft_off", "off", "reset", "cycle"]),
        wait=dict(type="bool", default=True),
        wait_timeout=dict(type="int", default=300),
    )
    run_module(argument_spec, set_power, shared=(IPMI_ARGSPEC,))


if __name__ == "__main__":
    main()
