# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""RDMA port judgement rules (family ``rdma``): ``net.ib`` facts -> check records.

Host checks first: ``rdma.device.present`` (a node expected to have HCAs that has none fails; a node not expected
to have any skips), ``rdma.device.count``, ``rdma.device.readable`` (ibstat's ``ibpanic`` about a device it
listed), ``rdma.firmware.version`` (one firmware per HCA model, and the expected one); then per port
``rdma.port.state``, ``rdma.port.rate``, ``rdma.port.link_layer`` with the component ``mlx5_0 port 1``; last, where
the error counters were read twice (``net.ib.counters_delta``), one ``rdma.port.errors`` per port (``_ib_counters``).

Expectations (``zhisuan_expected.net``): ``hcas`` (number of RDMA devices; 0 or absent: none expected unless
devices are found), ``rate_gbps``, ``link_layer`` (``InfiniBand`` or ``Ethernet``), ``hca_fw``, ``rdma_devices``
(which devices to judge; default all, ``mlx5_bond_0``-style bonds included). Pure functions, standard library only.
"""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._ib_counters import port_error_checks
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._parts import hca_parts
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._readings import items, mapping, reading, shown, text
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._util import evidence_of, fmt, to_number, version_matches


def _number(expected, key):
    value = (expected or {}).get(key)
    if value is None or value == "":
        return None
    return to_number(value, "zhisuan_expected.net.%s" % key)


def _clean_port(raw):
    port = mapping(raw)
    rate = port.get("rate_gbps")
    return {"state": text(port.get("state")), "phys_state": text(port.get("phys_state")),
            "rate_gbps": reading(rate, low=0.0, high=1e5), "link_layer": text(port.get("link_layer")),
            "rate_unreadable": rate is not None and reading(rate, low=0.0, high=1e5) is None}


def _clean_ib(ib):
    """The ``ib`` facts with devices and ports of the types the rules read (``None``: not a mapping at all)."""
    if not isinstance(ib, dict):
        return None
    devices = {}
    for name, raw in mapping(ib.get("devices")).items():
        device = mapping(raw)
        devices[str(name)] = {"ca_type": text(device.get("ca_type")), "fw": text(device.get("fw")),
                              "ports": dict((str(number), _clean_port(port))
                                            for number, port in mapping(device.get("ports")).items())}
    error = ib.get("error")
    if error is not None and not isinstance(error, str):
        error = "unreadable RDMA facts: %s" % shown(error)
    if ib.get("devices") is not None and not isinstance(ib.get("devices"), dict):
        error = error or "unreadable RDMA device list: %s" % shown(ib.get("devices"))
    return {"devices": devices, "error": error, "no_device": text(ib.get("no_device")),
            "errors": [str(item) for item in items(ib.get("errors"))]}


def _port_order(item):
    number = item[0]
    return (0, int(number), "") if number.isascii() and number.isdigit() else (1, 0, number)


def judge_rdma_ports(host, ib, expected=None, thresholds=None):
    expected = expected or {}
    counters_delta = mapping(ib).get("counters_delta")
    want_hcas = _number(expected, "hcas")
    if ib is None:
        return [make_check("rdma.device.present", host, "skip", component="RDMA",
                           message="RDMA ports were not collected (ib_source: none)")]
    ib = _clean_ib(ib) or {"devices": {}, "errors": [], "no_device": None,
                           "error": "the RDMA facts are not a mapping: %s" % shown(ib)}
    if ib.get("error"):
        return [make_check("rdma.device.present", host, "error", component="RDMA", observed=None,
                           expected="readable RDMA state", message="The RDMA state could not be read: %s" % ib["error"],
                           remedy="investigate", evidence=ib["error"])]
    devices = ib["devices"]
    wanted = [str(name) for name in items(expected.get("rdma_devices"))] or sorted(devices)
    checks = []
    if not devices:
        if want_hcas:
            checks.append(make_check(
                "rdma.device.present", host, "fail", component="RDMA", observed=0, expected=int(want_hcas),
                message="No RDMA device on a node that should have %s: %s (check the HCAs are seated and the "
                "driver is loaded)" % (fmt(want_hcas), ib.get("no_device") or "none listed"),
                remedy="investigate", evidence=ib.get("no_device") or ""))
        else:
            checks.append(make_check("rdma.device.present", host, "skip", component="RDMA", observed=0,
                                     message="No RDMA device, and none is expected (zhisuan_expected.net.hcas)",
                                     evidence=ib.get("no_device") or ""))
        return checks
    names = ", ".join(sorted(devices))
    checks.append(make_check("rdma.device.present", host, "pass", component="RDMA", observed=len(devices),
                             expected="> 0", message="%d RDMA device(s) found" % len(devices), evidence=names))
    if want_hcas:
        ok = len(devices) >= want_hcas
        checks.append(make_check("rdma.device.count", host, "pass" if ok else "fail", component="RDMA",
                                 observed=len(devices), expected=">= %s" % fmt(want_hcas),
                                 message=("%d RDMA devices, as planned" % len(devices)) if ok else
                                 "%d RDMA devices, the plan says %s: an HCA is missing (reseat it, check its slot)"
                                 % (len(devices), fmt(want_hcas)), remedy=None if ok else "reseat", evidence=names))
    errors = ib.get("errors") or []
    checks.append(make_check("rdma.device.readable", host, "fail" if errors else "pass", component="RDMA",
                             observed=len(errors), expected=0,
                             message=("An RDMA device could not be read: %s" % errors[0]) if errors
                             else "Every RDMA device could be read", remedy="reseat" if errors else None,
                             evidence="\n".join(errors)))
    checks.append(_firmware(host, devices, expected.get("hca_fw")))
    for name in wanted:
        device = devices.get(name)
        if device is None:
            checks.append(make_check("rdma.port.state", host, "fail", component=name, observed="absent",
                                     expected="ACTIVE", message="RDMA device %s is expected but not listed" % name,
                                     remedy="reseat", evidence="devices: %s" % names))
            continue
        for number, port in sorted(device["ports"].items(), key=_port_order):
            checks.extend(_port(host, "%s port %s" % (name, number), port, expected))
    wanted_set = set(wanted)
    checks.extend(port_error_checks(host, dict((dev, ports) for dev, ports in mapping(counters_delta).items()
                                               if dev in wanted_set), thresholds))
    return checks


def _firmware(host, devices, want):
    by_model = {}
    for name, device in sorted(devices.items()):
        by_model.setdefault(device.get("ca_type") or "unknown", {}).setdefault(device.get("fw") or "unknown", []).append(name)
    evidence = "; ".join("%s: %s" % (model, ", ".join("%s on %s" % (fw, "/".join(names)) for fw, names in sorted(fws.items())))
                         for model, fws in sorted(by_model.items()))
    mixed = [model for model, fws in by_model.items() if len(fws) > 1]
    off = [name for name, device in sorted(devices.items()) if want and device.get("fw") and not version_matches(device["fw"], want)]
    if mixed:
        return make_check("rdma.firmware.version", host, "fail", component="HCA firmware", observed=evidence,
                          expected="one firmware per HCA model", remedy="update_firmware", evidence=evidence,
                          message="HCAs of the same model run different firmware (%s): flash them to one baseline" % ", ".join(mixed))
    if off:
        return make_check("rdma.firmware.version", host, "fail", component="HCA firmware", observed=evidence,
                          expected=want, remedy="update_firmware", evidence=evidence,
                          message="HCA firmware of %s is not the baseline %s" % (", ".join(off), want))
    return make_check("rdma.firmware.version", host, "pass", component="HCA firmware", observed=evidence,
                      expected=want or "one firmware per HCA model", evidence=evidence,
                      message="HCA firmware is consistent%s" % (" and at the baseline %s" % want if want else ""))


def _port(host, component, port, expected):
    state, phys = port.get("state"), port.get("phys_state")
    rate, layer = port.get("rate_gbps"), port.get("link_layer")
    evidence = evidence_of(("state", state), ("phys_state", phys), ("rate_gbps", rate), ("link_layer", layer))
    checks = []
    if state == "ACTIVE" and phys == "LinkUp":
        checks.append(make_check("rdma.port.state", host, "pass", component=component, observed="ACTIVE/LinkUp",
                                 expected="ACTIVE/LinkUp", message="%s is Active, LinkUp" % component, evidence=evidence))
    elif phys == "LinkUp":
        checks.append(make_check("rdma.port.state", host, "fail", component=component, observed="%s/%s" % (state, phys),
                                 expected="ACTIVE/LinkUp", remedy="investigate", evidence=evidence,
                                 message="%s has a physical link but is %s: the subnet manager has not brought it up "
                                 "(check opensm / the UFM)" % (component, state)))
    else:
        checks.append(make_check("rdma.port.state", host, "fail", component=component, observed="%s/%s" % (state, phys),
                                 expected="ACTIVE/LinkUp", remedy="check_cable", evidence=evidence,
                                 message="%s is %s, physical state %s: no link (cable, optic or switch port)"
                                 % (component, state, phys)))
    want = _number(expected, "rate_gbps")
    if want is None:
        checks.append(make_check("rdma.port.rate", host, "skip", component=component, observed=rate,
                                 message="No expected rate (zhisuan_expected.net.rate_gbps)", evidence=evidence))
    elif rate is None and port.get("rate_unreadable"):
        checks.append(make_check("rdma.port.rate", host, "error", component=component, observed=None,
                                 expected=">= %s Gb/s" % fmt(want), remedy="investigate", evidence=evidence,
                                 message="%s: the port rate could not be read" % component))
    elif rate is None or rate < want:
        down = state != "ACTIVE" or phys != "LinkUp"
        checks.append(make_check("rdma.port.rate", host, "skip" if down else "fail", component=component, observed=rate,
                                 expected=">= %s Gb/s" % fmt(want), remedy=None if down else "check_cable", evidence=evidence,
                                 message=("%s has no link, rate not judged" % component) if down else
                                 "%s runs at %s Gb/s, below the planned %s Gb/s: degraded width or speed (cable, optic, "
                                 "or a port forced down)" % (component, fmt(rate), fmt(want))))
    else:
        checks.append(make_check("rdma.port.rate", host, "pass", component=component, observed=rate,
                                 expected=">= %s Gb/s" % fmt(want), message="%s runs at %s Gb/s" % (component, fmt(rate)),
                                 evidence=evidence))
    want_layer = expected.get("link_layer")
    if not want_layer:
        checks.append(make_check("rdma.port.link_layer", host, "skip", component=component, observed=layer,
                                 message="No expected link layer (zhisuan_expected.net.link_layer)", evidence=evidence))
    else:
        ok = str(layer).lower() == str(want_layer).lower()
        checks.append(make_check("rdma.port.link_layer", host, "pass" if ok else "fail", component=component,
                                 observed=layer, expected=want_layer, remedy=None if ok else "tune", evidence=evidence,
                                 message=("%s link layer is %s" % (component, layer)) if ok else
                                 "%s link layer is %s, the plan says %s: set the port type (mlxconfig LINK_TYPE_P1)"
                                 % (component, layer, want_layer)))
    return checks


def summarize_rdma(ib):
    raw = ib
    ib = _clean_ib(ib) or {"devices": {}, "no_device": None}
    devices = ib["devices"]
    ports = [port for device in devices.values() for port in (device.get("ports") or {}).values()]
    return {"devices": len(devices), "ports_active": sum(1 for port in ports if port.get("state") == "ACTIVE"),
            "ports": len(ports), "rates_gbps": sorted(set(port.get("rate_gbps") for port in ports if port.get("rate_gbps"))),
            "firmware": sorted(set(device.get("fw") for device in devices.values() if device.get("fw"))),
            "no_device": ib.get("no_device"),
            # each device's CA type, firmware and node GUID: the asset list's component rows
            "parts": hca_parts(raw)}
