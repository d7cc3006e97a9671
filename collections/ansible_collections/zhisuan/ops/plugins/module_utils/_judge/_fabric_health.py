# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""``gpu.fabric.state``: one GPU's NVLink fabric registration and health (the ``Fabric`` section of ``nvidia-smi
-q``: State, Status, CliqueId, ClusterUUID and the Health flags), judged with its node's other GPUs.

Rules, in order (docs/gpu-facts.md, "NVLink fabric"):

* no state reported (N/A: PCIe cards, boards without NVSwitch, older drivers): ``skip``;
* ``Not Started`` / ``In Progress``: ``warn`` (``investigate``), never a fail: the fabric manager is still training,
  and an idle GB200/GB300 node whose NVLink domain has not formed reads the same while its NVLink bandwidth test
  (``bandwidth`` family) passes;
* ``Completed`` with a status other than ``Success`` (e.g. ``Insufficient Resources``, Azure/azhpc-images#506):
  ``fail``; ``reset_gpu`` when other GPUs of the node registered (the fault is this GPU's), ``investigate`` when none
  did (the fabric manager, the NVSwitches or the rack's NVLink switch trays);
* ``Completed`` / ``Success`` with a health flag up: ``Route Unhealthy`` -> ``fail`` ``reboot``; ``Bandwidth``
  degraded or ``Access Timeout Recovery`` -> ``fail`` ``reset_gpu``; an ``Incorrect Configuration`` or a ``Summary``
  of ``Unhealthy`` with no flag -> ``fail`` ``investigate``; ``Route Recovery in progress`` alone -> ``warn``;
* on a multi-node NVLink model (profile ``nvlink.multi_node: true``, GB200/GB300 NVL72) a ``CliqueId`` of 0 or an
  all-zero ``ClusterUUID`` -> ``fail`` ``investigate``: the GPU is in no NVLink domain. HGX boards (H100, B200)
  print 0 and the zero UUID when healthy, so the rule only applies where the profile says so.

Pure functions, standard library only.
"""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._util import evidence_of, profile_get

CHECK_ID = "gpu.fabric.state"
EXPECTED = "Completed / Success"

_DONE = "completed"
_TRAINING = ("in progress", "not started")
_TRUE = ("true", "yes")
_ZERO_UUID = "00000000-0000-0000-0000-000000000000"
# Remedies of the health flags, strongest first (the one a check carries when several flags are up).
_REMEDY_ORDER = ("reboot", "reset_gpu", "investigate")


def _low(value):
    return str(value).strip().lower() if value is not None else ""


def registered(gpu):
    """True when the GPU's fabric reads Completed / Success."""
    fabric = gpu.get("fabric") if isinstance(gpu, dict) else None
    fabric = fabric if isinstance(fabric, dict) else {}
    return _low(fabric.get("state")) == _DONE and _low(fabric.get("status")) == "success"


def _health_problems(health):
    """``[(what, remedy)]`` for the health flags that are up; ``None`` values (N/A) say nothing."""
    problems = []
    if _low(health.get("route_unhealthy")) in _TRUE:
        problems.append(("Route Unhealthy: the fabric manager could not program a healthy route to this GPU", "reboot"))
    bandwidth = _low(health.get("bandwidth"))
    if bandwidth and bandwidth != "full":
        problems.append(("Bandwidth %s: the GPU reaches the fabric over fewer NVLinks than it has"
                         % health.get("bandwidth"), "reset_gpu"))
    if _low(health.get("access_timeout_recovery")) in _TRUE:
        problems.append(("Access Timeout Recovery: the GPU timed out reaching the fabric and is recovering",
                         "reset_gpu"))
    config = _low(health.get("incorrect_configuration"))
    if config and config not in ("none", "false"):
        problems.append(("Incorrect Configuration: %s" % health.get("incorrect_configuration"), "investigate"))
    if not problems and _low(health.get("summary")) == "unhealthy":
        problems.append(("Summary Unhealthy with no flag named", "investigate"))
    return problems


def _evidence(fabric, health):
    return evidence_of(("fabric.state", fabric.get("state")), ("fabric.status", fabric.get("status")),
                       ("fabric.clique_id", fabric.get("clique_id")),
                       ("fabric.cluster_uuid", fabric.get("cluster_uuid")),
                       ("fabric.health.summary", health.get("summary")),
                       ("fabric.health.bandwidth", health.get("bandwidth")),
                       ("fabric.health.route_recovery", health.get("route_recovery")),
                       ("fabric.health.route_unhealthy", health.get("route_unhealthy")),
                       ("fabric.health.access_timeout_recovery", health.get("access_timeout_recovery")),
                       ("fabric.health.incorrect_configuration", health.get("incorrect_configuration")))


def fabric_check(ctx, profile=None, peers_registered=0, peers=0):
    """Add ``gpu.fabric.state`` to ``ctx`` (a ``_gpu_checks.GpuChecks``). ``peers`` is the number of the node's other
    GPUs that report a fabric state, ``peers_registered`` how many of them read Completed / Success."""
    fabric = ctx.gpu.get("fabric")
    fabric = fabric if isinstance(fabric, dict) else {}
    health = fabric.get("health") if isinstance(fabric.get("health"), dict) else {}
    state, status = fabric.get("state"), fabric.get("status")
    evidence = _evidence(fabric, health)
    label = ctx.label
    if state is None:
        if "fabric.state" in ctx.unreadable:
            ctx.missing(CHECK_ID, "fabric.state", "NVLink fabric state", expected=EXPECTED)
        else:
            ctx.add(CHECK_ID, "skip",
                    message="%s: no NVLink fabric state is reported (N/A: no NVSwitch fabric, or a driver that "
                            "predates it)" % label, evidence=evidence)
        return
    observed = "%s / %s" % (state, status)
    if _low(state) in _TRAINING:
        ctx.add(CHECK_ID, "warn", observed=observed, expected=EXPECTED,
                message="%s is not yet in the NVLink fabric (%s): the fabric manager is still training it or has not "
                        "started; check `systemctl status nvidia-fabricmanager` and recheck in a minute. On an idle "
                        "GB200/GB300 node this is not a fault while the NVLink bandwidth test passes"
                        % (label, state),
                remedy="investigate", evidence=evidence)
        return
    if _low(state) != _DONE or _low(status) != "success":
        _registration_failed(ctx, observed, evidence, peers_registered, peers)
        return
    problems = _health_problems(health)
    if problems:
        remedy = min((remedy for _what, remedy in problems), key=_REMEDY_ORDER.index)
        ctx.add(CHECK_ID, "fail", observed="%s; health: %s" % (observed, health.get("summary") or "flags up"),
                expected=EXPECTED + ", healthy",
                message="%s joined the NVLink fabric but its fabric health is bad (%s): %s" % (
                    label, "; ".join(what for what, _remedy in problems), _HEALTH_REMEDY[remedy]),
                remedy=remedy, evidence=evidence)
        return
    if _low(health.get("route_recovery")) in _TRUE:
        ctx.add(CHECK_ID, "warn", observed="%s; route recovery in progress" % observed, expected=EXPECTED + ", healthy",
                message="%s: the fabric manager is recovering a route to this GPU (Route Recovery in progress); "
                        "recheck in a minute, and reset the GPU if it stays" % label,
                remedy="investigate", evidence=evidence)
        return
    if profile_get(profile, "nvlink", "multi_node") is True and _no_domain(fabric):
        domain = "clique %s, cluster %s" % (fabric.get("clique_id"), fabric.get("cluster_uuid"))
        ctx.add(CHECK_ID, "fail", observed=domain,
                expected="a non-zero clique id and cluster UUID",
                message="%s registered with the fabric but is in no NVLink domain (clique id %s, cluster UUID %s) "
                        "although a %s shares NVLink across the rack: multi-node NVLink jobs cannot use it; check the "
                        "rack's NVLink switch trays, their fabric manager and IMEX, then reboot the node"
                        % (label, fabric.get("clique_id"), fabric.get("cluster_uuid"), profile.get("name")),
                remedy="investigate", evidence=evidence)
        return
    ctx.add(CHECK_ID, "pass", observed=observed, expected=EXPECTED,
            message="%s joined the NVLink fabric (fabric manager training completed)" % label, evidence=evidence)


_HEALTH_REMEDY = {
    "reboot": "reboot the node so the fabric manager reprograms its routes; if it comes back, RMA the GPU or baseboard",
    "reset_gpu": "drain the node and reset the GPU to retrain its NVLinks; if it comes back, read nvidia-smi nvlink -e "
                 "and RMA the GPU or baseboard",
    "investigate": "check the fabric manager's log (/var/log/fabricmanager.log) and the NVSwitch SXids in the kernel "
                   "log",
}


def _no_domain(fabric):
    clique = _low(fabric.get("clique_id"))
    uuid = _low(fabric.get("cluster_uuid"))
    return clique in ("", "0") or uuid in ("", _ZERO_UUID)


def _registration_failed(ctx, observed, evidence, peers_registered, peers):
    label = ctx.label
    if peers_registered:
        ctx.add(CHECK_ID, "fail", observed=observed, expected=EXPECTED,
                message="%s could not join the NVLink fabric (%s) while %d of the node's other %d GPUs did: the fault "
                        "is this GPU's; drain the node and reset it (nvidia-smi -r), reboot if the reset does not "
                        "clear it, RMA if it recurs" % (label, observed, peers_registered, peers),
                remedy="reset_gpu", evidence=evidence + "; peers registered: %d of %d" % (peers_registered, peers))
        return
    ctx.add(CHECK_ID, "fail", observed=observed, expected=EXPECTED,
            message="%s could not join the NVLink fabric (%s), and no other GPU of the node did either: NVLink jobs "
                    "across GPUs will fail; check the nvidia-fabricmanager service and its log "
                    "(/var/log/fabricmanager.log), then reset the GPUs or reboot the node" % (label, observed),
            remedy="investigate", evidence=evidence + "; peers registered: 0 of %d" % peers)
