# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""RDMA device and port state: ``ibstat``, ``ibstatus``, the ``ibv_devinfo`` no-device error, and
``/sys/class/infiniband`` read under a root directory.

Every reader returns the same shape::

    {"devices": {"mlx5_0": {"ca_type": "MT4129", "fw": "28.41.1000", "ports": {1: {"state": "ACTIVE",
      "phys_state": "LinkUp", "rate_gbps": 400.0, "link_layer": "InfiniBand"}}}},
     "no_device": None or "why there is no device", "errors": ["ibpanic: ..."]}

States are upper case (``ACTIVE``, ``DOWN``, ``INIT``, ``ARMED``) whichever tool printed them; the physical state
is kept as printed (``LinkUp``, ``Polling``, ``Disabled``). The real "no device" outputs are not failures here:
``ibstat`` prints nothing (rc 0), ``ibstatus`` prints ``Fatal error:  No devices`` (rc 255), ``ibv_devinfo`` says
``Failed to get IB devices list`` (rc 255), and ``/sys/class/infiniband`` is absent: each gives ``devices: {}`` and
a ``no_device`` message. Pure functions except ``read_sysfs`` (reads files only). Standard library only.
"""

import os
import re

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._safe_parse import is_ascii_digits, to_float

NO_DEVICE_IBSTAT = "ibstat listed no RDMA device (no HCA, or its driver is not loaded)"
NO_DEVICE_SYSFS = "no RDMA device under /sys/class/infiniband (no HCA, or its driver is not loaded)"
IBSTATUS_NO_DEVICE = "No devices"
IBV_NO_DEVICE = "Failed to get IB devices list"

_CA_RE = re.compile(r"^CA '([^']+)'\s*$")
_PORT_RE = re.compile(r"^\s*Port ([0-9]{1,4}):\s*$")
_KV_RE = re.compile(r"^\s*([^:]+?):\s*(.*?)\s*$")
_STATUS_HEAD_RE = re.compile(r"^Infiniband device '([^']+)' port ([0-9]{1,4}) status:\s*$")
_RATE_RE = re.compile(r"^([0-9]{1,6}(?:\.[0-9]+)?)(?![0-9.])(?:\s*Gb/sec)?")
_NUMBERED_RE = re.compile(r"^[0-9]+:\s*(.*)$")


def _empty(no_device=None):
    return {"devices": {}, "no_device": no_device, "errors": []}


def _state(value):
    """``Active`` / ``4: ACTIVE`` -> ``ACTIVE``."""
    match = _NUMBERED_RE.match(value.strip())
    return (match.group(1) if match else value).strip().upper() or None


def _phys(value):
    """``5: LinkUp`` / ``LinkUp`` -> ``LinkUp``."""
    match = _NUMBERED_RE.match(value.strip())
    return (match.group(1) if match else value).strip() or None


def _rate(value):
    """``400`` / ``200 Gb/sec (4X HDR)`` -> 400.0 / 200.0."""
    match = _RATE_RE.match(value.strip())
    return to_float(match.group(1)) if match else None


def _port(state=None, phys_state=None, rate_gbps=None, link_layer=None):
    return {"state": state, "phys_state": phys_state, "rate_gbps": rate_gbps, "link_layer": link_layer}


def parse_ibstat(text, warn=None):
    """Parse ``ibstat`` (all CAs). Empty output is the real "no device" answer (rc 0).

    An ``ibpanic:`` line (ibstat exits 255 after listing the devices it could read) goes to ``errors``.
    """
    if not text.strip():
        return _empty(NO_DEVICE_IBSTAT)
    result = _empty()
    device = port = None
    for line in text.splitlines():
        if not line.strip():
            continue
        if line.startswith("ibpanic:") or line.startswith("ibwarn:"):
            result["errors"].append(line.strip())
            continue
        match = _CA_RE.match(line)
        if match:
            device = {"ca_type": None, "fw": None, "hw_version": None, "node_guid": None, "ports": {}}
            result["devices"][match.group(1)] = device
            port = None
            continue
        if device is None:
            raise ParseError("ibstat", "expected a \"CA '<name>'\" line first, got %r" % line.strip())
        match = _PORT_RE.match(line)
        if match:
            port = _port()
            device["ports"][int(match.group(1))] = port
            continue
        match = _KV_RE.match(line)
        if not match:
            if warn is not None:
                warn("ibstat: unreadable line %r; please report" % line.strip())
            continue
        key, value = match.group(1).lower(), match.group(2)
        if port is None:
            if key == "ca type":
                device["ca_type"] = value or None
            elif key == "firmware version":
                device["fw"] = value or None
            elif key == "hardware version":
                device["hw_version"] = value or None
            elif key == "node guid":
                device["node_guid"] = value or None
        else:
            _set_port(port, key, value)
    return result


# A port's lines, as ibstat ("Physical state", "Link layer") and ibstatus ("phys state", "link_layer") name them.
_PORT_FIELDS = {
    "state": ("state", _state),
    "physical state": ("phys_state", _phys),
    "phys state": ("phys_state", _phys),
    "rate": ("rate_gbps", _rate),
    "link layer": ("link_layer", lambda value: value or None),
    "link_layer": ("link_layer", lambda value: value or None),
}


def _set_port(port, key, value):
    field = _PORT_FIELDS.get(key)
    if field is not None:
        port[field[0]] = field[1](value)


def parse_ibstatus(text, warn=None):
    """Parse ``ibstatus``; its ``Fatal error:  No devices`` (rc 255) is the "no device" answer."""
    if IBSTATUS_NO_DEVICE in text and "Infiniband device" not in text:
        return _empty("ibstatus: %s" % " ".join(text.split()))
    result = _empty()
    port = None
    for line in text.splitlines():
        if not line.strip():
            continue
        match = _STATUS_HEAD_RE.match(line)
        if match:
            device = result["devices"].setdefault(match.group(1), {"ca_type": None, "fw": None, "hw_version": None,
                                                                   "node_guid": None, "ports": {}})
            port = _port()
            device["ports"][int(match.group(2))] = port
            continue
        if port is None:
            raise ParseError("ibstatus", "expected \"Infiniband device '<name>' port N status:\" first, got %r"
                             % line.strip())
        match = _KV_RE.match(line)
        if not match:
            if warn is not None:
                warn("ibstatus: unreadable line %r; please report" % line.strip())
            continue
        _set_port(port, match.group(1).lower(), match.group(2))
    return result


def ibv_devinfo_no_device(stderr):
    """The ``ibv_devinfo`` "no device" message (``Failed to get IB devices list: ...``), else ``None``."""
    for line in (stderr or "").splitlines():
        if IBV_NO_DEVICE in line:
            return "ibv_devinfo: %s" % line.strip()
    return None


def read_text(path):
    """A sysfs file's text, stripped; None when it cannot be read."""
    try:
        with open(path) as handle:
            return handle.read().strip()
    except (IOError, OSError):
        return None


def read_sysfs(root="/"):
    """``<root>/sys/class/infiniband/<dev>/{fw_ver, hca_type, ports/<n>/{state, phys_state, rate, link_layer}}``."""
    base = os.path.join(root, "sys", "class", "infiniband")
    try:
        names = sorted(os.listdir(base))
    except (IOError, OSError):
        return _empty(NO_DEVICE_SYSFS)
    if not names:
        return _empty(NO_DEVICE_SYSFS)
    result = _empty()
    for name in names:
        device = {"ca_type": read_text(os.path.join(base, name, "hca_type")), "fw": read_text(os.path.join(base, name, "fw_ver")),
                  "hw_version": read_text(os.path.join(base, name, "hw_rev")), "node_guid": read_text(os.path.join(base, name, "node_guid")),
                  "ports": {}}
        ports_dir = os.path.join(base, name, "ports")
        try:
            ports = sorted(os.listdir(ports_dir), key=lambda item: int(item) if is_ascii_digits(item) else 0)
        except (IOError, OSError):
            ports = []
        for number in ports:
            if not is_ascii_digits(number):
                continue
            pdir = os.path.join(ports_dir, number)
            state = read_text(os.path.join(pdir, "state"))
            phys = read_text(os.path.join(pdir, "phys_state"))
            rate = read_text(os.path.join(pdir, "rate"))
            device["ports"][int(number)] = _port(
                _state(state) if state else None, _phys(phys) if phys else None,
                _rate(rate) if rate else None, read_text(os.path.join(pdir, "link_layer")))
        result["devices"][name] = device
    return result
