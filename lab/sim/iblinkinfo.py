#!/usr/bin/env python3
"""Lab stand-in for ``iblinkinfo`` (infiniband-diags, default format): the InfiniBand fabric's own cabling view.

It prints the REAL capture ``tests/fixtures/ib/iblinkinfo-edr-sb7700-2ca-1switch.txt`` (an EDR fabric: switch
``MF0;SB7700:MSB7700/U1``, ``n01 HCA-1`` on its port 18, ``n02 HCA-1`` on port 17, ports 1-16 Down/Polling), edited
per fault. The view is the fabric's, not a node's: whichever node runs it, the output holds the ``ib_miswire``
faults of **every** node of the lab (the state files beside this node's, ``<lab>/nodes/*/state.json``):

* ``ib_miswire {switch_port}`` on node N: N's cable (the CA ``"N HCA-1"`` of the capture) is on switch port
  ``switch_port`` instead of its own: the switch's line of that port becomes the line of N's planned port with the
  port number changed, the planned port's line becomes the idle port's line (``Down/ Polling``, no peer) with its
  number changed, and N's own CA block, where the capture has one, names the new port. ``switch_port`` must be an
  idle (Down) port of the capture. Column widths stay the capture's.

Only the plain invocation (no arguments) is implemented; anything else prints ``lab iblinkinfo: unsupported
arguments`` and exits 2. Optional in a scenario (``optional: [iblinkinfo]``, lab/README.md): only then is it in a
node's ``zhisuan_tools``. The scenario's nodes that are in the capture (``n01``, ``n02``) are the lab's IB nodes.
Invoked through the per-node wrapper written by ``lab/labctl.py up``. Standard library only.
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import FIXTURES_DIR, LabError, fabric_faults, own_faults, run_sim, split_argv, unsupported  # noqa: E402

TOOLS = ("iblinkinfo",)
OPTIONAL = True
CAPTURE = os.path.join(FIXTURES_DIR, "ib", "iblinkinfo-edr-sb7700-2ca-1switch.txt")
HCA = "HCA-1"
FAULT_KINDS = {
    "ib_miswire": {"switch_port": int},
}
_SWITCH_RE = re.compile(r"^Switch:\s+(0x[0-9A-Fa-f]+)\s+(.*):\s*$")
# a switch port line: lid, port[..] ==( ... )==> [peer lid] [peer port][..] "peer name"
_SWITCH_PORT_RE = re.compile(r'^(\s+\d+)(\s+)(\d+)(\[[^\]]*\] ==\(.*)$')
_PEER_RE = re.compile(r'^(.*==>\s+\d+)(\s+)(\d+)(\[[^\]]*\] "(.*)".*)$')


def _read():
    with open(CAPTURE, encoding="utf-8") as fh:
        return fh.read()


def _switch_ports(lines):
    """{port number: line index} of the capture's switch port lines, and {peer name: port}."""
    ports, peers, inside = {}, {}, False
    for index, line in enumerate(lines):
        if line.startswith(("CA:", "Switch:")):
            inside = bool(_SWITCH_RE.match(line.rstrip("\n")))
            continue
        match = _SWITCH_PORT_RE.match(line.rstrip("\n")) if inside else None
        if match:
            ports[int(match.group(3))] = index
            peer = re.search(r'"([^"]*)" \( \)$', line.rstrip("\n"))
            if peer and peer.group(1):
                peers[peer.group(1)] = int(match.group(3))
    return ports, peers


def capture_nodes():
    """The node names the capture's switch sees (``n01``, ``n02``): the CAs ``"<node> HCA-1"``."""
    _, peers = _switch_ports(_read().splitlines(True))
    return sorted(name[:-len(HCA) - 1] for name in peers if name.endswith(" " + HCA))


def _renumber(line, old, new):
    match = _SWITCH_PORT_RE.match(line.rstrip("\n"))
    width = len(match.group(2)) + len(match.group(3))
    return "%s%*d%s%s" % (match.group(1), width, new, match.group(4), line[len(line.rstrip("\n")):])


def _idle(lines, index):
    return "Down/ Polling" in lines[index]


def check_fault(fault, node, where="fault"):
    lines = _read().splitlines(True)
    ports, _ = _switch_ports(lines)
    name = node.get("name")
    if name is not None and name not in capture_nodes():
        raise LabError(f"{where}: fault 'ib_miswire' is for a node the fabric capture holds ({', '.join(capture_nodes())}), "
                       f"not {name!r}")
    port = fault["switch_port"]
    if port not in ports or not _idle(lines, ports[port]):
        idle = sorted(p for p, i in ports.items() if _idle(lines, i))
        raise LabError(f"{where}: fault 'ib_miswire' switch_port must be an idle port of the switch "
                       f"({idle[0]}-{idle[-1]}), got {port}")


def miswire(text, node, new_port):
    """The capture with ``node``'s cable moved to switch port ``new_port``."""
    lines = text.splitlines(True)
    ports, peers = _switch_ports(lines)
    ca = "%s %s" % (node, HCA)
    if ca not in peers:
        raise LabError(f"{CAPTURE}: no switch port sees {ca!r}")
    old_port = peers[ca]
    if new_port not in ports or not _idle(lines, ports[new_port]):
        raise LabError(f"{CAPTURE}: switch port {new_port} is not idle")
    old_index, new_index = ports[old_port], ports[new_port]
    live, idle = lines[old_index], lines[new_index]
    lines[new_index] = _renumber(live, old_port, new_port)
    lines[old_index] = _renumber(idle, new_port, old_port)
    # the CA's own block (header "CA: <node> HCA-1:"), where the capture has one: its peer port is the new one
    for index, line in enumerate(lines):
        if line.rstrip("\n") == "CA: %s:" % ca and index + 1 < len(lines):
            match = _PEER_RE.match(lines[index + 1].rstrip("\n"))
            if match and int(match.group(3)) == old_port:
                width = len(match.group(2)) + len(match.group(3))
                lines[index + 1] = "%s%*d%s%s" % (match.group(1), width, new_port, match.group(4),
                                                 lines[index + 1][len(lines[index + 1].rstrip("\n")):])
    return "".join(lines)


def render(faults):
    text = _read()
    for node, fault in faults:
        text = miswire(text, node, fault["switch_port"])
    return text


def check_state(state):
    faults = [(state["node"], fault) for fault in own_faults(state, FAULT_KINDS)]
    render(faults)


def main(argv=None):
    state_path, args = split_argv(argv, "iblinkinfo")

    def work(state):
        if args:
            return unsupported("iblinkinfo", args, "iblinkinfo with no arguments")
        sys.stdout.write(render(fabric_faults(state_path, FAULT_KINDS)))
        return 0

    return run_sim("iblinkinfo", state_path, work)


if __name__ == "__main__":
    sys.exit(main())
