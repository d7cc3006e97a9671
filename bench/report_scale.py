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
   render with them (comparison with the previous run, KPIs);
7. playbook: the saved run re-rendered with ``ansible-playbook playbooks/report.yml`` (every format, the history
   folder beside the runs), first with an empty history and then again, each against the floor (a one-task playbook
   on localhost, bench/report_floor.yml) measured in the same run: wall seconds above the floor and the peak RSS of
   the largest process of the run (ansible-playbook or its forked worker; getrusage of the children).

Usage: .venv/bin/python bench/report_scale.py [--hosts 1000] [--checks 60] [--tracemalloc] [--repeat 3]
                                             [--no-playbook] [--json bench/out/report_scale.json]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import resource
import shutil
import statistics
import subprocess
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

TEMPLATES = os.path.join(REPO, "collections", "ansible_collections", "zhisuan", "ops", "data", "templates")
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
RUSAGE = ("import resource, subprocess, sys, time; t = time.perf_counter(); rc = subprocess.call(sys.argv[1:], "
          "stdout=subprocess.DEVNULL); u = resource.getrusage(resource.RUSAGE_CHILDREN); "
          "print(rc, time.perf_counter() - t, u.ru_maxrss, u.ru_utime + u.ru_stime)")


def _playbook(argv):
    """(seconds, peak RSS MiB, CPU seconds) of one ansible-playbook run, from a fresh wrapper process (its children's
    rusage)."""
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"),
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    out = subprocess.run([sys.executable, "-c", RUSAGE, os.path.join(os.path.dirname(sys.executable), "ansible-playbook")]
                         + argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=600, check=True)
    rc, seconds, rss_kib, cpu = out.stdout.split()
    if rc != "0":
        raise SystemExit("ansible-playbook %s failed with rc %s" % (" ".join(argv), rc))
    return float(seconds), int(rss_kib) / 1024.0, float(cpu)


def playbook_stage(document, repeat, out):
    """Re-render the saved run with playbooks/report.yml against the one-task floor, ``repeat`` times each."""
    local = ["-i", "localhost,", "-e", "ansible_python_interpreter=%s" % sys.executable]
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = os.path.join(tmp, "out", "bench-run")
        os.makedirs(run_dir)
        src = os.path.join(run_dir, "results.json")
        with open(src, "w", encoding="utf-8") as handle:
            json.dump(document, handle)
        render = local + [os.path.join("playbooks", "report.yml"), "-e", "report_src=%s" % src]
        floor, first, again = [], [], []
        for dummy in range(repeat):
            shutil.rmtree(os.path.join(tmp, "history"), ignore_errors=True)
            for name in os.listdir(run_dir):
                if name != "results.json":
                    os.unlink(os.path.join(run_dir, name))
            floor.append(_playbook(local + [os.path.join("bench", "report_floor.yml")]))
            first.append(_playbook(render))
            again.append(_playbook(render))
        sizes = dict((name, round(os.path.getsize(os.path.join(run_dir, name)) / 1048576.0, 1))
                     for name in sorted(os.listdir(run_dir)))
    floor_s = statistics.median(s for s, dummy, dummy_cpu in floor)
    floor_cpu = statistics.median(c for dummy, dummy_r, c in floor)
    for label, runs in (("first render (empty history)", first), ("re-render (history of 1 run)", again)):
        seconds = statistics.median(s for s, dummy, dummy_cpu in runs)
        cpu = statistics.median(c for dummy, dummy_r, c in runs)
        rss = max(r for dummy, r, dummy_cpu in runs)
        out.setdefault("playbook", {})[label] = {"wall_s": round(seconds, 2), "above_floor_s": round(seconds - floor_s, 2),
                                                 "cpu_s": round(cpu, 2), "cpu_above_floor_s": round(cpu - floor_cpu, 2),
                                                 "peak_rss_mib": round(rss, 1), "runs": len(runs)}
        print("playbooks/report.yml, %-30s wall %6.2f s (%5.2f above the floor), CPU %5.2f s (%5.2f above), "
              "peak RSS %6.1f MiB" % (label, seconds, seconds - floor_s, cpu, cpu - floor_cpu, rss))
    out["playbook"]["floor"] = {"wall_s": round(floor_s, 2), "cpu_s": round(floor_cpu, 2),
                                "peak_rss_mib": round(max(r for dummy, r, dummy_cpu in floor), 1), "runs": len(floor)}
    out["playbook"]["files_mib"] = sizes
    print("floor (bench/report_floor.yml)             wall %6.2f s; files written (MiB): %s" % (floor_s, sizes))


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
    parser.add_argument("--repeat", type=int, default=3, help="playbook runs of each kind (the median is kept)")
    parser.add_argument("--no-playbook", action="store_true", help="leave out the ansible-playbook stage")
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
    with tempfile.TemporaryDirectory() as dest:
        measure("stream all 4 to files (write_reports)",
                lambda: _report.write_reports(loaded, dest, list(_report.FORMATS)), out)
    with tempfile.TemporaryDirectory() as folder:
        for day in range(10):
            earlier = copy.deepcopy(loaded)
            earlier["run"] = run_meta("bench-%02d" % day, "2026-11-%02dT12:00:00+00:00" % (20 + day), len(names))
            store_run(folder, earlier)
            del earlier
        measure("keep the run (store_run)", lambda: store_run(folder, loaded), out)
        history = measure("read 11 runs back (load_history)", lambda: load_history(folder), out)
    with tempfile.TemporaryDirectory() as dest:
        measure("stream all 4 with the history",
                lambda: _report.write_reports(loaded, dest, list(_report.FORMATS), TEMPLATES, history=history), out)
    out["sizes_mib"] = dict((fmt, round(len(text.encode("utf-8")) / 1048576.0, 1)) for fmt, text in rendered.items())
    del rendered, history
    if not args.no_playbook:
        playbook_stage(loaded, args.repeat, out)
    out["hosts"], out["checks_per_host"], out["tracemalloc"] = args.hosts, args.checks, args.tracemalloc
    print("results.json %.1f MiB; report sizes (MiB): %s" % (out["results_json_mib"], out["sizes_mib"]))
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w", encoding="utf-8") as handle:
        json.dump(out, handle, indent=2, sort_keys=True)
    print("numbers written to %s" % args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
