# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""zhisuan.ops.report: render a saved results.json as HTML, Markdown, JUnit XML and JSON on the controller, keeping
the run in the history folder and comparing it with the history when one is given."""

from __future__ import annotations

import os

from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.text.converters import to_native
from ansible.plugins.action import ActionBase

from ansible_collections.zhisuan.ops.plugins.module_utils._remediate import history as remediation_history
from ansible_collections.zhisuan.ops.plugins.plugin_utils._history import (
    KEEP_DAYS,
    KEEP_RUNS,
    HistoryError,
    load_history,
    store_run,
)
from ansible_collections.zhisuan.ops.plugins.plugin_utils._report import (
    FORMATS,
    LANGUAGES,
    SCHEMA_PATH,
    ReportError,
    commit_reports,
    load_results,
    max_results_mib,
    stage_reports,
    validate_results,
    verdict_summary,
)
from ansible_collections.zhisuan.ops.plugins.plugin_utils._report_fold import fold_retests
from ansible_collections.zhisuan.ops.plugins.plugin_utils._report_pdf import DEFAULT_TIMEOUT_S, PDF_FILENAME, print_pdf
from ansible_collections.zhisuan.ops.plugins.plugin_utils._report_time import controller_zone
from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import write_results
from ansible_collections.zhisuan.ops.plugins.plugin_utils._run_summary import report_stats
from ansible_collections.zhisuan.ops.plugins.plugin_utils._stages import site_results
from ansible_collections.zhisuan.ops.plugins.plugin_utils._site_history import legacy_warning, record_history_dir

ARGUMENT_SPEC = {
    "src": {"type": "path", "required": True},
    "dest": {"type": "path"},
    "formats": {"type": "list", "elements": "str", "choices": list(FORMATS), "default": list(FORMATS)},
    "template_dir": {"type": "path"},
    "language": {"type": "str", "choices": list(LANGUAGES), "default": "en"},
    "history_dir": {"type": "path"},
    "history_root": {"type": "path"},
    "remediation_log": {"type": "path"},
    "max_results_mib": {"type": "float"},
    "history_keep_runs": {"type": "int", "default": KEEP_RUNS},
    "history_keep_days": {"type": "float", "default": KEEP_DAYS},
    "retests": {"type": "list", "elements": "path", "default": []},
    "stages": {"type": "list", "elements": "path", "default": []},
    "timezone": {"type": "str"},
    "pdf": {"type": "bool", "default": False},
    "chromium": {"type": "str"},
    "pdf_timeout": {"type": "int", "default": DEFAULT_TIMEOUT_S},
}


class ActionModule(ActionBase):
    """Runs on the controller only: reads src, writes the reports next to it (or in dest). Nothing runs on a node."""

    TRANSFERS_FILES = False
    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        del tmp

        dummy_validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        src = os.path.abspath(args["src"])
        retests = [self._results_file(path) for path in args["retests"]]
        stages = [self._results_file(path) for path in args["stages"]]
        if retests and stages:
            raise AnsibleActionFail("zhisuan.ops.report: retests and stages cannot be given together; fold the "
                                    "re-tests into their run first, then fold that run into the site record")
        dest = os.path.abspath(args["dest"] or os.path.dirname(src))
        if retests and not args["dest"]:
            # the folded run is a document of its own, beside the base run: <base run dir>-retested
            dest = os.path.dirname(src) + "-retested"
        if stages and not args["dest"]:
            # the site record, beside the last stage's run: <run dir>-site
            dest = os.path.dirname(src) + "-site"
        history_dir = os.path.abspath(args["history_dir"]) if args["history_dir"] else None
        history = remediation = None
        kept = None
        warnings = []
        try:
            results = load_results(src, max_mib=args["max_results_mib"])
            warnings = validate_results(results, SCHEMA_PATH, source=src)
            if retests:
                results = fold_retests(results, self._load_all(retests, args, warnings), sources=retests)
                if not self._task.check_mode:
                    write_results(results, dest)  # the folded run re-renders from its own results.json
            if stages:
                try:
                    results = site_results([results] + self._load_all(stages, args, warnings))
                except ValueError as exc:
                    raise ReportError("zhisuan.ops.report: cannot fold the stages into a site record: %s" % exc)
                if not self._task.check_mode:
                    write_results(results, dest)
            if not history_dir and args["history_root"]:
                history_dir = self._site_history(args["history_root"], results, warnings)
            if history_dir:
                # the base and its re-tests, and the stage runs, are kept as they ran (the folded record is theirs)
                if not self._task.check_mode and not retests and not stages:
                    kept = store_run(history_dir, results, src=src)
                history = load_history(history_dir, warn=warnings.append, current=None if kept is None else results,
                                       keep_runs=args["history_keep_runs"], keep_days=args["history_keep_days"],
                                       max_bytes=max_results_mib(args["max_results_mib"]) * 1048576)
                log = args["remediation_log"] or os.path.join(history_dir, "remediation.jsonl")
                remediation = remediation_history.read(log, warn=warnings.append)
            template_dir = os.path.abspath(args["template_dir"]) if args["template_dir"] else None
            plan, view = stage_reports(results, dest, args["formats"], template_dir, history=history,
                                       remediation=remediation, check_mode=self._task.check_mode,
                                       language=args["language"], timezone=args["timezone"] or controller_zone())
            if not self._task.check_mode:
                commit_reports(plan, dest)
            verdict, summary = verdict_summary(results, view)
            pdf_path = self._pdf(args, plan, dest, warnings) if args["pdf"] else None
        except (ReportError, HistoryError) as exc:
            raise AnsibleActionFail(to_native(exc))
        except OSError as exc:
            raise AnsibleActionFail("zhisuan.ops.report: %s" % to_native(exc))

        if warnings:
            result["warnings"] = result.get("warnings", []) + warnings
        result.update(
            changed=any(changed for dummy_fmt, dummy_path, dummy_tmp, changed in plan) or bool(kept and kept[1]),
            paths=dict([(fmt, path) for fmt, path, dummy_tmp, dummy_changed in plan]
                       + ([("pdf", pdf_path)] if pdf_path else [])),
            verdict=verdict,
            verdict_text=view["verdict"]["text"],
            verdict_detail=view["verdict"]["detail"],
            summary=summary,
            src=src,
            dest=dest,
        )
        if retests:
            result["retests"] = results["run"]["retests"]
        # for the zhisuan.ops.run_summary callback, which reads the run's stats at its end instead of a copy of
        # every task result (Ansible copies each result once per callback that listens to results)
        if stages:
            result["stages"] = results["run"]["stages"]
        result["ansible_stats"] = report_stats(result["paths"], verdict, result["verdict_text"],
                                               result["verdict_detail"], summary, kind=results["run"]["kind"])
        if history_dir:
            result["history"] = {"dir": history_dir, "runs": len(history or []),
                                 "kept": kept[0] if kept else None,
                                 "previous": (view.get("changes") or {}).get("previous")}
        return result

    @staticmethod
    def _site_history(root, results, warnings):
        """The history of the run's own site under ``root`` (plugin_utils/_site_history.py: ``run.site_key``, else
        the key of ``run.site.name``, else the root itself for a run kept before one history per site); None, with
        a warning, for a record whose key is broken."""
        root = os.path.abspath(root)
        history_dir, problem = record_history_dir(root, results.get("run"))
        if problem:
            warnings.append("zhisuan.ops.report: %s; the report is rendered without the history" % problem)
            return None
        legacy = legacy_warning(root, history_dir)
        if legacy:
            warnings.append(legacy)
        return history_dir

    @staticmethod
    def _load_all(paths, args, warnings):
        """The results documents of ``paths`` (re-tests or stage runs), each validated, its warnings kept."""
        docs = []
        for path in paths:
            docs.append(load_results(path, max_mib=args["max_results_mib"]))
            warnings.extend(validate_results(docs[-1], SCHEMA_PATH, source=path))
        return docs

    @staticmethod
    def _results_file(path):
        path = os.path.abspath(path)
        return os.path.join(path, "results.json") if os.path.isdir(path) else path

    def _pdf(self, args, plan, dest, warnings):
        """Print report.html to report.pdf (the signed copy); a missing or failing Chromium is a warning naming it,
        the other reports stay written. Returns the PDF's path, or None."""
        html = dict((fmt, path) for fmt, path, dummy_tmp, dummy_changed in plan).get("html")
        if not html:
            warnings.append("zhisuan.ops.report: pdf: no PDF without the html format (it is printed from report.html)")
            return None
        if self._task.check_mode:
            return os.path.join(dest, PDF_FILENAME)
        try:
            return print_pdf(html, os.path.join(dest, PDF_FILENAME), chromium=args["chromium"],
                             timeout=args["pdf_timeout"])
        except ReportError as exc:
            warnings.append("%s; the other reports were written" % to_native(exc))
            return None
