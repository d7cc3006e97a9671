#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Benchmark: a full RDMA pair mesh on N lab nodes with a fixed per-pair time t.

The lab's ib_write_bw pairs meet over real TCP and hold the connection for t seconds (perftest -D t). The circle
method needs N-1 rounds (N even), so the ideal wall time of the rounds is (N-1) x t. Printed:

* rounds, pairs, and whether every pair was measured;
* rounds_s: wall time from the first round's start to the judgement (read from Ansible's log timestamps);
* ratio_rounds = rounds_s / ((N-1) x t) -- the goal is <= 1.15;
* playbook_s and ratio_playbook (the whole play: results start, plan, rounds, judge, results.json, report);
* overhead_per_round_s = rounds_s / rounds - t (Ansible's dispatch of one round over N nodes).

Usage: .venv/bin/python bench/pairs.py [--nodes 16] [--pair-seconds 30]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir))
OUT = os.path.join(REPO, "bench", "out", "pairs")
BIN = os.path.dirname(sys.executable)
PLAYBOOK = os.path.join(REPO, "tests", "integration", "playbooks", "rdma_pairs.yml")
_TASK = re.compile(r"^\S+ (\d\d:\d\d:\d\d,\d+) .*TASK \[(.*?)\]")


def _log_times(path):
    """(first round task start, judgement task start) as datetimes, from ANSIBLE_LOG_PATH's timestamps."""
    first = judge = None
    with open(path) as handle:
        for line in handle:
            found = _TASK.match(line)
            if not found:
                continue
            when = datetime.datetime.strptime(found.group(1), "%H:%M:%S,%f")
            if first is None and "Run this node's side of the round" in found.group(2):
                first = when
            if "Judge the pair matrix" in found.group(2):
                judge = when
    if first is None or judge is None:
        raise SystemExit("bench: could not find the round and judgement tasks in %s" % path)
    return first, judge


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=16)
    parser.add_argument("--pair-seconds", type=int, default=30)
    args = parser.parse_args()

    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    inventory = os.path.join(OUT, "hosts.yml")
    labctl = [sys.executable, os.path.join(REPO, "lab", "labctl.py")]
    subprocess.run(labctl + ["up", "--dir", os.path.join(OUT, "lab"), "--inventory", inventory, "--nodes",
                             str(args.nodes)], check=True, capture_output=True, timeout=120)
    env = dict(os.environ, PATH=BIN + os.pathsep + os.environ.get("PATH", ""),
               ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_LOG_PATH=os.path.join(OUT, "ansible.log"),
               ANSIBLE_FORKS=str(max(16, args.nodes)))
    extra = {"zhisuan_thresholds": {"rdma": {"duration": args.pair_seconds, "floor_gbps": 180}},
             "results_out_root": os.path.join(OUT, "runs"), "zhisuan_run_id": "bench", "check_rdma_pairs_base_port": 38515}
    start = time.perf_counter()
    proc = subprocess.run([os.path.join(BIN, "ansible-playbook"), "-i", inventory, PLAYBOOK, "-e", json.dumps(extra)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=7200)
    playbook = time.perf_counter() - start
    try:
        if proc.returncode != 0:
            sys.stderr.write(proc.stdout[-3000:] + proc.stderr[-3000:])
            raise SystemExit("bench: the playbook failed with rc %d" % proc.returncode)
        with open(os.path.join(OUT, "runs", "bench", "results.json")) as handle:
            matrix = json.load(handle)["cluster"]["fabric"]["rdma_pairs"]
        first, judge = _log_times(os.path.join(OUT, "ansible.log"))
    finally:
        subprocess.run(labctl + ["down", "--dir", os.path.join(OUT, "lab")], capture_output=True, timeout=120)
    rounds_s = (judge - first).total_seconds()
    ideal = (args.nodes - 1) * args.pair_seconds
    result = {
        "nodes": args.nodes,
        "pair_seconds": args.pair_seconds,
        "rounds": matrix["rounds"],
        "pairs": len(matrix["pairs"]),
        "pairs_measured": len([p for p in matrix["pairs"] if p["status"] != "error"]),
        "ideal_s": ideal,
        "rounds_s": round(rounds_s, 1),
        "ratio_rounds": round(rounds_s / ideal, 3),
        "playbook_s": round(playbook, 1),
        "ratio_playbook": round(playbook / ideal, 3),
        "overhead_per_round_s": round(rounds_s / matrix["rounds"] - args.pair_seconds, 2),
        "cpus": os.cpu_count(),
    }
    with open(os.path.join(OUT, "bench.json"), "w") as handle:
        json.dump(result, handle, indent=2)
    for key, value in result.items():
        print("%-22s %s" % (key, value))


if __name__ == "__main__":
    main()
