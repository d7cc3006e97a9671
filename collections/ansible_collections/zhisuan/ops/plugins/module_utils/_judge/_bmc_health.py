# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""The health of every part the BMC lists (``bmc`` facts, docs/bmc-facts.md) -> one check per part that is not
healthy, and one pass per kind for the healthy ones. Pure, stdlib only.

Check ids, in this order: ``bmc.manager.health`` (the BMC itself), ``bmc.processor.health`` (CPUs and other
processors; GPUs are ``bmc.gpu.health``), ``bmc.gpu.health``, ``bmc.memory.health``, ``bmc.storage.health``
(storage subsystems and their controllers), ``bmc.drive.health``, ``bmc.nic.health``, ``bmc.pcie.health``.

- ``Status.State`` ``Absent`` (an empty slot or bay) is never a failure: it is counted, not judged.
- ``Disabled`` is reported as disabled, not as a fault: a skip when its health is OK or unknown, a warning
  (``investigate``) when the BMC also rates it Warning/Critical.
- ``Critical`` fails, ``Warning`` warns, each naming the part (id, name, model, serial) with its remedy:
  drives, DIMMs and processors ``replace_part``; NICs and PCIe devices ``reseat``; a Warning that may be
  transient (a NIC, a PCIe device, a DIMM's correctable errors) and GPUs, storage and the BMC ``investigate``.
  A drive that predicts its failure (``FailurePredicted``) while its health is OK warns ``replace_part``.
- Rollups (``HealthRollup``) repeat the parts below them: the drive is the check that fails; a storage subsystem
  whose rollup (or own health, or a controller's: an NVMe drive is its own controller) is not OK because of one
  of its drives warns, naming the drive and the controller it sits behind (``investigate``); a rollup no part
  explains warns too.
"""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._bmc_inventory import count_of
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._util import fmt

_RANK = {"OK": 0, "Warning": 1, "Critical": 2}
# (facts key, check id, noun, plural, remedy when Critical, remedy when Warning, what to do)
PARTS = (
    ("processors", "bmc.processor.health", "Processor", "processors", "replace_part", "investigate",
     "check its cooling and the BMC log, then replace it"),
    ("gpus", "bmc.gpu.health", "GPU", "GPUs", "investigate", "investigate",
     "run the gpu and dcgm checks on the node, then reseat or RMA it"),
    ("memory", "bmc.memory.health", "DIMM", "DIMMs", "replace_part", "investigate",
     "replace the DIMM (a Warning is often correctable errors: watch the count)"),
    ("drives", "bmc.drive.health", "Drive", "drives", "replace_part", "replace_part",
     "replace the drive (back up what it holds first)"),
    ("nics", "bmc.nic.health", "NIC", "NICs", "reseat", "investigate",
     "check its link and cables, reseat the adapter, then replace it if it stays unhealthy"),
    ("pcie_devices", "bmc.pcie.health", "PCIe device", "PCIe devices", "reseat", "investigate",
     "reseat the card (check the riser and its link), then replace it if it stays unhealthy"),
)


def _name(part, noun):
    ident = part.get("id")
    extra = [str(value) for value in (part.get("name"), part.get("model")) if value and value != ident]
    text = "%s %s" % (noun, ident if ident else "?")
    if extra:
        text += " (%s)" % ", ".join(dict.fromkeys(extra))
    return text


def _evidence(part, keys=("health", "health_rollup", "state", "model", "serial", "firmware_version",
                          "failure_predicted", "location")):
    return ", ".join("%s=%s" % (key, fmt(part.get(key))) for key in keys if key in part)


def _verdict(part, critical_remedy, warning_remedy, advice, component):
    """(status, message, remedy) of one part, or None when it is healthy, absent or reports nothing."""
    health, state = part.get("health"), part.get("state")
    if state == "Absent":
        return None
    if state == "Disabled":
        if health in ("Warning", "Critical"):
            return ("warn", "%s is Disabled and reported %s by the BMC: a disabled part is not judged as a fault; "
                            "find out why it is disabled (by a user, or by the BIOS/BMC after errors)"
                    % (component, health), "investigate")
        return "skip", "%s is Disabled: not judged" % component, "none"
    if health == "Critical":
        return ("fail", "%s is reported Critical by the BMC%s: %s"
                % (component, " (%s)" % state if state not in (None, "Enabled") else "", advice), critical_remedy)
    if health == "Warning":
        return ("warn", "%s is reported Warning by the BMC%s: %s"
                % (component, " (%s)" % state if state not in (None, "Enabled") else "", advice), warning_remedy)
    if part.get("failure_predicted") is True:
        return ("warn", "%s predicts its own failure (FailurePredicted) while its health reads %s: plan its "
                        "replacement" % (component, fmt(health)), "replace_part")
    return None


def _kind_checks(host, parts, check_id, noun, plural, critical_remedy, warning_remedy, advice):
    checks, healthy, absent, unknown = [], [], 0, 0
    for position, part in enumerate(parts):
        if not isinstance(part, dict):
            continue
        component = _name(dict(part, id=part.get("id") or str(position)), noun)
        verdict = _verdict(part, critical_remedy, warning_remedy, advice, component)
        if verdict is None:
            if part.get("state") == "Absent":
                absent += 1
            elif part.get("health") == "OK":
                healthy.append(part.get("id") or str(position))
            else:
                unknown += 1
            continue
        status, message, remedy = verdict
        checks.append(make_check(check_id, host, status, component=component, observed=part.get("health"),
                                 expected="OK", message=message, remedy=remedy, evidence=_evidence(part)))
    if healthy:
        notes = []
        if absent:
            notes.append("%s empty" % count_of(absent, "slot", "slots"))
        if unknown:
            notes.append("%s no health" % count_of(unknown, "reports", "report"))
        checks.append(make_check(check_id, host, "pass", component="%s (all)" % plural[0].upper() + plural[1:],
                                 observed=len(healthy), expected="health OK",
                                 message="%s healthy%s" % (count_of(len(healthy), "%s is" % plural[:-1],
                                                                    "%s are" % plural),
                                                           " (%s)" % ", ".join(notes) if notes else ""),
                                 evidence=", ".join(str(item) for item in healthy[:30]) + (" …" if len(healthy) > 30 else "")))
    return checks


def _storage_checks(host, storage, drives):
    """``bmc.storage.health``: each storage subsystem and its controllers; rollups that only repeat a drive are
    the drive's check."""
    by_id = dict((drive.get("id"), drive) for drive in drives or [] if isinstance(drive, dict))
    checks = []
    for position, item in enumerate(storage or []):
        if not isinstance(item, dict) or item.get("state") == "Absent":
            continue
        name = _name(dict(item, id=item.get("id") or str(position)), "Storage")
        sick_drives = [by_id[ident] for ident in item.get("drives") or [] if ident in by_id
                       and _RANK.get(by_id[ident].get("health"), 0) > 0 and by_id[ident].get("state") != "Absent"]
        because = ""
        if sick_drives:
            because = "; its drive %s is %s (bmc.drive.health): look at the drive first" % (
                ", ".join(str(drive.get("id")) for drive in sick_drives),
                "/".join(sorted(set(str(drive.get("health")) for drive in sick_drives))))
        own = [(name, item)] + [(_name(dict(controller, id=controller.get("id") or str(index)),
                                       "Storage controller") + " of " + name, controller)
                                for index, controller in enumerate(item.get("controllers") or [])
                                if isinstance(controller, dict)]
        judged = False
        for component, part in own:
            verdict = _verdict(part, "replace_part", "investigate",
                               "check the controller (its battery/cache, cables and firmware) with the vendor",
                               component)
            if verdict is None:
                continue
            judged = True
            status, message, remedy = verdict
            if sick_drives and status in ("fail", "warn"):
                # the health of a storage subsystem (an NVMe drive is its own controller) that repeats its drive's
                status, message, remedy = "warn", message.split(":", 1)[0] + because, "investigate"
            checks.append(make_check("bmc.storage.health", host, status, component=component,
                                     observed=part.get("health"), expected="OK", message=message, remedy=remedy,
                                     evidence=_evidence(part)))
        rollup = item.get("health_rollup")
        if not judged and _RANK.get(rollup, 0) > 0:
            why = ("because of its drive %s (bmc.drive.health): the drive sits behind this controller"
                   % ", ".join(str(drive.get("id")) for drive in sick_drives) if sick_drives else
                   "but neither it, its controllers nor the drives the BMC lists say why: look at the storage in the BMC")
            checks.append(make_check(
                "bmc.storage.health", host, "warn", component=name, observed=rollup, expected="OK",
                remedy="investigate", evidence=_evidence(item),
                message="%s rolls up to %s %s" % (name, rollup, why)))
    healthy = [item for item in storage or [] if isinstance(item, dict) and item.get("health") == "OK"
               and not [check for check in checks if check["component"].startswith(_name(item, "Storage"))]]
    if healthy:
        checks.append(make_check("bmc.storage.health", host, "pass", component="Storage (all)", observed=len(healthy),
                                 expected="health OK",
                                 message="%s healthy" % count_of(len(healthy), "storage subsystem is",
                                                                 "storage subsystems are"),
                                 evidence=", ".join(str(item.get("id")) for item in healthy[:30])))
    return checks


def _manager_check(host, manager):
    if not isinstance(manager, dict) or manager.get("health") in (None, "OK"):
        return []
    component = "BMC %s" % " ".join(str(value) for value in (manager.get("id"), "(%s)" % manager["model"]
                                                             if manager.get("model") else None) if value)
    status = "fail" if manager["health"] == "Critical" else "warn"
    return [make_check("bmc.manager.health", host, status, component=component, observed=manager["health"],
                       expected="OK", remedy="investigate", evidence=_evidence(manager, ("health", "model",
                                                                                         "firmware_version")),
                       message="The BMC (%s) reports its own health as %s: read its self-test results and log; "
                               "a reset of the BMC or a firmware update may clear it"
                               % (manager.get("model") or manager.get("id") or "manager", manager["health"]))]


def _manager_checks(host, facts):
    """``bmc.manager.health`` of the system's own BMC (``manager``) and of every other Manager the service lists
    (``managers``: the HGX baseboard's BMC of an NVIDIA tray, HGX_BMC_0), each once."""
    primary = facts.get("manager") if isinstance(facts.get("manager"), dict) else None
    managers = [primary] if primary is not None else []
    for item in facts.get("managers") or []:
        if isinstance(item, dict) and (primary is None or item.get("id") != primary.get("id")):
            managers.append(item)
    return [check for item in managers for check in _manager_check(host, item)]


def _system_checks(host, systems):
    """``bmc.system.health``: each ComputerSystem of a BMC that serves more than one (a multi-node blade), named by
    its resource path, so an unhealthy node is never hidden behind the first one's ``bmc.health.system``."""
    systems = [item for item in systems or [] if isinstance(item, dict)]
    if len(systems) < 2:
        return []
    checks = []
    for item in systems:
        component = "ComputerSystem Systems/%s%s" % (item.get("id") or "?",
                                                     " (%s)" % item["model"] if item.get("model") else "")
        verdict = _verdict(item, "investigate", "investigate",
                           "read this node's event log for the cause (VRM, DIMM, CPU) and repair that part", component)
        if verdict is not None:
            status, message, remedy = verdict
            checks.append(make_check("bmc.system.health", host, status, component=component,
                                     observed=item.get("health"), expected="OK", message=message, remedy=remedy,
                                     evidence=_evidence(item, ("health", "power_state", "model", "serial"))))
    return checks


def part_health_checks(host, facts):
    """The health checks of every part in ``facts`` (``bmc`` facts); lists that are None (not read, or a protocol
    that cannot see them) give no check."""
    checks = _manager_checks(host, facts) + _system_checks(host, facts.get("systems"))
    for key, check_id, noun, plural, critical_remedy, warning_remedy, advice in PARTS:
        if key == "drives" and isinstance(facts.get("storage"), list):
            checks.extend(_storage_checks(host, facts["storage"], facts.get("drives")))
        parts = facts.get(key)
        if not isinstance(parts, list):
            continue
        if key == "processors":
            parts = [part for part in parts if isinstance(part, dict) and part.get("type") != "GPU"]
        checks.extend(_kind_checks(host, parts, check_id, noun, plural, critical_remedy, warning_remedy, advice))
    return checks
