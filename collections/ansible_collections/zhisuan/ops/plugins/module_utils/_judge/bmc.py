# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""BMC judgement rules: ``bmc`` facts (docs/bmc-facts.md, Redfish or IPMI) + the bill of materials -> checks.

Pure functions, stdlib only. Check order: ``bmc.readout.resources``, ``bmc.readout.<part>`` (a firmware, log or
BIOS read that failed after the inventory, ``failed_reads``), ``bmc.readout.system``, ``bmc.power.state``,
``bmc.health.system``, ``bmc.sensor.<kind>`` (kinds in SENSOR_KINDS order), ``bmc.psu.health`` per PSU,
``bmc.fan.health`` per fan, the health of every other part (``_bmc_health``: ``bmc.manager.health``,
``bmc.processor.health``, ``bmc.gpu.health``, ``bmc.memory.health``, ``bmc.storage.health``, ``bmc.drive.health``,
``bmc.nic.health``, ``bmc.pcie.health``, ``bmc.system.health`` per node of a multi-node BMC: one check per part
that is not healthy, one pass per kind), then
``bmc.readout.log`` per log that could not be read whole and ``bmc.sel.critical``, then the
inventory against ``zhisuan_expected``: ``bmc.gpu.count``, ``bmc.gpu.model``,
``bmc.memory.count``, ``bmc.memory.size``, ``bmc.nic.count``, ``bmc.drive.count``, ``bmc.psu.count``.

Sensors: a sensor outside its critical or fatal thresholds fails, one outside its caution thresholds warns
(comparisons are strict: a reading equal to a threshold is inside it, as a BMC reports "0 RPM, lower critical 0" on
an empty fan bay); a sensor whose health is Critical fails and Warning warns even without thresholds. Every sensor
out of range is its own check (component = the sensor); the sensors of a kind that are fine are one pass check.

Inventory keys of ``zhisuan_expected`` (each optional; no key, no check): ``gpu_count`` and ``gpu_model`` (shared
with the ``gpu`` family: the same bill of materials seen in-band and by the BMC), ``dimm_count``, ``memory_gib``,
``bmc_nic_count`` (network adapters as the BMC lists them, onboard ones included: not the RDMA NIC count of the
``nic`` family), ``drive_count``, ``psu_count``. A list the protocol cannot read (``null``, e.g. memory over IPMI)
is a skip. When the BMC lists fewer items than expected while some of that list's resources could not be read
(``unreadable`` of the Redfish facts: a member that answers 404 while its siblings read), the count is an ``error``
naming the unreadable resources, not a ``fail``: the part may be there, the BMC did not say. The inventory rules are
in ``_bmc_inventory``.

A host ComputerSystem that could not be read (``system_readable: false``) gives a ``bmc.readout.system`` error
naming it; the system's health is then the worst chassis health, as the Redfish collector reports it.
"""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._bmc_health import part_health_checks
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._bmc_inventory import count_of, inventory_checks, label
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._parts import bmc_parts
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._util import fmt
from ansible_collections.zhisuan.ops.plugins.module_utils._safe_parse import iso_time

SENSOR_KINDS = ("temperature", "voltage", "current", "power", "fan", "other")
_SENSOR_REMEDY = {"fan": "replace_part"}
_SENSOR_WHY = {
    "temperature": "check cooling (fans, airflow, inlet temperature, heatsinks)",
    "voltage": "check power delivery (PSUs, VRs) with the vendor",
    "current": "check power delivery (PSUs, VRs) with the vendor",
    "power": "check power delivery and the power cap",
    "fan": "the fan is failing or missing; replace it",
    "other": "look at the sensor in the BMC",
}
SEL_EVIDENCE_MAX = 10
_READ_WHAT = {"firmware": "firmware inventory", "log": "log (SEL)", "bios": "BIOS attributes"}


def _reading(value, units):
    return "%s %s" % (fmt(value), units) if units else fmt(value)


def _sensor_verdict(sensor):
    """(status, reason) of one sensor; status None when there is nothing to judge."""
    reading = sensor.get("reading")
    limits = sensor.get("thresholds") or {}
    if sensor.get("state") in ("Disabled", "StandbyOffline", "Absent"):
        return "skip", "%s in the BMC: not judged%s" % (
            sensor["state"], " (it reports %s)" % sensor["health"] if sensor.get("health") else "")
    if isinstance(reading, (int, float)) and not isinstance(reading, bool):
        for level, status in (("fatal", "fail"), ("critical", "fail"), ("caution", "warn")):
            upper = limits.get("upper_" + level)
            lower = limits.get("lower_" + level)
            if upper is not None and reading > upper:
                return status, "above its upper %s threshold %s" % (level, fmt(upper))
            if lower is not None and reading < lower:
                return status, "below its lower %s threshold %s" % (level, fmt(lower))
    health = sensor.get("health")
    if health == "Critical":
        return "fail", "reported Critical by the BMC"
    if health == "Warning":
        return "warn", "reported Warning by the BMC"
    if reading is None and health is None:
        return None, "no reading"
    return "pass", "within its thresholds"


def _sensor_checks(host, sensors):
    checks = []
    by_kind = {}
    for sensor in sensors:
        kind = sensor.get("kind") if sensor.get("kind") in SENSOR_KINDS else "other"
        by_kind.setdefault(kind, []).append(sensor)
    for kind in SENSOR_KINDS:
        fine = []
        for sensor in by_kind.get(kind, []):
            status, why = _sensor_verdict(sensor)
            if status is None:
                continue
            if status == "skip":
                checks.append(make_check("bmc.sensor.%s" % kind, host, "skip", component="Sensor %s" % label(sensor, "sensor"),
                                         observed=sensor.get("reading"), expected="health OK",
                                         message="%s sensor %s is %s" % (kind.capitalize(), label(sensor, "sensor"), why),
                                         evidence="reading=%s, health=%s, state=%s" % (
                                             fmt(sensor.get("reading")), fmt(sensor.get("health")), fmt(sensor.get("state")))))
                continue
            if status == "pass":
                fine.append(sensor)
                continue
            name = label(sensor, "sensor")
            limits = sensor.get("thresholds") or {}
            bounds = ", ".join("%s=%s" % (key, fmt(value)) for key, value in sorted(limits.items()) if value is not None)
            checks.append(make_check(
                "bmc.sensor.%s" % kind, host, status, component="Sensor %s" % name,
                observed=sensor.get("reading"), expected=bounds or "health OK",
                message="%s sensor %s reads %s, %s: %s" % (kind.capitalize(), name,
                                                           _reading(sensor.get("reading"), sensor.get("units")), why,
                                                           _SENSOR_WHY[kind]),
                remedy=_SENSOR_REMEDY.get(kind, "investigate"),
                evidence="reading=%s, health=%s%s" % (fmt(sensor.get("reading")), fmt(sensor.get("health")),
                                                      ", " + bounds if bounds else "")))
        if fine:
            names = [label(sensor, "?") for sensor in fine]
            checks.append(make_check(
                "bmc.sensor.%s" % kind, host, "pass", component="Sensors (%s)" % kind, observed=len(fine),
                expected="within thresholds",
                message="%s within %s thresholds" % (count_of(len(fine), "%s sensor is" % kind, "%s sensors are" % kind),
                                                     "its" if len(fine) == 1 else "their"),
                evidence=", ".join(names[:20]) + (" …" if len(names) > 20 else "")))
    return checks


def _power_check(host, system):
    state = system.get("power_state")
    evidence = "PowerState=%s" % fmt(state)
    if state is None:
        return make_check("bmc.power.state", host, "error", component="System power", observed=None, expected="On",
                          message="The BMC did not report the power state of the system", remedy="investigate",
                          evidence=evidence)
    if state == "On":
        return make_check("bmc.power.state", host, "pass", component="System power", observed=state, expected="On",
                          message="The system is powered on", evidence=evidence)
    if state in ("PoweringOn", "PoweringOff"):
        return make_check("bmc.power.state", host, "warn", component="System power", observed=state, expected="On",
                          message="The system is %s; check again once it has settled" % state, remedy="monitor",
                          evidence=evidence)
    # Off: not power_cycle (there is nothing to cycle, and a node held off on purpose or by a tripped breaker must
    # not be switched on blindly): a person finds out why, then powers it on (zhisuan.ops power module, state=on).
    return make_check("bmc.power.state", host, "fail", component="System power", observed=state, expected="On",
                      message="The system is powered %s: find out why (held off on purpose, PDU or breaker, power "
                              "fault in the SEL), then power it on through the BMC" % state.lower(),
                      remedy="investigate", evidence=evidence)


def _health_check(host, system):
    health = system.get("health")
    if health is None:
        return None
    status = {"OK": "pass", "Warning": "warn", "Critical": "fail"}.get(health, "warn")
    message = ("The BMC reports the system healthy" if status == "pass"
               else "The BMC reports the system's health as %s; the sensor, PSU, fan and part checks and the log below "
               "name what is not healthy" % health)
    return make_check("bmc.health.system", host, status, component="System", observed=health, expected="OK",
                      message=message, remedy=None if status == "pass" else "investigate",
                      evidence="Status.Health=%s" % health)


def _psu_checks(host, supplies):
    checks = []
    feeding = [psu for psu in supplies if isinstance(psu.get("input_watts"), (int, float)) and psu["input_watts"] > 0]
    for position, psu in enumerate(supplies):
        name = label(psu, "PSU %d" % position)
        health, state = psu.get("health"), psu.get("state")
        evidence = "health=%s, state=%s, input_watts=%s, model=%s, serial=%s" % (
            fmt(health), fmt(state), fmt(psu.get("input_watts")), fmt(psu.get("model")), fmt(psu.get("serial")))
        component = "PSU %s" % name
        if state == "Absent":
            checks.append(make_check("bmc.psu.health", host, "skip", component=component, observed="Absent",
                                     expected="OK", message="%s: the bay is empty (see bmc.psu.count)" % component,
                                     evidence=evidence))
        elif state == "Disabled":
            checks.append(make_check("bmc.psu.health", host, "warn", component=component, observed="Disabled",
                                     expected="OK", remedy="investigate", evidence=evidence,
                                     message="%s is Disabled%s: not judged as a fault, but it does not feed the node; "
                                             "find out why it is disabled" % (
                                                 component, " (reported %s)" % health if health else "")))
        elif health == "Critical":
            checks.append(make_check("bmc.psu.health", host, "fail", component=component, observed=health,
                                     expected="OK", message="%s has failed (health Critical): replace it" % component,
                                     remedy="replace_part", evidence=evidence))
        elif psu.get("input_watts") == 0 and feeding:
            checks.append(make_check("bmc.psu.health", host, "warn", component=component, observed="no input power",
                                     expected="input power", remedy="check_cable", evidence=evidence,
                                     message="%s draws no input power while %s: check its power cord and PDU "
                                             "outlet (the node has lost power redundancy)"
                                             % (component, count_of(len(feeding), "other PSU does", "other PSUs do"))))
        elif health == "Warning":
            checks.append(make_check("bmc.psu.health", host, "warn", component=component, observed=health,
                                     expected="OK", remedy="investigate", evidence=evidence,
                                     message="%s reports Warning: check its input power and the BMC log" % component))
        elif health is None:
            checks.append(make_check("bmc.psu.health", host, "skip", component=component, observed=None,
                                     expected="OK", message="%s: the BMC reports no health" % component,
                                     evidence=evidence))
        else:
            checks.append(make_check("bmc.psu.health", host, "pass", component=component, observed=health,
                                     expected="OK", message="%s is healthy" % component, evidence=evidence))
    return checks


def _fan_checks(host, fans):
    checks = []
    for position, fan in enumerate(fans):
        name = label(fan, "Fan %d" % position)
        health, state = fan.get("health"), fan.get("state")
        evidence = "health=%s, state=%s, reading=%s" % (fmt(health), fmt(state),
                                                        _reading(fan.get("reading"), fan.get("units")))
        component = "Fan %s" % name
        if state == "Absent" or health is None:
            status, message, remedy = "skip", "%s: %s" % (component, "no fan in this bay" if state == "Absent"
                                                          else "the BMC reports no health"), None
        elif state == "Disabled":
            status, message, remedy = "skip", "%s is Disabled (reported %s): not judged" % (component, health), None
        elif health == "Critical":
            status, message, remedy = "fail", "%s has failed (health Critical): replace it" % component, "replace_part"
        elif health == "Warning":
            status, message, remedy = "warn", "%s reports Warning (degraded speed?): plan its replacement" % component, "replace_part"
        else:
            status, message, remedy = "pass", "%s is healthy" % component, None
        checks.append(make_check("bmc.fan.health", host, status, component=component, observed=health,
                                 expected="OK", message=message, remedy=remedy, evidence=evidence))
    return checks


def parse_time(value):
    """An ISO 8601 time (``2024-05-01T10:00:00Z``, ``...+08:00``, a date) as an aware datetime, or None."""
    return iso_time(value)


def _log_line(entry):
    return "%s %s: %s%s" % (entry.get("created") or "time unknown", entry.get("source") or "log", entry.get("message") or "",
                            " (%s)" % entry["message_id"] if entry.get("message_id") else "")


def _log_error_checks(host, log_errors):
    """One ``bmc.readout.log`` error per log the collector could not read whole (``log_errors`` of
    redfish_log_info: a page that failed, a log with more pages than the bound, no readable log service)."""
    checks = []
    for item in log_errors if isinstance(log_errors, list) else []:
        if not isinstance(item, dict):
            continue
        where = item.get("source") or item.get("log") or "BMC logs"
        read = item.get("entries_read")
        kept = " (%s read before it are judged)" % count_of(read, "entry", "entries") if read else ""
        checks.append(make_check(
            "bmc.readout.log", host, "error", component="Log %s" % where, observed="unread",
            expected="every page read", remedy="investigate",
            evidence="%s: %s" % (item.get("resource"), item.get("error")),
            message="The BMC log %s could not be read whole: %s failed (%s)%s; entries in it may be missed"
                    % (where, item.get("resource") or "a page", item.get("error") or "unreadable", kept)))
    return checks


def _undecoded(log):
    """``; N hardware OEM records not decoded (…)`` for the entries whose meaning the collector could not read: OEM
    records (vendor data; informational ones, e.g. written by an OS, are left out) and events without an event text
    (OEM event types). They are named, never judged: a Critical fault may hide in them, the vendor's tool reads them."""
    oem, textless = {}, 0
    for entry in log:
        if entry.get("severity") is not None or entry.get("class", "hardware") != "hardware":
            continue
        if entry.get("oem"):
            who = entry.get("manufacturer") or "vendor not named"
            oem[who] = oem.get(who, 0) + 1
        elif entry.get("source") == "SEL" and "oem" in entry:      # an IPMI SEL event ipmitool printed no text for
            textless += 1
    parts = []
    if oem:
        parts.append("%s not decoded (vendor data: %s; read them with the vendor's tool)" % (
            count_of(sum(oem.values()), "hardware OEM record", "hardware OEM records"),
            ", ".join("%s %d" % (who, oem[who]) for who in sorted(oem))))
    if textless:
        parts.append("%s without an event text (OEM or unspecified event type) not judged"
                     % count_of(textless, "entry", "entries"))
    return "".join("; " + part for part in parts)


def _sel_check(host, log, since, log_errors=None):
    """``bmc.sel.critical``: Critical hardware entries (an entry's ``class``; entries without one are hardware).
    Critical audit/security and informational entries are named in the message but do not fail. Where some log
    could not be read whole (``log_errors``) and no Critical hardware entry was found, the check is an ``error``,
    never a pass over an unread log."""
    unread = [item for item in log_errors or [] if isinstance(item, dict)] if isinstance(log_errors, list) else []
    if log is None:
        if unread:
            return make_check("bmc.sel.critical", host, "error", component="System event log",
                              expected="no Critical entries", remedy="investigate",
                              message="The BMC log could not be read (see bmc.readout.log)",
                              evidence="; ".join("%s: %s" % (item.get("resource"), item.get("error")) for item in unread))
        return make_check("bmc.sel.critical", host, "skip", component="System event log", expected="no Critical entries",
                          message="The BMC log was not collected")
    start = parse_time(since)
    if since and start is None:
        raise ValueError("since must be an ISO 8601 time, got %r" % (since,))
    critical, other = [], []
    for entry in log:
        if entry.get("severity") != "Critical":
            continue
        when = parse_time(entry.get("created"))
        if start is not None and when is not None and when < start:
            continue
        (critical if entry.get("class", "hardware") == "hardware" else other).append(entry)
    window = " since %s" % since if since else ""
    expected = "no Critical entries%s" % window
    what = "Critical hardware" if other else "Critical"
    aside = ""
    if other:
        kinds = sorted(set(str(entry.get("class")) for entry in other))
        aside = "; %s not counted (%s records, not hardware)" % (
            count_of(len(other), "Critical entry", "Critical entries"), " and ".join(kinds))
    not_read = ""
    if unread:
        not_read = "; %s could not be read whole (see bmc.readout.log)" % count_of(len(unread), "log", "logs")
    aside += _undecoded(log)
    if not critical:
        status = "error" if unread else "pass"
        return make_check("bmc.sel.critical", host, status, component="System event log", observed=0,
                          expected=expected, remedy="investigate" if unread else None,
                          message="No %s entries in the BMC log%s (%s read)%s%s"
                                  % (what, window, count_of(len(log), "entry", "entries"), aside, not_read))
    lines = [_log_line(entry) for entry in critical[:SEL_EVIDENCE_MAX]]
    if len(critical) > SEL_EVIDENCE_MAX:
        lines.append("… %d more" % (len(critical) - SEL_EVIDENCE_MAX))
    return make_check("bmc.sel.critical", host, "fail", component="System event log", observed=len(critical),
                      expected=expected,
                      message="The BMC logged %s%s; read them before sign-off (the newest: %s)%s%s"
                              % (count_of(len(critical), what + " entry", what + " entries"), window,
                                 critical[-1].get("message") or "?", aside, not_read),
                      remedy="investigate", evidence="\n".join(lines))


# ------------------------------------------------------------------------------------------- entry points

def judge_bmc(host, bmc_facts, expected=None, thresholds=None, log=None, since=None, log_errors=None):
    """Judge one host's ``bmc`` facts. ``log``: the BMC log entries (``log`` of the log module), ``since``: ISO time
    from which Critical entries count (``None``: all), ``log_errors``: the logs that could not be read whole
    (``log_errors`` of redfish_log_info), each a ``bmc.readout.log`` error. ``thresholds`` is accepted for symmetry with the other
    families; the sensor limits are the BMC's own. Returns check records."""
    expected = expected or {}
    facts = bmc_facts or {}
    system = facts.get("system") or {}
    checks = []
    errors = facts.get("errors") or []
    if errors:
        checks.append(make_check("bmc.readout.resources", host, "warn", component="BMC", observed=len(errors),
                                 expected="0 unreadable resources", remedy="investigate",
                                 message="The BMC did not answer for %s, so the checks below may be incomplete"
                                         % count_of(len(errors), "resource", "resources"),
                                 evidence="; ".join("%s: %s" % (item.get("resource"), item.get("error")) for item in errors)))
    else:
        checks.append(make_check("bmc.readout.resources", host, "pass", component="BMC", observed=0,
                                 expected="0 unreadable resources", message="Every BMC resource read could be read"))
    failed_reads = facts.get("failed_reads")
    for item in failed_reads if isinstance(failed_reads, list) else []:
        if not isinstance(item, dict):
            continue
        part = str(item.get("part") or "other")
        checks.append(make_check("bmc.readout.%s" % part, host, "error", component="BMC %s" % part,
                                 observed="unreadable", expected="readable", remedy="investigate",
                                 evidence=str(item.get("error") or ""),
                                 message="The BMC's %s could not be read: %s" % (_READ_WHAT.get(part, part),
                                                                                 item.get("error") or "failed")))
    if facts.get("system_readable") is False:
        where = [str(item.get("resource")) for item in errors if isinstance(item, dict)
                 and item.get("resource") and "/Systems" in str(item.get("resource"))] or ["the Systems collection"]
        checks.append(make_check("bmc.readout.system", host, "error", component="System", observed="unreadable",
                                 expected="a readable ComputerSystem", remedy="investigate", evidence="; ".join(where),
                                 message="The BMC did not answer for the host's ComputerSystem (%s): power state, "
                                         "BIOS, processors, memory and drives are unknown; GPUs, sensors, PSUs, fans "
                                         "and health come from the Chassis side" % where[0]))
    if facts.get("system_readable") is False:
        checks.append(make_check("bmc.power.state", host, "skip", component="System power", expected="On",
                                 message="The power state is unknown: the ComputerSystem could not be read "
                                         "(see bmc.readout.system)"))
    else:
        checks.append(_power_check(host, system))
    health = _health_check(host, system)
    if health is not None:
        checks.append(health)
    checks.extend(_sensor_checks(host, facts.get("sensors") or []))
    checks.extend(_psu_checks(host, facts.get("power_supplies") or []))
    checks.extend(_fan_checks(host, facts.get("fans") or []))
    checks.extend(part_health_checks(host, facts))
    checks.extend(_log_error_checks(host, log_errors))
    checks.append(_sel_check(host, log, since, log_errors))
    checks.extend(inventory_checks(host, facts, expected))
    return checks


def summarize_bmc(bmc_facts, firmware=None):
    """The report's facts for the host's BMC: identity, BIOS and BMC firmware, power state; the GPUs the BMC sees
    (model and count, null when the BMC has no GPU list) and the parts its inventory holds (``_parts.bmc_parts``:
    the asset list's component rows)."""
    facts = bmc_facts or {}
    gpus = facts.get("gpus") if isinstance(facts.get("gpus"), list) else None
    system = facts.get("system") or {}
    manager = facts.get("manager") or {}
    bmc_firmware = manager.get("firmware_version")
    for item in firmware or []:
        if bmc_firmware is None and item.get("component") == "bmc":
            bmc_firmware = item.get("version")
    return {
        "protocol": facts.get("protocol"),
        "address": facts.get("address"),
        "vendor": facts.get("vendor"),
        "manufacturer": system.get("manufacturer"),
        "model": system.get("model"),
        "serial": system.get("serial"),
        "bios_version": system.get("bios_version"),
        "bmc_firmware": bmc_firmware,
        "power_state": system.get("power_state"),
        "health": system.get("health"),
        # how the Redfish client authenticated (session | basic; null over IPMI): bmc_auth auto reports its choice
        "auth": facts.get("auth"),
        "gpu_model": ", ".join(sorted(set(str(gpu.get("model")) for gpu in gpus
                                          if isinstance(gpu, dict) and gpu.get("model")))) or None
        if gpus else None,
        "gpu_count": len(gpus) if gpus is not None else None,
        "parts": bmc_parts(facts),
    }
