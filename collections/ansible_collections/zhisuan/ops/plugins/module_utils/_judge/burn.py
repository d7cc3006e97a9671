# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Burn-in judgement rules: ``burn`` facts (zhisuan.ops.gpu_burn) + model profile + site thresholds -> checks.

Pure functions, no I/O, standard library only. Checks, in this order: ``burn.count.tested`` (host), then per GPU
``burn.gflops.throughput``, ``burn.gflops.peers``, ``burn.errors.count``, ``burn.verdict.result``.

Throughput is judged twice, because gpu-burn's own verdict says nothing about speed (it prints OK at 0 Gflop/s):

* ``burn.gflops.throughput`` — absolute: a GPU that did no work fails; with a profile floor for the burn's mode
  (``burn.gflops_floor_fp32`` / ``_fp32_tc`` / ``_fp64`` / ``_fp64_tc``), a GPU below it fails. No floor: pass, and
  the peer rule does the work.
* ``burn.gflops.peers`` — relative: each GPU's median against the median of the node's OTHER GPUs that did work. The
  GPUs of one node run the same kernel at the same time on the same model, so a slow GPU among its peers is the
  classic sign of a throttled, power-starved or degraded part, and this needs no floor at all. In the real
  8x A100 capture the healthy GPUs lie within 1.7 % of each other (16890..17177 Gflop/s), so the defaults (warn below
  95 %, fail below 90 % of the peers) are three and six times that spread [U] — thresholds a site may override.

Thresholds (``thresholds``; shared with the other families, hence the prefix), with their defaults:

``burn_peer_warn_pct`` (95), ``burn_peer_fail_pct`` (90)
    a GPU's median Gflop/s as a percentage of the median of its peers.

Compare errors mean the GPU returned wrong results. With memory-error evidence for that GPU in ``gpu_facts`` (the
``gpu`` facts read after the burn: volatile uncorrectable ECC, a pending row remap or page retirement) the remedy is
``reset_gpu`` (the reset retires or remaps the row; burn again), otherwise ``rma`` (silent data corruption).
"""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import guarded, make_check
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._gpu_base import gpu_component, mig_gpus, mig_labels
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._overrides import overridden
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._util import (
    clean_facts,
    evidence_of,
    fmt,
    plural,
    profile_get,
    ThresholdError,
    to_number,
)

DEFAULT_THRESHOLDS = {
    "burn_peer_warn_pct": 95,
    "burn_peer_fail_pct": 90,
}
GPU_CHECK_IDS = ("burn.gflops.throughput", "burn.gflops.peers", "burn.errors.count", "burn.verdict.result")
MODES = {
    (False, False): ("fp32", "FP32"),
    (False, True): ("fp32_tc", "FP32 with tensor cores"),
    (True, False): ("fp64", "FP64"),
    (True, True): ("fp64_tc", "FP64 with tensor cores"),
}


def burn_mode(facts):
    """``(key, words)`` of the burn's precision: ``("fp64_tc", "FP64 with tensor cores")``, …"""
    return MODES[(bool(facts.get("doubles")), bool(facts.get("tensor_cores")))]


def floor_for(profile, facts):
    """The profile's Gflop/s floor for the burn's mode, ``None`` when the profile has none."""
    key = "gflops_floor_" + burn_mode(facts)[0]
    value = profile_get(profile, "burn", key)
    if value is None:
        return None
    return to_number(value, "profile burn.%s" % key)


def _thresholds(overrides):
    limits = overridden(DEFAULT_THRESHOLDS, overrides)
    if limits["burn_peer_fail_pct"] > limits["burn_peer_warn_pct"]:
        raise ThresholdError("threshold burn_peer_fail_pct (%s) must not exceed burn_peer_warn_pct (%s)"
                             % (limits["burn_peer_fail_pct"], limits["burn_peer_warn_pct"]))
    return limits


def _median(values):
    ordered = sorted(values)
    if not ordered:
        return None
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2.0


def _driver_gpu(gpu_facts, burn_gpu):
    """The ``gpu`` facts record of a burned GPU: by UUID, else by index."""
    gpus = [gpu for gpu in ((gpu_facts or {}).get("gpus") or []) if isinstance(gpu, dict)]
    uuid = burn_gpu.get("uuid")
    if uuid:
        for gpu in gpus:
            if gpu.get("uuid") == uuid:
                return gpu
    for gpu in gpus:
        if gpu.get("index") == burn_gpu.get("index"):
            return gpu
    return None


def _memory_error_evidence(driver_gpu):
    """Fields of the driver's facts that explain wrong results by a memory error, as evidence text ('' if none)."""
    if not driver_gpu:
        return ""
    found = []
    volatile = (driver_gpu.get("ecc") or {}).get("volatile_uncorrected")
    if volatile:
        found.append(("ecc.volatile_uncorrected", volatile))
    if (driver_gpu.get("remapped_rows") or {}).get("pending"):
        found.append(("remapped_rows.pending", True))
    if (driver_gpu.get("retired_pages") or {}).get("pending"):
        found.append(("retired_pages.pending", True))
    return evidence_of(*found) if found else ""


def _wrong_results_remedy(label, errors, memory):
    if memory:
        return "reset_gpu", ("the driver also reports a memory error (%s): drain the node, reset %s so the row is "
                             "remapped or the page retired, and burn again; RMA if errors come back" % (memory, label))
    return "rma", ("no memory error explains it, so the GPU computes wrong results silently: take it out of service "
                   "and return it (RMA)")


class _GpuJudge(object):
    __slots__ = ("host", "gpu", "label", "component", "memory", "checks")

    def __init__(self, host, gpu, driver_gpu):
        self.host = host
        self.gpu = gpu
        self.label = "GPU %s" % gpu.get("index")
        identity = dict(driver_gpu or {})
        if gpu.get("uuid"):
            identity["uuid"] = gpu["uuid"]
        self.component = gpu_component(self.label, identity)
        self.memory = _memory_error_evidence(driver_gpu)
        self.checks = []

    def add(self, check_id, status, observed=None, expected=None, message="", remedy=None, evidence=""):
        self.checks.append(make_check(check_id, self.host, status, component=self.component, observed=observed,
                                      expected=expected, message=message, remedy=remedy, evidence=evidence))

    def rate_evidence(self):
        gpu = self.gpu
        return evidence_of(("gflops_median", gpu.get("gflops_median")), ("gflops_final", gpu.get("gflops_final")),
                           ("gflops_min", gpu.get("gflops_min")), ("reports", gpu.get("reports")),
                           ("processed", gpu.get("processed")), ("verdict", gpu.get("verdict")))

    def throughput(self, facts, floor, mode_words, profile, anyone_worked):
        gpu = self.gpu
        rate = gpu.get("gflops_median") or 0
        duration = facts.get("duration_s")
        during = "the %s s burn" % fmt(duration) if duration else "the burn"
        expected = ">= %s Gflop/s" % fmt(floor) if floor is not None else "> 0 Gflop/s"
        evidence = self.rate_evidence()
        if floor is not None:
            evidence += ", floor=%s (profile %s burn.gflops_floor_%s)" % (
                fmt(floor), profile.get("name"), burn_mode(facts)[0])
        if rate <= 0:
            if anyone_worked:
                self.add("burn.gflops.throughput", "fail", observed=0, expected=expected,
                         message="%s did no work during %s (0 Gflop/s) although gpu-burn says %s, while its peers "
                                 "ran: the GPU is stuck; drain the node, reset the GPU and burn again (RMA if it "
                                 "repeats)" % (self.label, during, gpu.get("verdict") or "nothing"),
                         remedy="reset_gpu", evidence=evidence)
            else:
                self.add("burn.gflops.throughput", "fail", observed=0, expected=expected,
                         message="%s did no work during %s (0 Gflop/s), and neither did any other GPU: the burn was "
                                 "too short for one batch of multiplications or gpu-burn could not use the GPUs; "
                                 "burn longer and read gpu-burn's output" % (self.label, during),
                         remedy="investigate", evidence=evidence)
            return
        if floor is None:
            self.add("burn.gflops.throughput", "pass", observed=rate, expected=expected,
                     message="%s ran at %s Gflop/s (%s); no %s floor for this model, so only its peers judge it"
                             % (self.label, fmt(rate), mode_words, mode_words), evidence=evidence)
        elif rate < floor:
            self.add("burn.gflops.throughput", "fail", observed=rate, expected=expected,
                     message="%s ran at %s Gflop/s (%s), below the %s floor of %s Gflop/s: look for throttling "
                             "(burn.stability checks), a lowered power limit or clocks, then cooling and power "
                             "delivery" % (self.label, fmt(rate), mode_words, profile.get("name"), fmt(floor)),
                     remedy="investigate", evidence=evidence)
        else:
            self.add("burn.gflops.throughput", "pass", observed=rate, expected=expected,
                     message="%s ran at %s Gflop/s (%s), at or above the %s floor of %s Gflop/s"
                             % (self.label, fmt(rate), mode_words, profile.get("name"), fmt(floor)),
                     evidence=evidence)

    def peers(self, others, limits):
        rate = self.gpu.get("gflops_median") or 0
        warn_pct = limits["burn_peer_warn_pct"]
        fail_pct = limits["burn_peer_fail_pct"]
        expected = ">= %s %% of its peers' median" % fmt(fail_pct)
        if not others:
            self.add("burn.gflops.peers", "skip", observed=rate, expected=expected,
                     message="%s has no peer that did work on this node to compare with" % self.label,
                     evidence=self.rate_evidence())
            return
        reference = _median(others)
        pct = round(100.0 * rate / reference, 1)
        evidence = "%s, peers_median=%s over %s" % (self.rate_evidence(), fmt(reference), plural(len(others), "GPU"))
        where = "%s Gflop/s, %s %% of the median of its %s (%s Gflop/s)" % (
            fmt(rate), fmt(pct), plural(len(others), "peer"), fmt(reference))
        if pct < fail_pct:
            self.add("burn.gflops.peers", "fail", observed="%s %%" % fmt(pct), expected=expected,
                     message="%s ran at %s: a GPU slower than its peers under the same load is throttled, short of "
                             "power or degraded; read this GPU's burn.stability checks (temperature, throttle, clocks), "
                             "then reseat or RMA it" % (self.label, where),
                     remedy="investigate", evidence=evidence)
        elif pct < warn_pct:
            self.add("burn.gflops.peers", "warn", observed="%s %%" % fmt(pct), expected=expected,
                     message="%s ran at %s (warn below %s %%): watch it in the next burn; check its cooling"
                             % (self.label, where, fmt(warn_pct)),
                     remedy="investigate", evidence=evidence)
        else:
            self.add("burn.gflops.peers", "pass", observed="%s %%" % fmt(pct), expected=expected,
                     message="%s ran at %s" % (self.label, where), evidence=evidence)

    def errors(self):
        count = self.gpu.get("errors")
        evidence = evidence_of(("errors", count), ("verdict", self.gpu.get("verdict")))
        if self.memory:
            evidence += "; after the burn: " + self.memory
        if count is None:
            self.add("burn.errors.count", "error", expected="== 0",
                     message="%s: gpu-burn's error count was not read" % self.label, remedy="investigate",
                     evidence=evidence)
        elif count > 0:
            remedy, advice = _wrong_results_remedy(self.label, count, self.memory)
            self.add("burn.errors.count", "fail", observed=count, expected="== 0",
                     message="%s returned %s (results that differ from the reference) during the burn; %s"
                             % (self.label, plural(count, "wrong result"), advice),
                     remedy=remedy, evidence=evidence)
        else:
            self.add("burn.errors.count", "pass", observed=0, expected="== 0",
                     message="%s returned no wrong result during the burn" % self.label, evidence=evidence)

    def verdict(self):
        verdict = self.gpu.get("verdict")
        died = self.gpu.get("died")
        evidence = evidence_of(("verdict", verdict), ("died", died), ("errors", self.gpu.get("errors")))
        if died:
            self.add("burn.verdict.result", "fail", observed=verdict or "DIED", expected="OK",
                     message="%s: its gpu-burn worker died (a CUDA failure during the burn): look for an XID for this "
                             "GPU in the kernel log, drain the node, reset the GPU and burn again" % self.label,
                     remedy="reset_gpu", evidence=evidence)
        elif verdict == "FAULTY":
            remedy, advice = _wrong_results_remedy(self.label, self.gpu.get("errors"), self.memory)
            self.add("burn.verdict.result", "fail", observed=verdict, expected="OK",
                     message="gpu-burn marked %s FAULTY: it returned wrong results; %s" % (self.label, advice),
                     remedy=remedy, evidence=evidence)
        elif verdict == "OK":
            self.add("burn.verdict.result", "pass", observed=verdict, expected="OK",
                     message="gpu-burn says %s is OK (no wrong result); its speed is judged by burn.gflops"
                             % self.label, evidence=evidence)
        else:
            self.add("burn.verdict.result", "error", observed=verdict, expected="OK",
                     message="%s: gpu-burn printed no verdict for this GPU" % self.label, remedy="investigate",
                     evidence=evidence)


def _check_tested(host, facts, gpus, profile, gpu_facts):
    tested = len(gpus)
    evidence = evidence_of(("tested_gpus", facts.get("tested_gpus")), ("gpu records", tested))
    want, source = None, None
    mig = mig_gpus(gpu_facts)
    if gpu_facts and gpu_facts.get("gpus") is not None:
        want, source = len(gpu_facts.get("gpus") or []) - len(mig), "GPUs the driver lists"
        if mig:
            source += ", less %s in MIG mode" % mig_labels(mig)
    elif profile and profile.get("gpu_count") is not None:
        want, source = int(to_number(profile["gpu_count"], "profile gpu_count")), "profile %s" % profile.get("name")
    if want is None:
        return make_check("burn.count.tested", host, "skip", component="GPUs", observed=tested,
                          message="gpu-burn tested %s; no GPU facts or profile to compare with" % plural(tested, "GPU"),
                          evidence=evidence)
    evidence += ", expected=%s (%s)" % (want, source)
    if mig and tested == 0 and want == 0:
        return make_check("burn.count.tested", host, "skip", component="GPUs", observed=tested,
                          message="gpu-burn tested no GPU: %s %s in MIG mode, which gpu-burn does not burn as a whole "
                                  "GPU; disable MIG (nvidia-smi -mig 0, then a GPU reset) for the burn-in"
                                  % (mig_labels(mig), "is" if len(mig) == 1 else "are"), evidence=evidence)
    if tested < want:
        return make_check("burn.count.tested", host, "fail", component="GPUs", observed=tested, expected="== %d" % want,
                          message="gpu-burn tested only %d of %d GPUs (%s): CUDA could not use the others, or they "
                                  "were hidden (CUDA_VISIBLE_DEVICES); an untested GPU is not accepted"
                                  % (tested, want, source),
                          remedy="investigate", evidence=evidence)
    return make_check("burn.count.tested", host, "pass", component="GPUs", observed=tested, expected="== %d" % want,
                      message="gpu-burn tested all %s" % plural(want, "GPU"), evidence=evidence)


def judge_burn(host, facts, profile, thresholds=None, gpu_facts=None):
    """Judge one host's ``burn`` facts (see ``_judge_burn``); facts of an unexpected shape give one ``error`` check."""
    return guarded(
        "burn.facts.readable", host, "gpu_burn", "burn", _judge_burn, host, clean_facts(facts), profile,
        thresholds=thresholds, gpu_facts=clean_facts(gpu_facts))


def _judge_burn(host, facts, profile, thresholds=None, gpu_facts=None):
    """Judge one host's ``burn`` facts. Returns a list of check records.

    ``profile`` may be ``None`` (no floor: the peer rule still works). ``gpu_facts`` are the host's ``gpu`` facts,
    ideally read after the burn: they name each GPU (bus id) and give the memory-error evidence for the remedy.
    """
    limits = _thresholds(thresholds)
    if not isinstance(facts, dict) or not isinstance(facts.get("gpus"), list):
        return [make_check("burn.count.tested", host, "error", component="GPUs", expected="gpu-burn facts",
                           message="No gpu-burn facts were collected for this host, so no burn check could run",
                           remedy="investigate", evidence="burn facts: %s" % fmt(facts))]
    gpus = [gpu for gpu in facts["gpus"] if isinstance(gpu, dict)]
    checks = [_check_tested(host, facts, gpus, profile, gpu_facts)]
    mig = mig_gpus(gpu_facts)
    if mig and checks[0]["status"] != "skip":
        checks.append(make_check(
            "burn.mig.untested", host, "skip", component=mig_labels(mig), observed="MIG mode",
            message="%s %s in MIG mode and %s not burned as a whole GPU: disable MIG (nvidia-smi -mig 0, then a GPU "
                    "reset) to burn %s" % (mig_labels(mig), "is" if len(mig) == 1 else "are",
                                           "was" if len(mig) == 1 else "were", "it" if len(mig) == 1 else "them"),
            evidence=", ".join("%s mig_mode.current=Enabled" % gpu.get("pci_bus_id") for gpu in mig)))
    floor = floor_for(profile, facts)
    mode_words = burn_mode(facts)[1]
    rates = [gpu.get("gflops_median") or 0 for gpu in gpus]
    anyone_worked = any(rate > 0 for rate in rates)
    for position, gpu in enumerate(gpus):
        judge = _GpuJudge(host, gpu, _driver_gpu(gpu_facts, gpu))
        others = [rate for other, rate in enumerate(rates) if other != position and rate > 0]
        judge.throughput(facts, floor, mode_words, profile, anyone_worked)
        judge.peers(others, limits)
        judge.errors()
        judge.verdict()
        checks.extend(judge.checks)
    return checks


def summarize_burn(facts, profile=None):
    """The host's ``burn`` report facts: what ran and the spread of the GPUs' median Gflop/s."""
    if not isinstance(facts, dict):
        return {}
    gpus = [gpu for gpu in facts.get("gpus") or [] if isinstance(gpu, dict)]
    rates = [gpu.get("gflops_median") or 0 for gpu in gpus]
    return {
        "duration_s": facts.get("duration_s"),
        "mode": burn_mode(facts)[1],
        "gpus": len(gpus),
        "gflops_median": _median(rates),
        "gflops_min": min(rates) if rates else None,
        "gflops_max": max(rates) if rates else None,
        "gflops_floor": floor_for(profile, facts),
        "errors": sum(gpu.get("errors") or 0 for gpu in gpus),
        "faulty": [gpu.get("index") for gpu in gpus if gpu.get("verdict") != "OK" or gpu.get("died")],
        "profile": profile.get("name") if profile else None,
    }
