# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""The stability watch around a burn: ``gpu`` facts (docs/gpu-facts.md) sampled before, during and after the burn,
and the XID events read before and after it -> checks on what CHANGED.

Pure functions, no I/O, standard library only. GPUs are matched across samples by PCI bus id (else UUID, else
index). Checks: ``burn.stability.gpu_count`` (host), per GPU (the GPUs of the ``before`` sample, in its order)
``burn.stability.ecc``, ``.temperature``, ``.throttle``, ``.clocks``, then ``burn.stability.xid`` (host).

* ecc: volatile uncorrectable ECC grew, or a row remap / page retirement became pending -> fail ``reset_gpu``;
  a row remapping failure appeared -> fail ``rma``.
* temperature: under load (during and after samples) the GPU reached its slowdown limit -> fail ``investigate``;
  within ``temperature_margin_c`` (default 5, as the gpu rules) of it -> warn.
* throttle: HW Slowdown, HW Thermal Slowdown, HW Power Brake Slowdown or SW Thermal Slowdown active during or after
  the burn -> fail ``investigate`` (SW Power Cap is how a GPU at full load normally runs and is not judged).
* clocks: in a sample taken during the burn the SM clock was below ``burn_clock_min_pct`` (default 60) % of its
  maximum -> warn ``investigate``. HW Slowdown cuts clocks by half or more (nvidia-smi documentation), while a GPU
  at its power cap under a GEMM load typically runs at 75-90 % of its maximum SM clock [U]: 60 % lies between.
* gpu_count: a GPU of the ``before`` sample missing from a later one -> fail ``power_cycle`` (fell off the bus).
* xid: XID events after the burn that were not there before -> fail ``investigate``, naming the codes.
"""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import burn_watch
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import guarded, make_check
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._gpu_base import THROTTLE_RULES, gpu_component
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._overrides import overridden
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._util import clean_facts, evidence_of, fmt, plural

DEFAULT_THRESHOLDS = {
    "temperature_margin_c": 5,
    "burn_clock_min_pct": 60,
}
GPU_CHECK_IDS = ("burn.stability.ecc", "burn.stability.temperature", "burn.stability.throttle",
                 "burn.stability.clocks")
# The throttle reasons that mean a fault: the gpu rules' table (key, name), written once in _gpu_base.
_FAULT_REASONS = tuple((key, name) for key, name, _meaning in THROTTLE_RULES)
_DEG = u"\u00b0C"


def _thresholds(overrides):
    limits = overridden(DEFAULT_THRESHOLDS, overrides)
    return limits


def _gpus(sample):
    if not isinstance(sample, dict):
        return []
    return [gpu for gpu in sample.get("gpus") or [] if isinstance(gpu, dict)]


def gpu_key(gpu):
    """How one GPU is recognised across samples: bus id, else UUID, else index."""
    if gpu.get("pci_bus_id"):
        return "bus:" + str(gpu["pci_bus_id"]).upper()
    if gpu.get("uuid"):
        return "uuid:" + str(gpu["uuid"])
    return "index:%s" % gpu.get("index")


def _by_key(sample):
    return dict((gpu_key(gpu), gpu) for gpu in _gpus(sample))


def _label(gpu):
    return "GPU %s" % gpu.get("index")


def _where(gpu):
    return str(gpu.get("pci_bus_id") or gpu.get("uuid") or _label(gpu))


def _headroom(temp):
    """(headroom to slowdown in degC, text of the limit) from one temperature section, or (None, None)."""
    temp = temp or {}
    if temp.get("slowdown_c") is not None and temp.get("gpu_c") is not None:
        return temp["slowdown_c"] - temp["gpu_c"], u"slowdown limit %s %s" % (fmt(temp["slowdown_c"]), _DEG)
    if temp.get("tlimit_c") is not None:
        offset = temp.get("slowdown_tlimit_c")
        if offset is None:
            offset = temp.get("max_operating_tlimit_c") or 0
        return temp["tlimit_c"] - offset, "slowdown limit (T.Limit form)"
    return None, None


class _Watch(object):
    """One GPU across the samples."""

    __slots__ = ("host", "before", "during", "after", "label", "component", "checks")

    def __init__(self, host, before, during, after):
        self.host = host
        self.before = before
        self.during = during  # this GPU in each during sample where it is present
        self.after = after  # this GPU after the burn, or None
        self.label = _label(before)
        self.component = gpu_component(self.label, before)
        self.checks = []

    def add(self, check_id, status, observed=None, expected=None, message="", remedy=None, evidence=""):
        self.checks.append(make_check(check_id, self.host, status, component=self.component, observed=observed,
                                      expected=expected, message=message, remedy=remedy, evidence=evidence))

    def later(self):
        return self.during + ([self.after] if self.after is not None else [])

    def ecc(self):
        later = self.later()
        ecc0 = self.before.get("ecc") or {}
        start = ecc0.get("volatile_uncorrected")
        counts = [(gpu.get("ecc") or {}).get("volatile_uncorrected") for gpu in later]
        counts = [count for count in counts if count is not None]
        remap0 = self.before.get("remapped_rows") or {}
        remaps = [gpu.get("remapped_rows") or {} for gpu in later]
        pages0 = self.before.get("retired_pages") or {}
        pages = [gpu.get("retired_pages") or {} for gpu in later]
        if start is None or not counts:
            self.add("burn.stability.ecc", "skip", expected="no new uncorrectable error",
                     message="%s: volatile uncorrectable ECC is not reported before and after the burn" % self.label,
                     evidence=evidence_of(("before", start), ("samples with a count", len(counts))))
            return
        peak = max(counts)
        found, remedy = [], "reset_gpu"
        if peak > start:
            found.append("volatile uncorrectable ECC errors grew from %s to %s" % (fmt(start), fmt(peak)))
        if not remap0.get("pending") and any(item.get("pending") for item in remaps):
            found.append("a row remap became pending")
        if not pages0.get("pending") and any(item.get("pending") for item in pages):
            found.append("a page retirement became pending")
        if not remap0.get("failure") and any(item.get("failure") for item in remaps):
            found.append("row remapping FAILED (no spare row left)")
            remedy = "rma"
        evidence = evidence_of(("ecc.volatile_uncorrected before", start), ("max after", peak),
                               ("remapped_rows.pending", any(item.get("pending") for item in remaps)),
                               ("remapped_rows.failure", any(item.get("failure") for item in remaps)),
                               ("retired_pages.pending", any(item.get("pending") for item in pages)))
        if found:
            advice = ("return the GPU (RMA)" if remedy == "rma" else
                      "drain the node and reset the GPU so the row is remapped or the page retired, then burn again")
            self.add("burn.stability.ecc", "fail", observed=peak, expected="<= %s (before the burn)" % fmt(start),
                     message="%s: under load %s: %s" % (self.label, "; ".join(found), advice),
                     remedy=remedy, evidence=evidence)
        else:
            self.add("burn.stability.ecc", "pass", observed=peak, expected="<= %s (before the burn)" % fmt(start),
                     message="%s: no new uncorrectable memory error during the burn" % self.label, evidence=evidence)

    def temperature(self, margin):
        worst, limit, hottest = None, None, None
        for gpu in self.later():
            headroom, text = _headroom(gpu.get("temperature"))
            if headroom is not None and (worst is None or headroom < worst):
                worst, limit = headroom, text
            gpu_c = (gpu.get("temperature") or {}).get("gpu_c")
            if gpu_c is not None and (hottest is None or gpu_c > hottest):
                hottest = gpu_c
        expected = u"> %s %s to slowdown" % (fmt(margin), _DEG)
        evidence = evidence_of(("max gpu_c", hottest), ("min headroom to slowdown", worst))
        if worst is None:
            self.add("burn.stability.temperature", "skip", observed=hottest, expected=expected,
                     message="%s: no slowdown limit or temperature reported during or after the burn" % self.label,
                     evidence=evidence)
            return
        observed = u"%s %s to slowdown" % (fmt(worst), _DEG)
        peak = u" (peak %s %s)" % (fmt(hottest), _DEG) if hottest is not None else ""
        if worst <= 0:
            self.add("burn.stability.temperature", "fail", observed=observed, expected=expected,
                     message=u"%s reached its %s under load%s: the hardware slows it down; check cooling (fans, "
                             u"airflow, heatsink or coolant loop)" % (self.label, limit, peak),
                     remedy="investigate", evidence=evidence)
        elif worst <= margin:
            self.add("burn.stability.temperature", "warn", observed=observed, expected=expected,
                     message=u"%s came within %s %s of its %s under load%s: check cooling before it throttles"
                             % (self.label, fmt(worst), _DEG, limit, peak),
                     remedy="investigate", evidence=evidence)
        else:
            self.add("burn.stability.temperature", "pass", observed=observed, expected=expected,
                     message=u"%s stayed %s %s or more below its %s under load%s"
                             % (self.label, fmt(worst), _DEG, limit, peak), evidence=evidence)

    def throttle(self):
        later = [gpu.get("throttle") for gpu in self.later() if gpu.get("throttle")]
        if not later:
            self.add("burn.stability.throttle", "skip", expected="none active",
                     message="%s: clock event reasons were not reported during or after the burn" % self.label,
                     evidence="throttle=N/A")
            return
        before = self.before.get("throttle") or {}
        active = [(key, name) for key, name in _FAULT_REASONS if any(reasons.get(key) for reasons in later)]
        evidence = evidence_of(*[("throttle." + key, True) for key, _name in active]) or "no fault reason active"
        if not active:
            self.add("burn.stability.throttle", "pass", observed="none", expected="none active",
                     message="%s: no HW slowdown, power brake or thermal slowdown under load" % self.label,
                     evidence=evidence)
            return
        names = ", ".join(name for _key, name in active)
        already = [name for key, name in active if before.get(key)]
        note = " (already active before the burn: %s)" % ", ".join(already) if already else ""
        keys = set(key for key, _name in active)
        if "hw_power_brake_slowdown" in keys:
            advice = "the system asserted the power brake: check the PSUs and the power delivery to the GPU baseboard"
        elif keys & set(("hw_thermal_slowdown", "sw_thermal_slowdown")):
            advice = "the GPU got too hot: check cooling (fans, airflow, heatsink or coolant loop)"
        else:
            advice = "over-temperature or an external power brake; check cooling and power delivery"
        self.add("burn.stability.throttle", "fail", observed=names, expected="none active",
                 message="%s throttled under load: %s%s; %s" % (self.label, names, note, advice),
                 remedy="investigate", evidence=evidence)

    def clocks(self, min_pct):
        lowest = None
        for gpu in self.during:
            clocks = gpu.get("clocks") or {}
            sm, top = clocks.get("sm_mhz"), clocks.get("max_sm_mhz")
            if sm is None or not top:
                continue
            pct = 100.0 * sm / top
            if lowest is None or pct < lowest[0]:
                lowest = (pct, sm, top)
        expected = ">= %s %% of max SM clock" % fmt(min_pct)
        if lowest is None:
            self.add("burn.stability.clocks", "skip", expected=expected,
                     message="%s: no SM clock reading was taken during the burn" % self.label,
                     evidence=evidence_of(("samples during the burn", len(self.during))))
            return
        pct, sm, top = round(lowest[0], 1), lowest[1], lowest[2]
        evidence = evidence_of(("clocks.sm_mhz min", sm), ("clocks.max_sm_mhz", top), ("pct", pct))
        if pct < min_pct:
            self.add("burn.stability.clocks", "warn", observed="%s %%" % fmt(pct), expected=expected,
                     message="%s: under load its SM clock dropped to %s MHz, %s %% of its %s MHz maximum: read "
                             "its throttle reasons and temperature" % (self.label, fmt(sm), fmt(pct), fmt(top)),
                     remedy="investigate", evidence=evidence)
        else:
            self.add("burn.stability.clocks", "pass", observed="%s %%" % fmt(pct), expected=expected,
                     message="%s: its SM clock stayed at or above %s MHz (%s %% of %s MHz) under load"
                             % (self.label, fmt(sm), fmt(pct), fmt(top)), evidence=evidence)


def _check_gpu_count(host, before, samples, after, after_error=None):
    base = _by_key(before)
    lost = {}
    for number, sample in enumerate(samples, 1):
        present = _by_key(sample)
        for key, gpu in base.items():
            if key not in present and key not in lost:
                lost[key] = (gpu, number)
    total = len(samples)
    evidence = "before: %s; samples: %s" % (plural(len(base), "GPU"), ", ".join(
        str(len(_gpus(sample))) for sample in samples) or "none")
    if lost:
        names = ", ".join("%s (%s, first missing in sample %d of %d)" % (_label(gpu), _where(gpu), number, total)
                          for gpu, number in lost.values())
        return make_check("burn.stability.gpu_count", host, "fail", component="GPUs",
                          observed=len(base) - len(lost), expected="== %d" % len(base),
                          message="%s disappeared from the driver during the burn: %s. The GPU fell off the bus "
                                  "(look for XID 79): power-cycle the node through its BMC"
                                  % (plural(len(lost), "GPU"), names),
                          remedy="power_cycle", evidence=evidence)
    if after is None:
        why = after_error or "nvidia-smi failed or timed out?"
        return make_check("burn.stability.gpu_count", host, "error", component="GPUs", expected="== %d" % len(base),
                          message="No GPU facts could be read after the burn (%s), so the GPUs' state after it is "
                                  "unknown" % why,
                          remedy="investigate", evidence=evidence)
    return make_check("burn.stability.gpu_count", host, "pass", component="GPUs", observed=len(base),
                      expected="== %d" % len(base),
                      message="All %s stayed visible in every one of %s" % (plural(len(base), "GPU"),
                                                                            plural(total, "sample")),
                      evidence=evidence)


def _event_key(event):
    return (event.get("code"), str(event.get("pci_bus_id") or "").upper(), event.get("time"))


def _codes(events):
    """The distinct XID codes of ``events``, numbers in numeric order."""
    codes = set(event.get("code") for event in events)
    return sorted(codes, key=lambda code: (0, code, "") if isinstance(code, int) else (1, 0, str(code)))


def new_xid_events(xid_before, xid_after):
    """Events of ``xid_after`` that ``xid_before`` does not hold (by code, bus id and time)."""
    seen = set(_event_key(event) for event in xid_before or () if isinstance(event, dict))
    return [event for event in xid_after or () if isinstance(event, dict) and _event_key(event) not in seen]


def _check_xid(host, before, xid_before, xid_after):
    if xid_after is None:
        return make_check("burn.stability.xid", host, "skip", component="kernel log",
                          message="The kernel log was not read after the burn, so new XID events are unknown",
                          evidence="xid_after=N/A")
    new = new_xid_events(xid_before, xid_after)
    if not new:
        return make_check("burn.stability.xid", host, "pass", component="kernel log", observed=0, expected="== 0",
                          message="No new XID event in the kernel log during the burn",
                          evidence=evidence_of(("events before", len(xid_before or ())),
                                               ("events after", len(xid_after))))
    names = dict((str(gpu.get("pci_bus_id") or "").upper(), _label(gpu)) for gpu in _gpus(before))
    codes = _codes(new)
    where = []
    for event in new:
        bus = str(event.get("pci_bus_id") or "").upper()
        text = "XID %s on %s" % (event.get("code"), names.get(bus, bus or "an unknown GPU"))
        if text not in where:
            where.append(text)
    return make_check("burn.stability.xid", host, "fail", component="kernel log", observed=len(new), expected="== 0",
                      message="%s during the burn: %s; see the xid checks for the action each code needs"
                              % (plural(len(new), "new XID event"), ", ".join(where)),
                      remedy="investigate",
                      evidence="codes: %s; %s" % (", ".join(str(code) for code in codes), "; ".join(
                          "%s %s %s" % (event.get("time"), event.get("pci_bus_id"), event.get("code"))
                          for event in new[:10])))


def judge_stability(host, before, during, after, xid_before=None, xid_after=None, thresholds=None, after_error=None):
    """The stability checks (see ``_judge_stability``); samples of an unexpected shape give one ``error`` check."""
    return guarded(
        "burn.stability.readable", host, "GPUs", "stability watch", _judge_stability, host, clean_facts(before),
        clean_facts(during), clean_facts(after), xid_before=clean_facts(xid_before), xid_after=clean_facts(xid_after),
        thresholds=thresholds, after_error=after_error if isinstance(after_error, str) else None)


def _judge_stability(host, before, during, after, xid_before=None, xid_after=None, thresholds=None,
                     after_error=None):
    """Checks on what changed between ``before`` and the ``during`` / ``after`` samples (each a ``gpu`` facts dict).

    ``during`` is a list (possibly empty); ``after`` may be ``None`` when it could not be read. ``xid_before`` /
    ``xid_after`` are lists of XID event dicts ``{code, pci_bus_id, time}`` read before and after the burn (``None``:
    not read). ``after_error`` says why there is no ``after`` sample (e.g. nvidia-smi timed out and was not called
    again).
    """
    limits = _thresholds(thresholds)
    if not _gpus(before):
        return [make_check("burn.stability.gpu_count", host, "error", component="GPUs", expected="GPU facts",
                           message="No GPU facts were read before the burn, so the stability watch has no baseline",
                           remedy="investigate", evidence="before: %s" % fmt(before))]
    during = [sample for sample in during or [] if isinstance(sample, dict)]
    samples = during + ([after] if isinstance(after, dict) else [])
    checks = [_check_gpu_count(host, before, samples, after if isinstance(after, dict) else None, after_error)]
    during_maps = [_by_key(sample) for sample in during]
    after_map = _by_key(after)
    for gpu in _gpus(before):
        key = gpu_key(gpu)
        watch = _Watch(host, gpu, [found[key] for found in during_maps if key in found], after_map.get(key))
        watch.ecc()
        watch.temperature(limits["temperature_margin_c"])
        watch.throttle()
        watch.clocks(limits["burn_clock_min_pct"])
        checks.extend(watch.checks)
    checks.append(_check_xid(host, before, xid_before, xid_after))
    return checks


def watch_record(watch):
    """What the run record keeps of the node-side watch (gpu_burn's ``watch``, _gpu/burn_watch.py): when the burn
    started and ended, the interval, the time of every sample (ISO 8601 UTC), the samples that failed, why the watch
    stopped early, and how the samples cover the burn (``coverage``). None without a watch."""
    if not isinstance(watch, dict):
        return None
    samples = [sample for sample in watch.get("samples") or [] if isinstance(sample, dict)]
    return {
        "sample_s": watch.get("sample_s"),
        "started_at": watch.get("started_at"),
        "ended_at": watch.get("ended_at"),
        "sample_times": [sample.get("at") for sample in samples if "gpu" in sample],
        "failed_samples": [{"at": sample.get("at"), "error": sample.get("error")}
                           for sample in samples if "gpu" not in sample],
        "stopped": watch.get("stopped"),
        "coverage": burn_watch.coverage(watch),
    }


def summarize_stability(before, during, after, xid_before=None, xid_after=None, watch=None):
    """The host's stability-watch report facts: samples taken, GPUs lost, peak temperature, new XID codes, the
    per-sample ``trace`` (stability_trace) and, with the node-side ``watch``, its ``watch_record``."""
    during = [sample for sample in during or [] if isinstance(sample, dict)]
    samples = during + ([after] if isinstance(after, dict) else [])
    base = _by_key(before)
    lost = sorted(set(key for sample in samples for key in base if key not in _by_key(sample)))
    temps = [(gpu.get("temperature") or {}).get("gpu_c") for sample in samples for gpu in _gpus(sample)]
    temps = [temp for temp in temps if temp is not None]
    new = new_xid_events(xid_before, xid_after) if xid_after is not None else []
    summary = {
        "samples": len(samples),
        "gpus_before": len(base),
        "gpus_lost": [_where(base[key]) for key in lost],
        "max_temperature_c": max(temps) if temps else None,
        "new_xid_codes": _codes(new),
        "trace": stability_trace(before, during, after),
    }
    record = watch_record(watch)
    if record is not None:
        summary["watch"] = record
    return summary


def _sample_point(number, sample):
    gpus = _gpus(sample)
    temps = [(gpu.get("temperature") or {}).get("gpu_c") for gpu in gpus]
    temps = [temp for temp in temps if temp is not None]
    clocks = [(gpu.get("clocks") or {}).get("sm_mhz") for gpu in gpus]
    clocks = [clock for clock in clocks if clock is not None]
    return {"t": number, "temp_max_c": max(temps) if temps else None,
            "sm_clock_min_mhz": min(clocks) if clocks else None}


def stability_trace(before, during, after):
    """The burn's temperature/clock trace for the report, one point per sample: ``t`` is the sample number
    (0 before the burn, 1..n during it, n+1 after it), ``temp_max_c`` the hottest GPU and ``sm_clock_min_mhz``
    the slowest SM clock of that sample (``None`` when the sample does not report it). Samples that could not be
    read are left out."""
    samples = [before] + [sample for sample in during or [] if isinstance(sample, dict)] + [after]
    return [_sample_point(number, sample) for number, sample in enumerate(samples) if isinstance(sample, dict)]
