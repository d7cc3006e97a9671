# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The record is never lost: writes a partial results.json (and the report) when a run stops before its record.

Loaded by Ansible for every playbook of this directory (a callback beside the playbooks needs no configuration).
It only listens; the logic is the collection's (plugin_utils/_run_record.py).
"""

from __future__ import annotations

import atexit
import signal

from ansible.plugins.callback import CallbackBase
from ansible.release import __version__ as ansible_version

from ansible_collections.zhisuan.ops.plugins.plugin_utils._run_record import (
    PLAN_ACTIONS,
    REPORT_ACTIONS,
    RESULTS_ACTIONS,
    RunRecorder,
    stop_on_signals,
)

DOCUMENTATION = r"""
name: zhisuan_run_record
type: aggregate
short_description: Write a partial results.json and report when a zhisuan.ops run stops before its record
description:
  - Mirrors the results role's facts in the controller's main process; when the run ends or is interrupted before
    zhisuan.ops.results wrote the record, writes results.json marked partial from what was judged, and the report.
  - SIGTERM (AWX's cancel, a job timeout, a container stop) and SIGHUP stop the run the way Ctrl-C does (its
    workers and their node-side tools stopped, the partial record and report written); it exits 143 or 129.
"""


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "zhisuan_run_record"
    CALLBACK_NEEDS_ENABLED = False

    def __init__(self, *args, **kwargs):
        super(CallbackModule, self).__init__(*args, **kwargs)
        self._recorder = RunRecorder(ansible_version=ansible_version, warn=self._display.warning)
        self._interrupted = None
        atexit.register(self._at_exit)
        previous = signal.getsignal(signal.SIGINT)

        def on_sigint(signum, frame):
            self._interrupted = self._interrupted or "the run was interrupted (SIGINT) before its record was written"
            if callable(previous):
                return previous(signum, frame)
            raise KeyboardInterrupt()

        signal.signal(signal.SIGINT, on_sigint)

        def on_stop(signum):
            self._interrupted = ("the run was stopped (%s: a cancel, a timeout or a hang-up) before its record was "
                                 "written" % signal.Signals(signum).name)

        # SIGTERM and SIGHUP take the SIGINT road above (workers stopped, the run unwound, the record written at
        # exit); the run exits 128 + the signal's number
        stop_on_signals(on_stop)

    def v2_runner_on_ok(self, result):
        action = getattr(result._task, "resolved_action", None) or result._task.action
        facts = result._result.get("ansible_facts")
        if facts:
            self._recorder.observe_facts(result._host.get_name(), facts)
        if action in RESULTS_ACTIONS and result._result.get("path"):
            self._recorder.observe_written(result._result["path"])
        elif action in REPORT_ACTIONS:
            self._recorder.observe_reported()
        elif action in PLAN_ACTIONS:
            self._recorder.observe_leases(result._result.get("leases"))

    def v2_playbook_on_stats(self, stats):
        self._recorder.finish("the run ended before its record was written (every node failed, was unreachable "
                              "or the play stopped)")

    def _at_exit(self):
        if self._recorder.pending or (self._recorder.written and not self._recorder.reported):
            self._recorder.finish(self._interrupted or "the run stopped before its record was written")
        self._recorder.release_leases(self._interrupted or "the run ended")
