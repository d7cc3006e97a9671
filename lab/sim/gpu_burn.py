#!/usr/bin/env python3
"""Lab stand-in for ``gpu_burn [-d] [-tc] SECONDS`` on one simulated GPU node.

It replays the REAL captured 8x A100-SXM4-80GB gpu-burn log (tests/fixtures/gpu-burn/gpu-burn-8xA100-80GB-all-OK.log,
a ``-d -tc`` run) AT ONCE — it never sleeps for the requested duration — and only edits values in it:

* a node with fewer than 8 GPUs: the extra GPUs' ``nvidia-smi -L`` lines, progress columns, worker start-up blocks
  and verdict lines are removed, and ``Tested 8 GPUs:`` counts the GPUs left;
* the workers' start-up lines name the precision that was asked for (``using DOUBLES`` / ``using FLOATS``,
  ``, using Tensor Cores`` or not — gpu_burn-drv.cpp's own wording); the Gflop/s stay those of the -d -tc capture;
* faults ``burn_slow`` / ``burn_errors`` edit one GPU's numbers (lab/README.md says exactly how).

Progress records are re-printed with gpu_burn's own printf formats (``%d (%.0f Gflop/s) ``, ``%d  (WARNING!)``,
``%d C ``, ``- `` between GPUs); on the unedited capture that re-printing is byte-identical (the tests check it).

Invoked through the per-node wrapper written by ``lab/labctl.py up``::

    gpu_burn.py --state /abs/nodes/<node>/state.json [-d] [-tc] SECONDS

Standard library only: the wrapper runs this file with ``python -I -S``.
"""

import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import FIXTURES_DIR, LabError, own_faults, run_sim, split_argv, unsupported  # noqa: E402
from nvidia_smi import gpu_uuids  # noqa: E402

TOOLS = ("gpu_burn",)
CAPTURE = os.path.join(FIXTURES_DIR, "gpu-burn", "gpu-burn-8xA100-80GB-all-OK.log")
CAPTURE_GPUS = 8

# Fault catalog: kind -> {param: type}. `hang` (tool gpu_burn) and `unreachable` are generic (lab/sim/_common.py).
FAULT_KINDS = {
    "burn_slow": {"gpu": int, "gflops": int},
    "burn_errors": {"gpu": int, "errors": int},
}

_RECORD_RE = re.compile(r"^(?P<pct>\d+\.\d)%  proc'd: (?P<procd>.*?)  errors: (?P<errors>.*?)  temps: (?P<temps>.*)$")
_PROCD_RE = re.compile(r"^(-?\d+) \((\d+) Gflop/s\) $")
_ERRORS_RE = re.compile(r"^(-?\d+) (?: \((WARNING|DIED)!\))?$")
_LIST_RE = re.compile(r"^(GPU (\d+): .* \(UUID: )([^)]+)(\))$")
_VERDICT_RE = re.compile(r"^\tGPU (\d+): (OK|FAULTY)$")
_TESTED_RE = re.compile(r"^Tested \d+ GPUs:$")
_WORKER_RE = re.compile(r"^(?P<prefix>.*?)(?P<line>Initialized device (?P<dev>\d+) with .*)$")
_PRECISION_RE = re.compile(r"using (?:DOUBLES|FLOATS)(?:, using Tensor Cores)?$")


def check_fault(fault, node, where="fault"):
    """Range checks of one (normalized) fault of this simulator against the node."""
    kind = fault["kind"]
    gpus = node["gpus"]
    if not 0 <= fault["gpu"] < gpus:
        raise LabError(f"{where}: fault {kind!r} names gpu {fault['gpu']}, the node has GPUs 0..{gpus - 1}")
    if kind == "burn_slow" and fault["gflops"] < 0:
        raise LabError(f"{where}: 'gflops' must be >= 0")
    if kind == "burn_errors" and fault["errors"] < 1:
        raise LabError(f"{where}: 'errors' must be >= 1 (a GPU with no error is not FAULTY)")


def _items(section):
    """Split a section into gpu_burn's per-GPU items, each with its own trailing text (the "- " between removed;
    it follows an item's trailing space or a note's ")", never the "--" of an unknown temperature)."""
    return re.split(r"(?<=[ )])- ", section)


def _record(text, gpus, slow, errors_now):
    """Re-print one progress record for ``gpus`` GPUs with the faults applied, in gpu_burn's printf formats."""
    found = _RECORD_RE.match(text)
    if not found:
        raise LabError(f"the capture has a progress record the lab cannot read: {text[:60]!r}")
    procd = [_PROCD_RE.match(item) for item in _items(found.group("procd"))]
    errors = [_ERRORS_RE.match(item) for item in _items(found.group("errors"))]
    temps = _items(found.group("temps"))
    if None in procd or None in errors or not len(procd) == len(errors) == len(temps) == CAPTURE_GPUS:
        raise LabError(f"the capture has a progress record the lab cannot read: {text[:60]!r}")
    out_procd, out_errors = [], []
    for gpu in range(gpus):
        count, rate = int(procd[gpu].group(1)), int(procd[gpu].group(2))
        if gpu in slow and count > 0:
            rate = slow[gpu]
            if rate == 0:
                count = 0  # a GPU that does no work never reports a batch
        out_procd.append("%d (%.0f Gflop/s) " % (count, rate))
        value, note = int(errors[gpu].group(1)), errors[gpu].group(2)
        if gpu in errors_now:
            value, note = errors_now[gpu], "WARNING"
        out_errors.append("%d " % value + (" (%s!)" % note if note else ""))
    return "%s%%  proc'd: %s  errors: %s  temps: %s" % (
        found.group("pct"), "- ".join(out_procd), "- ".join(out_errors), "- ".join(temps[:gpus]))


def _precision(line, doubles, tensor_cores):
    words = ("using DOUBLES" if doubles else "using FLOATS") + (", using Tensor Cores" if tensor_cores else "")
    return _PRECISION_RE.sub(words, line)


def render(state, doubles=True, tensor_cores=True):
    """The node's gpu_burn output (bytes), from its state dict and the flags it was run with."""
    gpus = state["gpus"]
    if not 1 <= gpus <= CAPTURE_GPUS:
        raise LabError(f"gpus must be 1..{CAPTURE_GPUS} (the capture has {CAPTURE_GPUS}), got {gpus}")
    faults = own_faults(state, FAULT_KINDS, check_fault)
    slow = dict((f["gpu"], f["gflops"]) for f in faults if f["kind"] == "burn_slow")
    wrong = dict((f["gpu"], f["errors"]) for f in faults if f["kind"] == "burn_errors")
    uuids = gpu_uuids(state) if state.get("capture") else None
    with open(CAPTURE, encoding="utf-8", newline="") as fh:
        lines = fh.read().split("\n")
    last_summary = max(i for i, line in enumerate(lines) if line.startswith("\tSummary at:"))
    out, pending_prefix, skip = [], None, 0
    for number, line in enumerate(lines):
        if skip:
            skip -= 1
            continue
        listed, verdict, worker = _LIST_RE.match(line), _VERDICT_RE.match(line), _WORKER_RE.match(line)
        if listed:
            if int(listed.group(2)) < gpus:
                # the node's UUIDs, as its nvidia-smi prints them (an edited value)
                uuid = uuids[int(listed.group(2))] if uuids else listed.group(3)
                out.append(listed.group(1) + uuid + listed.group(4))
        elif verdict:
            gpu = int(verdict.group(1))
            if gpu < gpus:
                out.append("\tGPU %d: %s" % (gpu, "FAULTY" if gpu in wrong else verdict.group(2)))
        elif _TESTED_RE.match(line):
            out.append("Tested %d GPUs:" % gpus)
        elif worker:
            # A worker's block: its start-up line and three more; old builds print the first block right after
            # "Killing processes.. " on the same line, which stays in front of the first block kept.
            prefix = worker.group("prefix") if pending_prefix is None else pending_prefix
            if int(worker.group("dev")) < gpus:
                out.append(prefix + _precision(worker.group("line"), doubles, tensor_cores))
                out.extend(lines[number + 1:number + 4])
                pending_prefix = ""
            else:
                pending_prefix = prefix
            skip = 3
        elif "\r" in line:
            errors_now = wrong if number > last_summary else {}
            out.append("\r".join(_record(part, gpus, slow, errors_now) if part.strip() else part
                                 for part in line.split("\r")))
        else:
            out.append(line)
    return "\n".join(out).encode("utf-8")


def parse_args(args):
    """``[-d] [-tc] SECONDS`` (flags at most once, any order, the duration last) -> (doubles, tensor_cores, secs)."""
    if not args or not re.match(r"^[1-9]\d*$", args[-1]):
        return None
    flags = args[:-1]
    if len(set(flags)) != len(flags) or not set(flags) <= {"-d", "-tc"}:
        return None
    return "-d" in flags, "-tc" in flags, int(args[-1])


def check_state(state):
    """Render once (labctl up): a fault the capture cannot carry fails at `up`."""
    render(state)


def main(argv=None):
    state_path, args = split_argv(argv, "gpu_burn")
    parsed = parse_args(args)
    if parsed is None:
        return unsupported("gpu_burn", args, "only [-d] [-tc] SECONDS")
    return run_sim("gpu_burn", state_path, lambda state: _burn(state, parsed))


def _burn(state, parsed):
    """The capture, at once; after the requested seconds on a lab started with ``--burn-realtime``."""
    output = render(state, doubles=parsed[0], tensor_cores=parsed[1])
    if state.get("burn_realtime"):
        time.sleep(parsed[2])
    return output


if __name__ == "__main__":
    sys.exit(main())
