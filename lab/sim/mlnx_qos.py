#!/usr/bin/env python3
"""Lab stand-in for ``mlnx_qos -i IF`` (NVIDIA/Mellanox OFED) on one simulated node: the RoCE QoS of a port.

Every port prints the REAL capture ``tests/fixtures/qos/mlnx_qos-i-eth4-trust-dscp-pfc3.txt`` (a ConnectX port
with trust dscp, PFC on priority 3 and the default DSCP->priority map), edited per the node's faults:

* ``qos_trust {port, trust}``: the ``Priority trust state:`` line of ``port`` reads ``trust`` (``pcp`` or ``dscp``,
  the two values mlnx_qos prints);
* ``dscp_prio {port, dscp, prio}``: DSCP value ``dscp`` (0-63) moves from its line of the ``dscp2prio mapping`` to
  the line of priority ``prio`` (written first there, in mlnx_qos's ``%02d,`` form), as a host whose map was set by
  hand differs from the others.

Only ``-i IF`` (``--interface``) is implemented; anything else prints ``lab mlnx_qos: unsupported arguments`` and exits
2. Optional in a scenario (``optional: [mlnx_qos]``, lab/README.md): only then is it in a node's ``zhisuan_tools``.
Invoked through the per-node wrapper written by ``lab/labctl.py up``. Standard library only.
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import FIXTURES_DIR, LabError, hang_if_asked, load_state, own_faults, split_argv, unsupported  # noqa: E402

TOOLS = ("mlnx_qos",)
OPTIONAL = True
CAPTURE = os.path.join(FIXTURES_DIR, "qos", "mlnx_qos-i-eth4-trust-dscp-pfc3.txt")
FAULT_KINDS = {
    "qos_trust": {"port": str, "trust": str},
    "dscp_prio": {"port": str, "dscp": int, "prio": int},
}
TRUST_VALUES = ("pcp", "dscp")
_TRUST_RE = re.compile(r"^(Priority trust state: )(\S+)$", re.MULTILINE)
_PRIO_RE = re.compile(r"^(\s+prio:)(\d) dscp:((?:\d\d,)*)$", re.MULTILINE)


def check_fault(fault, node, where="fault"):
    if not fault["port"].strip():
        raise LabError(f"{where}: fault {fault['kind']!r} needs a non-empty 'port'")
    if fault["kind"] == "qos_trust" and fault["trust"] not in TRUST_VALUES:
        raise LabError(f"{where}: fault 'qos_trust' trust must be one of {', '.join(TRUST_VALUES)}, got {fault['trust']!r}")
    if fault["kind"] == "dscp_prio":
        if not 0 <= fault["dscp"] <= 63:
            raise LabError(f"{where}: fault 'dscp_prio' dscp must be 0..63, got {fault['dscp']}")
        if not 0 <= fault["prio"] <= 7:
            raise LabError(f"{where}: fault 'dscp_prio' prio must be 0..7, got {fault['prio']}")


def _read_capture():
    with open(CAPTURE, encoding="utf-8") as fh:
        return fh.read()


def _move_dscp(text, dscp, prio):
    """``dscp`` off its priority line and first onto ``prio``'s (the capture's ``%02d,`` list form)."""
    token = "%02d," % dscp

    def edit(match):
        values = [match.group(3)[i:i + 3] for i in range(0, len(match.group(3)), 3)]
        values = [value for value in values if value != token]
        if int(match.group(2)) == prio:
            values.insert(0, token)
        return "%s%s dscp:%s" % (match.group(1), match.group(2), "".join(values))

    if not any(token in match.group(3) for match in _PRIO_RE.finditer(text)):
        raise LabError(f"{CAPTURE}: DSCP {dscp} is on no dscp2prio line")
    return _PRIO_RE.sub(edit, text)


def render(state, port):
    text = _read_capture()
    for fault in own_faults(state, FAULT_KINDS, check_fault):
        if fault["port"] != port:
            continue
        if fault["kind"] == "qos_trust":
            if not _TRUST_RE.search(text):
                raise LabError(f"{CAPTURE}: no 'Priority trust state:' line to edit")
            text = _TRUST_RE.sub(lambda match: match.group(1) + fault["trust"], text, count=1)
        else:
            text = _move_dscp(text, fault["dscp"], fault["prio"])
    return text


def check_state(state):
    for fault in own_faults(state, FAULT_KINDS, check_fault):
        render(state, fault["port"])


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    state_path, args = split_argv(argv, "mlnx_qos")
    try:
        state = load_state(state_path)
    except (OSError, ValueError, LabError) as exc:
        sys.stderr.write(f"lab mlnx_qos: cannot read the node state {state_path}: {exc}\n")
        return 3
    hang_if_asked(state, "mlnx_qos")
    if len(args) != 2 or args[0] not in ("-i", "--interface") or not args[1]:
        return unsupported("mlnx_qos", args, "-i IF")
    try:
        sys.stdout.write(render(state, args[1]))
    except LabError as exc:
        sys.stderr.write(f"lab mlnx_qos: {exc}\n")
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
