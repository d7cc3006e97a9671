# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""DCGM judgement rules: ``dcgm`` facts (``dcgm_diag``) and ``dcgm_health`` facts -> check records.

Pure functions, no I/O, standard library only.

``judge_dcgm_diag`` makes one check per (test, GPU), id ``dcgm.<test>.result``, in the order dcgmi printed them.
``<test>`` is the DCGM 4.x plugin name (``memory``, ``pcie``, ``diagnostic``, ``targeted_stress``,
``targeted_power``, ``memory_bandwidth``, ``eud`` …; 2.x/3.x display names are mapped to it by the parser), and
every Deployment test is ``software``: on DCGM 2.x/3.x the nine Deployment tests (Denylist, NVML Library, …) are
folded into one ``dcgm.software.result`` check whose status is the worst of them. DCGM status -> check status:
Pass -> pass, Warn -> warn (fail with the threshold ``dcgm_warn_is_fail``), Fail -> fail, Skip/Not Run -> skip, a
status word DCGM does not define -> error.

DCGM GPU ids follow NVML's enumeration, which is PCI bus order, so GPU *n* is the *n*-th GPU of the ``gpu`` facts
(``gpu_info`` lists GPUs in bus order); with ``gpu_facts`` the component reads ``GPU n (GPU-uuid…, bus id)``.

``judge_dcgm_health`` makes ``dcgm.health.overall`` and one ``dcgm.health.<system>`` check per incident (``pcie``,
``memory``, ``nvlink``, ``thermal``, ``power``, ``inforom``, ``driver``, ``sm`` …).

A ``dcgm.diag.readable`` error comes first when part of the diag document was not an object (``unreadable`` in the
facts: a failed test may be hidden there); facts of an unexpected type or shape give one ``dcgm.facts.readable`` error.
"""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import guarded, make_check
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._gpu_base import gpu_component, mig_gpus, mig_labels
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._util import clean_facts

DEFAULT_THRESHOLDS = {"dcgm_warn_is_fail": False}

# test -> (remedy, what to do) for a Fail/Warn.
_TEST_REMEDIES = {
    "memory": ("reset_gpu", "drain the node, reset the GPU and rerun the diagnostic; RMA the GPU if the memory test "
                            "fails again"),
    "memtest": ("reset_gpu", "drain the node, reset the GPU and rerun the diagnostic; RMA the GPU if memtest fails again"),
    "pcie": ("reseat", "reseat the GPU and its riser or cable, then rerun; compare the PCIe link width and replay "
                       "count in gpu_info"),
    "diagnostic": ("investigate", "the GPU miscomputed or fell short under load: read the kernel log for XIDs and "
                                  "the ECC counters, then rerun; RMA if it fails again"),
    "targeted_stress": ("investigate", "the GPU did not sustain the stress level: check clocks, throttle reasons and "
                                       "cooling, then rerun"),
    "targeted_power": ("investigate", "the GPU did not reach its target power: check the power limit, the PSUs and "
                                      "cooling, then rerun"),
    "memory_bandwidth": ("investigate", "the GPU memory bandwidth is below DCGM's floor: check clocks and throttle "
                                        "reasons, then rerun"),
    "sm_stress": ("investigate", "check clocks, throttle reasons and cooling, then rerun"),
    "pulse_test": ("investigate", "the GPU failed the power-transient test: check power delivery to the baseboard"),
    "eud": ("investigate", "the NVIDIA field diagnostic (EUD) failed: open an RMA case with its log"),
    "nvbandwidth": ("investigate", "GPU-to-GPU or host bandwidth is below DCGM's floor: check NVLink and PCIe links"),
    "context_create": ("investigate", "no CUDA context could be created: check the driver, other processes and MIG mode"),
}
_DEFAULT_REMEDY = ("investigate", "read DCGM's warning and rerun the diagnostic")
# Software (Deployment) findings: matched on the test name (2.x/3.x) and the warning text (4.x), strongest wins.
_SOFTWARE_RULES = (
    (("page retire", "retired page", "row remap"), "reset_gpu",
     "drain the node and reset the GPU so the pending page retirement or row remapping takes effect"),
    (("inforom",), "update_firmware", "reflash the GPU's InfoROM (NVIDIA support) and rerun"),
    (("denylist", "blacklist", "nvml", "cuda main library", "cuda toolkit", "library", "driver"), "update_firmware",
     "reinstall the NVIDIA driver and CUDA libraries at the site baseline"),
    (("persistence mode",), "tune", "enable persistence mode (the nvidia-persistenced service, or nvidia-smi -pm 1)"),
    (("environment variable", "performance-limiting"), "tune", "unset the CUDA environment variables DCGM names"),
    (("graphics process",), "tune", "stop the processes that hold graphics contexts on the GPUs"),
    (("permission", "os block", "os-related"), "tune", "fix the device permissions or OS blocks DCGM names"),
)
_SOFTWARE_DEFAULT = ("update_firmware", "bring the driver and CUDA stack to the site baseline and rerun")
# health system -> (remedy, what to do); after DCGM's own next steps (dcgm_errors.h *_NEXT).
_HEALTH_REMEDIES = {
    "pcie": ("reseat", "reseat the GPU and run the system's PCIe diagnostics"),
    "memory": ("reset_gpu", "drain the GPU and reset it, or reboot the node"),
    "nvlink": ("investigate", "check the NVLink links and the fabric manager, then reset the GPU"),
    "thermal": ("investigate", "check cooling: fans, airflow, heatsink or coolant loop"),
    "power": ("investigate", "check the power limit, the PSUs and power delivery"),
    "inforom": ("update_firmware", "reflash the GPU's InfoROM (NVIDIA support)"),
    "driver": ("update_firmware", "reinstall the NVIDIA driver at the site baseline"),
}
_HEALTH_STATUS = {"Healthy": "pass", "Warning": "warn", "Failure": "fail"}
# Worst first: which DCGM status wins when several results fold into one check.
_RANK = {"Fail": 5, "Warn": 3, "Pass": 2, "Skip": 1, "Not Run": 0}
_STRENGTH = {"reset_gpu": 3, "update_firmware": 2, "tune": 1}


# ----------------------------------------------------------------------------------------------- helpers

def _gpu_component(gpu_id, label, gpu_facts):
    gpus = (gpu_facts or {}).get("gpus") if isinstance(gpu_facts, dict) else None
    if gpu_id is None or not isinstance(gpus, list) or not 0 <= gpu_id < len(gpus) or not isinstance(gpus[gpu_id], dict):
        return label
    return gpu_component(label, gpus[gpu_id])


def _rank(status):
    return _RANK.get(status, 4)  # an unknown word ranks just below Fail


def _warning_text(warning, prefix=None):
    text = warning.get("text") or "(no text)"
    if prefix and not text.lower().startswith(prefix.lower()):
        text = "%s: %s" % (prefix, text)
    if warning.get("error_id") is not None:
        text += " (DCGM error %s)" % warning["error_id"]
    return text


def _software_remedy(names_and_texts):
    best = None
    for haystack in names_and_texts:
        lowered = haystack.lower()
        for keys, remedy, advice in _SOFTWARE_RULES:
            if any(key in lowered for key in keys):
                if best is None or _STRENGTH[remedy] > _STRENGTH[best[0]]:
                    best = (remedy, advice)
                break
    return best or _SOFTWARE_DEFAULT


def _run_text(facts):
    text = "dcgmi diag -r %s" % facts.get("level") if facts.get("level") is not None else "dcgmi diag"
    if facts.get("version"):
        text += " (DCGM %s)" % facts["version"]
    return text


# ----------------------------------------------------------------------------------------------- diag

def _groups(tests):
    """``[((slug, gpu, entity), [(test, result), ...]), ...]`` in output order."""
    order, groups = [], {}
    for test in tests:
        if not isinstance(test, dict):
            continue
        results = [r for r in test.get("results") or [] if isinstance(r, dict)]
        if not results and isinstance(test.get("summary"), dict):
            results = [test["summary"]]
        for result in results or [None]:
            gpu = result.get("gpu") if result else None
            key = (test.get("slug") or "unnamed", gpu, result.get("entity") if result else None)
            if key not in groups:
                order.append(key)
                groups[key] = []
            groups[key].append((test, result))
    return [(key, groups[key]) for key in order]


def _diag_check(host, key, items, facts, gpu_facts, warn_is_fail):
    slug, gpu, entity = key
    label = "GPU %d" % gpu if gpu is not None else (entity or "all GPUs")
    component = _gpu_component(gpu, label, gpu_facts)
    names = []
    for test, dummy in items:
        if test.get("name") not in names:
            names.append(test.get("name"))
    what = "DCGM %s test" % slug if len(names) == 1 else "DCGM %s checks (%d tests)" % (slug, len(names))
    statuses = [(result or {}).get("status") or "Not Run" for dummy, result in items]
    worst = max(statuses, key=_rank)
    findings, info, lines = [], [], []
    for (test, result), status in zip(items, statuses):
        prefix = test.get("name") if len(names) > 1 else None
        lines.append("%s%s=%s" % (test.get("name"), " " + entity if entity else "", status))
        pools = [result or {}]
        summary = test.get("summary")
        if isinstance(summary, dict) and summary is not result:
            pools.append(summary)
        for pool in pools:
            for warning in pool.get("warnings") or []:
                text = _warning_text(warning, prefix)
                if text not in findings:
                    findings.append(text)
            for item in pool.get("info") or []:
                if item not in info:
                    info.append(item)
    evidence = "%s: %s" % (_run_text(facts), ", ".join(lines))
    if findings:
        evidence += "; warnings: " + " | ".join(findings)
    if info:
        evidence += "; info: " + " | ".join(info)
    bad = ["%s=%s" % (test.get("name"), status) for (test, dummy), status in zip(items, statuses)
           if status not in ("Pass", "Skip", "Not Run")]
    if findings:
        reason = ": " + findings[0] + (" (and %d more)" % (len(findings) - 1) if len(findings) > 1 else "")
    else:
        reason = " (%s)" % ", ".join(bad) if len(names) > 1 and bad else ""

    if worst == "Pass":
        return make_check("dcgm.%s.result" % slug, host, "pass", component=component, observed="Pass", expected="Pass",
                          message="%s passed the %s" % (label, what), evidence=evidence)
    if worst in ("Skip", "Not Run"):
        return make_check("dcgm.%s.result" % slug, host, "skip", component=component, observed=worst, expected="Pass",
                          message="The %s did not run on %s (status %s)%s" % (what, label, worst, ": " + findings[0] if findings else ""),
                          evidence=evidence)
    if worst not in _RANK:
        return make_check("dcgm.%s.result" % slug, host, "error", component=component, observed=worst, expected="Pass",
                          message="DCGM reported %r, a status this collection does not know, for the %s on %s; read "
                                  "the raw dcgmi output" % (worst, what, label),
                          remedy="investigate", evidence=evidence)
    if slug == "software":
        remedy, advice = _software_remedy(bad + findings)
    else:
        remedy, advice = _TEST_REMEDIES.get(slug, _DEFAULT_REMEDY)
    status = "fail" if worst == "Fail" or warn_is_fail else "warn"
    verb = "failed" if worst == "Fail" else "raised a warning in"
    return make_check("dcgm.%s.result" % slug, host, status, component=component, observed=worst, expected="Pass",
                      message="%s %s the %s%s; %s" % (label, verb, what, reason, advice), remedy=remedy, evidence=evidence)


def judge_dcgm_diag(host, facts, gpu_facts=None, thresholds=None):
    """Judge one host's ``dcgm`` facts (see ``_judge_dcgm_diag``); facts of an unexpected shape give one ``error`` check."""
    return guarded(
        "dcgm.facts.readable", host, "dcgmi", "dcgm", _judge_dcgm_diag, host, clean_facts(facts),
        gpu_facts=clean_facts(gpu_facts), thresholds=thresholds)


def _judge_dcgm_diag(host, facts, gpu_facts=None, thresholds=None):
    """Judge one host's ``dcgm`` facts (from ``zhisuan.ops.dcgm_diag``). Returns a list of check records.

    ``gpu_facts`` (optional) are the host's ``gpu`` facts, used only to name components. ``thresholds``:
    ``dcgm_warn_is_fail`` (default false) turns a DCGM Warn into a failed check.
    """
    limits = dict(DEFAULT_THRESHOLDS)
    limits.update(dict((k, v) for k, v in (thresholds or {}).items() if k in limits and v is not None))
    warn_is_fail = limits["dcgm_warn_is_fail"] in (True, "true", "yes", "True", 1)
    tests = facts.get("tests") if isinstance(facts, dict) else None
    mig = mig_gpus(gpu_facts)
    if not tests and mig:
        return [make_check(
            "dcgm.diag.tests", host, "skip", component="dcgmi", observed="MIG mode", expected="test results",
            message="dcgmi diag returned no test results and %s %s in MIG mode, which the DCGM diagnostic does not "
                    "test as a whole GPU: disable MIG (nvidia-smi -mig 0, then a GPU reset) for the diagnostic"
                    % (mig_labels(mig), "is" if len(mig) == 1 else "are"),
            evidence="dcgm facts: %s" % (facts if not isinstance(facts, dict) else _run_text(facts)))]
    if not tests:
        return [make_check(
            "dcgm.diag.tests", host, "error", component="dcgmi", observed="no results", expected="test results",
            message="dcgmi diag returned no test results, so no GPU was judged; read the raw output",
            remedy="investigate", evidence="dcgm facts: %s" % (facts if not isinstance(facts, dict) else _run_text(facts)))]
    checks = [_diag_check(host, key, items, facts, gpu_facts, warn_is_fail) for key, items in _groups(tests)]
    unreadable = [str(part) for part in facts.get("unreadable") or [] if part]
    if unreadable:
        checks.insert(0, make_check(
            "dcgm.diag.readable", host, "error", component="dcgmi", observed=len(unreadable), expected="0 unreadable parts",
            message="Part of the dcgmi diag output could not be read (%s): a failed test may be in it, so this run does "
                    "not show the GPUs healthy; read the raw output" % ", ".join(unreadable[:3]),
            remedy="investigate", evidence="%s; unreadable: %s" % (_run_text(facts), "; ".join(unreadable[:10]))))
    return checks


def summarize_dcgm_diag(facts, profile=None):
    """What the report shows about a host's DCGM diagnostic."""
    facts = facts if isinstance(facts, dict) else {}
    failed, slugs, gpus = [], [], set()
    for test in facts.get("tests") or []:
        if test.get("slug") not in slugs:
            slugs.append(test.get("slug"))
        for result in test.get("results") or []:
            if result.get("gpu") is not None:
                gpus.add(result["gpu"])
            if result.get("status") == "Fail" and test.get("slug") not in failed:
                failed.append(test.get("slug"))
    return {"level": facts.get("level"), "version": facts.get("version"), "overall": facts.get("overall"),
            "tests": slugs, "failed": failed, "gpus": len(gpus)}


# --------------------------------------------------------------------------------------------- health

def judge_dcgm_health(host, facts, gpu_facts=None):
    """Judge one host's ``dcgm_health`` facts (see ``_judge_dcgm_health``); odd facts give one ``error`` check."""
    return guarded(
        "dcgm.facts.readable", host, "dcgmi", "dcgm_health", _judge_dcgm_health, host, clean_facts(facts),
        gpu_facts=clean_facts(gpu_facts))


def _judge_dcgm_health(host, facts, gpu_facts=None):
    """Judge one host's ``dcgm_health`` facts (from ``zhisuan.ops.dcgm_health``). Returns a list of check records."""
    if not isinstance(facts, dict) or not facts.get("overall"):
        return [make_check("dcgm.health.overall", host, "error", component="dcgmi", observed=None, expected="Healthy",
                           message="No DCGM health result was collected for this host", remedy="investigate",
                           evidence="dcgm_health facts: %s" % facts)]
    checks, remedies = [], []
    for incident in facts.get("incidents") or []:
        system = incident.get("system") or "unknown"
        health = incident.get("health")
        status = _HEALTH_STATUS.get(health, "error")
        remedy, advice = _HEALTH_REMEDIES.get(system, _DEFAULT_REMEDY)
        label = incident.get("entity") or "node"
        component = _gpu_component(incident.get("gpu"), label, gpu_facts)
        evidence = "dcgmi health -c: %s %s=%s: %s" % (label, incident.get("system_name") or system, health,
                                                      incident.get("message") or "(no message)")
        if status == "pass":
            checks.append(make_check("dcgm.health.%s" % system, host, "pass", component=component, observed=health,
                                     expected="Healthy", message="DCGM health: %s %s is healthy" % (label, system),
                                     evidence=evidence))
            continue
        if status == "error":
            remedy, advice = "investigate", "read the raw dcgmi output"
        remedies.append((status, remedy))
        checks.append(make_check(
            "dcgm.health.%s" % system, host, status, component=component, observed=health, expected="Healthy",
            message="DCGM health watch reports %s for the %s of %s: %s; %s" % (
                health, incident.get("system_name") or system, label, incident.get("message") or "no detail", advice),
            remedy=remedy, evidence=evidence))
    overall = facts["overall"]
    status = _HEALTH_STATUS.get(overall, "error")
    evidence = "dcgmi health -c: Overall Health=%s; %d incident(s)" % (overall, len(facts.get("incidents") or []))
    if status == "pass":
        overall_check = make_check("dcgm.health.overall", host, "pass", component="GPUs", observed=overall,
                                   expected="Healthy", message="DCGM health watches report the GPUs healthy",
                                   evidence=evidence)
    else:
        worst = [r for s, r in remedies if s == "fail"] or [r for dummy, r in remedies]
        overall_check = make_check(
            "dcgm.health.overall", host, status, component="GPUs", observed=overall, expected="Healthy",
            message="DCGM health watches report %s overall%s" % (
                overall, "; see the dcgm.health checks per GPU" if remedies else " with no incident detail"),
            remedy=worst[0] if worst else "investigate", evidence=evidence)
    return [overall_check] + checks


def summarize_dcgm_health(facts, profile=None):
    facts = facts if isinstance(facts, dict) else {}
    incidents = facts.get("incidents") or []
    return {"overall": facts.get("overall"), "incidents": len(incidents),
            "systems": sorted(set(i.get("system") for i in incidents if i.get("system")))}
