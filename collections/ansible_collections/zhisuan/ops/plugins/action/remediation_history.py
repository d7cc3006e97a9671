# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.zhisuan.ops.plugins.module_utils._remediate import history


class ActionModule(ActionBase):
    """Append remediation records to the history file on the controller (one JSON object per line)."""

    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("dir", "records"))

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        dummy, args = self.validate_argument_spec(argument_spec=dict(
            dir=dict(type="path", required=True),
            records=dict(type="list", elements="dict", required=True),
        ))
        try:
            records = [history.make_record(raw) for raw in args["records"]]
        except history.HistoryError as exc:
            raise AnsibleActionFail("zhisuan.ops.remediation_history: %s" % exc)
        if self._task.check_mode:
            result.update(changed=False, path=None, records=records)
            return result
        try:
            path = history.append(args["dir"], records)
        except (IOError, OSError) as exc:
            raise AnsibleActionFail("zhisuan.ops.remediation_history: cannot append to %s: %s" % (args["dir"], exc))
        result.update(changed=bool(records), path=path, records=records)
        return result
