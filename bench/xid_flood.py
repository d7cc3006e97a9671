#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Benchmark: a flood of one Xid (issue 24 item 8), read as the node reads it and judged (never a timed test).

The flood is the first line of tests/fixtures/kernel-log/dmesg-decode-iso-xid13-xid43-large.log (a real Xid 13)
repeated --lines times (800,000 by default), and the first SXid report of dmesg-xid79-sxid20034-hgx.log repeated as
often when --sxid is given. It is fed line by line through xid.LogFilter (what xid_info does with journalctl or dmesg
output), then judged by the Xid rules. Prints the time of each step, the peak memory the Python heap took
(tracemalloc) and the maximum RSS of the process, and the checks the flood became (one per code and GPU).

Usage: .venv/bin/python bench/xid_flood.py [--lines 800000] [--sxid]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
import tracemalloc

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir))
sys.path.insert(0, os.path.join(REPO, "collections"))
LOGS = os.path.join(REPO, "tests", "fixtures", "kernel-log")


def _first(name, mark):
    with open(os.path.join(LOGS, name), encoding="utf-8") as handle:
        return next(line.rstrip("\n") for line in handle if mark in line)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=800000)
    parser.add_argument("--sxid", action="store_true")
    args = parser.parse_args()

    from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import xid
    from ansible_collections.zhisuan.ops.plugins.module_utils._judge.xid import judge_xid
    from ansible_collections.zhisuan.ops.plugins.plugin_utils._xid_catalog import load_catalog

    catalog = load_catalog()
    lines = [_first("dmesg-decode-iso-xid13-xid43-large.log", xid.XID_MARK)]
    if args.sxid:
        lines.append(_first("dmesg-xid79-sxid20034-hgx.log", "Fatal, Link"))
    tracemalloc.start()
    start = time.perf_counter()
    log = xid.LogFilter()
    for _ in range(args.lines):
        for line in lines:
            log.feed(line)
    fed = time.perf_counter()
    facts = log.facts()
    facts.update(source="dmesg", since=None)
    read = time.perf_counter()
    checks = judge_xid("bench", facts, catalog)
    judged = time.perf_counter()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print("flood: %d x %d line(s) fed through xid.LogFilter" % (args.lines, len(lines)))
    print("feed:  %.2f s (%.2f us a line)" % (fed - start, (fed - start) * 1e6 / (args.lines * len(lines))))
    print("facts: %.3f s, judge: %.3f s" % (read - fed, judged - read))
    print("heap peak: %.1f MiB (tracemalloc), max RSS: %.1f MiB" % (peak / 1048576.0, rss_kib / 1024.0))
    for check in checks:
        print("%s %s %s observed=%s remedy=%s" % (check["id"], check["status"], check["component"], check["observed"],
                                                  check["remedy"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
