# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

from ansible.plugins.action import ActionBase

from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import failed_task_check

ARGUMENT_SPEC = dict(
    task=dict(type="str", default=""),
    action=dict(type="str", default=""),
    result=dict(type="dict", default={}),
    family=dict(type="str", default="run"),
)


class ActionModule(ActionBase):
    """Turn a task that failed unexpectedly (a rescue's ansible_failed_task/_result) into the node's error check."""

    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(ARGUMENT_SPEC)
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        dummy, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        host = task_vars.get("inventory_hostname", "unknown")
        check = failed_task_check(host, args["task"], args["action"], args["result"], family=args["family"])
        result.update(changed=False, checks=[check])
        return result
