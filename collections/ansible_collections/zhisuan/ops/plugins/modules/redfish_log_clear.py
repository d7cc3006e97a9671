#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: redfish_log_clear
short_description: Clear the System Event Log and the vendor event logs of a BMC over Redfish
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Counts the entries of the BMC's log services and POSTs the C(LogService.ClearLog) action of each one that holds
    entries, so that a later C(bmc) check sees only what happened since (after a repair, or at hand-over).
  - Which services hold the SEL and the vendor's event logs differs by vendor, as for M(zhisuan.ops.redfish_log_info)
    (on DGX H100 the SEL is under the manager, on GB200 the GPU and CPU events are in the HGX baseboard's
    C(EventLog), on Dell the Lifecycle log C(Lclog) sits beside the C(Sel)).
  - Idempotent. A log with no entries is not cleared; neither is one whose only entries are the record the BMC writes
    when its log is cleared (the IPMI event I(Log area reset/cleared)), so a second run changes nothing.
  - A log service without a C(LogService.ClearLog) action is left as it is and listed in RV(skipped), with a
    warning when it holds entries. The task fails when the BMC has no log service at all for O(log_services).
  - Clearing cannot be undone. Read the entries first with M(zhisuan.ops.redfish_log_info) when they matter.
extends_documentation_fragment:
  - zhisuan.ops._redfish
  - zhisuan.ops._attributes
  - zhisuan.ops._redfish.actiongroup_redfish
attributes:
  check_mode:
    support: full
    details:
      - Counts the entries and returns the logs that would be cleared in RV(cleared) and the requests in RV(actions),
        with C(changed); sends nothing.
  diff_mode:
    support: full
    details:
      - Shows the entry count of each log service before and after (V(0) for the logs cleared).
options:
  log_services:
    description:
      - V(sel), the System Event Log only (without a service of type SEL, the system's own logs).
      - V(events), the SEL and the vendor's event logs.
      - V(all), every log service of every manager and system, except diagnostic dump services.
    type: str
    choices: [sel, events, all]
    default: sel
  wait_timeout:
    description: Seconds to wait for a clear that the BMC runs as a task (it answers C(202 Accepted)).
    type: int
    default: 300
seealso:
  - module: zhisuan.ops.redfish_log_info
  - module: zhisuan.ops.ipmi_sel_clear
"""

EXAMPLES = r"""
- name: Keep the SEL for the record, then clear it at hand-over
  zhisuan.ops.redfish_log_info:
    bmc_address: "{{ bmc_address }}"
    bmc_username: "{{ bmc_username }}"
    bmc_password: "{{ bmc_password }}"
    log_services: sel
  delegate_to: localhost
  register: sel_before

- name: Clear the SEL
  zhisuan.ops.redfish_log_clear:
    bmc_address: "{{ bmc_address }}"
    bmc_username: "{{ bmc_username }}"
    bmc_password: "{{ bmc_password }}"
  delegate_to: localhost
  register: cleared

- name: Show what would be cleared of the SEL and the vendor event logs, without clearing
  zhisuan.ops.redfish_log_clear:
    bmc_address: "{{ bmc_address }}"
    bmc_username: "{{ bmc_username }}"
    bmc_password: "{{ bmc_password }}"
    log_services: events
  check_mode: true
  delegate_to: localhost
"""

RETURN = r"""
cleared:
  description: The log services cleared (in check mode, that would be cleared), by URI; empty when every log was clear.
  returned: success
  type: list
  elements: str
  sample: ["/redfish/v1/Managers/BMC/LogServices/SEL"]
entries_before:
  description:
    - Each log service looked at (URI) and the number of entries it held before; V(null) when its entries could not
      be read (such a log is cleared all the same).
  returned: success
  type: dict
  sample: {"/redfish/v1/Managers/BMC/LogServices/SEL": 75}
skipped:
  description: The log services that offer no C(LogService.ClearLog) action, C(service) and C(reason).
  returned: success
  type: list
  elements: dict
actions:
  description: The requests sent, or planned in check mode, in order.
  returned: success
  type: list
  elements: str
  sample: ["POST /redfish/v1/Managers/BMC/LogServices/SEL/Actions/LogService.ClearLog {}"]
vendor:
  description: The adapter that matched the service.
  returned: success
  type: str
  sample: nvidia
errors:
  description: The resources that could not be read, C(resource) and C(error).
  returned: success
  type: list
  elements: dict
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._base import run_module
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.argspec import REDFISH_ARGSPEC
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.logs import CHOICES, run_clear


def main():
    argument_spec = dict(
        log_services=dict(type="str", choices=list(CHOICES), default="sel"),
        wait_timeout=dict(type="int", default=300),
    )
    run_module(argument_spec, run_clear, shared=(REDFISH_ARGSPEC,))


if __name__ == "__main__":
    main()
