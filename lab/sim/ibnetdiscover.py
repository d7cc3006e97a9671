#!/usr/bin/env python3
"""Lab stand-in for ``ibnetdiscover -p`` (infiniband-diags ports report): the InfiniBand subnet's view of every link.

It prints the REAL capture ``tests/fixtures/ib/ibnetdiscover-p-edr-osc-exporter.txt`` (treydock/infiniband_exporter's
fixture of an EDR cluster: ``o0001 HCA-1`` on leaf ``ib-i1l1s01`` port 10, ``o0002 HCA-1`` on its port 11,
``p0001 HCA-1`` on leaf ``ib-i4l1s01`` port 35, the leaf's uplink port 1 to the spine ``ib-i1l2s01``, an idle
port 37), edited per fault. The view is the subnet's: whichever node runs it, the output holds the faults of
**every** node of the lab (the state files beside this node's, ``<lab>/nodes/*/state.json``):

* ``ib_swap {peer}`` on node N: N's and ``peer``'s cables are swapped on their switch ports (both must be on the
  same leaf): N's CA line names the peer's switch port and the switch line of that port names N, and the other way
  round (the GUID and LID of each CA stay its own; column widths stay the capture's).
* ``ib_pull`` on node N: N's cable is out: N's CA line is gone (the subnet no longer reaches the CA) and the
  switch's line of N's port becomes an idle port line laid out as the capture's own idle line (``4x ???`` and
  the switch's name).

Only ``-p`` / ``--ports`` is implemented (what net_info runs); anything else prints ``lab ibnetdiscover:
unsupported arguments`` and exits 2. Optional in a scenario (``optional: [ibnetdiscover]``, lab/README.md): only
then is it in a node's ``zhisuan_tools``. The scenario's nodes the capture holds (``o0001``, ``o0002``,
``p0001``) are the lab's IB nodes. Standard library only.
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import FIXTURES_DIR, LabError, fabric_faults, own_faults, run_sim, split_argv, unsupported  # noqa: E402

TOOLS = ("ibnetdiscover",)
OPTIONAL = True
CAPTURE = os.path.join(FIXTURES_DIR, "ib", "ibnetdiscover-p-edr-osc-exporter.txt")
HCA = "HCA-1"
FAULT_KINDS = {
    "ib_swap": {"peer": str},
    "ib_pull": {},
}
# CA   134  1 0x... 4x EDR - SW  1719 10 0x... ( 'o0001 HCA-1' - 'ib-i1l1s01' )
_CA_RE = re.compile(r"^(CA\s+\d+\s+\d+\s+0x[0-9a-f]+\s+\S+\s+\S+\s+-\s+SW\s+\d+)(\s+)(\d+)(\s+0x[0-9a-f]+ \( '(.*)' - '(.*)' \))$")
# SW  1719 10 0x... 4x EDR - CA   134  1 0x... ( 'ib-i1l1s01' - 'o0001 HCA-1' )
_SW_RE = re.compile(r"^(SW\s+\d+)(\s+)(\d+)( 0x[0-9a-f]+) (\S+ \S+ - CA .*\( '(.*)' - '(.*)' \))$")
_IDLE_RE = re.compile(r"^(SW\s+\d+)(\s+)(\d+)( 0x[0-9a-f]+ )(\S+ \?\?\?\s+)'(.*)'$")


def _read():
    with open(CAPTURE, encoding="utf-8") as fh:
        return fh.read()


def _ca_lines(lines):
    """{node: (CA line index, SW line index)} of the capture's CAs ``"<node> HCA-1"``."""
    cas, sws = {}, {}
    for index, line in enumerate(lines):
        text = line.rstrip("\n")
        match = _CA_RE.match(text)
        if match and match.group(5).endswith(" " + HCA):
            cas[match.group(5)[:-len(HCA) - 1]] = index
        match = _SW_RE.match(text)
        if match and match.group(7).endswith(" " + HCA):
            sws[match.group(7)[:-len(HCA) - 1]] = index
    return dict((node, (cas[node], sws.get(node))) for node in cas)


def capture_nodes():
    return sorted(_ca_lines(_read().splitlines(True)))


def switch_of(node):
    """``(switch name, switch port)`` of a node in the unedited capture."""
    lines = _read().splitlines(True)
    index = _ca_lines(lines)[node][0]
    match = _CA_RE.match(lines[index].rstrip("\n"))
    return match.group(6), int(match.group(3))


def _renumber(match, new):
    """A line with its port number (group 3) replaced, the column width kept."""
    width = len(match.group(2)) + len(match.group(3))
    return "%s%*d%s" % (match.group(1), width, new, match.string[match.end(3):])


def check_fault(fault, node, where="fault"):
    name = node.get("name")
    nodes = capture_nodes()
    if name is not None and name not in nodes:
        raise LabError(f"{where}: fault {fault['kind']!r} is for a node the subnet capture holds ({', '.join(nodes)}), "
                       f"not {name!r}")
    if fault["kind"] == "ib_swap":
        peer = fault["peer"]
        if peer not in nodes or peer == name:
            raise LabError(f"{where}: fault 'ib_swap' peer must be another node of the capture ({', '.join(nodes)}), "
                           f"got {peer!r}")
        if name is not None and switch_of(peer)[0] != switch_of(name)[0]:
            raise LabError(f"{where}: fault 'ib_swap': {name} and {peer} are on different leaves of the capture")


def swap(text, node, peer):
    lines = text.splitlines(True)
    where = _ca_lines(lines)
    if node not in where or peer not in where:
        raise LabError(f"{CAPTURE}: no CA line for {node!r} or {peer!r} (pulled?)")
    (ca_a, sw_a), (ca_b, sw_b) = where[node], where[peer]
    match_a, match_b = _CA_RE.match(lines[ca_a].rstrip("\n")), _CA_RE.match(lines[ca_b].rstrip("\n"))
    port_a, port_b = int(match_a.group(3)), int(match_b.group(3))
    lines[ca_a] = _renumber(match_a, port_b) + "\n"
    lines[ca_b] = _renumber(match_b, port_a) + "\n"
    if sw_a is not None and sw_b is not None:
        swa, swb = _SW_RE.match(lines[sw_a].rstrip("\n")), _SW_RE.match(lines[sw_b].rstrip("\n"))
        lines[sw_a] = _renumber(swa, port_b) + "\n"
        lines[sw_b] = _renumber(swb, port_a) + "\n"
    return "".join(lines)


def pull(text, node):
    lines = text.splitlines(True)
    where = _ca_lines(lines)
    if node not in where:
        raise LabError(f"{CAPTURE}: no CA line for {node!r}")
    ca, sw = where[node]
    idle = next((_IDLE_RE.match(line.rstrip("\n")) for line in lines if _IDLE_RE.match(line.rstrip("\n"))), None)
    if sw is not None:
        match = _SW_RE.match(lines[sw].rstrip("\n"))
        if idle is None:
            raise LabError(f"{CAPTURE}: no idle port line to lay the pulled port out as")
        # the capture's idle line, with this switch's LID, port, GUID and name
        name = match.group(6)
        lines[sw] = "%s%s%s%s%s'%s'\n" % (match.group(1), match.group(2), match.group(3), match.group(4) + " ",
                                          idle.group(5), name)
    lines[ca] = ""
    return "".join(lines)


def render(faults):
    text = _read()
    for node, fault in faults:
        if fault["kind"] == "ib_swap":
            text = swap(text, node, fault["peer"])
    for node, fault in faults:
        if fault["kind"] == "ib_pull":
            text = pull(text, node)
    return text


def check_state(state):
    faults = [(state["node"], fault) for fault in own_faults(state, FAULT_KINDS)]
    for node, fault in faults:
        check_fault(fault, {"name": node})
    render(faults)


def main(argv=None):
    state_path, args = split_argv(argv, "ibnetdiscover")

    def work(state):
        if args not in (["-p"], ["--ports"]):
            return unsupported("ibnetdiscover", args, "ibnetdiscover -p (the ports report)")
        sys.stdout.write(render(fabric_faults(state_path, FAULT_KINDS)))
        return 0

    return run_sim("ibnetdiscover", state_path, work)


if __name__ == "__main__":
    sys.exit(main())
