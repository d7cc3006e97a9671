# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import os
import tempfile
import time

from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

from ansible_collections.zhisuan.ops.plugins.plugin_utils._job_wait import ProgressBoard, progress_line, verdict

display = Display()

ARGUMENT_SPEC = dict(
    jid=dict(type="str", required=True),
    timeout=dict(type="int", required=True),
    poll=dict(type="int", default=10),
    progress_s=dict(type="int", default=60),
    what=dict(type="str", default="the job"),
)


class ActionModule(ActionBase):
    """Wait for an async job of the node without a retry line per poll: one progress line a minute for all the nodes
    this task waits on (docs in plugins/modules/job_wait.py)."""

    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(ARGUMENT_SPEC)
    _supports_check_mode = False

    def _status(self, jid, mode, task_vars):
        async_dir = self._remote_expand_user(self.get_shell_option("async_dir", default="~/.ansible_async"))
        return self._execute_module(module_name="ansible.legacy.async_status", task_vars=task_vars,
                                    module_args={"jid": jid, "mode": mode, "_async_dir": async_dir})

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        dummy, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        for key in ("timeout", "poll", "progress_s"):
            if args[key] <= 0:
                result.update(failed=True, error_kind="option", tool="job_wait",
                              msg="job_wait: %s must be a positive number of seconds, got %s" % (key, args[key]))
                return result
        host = task_vars.get("inventory_hostname", "unknown")
        # one board per run and task: the workers of this task are forks of the same ansible-playbook process
        board = ProgressBoard(os.path.join(tempfile.gettempdir(), "zhisuan-job-wait-%d-%s" % (
            os.getppid(), getattr(self._task, "_uuid", "task"))), host)
        started = time.monotonic()
        board.join()
        try:
            while True:
                status = self._status(args["jid"], "status", task_vars)
                waited = time.monotonic() - started
                end = verdict(status, args["what"], host, args["jid"], waited, args["timeout"])
                if end is not None and end[0] == "done":
                    break
                if end is not None:
                    result.update(end[1])
                    return result
                if board.due(args["progress_s"]):
                    display.display(progress_line(args["what"], board.waiting(), waited))
                time.sleep(min(args["poll"], max(args["timeout"] - waited, 0.1)))
        finally:
            board.leave()
        status.pop("invocation", None)
        result.update(status)
        result["finished"] = bool(status.get("finished"))
        result["waited_s"] = round(waited, 1)
        result.setdefault("changed", False)
        try:
            self._status(args["jid"], "cleanup", task_vars)
        except Exception:  # pylint: disable=broad-except
            # the job's result is in hand; a leftover job file on the node is harmless
            pass
        return result
