#!/usr/bin/env python3
"""Lab stand-in for ``ibstat`` and ``ibstatus`` on one simulated node with eight NDR400 InfiniBand rails.

``ibstat`` replays the REAL capture of an H100 node (``tests/fixtures/rdma/ibstat-h100-node-8x-ndr400-all-active.txt``:
eight ConnectX-7 ``MT4129`` CAs at 400 Gb/s, all Active, and an Ethernet bond ``mlx5_bond_0``), edited per fault:

* ``ib_port_down {device}``: the CA's port reads ``State: Down``, ``Physical state: Polling`` and ``Rate: 10`` (what
  ibstat shows for a port without a link: the base SDR rate);
* ``ib_rate {device, rate}``: the CA's ``Rate:`` becomes ``rate`` (a link trained at a lower width or speed);
* ``no_hca``: no RDMA device at all, printed as the real tools print it on such a host (captured on the build
  machine, tests/fixtures/rdma/*no-device*): ``ibstat`` prints nothing (rc 0), ``ibstatus`` prints
  ``Fatal error:  No devices`` (rc 255).

``ibstatus`` prints the same (edited) devices in ibstatus's layout, each block made by editing one block of the
REAL ibstatus capture (``ibstatus-a100-all-active.txt``): device name, GID (from the port GUID), base and SM lid,
state, physical state, rate and link layer become the ibstat values (``4: ACTIVE`` / ``1: DOWN``; ``5: LinkUp`` / ``2: Polling``; ``400 Gb/sec (4X NDR)``).

``ibstat CA`` prints one CA; an unknown CA gets ibstat's ``ibpanic`` line (rc 255) from the real A100 capture,
with the device name edited. Invoked through the per-node wrappers of ``lab/labctl.py up`` (``ibstatus`` through
lab/sim/ibstatus.py, which calls ``main(tool="ibstatus")``). Standard library only.
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import FIXTURES_DIR, LabError, own_faults, run_sim, split_argv, unsupported  # noqa: E402

TOOLS = ("ibstat",)
IBSTAT_CAPTURE = os.path.join(FIXTURES_DIR, "rdma", "ibstat-h100-node-8x-ndr400-all-active.txt")
IBSTATUS_CAPTURE = os.path.join(FIXTURES_DIR, "rdma", "ibstatus-a100-all-active.txt")
IBSTATUS_NO_DEVICE = os.path.join(FIXTURES_DIR, "rdma", "ibstatus-no-device-stdout.txt")
PANIC_CAPTURE = os.path.join(FIXTURES_DIR, "rdma", "ibstat-a100-azure-ibpanic-missing-mlx5_8.txt")
NO_DEVICE_RC = 255

FAULT_KINDS = {
    "ib_port_down": {"device": str},
    "ib_rate": {"device": str, "rate": int},
    "no_hca": {},
}
DOWN_RATE = 10
# ibstatus's rate label per rate (Gb/s) of a 4X link, as infiniband-diags prints it.
RATE_LABELS = {10: "4X SDR", 40: "4X QDR", 56: "4X FDR", 100: "4X EDR", 200: "4X HDR", 400: "4X NDR", 800: "4X XDR"}
STATE_NUMBERS = {"Active": "4: ACTIVE", "Down": "1: DOWN", "Initializing": "2: INIT", "Armed": "3: ARMED"}
PHYS_NUMBERS = {"LinkUp": "5: LinkUp", "Polling": "2: Polling", "Disabled": "3: Disabled"}

_CA_RE = re.compile(r"^CA '([^']+)'$", re.MULTILINE)


def _read(path):
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def _blocks(text):
    """[(name, block text)] of an ibstat capture (each block starts at its CA line)."""
    starts = [(match.start(), match.group(1)) for match in _CA_RE.finditer(text)]
    return [(name, text[start:(starts[i + 1][0] if i + 1 < len(starts) else len(text))]) for i, (start, name) in enumerate(starts)]


def capture_devices():
    return [name for name, dummy in _blocks(_read(IBSTAT_CAPTURE))]


def check_fault(fault, node, where="fault"):
    if "device" in fault and fault["device"] not in capture_devices():
        raise LabError(f"{where}: fault {fault['kind']!r} names device {fault['device']!r}; the capture has "
                       f"{', '.join(capture_devices())}")
    if fault["kind"] == "ib_rate" and fault["rate"] not in RATE_LABELS:
        raise LabError(f"{where}: fault 'ib_rate' rate must be one of {sorted(RATE_LABELS)}")


def _sub(block, field, value, name):
    pattern = re.compile(r"^(\s*%s: ).*$" % re.escape(field), re.MULTILINE)
    if not pattern.search(block):
        raise LabError(f"{IBSTAT_CAPTURE}: CA {name} has no {field!r} line to edit")
    return pattern.sub(lambda match: match.group(1) + value, block, count=1)


def render_ibstat(state):
    """``[(name, block)]`` after the faults, or None for ``no_hca``."""
    faults = own_faults(state, FAULT_KINDS, check_fault)
    if any(fault["kind"] == "no_hca" for fault in faults):
        return None
    blocks = []
    for name, block in _blocks(_read(IBSTAT_CAPTURE)):
        for fault in faults:
            if fault.get("device") != name:
                continue
            if fault["kind"] == "ib_port_down":
                block = _sub(block, "State", "Down", name)
                block = _sub(block, "Physical state", "Polling", name)
                block = _sub(block, "Rate", str(DOWN_RATE), name)
            elif fault["kind"] == "ib_rate":
                block = _sub(block, "Rate", str(fault["rate"]), name)
        blocks.append((name, block))
    return blocks


def _field(block, field):
    match = re.search(r"^\s*%s: (.*)$" % re.escape(field), block, re.MULTILINE)
    return match.group(1).strip() if match else ""


def _status_template():
    first = _read(IBSTATUS_CAPTURE).split("\n\n")[0]
    if "Infiniband device" not in first:
        raise LabError(f"{IBSTATUS_CAPTURE} does not start with an ibstatus block")
    return first


def render_ibstatus(blocks):
    template = _status_template()
    out = []
    for name, block in blocks:
        rate = int(float(_field(block, "Rate") or 0))
        text = re.sub(r"^Infiniband device '[^']+' port \d+ status:", "Infiniband device '%s' port 1 status:" % name, template)
        guid = _field(block, "Port GUID")[2:].rjust(16, "0")
        gid = "fe80:0000:0000:0000:%s" % ":".join(guid[i:i + 4] for i in range(0, 16, 4))
        for field, value in (("default gid", gid), ("base lid", hex(int(_field(block, "Base lid") or 0))),
                             ("sm lid", hex(int(_field(block, "SM lid") or 0))),
                             ("state", STATE_NUMBERS.get(_field(block, "State"), _field(block, "State"))),
                             ("phys state", PHYS_NUMBERS.get(_field(block, "Physical state"), _field(block, "Physical state"))),
                             ("rate", "%d Gb/sec (%s)" % (rate, RATE_LABELS.get(rate, "4X"))),
                             ("link_layer", _field(block, "Link layer"))):
            text = re.sub(r"^(\s*%s:\s+).*$" % re.escape(field), lambda match, v=value: match.group(1) + v, text,
                          count=1, flags=re.MULTILINE)
        out.append(text)
    return "\n\n".join(out) + "\n"


def check_state(state):
    blocks = render_ibstat(state)
    if blocks is not None:
        render_ibstatus(blocks)


def _panic(name):
    for line in _read(PANIC_CAPTURE).splitlines():
        if line.startswith("ibpanic:"):
            return re.sub(r"'[^']+'", "'%s'" % name, line) + "\n"
    raise LabError(f"{PANIC_CAPTURE} has no ibpanic line")


def main(argv=None, tool="ibstat"):
    """``tool`` is ``ibstat`` here; lab/sim/ibstatus.py (the ``ibstatus`` wrapper's simulator) calls it with
    ``ibstatus`` (the wrappers do not say which program they stand for, and both run without arguments)."""
    state_path, args = split_argv(argv, tool)

    def work(state):
        blocks = render_ibstat(state)
        if tool == "ibstatus":
            if args:
                return unsupported("ibstatus", args, "ibstatus with no arguments")
            if blocks is None:
                sys.stdout.write(_read(IBSTATUS_NO_DEVICE))
                return NO_DEVICE_RC
            return render_ibstatus(blocks)
        if len(args) > 1 or (args and args[0].startswith("-")):
            return unsupported("ibstat", args, "ibstat and ibstat CA")
        if blocks is None and not args:
            return 0
        if args:
            found = [block for name, block in blocks or [] if name == args[0]]
            if not found:
                sys.stderr.write(_panic(args[0]))
                return NO_DEVICE_RC
            return found[0]
        return "".join(block for dummy, block in blocks)

    return run_sim(tool, state_path, work)


if __name__ == "__main__":
    sys.exit(main())
