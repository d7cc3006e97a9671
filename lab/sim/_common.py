"""What every lab simulator shares: the fault format, the state file, the hang fault, the command line.

A simulator is a file lab/sim/<name>.py (no leading underscore) that defines

* ``TOOLS``: the program names it stands in for (a wrapper ``bin/<tool>`` is written for each, per node);
* ``FAULT_KINDS``: ``kind -> {param: type or (type, default)}`` for the faults it applies (``object``: any JSON
  scalar);
* optionally ``check_fault(fault, node, where)``: range checks against the node (``node["gpus"]`` …), raising
  ``LabError``; and ``check_state(state)``: render once at ``labctl up`` so a fault the capture cannot carry
  fails there, not in a play;
* ``main(argv)``: called as ``<sim>.py --state STATE [args of the real tool...]`` (most check the arguments after
  ``split_argv`` and leave the rest to ``run_sim``: state, hang fault, errors, output);
* optionally ``cacheable(args, state)``: true when that call's stdout is a pure function of the node's state file,
  the arguments, the code and the files it reads -- then labctl's wrapper runs it through ``_launch.py`` and a
  repeated call replays the stored rendering (``_simcache.py``; only a run with rc 0 and empty stderr is stored).

Simulators replay real captures from tests/fixtures and only edit values in them. Standard library only: the
wrappers run them with ``python -I -S``.
"""

import glob
import os
import sys
import time

FIXTURES_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                            "tests", "fixtures")

# PCI bus numbers of the eight GPUs of a DGX A100 (nvidia-smi prints them upper case); the kernel log's Xid lines use
# them too (here, so that it need not import the nvidia-smi simulator and its XML machinery).
DGX_A100_PCI_BUSES = ("07", "0F", "47", "4E", "87", "90", "B7", "BD")

# Faults no single simulator owns. `hang`: the named tool never returns (nvidia-smi when no tool is named);
# `flood`: the named tool prints its output (the real capture, as edited by the node's other faults) and then the
# same output again and again, without end, until it is killed -- a looping tool, a driver printing in a loop;
# `unreachable`: no tool effect, the inventory sends Ansible to a closed port.
GENERIC_FAULT_KINDS = {
    "hang": {"tool": (str, "nvidia-smi")},
    "flood": {"tool": (str, "nvidia-smi")},
    "unreachable": {},
}


class LabError(Exception):
    """A scenario/state problem, reported with a clear message."""


def normalize_fault(fault, kinds, where="fault"):
    """Return a fault as ``{"kind": ..., **params}`` (defaults filled in); a bare string names a kind."""
    if isinstance(fault, str):
        fault = {"kind": fault}
    if not isinstance(fault, dict):
        raise LabError(f"{where}: a fault is a kind name or a mapping with 'kind', got {fault!r}")
    fault = dict(fault)
    kind = fault.pop("kind", None)
    # any fault may be marked `persistent: true`: neither a GPU reset nor a BMC power cycle clears it (a part to RMA)
    persistent = fault.pop("persistent", False)
    if not isinstance(persistent, bool):
        raise LabError(f"{where}: 'persistent' must be true or false, got {persistent!r}")
    if kind not in kinds:
        raise LabError(f"{where}: unknown fault kind {kind!r}; known kinds: {', '.join(sorted(kinds))}")
    spec = kinds[kind]
    unknown = sorted(set(fault) - set(spec))
    if unknown:
        raise LabError(f"{where}: fault {kind!r} has unknown parameter(s) {unknown}; it takes {sorted(spec) or 'none'}")
    out = {"kind": kind}
    for name, typ in spec.items():
        if isinstance(typ, tuple):
            typ, default = typ
            value = fault.get(name, default)
        elif name in fault:
            value = fault[name]
        else:
            required = sorted(key for key, kind_of in spec.items() if not isinstance(kind_of, tuple) and key not in fault)
            raise LabError(f"{where}: fault {kind!r} is missing parameter(s) {required}")
        if typ is int and (isinstance(value, bool) or not isinstance(value, int)):
            raise LabError(f"{where}: fault {kind!r} parameter {name!r} must be an integer, got {value!r}")
        if typ is float and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise LabError(f"{where}: fault {kind!r} parameter {name!r} must be a number, got {value!r}")
        if typ is str and not isinstance(value, str):
            raise LabError(f"{where}: fault {kind!r} parameter {name!r} must be a string, got {value!r}")
        if typ is object and not isinstance(value, (str, int, float, bool)):
            raise LabError(f"{where}: fault {kind!r} parameter {name!r} must be a string, number or boolean, "
                           f"got {value!r}")
        out[name] = value
    if persistent:
        out["persistent"] = True
    return out


def faults_of(state, kinds):
    """The node's faults that one simulator applies (the state holds every fault of the node)."""
    return [fault for fault in state.get("faults", []) if fault.get("kind") in kinds]


def own_faults(state, kinds, check_fault=None, gpus=None):
    """The node's faults of one simulator, normalized and range-checked (a state file edited by hand is checked
    again at every call)."""
    node = {"gpus": state["gpus"] if gpus is None else gpus}
    out = []
    for i, raw in enumerate(state.get("faults", [])):
        kind = raw.get("kind") if isinstance(raw, dict) else raw
        if kind in kinds:
            fault = normalize_fault(raw, kinds, f"faults[{i}]")
            if check_fault is not None:
                check_fault(fault, node, f"faults[{i}]")
            out.append(fault)
    return out


def fabric_faults(state_path, kinds):
    """[(node, fault)] of the faults of ``kinds`` of every node of the lab (this state file's siblings): what a
    simulated fabric-wide tool (iblinkinfo, ibnetdiscover) shows, whichever node runs it."""
    out = []
    pattern = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(state_path))), "*", "state.json")
    for path in sorted(glob.glob(pattern)):
        state = load_state(path)
        for fault in own_faults(state, kinds):
            out.append((state["node"], fault))
    return out


# Faults a BMC power cycle clears (the node boots again: the GPUs are enumerated afresh, the driver's volatile
# counters and the kernel log start over, every GPU process is gone). Faults marked `persistent: true` stay.
POWER_CYCLE_CLEARS = ("gpu_missing", "xid", "ecc_volatile_uncorrectable", "throttle", "temperature", "gpu_process",
                      "fabric_status", "remap_pending", "driver_not_loaded", "hang", "burn_slow", "burn_errors",
                      "dcgm_fail")


def power_cycle(path, when):
    """The node behind a BMC was power-cycled at ``when`` (ISO time): clear the faults a power cycle fixes from its
    state file (``gpu_missing`` = XID 79 fallen off the bus, ...) unless they are ``persistent``; a volatile ECC
    count stays in the lifetime (aggregate) count, as after a GPU reset. Returns the kinds cleared."""
    state = load_state(path)
    kept, cleared = [], []
    for fault in state["faults"]:
        kind = fault.get("kind") if isinstance(fault, dict) else fault
        if kind not in POWER_CYCLE_CLEARS or (isinstance(fault, dict) and fault.get("persistent")):
            kept.append(fault)
            continue
        cleared.append(kind)
        if kind == "ecc_volatile_uncorrectable" and fault.get("count"):
            kept.append({"kind": "ecc_aggregate_uncorrectable", "gpu": fault["gpu"], "count": fault["count"]})
    state["faults"] = kept
    state["power_cycles"] = state.get("power_cycles", []) + [{"time": when, "cleared": cleared}]
    save_state(path, state)
    return cleared


class _JsonDefaults:
    """What json.JSONDecoder() hands its C scanner (json.scanner.c_make_scanner); NaN/Infinity go to json."""
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int

    @staticmethod
    def parse_constant(name):
        raise ValueError(name)


def json_loads(text):
    """``json.loads(text)`` without importing json, which imports ``re`` (~7 ms on each call of a lab tool whose
    simulator needs neither): json's own C scanner with json's default settings. Whatever it does not take cleanly
    (an error, trailing data, a BOM, NaN) goes to json itself, so the result or the error is json's."""
    try:
        from _json import make_scanner
        start = len(text) - len(text.lstrip(" \t\n\r"))
        value, end = make_scanner(_JsonDefaults())(text, start)
        if not text[end:].strip(" \t\n\r"):
            return value
    except Exception:  # noqa: BLE001 -- json says what is wrong, below
        pass
    import json
    return json.loads(text)


def load_state(path):
    with open(path, encoding="utf-8") as fh:
        state = json_loads(fh.read())
    for key in ("node", "index", "gpus", "faults"):
        if key not in state:
            raise LabError(f"state file {path} has no {key!r}")
    return state


def save_state(path, state):
    """Rewrite the state file atomically (simulators whose tool changes the node, e.g. a GPU reset)."""
    import json
    tmp = "%s.tmp%d" % (path, os.getpid())
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(state, fh, indent=2)
        fh.write("\n")
    os.replace(tmp, path)


def hangs(state, tool):
    """Whether the node has a `hang` fault for ``tool``."""
    return any(isinstance(fault, dict) and fault.get("kind") == "hang" and fault.get("tool", "nvidia-smi") == tool
               for fault in state.get("faults", []))


def floods(state, tool):
    """Whether the node has a `flood` fault for ``tool``."""
    return any(isinstance(fault, dict) and fault.get("kind") == "flood" and fault.get("tool", "nvidia-smi") == tool
               for fault in state.get("faults", []))


def hang_if_asked(state, tool):
    """A wedged tool: never return. The caller must kill the process group."""
    for fault in state.get("faults", []):
        if fault.get("kind") == "hang" and fault.get("tool", "nvidia-smi") == tool:
            while True:
                time.sleep(3600)


def process_running(pid):
    """True while ``pid`` runs, read from ``/proc/PID/stat``: a zombie (exited, not yet reaped) does not count. Not
    the command line, which an exiting process loses before it has exited."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def split_argv(argv, tool):
    """``--state FILE args...`` (``sys.argv[1:]`` when None) -> (state path, args as a list). Exits 2 with a message
    when run without the wrapper."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) < 2 or argv[0] != "--state":
        sys.stderr.write(f"lab {tool}: internal: expected --state FILE first (run it through the lab wrapper)\n")
        raise SystemExit(2)
    return argv[1], argv[2:]


def unsupported(tool, args, what):
    sys.stderr.write(f"lab {tool}: unsupported arguments: {' '.join(args) or '(none)'} (the lab implements {what})\n")
    return 2


def run_sim(tool, state_path, work, errors=(OSError, ValueError, LabError)):
    """What a simulator's ``main`` does once its arguments are checked: load the node's state, never return when a
    ``hang`` fault names ``tool``, then ``work(state)``. An exception in ``errors`` (from any of these) is reported as
    ``lab TOOL: message`` on stderr, rc 3. ``work`` returns an int (the rc: it wrote its output itself), or the
    output -- str, or bytes (to ``sys.stdout.buffer``) -- or ``(output, rc)``; the output is written and flushed
    (after the ``errors`` handler: a failing write is not reported as the tool's error). Returns the rc."""
    try:
        state = load_state(state_path)
        hang_if_asked(state, tool)
        result = work(state)
    except errors as exc:
        sys.stderr.write(f"lab {tool}: {exc}\n")
        return 3
    if isinstance(result, int):
        return result
    out, rc = result if isinstance(result, tuple) else (result, 0)
    stream = sys.stdout if isinstance(out, str) else sys.stdout.buffer
    stream.write(out)
    stream.flush()
    if out and floods(state, tool):
        try:
            while True:  # until the reader kills the process group (or closes the pipe)
                stream.write(out)
        except BrokenPipeError:
            return 141
    return rc
