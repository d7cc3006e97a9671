# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this doc fragment is not part of the collection's public API and may change without notice.

from __future__ import annotations


class ModuleDocFragment(object):

    # Mirrors TOOL_ARGSPEC in plugins/module_utils/_base.py.
    DOCUMENTATION = r"""
options:
  timeout:
    description:
      - Seconds the external program may run. On expiry its whole process group is killed and the task fails with
        C(error_kind=timed_out); the acceptance roles record that as a check with status C(error).
    type: int
    default: 60
  max_output:
    description:
      - MiB the external program may print, stdout and stderr together, before its whole process group is killed and
        the task fails with C(error_kind=output_too_large) (a message "output over N MiB" naming the program); the
        roles record that as a check with status C(error). What a program prints is held in the module's memory
        until it ends, so a looping tool or a kernel-log storm stops here, not at the timeout.
      - Unset, each program has its own cap (C(ethtool) 4, C(nvidia-smi) 64, C(journalctl) 64, C(dmesg) 32, most others
        32; the table is in the collection's docs/gpu-facts.md). A value applies to every program the task runs.
      - A kernel log that M(zhisuan.ops.xid_info) reads is streamed and filtered on the node; there the cap bounds one
        line, not the log.
      - The roles take it from C(check_<role>_max_output), else from the inventory's C(zhisuan_tool_max_output),
        keyed like C(zhisuan_tools) by the program's name (C(nvidia_smi), C(journalctl), C(dcgmi), ...).
    type: int
notes:
  - Programs run with C(LANG=C) and C(LC_ALL=C), without a shell.
  - On failure the task returns C(error_kind) (C(not_found), C(timed_out), C(failed), C(unparsable) or
    C(output_too_large)), C(tool) and C(msg); for a program that ran, also C(cmd), C(rc), C(stdout) and C(stderr).
"""

    # For the modules that document their own timeout: the output cap alone (the same option as above).
    MAX_OUTPUT = r"""
options:
  max_output:
    description:
      - MiB the external program may print, stdout and stderr together, before its whole process group is killed and
        the task fails with C(error_kind=output_too_large) (a message "output over N MiB" naming the program); the
        roles record that as a check with status C(error). What a program prints is held in the module's memory
        until it ends, so a looping tool stops here, not at the timeout.
      - Unset, each program has its own cap (C(dcgmi), C(gpu_burn), C(fio) 32, C(nvbandwidth) 16; the table is in the
        collection's docs/gpu-facts.md). A value applies to every program the task runs.
    type: int
"""
