# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""NIC judgement rules (family ``nic``): ``net`` facts of net_info + the node's expectations -> check records.

Per interface, in this order: ``nic.link.state``, ``nic.link.speed``, ``nic.mtu.value``, ``nic.counters.errors``,
``nic.counters.discards``, ``nic.counters.pause``, ``nic.optic.readings``, ``nic.optic.alarm``,
``nic.optic.rx_power``, ``nic.link.flaps``; the interface is the check's component. Expectations
(``zhisuan_expected.net``): ``interfaces`` (which to judge; default every collected port that is a PCI device or
has a link), ``mtu`` and ``speed_mbps`` (one
number, or a mapping interface -> number). Thresholds (``zhisuan_thresholds.net``), with their defaults:

``errors_max`` (0)
    error counter increments (CRC, FCS, symbol, rx/tx errors) allowed over the counter window.
``discards_max`` (0)
    discard/drop increments over the window before a warning (congestion or a too-small ring).
``pause_per_s_max`` (1000)
    pause frames per second before a warning: a pause storm stalls the whole priority.
``link_flaps_warn`` (1), ``link_flaps_fail`` (3)
    link-down events in the kernel log.
``rx_power_min_dbm`` (null)
    a site floor for Rx power; by default the module's own low warning/alarm thresholds are used.

RDMA port rules are in ``_rdma.py``; cabling in ``_cabling.py``; the cluster consistency in ``_fabric.py``; the
typed view of a NIC's facts in ``_net_facts.py``.
Facts are read through typed views (``_readings``): a value of the wrong type, NaN, infinite, negative or absurd
(a 10^30 Mb/s speed) is "unreadable", an ``error`` check, never a pass. Pure functions, no I/O, standard library only.
"""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._net_facts import clean_nic
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._overrides import overridden
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._parts import net_parts
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._readings import items, mapping, reading, shown, text
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._util import evidence_of, fmt, plural, to_number
from ansible_collections.zhisuan.ops.plugins.module_utils._net.ethtool import counter_class

DEFAULT_THRESHOLDS = {
    "errors_max": 0,
    "discards_max": 0,
    "pause_per_s_max": 1000,
    "link_flaps_warn": 1,
    "link_flaps_fail": 3,
    "rx_power_min_dbm": None,
}
# Alarm/warning flags that point at the fibre end (dirty or damaged connector) rather than the module itself.
_CLEAN_FLAGS = ("rx_power_low_alarm", "rx_power_low_warning")


def thresholds_of(overrides):
    return overridden(DEFAULT_THRESHOLDS, overrides, "threshold net.%s")


def expected_for(expected, key, ifname):
    """An expectation that is one number for every interface, or a mapping interface -> number."""
    value = (expected or {}).get(key)
    if isinstance(value, dict):
        value = value.get(ifname)
    if value is None or value == "":
        return None
    return to_number(value, "zhisuan_expected.net.%s" % key)


def judged_interfaces(facts, expected):
    """``zhisuan_expected.net.interfaces`` when set; else every collected port that is a device (has a bus address)
    or has a link, so a virtual interface without a carrier (``docker0``, an unused bridge) is not reported down."""
    names = (expected or {}).get("interfaces")
    if names:
        return list(names)
    return [name for name, nic in sorted(mapping(facts.get("interfaces")).items())
            if isinstance(nic, dict) and (nic.get("bus_info") or nic.get("link") is True or nic.get("carrier") is True)]


def judge_nic(host, facts, expected=None, thresholds=None):
    """Judge one host's ``net`` facts (NIC part). ``expected`` is ``zhisuan_expected.net``."""
    expected = expected or {}
    limits = thresholds_of(thresholds)
    if not isinstance(facts, dict):
        return [make_check("nic.collect.facts", host, "error", component="net_info", observed=None,
                           expected="net facts", message="No network facts were collected for this host",
                           remedy="investigate", evidence="net facts: %s" % fmt(facts))]
    interfaces = mapping(facts.get("interfaces"))
    checks = []
    for ifname in judged_interfaces(facts, expected):
        nic = clean_nic(interfaces[ifname]) if ifname in interfaces else None
        if nic is None or not nic["present"]:
            checks.append(make_check(
                "nic.link.state", host, "fail", component=ifname, observed="absent", expected="present",
                message="Interface %s is expected on this node but does not exist" % ifname, remedy="investigate",
                evidence=(nic or {}).get("errors", {}).get("ip", "not in the collected interfaces")))
            continue
        checks.append(_link(host, ifname, nic))
        checks.append(_speed(host, ifname, nic, expected_for(expected, "speed_mbps", ifname)))
        checks.append(_mtu(host, ifname, nic, expected_for(expected, "mtu", ifname)))
        checks.extend(_counters(host, ifname, nic, limits, facts.get("counter_window")))
        checks.extend(_optics(host, ifname, nic, limits))
        checks.append(_flaps(host, ifname, facts, limits))
    return checks


def _link(host, ifname, nic):
    evidence = evidence_of(("link detected", nic.get("link")), ("operstate", nic.get("operstate")),
                           ("admin up", nic.get("admin_up")), ("carrier", nic.get("carrier")))
    if nic.get("admin_up") is False:
        return make_check("nic.link.state", host, "fail", component=ifname, observed="admin down", expected="up",
                          message="%s is administratively down (ip link set %s up, and check why it was set down)"
                          % (ifname, ifname), remedy="investigate", evidence=evidence)
    up = nic.get("link")
    if up is None:
        up = nic.get("carrier")
    if up is None:
        return make_check("nic.link.state", host, "error", component=ifname, observed=None, expected="up",
                          message="The link state of %s could not be read: %s" % (
                              ifname, nic.get("errors", {}).get("settings") or "ethtool gave no 'Link detected'"),
                          remedy="investigate", evidence=evidence)
    if not up:
        return make_check("nic.link.state", host, "fail", component=ifname, observed="down", expected="up",
                          message="%s has no link (no carrier): cable unplugged, peer port down or a bad cable/optic"
                          % ifname, remedy="check_cable", evidence=evidence)
    return make_check("nic.link.state", host, "pass", component=ifname, observed="up", expected="up",
                      message="%s link is up" % ifname, evidence=evidence)


def _speed(host, ifname, nic, want):
    speed = nic.get("speed_mbps")
    evidence = evidence_of(("speed_mbps", speed), ("duplex", nic.get("duplex")), ("port", nic.get("port")))
    unreadable = (nic.get("errors") or {}).get("settings")
    if speed is None and unreadable:
        # ethtool's link settings could not be read (empty or garbage output): unknown, never a pass or a skip
        return make_check("nic.link.speed", host, "error", component=ifname, observed=None,
                          expected=">= %s Mb/s" % fmt(want) if want is not None else None,
                          message="The link settings of %s could not be read: %s" % (ifname, unreadable),
                          remedy="investigate", evidence=evidence)
    if want is None:
        return make_check("nic.link.speed", host, "skip", component=ifname, observed=speed, expected=None,
                          message="No expected speed for %s (zhisuan_expected.net.speed_mbps)" % ifname, evidence=evidence)
    if speed is None:
        return make_check("nic.link.speed", host, "skip" if not nic.get("link") else "error", component=ifname,
                          observed=None, expected=">= %s Mb/s" % fmt(want),
                          message="%s reports no speed%s" % (ifname, " (no link)" if not nic.get("link") else ""),
                          remedy=None if not nic.get("link") else "investigate", evidence=evidence)
    if speed < want:
        return make_check("nic.link.speed", host, "fail", component=ifname, observed=speed, expected=">= %s" % fmt(want),
                          message="%s runs at %s Mb/s, below the planned %s Mb/s: a degraded cable, optic or port "
                          "negotiated down" % (ifname, fmt(speed), fmt(want)), remedy="check_cable", evidence=evidence)
    return make_check("nic.link.speed", host, "pass", component=ifname, observed=speed, expected=">= %s" % fmt(want),
                      message="%s runs at %s Mb/s" % (ifname, fmt(speed)), evidence=evidence)


def _mtu(host, ifname, nic, want):
    mtu = nic.get("mtu")
    if mtu is None and nic["errors"].get("mtu"):
        return make_check("nic.mtu.value", host, "error", component=ifname, observed=None, expected=want,
                          message="The MTU of %s could not be read: %s" % (ifname, nic["errors"]["mtu"]),
                          remedy="investigate", evidence="mtu unreadable")
    if want is None:
        return make_check("nic.mtu.value", host, "skip", component=ifname, observed=mtu, expected=None,
                          message="No expected MTU for %s (zhisuan_expected.net.mtu)" % ifname, evidence="mtu=%s" % fmt(mtu))
    if mtu != want:
        return make_check("nic.mtu.value", host, "fail", component=ifname, observed=mtu, expected=want,
                          message="%s has MTU %s, the plan says %s: large RDMA/NCCL packets are dropped or fragmented "
                          "on the path" % (ifname, fmt(mtu), fmt(want)), remedy="tune", evidence="mtu=%s" % fmt(mtu))
    return make_check("nic.mtu.value", host, "pass", component=ifname, observed=mtu, expected=want,
                      message="%s has MTU %s" % (ifname, fmt(mtu)), evidence="mtu=%s" % fmt(mtu))


def _counter_evidence(delta, cls):
    names = dict((name, value) for name, value in sorted((delta.get("counters") or {}).items())
                 if counter_class(name) == cls)
    return ", ".join("%s +%s" % (name, value) for name, value in names.items()) or "no %s counter moved" % cls


def _counters(host, ifname, nic, limits, window):
    delta = nic.get("counters_delta")
    ids = ("nic.counters.errors", "nic.counters.discards", "nic.counters.pause")
    if delta is None:
        reason = nic.get("errors", {}).get("counters")
        status = "error" if reason else "skip"
        message = ("The counters of %s could not be read: %s" % (ifname, reason) if reason
                   else "Counter increments of %s were not collected (counter_window 0)" % ifname)
        return [make_check(check_id, host, status, component=ifname, message=message,
                           remedy="investigate" if reason else None, evidence=reason or "") for check_id in ids]
    seconds = fmt(delta.get("seconds"))
    checks = []
    errors = delta.get("errors") or 0
    if errors > limits["errors_max"]:
        checks.append(make_check(ids[0], host, "fail", component=ifname, observed=errors,
                                 expected="<= %s in %s s" % (fmt(limits["errors_max"]), seconds),
                                 message="%s counted %s in %s s: a bad cable, dirty optic or faulty port corrupts frames"
                                 % (ifname, plural(errors, "error"), seconds), remedy="check_cable",
                                 evidence=_counter_evidence(delta, "errors")))
    else:
        checks.append(make_check(ids[0], host, "pass", component=ifname, observed=errors,
                                 expected="<= %s in %s s" % (fmt(limits["errors_max"]), seconds),
                                 message="%s counted no new errors in %s s" % (ifname, seconds) if not errors else
                                 "%s counted %s in %s s (allowed)" % (ifname, plural(errors, "error"), seconds),
                                 evidence=_counter_evidence(delta, "errors")))
    discards = delta.get("discards") or 0
    bad = discards > limits["discards_max"]
    checks.append(make_check(ids[1], host, "warn" if bad else "pass", component=ifname, observed=discards,
                             expected="<= %s in %s s" % (fmt(limits["discards_max"]), seconds),
                             message=("%s discarded %s in %s s: congestion, a lossy priority or too small rings"
                                      % (ifname, plural(discards, "packet"), seconds)) if bad else
                             "%s discarded %s in %s s" % (ifname, plural(discards, "packet"), seconds),
                             remedy="tune" if bad else None, evidence=_counter_evidence(delta, "discards")))
    rate = delta.get("pause_per_s")
    bad = rate is not None and rate > limits["pause_per_s_max"]
    checks.append(make_check(ids[2], host, "warn" if bad else "pass", component=ifname, observed=rate,
                             expected="<= %s pause frames/s" % fmt(limits["pause_per_s_max"]),
                             message=("%s sees a pause storm: %s pause frames/s over %s s stall the lossless priority "
                                      "(a slow receiver or a PFC misconfiguration)" % (ifname, fmt(rate), seconds)) if bad
                             else "%s: %s pause frames/s over %s s" % (ifname, fmt(rate), seconds),
                             remedy="tune" if bad else None, evidence=_counter_evidence(delta, "pause")))
    return checks


def _optic_remedy(names):
    return "clean_optic" if all(name in _CLEAN_FLAGS for name in names) else "replace_part"


def _optics(host, ifname, nic, limits):
    optics = nic.get("optics")
    ids = ("nic.optic.readings", "nic.optic.alarm", "nic.optic.rx_power")
    if not optics:
        reason = nic.get("optics_reason") or "no module readings"
        return [make_check(check_id, host, "skip", component=ifname, message="%s has no optic readings: %s" % (ifname, reason),
                           evidence=reason) for check_id in ids]
    checks = []
    readings = evidence_of(("temperature_c", optics.get("temperature_c")), ("tx_power_dbm", optics.get("tx_power_dbm")),
                           ("rx_power_dbm", optics.get("rx_power_dbm")), ("bias_ma", optics.get("bias_ma")))
    reasons = optics.get("implausible") or []
    if reasons:
        checks.append(make_check(ids[0], host, "warn", component=ifname, observed="implausible", expected="plausible",
                                 message="The module of %s reports implausible readings (%s): its sensor or EEPROM read "
                                 "cannot be trusted" % (ifname, "; ".join(reasons)), remedy="investigate", evidence=readings))
    else:
        checks.append(make_check(ids[0], host, "pass", component=ifname, observed="plausible", expected="plausible",
                                 message="The module readings of %s are plausible" % ifname, evidence=readings))
    alarms = list(optics.get("alarms") or [])
    warnings = list(optics.get("warnings") or [])
    if alarms or warnings:
        names = alarms or warnings
        checks.append(make_check(ids[1], host, "fail" if alarms else "warn", component=ifname,
                                 observed=", ".join(alarms + warnings), expected="no alarm or warning flag",
                                 message="The module of %s raises %s %s%s" % (
                                     ifname, "alarm" if alarms else "warning", ", ".join(names),
                                     ": clean the fibre ends and re-measure" if _optic_remedy(names) == "clean_optic"
                                     else ": the module is failing; replace it"),
                                 remedy=_optic_remedy(names), evidence=readings))
    else:
        checks.append(make_check(ids[1], host, "pass", component=ifname, observed="none", expected="no alarm or warning flag",
                                 message="The module of %s raises no alarm or warning" % ifname, evidence=readings))
    checks.append(_rx_power(host, ifname, optics, limits, bool(reasons)))
    return checks


def _rx_power(host, ifname, optics, limits, implausible):
    rx = optics.get("rx_power_dbm")
    values = [value for value in (rx if isinstance(rx, list) else [rx]) if value is not None]
    check_id = "nic.optic.rx_power"
    if implausible or not values:
        return make_check(check_id, host, "skip", component=ifname, observed=rx,
                          message="Rx power of %s not judged (%s)" % (ifname, "implausible readings" if implausible else "not reported"))
    lowest = min(values)
    thresholds = optics.get("thresholds") or {}
    alarm = thresholds.get("rx_power_low_alarm_dbm")
    warning = thresholds.get("rx_power_low_warning_dbm")
    floor = limits["rx_power_min_dbm"]
    evidence = evidence_of(("rx_power_dbm", lowest), ("low warning", warning), ("low alarm", alarm), ("site floor", floor))
    if alarm is not None and lowest < alarm:
        status, limit = "fail", alarm
    elif floor is not None and lowest < floor:
        status, limit = "fail", floor
    elif warning is not None and lowest < warning:
        status, limit = "warn", warning
    else:
        limit = warning if warning is not None else floor
        return make_check(check_id, host, "pass", component=ifname, observed=lowest,
                          expected=">= %s dBm" % fmt(limit) if limit is not None else None,
                          message="Rx power of %s is %s dBm" % (ifname, fmt(lowest)), evidence=evidence)
    return make_check(check_id, host, status, component=ifname, observed=lowest, expected=">= %s dBm" % fmt(limit),
                      message="Rx power of %s is %s dBm, below %s dBm: a dirty or damaged fibre end (clean both ends "
                      "and re-measure)" % (ifname, fmt(lowest), fmt(limit)), remedy="clean_optic", evidence=evidence)


def _flaps(host, ifname, facts, limits):
    flaps = facts.get("link_flaps")
    if flaps is not None and not isinstance(flaps, dict):
        flaps, reason = None, "link flap counts are not readable: %s" % shown(flaps)
    else:
        reason = text(facts.get("link_flaps_error"))
    count = mapping(flaps).get(ifname, 0)
    if flaps is not None and reading(count) is None:
        flaps, reason = None, "the link flap count of %s is not readable: %s" % (ifname, shown(count))
    if flaps is None:
        return make_check("nic.link.flaps", host, "error" if reason else "skip", component=ifname,
                          message=("The kernel log could not be read for link flaps: %s" % reason) if reason
                          else "Link flaps were not collected", remedy="investigate" if reason else None, evidence=reason or "")
    events = [str(event.get("line")) for event in items(facts.get("link_flap_events"))
              if isinstance(event, dict) and event.get("interface") == ifname]
    evidence = "\n".join(events[-5:]) or "no link-down event for %s in the kernel log" % ifname
    if count >= limits["link_flaps_fail"]:
        status = "fail"
    elif count >= limits["link_flaps_warn"]:
        status = "warn"
    else:
        return make_check("nic.link.flaps", host, "pass", component=ifname, observed=count,
                          expected="< %s" % fmt(limits["link_flaps_warn"]),
                          message="%s did not lose its link in the kernel log" % ifname, evidence=evidence)
    return make_check("nic.link.flaps", host, status, component=ifname, observed=count,
                      expected="< %s" % fmt(limits["link_flaps_warn"]),
                      message="%s lost its link %s in the kernel log: a loose or damaged cable or optic" % (
                          ifname, plural(count, "time")), remedy="check_cable", evidence=evidence)


def summarize_net(facts):
    """The host's report facts: per interface speed, MTU, link and Rx power; RDMA device count; neighbours."""
    facts = mapping(facts)
    interfaces = {}
    cleaned = {}
    for name, raw in sorted(mapping(facts.get("interfaces")).items()):
        nic = cleaned[name] = clean_nic(raw)
        optics = nic["optics"] or {}
        interfaces[name] = {"link": nic.get("link"), "speed_mbps": nic.get("speed_mbps"), "mtu": nic.get("mtu"),
                            "driver": text(nic.get("driver")), "firmware": text(nic.get("firmware")),
                            "numa_node": reading(nic.get("numa_node")), "rx_power_dbm": optics.get("rx_power_dbm")}
    ib = mapping(facts.get("ib"))
    return {"interfaces": interfaces, "rdma_devices": len(mapping(ib.get("devices"))),
            # NICs (driver, firmware, MAC) and optics (vendor, part number, serial): the asset list's rows
            "parts": net_parts(cleaned),
            "lldp": dict((name, "%s %s" % (mapping(item).get("switch"), mapping(item).get("switch_port")))
                         for name, item in sorted(mapping(facts.get("lldp")).items()))}
