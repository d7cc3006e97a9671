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
   work (parsing, judging, record, report and their tasks);
6. where the CPU goes (--split, on by default): the ping floor and each playbook once more with every module run on a
   node wrapped in GNU time (ansible_python_interpreter = bench/out/nodepy), so that the CPU seconds of the run are
   split into the nodes' (each module process and the tools it starts) and the controller's (the rest: the
   ansible-playbook process and its workers). On the local lab both land on the same CPUs; on a cluster only the
   controller's do.
Forks 16 and pipelining, as ansible.cfg sets them. Each node count is written to bench/out/bench-<N>.json, all of
them to bench/out/bench.json, and printed.

Usage: .venv/bin/python bench/run.py [--nodes 32 64] [--free] [--skip-acceptance] [--skip-inspect] [--no-split]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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


def _children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _node_wrapper():
    """bench/out/nodepy: the lab nodes' Python under GNU time, one line of user and system CPU per module run (the
    module process and every tool it starts, which it waits for), appended to bench/out/nodepy.log."""
    if not os.access("/usr/bin/time", os.X_OK):
        return None
    path, log = os.path.join(OUT, "nodepy"), os.path.join(OUT, "nodepy.log")
    with open(path, "w") as handle:
        handle.write('#!/bin/sh\nexec /usr/bin/time -a -o %s -f "%%U %%S" %s "$@"\n' % (log, sys.executable))
    os.chmod(path, 0o755)
    return path, log


def _split(argv, wrapper):
    """The CPU seconds of one run: in all (every process of it), on the nodes (the wrapped module runs) and on the
    controller (the difference)."""
    path, log = wrapper
    if os.path.exists(log):
        os.unlink(log)
    before = _children_cpu()
    _timed(argv + ["-e", "ansible_python_interpreter=%s" % path])
    total = _children_cpu() - before
    node, runs = 0.0, 0
    with open(log) as handle:
        for line in handle:
            fields = line.split()
            if len(fields) == 2:
                node += float(fields[0]) + float(fields[1])
                runs += 1
    return {"cpu_s": round(total, 2), "node_cpu_s": round(node, 2), "module_runs": runs,
            "controller_cpu_s": round(total - node, 2)}


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

    # the lab tools' render cache filled first (lab/README.md): every run below, and the tools floor, replays it
    for kind in ("acceptance", "inspect"):
        tools_run(kind)
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
    wrapper = _node_wrapper() if args.split else None
    if wrapper:
        split = {"floor": _split([playbook, "-i", inventory, os.path.join(REPO, "bench", "floor.yml")], wrapper)}
        if not args.skip_acceptance:
            split["acceptance"] = _split([playbook, "-i", inventory, os.path.join(REPO, "playbooks", "acceptance.yml")]
                                         + runs, wrapper)
        if not args.skip_inspect:
            split["inspect_linear"] = _split(
                [playbook, "-i", inventory, os.path.join(REPO, "playbooks", "inspect.yml")] + runs
                + ["-e", "zhisuan_history_dir=%s" % os.path.join(base, "history")], wrapper)
        floor_split = split["floor"]
        for name, numbers in split.items():
            for key, value in numbers.items():
                result["split_%s_%s" % (name, key)] = value
            if name != "floor":
                # per node, what the run costs each side against one ping round trip
                result["ratio_%s_cpu_to_floor" % name] = round(numbers["cpu_s"] / floor_split["cpu_s"], 2)
                result["ratio_%s_controller_cpu_to_floor" % name] = round(
                    numbers["controller_cpu_s"] / floor_split["controller_cpu_s"], 2)
                result["ratio_%s_node_cpu_to_floor" % name] = round(
                    numbers["node_cpu_s"] / floor_split["node_cpu_s"], 2)
    elif args.split:
        result["split"] = "not measured: /usr/bin/time (GNU time, Debian package time) is missing"
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
    parser.add_argument("--no-split", dest="split", action="store_false",
                        help="do not measure the nodes' and the controller's CPU apart")
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
