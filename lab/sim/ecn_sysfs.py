#!/usr/bin/env python3
"""The RoCE ECN sysfs files of a simulated node: ``<root>/sys/class/net/<port>/ecn/roce_{np,rp}/enable/<prio>`` and
``roce_np/cnp_dscp``, what ``zhisuan.ops.net_info`` reads under its ``root`` (mlx5 driver layout).

No program stands behind sysfs, so this "simulator" has no ``TOOLS``: ``lab/labctl.py`` writes the files under
``<lab>/nodes/<node>/root`` for every port of a network scenario that lists ``optional: [ecn_sysfs]`` (and again
after ``labctl fault``), and points the node's ``zhisuan_host_root`` there. The values are the REAL capture
``tests/fixtures/qos/rdma-qos-q-eth0-mlx5_0-ecn-all-prios.txt`` (a node's report of each of those files, ``path =
value``: every priority enabled at both points, ``cnp_dscp = 48``), its ``eth0`` paths laid out for each port,
each file holding the value and a newline as sysfs prints it. Faults (edits of those values):

* ``ecn_off {port, priority, point}``: ``roce_<point>/enable/<priority>`` of ``port`` holds ``0`` (``point``
  ``np``, the default, or ``rp``) - ECN switched off for that priority on one node.

Standard library only.
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import FIXTURES_DIR, LabError  # noqa: E402

TOOLS = ()
OPTIONAL = True
CAPTURE = os.path.join(FIXTURES_DIR, "qos", "rdma-qos-q-eth0-mlx5_0-ecn-all-prios.txt")
CAPTURE_PORT = "eth0"
FAULT_KINDS = {
    "ecn_off": {"port": str, "priority": int, "point": (str, "np")},
}
_LINE_RE = re.compile(r"^\s*[^:]+: /sys/class/net/%s/(ecn/\S+) = (\S+)\s*$" % CAPTURE_PORT, re.MULTILINE)


def capture_files():
    """``{path under <port>/: value}`` of the capture's ECN lines (``ecn/roce_np/enable/0``: ``1``, ...)."""
    with open(CAPTURE, encoding="utf-8") as fh:
        text = fh.read()
    files = dict((match.group(1), match.group(2)) for match in _LINE_RE.finditer(text))
    if not files:
        raise LabError(f"{CAPTURE}: no /sys/class/net/{CAPTURE_PORT}/ecn line")
    return files


def check_fault(fault, node, where="fault"):
    ports = node.get("net_ports")
    if not ports:
        raise LabError(f"{where}: fault 'ecn_off' needs a scenario with a 'network' (its ports)")
    if fault["port"] not in ports:
        raise LabError(f"{where}: fault 'ecn_off': port {fault['port']!r} is not one of the node's ports {ports}")
    if not 0 <= fault["priority"] <= 7:
        raise LabError(f"{where}: fault 'ecn_off' priority must be 0..7, got {fault['priority']}")
    if fault["point"] not in ("np", "rp"):
        raise LabError(f"{where}: fault 'ecn_off' point must be np or rp, got {fault['point']!r}")


def files_of(ports, faults):
    """``{relative path under the root: text}`` of the node's ECN files."""
    base = capture_files()
    out = {}
    for port in ports:
        for rel, value in base.items():
            out[os.path.join("sys", "class", "net", port, rel)] = value
    for fault in faults:
        if fault.get("kind") != "ecn_off":
            continue
        rel = os.path.join("sys", "class", "net", fault["port"], "ecn", "roce_%s" % fault["point"], "enable",
                           str(fault["priority"]))
        if rel not in out:
            raise LabError(f"{CAPTURE}: no ECN enable file for {fault['port']} roce_{fault['point']} "
                           f"priority {fault['priority']}")
        out[rel] = "0"
    return dict((rel, value + "\n") for rel, value in out.items())


def write_root(root, ports, faults):
    """Write the node's ECN files under ``root`` (the whole ``sys`` tree there is rewritten)."""
    for rel, text in sorted(files_of(ports, faults).items()):
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = "%s.tmp%d" % (path, os.getpid())
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
