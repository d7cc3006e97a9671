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
    V(ZHISUAN VERDICT: NOT ACCEPTED (fail\\): 1 host fail, 1 host unreachable; 7 open issues)) and the path of each
    report file that M(zhisuan.ops.report) wrote, and of the C(results.json) that M(zhisuan.ops.results) wrote."
  - It only reads; it works next to any stdout callback (default, yaml, minimal, json, AWX's), since an aggregate
    callback is called after the stdout callback's own recap.
  - "It reads what M(zhisuan.ops.report) and M(zhisuan.ops.results) leave in the run's custom stats
    (C(zhisuan_run_summary_reports), C(zhisuan_run_summary_results), lists that every run of one C(ansible-playbook)
    adds to), once, at the end; it listens to no task result, so a large run costs it nothing per task."
  - "In a C(site.yml) run the site record's verdict is the one verdict line; each stage's report (delivery, burn-in,
    acceptance) is one line above it (V(acceptance run: ACCEPTED (pass\\)  <its report.html>))."
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

from ansible_collections.zhisuan.ops.plugins.plugin_utils._run_summary import run_summary

COLOURS = {"pass": C.COLOR_OK, "conditional": C.COLOR_WARN, "fail": C.COLOR_ERROR}


class CallbackModule(CallbackBase):
    """Prints the verdict and paths the report and results actions left in the run's stats, after the recap.

    It reads the run's custom stats once, at the end, and listens to no task result: Ansible copies every task result
    for each callback that does, and a node's check result holds its record of several hundred checks."""

    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "zhisuan.ops.run_summary"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super().__init__()
        self.reports = []
        self.results_paths = []

    def lines(self):
        """The lines printed at the end: (text, colour)."""
        out = []
        # site.yml: one verdict, the site record's; each stage's report is one line above it
        site = [report for report in self.reports if report.get("kind") == "site"]
        stages = [report for report in self.reports if report.get("kind") != "site"] if site else []
        for report in stages:
            grade, text = self._grade_text(report)
            paths = report.get("paths") or {}
            where = paths.get("html") or next(iter(sorted(paths.values())), "")
            out.append(("  %s run: %s (%s)  %s" % (report.get("kind") or "stage", text, grade, where), None))
        for report in site or self.reports:
            summary = report.get("summary") or {}
            grade, text = self._grade_text(report)
            detail = report.get("detail")
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

    @staticmethod
    def _grade_text(report):
        summary = report.get("summary") or {}
        grade = summary.get("grade") or ("pass" if report.get("verdict") == "accepted" else "fail")
        return grade, report.get("text") or str(report.get("verdict") or "").replace("_", " ").upper()

    def v2_playbook_on_stats(self, stats):
        self.reports, self.results_paths = run_summary(stats)
        lines = self.lines()
        if not lines:
            return
        self._display.display("")
        for text, colour in lines:
            self._display.display(text, color=colour)
