# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this doc fragment is not part of the collection's public API and may change without notice.

from __future__ import annotations


class ModuleDocFragment(object):

    # Mirrors IPMI_ARGSPEC in plugins/module_utils/_ipmi/argv.py.
    DOCUMENTATION = r"""
options:
  bmc_address:
    description:
      - Address (IP or name) of the BMC's LAN interface. The delivery roles pass the host var C(bmc_address).
    type: str
    required: true
  bmc_port:
    description:
      - UDP port of the BMC's RMCP/RMCP+ service.
    type: int
    default: 623
  bmc_username:
    description:
      - BMC user name. Omitted, ipmitool logs in as the anonymous (null) user.
    type: str
  bmc_password:
    description:
      - Password of O(bmc_username). It is given to ipmitool in the E(IPMI_PASSWORD) environment variable
        (C(ipmitool -E)), never on its command line, and never appears in the task's result.
      - IPMI 2.0 passwords are at most 20 bytes.
      - If not set, the environment variable E(ZHISUAN_BMC_PASSWORD) is used.
    type: str
  interface:
    description:
      - ipmitool's LAN interface, V(lanplus) (IPMI 2.0 RMCP+) or V(lan) (IPMI 1.5).
    type: str
    default: lanplus
    choices: [lanplus, lan]
  cipher_suite:
    description:
      - RMCP+ cipher suite (C(ipmitool -C)), for O(interface=lanplus).
      - Suite 3 (HMAC-SHA1, AES-CBC-128) is the one BMCs accept. Without it ipmitool 1.8.19 first asks the BMC for
        its cipher suites, which some BMCs do not answer, and each call then takes 10 s longer.
    type: int
    default: 3
  ipmitool_path:
    description:
      - The C(ipmitool) program, a name looked up in PATH or an absolute path. The roles pass C(zhisuan_tools.ipmitool).
    type: str
    default: ipmitool
  timeout:
    description:
      - Seconds each ipmitool call may run. On expiry its process group is killed and the task fails with
        C(error_kind=timed_out).
      - A BMC that does not answer at all makes ipmitool retry for about 20 s before it gives up; the task then
        fails with C(error_kind=unreachable), after O(timeout) seconds if that is shorter.
    type: int
    default: 60
notes:
  - ipmitool runs on the host the task runs on (usually C(delegate_to=localhost)), without a shell, with C(LANG=C),
    C(LC_ALL=C) and C(TZ=UTC).
  - On failure the task returns C(error_kind), C(tool) (C(ipmitool)), C(msg) and, for a program that ran, C(cmd),
    C(rc), C(stdout), C(stderr). C(error_kind) is C(auth_failed) when the BMC refuses the login (the message names
    the user), C(unreachable) when it does not answer, C(bmc_error) when no session could be opened for another
    reason, C(timed_out) when a later call runs out of time, C(failed) when the BMC refuses a command, C(not_found)
    when ipmitool is missing and C(unparsable) when its output cannot be read.
requirements:
  - ipmitool (Debian/Ubuntu package C(ipmitool)) on the host the task runs on.
"""

    ACTIONGROUP = r"""
options: {}
attributes:
  action_group:
    description: Use C(group/zhisuan.ops.ipmi) in C(module_defaults) to set defaults for this module.
    support: full
    membership:
      - zhisuan.ops.ipmi
"""
