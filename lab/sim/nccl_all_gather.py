#!/usr/bin/env python3
"""Lab stand-in for nccl-tests' ``all_gather_perf``: lab/sim/nccl_tests.py renders it (the wrapper cannot tell
the simulator which program it stands for, so each test binary has its own small simulator file).

Its faults (``nccl_slow``, ``nccl_wrong``) belong to nccl_tests.py. Standard library only.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nccl_tests  # noqa: E402

TOOLS = ("all_gather_perf",)
FAULT_KINDS = {}


def main(argv=None):
    return nccl_tests.main(argv, op="all_gather_perf")


if __name__ == "__main__":
    sys.exit(main())
