# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""A delivery is many runs: the re-test of some repaired nodes folded into the run a customer signs.

``fold_retests(base, retests)`` is pure: a new results document whose hosts are the base run's, each host found in a
re-test replaced by its newest record (the re-test that started last wins; a re-test older than the base is refused),
and whose ``run.retests`` lists each re-test folded in (id, start, finish, the hosts it replaced), so the report
names the re-tested nodes and when. The base's cluster-wide checks and data stay (a re-test of two nodes says nothing
of the fabric as a whole). The base and the re-tests are not changed; each stays in the history under its own id.
"""

from __future__ import annotations

import copy

from ansible_collections.zhisuan.ops.plugins.plugin_utils._report_errors import ReportError
from ansible_collections.zhisuan.ops.plugins.plugin_utils._report_values import aware_time, natural_key
from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import build_results


def _started(doc, where):
    run = doc.get("run") or {}
    moment = aware_time(run.get("started"))
    if moment is None:
        raise ReportError("zhisuan.ops.report: retest %s has no readable run.started (%r)"
                          % (where, run.get("started")))
    return moment


def fold_retests(base, retests, sources=None):
    """The base run with the re-tests' hosts folded in (see the module doc). ``sources`` names each re-test (its
    file) in errors. ReportError for a re-test of another kind, one that started before the base, or one with no
    host of the base run."""
    sources = list(sources or [r.get("run", {}).get("id") for r in retests])
    base_run = base.get("run") or {}
    base_started = _started(base, "base %s" % base_run.get("id"))
    hosts = copy.deepcopy(base.get("hosts") or {})
    owner = {}
    folded = []
    order = sorted(range(len(retests)), key=lambda i: _started(retests[i], sources[i]))
    for index in order:
        doc, where = retests[index], sources[index]
        run = doc.get("run") or {}
        if run.get("kind") != base_run.get("kind"):
            raise ReportError("zhisuan.ops.report: retest %s is a %s run, the base run %s is %s; fold re-tests of the "
                              "same kind" % (where, run.get("kind"), base_run.get("id"), base_run.get("kind")))
        if _started(doc, where) < base_started:
            raise ReportError("zhisuan.ops.report: retest %s (%s) started before the base run %s (%s); the newer "
                              "result wins, so a re-test must come after it"
                              % (where, run.get("started"), base_run.get("id"), base_run.get("started")))
        names = sorted(doc.get("hosts") or {}, key=natural_key)
        unknown = [n for n in names if n not in hosts]
        if unknown:
            raise ReportError("zhisuan.ops.report: retest %s has hosts the base run %s does not: %s (a re-test folds "
                              "into the run that tested them)" % (where, base_run.get("id"), ", ".join(unknown)))
        for name in names:
            hosts[name] = copy.deepcopy(doc["hosts"][name])
            owner[name] = run.get("id")
        folded.append({"id": run.get("id"), "started": run.get("started"), "finished": run.get("finished"),
                       "hosts": names})
    for entry in folded:
        # a host re-tested twice counts for the newest re-test only
        entry["hosts"] = [n for n in entry["hosts"] if owner.get(n) == entry["id"]]
    run = dict(base_run)
    run["retests"] = list(base_run.get("retests") or []) + folded
    finishes = [r["finished"] for r in folded if r.get("finished")] + [base_run.get("finished")]
    run["finished"] = max((f for f in finishes if f), key=lambda f: aware_time(f) or base_started, default=None) \
        or base_run.get("finished")
    cluster = dict(base.get("cluster") or {})
    checks = cluster.pop("checks", [])
    return build_results(run, hosts, checks, cluster_data=cluster)


def retest_rows(results):
    """[{host, run, started}] for the report: each re-tested host with the re-test that holds its record."""
    rows = []
    for entry in (results.get("run") or {}).get("retests") or []:
        for name in entry.get("hosts") or []:
            rows.append({"host": name, "run": entry.get("id"), "started": entry.get("started") or "",
                         "finished": entry.get("finished") or ""})
    return sorted(rows, key=lambda r: natural_key(r["host"]))
