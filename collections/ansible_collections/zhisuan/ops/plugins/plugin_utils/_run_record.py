# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""The record is never lost: the run's checks mirrored in the controller's main process, written if the run stops.

The ``results`` role keeps each node's checks in host facts (``set_fact``), and the record play writes them once
(``zhisuan.ops.results``). When the run never reaches that write - every node failed and Ansible skipped the
remaining plays, or the run was interrupted (Ctrl-C / SIGINT) or stopped (SIGTERM, SIGHUP: ``stop_on_signals``) -
those facts die with the process. A callback in the
main process (``playbooks/callback_plugins/zhisuan_run_record.py``) feeds every ``set_fact`` result of the results
role, and the node records ``zhisuan.ops.check`` keeps as host facts, to a RunRecorder, which mirrors the run (its
id, directory, kind, families) and each node's checks as they are kept, and, when the run ends or is interrupted
without its record, writes ``results.json`` marked ``partial`` from what was judged so far, and renders the report
from it.
"""

from __future__ import annotations

import datetime
import os
import signal

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.module_utils._remediate.history import HistoryError
from ansible_collections.zhisuan.ops.plugins.plugin_utils import _lease
from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import (
    NODE_RECORD_FACT,
    build_results,
    collection_version,
    host_inputs,
    host_record,
    site_of,
    validate,
    write_results,
)

# localhost facts the results role's start sets, and the run keys they fill
_RUN_KEYS = {
    "results_run_id": "id",
    "results_run_started": "started",
    "results_run_dir": "dir",
    "results_run_kind": "kind",
    "results_run_playbook": "playbook",
    "results_run_families": "families",
    "results_run_latest_link": "latest_link",
    "results_run_site": "site",
    "results_run_site_key": "site_key",
}
_HOST_KEYS = ("results_targeted", "results_checks", "results_host_facts", "results_unreachable")
RESULTS_ACTIONS = ("zhisuan.ops.results", "results")
REPORT_ACTIONS = ("zhisuan.ops.report", "report")
PLAN_ACTIONS = ("zhisuan.ops.remediation_plan", "remediation_plan")


# what a scheduler sends to stop a run: AWX's cancel, a job timeout and a container stop (SIGTERM), a closed terminal or
# dropped SSH session to the controller (SIGHUP); Ctrl-C (SIGINT) is Ansible's own interrupt
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def stop_on_signals(note, signals=STOP_SIGNALS):
    """Make SIGTERM and SIGHUP stop the run the way Ctrl-C does, so that its record and report are written.

    Ansible's CLI turns SIGINT into KeyboardInterrupt: the task queue manager's handler first passes the signal to
    every worker (each kills its process group: the connection and the module, which kills its tools), then the run
    unwinds and exits. For SIGTERM it passes the signal and kills itself with it (no atexit, nothing written); SIGHUP
    has no handler and kills only the main process (the workers, in sessions of their own, run on). The handler
    installed here calls ``note(signum)``, then the SIGINT handler in place (Ansible's, through any chained on it),
    and ends the run with ``SystemExit(128 + signum)``: the exit code a shell reports for a run killed by the signal
    (143, 129), a failure. A second signal while the run stops is ignored, so the record being written is not cut
    off (SIGKILL still ends it). Call it after Ansible set its handlers (a callback's ``__init__``)."""
    stopping = []

    def on_stop(signum, frame):
        if stopping:
            return
        stopping.append(signum)
        note(signum)
        interrupt = signal.getsignal(signal.SIGINT)
        if callable(interrupt):
            try:
                interrupt(signal.SIGINT, frame)
            except KeyboardInterrupt:
                pass
        raise SystemExit(128 + signum)

    for signum in signals:
        signal.signal(signum, on_stop)
    return on_stop


def render_report(path):
    """Render every report format beside ``path`` from the results file (the templates shipped in the collection)."""
    from ansible_collections.zhisuan.ops.plugins.plugin_utils._report import FORMATS, load_results, write_reports

    write_reports(load_results(path), os.path.dirname(path), list(FORMATS))


def _now():
    return datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()


class RunRecorder(object):
    """Mirror of one run's record, fed with the results role's facts; writes a partial record when asked to."""

    def __init__(self, ansible_version="unknown", write_report=render_report, warn=None):
        self.ansible_version = ansible_version
        self.write_report = write_report
        self.warn = warn or (lambda message: None)
        # (history dir, run id) of the node leases the run's remediation plan claimed (plugin_utils._lease)
        self.leases = []
        self._reset()

    def _reset(self):
        self.run = {}
        self.hosts = {}
        self.cluster_checks = []
        self.cluster_data = {}
        self.written = None
        self.reported = False

    @property
    def pending(self):
        """A run was started and its record was not written yet."""
        return bool(self.run.get("id") and self.run.get("dir")) and self.written is None

    def observe_facts(self, host, facts, reason_if_new_run=None):
        """One ``set_fact`` result (``ansible_facts``) of ``host``. ``results_run_id`` (set once, by the start of a
        run) starts a new run (site.yml runs three); a previous run that was never written is written first, partial."""
        if not isinstance(facts, dict):
            return None
        path = None
        if "results_run_id" in facts:
            if self.pending:
                path = self.finish(reason_if_new_run or "the run ended before its record was written")
            self._reset()
        for key, name in _RUN_KEYS.items():
            if key in facts:
                self.run[name] = facts[key]
        if "results_cluster_acc_checks" in facts:
            self.cluster_checks = list(facts["results_cluster_acc_checks"] or [])
        if "results_cluster_acc_data" in facts:
            self.cluster_data = dict(facts["results_cluster_acc_data"] or {})
        if any(key in facts for key in _HOST_KEYS):
            entry = self.hosts.setdefault(host, {"checks": [], "facts": {}, "unreachable": False})
            if "results_checks" in facts:
                entry["checks"] = list(facts["results_checks"] or [])
            if "results_host_facts" in facts:
                entry["facts"] = dict(facts["results_host_facts"] or {})
            if "results_unreachable" in facts:
                entry["unreachable"] = bool(facts["results_unreachable"])
        record = facts.get(NODE_RECORD_FACT)
        if isinstance(record, (str, dict)):  # read (node_record) only if a partial record is written
            self.hosts.setdefault(host, {"checks": [], "facts": {}, "unreachable": False})["node"] = record
        return path

    def observe_written(self, path):
        self.written = path or self.written or ""

    def observe_reported(self):
        self.reported = True

    def observe_leases(self, leases):
        """The ``leases`` a ``zhisuan.ops.remediation_plan`` result holds (history dir, run id, nodes), or None."""
        if isinstance(leases, dict) and leases.get("history_dir") and leases.get("run_id"):
            key = (str(leases["history_dir"]), str(leases["run_id"]))
            if key not in self.leases:
                self.leases.append(key)

    def release_leases(self, reason):
        """Release the node leases the run claimed: its process ends, so no lease of it may hold a node (a lease
        outliving its run keeps the next run on another controller, an AWX job, off the node for MAX_AGE_H hours).
        The record play releases them on a run that reaches it; this is for a run stopped before. Returns the nodes
        released."""
        released = []
        for history_dir, run_id in self.leases:
            try:
                nodes = _lease.release(history_dir, run_id, timeout=10)
            except (HistoryError, OSError) as exc:
                self.warn("zhisuan.ops: %s; the node leases of run %s in %s could not be released: %s"
                          % (reason, run_id, history_dir, exc))
                continue
            if nodes:
                self.warn("zhisuan.ops: %s; released the node leases of run %s: %s"
                          % (reason, run_id, ", ".join(str(node) for node in nodes)))
            released.extend(nodes)
        self.leases = []
        return released

    def document(self, reason):
        """The partial results document: every node seen so far with the checks it kept, and one cluster ``error``
        check ``run.record.partial`` saying why the record is partial."""
        hosts = {}
        kept = {}
        for name, entry in self.hosts.items():
            kept[name] = host_inputs({"results_checks": entry["checks"], "results_host_facts": entry["facts"],
                                      "results_unreachable": entry["unreachable"],
                                      "ansible_facts": {NODE_RECORD_FACT: entry.get("node")}}, self.run["id"])
        for name, (checks, facts, unreachable) in kept.items():
            message = None
            if not checks and not unreachable:
                message = "no check was kept for this host before the run stopped: %s" % reason
            hosts[name] = host_record(name, checks, facts=facts, unreachable=unreachable, message=message)
        run = {
            "id": self.run["id"],
            "kind": self.run.get("kind") or "acceptance",
            "started": self.run.get("started") or _now(),
            "finished": _now(),
            "playbook": self.run.get("playbook") or "",
            "collection_version": collection_version(),
            "ansible_version": self.ansible_version,
            "hosts_total": len(hosts),
            "families": list(self.run.get("families") or []),
            "partial": True,
            "partial_reason": reason,
        }
        site, problems = site_of(self.run.get("site"))
        for problem in problems:
            self.warn("zhisuan.ops: run.site: %s" % problem)
        if site:
            run["site"] = site
        if self.run.get("site_key"):
            run["site_key"] = str(self.run["site_key"])
        stopped = make_check(
            "run.record.partial", "cluster", "error", component="Ansible run", observed="partial",
            expected="every node checked and recorded",
            message="This record is partial: %s. It holds what was judged so far (%d of %d nodes have checks)."
            % (reason, sum(1 for checks, dummy, dummy2 in kept.values() if checks), len(self.hosts)),
            remedy="investigate")
        return build_results(run, hosts, self.cluster_checks + [stopped], cluster_data=self.cluster_data)

    def finish(self, reason):
        """Write the partial record if the run's was not written, then the report if it was not rendered.

        Returns the results path written or rendered from, or None when there was no run."""
        if not self.run.get("id") or not self.run.get("dir"):
            return None
        path = self.written
        if path is None:
            document = self.document(reason)
            problems = validate(document)
            if problems:
                self.warn("zhisuan.ops: the partial record does not match its schema: %s" % "; ".join(problems[:3]))
            try:
                path = write_results(document, self.run["dir"], self.run.get("latest_link"))
            except OSError as exc:
                # a full disk at the end of a run: say which file, without a traceback
                self.warn("zhisuan.ops: %s; the partial record of run %s could not be written: cannot write %s: %s"
                          % (reason, self.run["id"], exc.filename or self.run["dir"], exc.strerror or exc))
                return None
            self.written = path
            self.warn("zhisuan.ops: %s; the partial record of run %s is %s" % (reason, self.run["id"], path))
        if path and not self.reported and self.write_report is not None:
            try:
                self.write_report(path)
                self.reported = True
            except Exception as exc:  # pylint: disable=broad-exception-caught
                # last resort at the end of a run: the record is written, a report failure must not hide it
                self.warn("zhisuan.ops: the report of %s could not be rendered: %s" % (path, exc))
        return path
