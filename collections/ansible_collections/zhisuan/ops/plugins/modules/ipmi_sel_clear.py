#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: ipmi_sel_clear
short_description: Clear the System Event Log of a BMC over IPMI
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Counts the SEL's entries with C(ipmitool sel info) and clears it with C(ipmitool sel clear) when it holds any, so
    that a later C(bmc) check sees only what happened since (after a repair, or at hand-over).
  - Idempotent. An empty SEL is not cleared; neither is one whose only entries are the record many BMCs log right
    after a clear (C(Event Logging Disabled … | Log area reset/cleared | Asserted)), so a second run changes nothing.
  - Clearing cannot be undone. Read the entries first with M(zhisuan.ops.ipmi_info) (its C(log)) when they matter.
extends_documentation_fragment:
  - zhisuan.ops._ipmi
  - zhisuan.ops._ipmi.actiongroup
  - zhisuan.ops._attributes
attributes:
  check_mode:
    support: full
    details:
      - Counts the entries and returns whether C(sel clear) would run; sends nothing else.
  diff_mode:
    support: full
    details:
      - Shows the number of entries before and after (V(0) when the SEL is cleared).
options: {}
notes:
  - C(ipmitool sel clear) asks the BMC to erase the SEL; some BMCs take a few seconds to finish, and most log the
    I(Log area reset/cleared) record when they have.
  - O(timeout) applies to each ipmitool call.
seealso:
  - module: zhisuan.ops.ipmi_info
  - module: zhisuan.ops.redfish_log_clear
"""

EXAMPLES = r"""
- name: Clear the SEL of a node after its failed PSU was replaced
  zhisuan.ops.ipmi_sel_clear:
    bmc_address: "{{ bmc_address }}"
    bmc_username: "{{ bmc_username }}"
    bmc_password: "{{ bmc_password }}"
  delegate_to: localhost

- name: How many entries would be cleared, without clearing
  zhisuan.ops.ipmi_sel_clear:
    bmc_address: "{{ bmc_address }}"
    bmc_username: "{{ bmc_username }}"
    bmc_password: "{{ bmc_password }}"
  check_mode: true
  delegate_to: localhost
  register: sel_clear
"""

RETURN = r"""
entries_before:
  description: The number of SEL entries C(sel info) reported before the task.
  returned: success
  type: int
  sample: 12
actions:
  description: The ipmitool commands sent (in check mode, that would be sent); empty when the SEL was clear.
  returned: success
  type: list
  elements: str
  sample: ["sel clear"]
diff:
  description: C(before) and C(after), each C({entries}).
  returned: success
  type: dict
msg:
  description: What was done, or why nothing was.
  returned: success
  type: str
  sample: "ran sel clear (12 entries before)"
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._base import run_module
from ansible_collections.zhisuan.ops.plugins.module_utils._ipmi.argv import IPMI_ARGSPEC
from ansible_collections.zhisuan.ops.plugins.module_utils._ipmi.sel_clear import clear_sel


def main():
    run_module({}, clear_sel, shared=(IPMI_ARGSPEC,))


if __name__ == "__main__":
    main()
