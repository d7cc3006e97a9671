#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Benchmarks, reported as ratios measured in one run (never as timed tests).

For each node count (32 and 64 by default), on one local-connection lab inventory:
1. the Ansible floor: one no-op module round trip (ansible.builtin.ping) per node, measured before and after the
   runs below (their mean is the floor the ratios use, so that load drifting during the bench shows);
2. the acceptance playbook (gpu, xid, dcgm: one zhisuan.ops.check task per node; results.json and the report);
3. the inspection playbook (gpu, xid, dcgm health, tuning), linear and, with --free, with the free strategy;
4. the pure cost of parsing and judging every node's nvidia-smi XML in-process;
5. the tools floor of each run (bench/floor_tools.yml): the same node-side programs its families call, run by one
   ansible.builtin.shell task per node - the run's ratio to it is what the collection adds above the unavoidable
   work (parsing, judging, record, report and their tasks).
Forks 16 and pipelining, as ansible.cfg sets them. Each node count is written to bench/out/bench-<N>.json, all of
them to bench/out/bench.json, and printed.

Usage: .venv/bin/python bench/run.py [--nodes 32 64] [--free] [--skip-acceptance] [--skip-inspect]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir))
OUT = os.path.join(REPO, "bench", "out")
BIN = os.path.dirname(sys.executable)
sys.path.insert(0, os.path.join(REPO, "collections"))


def _env():
    env = dict(os.environ)
    env["PATH"] = BIN + os.pathsep + env.get("PATH", "")
    env["ANSIBLE_CONFIG"] = os.path.join(REPO, "ansible.cfg")
    return env


def _timed(argv):
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=REPO, env=_env(), capture_output=True, text=True, timeout=1800)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-3000:] + proc.stderr[-3000:])
        raise SystemExit("bench: %s failed with rc %d" % (" ".join(argv[:2]), proc.returncode))
    return elapsed


def _pure_judge_seconds(inventory, nodes):
    import yaml

    from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import nvidia_smi
    from ansible_collections.zhisuan.ops.plugins.module_utils._judge import gpu as rules
    from ansible_collections.zhisuan.ops.plugins.plugin_utils._profiles import load_profiles

    with open(inventory) as handle:
        hosts = yaml.safe_load(handle)["all"]["children"]["gpu_nodes"]["hosts"]
    outputs = {}
    for name, hostvars in hosts.items():
        wrapper = hostvars.get("zhisuan_tools", {}).get("nvidia_smi")
        if wrapper:
            outputs[name] = subprocess.run([wrapper, "-q", "-x"], capture_output=True, text=True, timeout=60).stdout
    profiles = load_profiles()
    start = time.perf_counter()
    checks = 0
    for name, text in outputs.items():
        facts = nvidia_smi.parse_xml(text)
        profile = rules.select_profile(facts["gpus"][0]["name"], profiles) if facts["gpus"] else None
        checks += len(rules.judge_gpu(name, facts, profile, expected=hosts[name].get("zhisuan_expected")))
    return time.perf_counter() - start, checks, len(outputs)


def _run_one(nodes, args):
    base = os.path.join(OUT, "n%d" % nodes)
    shutil.rmtree(base, ignore_errors=True)
    os.makedirs(base)
    inventory = os.path.join(base, "hosts.yml")
    lab = os.path.join(base, "lab")
    subprocess.run([sys.executable, os.path.join(REPO, "lab", "labctl.py"), "up", "--dir", lab,
                    "--inventory", inventory, "--nodes", str(nodes)], check=True, capture_output=True, timeout=300)
    playbook = os.path.join(BIN, "ansible-playbook")
    runs = ["-e", "results_out_root=%s" % os.path.join(base, "runs")]

    def floor_run():
        return _timed([playbook, "-i", inventory, os.path.join(REPO, "bench", "floor.yml")])

    def tools_run(kind):
        return _timed([playbook, "-i", inventory, os.path.join(REPO, "bench", "floor_tools.yml"), "-e",
                       "bench_kind=%s" % kind])

    result = {"nodes": nodes, "forks": 16, "load_before": round(os.getloadavg()[0], 2)}
    before = floor_run()
    timed, tools = {}, {}
    if not args.skip_acceptance:
        tools["acceptance"] = tools_run("acceptance")
        timed["acceptance"] = _timed([playbook, "-i", inventory, os.path.join(REPO, "playbooks", "acceptance.yml")]
                                     + runs)
    if not args.skip_inspect:
        tools["inspect"] = tools_run("inspect")
        for strategy in ("linear", "free") if args.free else ("linear",):
            timed["inspect_%s" % strategy] = _timed(
                [playbook, "-i", inventory, os.path.join(REPO, "playbooks", "inspect.yml")] + runs
                + ["-e", "zhisuan_history_dir=%s" % os.path.join(base, "history"), "-e", "zhisuan_strategy=%s" % strategy])
    after = floor_run()
    floor = (before + after) / 2
    result.update({"floor_ping_before_s": round(before, 2), "floor_ping_after_s": round(after, 2),
                   "floor_ping_s": round(floor, 2), "load_after": round(os.getloadavg()[0], 2)})
    for kind, seconds in tools.items():
        result["tools_floor_%s_s" % kind] = round(seconds, 2)
    for name, seconds in timed.items():
        result["%s_s" % name] = round(seconds, 2)
        result["ratio_%s_to_floor" % name] = round(seconds / floor, 2)
        kind = name.split("_")[0]
        if kind in tools:
            result["ratio_%s_to_tools_floor" % name] = round(seconds / tools[kind], 2)
    pure, checks, judged = _pure_judge_seconds(inventory, nodes)
    result.update({"pure_parse_and_judge_s": round(pure, 4), "pure_checks": checks, "pure_nodes": judged,
                   "ratio_pure_judge_to_floor": round(pure / floor, 4)})
    subprocess.run([sys.executable, os.path.join(REPO, "lab", "labctl.py"), "down", "--dir", lab],
                   capture_output=True, timeout=120)
    with open(os.path.join(OUT, "bench-%d.json" % nodes), "w") as handle:
        json.dump(result, handle, indent=2)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[32, 64])
    parser.add_argument("--free", action="store_true", help="also time inspect.yml with the free strategy")
    parser.add_argument("--skip-acceptance", action="store_true")
    parser.add_argument("--skip-inspect", action="store_true")
    args = parser.parse_args()

    os.makedirs(OUT, exist_ok=True)  # other benchmarks keep their results here too
    results = []
    for nodes in args.nodes:
        result = _run_one(nodes, args)
        results.append(result)
        for key, value in result.items():
            print("%-30s %s" % (key, value))
        print()
        sys.stdout.flush()
    with open(os.path.join(OUT, "bench.json"), "w") as handle:
        json.dump(results, handle, indent=2)


if __name__ == "__main__":
    main()
