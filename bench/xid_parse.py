#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Benchmark: parsing (and judging) the large real kernel log, as a ratio to reading it (never a timed test).

The log is tests/fixtures/kernel-log/dmesg-decode-iso-xid13-xid43-large.log (122 KB, 636 Xid lines: 629 x Xid 13,
7 x Xid 43). Reading = open + read + decode of the file; parse = _gpu.xid.parse on the text; judge = the Xid rules
on the parsed facts. Each is the best of --repeat runs of --loops iterations.

Usage: .venv/bin/python bench/xid_parse.py [--repeat 5] [--loops 20]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir))
sys.path.insert(0, os.path.join(REPO, "collections"))
LOG = os.path.join(REPO, "tests", "fixtures", "kernel-log", "dmesg-decode-iso-xid13-xid43-large.log")


def _best(func, repeat, loops):
    best = None
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(loops):
            func()
        elapsed = (time.perf_counter() - start) / loops
        best = elapsed if best is None else min(best, elapsed)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--loops", type=int, default=20)
    args = parser.parse_args()

    from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import xid
    from ansible_collections.zhisuan.ops.plugins.module_utils._judge.xid import judge_xid
    from ansible_collections.zhisuan.ops.plugins.plugin_utils._xid_catalog import load_catalog

    def read():
        with open(LOG, "rb") as handle:
            return handle.read().decode("utf-8", "replace")

    text = read()
    catalog = load_catalog()
    parsed = xid.parse(text)
    facts = dict(parsed, source="dmesg", since=None)
    read_s = _best(read, args.repeat, args.loops)
    parse_s = _best(lambda: xid.parse(text), args.repeat, args.loops)
    judge_s = _best(lambda: judge_xid("bench", facts, catalog), args.repeat, args.loops)
    size = len(text.encode("utf-8"))
    name = os.path.relpath(LOG, REPO)
    print("log: %s (%d bytes, %d lines, %d Xid events)" % (name, size, parsed["lines"], len(parsed["events"])))
    print("read:  %.3f ms" % (read_s * 1000))
    print("parse: %.3f ms  (ratio parse/read = %.1f)" % (parse_s * 1000, parse_s / read_s))
    print("judge: %.3f ms  (ratio judge/read = %.1f)" % (judge_s * 1000, judge_s / read_s))
    return 0


if __name__ == "__main__":
    sys.exit(main())
