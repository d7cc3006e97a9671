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
notes:
  - Programs run with C(LANG=C) and C(LC_ALL=C), without a shell.
  - On failure the task returns C(error_kind) (C(not_found), C(timed_out), C(failed) or C(unparsable)), C(tool) and
    C(msg); for a program that ran, also C(cmd), C(rc), C(stdout) and C(stderr).
"""
