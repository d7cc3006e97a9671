"""A lab BMC booted its node (IPMI chassis power on/cycle/reset through ipmi_sim's chassis_control): clear the
faults a power cycle fixes from the node's state.json and write one line to the BMC's power log.

    power_hook.py NODE_STATE POWER_LOG NODE [EVENT]

EVENT names the boot in the log line (default ``power cycle``; the remediate_node role's simulated in-band reboot
passes ``reboot (simulated)``).

Standard library only (run as ``python -I``); the faults cleared are lab/sim/_common.py POWER_CYCLE_CLEARS.
"""

import datetime
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "sim"))
import _common  # noqa: E402


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) not in (3, 4):
        sys.stderr.write("usage: power_hook.py NODE_STATE POWER_LOG NODE [EVENT]\n")
        return 2
    state, log, node = argv[:3]
    event = argv[3] if len(argv) == 4 else "power cycle"
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S+00:00")
    try:
        cleared = _common.power_cycle(state, when)
        line = f"{when} {node} {event}: the node booted; faults cleared: {', '.join(cleared) or 'none'}\n"
        rc = 0
    except (OSError, ValueError, _common.LabError) as exc:
        line = f"{when} {node} {event}: cannot update the node state {state}: {exc}\n"
        rc = 1
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(line)
    return rc


if __name__ == "__main__":
    sys.exit(main())
