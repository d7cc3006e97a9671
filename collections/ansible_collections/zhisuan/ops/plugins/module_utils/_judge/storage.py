# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Storage judgement rules: ``storage`` facts (fio_run) + the site's floors -> check records; and the cluster
aggregate of a concurrent run on many nodes.

Pure functions, no I/O, standard library only. Per job, in the order the jobs ran:

``storage.<job>.errors``       fail + ``investigate`` when fio reported an error for the job, else pass.
``storage.<job>.bandwidth``    MiB/s >= ``bw_mib_min``.
``storage.<job>.iops``         IOPS >= ``iops_min``.
``storage.<job>.latency_p99``  p99 latency (us) <= ``lat_p99_us_max``.

The floors are the site's (inventory ``zhisuan_thresholds.storage``); the collection ships none, because what a
storage system must deliver depends on it and on the GPUs it feeds (delivery guide 5.1). Without a floor a metric is
a pass that records the measured value and says no floor is set. A job that failed is not measured: its metrics are
``skip`` (the ``errors`` check carries the failure). Below a floor is a fail with remedy ``investigate``::

    zhisuan_thresholds:
      storage:
        jobs:
          seq_read: {bw_mib_min: 2000}
          rand_read: {iops_min: 100000, lat_p99_us_max: 2000}
        aggregate: {read_bw_mib_min: 20000, write_bw_mib_min: 10000, read_iops_min: null, write_iops_min: null}

``aggregate`` (cluster, concurrent runs): per job, each direction's bandwidth and IOPS summed over the nodes; the
cluster figures are the best job's sums (a sequential job gives the bandwidth, a random one the IOPS).
"""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._readings import items, mapping, reading, shown, text
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._overrides import overridden
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._util import evidence_of, fmt

JOB_FLOORS = ("bw_mib_min", "iops_min", "lat_p99_us_max")
AGGREGATE_FLOORS = ("read_bw_mib_min", "write_bw_mib_min", "read_iops_min", "write_iops_min")
_MU = u"\u00b5s"
_ADVICE = ("check the storage network (link speed, MTU, errors), the file system or array's health and load, and "
           "that the job ran on the storage under test")


def _floors(section, keys, what):
    return overridden(dict.fromkeys(keys), section, what + ".%s")


def job_floors(thresholds, name):
    """The site's floors for job ``name`` (each None when not set); ValueError for a value that is not a number."""
    jobs = (thresholds or {}).get("jobs") or {}
    if not isinstance(jobs, dict):
        raise ValueError("zhisuan_thresholds.storage.jobs must be a mapping of job name to floors, got %r" % (jobs,))
    return _floors(jobs.get(name), JOB_FLOORS, "zhisuan_thresholds.storage.jobs.%s" % name)


def _job_evidence(job):
    lat = job.get("lat_us") or {}
    return evidence_of(("rw", job.get("rw")), ("bs", job.get("bs")), ("iodepth", job.get("iodepth")),
                       ("numjobs", job.get("numjobs")), ("bw_mib", job.get("bw_mib")), ("iops", job.get("iops")),
                       ("lat_us.p50", lat.get("p50")), ("lat_us.p99", lat.get("p99")),
                       ("lat_us.p999", lat.get("p999")), ("error", job.get("error")))


_JOB_NUMBERS = ("bw_mib", "iops", "iodepth", "numjobs", "error")


def _clean_job(raw):
    """A job's facts with the types the rules read. A value that is there but unreadable (a string, NaN, infinite,
    negative, absurd) becomes None and is listed in ``unreadable`` so its metric is an error, never a pass."""
    if not isinstance(raw, dict):
        return {"errors": ["the job's facts are not readable: %s" % shown(raw)], "lat_us": {}, "unreadable": []}
    job = dict(raw)
    unreadable = []
    for key in _JOB_NUMBERS:
        value = raw.get(key)
        job[key] = reading(value)
        if value is not None and job[key] is None:
            unreadable.append(key)
    lat = {}
    for key, value in mapping(raw.get("lat_us")).items():
        lat[key] = reading(value)
        if value is not None and lat[key] is None:
            unreadable.append("lat_us.%s" % key)
    job["lat_us"] = lat
    for key in ("rw", "bs"):
        job[key] = text(raw.get(key))
    errors = raw.get("errors")
    job["errors"] = [str(item) for item in items(errors)] if errors is None or isinstance(errors, list) else \
        ["unreadable errors field: %s" % shown(errors)]
    job["unreadable"] = unreadable
    return job


def _metric(host, name, job, metric, value, floor, unit, failed):
    """One metric of one job against its floor (``min`` for bandwidth and IOPS, ``max`` for latency)."""
    check_id = "storage.%s.%s" % (name, metric)
    label = {"bandwidth": "bandwidth", "iops": "IOPS", "latency_p99": "p99 latency"}[metric]
    component = "fio job %s (%s, %s)" % (name, job.get("rw") or "?", job.get("bs") or "?")
    evidence = _job_evidence(job)
    upper = metric == "latency_p99"
    shown = "%s %s" % (fmt(value), unit) if value is not None else None
    expected = None if floor is None else ("%s %s %s" % ("<=" if upper else ">=", fmt(floor), unit))
    if failed:
        return make_check(check_id, host, "skip", component=component, observed=shown, expected=expected,
                          message="Job %s failed (see storage.%s.errors), so its %s is not judged" % (name, name, label),
                          evidence=evidence)
    key = {"bandwidth": "bw_mib", "iops": "iops", "latency_p99": "lat_us.p99"}[metric]
    if value is None and key in (job.get("unreadable") or []):
        return make_check(check_id, host, "error", component=component, expected=expected,
                          message="The %s of job %s is unreadable in the facts (not a finite, non-negative number)"
                                  % (label, name), remedy="investigate", evidence=evidence)
    if value is None:
        if floor is None:
            return make_check(check_id, host, "skip", component=component, expected=expected,
                              message="fio reported no %s for job %s and no floor is set" % (label, name),
                              evidence=evidence)
        return make_check(check_id, host, "error", component=component, expected=expected,
                          message="fio reported no %s for job %s, so it cannot be compared with the floor %s"
                                  % (label, name, expected), remedy="investigate", evidence=evidence)
    if floor is None:
        key = {"bandwidth": "bw_mib_min", "iops": "iops_min", "latency_p99": "lat_p99_us_max"}[metric]
        return make_check(check_id, host, "pass", component=component, observed=shown,
                          message="Job %s measured %s %s; no floor is set (zhisuan_thresholds.storage.jobs.%s.%s), so "
                                  "this records the value only" % (name, label, shown, name, key), evidence=evidence)
    bad = value > floor if upper else value < floor
    if bad:
        return make_check(check_id, host, "fail", component=component, observed=shown, expected=expected,
                          message="Job %s %s is %s, %s the site's %s %s: %s"
                                  % (name, label, shown, "above" if upper else "below",
                                     "ceiling" if upper else "floor", expected.split(" ", 1)[1], _ADVICE),
                          remedy="investigate", evidence=evidence)
    kind = "ceiling" if upper else "floor"
    return make_check(check_id, host, "pass", component=component, observed=shown, expected=expected,
                      message="Job %s %s is %s (site %s %s)" % (name, label, shown, kind, expected.split(" ", 1)[1]),
                      evidence=evidence)


def _errors_check(host, name, job):
    errors = [str(item) for item in job.get("errors") or []]
    component = "fio job %s (%s, %s)" % (name, job.get("rw") or "?", job.get("bs") or "?")
    evidence = _job_evidence(job)
    if errors:
        evidence += "; " + "; ".join(errors)
        return make_check("storage.%s.errors" % name, host, "fail", component=component, observed=len(errors),
                          expected="== 0",
                          message="fio job %s failed: %s. The storage returned an I/O error: check the device or "
                                  "mount (kernel log, file system, array health) before judging its speed"
                                  % (name, errors[0]), remedy="investigate", evidence=evidence)
    return make_check("storage.%s.errors" % name, host, "pass", component=component, observed=0, expected="== 0",
                      message="fio job %s ran without errors" % name, evidence=evidence)


def judge_storage(host, facts, thresholds=None):
    """Judge one host's ``storage`` facts against ``thresholds`` (``zhisuan_thresholds.storage``).

    Returns a list of check records; raises ValueError for a floor that is not a number.
    """
    if not isinstance(facts, dict) or not isinstance(facts.get("jobs"), dict) or not facts["jobs"]:
        return [make_check("storage.fio.jobs", host, "error", component="fio", expected="fio job results",
                           message="No fio job results were collected for this host, so no storage check could run",
                           remedy="investigate", evidence="storage facts: %r" % (facts,))]
    jobs = facts["jobs"]
    order = [name for name in items(facts.get("job_order")) if isinstance(name, str) and name in jobs]
    order += sorted(name for name in jobs if name not in order)
    checks = []
    for name in order:
        job = _clean_job(jobs[name])
        floors = job_floors(thresholds, name)
        failed = bool(job.get("errors"))
        checks.append(_errors_check(host, name, job))
        lat = job["lat_us"]
        checks.append(_metric(host, name, job, "bandwidth", job.get("bw_mib"), floors["bw_mib_min"], "MiB/s", failed))
        checks.append(_metric(host, name, job, "iops", job.get("iops"), floors["iops_min"], "IOPS", failed))
        checks.append(_metric(host, name, job, "latency_p99", lat.get("p99"), floors["lat_p99_us_max"], _MU, failed))
    return checks


def summarize_storage(facts, profile=None):
    """The host's report facts: per job ``rw``, ``bs``, ``bw_mib``, ``iops``, ``lat_us`` and ``errors``."""
    if not isinstance(facts, dict):
        return {}
    jobs = {}
    for name, raw in mapping(facts.get("jobs")).items():
        if isinstance(raw, dict):
            job = _clean_job(raw)
            jobs[name] = {"rw": job["rw"], "bs": job["bs"], "bw_mib": job["bw_mib"], "iops": job["iops"],
                          "lat_us": job["lat_us"], "errors": job["errors"]}
    return {"fio_version": text(facts.get("fio_version")), "directory": text(facts.get("directory")),
            "job_order": [name for name in items(facts.get("job_order")) if isinstance(name, str)] or sorted(jobs),
            "jobs": jobs}


# ------------------------------------------------------------------------------------------------ cluster

def aggregate(hosts_storage):
    """Cluster throughput of a concurrent run: ``hosts_storage`` maps a host to its ``storage`` facts (hosts with
    none, ``{}`` or ``None``, are not counted). Returns the ``cluster.storage.aggregate`` data (docs/results.md)."""
    per_job = {}
    nodes = []
    failed = set()
    for host in sorted(hosts_storage or {}):
        facts = hosts_storage[host]
        if not isinstance(facts, dict) or not isinstance(facts.get("jobs"), dict) or not facts["jobs"]:
            continue
        nodes.append(host)
        for name, job in facts["jobs"].items():
            if not isinstance(job, dict):
                continue
            entry = per_job.setdefault(name, {"rw": job.get("rw"), "nodes": 0, "failed_nodes": [],
                                              "read_bw_mib": 0.0, "write_bw_mib": 0.0, "read_iops": 0.0,
                                              "write_iops": 0.0})
            if job.get("errors"):
                entry["failed_nodes"].append(host)
                failed.add(host)
                continue
            entry["nodes"] += 1
            for direction in ("read", "write"):
                numbers = mapping(mapping(job.get("directions")).get(direction))
                entry["%s_bw_mib" % direction] += reading(numbers.get("bw_mib")) or 0.0
                entry["%s_iops" % direction] += reading(numbers.get("iops")) or 0.0
    result = {"nodes": len(nodes), "hosts": nodes, "failed_nodes": sorted(failed), "jobs": {}}
    for key in ("read_bw_mib", "write_bw_mib", "read_iops", "write_iops"):
        best = None
        for name in sorted(per_job):
            value = round(per_job[name][key], 3)
            if value > 0 and (best is None or value > best[0]):
                best = (value, name)
        result[key] = best[0] if best else None
        result[key.replace("_bw_mib", "_bw") + "_job"] = best[1] if best else None
    for name, entry in sorted(per_job.items()):
        entry = dict(entry)
        for key in ("read_bw_mib", "write_bw_mib", "read_iops", "write_iops"):
            entry[key] = round(entry[key], 3)
        result["jobs"][name] = entry
    return result


_AGG_TEXT = {"read_bw_mib": ("read bandwidth", "MiB/s", "read_bandwidth"),
             "write_bw_mib": ("write bandwidth", "MiB/s", "write_bandwidth"),
             "read_iops": ("read IOPS", "IOPS", "read_iops"),
             "write_iops": ("write IOPS", "IOPS", "write_iops")}


def judge_aggregate(data, thresholds=None):
    """Cluster checks ``storage.aggregate.<metric>`` (host ``cluster``) for the metrics the run measured, against
    ``zhisuan_thresholds.storage.aggregate`` floors; pass with a note where no floor is set."""
    floors = _floors((thresholds or {}).get("aggregate"), AGGREGATE_FLOORS, "zhisuan_thresholds.storage.aggregate")
    checks = []
    nodes = data.get("nodes") or 0
    for key in ("read_bw_mib", "write_bw_mib", "read_iops", "write_iops"):
        what, unit, metric = _AGG_TEXT[key]
        value = data.get(key)
        floor = floors[key + "_min"]
        if value is None and floor is None:
            continue
        job = data.get(key.replace("_bw_mib", "_bw") + "_job")
        evidence = evidence_of((key, value), ("job", job), ("nodes", nodes),
                               ("failed_nodes", ", ".join(data.get("failed_nodes") or []) or None))
        check_id = "storage.aggregate.%s" % metric
        component = "%s node(s), concurrent fio" % nodes
        expected = ">= %s %s" % (fmt(floor), unit) if floor is not None else None
        shown = "%s %s" % (fmt(value), unit) if value is not None else None
        if value is None:
            checks.append(make_check(check_id, "cluster", "error", component=component, expected=expected,
                                     message="No job measured the cluster's %s, so the floor %s cannot be checked"
                                             % (what, expected), remedy="investigate", evidence=evidence))
        elif floor is None:
            checks.append(make_check(check_id, "cluster", "pass", component=component, observed=shown,
                                     message="%s nodes together reached %s %s (job %s); no cluster floor is set "
                                             "(zhisuan_thresholds.storage.aggregate.%s_min)" % (nodes, shown, what, job, key),
                                     evidence=evidence))
        elif value < floor:
            checks.append(make_check(check_id, "cluster", "fail", component=component, observed=shown, expected=expected,
                                     message="%s nodes together reached only %s %s (job %s), below the site's floor of "
                                             "%s %s: the storage cannot feed the cluster; %s"
                                             % (nodes, shown, what, job, fmt(floor), unit, _ADVICE),
                                     remedy="investigate", evidence=evidence))
        else:
            checks.append(make_check(check_id, "cluster", "pass", component=component, observed=shown, expected=expected,
                                     message="%s nodes together reached %s %s (job %s; floor %s %s)"
                                             % (nodes, shown, what, job, fmt(floor), unit), evidence=evidence))
    return checks
