#!/usr/bin/env python3
"""Lab stand-in for ``ibstatus``: the same node and faults as lab/sim/ibstat.py (which owns the fault kinds
``ib_port_down``, ``ib_rate``, ``no_hca``), printed in ibstatus's layout. A separate file because a lab wrapper
does not pass the name of the program it stands for, and ibstat and ibstatus both run without arguments.

Invoked through the per-node wrapper written by ``lab/labctl.py up``. Standard library only.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ibstat  # noqa: E402

TOOLS = ("ibstatus",)
FAULT_KINDS = {}


def main(argv=None):
    return ibstat.main(argv, tool="ibstatus")


if __name__ == "__main__":
    sys.exit(main())
