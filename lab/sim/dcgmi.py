#!/usr/bin/env python3
"""Lab stand-in for ``dcgmi diag -r N -j`` and ``dcgmi health -c -j`` on one simulated GPU node.

It replays REAL captures (tests/fixtures/dcgm/): the ``dcgmi diag -r 3 -j`` run of a 1-GPU Tesla T4 node and a
healthy ``dcgmi health -c -j``. Only values are edited (see lab/README.md, "The simulated dcgmi"):

* each per-GPU result (``gpu_ids`` "0") is replicated for the node's GPUs, with ``gpu_ids`` and the "GPU 0" in its
  info text set to the copy's id; the Deployment results (one for all GPUs, no ``gpu_ids``) stay single;
* ``-r 1`` / ``-r 2`` keep only the tests those levels run (shared/REFERENCE.md 1e): level 1 the Deployment
  tests, level 2 also PCIe and GPU Memory; ``-r 4`` prints the r3 run (no real r4 capture exists);
* fault ``dcgm_fail`` sets one test's result for one GPU to ``Fail`` with a warning (exit code 226, what dcgmi 4.x
  returned with a failed test in the GB10 captures).

The document is re-serialised the way dcgmi's JsonCpp writer prints it (tab indent, ``"key" : value``, keys
sorted, every non-empty array on its own lines); on the capture that is byte-identical except one line the
upstream file has as ``"status": "Pass"`` (lightly hand-touched there), which dcgmi prints as ``"status" : "Pass"``.

Invoked through the per-node wrapper written by ``lab/labctl.py up``::

    dcgmi.py --state /abs/nodes/<node>/state.json diag -r 3 -j

Standard library only: the wrapper runs this file with ``python -I -S``.
"""

import copy
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (  # noqa: E402
    FIXTURES_DIR, LabError, hangs, own_faults, run_sim, split_argv, unsupported,
)

TOOLS = ("dcgmi",)
DIAG_CAPTURE = os.path.join(FIXTURES_DIR, "dcgm", "dcgmi-diag-r3-j-tesla-t4-pass.json")
HEALTH_CAPTURE = os.path.join(FIXTURES_DIR, "dcgm", "dcgmi-health-c-j-healthy.json")
ROOT = "DCGM GPU Diagnostic"
FAIL_RC = 226
MAX_GPUS = 8

FAULT_KINDS = {
    # test: a test name of the capture ("GPU Memory", "Persistence Mode", ...) or a DCGM 4.x plugin name ("memory")
    "dcgm_fail": {"test": str, "gpu": int, "warning": (str, "")},
}

# Tests each level runs (category -> test names; None = every test of the category); 3 and 4 print everything.
LEVEL_TESTS = {
    1: {"Deployment": None},
    2: {"Deployment": None, "Integration": {"PCIe"}, "Hardware": {"GPU Memory"}},
}
# DCGM 4.x plugin names of the capture's (2.x/3.x) display names.
PLUGIN_NAMES = {
    "memory": "GPU Memory", "pcie": "PCIe", "diagnostic": "Diagnostic", "eud": "EUD Test",
    "targeted_stress": "Targeted Stress", "targeted_power": "Targeted Power", "memory_bandwidth": "Memory Bandwidth",
}
# Default warning per test: DCGM's own message templates (dcgmlib/dcgm_errors.h, DCGM_FR_*_MSG), the persistence
# text from the real GB10 capture; the numbers filled in are the lab's.
DEFAULT_WARNINGS = {
    "GPU Memory": "A memory mismatch was detected on GPU {gpu}, but no error was reported by CUDA or NVML.",
    "Diagnostic": "Found 1 faulty memory elements on GPU {gpu}",
    "PCIe": "GPU {gpu} host-side PCIe replay violation, see dmesg for more information",
    "Targeted Stress": "Max stress level of 1592.0 did not reach desired stress level of 3184.0 for GPU {gpu}",
    "Targeted Power": "Max power of 52.0 did not reach desired power minimum target_power of 69.0 for GPU {gpu}",
    "Memory Bandwidth": "GPU {gpu} only achieved a memory bandwidth of 120.00 GB/s, failing to meet 220.00 GB/s for test 0",
    "Persistence Mode": ("Persistence mode for GPU {gpu} is disabled. Enable persistence mode by running "
                         "\"nvidia-smi -i <gpuId> -pm 1 \" as root."),
    "Environment Variables": "Found CUDA performance-limiting environment variable 'CUDA_LAUNCH_BLOCKING'.",
    "Page Retirement/Row Remap": "GPU {gpu} had memory errors and row remappings are pending",
    "Graphics Processes": ("NVVS has detected processes with graphics contexts open running on at least one GPU. "
                           "This may cause some tests to fail."),
    "Inforom": "A corrupt InfoROM has been detected in GPU {gpu}.",
    "Denylist": "Found driver on the denylist: nouveau",
}
_GPU0 = re.compile(r"\bGPU 0\b")


# ------------------------------------------------------------------------------------------- the writer

def dump(value):
    """JSON text as dcgmi prints it (JsonCpp's styled writer, tab indentation), with the trailing newline."""
    out = []
    _write(value, out, 0, True)
    return "".join(out) + "\n"


def _write(value, out, depth, indented):
    pad = "\t" * depth
    if isinstance(value, dict) and value:
        out.append(("" if indented else "\n" + pad) + "{")
        for n, key in enumerate(sorted(value)):
            out.append("\n" + pad + "\t" + json.dumps(key) + " : ")
            _write(value[key], out, depth + 1, False)
            if n < len(value) - 1:
                out.append(",")
        out.append("\n" + pad + "}")
    elif isinstance(value, list) and value:
        out.append(("" if indented else "\n" + pad) + "[")
        for n, item in enumerate(value):
            out.append("\n" + pad + "\t")
            _write(item, out, depth + 1, True)
            if n < len(value) - 1:
                out.append(",")
        out.append("\n" + pad + "]")
    elif isinstance(value, dict):
        out.append("{}")
    elif isinstance(value, list):
        out.append("[]")
    else:
        out.append(json.dumps(value))


# ------------------------------------------------------------------------------------------- the capture

def _load_diag():
    with open(DIAG_CAPTURE, encoding="utf-8") as fh:
        return json.load(fh)


def _tests(doc):
    for category in doc[ROOT]["test_categories"]:
        for test in category["tests"]:
            yield category["category"], test


def resolve_test(doc, name):
    """The capture's test name for a fault's ``test`` (a display name, any case, or a 4.x plugin name)."""
    names = [test["name"] for _, test in _tests(doc)]
    wanted = PLUGIN_NAMES.get(name.strip().lower(), name.strip())
    for known in names:
        if known.lower() == wanted.lower():
            return known
    raise LabError(f"fault dcgm_fail: test {name!r} is not in the dcgmi capture; known: {', '.join(names)} "
                   f"(or {', '.join(sorted(PLUGIN_NAMES))})")


def check_fault(fault, node, where="fault"):
    """Range checks of one (normalized) fault of this simulator against the node."""
    gpus = node["gpus"]
    if not 0 <= fault["gpu"] < gpus:
        raise LabError(f"{where}: fault {fault['kind']!r} names gpu {fault['gpu']}, the node has GPUs 0..{gpus - 1}")
    try:
        test = resolve_test(_load_diag(), fault["test"])
    except (OSError, ValueError) as exc:
        raise LabError(f"{where}: cannot read the dcgmi capture: {exc}") from None
    except LabError as exc:
        raise LabError(f"{where}: {exc}") from None
    if not fault["warning"] and test not in DEFAULT_WARNINGS:
        raise LabError(f"{where}: fault dcgm_fail: test {test!r} has no default warning text; give 'warning'")


def _replicate(result, gpus):
    if "gpu_ids" not in result:
        return [result]
    copies = []
    for gpu in range(gpus):
        item = copy.deepcopy(result)
        item["gpu_ids"] = str(gpu)
        for key in ("info", "warnings"):
            if isinstance(item.get(key), str):
                item[key] = _GPU0.sub("GPU %d" % gpu, item[key])
        copies.append(item)
    return copies


def render_diag(state, level, gpu_filter=None):
    """``(bytes, rc)`` of ``dcgmi diag -r level -j`` on this node."""
    gpus = state["gpus"]
    if not 1 <= gpus <= MAX_GPUS:
        raise LabError(f"gpus must be 1..{MAX_GPUS}, got {gpus}")
    faults = own_faults(state, FAULT_KINDS, check_fault)
    full = _load_diag()
    doc = copy.deepcopy(full)
    keep = LEVEL_TESTS.get(level)
    categories = []
    for category in doc[ROOT]["test_categories"]:
        if keep is not None and category["category"] not in keep:
            continue
        wanted = keep.get(category["category"]) if keep is not None else None
        tests = [test for test in category["tests"] if wanted is None or test["name"] in wanted]
        for test in tests:
            results = []
            for result in test["results"]:
                results.extend(_replicate(result, gpus))
            if gpu_filter is not None:
                results = [r for r in results if "gpu_ids" not in r or int(r["gpu_ids"]) in gpu_filter]
            test["results"] = results
        if tests:
            category["tests"] = tests
            categories.append(category)
    doc[ROOT]["test_categories"] = categories
    failed = False
    for fault in faults:
        name = resolve_test(full, fault["test"])
        text = fault["warning"] or DEFAULT_WARNINGS[name].format(gpu=fault["gpu"])
        for _, test in _tests(doc):
            if test["name"] != name:
                continue
            for result in test["results"]:
                if result.get("gpu_ids", str(fault["gpu"])) == str(fault["gpu"]):
                    result["status"] = "Fail"
                    result["warnings"] = text
                    failed = True
    return dump(doc).encode("utf-8"), FAIL_RC if failed else 0


def render_health(state):
    own_faults(state, FAULT_KINDS, check_fault)
    with open(HEALTH_CAPTURE, "rb") as fh:
        return fh.read(), 0


def check_state(state):
    """Render once (labctl up): a fault the capture cannot carry fails at `up`."""
    render_diag(state, 3)


# ----------------------------------------------------------------------------------------- command line

def _diag_args(args):
    """``(level, gpu list or None)`` of ``diag -r N -j [-i LIST]``, or None when unsupported."""
    level, gpu_filter, json_out, rest = None, None, False, list(args)
    while rest:
        arg = rest.pop(0)
        if arg in ("-j", "--json"):
            json_out = True
        elif arg in ("-r", "--run") and rest and rest[0] in ("1", "2", "3", "4"):
            level = int(rest.pop(0))
        elif arg in ("-i", "--gpuList") and rest and re.match(r"^\d+(,\d+)*$", rest[0]):
            gpu_filter = [int(part) for part in rest.pop(0).split(",")]
        else:
            return None
    if level is None or not json_out:
        return None
    return level, gpu_filter


# The DCGM version the lab's dcgmi reports (the r3 capture carries none).
DCGM_VERSION = "3.3.9"


def cacheable(args, state):
    """The render cache (lab/sim/_simcache.py) may replay every call the lab implements: ``--version`` is constant,
    ``diag`` and ``health`` are pure functions of the state file and the captures (a diag with a failed test exits
    226: only rc 0 is stored). A hung dcgmi never finishes."""
    return not hangs(state, "dcgmi")


def main(argv=None):
    state_path, args = split_argv(argv, "dcgmi")
    what = "only `diag -r 1|2|3|4 -j [-i LIST]`, `health -c -j` and `--version`"
    if args == ["--version"]:
        # the form dcgmi prints, as quoted in DCGM issue reports (tests/unit/test_host_info_module.py)
        sys.stdout.write("\ndcgmi  version: %s\n\n" % DCGM_VERSION)
        return 0
    if args[:1] == ["diag"]:
        parsed = _diag_args(args[1:])
        if parsed is None:
            return unsupported("dcgmi", args, what)
    elif (args[:1] == ["health"] and len(args) == 3 and len(set(args[1:]) & {"-c", "--check"}) == 1
          and len(set(args[1:]) & {"-j", "--json"}) == 1):
        parsed = None
    else:
        return unsupported("dcgmi", args, what)

    def work(state):
        if parsed is None:
            return render_health(state)
        level, gpu_filter = parsed
        if gpu_filter is not None and any(gpu >= state["gpus"] for gpu in gpu_filter):
            return unsupported("dcgmi", args, f"GPU ids 0..{state['gpus'] - 1} on this node")
        return render_diag(state, level, gpu_filter)

    return run_sim("dcgmi", state_path, work, errors=(OSError, ValueError, KeyError, LabError))


if __name__ == "__main__":
    sys.exit(main())
