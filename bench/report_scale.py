#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Scale benchmark of the record and report stages: 1,000 hosts x 60 checks (numbers printed, never asserted).

Stages, each timed (wall: perf_counter, CPU: process_time) with the process's peak RSS after it (resource); with
--tracemalloc also each stage's Python peak allocation (tracemalloc slows Python several times: its times are not the
stage's speed, run it apart):
1. record: 1,000 host records (host_record) assembled into one results.json document (build_results);
2. merge: the same hosts as 4 AWX job slices of 250 hosts merged into one document (merge_results);
3. write + load: the document as JSON on disk and back;
4. view: the report's view model (verdict, grid, issues, sections, pictures);
5. render: HTML, Markdown, JUnit XML and JSON from that view;
6. history: 10 earlier runs kept in a history folder (store_run), read back slimmed (load_history), and the same
   render with them (comparison with the previous run, KPIs).

Usage: .venv/bin/python bench/report_scale.py [--hosts 1000] [--checks 60] [--tracemalloc]
                                             [--json bench/out/report_scale.json]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import resource
import sys
import tempfile
import time
import tracemalloc

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir))
sys.path.insert(0, os.path.join(REPO, "collections"))

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check  # noqa: E402
from ansible_collections.zhisuan.ops.plugins.plugin_utils import _report  # noqa: E402
from ansible_collections.zhisuan.ops.plugins.plugin_utils._history import load_history, store_run  # noqa: E402
from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import build_results, host_record  # noqa: E402

try:
    from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import merge_results  # noqa: E402
except ImportError:  # pragma: no cover - the merge arrived with the AWX slicing work
    merge_results = None

TEMPLATES = os.path.join(REPO, "reports", "templates")
FAMILIES = ("gpu", "xid", "dcgm", "burn", "tuning", "nic")


def host_checks(name, index, count):
    """``count`` checks across the families; every 97th host fails one ECC check, every 31st warns."""
    checks = []
    for number in range(count):
        family = FAMILIES[number % len(FAMILIES)]
        gpu = number % 8
        status, remedy = "pass", "none"
        if number == 7 and index % 97 == 0:
            status, remedy = "fail", "reset_gpu"
        elif number == 11 and index % 31 == 0:
            status, remedy = "warn", "monitor"
        checks.append(make_check("%s.metric%02d.value" % (family, number), name, status,
                                 component="GPU %d (GPU-%08x, 0000:%02X:00.0)" % (gpu, index * 8 + gpu, 16 + gpu * 16),
                                 observed=number, expected="== %d" % number, message="check %d of %s" % (number, name),
                                 remedy=remedy, evidence="field=%d" % number))
    return checks


def facts(index):
    return {"gpu": {"model": "NVIDIA H200", "count": 8, "driver_version": "550.90.07", "cuda_version": "12.4"},
            "burn": {"gflops_median": 52000.0 - (8000.0 if index % 250 == 0 else 0.0), "gflops_min": 51000.0,
                     "gflops_floor": 45000.0, "errors": 0,
                     "stability": {"samples": 5, "gpus_before": 8, "gpus_lost": [], "max_temperature_c": 71,
                                   "new_xid_codes": [], "trace": [{"t": t, "temp_max_c": 40 + 6 * t,
                                                                   "sm_clock_min_mhz": 1980 - 20 * t} for t in range(6)]}},
            "storage": {"read_bw_mib": 6100.0, "write_bw_mib": 3200.0}}


def run_meta(run_id, started, hosts):
    return {"id": run_id, "kind": "inspect", "started": started, "finished": started, "playbook": "playbooks/inspect.yml",
            "collection_version": "0.1.0", "ansible_version": "2.19.14", "hosts_total": hosts, "families": list(FAMILIES)}


TRACE = {"on": False}


def measure(label, func, results):
    if TRACE["on"]:
        tracemalloc.start()
    start, cpu = time.perf_counter(), time.process_time()
    value = func()
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak = None
    if TRACE["on"]:
        peak = tracemalloc.get_traced_memory()[1] / 1048576.0
        tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    results[label] = {"wall_s": round(elapsed, 3), "cpu_s": round(cpu, 3), "max_rss_mib": round(rss, 1)}
    if peak is not None:
        results[label]["tracemalloc_peak_mib"] = round(peak, 1)
    print("%-38s wall %7.2f s  cpu %7.2f s  max RSS %7.1f MiB%s"
          % (label, elapsed, cpu, rss, "  peak %7.1f MiB" % peak if peak is not None else ""))
    return value


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--checks", type=int, default=60)
    parser.add_argument("--tracemalloc", action="store_true", help="also each stage's Python peak allocation")
    parser.add_argument("--json", default=os.path.join(REPO, "bench", "out", "report_scale.json"))
    args = parser.parse_args()
    TRACE["on"] = args.tracemalloc
    names = ["node%04d" % i for i in range(1, args.hosts + 1)]
    out = {}
    print("%d hosts x %d checks = %d check records" % (args.hosts, args.checks, args.hosts * args.checks))

    def record():
        hosts = dict((name, host_record(name, host_checks(name, i, args.checks), facts(i))) for i, name in enumerate(names))
        return build_results(run_meta("bench-run", "2026-11-30T12:00:00+00:00", len(names)), hosts)

    document = measure("record (host_record + build_results)", record, out)
    if merge_results is not None:
        quarter = max(1, len(names) // 4)
        slices = []
        for part in range(0, len(names), quarter):
            chunk = dict((n, document["hosts"][n]) for n in names[part:part + quarter])
            slices.append(build_results(run_meta("slice-%d" % part, "2026-11-30T12:00:00+00:00", len(chunk)), chunk))
        measure("merge (4 slices, merge_results)", lambda: merge_results(slices, run_id="bench-run"), out)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "results.json")

        def write_load():
            with open(path, "w", encoding="utf-8") as handle:
                json.dump(document, handle)
            with open(path, encoding="utf-8") as handle:
                return json.load(handle)

        loaded = measure("write + load results.json", write_load, out)
        out["results_json_mib"] = round(os.path.getsize(path) / 1048576.0, 1)
    view = measure("view (build_view)", lambda: _report.build_view(loaded), out)
    rendered = {}
    for fmt, func in (("html", lambda: _report.render_html(loaded, TEMPLATES, view)),
                      ("markdown", lambda: _report.render_markdown(loaded, TEMPLATES, view)),
                      ("junit", lambda: _report.render_junit(loaded, view)),
                      ("json", lambda: _report.render_json(loaded, view))):
        rendered[fmt] = measure("render %s" % fmt, func, out)
    with tempfile.TemporaryDirectory() as folder:
        for day in range(10):
            earlier = copy.deepcopy(loaded)
            earlier["run"] = run_meta("bench-%02d" % day, "2026-11-%02dT12:00:00+00:00" % (20 + day), len(names))
            store_run(folder, earlier)
            del earlier
        measure("keep the run (store_run)", lambda: store_run(folder, loaded), out)
        history = measure("read 11 runs back (load_history)", lambda: load_history(folder), out)
    measure("render all 4 with the history",
            lambda: _report.render_reports(loaded, ["html", "markdown", "junit", "json"], TEMPLATES, history=history), out)
    out["sizes_mib"] = dict((fmt, round(len(text.encode("utf-8")) / 1048576.0, 1)) for fmt, text in rendered.items())
    out["hosts"], out["checks_per_host"], out["tracemalloc"] = args.hosts, args.checks, args.tracemalloc
    print("results.json %.1f MiB; report sizes (MiB): %s" % (out["results_json_mib"], out["sizes_mib"]))
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w", encoding="utf-8") as handle:
        json.dump(out, handle, indent=2, sort_keys=True)
    print("numbers written to %s" % args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
