# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""A run's verdicts as Prometheus metrics (pure): the text exposition format (version 0.0.4) of a results.json
document, for node_exporter's textfile collector (one node's series) or a Pushgateway (every node's).

The series (docs/metrics.md):

- ``zhisuan_check_status{kind,node,family,check}``: the worst status of the node's records of that check id, as an
  ordered severity (0 pass, 1 warn, 2 fail, 3 error), so ``max by (node)`` is the node's verdict. Skipped checks
  have no series (they are counted).
- ``zhisuan_node_status{kind,node}``: the node's verdict on the same scale, 4 for unreachable.
- ``zhisuan_checks{kind,node,status}``: how many check records of each status the node has (every status, 0 too).
- ``zhisuan_run_info{kind,run_id,playbook}`` 1, ``zhisuan_run_started_timestamp_seconds{kind}``,
  ``zhisuan_run_finished_timestamp_seconds{kind}``, ``zhisuan_run_duration_seconds{kind}``.

The run id is a label of the info series only: every other series keeps its labels from run to run (one series per
check and node, not one per run). ``kind`` is the run's kind (acceptance, inspect, ...): each kind has its own file
(``zhisuan_<kind>.prom``) or Pushgateway group, so an inspection does not overwrite the acceptance verdicts.
"""

from __future__ import annotations

import re

from ansible_collections.zhisuan.ops.plugins.module_utils._safe_parse import iso_time

SEVERITY = {"pass": 0, "warn": 1, "fail": 2, "error": 3}
NODE_SEVERITY = dict(SEVERITY, unreachable=4)
STATUSES = ("pass", "warn", "fail", "error", "skip")
CLUSTER = "cluster"
NAME_OK = re.compile(r"^[a-z][a-z0-9_]*$")

HELP = (
    ("zhisuan_run_info", "The run whose verdicts these are (zhisuan.ops results.json).", "gauge"),
    ("zhisuan_run_started_timestamp_seconds", "When the run started, seconds since the epoch.", "gauge"),
    ("zhisuan_run_finished_timestamp_seconds", "When the run finished, seconds since the epoch.", "gauge"),
    ("zhisuan_run_duration_seconds", "How long the run took.", "gauge"),
    ("zhisuan_node_status", "The node's verdict: 0 pass, 1 warn, 2 fail, 3 error, 4 unreachable.", "gauge"),
    ("zhisuan_checks", "Check records of the node by status.", "gauge"),
    ("zhisuan_check_status", "Worst status of the node's records of a check: 0 pass, 1 warn, 2 fail, 3 error.",
     "gauge"),
)


class MetricsError(ValueError):
    """A results document that cannot be rendered (the message names what is wrong)."""


def escape(value):
    """A label value as the exposition format writes it: backslash, double quote and line feed escaped."""
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(pairs):
    return "{%s}" % ",".join('%s="%s"' % (name, escape(value)) for name, value in pairs)


def _number(value):
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, float):
        return repr(round(value, 3))
    return str(value)


def _epoch(value):
    parsed = iso_time(value)
    return None if parsed is None else parsed.timestamp()


def _family(check_id):
    return str(check_id).split(".", 1)[0] or "run"


def _node_series(kind, node, record):
    """The node's series: (metric, label pairs, value) triples."""
    series = []
    status = record.get("status")
    if status in NODE_SEVERITY:
        series.append(("zhisuan_node_status", (("kind", kind), ("node", node)), NODE_SEVERITY[status]))
    counts = dict((name, 0) for name in STATUSES)
    worst = {}
    for check in record.get("checks") or []:
        if not isinstance(check, dict) or check.get("status") not in counts:
            continue
        counts[check["status"]] += 1
        if check["status"] == "skip":
            continue
        key = str(check.get("id") or "unknown")
        worst[key] = max(worst.get(key, 0), SEVERITY[check["status"]])
    for name in STATUSES:
        series.append(("zhisuan_checks", (("kind", kind), ("node", node), ("status", name)), counts[name]))
    for check_id in sorted(worst):
        series.append(("zhisuan_check_status", (("kind", kind), ("node", node), ("family", _family(check_id)),
                                                ("check", check_id)), worst[check_id]))
    return series


def run_kind(doc):
    """The run's kind as a label value, checked (a file name is made of it)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("run"), dict) or not isinstance(doc.get("hosts"), dict):
        raise MetricsError("not a results document (no run and hosts objects)")
    kind = doc["run"].get("kind")
    if not isinstance(kind, str) or not NAME_OK.match(kind):
        raise MetricsError("the run's kind %r is not a lower-case word" % (kind,))
    return kind


def render(doc, nodes=None, cluster=True):
    """The exposition text of a results document: the run's series, and those of ``nodes`` (default every host;
    a list keeps only those, e.g. the one node whose textfile this is) and, with ``cluster``, the cluster's checks
    (node ``cluster``)."""
    kind = run_kind(doc)
    run = doc["run"]
    series = [("zhisuan_run_info", (("kind", kind), ("run_id", run.get("id") or ""),
                                    ("playbook", run.get("playbook") or "")), 1)]
    started, finished = _epoch(run.get("started")), _epoch(run.get("finished"))
    if started is not None:
        series.append(("zhisuan_run_started_timestamp_seconds", (("kind", kind),), started))
    if finished is not None:
        series.append(("zhisuan_run_finished_timestamp_seconds", (("kind", kind),), finished))
    if started is not None and finished is not None:
        series.append(("zhisuan_run_duration_seconds", (("kind", kind),), max(0.0, finished - started)))
    wanted = sorted(doc["hosts"]) if nodes is None else [name for name in nodes if name in doc["hosts"]]
    for node in wanted:
        series.extend(_node_series(kind, node, doc["hosts"][node] or {}))
    if cluster and isinstance(doc.get("cluster"), dict) and doc["cluster"].get("checks"):
        cluster_series = _node_series(kind, CLUSTER, {"checks": doc["cluster"]["checks"]})
        series.extend(item for item in cluster_series if item[0] != "zhisuan_node_status")
    lines = []
    for name, text, metric_type in HELP:
        mine = [item for item in series if item[0] == name]
        if not mine:
            continue
        lines.append("# HELP %s %s" % (name, text))
        lines.append("# TYPE %s %s" % (name, metric_type))
        lines.extend("%s%s %s" % (name, _labels(pairs), _number(value)) for dummy, pairs, value in mine)
    return "\n".join(lines) + "\n"


def textfile_name(doc):
    """The textfile collector file of the run's kind (node_exporter reads only ``*.prom``)."""
    return "zhisuan_%s.prom" % run_kind(doc)


def pushgateway_path(doc, job="zhisuan"):
    """The Pushgateway group of the run's kind: ``/metrics/job/<job>/kind/<kind>`` (a PUT replaces the group)."""
    if not isinstance(job, str) or not NAME_OK.match(job):
        raise MetricsError("the Pushgateway job %r is not a lower-case word" % (job,))
    return "/metrics/job/%s/kind/%s" % (job, run_kind(doc))
