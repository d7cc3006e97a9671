#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: redfish_power
short_description: Power a server on or off, restart or power cycle it through its BMC over Redfish, and wait
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Brings the host's ComputerSystem to O(state) with C(ComputerSystem.Reset) and waits until the BMC reports the
    resulting C(PowerState).
  - Idempotent for V(on), V(graceful_off) and V(force_off), which do nothing when the system is already there (also
    while it is powering on or off). A restart or power cycle always acts; when the system is Off it powers it on.
  - V(power_cycle) is the C(PowerCycle) reset where the BMC offers it, else a C(ForceOff), a wait for Off, and an
    C(On). Where the BMC does not list the reset types it accepts, the vendor adapter decides (Dell iDRAC does
    C(PowerCycle); others the two-step form).
  - A reset answered with C(202 Accepted) is followed through its task monitor before the wait.
extends_documentation_fragment:
  - zhisuan.ops._redfish
  - zhisuan.ops._attributes
  - zhisuan.ops._redfish.actiongroup_redfish
attributes:
  check_mode:
    support: full
    details:
      - Reads the power state, plans the resets and returns them in RV(actions) with C(changed); sends nothing.
  diff_mode:
    support: full
    details:
      - Shows the C(PowerState) before and after (in check mode, the one predicted).
options:
  state:
    description:
      - V(on) powers the system on; V(graceful_off) asks the OS to shut down (C(GracefulShutdown)); V(force_off) cuts
        power (C(ForceOff)).
      - V(graceful_restart) asks the OS to restart; V(force_restart) resets at once; V(power_cycle) turns power off
        and on again.
    type: str
    required: true
    choices: ["on", graceful_off, force_off, graceful_restart, force_restart, power_cycle]
  wait:
    description:
      - Wait until the BMC reports the resulting C(PowerState) (V(Off) for the offs, V(On) otherwise). For a
        restart the BMC may report V(On) at once.
      - Between the two steps of a two-step power cycle the module always waits for V(Off).
    type: bool
    default: true
  wait_timeout:
    description: Seconds to wait for the power state (and for a task the BMC runs the reset in).
    type: int
    default: 300
  poll_interval:
    description: Seconds between two reads of the power state while waiting.
    type: float
    default: 5
notes:
  - V(graceful_off) and V(graceful_restart) depend on the OS answering the ACPI request; use O(wait_timeout) to bound
    the wait and V(force_off) when it does not.
seealso:
  - module: zhisuan.ops.redfish_info
"""

EXAMPLES = r"""
- name: Power cycle a node whose GPU fell off the bus (XID 79), and wait for it to be On again
  zhisuan.ops.redfish_power:
    bmc_address: "{{ bmc_address }}"
    bmc_username: "{{ bmc_username }}"
    bmc_password: "{{ bmc_password }}"
    state: power_cycle
  delegate_to: localhost

- name: Make sure every node of a new rack is powered on
  zhisuan.ops.redfish_power:
    bmc_address: "{{ bmc_address }}"
    bmc_username: "{{ bmc_username }}"
    bmc_password: "{{ bmc_password }}"
    state: "on"
    wait_timeout: 600
  delegate_to: localhost
  register: power

- name: Show what would be sent, without sending it
  zhisuan.ops.redfish_power:
    bmc_address: "{{ bmc_address }}"
    bmc_username: "{{ bmc_username }}"
    bmc_password: "{{ bmc_password }}"
    state: force_off
  check_mode: true
  delegate_to: localhost
"""

RETURN = r"""
before:
  description: The power state read first.
  returned: success
  type: dict
  sample: {power_state: "On"}
after:
  description: The power state read last (in check mode, or without a change, the one predicted or read first).
  returned: success
  type: dict
  sample: {power_state: "Off"}
actions:
  description: The requests sent, or planned in check mode, in order; empty when nothing was to be done.
  returned: success
  type: list
  elements: str
  sample: ['POST /redfish/v1/Systems/437XR1138R2/Actions/ComputerSystem.Reset {"ResetType": "ForceOff"}']
system:
  description: The C(Id) of the ComputerSystem acted on.
  returned: success
  type: str
  sample: System.Embedded.1
vendor:
  description: The adapter that matched the service.
  returned: success
  type: str
errors:
  description: Resources that could not be read and were passed over (such as a missing C(ResetActionInfo)).
  returned: success
  type: list
  elements: dict
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._base import run_module
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.argspec import REDFISH_ARGSPEC
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.power import STATES, run


def main():
    argument_spec = dict(
        state=dict(type="str", required=True, choices=list(STATES)),
        wait=dict(type="bool", default=True),
        wait_timeout=dict(type="int", default=300),
        poll_interval=dict(type="float", default=5),
    )
    run_module(argument_spec, run, shared=(REDFISH_ARGSPEC,))


if __name__ == "__main__":
    main()
