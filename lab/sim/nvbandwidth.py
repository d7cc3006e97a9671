#!/usr/bin/env python3
"""Lab stand-in for NVIDIA ``nvbandwidth [-t TESTCASE]...`` on one simulated 8-GPU node.

It replays the REAL captured nvbandwidth v0.2 output of an 8x H800 node
(tests/fixtures/nvbandwidth/nvbandwidth-v0.2-h800x8-525.105.17-ce.txt) at once and only edits it:

* the ``Device N:`` lines name the node's GPUs as its ``nvidia-smi -q -x`` does (product name); the figures stay the
  H800's: the host-to-device ones are a Gen5 x16 link's, the device-to-device ones the H800's 8-link NVLink (below
  an A100's or H100's floor: a lab run judges only the host testcases on other models);
* only the testcases asked for with ``-t`` are printed (all of the capture's without ``-t``), in the capture's order;
* a ``bandwidth_low`` fault sets one GPU's cells of one testcase to ``gbs`` (its column of a host testcase; its row
  and column of a device-to-device one) and the ``SUM`` line is the sum of the edited matrix, as nvbandwidth prints it;
  rows are re-printed with the capture's layout, byte-identical on an unedited block (the tests check it).

Every device-to-device testcase it runs adds ``TRAFFIC_KIB`` (4 GiB) to ``nvlink_traffic_kib`` in the node's state
file: the data the lab's ``nvidia-smi nvlink -gt d`` shows each active NVLink carried (issue 23).

Invoked through the per-node wrapper written by ``lab/labctl.py up``::

    nvbandwidth.py --state /abs/nodes/<node>/state.json -t host_to_device_memcpy_ce

Standard library only: the wrapper runs this file with ``python -I -S``.
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import FIXTURES_DIR, LabError, own_faults, run_sim, save_state, split_argv, unsupported  # noqa: E402

TOOLS = ("nvbandwidth",)
CAPTURE = os.path.join(FIXTURES_DIR, "nvbandwidth", "nvbandwidth-v0.2-h800x8-525.105.17-ce.txt")
CAPTURE_GPUS = 8

# Fault catalog: kind -> {param: type}. `hang` (tool nvbandwidth) and `unreachable` are generic (lab/sim/_common.py).
FAULT_KINDS = {
    "bandwidth_low": {"gpu": int, "testcase": str, "gbs": float},
}
# KiB each active NVLink carries in one device-to-device testcase (about the real H800 8-link figure for a few
# seconds of copies)
TRAFFIC_KIB = 4 * 1024 * 1024
_RUNNING_RE = re.compile(r"^Running ([a-z0-9_]+)\.$")
_DEVICE_RE = re.compile(r"^Device ([0-9]+): (.*)$")


def _read_capture():
    """(preamble lines, [(testcase, block lines)]) of the capture."""
    with open(CAPTURE, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    preamble, blocks = [], []
    for line in lines:
        running = _RUNNING_RE.match(line)
        if running:
            blocks.append((running.group(1), [line]))
        elif blocks:
            blocks[-1][1].append(line)
        else:
            preamble.append(line)
    return preamble, blocks


def check_fault(fault, node, where="fault"):
    """Range checks of one (normalized) fault of this simulator against the node."""
    if not 0 <= fault["gpu"] < node["gpus"]:
        raise LabError(f"{where}: fault bandwidth_low names gpu {fault['gpu']}, the node has GPUs 0..{node['gpus'] - 1}")
    known = [name for name, _ in _read_capture()[1]]
    if fault["testcase"] not in known:
        raise LabError(f"{where}: fault bandwidth_low: testcase {fault['testcase']!r} is not in the capture ({known})")
    if not 0 <= fault["gbs"] < 100000:
        raise LabError(f"{where}: fault bandwidth_low: 'gbs' must be 0..100000")


def _gpu_names(state):
    from nvidia_smi import _build  # noqa: E402  (the node's -q -x tree: names as nvidia-smi prints them)
    _, root, _, _, present = _build(state)
    return [gpu.findtext("product_name") for gpu in root.findall("gpu")], present


def _edit_block(lines, gpu, gbs):
    """One testcase's block with GPU ``gpu``'s cells set to ``gbs`` (its column of a host testcase, its row and column
    of a device-to-device one) and the SUM recomputed; rows keep the capture's layout (label, then 10-wide cells)."""
    out, values, changed = [], [], False
    host = any("CPU(row)" in line for line in lines)
    header_seen = False
    for line in lines:
        cells = line.split()
        if not header_seen and cells and all(cell.isdigit() for cell in cells):
            header_seen = True
        elif header_seen and len(cells) > 1 and cells[0].isdigit():
            row, edited = int(cells[0]), []
            for column, cell in enumerate(cells[1:]):
                if cell != "N/A" and (column == gpu or (not host and row == gpu)):
                    cell, changed = "%.2f" % gbs, True
                if cell != "N/A":
                    values.append(float(cell))
                edited.append(cell)
            line = cells[0] + "".join("%10s" % cell for cell in edited)
        elif line.startswith("SUM ") and changed:
            # nvbandwidth sums its unrounded values: an unedited block keeps the capture's line
            line = "SUM %s %.2f" % (line.split()[1], sum(values))
        out.append(line)
    return out


def render(state, testcases):
    if state["gpus"] != CAPTURE_GPUS:
        raise LabError(f"nvbandwidth: the lab has a real {CAPTURE_GPUS}-GPU capture only (this node has "
                       f"{state['gpus']} GPUs)")
    faults = own_faults(state, FAULT_KINDS, check_fault)
    preamble, blocks = _read_capture()
    names, present = _gpu_names(state)
    if len(present) != CAPTURE_GPUS:
        raise LabError("nvbandwidth: a node with a missing GPU is not simulated (the capture has all 8)")
    out = []
    for line in preamble:
        device = _DEVICE_RE.match(line)
        out.append("Device %s: %s" % (device.group(1), names[int(device.group(1))]) if device else line)
    for name, lines in blocks:
        if testcases and name not in testcases:
            continue
        for fault in faults:
            if fault["testcase"] == name:
                lines = _edit_block(lines, fault["gpu"], fault["gbs"])
        out.extend(lines)
    return ("\n".join(out) + "\n").encode("utf-8")


def check_state(state):
    """Render once at `labctl up` when the node has a bandwidth fault: a fault the capture cannot carry fails there.
    Other nodes are not checked (a node the capture does not fit, e.g. one with a missing GPU, fails only if asked)."""
    if own_faults(state, FAULT_KINDS, check_fault):
        render(state, ())


def parse_args(args):
    """``-t NAME`` (``--testcase``) any number of times; None for anything else."""
    testcases = []
    rest = list(args)
    while rest:
        flag = rest.pop(0)
        if flag not in ("-t", "--testcase") or not rest:
            return None
        testcases.append(rest.pop(0))
    return testcases


def main(argv=None):
    state_path, args = split_argv(argv, "nvbandwidth")
    testcases = parse_args(args)
    if testcases is None:
        return unsupported("nvbandwidth", args, "only [-t TESTCASE]...")

    def work(state):
        known = [name for name, _ in _read_capture()[1]]
        unknown = [name for name in testcases if name not in known]
        if unknown:
            return unsupported("nvbandwidth", args, "testcases of the capture: %s" % ", ".join(known))
        out = render(state, testcases)
        peer = [name for name in (testcases or known) if name.startswith("device_to_device")]
        if peer:
            state["nvlink_traffic_kib"] = int(state.get("nvlink_traffic_kib", 0)) + TRAFFIC_KIB * len(peer)
            save_state(state_path, state)
        return out

    return run_sim("nvbandwidth", state_path, work)


if __name__ == "__main__":
    sys.exit(main())
