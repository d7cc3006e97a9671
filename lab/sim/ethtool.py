#!/usr/bin/env python3
"""Lab stand-in for ``ethtool`` on one simulated node: the real ethtool for everything but the module EEPROM.

Every invocation except ``-m``/``--module-info`` is handed to the real ``/usr/sbin/ethtool`` unchanged (exec), so
link settings, driver info and counters are those of the node's real (veth) interfaces. A veth has no module
EEPROM, so ``-m IF`` replays a REAL capture instead: ``tests/fixtures/ethtool/ethtool-m-i40e-sfp-10g-sr-dom.txt``
(an Intel i40e SFP+ 10G-SR with digital diagnostics), with values edited per the node's faults:

* ``dirty_optic {port, rx_dbm}``: the receiver power of ``port`` becomes ``rx_dbm`` (mW computed from it, printed
  as ethtool prints it, ``%.4f mW / %.2f dBm``), and the Rx power low warning/alarm flags turn ``On`` when the value
  is below the capture's own low warning (-14.50 dBm) / alarm (-15.50 dBm) thresholds, as the module would raise them;
* ``optic_alarm {port}``: the module of ``port`` is failing: its laser output power drops below the capture's low
  alarm threshold (to -8.00 dBm) and the Tx power low warning and alarm flags turn ``On``.

Each module has its own serial, as real optics have: the capture's ``Vendor SN`` with the node's index (3 digits)
and the port (its name's own characters) appended, ``GJ2308161004`` -> ``GJ2308161004-001eth0`` (the asset list
flags a serial more than one node reports).

Invoked through the per-node wrapper written by ``lab/labctl.py up``::

    ethtool.py --state /abs/nodes/<node>/state.json -m eth0

Standard library only: the wrapper runs it with ``python -I -S``.
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import FIXTURES_DIR, LabError, own_faults, run_sim, split_argv  # noqa: E402

TOOLS = ("ethtool",)
MODULE_CAPTURE = os.path.join(FIXTURES_DIR, "ethtool", "ethtool-m-i40e-sfp-10g-sr-dom.txt")
REAL_ETHTOOL = ("/usr/sbin/ethtool", "/sbin/ethtool", "/usr/bin/ethtool")
MODULE_FLAGS = ("-m", "--dump-module-eeprom", "--module-info")

FAULT_KINDS = {
    "dirty_optic": {"port": str, "rx_dbm": float},
    "optic_alarm": {"port": str},
}
# The Tx power an optic_alarm module reports: below the capture's low alarm threshold (-7.00 dBm).
FAILING_TX_DBM = -8.0

_SN_RE = re.compile(r"^(\s*Vendor SN\s*: )(\S+)$", re.MULTILINE)
_RX_RE = re.compile(r"^(\s*Receiver signal average optical power\s*: ).*$", re.MULTILINE)
_TX_RE = re.compile(r"^(\s*Laser output power\s*: ).*$", re.MULTILINE)
_THRESHOLD_RE = r"^\s*Laser rx power low %s threshold\s*: [\d.]+ mW / (-?[\d.]+) dBm$"


def check_fault(fault, node, where="fault"):
    if not fault["port"].strip():
        raise LabError(f"{where}: fault {fault['kind']!r} needs a non-empty 'port'")
    if fault["kind"] == "dirty_optic" and not -40.0 <= fault["rx_dbm"] <= 5.0:
        raise LabError(f"{where}: fault 'dirty_optic' rx_dbm must be within -40..5 dBm, got {fault['rx_dbm']}")


def _power(dbm):
    return "%.4f mW / %.2f dBm" % (10 ** (dbm / 10.0), dbm)


def _flag(text, name, on):
    pattern = re.compile(r"^(\s*%s\s*: )(On|Off)$" % re.escape(name), re.MULTILINE)
    if not pattern.search(text):
        raise LabError(f"{MODULE_CAPTURE} has no {name!r} flag to edit")
    return pattern.sub(lambda match: match.group(1) + ("On" if on else "Off"), text)


def _threshold(text, which):
    match = re.search(_THRESHOLD_RE % which, text, re.MULTILINE)
    if not match:
        raise LabError(f"{MODULE_CAPTURE} has no Rx power low {which} threshold")
    return float(match.group(1))


def render_module(state, port):
    """The ``ethtool -m PORT`` text of this node: the real capture with the port's faults applied."""
    with open(MODULE_CAPTURE, encoding="utf-8") as fh:
        text = fh.read()
    port_tag = re.sub(r"[^A-Za-z0-9]", "", port)
    text = _SN_RE.sub(lambda match: "%s%s-%03d%s" % (match.group(1), match.group(2), int(state.get("index") or 0),
                                                      port_tag), text)
    for fault in own_faults(state, FAULT_KINDS, check_fault):
        if fault["port"] != port:
            continue
        if fault["kind"] == "dirty_optic":
            rx = float(fault["rx_dbm"])
            text = _RX_RE.sub(lambda match: match.group(1) + _power(rx), text)
            text = _flag(text, "Laser rx power low warning", rx < _threshold(text, "warning"))
            text = _flag(text, "Laser rx power low alarm", rx < _threshold(text, "alarm"))
        elif fault["kind"] == "optic_alarm":
            text = _TX_RE.sub(lambda match: match.group(1) + _power(FAILING_TX_DBM), text)
            text = _flag(text, "Laser output power low warning", True)
            text = _flag(text, "Laser output power low alarm", True)
    return text


def check_state(state):
    """Render once per faulty port (labctl up): a fault the capture cannot carry fails at `up`."""
    for fault in own_faults(state, FAULT_KINDS, check_fault):
        render_module(state, fault["port"])


def _real_ethtool():
    for path in REAL_ETHTOOL:
        if os.access(path, os.X_OK):
            return path
    raise LabError("no real ethtool found (%s); install the ethtool package" % ", ".join(REAL_ETHTOOL))


def main(argv=None):
    state_path, args = split_argv(argv, "ethtool")

    def work(state):
        if args and args[0] in MODULE_FLAGS:
            if len(args) != 2:
                sys.stderr.write("lab ethtool: the lab implements -m IF only (no offset/length/raw options)\n")
                return 2
            return render_module(state, args[1])
        real = _real_ethtool()
        os.execv(real, [real] + args)

    return run_sim("ethtool", state_path, work)


if __name__ == "__main__":
    sys.exit(main())
