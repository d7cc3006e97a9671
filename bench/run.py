#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Benchmarks, reported as ratios measured in one run (never as timed tests).

1. The acceptance playbook on N lab nodes (the gpu, xid and dcgm families: collect + judge + keep; results.json and
   the report) against the Ansible floor: one no-op module round trip (ansible.builtin.ping) per node on the same
   inventory. Ratio = acceptance / floor.
2. The pure cost of parsing and judging one node's nvidia-smi XML, in-process, against one ping round trip per node.
3. With --inspect: the inspection run (gpu, xid, dcgm health, tuning) on the same nodes, linear and with the free
   strategy, each against the floor (forks 16, pipelining on, as ansible.cfg sets them).

Usage: .venv/bin/python bench/run.py [--nodes 64] [--inspect] [--skip-acceptance]
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=64)
    parser.add_argument("--inspect", action="store_true", help="also time inspect.yml, linear and free")
    parser.add_argument("--skip-acceptance", action="store_true")
    args = parser.parse_args()

    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    inventory = os.path.join(OUT, "hosts.yml")
    subprocess.run([sys.executable, os.path.join(REPO, "lab", "labctl.py"), "up", "--dir", os.path.join(OUT, "lab"),
                    "--inventory", inventory, "--nodes", str(args.nodes)], check=True, capture_output=True, timeout=120)
    playbook = os.path.join(BIN, "ansible-playbook")
    floor = _timed([playbook, "-i", inventory, os.path.join(REPO, "bench", "floor.yml")])
    result = {"nodes": args.nodes, "forks": 16, "floor_ping_s": round(floor, 2)}
    if not args.skip_acceptance:
        acceptance = _timed([playbook, "-i", inventory, os.path.join(REPO, "playbooks", "acceptance.yml"),
                             "-e", "results_out_root=%s" % os.path.join(OUT, "runs")])
        pure, checks, judged = _pure_judge_seconds(inventory, args.nodes)
        result.update({
            "acceptance_s": round(acceptance, 2),
            "ratio_acceptance_to_floor": round(acceptance / floor, 2),
            "pure_parse_and_judge_s": round(pure, 4),
            "pure_checks": checks,
            "pure_nodes": judged,
            "ratio_pure_judge_to_floor": round(pure / floor, 4),
        })
    if args.inspect:
        for strategy in ("linear", "free"):
            seconds = _timed([playbook, "-i", inventory, os.path.join(REPO, "playbooks", "inspect.yml"),
                              "-e", "results_out_root=%s" % os.path.join(OUT, "runs"),
                              "-e", "zhisuan_history_dir=%s" % os.path.join(OUT, "history"),
                              "-e", "zhisuan_strategy=%s" % strategy])
            result["inspect_%s_s" % strategy] = round(seconds, 2)
            result["ratio_inspect_%s_to_floor" % strategy] = round(seconds / floor, 2)
    with open(os.path.join(OUT, "bench.json"), "w") as handle:
        json.dump(result, handle, indent=2)
    for key, value in result.items():
        print("%-28s %s" % (key, value))


if __name__ == "__main__":
    main()
