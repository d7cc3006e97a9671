# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""GPU judgement rules: ``gpu`` facts (docs/gpu-facts.md) + model profile + site thresholds -> check records.

Pure functions, no I/O, standard library only. One check per (id, GPU) for per-GPU metrics, pass checks included, in
a fixed order: host-wide checks first (count, driver, CUDA), then each GPU in the order the facts list them (bus
order) with its checks in the order of ``GPU_CHECK_IDS``.

Limits come from the driver first (slowdown temperature, power limit, PCIe max), then from the profile, so the rules
still work with no profile. Thresholds a site may override (``thresholds``), with their defaults:

``temperature_margin_c``
    warn when the GPU is this close to its slowdown limit (default: the profile's ``temperature.gpu_warn_margin_c``,
    else 5).
``temperature_peer_delta_c``
    warn when a GPU runs this much hotter than the median of the node's other GPUs at the same load
    (``gpu.temperature.peers``, ``_thermal_peers``; default: the profile's ``temperature.peer_delta_c``, else 15).
``ecc_volatile_uncorrected_max`` (0), ``ecc_aggregate_uncorrected_max`` (0)
    uncorrectable ECC errors allowed since the driver loaded / over the GPU's life.
``remapped_rows_uncorrectable_max`` (512)
    rows remapped for uncorrectable errors before the GPU is an RMA case (AzNHC and sichek use 512, shared/REFERENCE.md
    1d [V]).
``remap_banks_exhausted_max`` (0)
    DRAM banks allowed with no reserved row left (the bank remap availability histogram's "None"; NVML: "no reserved
    rows available") before the GPU is an RMA case, reported by ``gpu.remap.uncorrectable`` (docs/gpu-facts.md,
    "Row remapping policy").
``retired_pages_max`` (10)
    retired pages (single + double bit) allowed on pre-Ampere GPUs (GCM ``gpu_retired_pages`` default 10 [V]).
``power_over_limit_pct`` (5)
    power draw above the enforced limit by more than this is a fault.

NVLink (``_nvlink_checks``) is judged against the profile's ``nvlink.links`` and ``nvlink.speed_gbs_per_link``
(sites override them with profile overrides); ``nvlink: null`` in a profile marks a PCIe model (checks skipped).
The NVLink error counters' growth (``_nvlink_errors``: ``gpu.nvlink.errors``, thresholds ``nvlink_replay_max`` (0),
``nvlink_recovery_max`` (0), ``nvlink_crc_per_s_max`` (100)) is judged only when it was collected
(``OPTIONAL_GPU_CHECK_IDS``, right after ``gpu.nvlink.speed``), and so is where the links lead
(``_nvlink_remote``: ``gpu.nvlink.remote``, from ``nvidia-smi nvlink -R``, right after ``gpu.nvlink.errors``), and what
each link can do (``_nvlink_caps``: ``gpu.nvlink.capabilities``, from ``nvidia-smi nvlink -c``, right after it).
``gpu.mig.mode`` (right after ``gpu.memory.total``) is judged only for a GPU in MIG mode or with a MIG mode change
pending (``_gpu_checks.GpuChecks.mig``; the count of MIG devices against ``zhisuan_expected.mig_devices_per_gpu`` when
set). ``gpu.throttle.rate`` (right after the
``gpu.throttle.*`` reasons; ``_throttle_rate``, thresholds ``throttle_rate_warn_pct`` (1) and ``throttle_rate_fail_pct``
(10)) is judged only when ``gpu_info``'s ``throttle_window`` collected the counters twice.
"""

from __future__ import annotations

import re

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import guarded, make_check
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._fabric_health import registered
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._gpu_checks import GpuChecks
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._nvlink_caps import nvlink_capability_checks
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._nvlink_checks import nvlink_checks
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._nvlink_errors import DEFAULTS as NVLINK_ERROR_LIMITS
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._nvlink_errors import nvlink_error_checks
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._nvlink_remote import nvlink_remote_checks
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._throttle_rate import DEFAULTS as THROTTLE_RATE_LIMITS
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._throttle_rate import throttle_rate_checks
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._overrides import overridden
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._thermal_peers import DEFAULT_DELTA_C as PEER_DELTA_C
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._thermal_peers import peer_check
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._thermal_peers import readings as thermal_readings
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._util import (
    clean_facts,
    compile_pattern,
    evidence_of,
    fmt,
    merged,
    plural,
    profile_get,
    to_number,
    version_matches,
)

DEFAULT_THRESHOLDS = {
    "temperature_margin_c": None,
    "temperature_peer_delta_c": None,
    "ecc_volatile_uncorrected_max": 0,
    "ecc_aggregate_uncorrected_max": 0,
    "remapped_rows_uncorrectable_max": 512,
    "remap_banks_exhausted_max": 0,
    "retired_pages_max": 10,
    "power_over_limit_pct": 5,
}
DEFAULT_THRESHOLDS.update(NVLINK_ERROR_LIMITS)
DEFAULT_THRESHOLDS.update(THROTTLE_RATE_LIMITS)
DEFAULT_TEMPERATURE_MARGIN_C = 5

HOST_CHECK_IDS = ("gpu.count.present", "gpu.driver.version", "gpu.cuda.version")
GPU_CHECK_IDS = (
    "gpu.model.name",
    "gpu.memory.total",
    "gpu.ecc.mode",
    "gpu.ecc.volatile_uncorrectable",
    "gpu.ecc.aggregate_uncorrectable",
    "gpu.remap.pending",
    "gpu.remap.failure",
    "gpu.remap.uncorrectable",
    "gpu.retired_pages.pending",
    "gpu.retired_pages.count",
    "gpu.pcie.width",
    "gpu.pcie.generation",
    "gpu.nvlink.links",
    "gpu.nvlink.speed",
    "gpu.fabric.state",
    "gpu.temperature.gpu",
    "gpu.temperature.peers",
    "gpu.power.draw",
    "gpu.power.limit",
    "gpu.throttle.hw_slowdown",
    "gpu.throttle.hw_thermal_slowdown",
    "gpu.throttle.hw_power_brake_slowdown",
    "gpu.throttle.sw_thermal_slowdown",
    "gpu.readout.unreadable",
)
# Checks of a GPU that run only when their facts were collected (gpu_info nvlink_errors_window > 0).
OPTIONAL_GPU_CHECK_IDS = ("gpu.nvlink.errors", "gpu.nvlink.remote", "gpu.nvlink.capabilities", "gpu.mig.mode",
                          "gpu.throttle.rate")

# ---------------------------------------------------------------------------------------------- public API


def select_profile(gpu_name, profiles, name=None):
    """Pick the profile for a GPU: an explicit ``name`` wins, else the first profile (by name) whose ``match``
    regex finds the product name (case-insensitive). Returns ``None`` when nothing matches.

    Raises ``ValueError`` for an explicit name that is not among ``profiles``.
    """
    profiles = profiles or {}
    if name:
        if name not in profiles:
            raise ValueError("unknown GPU profile %r (known: %s)" % (name, ", ".join(sorted(profiles)) or "none"))
        return profiles[name]
    if not gpu_name:
        return None
    for key in sorted(profiles):
        profile = profiles[key] or {}
        patterns = profile.get("match") or []
        if isinstance(patterns, str):
            patterns = [patterns]
        for pattern in patterns:
            if re.search(pattern, gpu_name, re.IGNORECASE):
                return profile
    return None


def merge_profile(profile, overrides):
    """A new profile: ``overrides`` merged over ``profile`` (nested mappings merged key by key, anything else
    replaced). Neither argument is modified."""
    return merged(profile or {}, overrides or {})


def judge_gpu(host, facts, profile, expected=None, thresholds=None):
    """Judge one host's ``gpu`` facts (see ``_judge_gpu``); facts of an unexpected shape give one ``error`` check."""
    return guarded(
        "gpu.facts.readable", host, "GPUs", "gpu", _judge_gpu, host, clean_facts(facts), profile, expected=expected,
        thresholds=thresholds)


def _judge_gpu(host, facts, profile, expected=None, thresholds=None):
    """Judge one host's ``gpu`` facts. Returns a list of check records (see ``_check.make_check``).

    ``profile`` may be ``None``: the rules then use only the limits the driver reports and ``expected``.
    ``expected`` is the inventory ``zhisuan_expected`` (keys used: ``gpu_count``, ``gpu_model``,
    ``driver_version``, ``cuda_version``); ``thresholds`` are site overrides (see the module docstring).
    """
    expected = expected or {}
    limits = _thresholds(profile, thresholds)
    checks = []
    if not isinstance(facts, dict):
        checks.append(make_check(
            "gpu.count.present", host, "error", component="GPUs", observed=None, expected="GPU facts",
            message="No GPU facts were collected for this host, so no GPU check could run",
            remedy="investigate", evidence="gpu facts: %s" % fmt(facts)))
        return checks
    gpus = facts.get("gpus") or []
    checks.append(_check_count(host, facts, gpus, profile, expected))
    checks.append(_check_version(host, "gpu.driver.version", "driver version", facts.get("driver_version"),
                                 expected.get("driver_version"), "driver_version"))
    checks.append(_check_version(host, "gpu.cuda.version", "CUDA version", facts.get("cuda_version"),
                                 expected.get("cuda_version"), "cuda_version"))

    model_rx, model_text = _model_matcher(expected, profile)
    reporting = [gpu for gpu in gpus if isinstance(gpu, dict) and (gpu.get("fabric") or {}).get("state") is not None]
    joined = sum(1 for gpu in reporting if registered(gpu))
    temperatures = thermal_readings(gpus)
    for position, gpu in enumerate(gpus):
        if not isinstance(gpu, dict):
            continue
        mine = any(item is gpu for item in reporting)
        peers = (joined - (1 if mine and registered(gpu) else 0), len(reporting) - (1 if mine else 0))
        index = gpu.get("index")
        gpu_ctx = GpuChecks(host, gpu, "GPU %s" % (index if index is not None else position))
        gpu_ctx.model(model_rx, model_text)
        gpu_ctx.memory(profile)
        gpu_ctx.mig(expected)
        gpu_ctx.ecc(limits)
        gpu_ctx.remap(limits)
        gpu_ctx.retired_pages(limits)
        gpu_ctx.pcie(profile)
        nvlink_checks(gpu_ctx, profile, facts.get("nvlink_error"), peers)
        nvlink_error_checks(gpu_ctx, facts, limits)
        nvlink_remote_checks(gpu_ctx, facts)
        nvlink_capability_checks(gpu_ctx, facts)
        gpu_ctx.temperature(limits)
        peer_check(gpu_ctx, position, temperatures, limits["temperature_peer_delta_c"])
        gpu_ctx.power(profile, limits)
        gpu_ctx.throttle()
        throttle_rate_checks(gpu_ctx, facts, limits)
        gpu_ctx.readout()
        checks.extend(gpu_ctx.checks)
    return checks


# ------------------------------------------------------------------------------------------- host checks

def _thresholds(profile, overrides):
    limits = overridden(DEFAULT_THRESHOLDS, overrides)
    if limits["temperature_margin_c"] is None:
        margin = profile_get(profile, "temperature", "gpu_warn_margin_c")
        limits["temperature_margin_c"] = (to_number(margin, "profile temperature.gpu_warn_margin_c")
                                          if margin is not None else DEFAULT_TEMPERATURE_MARGIN_C)
    if limits["temperature_peer_delta_c"] is None:
        delta = profile_get(profile, "temperature", "peer_delta_c")
        limits["temperature_peer_delta_c"] = (to_number(delta, "profile temperature.peer_delta_c")
                                              if delta is not None else PEER_DELTA_C)
    return limits


def _model_matcher(expected, profile):
    pattern = expected.get("gpu_model")
    if pattern:
        return [compile_pattern(str(pattern))], "'%s' (zhisuan_expected.gpu_model)" % pattern
    patterns = profile_get(profile, "match") or []
    if isinstance(patterns, str):
        patterns = [patterns]
    if patterns:
        name = profile.get("name") or "?"
        return ([re.compile(item, re.IGNORECASE) for item in patterns],
                "profile %s (%s)" % (name, " | ".join(patterns)))
    return None, None


def _check_count(host, facts, gpus, profile, expected):
    seen = len(gpus)
    bus_ids = [str(gpu.get("pci_bus_id") or "?") for gpu in gpus if isinstance(gpu, dict)]
    evidence = evidence_of(("attached_gpus", facts.get("attached_gpus")), ("gpus listed", seen))
    evidence += "; bus ids: %s" % (", ".join(bus_ids) if bus_ids else "none")
    want = expected.get("gpu_count")
    source = "zhisuan_expected.gpu_count"
    if want is None and profile and profile.get("gpu_count") is not None:
        want = profile.get("gpu_count")
        source = "profile %s" % profile.get("name")
    attached = facts.get("attached_gpus")
    if want is None and isinstance(attached, int) and not isinstance(attached, bool) and seen < attached:
        return make_check(
            "gpu.count.present", host, "warn", component="GPUs", observed=seen, expected="== %d" % attached,
            message="nvidia-smi lists %d of the %d attached GPUs (an -i selection, or output cut short): the others "
                    "were not judged; collect all GPUs, or set zhisuan_expected.gpu_count" % (seen, attached),
            remedy="investigate", evidence=evidence)
    if want is None:
        return make_check(
            "gpu.count.present", host, "skip", component="GPUs", observed=seen, expected=None,
            message="%s visible to the driver; set zhisuan_expected.gpu_count (or a profile) to check the count"
            % plural(seen, "GPU"), evidence=evidence)
    want = int(to_number(want, source))
    if seen < want:
        return make_check(
            "gpu.count.present", host, "fail", component="GPUs", observed=seen, expected="== %d" % want,
            message="Only %d of %d GPUs are visible to the driver (expected by %s): a GPU has fallen off the bus "
                    "or is not seated; look for XID 79 in the kernel log, then reseat it or power-cycle the node"
                    % (seen, want, source),
            remedy="reseat", evidence=evidence)
    if seen > want:
        return make_check(
            "gpu.count.present", host, "fail", component="GPUs", observed=seen, expected="== %d" % want,
            message="%d GPUs found but %d expected (%s): the node does not match its bill of materials"
                    % (seen, want, source),
            remedy="investigate", evidence=evidence)
    return make_check(
        "gpu.count.present", host, "pass", component="GPUs", observed=seen, expected="== %d" % want,
        message="All %d expected GPUs are visible to the driver" % want, evidence=evidence)


def _check_version(host, check_id, what, observed, want, key):
    evidence = evidence_of((key, observed))
    if want is None or str(want).strip() == "":
        return make_check(
            check_id, host, "skip", component="NVIDIA driver", observed=observed, expected=None,
            message="NVIDIA %s %s; no baseline set (zhisuan_expected.%s)" % (what, fmt(observed), key),
            evidence=evidence)
    want = str(want).strip()
    if observed is None:
        return make_check(
            check_id, host, "error", component="NVIDIA driver", observed=None, expected=want,
            message="The NVIDIA %s was not reported, so it cannot be compared with the baseline %s" % (what, want),
            remedy="investigate", evidence=evidence)
    if not version_matches(observed, want):
        return make_check(
            check_id, host, "fail", component="NVIDIA driver", observed=str(observed), expected=want,
            message="NVIDIA %s is %s but the baseline is %s: install the baseline driver" % (what, observed, want),
            remedy="update_firmware", evidence=evidence)
    return make_check(
        check_id, host, "pass", component="NVIDIA driver", observed=str(observed), expected=want,
        message="NVIDIA %s %s matches the baseline %s" % (what, observed, want), evidence=evidence)
