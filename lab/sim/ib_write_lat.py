#!/usr/bin/env python3
"""Lab stand-in for perftest's ``ib_write_lat``: lab/sim/perftest.py renders it (the wrapper cannot tell the
simulator which program it stands for, so each perftest program has its own small simulator file).

Its faults (``rdma_slow_node``, ``rdma_slow_link``, ``rdma_no_device``) belong to perftest.py. Standard library only.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perftest  # noqa: E402

TOOLS = ("ib_write_lat",)
FAULT_KINDS = {}


def main(argv=None):
    return perftest.main(argv, tool="ib_write_lat")


if __name__ == "__main__":
    sys.exit(main())
