# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: run_summary
type: aggregate
short_description: Print the run's verdict and where its report and results were written, at the very end of a run
description:
  - "After the play recap of every playbook run, prints one verdict line (for example
    C(ZHISUAN VERDICT: NOT ACCEPTED (fail): 1 host fail, 1 host unreachable; 7 open issues)) and the path of each
    report file that M(zhisuan.ops.report) wrote, and of the C(results.json) that M(zhisuan.ops.results) wrote."
  - It only listens; it works next to any stdout callback (default, yaml, minimal, json, AWX's), since an aggregate
    callback is called after the stdout callback's own recap.
  - Prints nothing in a run that neither recorded results nor rendered a report.
  - Enable it in C(ansible.cfg) with C(callbacks_enabled = zhisuan.ops.run_summary) (this project's C(ansible.cfg)
    does), or with the environment variable C(ANSIBLE_CALLBACKS_ENABLED).
author:
  - zhisuan.ops contributors (@zhisuan-ops)
requirements:
  - enable in configuration (C(callbacks_enabled))
"""

from ansible import constants as C
from ansible.plugins.callback import CallbackBase

REPORT_ACTIONS = ("zhisuan.ops.report", "report")
RESULTS_ACTIONS = ("zhisuan.ops.results", "results")
COLOURS = {"pass": C.COLOR_OK, "conditional": C.COLOR_WARN, "fail": C.COLOR_ERROR}


def _action(result):
    task = result._task
    return getattr(task, "resolved_action", None) or task.action


class CallbackModule(CallbackBase):
    """Collects the report action's verdict and paths and the results action's path; prints them after the recap."""

    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "zhisuan.ops.run_summary"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super().__init__()
        self.reports = []
        self.results_paths = []

    def v2_runner_on_ok(self, result):
        action = _action(result)
        data = result._result
        if action in REPORT_ACTIONS and isinstance(data.get("paths"), dict):
            entry = {"paths": data["paths"], "verdict": data.get("verdict"), "text": data.get("verdict_text"),
                     "detail": data.get("verdict_detail"), "summary": data.get("summary") or {}}
            if entry not in self.reports:
                self.reports.append(entry)
        elif action in RESULTS_ACTIONS and data.get("path") and data["path"] not in self.results_paths:
            self.results_paths.append(data["path"])

    def lines(self):
        """The lines printed at the end: (text, colour)."""
        out = []
        for report in self.reports:
            summary = report["summary"]
            grade = summary.get("grade") or ("pass" if report["verdict"] == "accepted" else "fail")
            text = report["text"] or str(report["verdict"] or "").replace("_", " ").upper()
            detail = report["detail"]
            issues = summary.get("open_issues")
            words = "ZHISUAN VERDICT: %s (%s)" % (text, grade)
            if detail:
                words += ": %s" % detail
            if issues is not None:
                words += "; %d open issue%s" % (issues, "" if issues == 1 else "s")
            out.append((words, COLOURS.get(grade, C.COLOR_ERROR)))
            for fmt, path in sorted(report["paths"].items()):
                out.append(("  %-9s %s" % (fmt + ":", path), None))
        for path in self.results_paths:
            out.append(("  %-9s %s" % ("results:", path), None))
        return out

    def v2_playbook_on_stats(self, stats):
        lines = self.lines()
        if not lines:
            return
        self._display.display("")
        for text, colour in lines:
            self._display.display(text, color=colour)
