# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""A delivery is many runs: where each node stands in it (issue 26 item 8).

``stage_rows(results, history)`` is pure: for every node of the run, the newest result of each delivery stage
(delivery, burn-in, acceptance) found in the run itself and the site's history - the status the node had in that
run, the run's id and when it started and finished - and whether the node has passed all three (``ready``: ready
for sign-off). A re-test of some nodes is a run of its kind that holds only them, so it wins for them alone. A run
that was cut off (``run.partial``) still counts for the nodes it recorded. ``stages_csv(rows)`` is the same as CSV
(``stages.csv`` beside the report).

``site_results(documents)`` is pure too: the delivery, burn-in and acceptance runs of ``site.yml`` folded into one
document of kind ``site``, so the site ends with one verdict and one report. Each node keeps every stage's checks (a
check that two stages ran, same id and component, counts once: the newer stage's); a node missing from a stage that
ran, or unreachable in it, gets an error check saying so, so the site cannot pass it on the other stages alone; its
status is the worst of its stages (unreachable worst); ``facts.stages`` says which run gave each stage. The runs are
not changed, and each stays in the history under its own id (the site document is not kept there: its checks are
theirs).
"""

from __future__ import annotations

import csv
import io

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.plugin_utils._history import run_key
from ansible_collections.zhisuan.ops.plugins.plugin_utils._report_values import natural_key
from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import build_results

STAGES = ("delivery", "burnin", "acceptance")
SITE_KIND = "site"
# a node's status in the site: the worst of its stages, an unreachable node the worst of all (it was not tested)
HOST_RANK = {"pass": 0, "warn": 1, "error": 2, "fail": 3, "unreachable": 4}
CSV_HEADER = ("host",) + tuple("%s_%s" % (stage, field) for stage in STAGES
                               for field in ("status", "run", "started", "finished")) + ("ready",)


def _entry(doc, host):
    run = doc.get("run") or {}
    record = (doc.get("hosts") or {}).get(host) or {}
    return {"status": record.get("status") or "error", "run": run.get("id"), "started": run.get("started"),
            "finished": run.get("finished"), "partial": bool(run.get("partial"))}


def stage_rows(results, history=None):
    """[{host, stages: {stage: entry or None}, ready}] for every host of ``results``, by natural name order (module
    doc). ``history``: results documents (slim or whole) of the site, any order; ``results`` itself counts whether
    or not the history holds it. Each entry is {status, run, started, finished, partial}."""
    if (results.get("run") or {}).get("kind") == SITE_KIND:
        return _site_rows(results)
    runs = {}
    for doc in list(history or []) + [results]:
        run = (doc or {}).get("run") or {}
        if run.get("kind") in STAGES and run.get("id"):
            runs[run["id"]] = doc  # the run itself wins over its slim copy in the history
    ordered = sorted(runs.values(), key=run_key)
    rows = []
    for host in sorted(results.get("hosts") or {}, key=natural_key):
        stages = dict((stage, None) for stage in STAGES)
        for doc in ordered:
            if host in (doc.get("hosts") or {}):
                stages[doc["run"]["kind"]] = _entry(doc, host)
        rows.append(_row(host, stages))
    return rows


def _row(host, stages):
    """One node's row: its stages, and whether all three passed (ready for sign-off)."""
    return {"host": host, "stages": stages,
            "ready": all(entry is not None and entry["status"] == "pass" for entry in stages.values())}


def _site_rows(results):
    """The stage rows of a site document: its own stages (``facts.stages`` of each node), never a later run's (the
    site's checks are those of its stages)."""
    partial = dict((stage.get("id"), bool(stage.get("partial"))) for stage in (results["run"].get("stages") or []))
    rows = []
    for host in sorted(results.get("hosts") or {}, key=natural_key):
        found = ((results["hosts"][host] or {}).get("facts") or {}).get("stages") or {}
        stages = dict((stage, None) for stage in STAGES)
        for stage in STAGES:
            entry = found.get(stage)
            if isinstance(entry, dict):
                stages[stage] = {"status": entry.get("status") or "error", "run": entry.get("run"),
                                 "started": entry.get("started"), "finished": entry.get("finished"),
                                 "partial": partial.get(entry.get("run"), False)}
        rows.append(_row(host, stages))
    return rows


def known_elsewhere(rows, results):
    """Whether any node has a stage result from a run other than ``results`` (the report shows the stage view then;
    a first run alone has nothing to add to its own verdict)."""
    run_id = (results.get("run") or {}).get("id")
    return any(entry is not None and entry["run"] != run_id for row in rows for entry in row["stages"].values())


def stages_csv(rows):
    """The stage rows as CSV text (CSV_HEADER; a stage not run yet has empty fields; ``ready`` is yes or no)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    for row in rows:
        line = [row["host"]]
        for stage in STAGES:
            entry = row["stages"][stage] or {}
            line.extend(entry.get(field) or "" for field in ("status", "run", "started", "finished"))
        line.append("yes" if row["ready"] else "no")
        writer.writerow(line)
    return out.getvalue()


def _stage_check(name, doc, check_id, observed, message):
    run = doc["run"]
    return make_check(check_id, name, "error", component="%s run %s" % (run["kind"], run["id"]), observed=observed,
                      expected="a %s result" % run["kind"], message=message, remedy="investigate",
                      evidence="site.yml stage %s, run %s" % (run["kind"], run["id"]))


def _site_host(name, docs):
    checks, order, facts, stages, statuses, messages = {}, [], {}, {}, [], []

    def keep(check):
        key = (check.get("id"), check.get("component"))
        if key not in checks:
            order.append(key)
        checks[key] = check

    for doc in docs:
        run = doc["run"]
        record = (doc.get("hosts") or {}).get(name)
        if record is None:
            statuses.append("error")
            keep(_stage_check(name, doc, "run.stage.%s" % run["kind"], "not in the run",
                              "%s was not in the %s run %s of this site run, so its %s is not known"
                              % (name, run["kind"], run["id"], run["kind"])))
            continue
        status = record.get("status") or "error"
        statuses.append(status)
        for check in record.get("checks") or []:
            keep(check)
        if status == "unreachable" and not record.get("checks"):
            keep(_stage_check(name, doc, "run.host.unreachable", "unreachable",
                              "%s was unreachable in the %s run %s: %s"
                              % (name, run["kind"], run["id"], record.get("message") or "no checks ran")))
        if record.get("message"):
            messages.append("%s: %s" % (run["kind"], record["message"]))
        facts.update(record.get("facts") or {})
        stages[run["kind"]] = {"run": run["id"], "status": status, "started": run.get("started"),
                               "finished": run.get("finished")}
    facts["stages"] = stages
    host = {"status": max(statuses, key=lambda status: HOST_RANK.get(status, 2)),
            "checks": [checks[key] for key in order], "facts": facts}
    if messages:
        host["message"] = "; ".join(messages)
    return host


def site_results(documents, run_id=None, playbook="playbooks/site.yml"):
    """One ``site`` document from the stage runs of a site.yml run (module doc). ValueError when a document is not a
    delivery, burn-in or acceptance run, two are the same run, or none is given."""
    if not documents:
        raise ValueError("no stage run to fold into the site record")
    ids = []
    for doc in documents:
        run = doc.get("run") or {}
        if run.get("kind") not in STAGES:
            raise ValueError("run %s is a %s run; the site record folds delivery, burn-in and acceptance runs"
                             % (run.get("id"), run.get("kind")))
        if run.get("id") in ids:
            raise ValueError("run %s is given twice" % run.get("id"))
        ids.append(run.get("id"))
    docs = sorted(documents, key=run_key)
    names = sorted(set(name for doc in docs for name in doc.get("hosts") or {}), key=natural_key)
    hosts = dict((name, _site_host(name, docs)) for name in names)
    cluster_checks, order, data = {}, [], {}
    for doc in docs:
        cluster = dict(doc.get("cluster") or {})
        for check in cluster.pop("checks", []) or []:
            key = (check.get("id"), check.get("component"))
            if key not in cluster_checks:
                order.append(key)
            cluster_checks[key] = check
        data.update(cluster)
    newest = docs[-1]["run"]
    run = dict((key, value) for key, value in newest.items() if key not in ("retests", "merged_from", "partial", "partial_reason"))
    run.update(kind=SITE_KIND, id=run_id or "%s-site" % newest["id"], playbook=playbook, hosts_total=len(hosts),
               started=min(doc["run"]["started"] for doc in docs),
               finished=max(doc["run"].get("finished") or doc["run"]["started"] for doc in docs),
               families=sorted(set(f for doc in docs for f in doc["run"].get("families") or [])),
               stages=[{"kind": doc["run"]["kind"], "id": doc["run"]["id"], "started": doc["run"].get("started"),
                        "finished": doc["run"].get("finished"), "hosts_total": len(doc.get("hosts") or {}),
                        "partial": bool(doc["run"].get("partial"))} for doc in docs])
    cut = ["%s run %s" % (stage["kind"], stage["id"]) for stage in run["stages"] if stage["partial"]]
    if cut:
        run.update(partial=True, partial_reason="stopped before its end: %s" % ", ".join(cut))
    return build_results(run, hosts, [cluster_checks[key] for key in order], cluster_data=data)
