# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""What the report and results actions tell the zhisuan.ops.run_summary callback, through the run's custom stats.

An action's result may carry ``ansible_stats`` (what ``ansible.builtin.set_stats`` returns); Ansible adds it to the
run's stats, and a callback reads them once, at the end. Listening to task results instead costs every task result a
copy (Ansible copies each result for every callback that listens to results), and a node's check result holds its
record of several hundred checks.
"""

from __future__ import annotations

REPORTS = "zhisuan_run_summary_reports"
RESULTS = "zhisuan_run_summary_results"


def _stats(key, entry):
    # a list: aggregated stats of the same key add up, so every run of the ansible-playbook keeps its entry
    return {"data": {key: [entry]}, "per_host": False, "aggregate": True}


def report_stats(paths, verdict, text, detail, summary, kind=None):
    """The ``ansible_stats`` of a report: its files, verdict, the summary's grade and open issues, and the run's
    kind (the callback prints a site record's verdict alone, its stages' as lines of it)."""
    summary = dict((key, summary[key]) for key in ("grade", "open_issues") if key in (summary or {}))
    return _stats(REPORTS, {"paths": paths, "verdict": verdict, "text": text, "detail": detail, "summary": summary,
                            "kind": kind})


def results_stats(path):
    """The ``ansible_stats`` of a results.json written."""
    return _stats(RESULTS, path)


def run_summary(stats):
    """``(reports, results paths)`` the run's actions reported, each once, in the order they ran."""
    custom = (getattr(stats, "custom", None) or {}).get("_run") or {}
    reports, paths = [], []
    for entry in custom.get(REPORTS) or []:
        if isinstance(entry, dict) and isinstance(entry.get("paths"), dict) and entry not in reports:
            reports.append(entry)
    for path in custom.get(RESULTS) or []:
        if path and path not in paths:
            paths.append(path)
    return reports, paths
