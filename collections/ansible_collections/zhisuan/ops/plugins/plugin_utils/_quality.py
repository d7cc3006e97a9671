# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""The key indicators of the O&M quality report (智算运维发展研究报告 2024, §4.2 (三)): MFU, effective training time,
long stable training time, shortest task recovery time, cluster compute availability. Pure functions; every result
is ``{"value", "unit", "definition", "inputs"}`` (``value`` None with ``missing`` when an input is not known), so the
report shows how each figure was made. Definitions: docs/quality.md.

The attempts a training made come from the scheduler's accounting: here the ``jobcomp/filetxt`` completion log (one
record per attempt; a requeued attempt is written with ``JobState=PENDING`` or ``REQUEUED``) parsed by
``_sched.slurm_nodes.parse_jobcomp``.
"""

from __future__ import annotations

import calendar
import math
import time

from ansible_collections.zhisuan.ops.plugins.plugin_utils._profiles import load_profiles, resolve_profile_name

DEFINITIONS = {
    "mfu": "Model FLOPs Utilization: the FLOPs the training does per second (logged throughput x FLOPs per token or "
           "sample) divided by the dense peak FLOPs of the GPUs it runs on (report §2.1: 每秒实际消耗的算力与机器理论算力之比).",
    "effective_training_time": "the time a training's attempts actually ran (sum of start..end of every attempt), and "
                               "its share of the wall-clock time from the first start to the last end.",
    "long_stable_training_time": "the longest time one attempt ran without interruption.",
    "task_recovery_time": "for each interruption, the time from the end of the interrupted attempt to the start of the "
                          "next one (requeue, restart from checkpoint); the shortest and the mean.",
    "cluster_compute_availability": "the share of the installed GPUs that the scheduler can hand out now (on Ready, "
                                    "schedulable nodes or usable Slurm nodes), read at the time of the run.",
}
INTERRUPTED = ("PENDING", "REQUEUED", "FAILED", "NODE_FAIL", "TIMEOUT", "PREEMPTED", "OUT_OF_MEMORY", "BOOT_FAIL")


def _result(name, value, unit, inputs, missing=None):
    out = {"value": value, "unit": unit, "definition": DEFINITIONS[name], "inputs": inputs}
    if missing:
        out["missing"] = missing
    return out


def _number(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        try:
            value = float(str(value))
        except (TypeError, ValueError):
            return None
    return float(value) if math.isfinite(float(value)) and value >= 0 else None


def mfu(throughput, flops_per_unit, gpus, peak_tflops, peak_source=None, peak_problem=None):
    """MFU = throughput (tokens or samples per second, the whole job) x FLOPs per token/sample / (GPUs x dense peak
    TFLOPS x 1e12). A value above 1 is not an MFU (wrong inputs) and is returned as None with the reason.
    ``peak_source`` says where the peak came from (``given`` or the profile's key, see ``peak_tflops_for``) and
    ``peak_problem`` why it is not known (kept in the inputs as ``peak_tflops_problem``)."""
    inputs = {"throughput_per_s": throughput, "flops_per_unit": flops_per_unit, "gpus": gpus, "peak_tflops_dense": peak_tflops}
    values = dict((key, _number(value)) for key, value in inputs.items())
    if peak_source:
        inputs["peak_tflops_source"] = peak_source
    missing = [key for key, value in values.items() if not value]
    if peak_problem and "peak_tflops_dense" in missing:
        inputs["peak_tflops_problem"] = peak_problem
    if missing:
        return _result("mfu", None, "ratio", inputs, missing=missing)
    ratio = values["throughput_per_s"] * values["flops_per_unit"] / (values["gpus"] * values["peak_tflops_dense"] * 1e12)
    if ratio > 1:
        return _result("mfu", None, "ratio", inputs, missing=["consistent inputs (MFU %.2f > 1)" % ratio])
    return _result("mfu", round(ratio, 4), "ratio", inputs)


PRECISIONS = ("bf16", "fp16", "fp8", "tf32")


def profile_peak(profile, precision="bf16", profiles=None):
    """The dense peak TFLOPS of one GPU of the GPU profile ``profile`` (a name as sites write it: ``H100``, ``h100``)
    in ``precision`` (``bf16``, ``fp16``, ``fp8``, ``tf32``): its ``peak_tflops.<precision>_dense``. Returns
    ``(value, source, problem)``: ``value`` None with ``problem`` (a sentence) when the profile, the precision or the
    figure is not known. ``profiles`` defaults to the shipped data/profiles."""
    precision = str(precision or "bf16").strip().lower()
    if precision not in PRECISIONS:
        return None, None, "precision %r is not one of %s" % (precision, ", ".join(PRECISIONS))
    if profile is None or not str(profile).strip():
        return None, None, "no GPU profile (zhisuan_gpu_profile) to read the dense peak from"
    if profiles is None:
        try:
            profiles = load_profiles()
        except ValueError as exc:
            return None, None, "the GPU profiles cannot be read: %s" % exc
    name = resolve_profile_name(str(profile), profiles)
    if name is None:
        return None, None, "GPU profile %r is not known" % str(profile)
    key = precision + "_dense"
    value = _number(((profiles[name].get("peak_tflops") or {}).get(key)))
    if not value:
        return None, None, "GPU profile %s has no peak_tflops.%s" % (name, key)
    return value, "profile %s peak_tflops.%s" % (name, key), None


def peak_tflops_for(peak_tflops=None, profile=None, precision="bf16", profiles=None):
    """The dense peak for MFU, by precedence: the one given (``zhisuan_quality.peak_tflops``), else the profile's
    ``peak_tflops.<precision>_dense``. Returns ``(value, source, problem)``."""
    if peak_tflops is not None and not (isinstance(peak_tflops, str) and not peak_tflops.strip()):
        return peak_tflops, "given", None
    return profile_peak(profile, precision, profiles)


def _epoch(text):
    try:
        return calendar.timegm(time.strptime(str(text)[:19], "%Y-%m-%dT%H:%M:%S"))
    except (TypeError, ValueError):
        return None


def attempts_of(records, job=None, name=None):
    """The attempts of one training from completion records: by job id (a requeued job keeps its id), else by job
    name (a training resubmitted as new jobs), ordered by start; records without times are left out."""
    chosen = [r for r in records or [] if isinstance(r, dict)
              and ((job is not None and str(r.get("id")) == str(job)) or (job is None and name is not None and r.get("name") == name))]
    out = []
    for record in chosen:
        start, end = _epoch(record.get("start")), _epoch(record.get("end"))
        if start is None or end is None or end < start:
            continue
        out.append(dict(record, start_s=start, end_s=end))
    return sorted(out, key=lambda r: (r["start_s"], r["end_s"]))


def training_times(attempts):
    """Effective and long stable training time, interruptions and recovery times of one training's attempts."""
    inputs = {"attempts": [dict((k, a.get(k)) for k in ("id", "state", "start", "end")) for a in attempts]}
    if not attempts:
        missing = ["attempts (no completion record with a start and an end)"]
        return dict((key, _result(key, None, "s", inputs, missing)) for key in
                    ("effective_training_time", "long_stable_training_time", "task_recovery_time"))
    ran = [a["end_s"] - a["start_s"] for a in attempts]
    wall = attempts[-1]["end_s"] - attempts[0]["start_s"]
    recoveries = [max(0, attempts[i + 1]["start_s"] - attempts[i]["end_s"]) for i in range(len(attempts) - 1)
                  if attempts[i].get("state") in INTERRUPTED]
    effective = _result("effective_training_time", sum(ran), "s", inputs)
    effective["share"] = round(sum(ran) / wall, 4) if wall > 0 else None
    effective["wall_s"] = wall
    effective["interruptions"] = sum(1 for a in attempts[:-1] if a.get("state") in INTERRUPTED)
    recovery = _result("task_recovery_time", min(recoveries) if recoveries else None, "s", inputs,
                       None if recoveries else ["an interruption followed by another attempt"])
    recovery["mean_s"] = round(sum(recoveries) / len(recoveries), 1) if recoveries else None
    recovery["all_s"] = recoveries
    return {"effective_training_time": effective,
            "long_stable_training_time": _result("long_stable_training_time", max(ran), "s", inputs),
            "task_recovery_time": recovery}


def availability(usable_gpus, installed_gpus, source):
    inputs = {"usable_gpus": usable_gpus, "installed_gpus": installed_gpus, "source": source}
    usable, installed = _number(usable_gpus), _number(installed_gpus)
    if usable is None or not installed:
        return _result("cluster_compute_availability", None, "ratio", inputs, ["usable and installed GPU counts"])
    return _result("cluster_compute_availability", round(min(usable / installed, 1.0), 4), "ratio", inputs)


def indicators(records=None, job=None, name=None, throughput=None, flops_per_unit=None, gpus=None, peak_tflops=None,
               usable_gpus=None, installed_gpus=None, source=None, profile=None, precision="bf16", profiles=None):
    """All five indicators at once (the report's quality section). The MFU's dense peak: ``peak_tflops`` when given,
    else the GPU profile's ``peak_tflops.<precision>_dense`` (``peak_tflops_for``)."""
    peak, peak_source, peak_problem = peak_tflops_for(peak_tflops, profile, precision, profiles)
    out = {"mfu": mfu(throughput, flops_per_unit, gpus, peak, peak_source, peak_problem)}
    out.update(training_times(attempts_of(records, job=job, name=name)))
    out["cluster_compute_availability"] = availability(usable_gpus, installed_gpus, source)
    return out
