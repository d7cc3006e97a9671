# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Host<->device and device<->device bandwidth rules: ``bandwidth`` facts (nvbandwidth, docs/gpu-facts.md) + the model
profile -> one check per GPU and direction, in the gpu family:

``gpu.bandwidth.h2d`` / ``gpu.bandwidth.d2h``
    ``host_to_device_memcpy_ce`` / ``device_to_host_memcpy_ce`` of the GPU against the profile's
    ``h2d_bw_floor_gbs`` (AzNHC ``check_gpu_bw`` applies its first figure to both directions, shared/REFERENCE.md
    1c). Below the floor -> ``fail``, ``reseat``: the PCIe path (GPU, riser, cable, slot) is degraded, as a link
    that trained narrow or slow runs at a fraction of the rate (IBM Autopilot: ~25 % of peak = an x4 link).
``gpu.bandwidth.p2p``
    the GPU's slowest ``device_to_device_memcpy_read_ce`` pair (its row and its column) against ``p2p_bw_floor_gbs``.
    Below -> ``fail``, ``reset_gpu`` (an NVLink that retrained or runs fewer links; gpu.nvlink.* tells which).

Between the floor and ``bandwidth_warn_factor`` (1.05) times it -> ``warn`` (AzNHC's warning band). A profile
without the figure -> ``skip`` with the measured value; a testcase nvbandwidth did not run (or waived) -> ``skip``.

``gpu.bandwidth.verification``
    a copy whose data did not verify (nvbandwidth's ``ASSERT in expression h_errorFlag == 0``, CUDA samples'
    ``bandwidthTest`` ``Result = FAIL``) -> ``fail``, ``investigate`` (data moved wrong: a GPU, NVLink/NVSwitch
    path, PCIe link or host memory fault; re-run per GPU or pair and replace the part it follows), never a skip;
    the testcase's per-GPU checks are then not made (no figure was measured), the failure stands for them.

``gpu.nvlink.traffic`` (``_nvlink_traffic``)
    with ``gpu_bandwidth``'s ``nvlink_traffic``: every NVLink of a GPU carried the device-to-device test's data
    (``nvidia-smi nvlink -gt d`` before and after); an idle link -> ``fail``, ``reset_gpu``.
"""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._gpu.nvbandwidth import pairs, per_gpu
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import guarded, make_check
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._gpu_base import gpu_component
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._nvlink_traffic import DEFAULTS as TRAFFIC_DEFAULTS
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._nvlink_traffic import traffic_checks
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._overrides import overridden
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._util import (
    clean_facts,
    evidence_of,
    fmt,
    profile_get,
    to_number,
)

DEFAULT_THRESHOLDS = dict({"bandwidth_warn_factor": 1.05}, **TRAFFIC_DEFAULTS)
H2D, D2H, P2P = "host_to_device_memcpy_ce", "device_to_host_memcpy_ce", "device_to_device_memcpy_read_ce"
CHECK_IDS = ("gpu.bandwidth.h2d", "gpu.bandwidth.d2h", "gpu.bandwidth.p2p")
_HOST = {
    "gpu.bandwidth.h2d": (H2D, "host-to-device"),
    "gpu.bandwidth.d2h": (D2H, "device-to-host"),
}


def judge_bandwidth(host, facts, profile, thresholds=None, gpu_facts=None):
    """Judge one host's ``bandwidth`` facts; facts of an unexpected shape give one ``error`` check."""
    return guarded("gpu.bandwidth.facts", host, "GPUs", "bandwidth", _judge, host, clean_facts(facts), profile,
                   thresholds=thresholds, gpu_facts=gpu_facts)


def _limits(thresholds):
    limits = overridden(DEFAULT_THRESHOLDS, thresholds)
    return limits


def _components(facts, gpu_facts):
    """nvbandwidth device index -> component text; the -q facts' GPU when the bus ids match (newer nvbandwidth prints
    them), else the device's own name (CUDA and nvidia-smi may number GPUs differently)."""
    by_bus = {}
    for gpu in (gpu_facts or {}).get("gpus") or []:
        if isinstance(gpu, dict) and gpu.get("pci_bus_id"):
            by_bus[str(gpu["pci_bus_id"]).upper()[-12:-2]] = gpu
    names = {}
    for device in facts.get("devices") or []:
        bus = str(device.get("bus_id") or "").upper()[-10:]
        gpu = by_bus.get(bus) if bus else None
        label = "GPU %s" % device["index"] if gpu is None else "GPU %s" % gpu.get("index", device["index"])
        names[device["index"]] = gpu_component(label, gpu) if gpu else "%s (CUDA device, %s)" % (
            label, device.get("name") or "?")
    return names


def _judge(host, facts, profile, thresholds=None, gpu_facts=None):
    limits = _limits(thresholds)
    if not isinstance(facts, dict):
        return [make_check("gpu.bandwidth.facts", host, "error", component="GPUs", expected="bandwidth facts",
                           message="No nvbandwidth facts were collected for this host, so no bandwidth check could "
                                   "run", remedy="investigate", evidence="bandwidth facts: %s" % fmt(facts))]
    names = _components(facts, gpu_facts)
    failed = dict((item.get("testcase"), item.get("evidence")) for item in facts.get("verification_failures") or []
                  if isinstance(item, dict))
    gpus = sorted(set(names) | set(per_gpu(facts, H2D)) | set(per_gpu(facts, D2H)))
    floors = {"host": profile_get(profile, "h2d_bw_floor_gbs"), "p2p": profile_get(profile, "p2p_bw_floor_gbs")}
    model = (profile or {}).get("name") or "model"
    checks = []
    for testcase, evidence in sorted(failed.items(), key=lambda item: str(item[0])):
        checks.append(make_check(
            "gpu.bandwidth.verification", host, "fail", component="GPUs (%s)" % (testcase or "?"),
            observed="data verification failed", expected="copies verify", remedy="investigate",
            evidence="%s: %s" % (facts.get("tool") or "nvbandwidth", evidence),
            message="%s: the data a %s copy moved did not verify (%s): a GPU, NVLink/NVSwitch path, PCIe link or host "
                    "memory corrupts data; drain the node, re-run the test per GPU (or pair) and replace the part the "
                    "failure follows" % (facts.get("tool") or "nvbandwidth", testcase or "bandwidth", evidence[:160])))
    for index in gpus:
        component = names.get(index) or "GPU %s" % index
        for check_id, (testcase, what) in sorted(_HOST.items()):
            if testcase in failed:
                continue
            measured = per_gpu(facts, testcase).get(index)
            checks.append(_rate(host, check_id, component, what, measured, floors["host"], "h2d_bw_floor_gbs",
                                model, limits, testcase, "reseat",
                                "the PCIe path is degraded (a link trained narrow or slow): read gpu.pcie.width and "
                                "gpu.pcie.generation of this GPU, check the BIOS PCIe settings, then reseat the GPU "
                                "and its riser or cable"))
        if P2P in failed:
            continue
        mine = [item for item in pairs(facts, P2P) if index in item[:2]]
        worst = min(mine, key=lambda item: item[2]) if mine else None
        checks.append(_rate(host, "gpu.bandwidth.p2p", component, "device-to-device read (slowest peer)",
                            worst[2] if worst else None, floors["p2p"], "p2p_bw_floor_gbs", model, limits, P2P,
                            "reset_gpu",
                            "an NVLink path of this GPU is slow: read gpu.nvlink.* and gpu.nvlink.errors, drain the "
                            "node and reset the GPU; RMA the GPU or baseboard if it stays slow",
                            pair=worst))
    ran_p2p = bool(pairs(facts, P2P)) or P2P in failed
    checks.extend(traffic_checks(host, facts, limits, gpu_facts=gpu_facts, ran_p2p=ran_p2p))
    return [check for check in checks if check is not None]


def _rate(host, check_id, component, what, measured, floor, key, model, limits, testcase, remedy, advice, pair=None):
    where = "" if pair is None else " (GPU %s -> GPU %s)" % (pair[0], pair[1])
    evidence = evidence_of(("testcase", testcase), ("measured_gbs", measured), ("profile.%s" % key, floor))
    evidence += where
    if measured is None:
        return make_check(check_id, host, "skip", component=component, expected=None,
                          message="%s: nvbandwidth did not measure %s bandwidth (%s not run or waived)"
                                  % (component.split(" (")[0], what, testcase), evidence=evidence)
    observed = "%s GB/s" % fmt(measured)
    label = component.split(" (")[0]
    if floor is None:
        return make_check(check_id, host, "skip", component=component, observed=observed,
                          message="%s: %s bandwidth %s GB/s%s; no floor for a %s (profile %s)"
                                  % (label, what, fmt(measured), where, model, key), evidence=evidence)
    floor = to_number(floor, "profile %s" % key)
    expected = ">= %s GB/s" % fmt(floor)
    if measured < floor:
        return make_check(check_id, host, "fail", component=component, observed=observed, expected=expected,
                          message="%s: %s bandwidth %s GB/s%s is below the %s GB/s floor of a %s: %s"
                                  % (label, what, fmt(measured), where, fmt(floor), model, advice),
                          remedy=remedy, evidence=evidence)
    if measured < floor * limits["bandwidth_warn_factor"]:
        return make_check(check_id, host, "warn", component=component, observed=observed, expected=expected,
                          message="%s: %s bandwidth %s GB/s%s is within %s%% of the %s GB/s floor: watch it"
                                  % (label, what, fmt(measured), where,
                                     fmt(round((limits["bandwidth_warn_factor"] - 1) * 100, 2)), fmt(floor)),
                          remedy="monitor", evidence=evidence)
    return make_check(check_id, host, "pass", component=component, observed=observed, expected=expected,
                      message="%s: %s bandwidth %s GB/s%s (floor %s GB/s)"
                              % (label, what, fmt(measured), where, fmt(floor)),
                      evidence=evidence)


def summarize_bandwidth(facts, profile=None):
    """The host's report facts: the lowest per-GPU figure of each direction (GB/s), and the profile judged against."""
    facts = clean_facts(facts) if isinstance(facts, dict) else {}
    p2p = [item[2] for item in pairs(facts, P2P)]
    return {
        "h2d_min_gbs": min(per_gpu(facts, H2D).values(), default=None),
        "d2h_min_gbs": min(per_gpu(facts, D2H).values(), default=None),
        "p2p_min_gbs": min(p2p) if p2p else None,
        "version": facts.get("version"),
        "profile": (profile or {}).get("name"),
    }
