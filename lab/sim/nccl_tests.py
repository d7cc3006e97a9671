#!/usr/bin/env python3
"""Lab stand-in for nccl-tests' ``all_reduce_perf`` (and, through lab/sim/nccl_all_gather.py, ``all_gather_perf``)
and for ``mpirun`` launching them over several lab nodes.

It replays the REAL captured single-node 8x A100-SXM4-40GB runs (tests/fixtures/nccl-tests/*.log, nccl-tests with the
older ``error`` column) and only edits values in them:

* the parameter line (``nGpus``, ``minBytes``, ``maxBytes``, ``step``, ``iters``, ``validation``) says what was asked;
* the device lines: one per GPU of the run, ranks renumbered, ``on localhost`` replaced by the node's name (with
  ``mpirun``: every node of the hostfile, ``slots`` GPUs each, in hostfile order);
* the result lines: only the sizes from ``-b`` to ``-e``; with a ``nccl_slow {factor}`` fault, algbw and busbw are
  multiplied by the factor and the time divided by it. A multi-node run is as slow as its slowest node: the factor
  is the smallest among the hostfile's nodes (their state files are read from the lab directory,
  <lab>/nodes/<node>/state.json, beside this node's own);
* ``nccl_wrong {count}``: the ``Out of bounds values`` line reads ``<count> FAILED`` (summed over the run's nodes);
* ``Avg bus bandwidth`` is recomputed over the printed busbw values (nccl-tests' own average, ``%g``).

The capture's numbers are those of 8 GPUs on one node; a run on fewer GPUs or over several nodes replays them too (a
real multi-node run is bound by the network, not NVLink): the lab shows the shape, the floor and the faults, not a
model of the fabric. Invoked through the per-node wrapper written by ``lab/labctl.py up``::

    nccl_tests.py --state /abs/nodes/<node>/state.json [-b 8] [-e 8G] [-f 2] [-g 8] [-c 1] [-n 20] [-w 5]
    nccl_tests.py --state ... [mpirun options] --hostfile FILE|-H a:8,b:8 [-np N] <path>/all_reduce_perf [args]

Standard library only: the wrapper runs this file with ``python -I -S``.
"""

import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import FIXTURES_DIR, LabError, hang_if_asked, load_state, own_faults, run_sim, split_argv, unsupported  # noqa: E402

TOOLS = ("all_reduce_perf", "mpirun")
OPS = ("all_reduce_perf", "all_gather_perf")
CAPTURES = dict((op, os.path.join(FIXTURES_DIR, "nccl-tests", "%s-1node-8xA100-40GB.log" % op)) for op in OPS)
CAPTURE_GPUS = 8

# Fault catalog: kind -> {param: type}. `hang` (tool all_reduce_perf or mpirun) and `unreachable` are generic.
FAULT_KINDS = {
    "nccl_slow": {"factor": float},
    "nccl_wrong": {"count": (int, 1)},
}

_SIZE_RE = re.compile(r"^([0-9]+)([KMGkmg]?)$")
_DEVICE_RE = re.compile(r"^(#\s+Rank)(\s+\d+)(.*? on )(\S+)( device)(\s+\d+)( .*)$")
_TOKEN_RE = re.compile(r"\s*\S+")
_PERF_FLAGS = {"-b": "min", "-e": "max", "-f": "factor", "-g": "gpus", "-c": "check", "-n": "iters", "-w": "warmup"}
_MPI_VALUE_FLAGS = ("--mca", "-mca", "--bind-to", "--map-by", "-npernode", "--npernode", "-N", "--rank-by")
_MPI_FLAGS = ("--allow-run-as-root", "--oversubscribe", "--tag-output", "-v", "--verbose", "--report-bindings")


def check_fault(fault, node, where="fault"):
    if fault["kind"] == "nccl_slow" and not 0 < fault["factor"] <= 1:
        raise LabError(f"{where}: 'factor' must be in (0, 1] (0.7 = 30 % low), got {fault['factor']}")
    if fault["kind"] == "nccl_wrong" and fault["count"] < 1:
        raise LabError(f"{where}: 'count' must be >= 1")


def _bytes(text):
    found = _SIZE_RE.match(text)
    if not found:
        raise LabError(f"not a byte count: {text!r}")
    return int(found.group(1)) * {"": 1, "k": 1024, "m": 1024 ** 2, "g": 1024 ** 3}[found.group(2).lower()]


def parse_perf_args(args):
    """The test's ``-b -e -f -g -c -n -w`` options (each followed by its value) -> dict, or None when unsupported."""
    opts = {"min": 8, "max": 32 * 1024 ** 2, "factor": 2, "gpus": 1, "check": 1, "iters": 20, "warmup": 5}
    if len(args) % 2:
        return None
    for flag, value in zip(args[::2], args[1::2]):
        key = _PERF_FLAGS.get(flag)
        if key is None:
            return None
        try:
            opts[key] = _bytes(value) if key in ("min", "max") else int(value)
        except (LabError, ValueError):
            return None
    return opts


def _replace(line, values):
    """Replace whitespace-separated fields of ``line`` (index -> text), each kept right-aligned at its old end."""
    parts = _TOKEN_RE.findall(line)
    for index, text in values.items():
        width = len(parts[index])
        parts[index] = text.rjust(width) if len(text) < width else " " + text
    return "".join(parts)


def _field(old, value):
    """``value`` right-aligned in the width of ``old`` (its leading blanks included), one blank at least."""
    return " " + str(value).rjust(len(old) - 1)


def _time(value):
    return "%.2f" % value if value < 100 else "%.1f" % value if value < 10000 else "%.0f" % value


def node_faults(state):
    faults = own_faults(state, FAULT_KINDS, check_fault)
    factor = min([f["factor"] for f in faults if f["kind"] == "nccl_slow"] or [1.0])
    wrong = sum(f["count"] for f in faults if f["kind"] == "nccl_wrong")
    return factor, wrong


def render(op, nodes, opts):
    """The run's output (text). ``nodes``: [(name, state, gpus on that node)] in rank order."""
    factor = min(node_faults(state)[0] for _, state, _ in nodes)
    wrong = sum(node_faults(state)[1] for _, state, _ in nodes)
    with open(CAPTURES[op], encoding="utf-8", newline="") as fh:
        lines = fh.read().split("\n")
    out, busbws, header, skipped = [], [], None, 0
    for line in lines:
        device = _DEVICE_RE.match(line)
        tokens = line.split()
        if line.startswith("# nThread"):
            line = re.sub(r"nGpus \d+", "nGpus %d" % opts["gpus"], line)
            line = re.sub(r"minBytes \d+", "minBytes %d" % opts["min"], line)
            line = re.sub(r"maxBytes \d+", "maxBytes %d" % opts["max"], line)
            line = re.sub(r"step: \d+", "step: %d" % opts["factor"], line)
            line = re.sub(r"warmup iters: \d+", "warmup iters: %d" % opts["warmup"], line)
            line = re.sub(r"(?<!warmup )iters: \d+", "iters: %d" % opts["iters"], line)
            out.append(re.sub(r"validation: \d+", "validation: %d" % (1 if opts["check"] else 0), line))
        elif device:
            if int(device.group(2)) == 0:
                rank = 0
                for name, dummy, gpus in nodes:
                    for local in range(gpus):
                        template = _DEVICE_RE.match(lines[lines.index(line) + local])
                        out.append("".join((template.group(1), _field(template.group(2), rank), template.group(3), name,
                                            template.group(5), _field(template.group(6), local), template.group(7))))
                        rank += 1
        elif line.startswith("#") and "busbw" in tokens:
            header = line[1:].split()
            out.append(line)
        elif header and tokens and tokens[0].isdigit() and len(tokens) == len(header):
            size = int(tokens[0])
            # sizes below one element print as 0 (the capture's first lines, from -b 1)
            if size > opts["max"] or (size < opts["min"] and not (size == 0 and opts["min"] <= 1)):
                skipped += 1
                continue
            values = {}
            for index, name in enumerate(header):
                if name == "time":
                    values[index] = _time(float(tokens[index]) / factor)
                elif name in ("algbw", "busbw"):
                    values[index] = "%.2f" % (float(tokens[index]) * factor)
                    if name == "busbw":
                        busbws.append(float(values[index]))
            out.append(_replace(line, values))
        elif line.startswith("# Out of bounds values"):
            out.append("# Out of bounds values : %d %s" % (wrong, "FAILED" if wrong else "OK"))
        elif line.startswith("# Avg bus bandwidth"):
            if skipped:  # nccl-tests averages the unrounded figures: the capture's own average when every size is kept
                average = sum(busbws) / len(busbws) if busbws else 0.0
            else:
                average = float(line.split(":", 1)[1]) * factor
            out.append("# Avg bus bandwidth    : %g" % average)
        else:
            out.append(line)
    return "\n".join(out)


def check_state(state):
    """Render once (labctl up): a fault the capture cannot carry fails at `up`."""
    for op in OPS:
        render(op, [(state["node"], state, min(state["gpus"], CAPTURE_GPUS))], parse_perf_args(["-g", "8"]))


def _node_of_address(lab_dir, address):
    """The SSH lab names hosts by their fabric addresses (lab.json's network plan): the node holding ``address``."""
    try:
        with open(os.path.join(lab_dir, "lab.json"), encoding="utf-8") as fh:
            plan = (json.load(fh).get("net") or {}).get("plan") or {}
    except (OSError, ValueError):
        return None
    for node, spec in (plan.get("nodes") or {}).items():
        addresses = [spec.get("mgmt_address")] + [port.get("address", "").split("/")[0]
                                                  for port in (spec.get("ports") or {}).values()]
        if address in addresses:
            return node
    return None


def _lab_state(own_state_path, name):
    nodes_dir = os.path.dirname(os.path.dirname(os.path.abspath(own_state_path)))
    path = os.path.join(nodes_dir, name, "state.json")
    if not os.path.isfile(path):
        node = _node_of_address(os.path.dirname(nodes_dir), name)
        if node:
            path = os.path.join(nodes_dir, node, "state.json")
    if not os.path.isfile(path):
        raise LabError(f"host {name!r} is not a node of this lab (no {path})")
    return load_state(path)


def _hostfile(path):
    hosts = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            words = line.split("#", 1)[0].split()
            if not words:
                continue
            slots = [int(word.split("=", 1)[1]) for word in words[1:] if word.startswith("slots=")]
            hosts.append((words[0], slots[0] if slots else 1))
    return hosts


def parse_mpirun(args):
    """``[options] program [program args]`` -> (hosts [(name, slots)], np or None, program, program args)."""
    hosts, np, position = None, None, 0
    while position < len(args) and args[position].startswith("-"):
        flag = args[position]
        if flag in ("--hostfile", "-hostfile", "--machinefile", "-machinefile"):
            hosts = _hostfile(args[position + 1])
        elif flag in ("-H", "--host", "-host"):
            hosts = [(item.split(":")[0], int(item.split(":")[1]) if ":" in item else 1) for item in args[position + 1].split(",")]
        elif flag in ("-np", "-n", "--np", "-c"):
            np = int(args[position + 1])
        elif flag == "-x" or flag in _MPI_VALUE_FLAGS:
            position += 3 if flag in ("--mca", "-mca") else 2
            continue
        elif flag in _MPI_FLAGS:
            position += 1
            continue
        else:
            raise LabError(f"unsupported mpirun option {flag}")
        position += 2
    if hosts is None or position >= len(args):
        raise LabError("mpirun needs --hostfile FILE or -H hosts, then the program")
    return hosts, np, args[position], args[position + 1:]


def _run(state_path, state, tool, args, op):
    if tool == "mpirun":
        hosts, np, program, perf_args = parse_mpirun(args)
        op = os.path.basename(program)
        if op not in OPS:
            raise LabError(f"mpirun: the lab runs only {', '.join(OPS)}, not {program}")
        opts = parse_perf_args(perf_args)
        if opts is None or opts["gpus"] != 1:
            raise LabError(f"{op} under mpirun: unsupported arguments {' '.join(perf_args)} (the lab takes -b -e -f "
                           "-c -n -w and -g 1: one rank per GPU)")
        nodes = []
        for name, slots in hosts:
            other = state if name == state["node"] else _lab_state(state_path, name)
            if not 1 <= slots <= min(other["gpus"], CAPTURE_GPUS):
                raise LabError(f"host {name}: slots={slots}, the node has {other['gpus']} GPUs")
            hang_if_asked(other, op)
            nodes.append((name, other, slots))
        if np is not None and np != sum(slots for _, _, slots in nodes):
            raise LabError(f"mpirun: -np {np} but the hosts give {sum(slots for _, _, slots in nodes)} slots (the lab "
                           "runs exactly one rank per slot)")
        opts["gpus"] = 1
        return render(op, nodes, opts)
    opts = parse_perf_args(args)
    if opts is None:
        return None
    if not 1 <= opts["gpus"] <= min(state["gpus"], CAPTURE_GPUS):
        raise LabError(f"-g {opts['gpus']}: the node has {state['gpus']} GPUs")
    return render(op, [(state["node"], state, opts["gpus"])], opts)


def main(argv=None, op="all_reduce_perf"):
    state_path, args = split_argv(argv, op)
    # mpirun's arguments start with its own options and name a program; the test's are -b/-e/... pairs only
    tool = "mpirun" if any(arg in ("--hostfile", "-hostfile", "-H", "--host", "-np") for arg in args) else op

    def work(state):
        text = _run(state_path, state, tool, args, op)
        return unsupported(op, args, "-b -e -f -g -c -n -w") if text is None else text

    return run_sim(tool, state_path, work, errors=(OSError, ValueError, IndexError, LabError))


if __name__ == "__main__":
    sys.exit(main())
