#!/usr/bin/env python3
"""The InfiniBand / RoCE port error counters of a simulated node: ``<root>/sys/class/infiniband/<CA>/ports/1/
counters/<name>``, what ``zhisuan.ops.net_info`` reads twice a window apart (``counter_window``, the rdma family's
``rdma.port.errors``; issue 24 item 5).

No program stands behind sysfs, so this "simulator" has no ``TOOLS``: ``lab/labctl.py`` writes the files under
``<lab>/nodes/<node>/root`` (the node's ``zhisuan_host_root``) for every CA of the lab's ``ibstat`` capture (the REAL
H100 node's ``ibstat-h100-node-8x-ndr400-all-active.txt``: mlx5_0 ... mlx5_bond_0) when a network scenario lists
``optional: [ib_counters_sysfs]``. The values are the REAL counters of procfs' test tree
(``tests/fixtures/ib/sysfs-infiniband-procfs-fixtures.ttar``, ``mlx5_0`` port 1: every counter file, as sysfs prints
it, the value and a newline). Faults:

* ``ib_counter_growth {device, counter, per_second}``: the counter of that CA grows by ``per_second`` a second. A
  sysfs counter grows by itself, so labctl starts a **ticker** (``python ib_counters_sysfs.py --tick <lab dir>``)
  that rewrites the grown files every ``TICK_S`` (value = capture value + ``per_second`` x seconds since the ticker
  started, each file replaced whole); it reads the nodes' state files on every round, so ``labctl fault`` adds and
  removes growth at once, and ``labctl down`` stops it.

Standard library only.
"""

import json
import os
import re
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import FIXTURES_DIR, LabError, own_faults  # noqa: E402

TOOLS = ()
OPTIONAL = True
CAPTURE = os.path.join(FIXTURES_DIR, "ib", "sysfs-infiniband-procfs-fixtures.ttar")
CAPTURE_DEVICE = "mlx5_0"
IBSTAT_CAPTURE = os.path.join(FIXTURES_DIR, "rdma", "ibstat-h100-node-8x-ndr400-all-active.txt")
FAULT_KINDS = {
    "ib_counter_growth": {"device": str, "counter": str, "per_second": float},
}
TICK_S = 0.5
TICKER_JSON = "ib_ticker.json"   # in the lab directory: [{"root", "state"}] per node
TICKER_PID = "ib_ticker.pid"
_PATH_RE = re.compile(r"^Path: fixtures/sys/class/infiniband/%s/ports/1/counters/(\S+)$" % CAPTURE_DEVICE)


def capture_counters():
    """``{counter: value}`` of the capture's mlx5_0 port 1 (a ttar file: ``Path:``, ``Lines: n``, n lines)."""
    with open(CAPTURE, encoding="utf-8") as fh:
        lines = fh.read().split("\n")
    out = {}
    for number, line in enumerate(lines):
        match = _PATH_RE.match(line)
        if match and number + 2 < len(lines) and lines[number + 1] == "Lines: 1":
            out[match.group(1)] = int(lines[number + 2].strip())
    if not out:
        raise LabError(f"{CAPTURE}: no {CAPTURE_DEVICE} port 1 counter")
    return out


def devices():
    """The CAs of the lab's ibstat capture, in its order."""
    with open(IBSTAT_CAPTURE, encoding="utf-8") as fh:
        return re.findall(r"^CA '([^']+)'$", fh.read(), re.MULTILINE)


def check_fault(fault, node, where="fault"):
    if fault["device"] not in devices():
        raise LabError(f"{where}: fault 'ib_counter_growth': device {fault['device']!r} is not a CA of the lab's "
                       f"ibstat capture ({', '.join(devices())})")
    if fault["counter"] not in capture_counters():
        raise LabError(f"{where}: fault 'ib_counter_growth': counter {fault['counter']!r} is not one of "
                       f"{', '.join(sorted(capture_counters()))}")
    if not fault["per_second"] > 0:
        raise LabError(f"{where}: fault 'ib_counter_growth': per_second must be > 0, got {fault['per_second']}")


def _path(root, device, counter):
    return os.path.join(root, "sys", "class", "infiniband", device, "ports", "1", "counters", counter)


def _write(path, value):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = "%s.tmp%d" % (path, os.getpid())
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write("%d\n" % value)
    os.replace(tmp, path)


def files_of(faults, elapsed=0.0):
    """``{(device, counter): value}`` of the node: the capture's values on every CA, grown counters added."""
    base = capture_counters()
    out = dict(((device, counter), value) for device in devices() for counter, value in base.items())
    for fault in faults:
        if fault.get("kind") == "ib_counter_growth":
            key = (fault["device"], fault["counter"])
            out[key] = out[key] + int(fault["per_second"] * elapsed)
    return out


def write_root(root, faults, elapsed=0.0):
    """Write the node's counter files under ``root``."""
    for (device, counter), value in sorted(files_of(faults, elapsed).items()):
        _write(_path(root, device, counter), value)


def tick(lab_dir, rounds=None):
    """The ticker: every ``TICK_S`` rewrite each node's grown counters (``TICKER_JSON`` names the nodes)."""
    with open(os.path.join(lab_dir, TICKER_JSON), encoding="utf-8") as fh:
        nodes = json.load(fh)
    started = time.monotonic()
    done = 0
    while rounds is None or done < rounds:
        elapsed = time.monotonic() - started
        for node in nodes:
            try:
                with open(node["state"], encoding="utf-8") as fh:
                    state = json.load(fh)
                faults = own_faults(state, FAULT_KINDS, check_fault)
            except (OSError, ValueError, LabError):
                continue  # the lab is being rewritten or torn down: the next round reads it again
            for fault in faults:
                key = (fault["device"], fault["counter"])
                try:
                    _write(_path(node["root"], *key), files_of([fault], elapsed)[key])
                except OSError:
                    pass
        done += 1
        time.sleep(TICK_S)


def start(lab_dir, nodes):
    """Start the ticker for ``nodes`` (``[{"root", "state"}]``); its pid is in ``TICKER_PID``."""
    import subprocess
    stop(lab_dir)
    with open(os.path.join(lab_dir, TICKER_JSON), "w", encoding="utf-8") as fh:
        json.dump(nodes, fh, indent=2)
    proc = subprocess.Popen([sys.executable, "-I", "-S", os.path.abspath(__file__), "--tick", lab_dir],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    with open(os.path.join(lab_dir, TICKER_PID), "w", encoding="utf-8") as fh:
        fh.write("%d\n" % proc.pid)
    return proc.pid


def stop(lab_dir):
    """Stop the ticker of ``lab_dir`` (none running is fine)."""
    path = os.path.join(lab_dir, TICKER_PID)
    try:
        with open(path, encoding="utf-8") as fh:
            pid = int(fh.read().strip())
    except (OSError, ValueError):
        return
    try:
        os.kill(pid, signal.SIGTERM)
        for _ in range(50):
            os.kill(pid, 0)
            time.sleep(0.05)
    except OSError:
        pass
    try:
        os.unlink(path)
    except OSError:
        pass


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--tick":
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        tick(sys.argv[2])
    else:
        sys.stderr.write("usage: ib_counters_sysfs.py --tick <lab dir>\n")
        sys.exit(2)
