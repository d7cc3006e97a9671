# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""The operations sections of the report (issues 15, 16, 17): the job line (``cluster.job`` and the suspects'
failing checks), the quality indicators (``cluster.quality``, docs/quality.md), the platform summary
(``cluster.slurm`` / ``cluster.k8s``, docs/platform.md), the shared causes (``fleet.shared.<kind>.<name>``,
docs/fleet.md) and the repeat offenders (``remediate.repeat.<node>`` and ``cluster.remediation``,
docs/remediation.md). Pure functions of the results document and the localised view; each section is None when
the run has no such data, so the templates leave it out."""

from __future__ import annotations

import math

from ansible_collections.zhisuan.ops.plugins.module_utils._text import natural_key
from ansible_collections.zhisuan.ops.plugins.plugin_utils._report_i18n import N_, REMEDY_NAMES, STATUS_WORDS

QUALITY_ORDER = ("mfu", "effective_training_time", "long_stable_training_time", "task_recovery_time",
                 "cluster_compute_availability")
QUALITY_NAMES = {"mfu": N_("Model FLOPs utilisation (MFU)"), "effective_training_time": N_("Effective training time"),
                 "long_stable_training_time": N_("Long stable training time"),
                 "task_recovery_time": N_("Shortest task recovery time"),
                 "cluster_compute_availability": N_("Cluster compute availability")}
# The job's classification (module_utils/_judge/job.py WORDS), by its key.
CLASS_WORDS = {"nccl_timeout": N_("an NCCL timeout"), "ib_completion": N_("an InfiniBand completion error"),
               "nccl_error": N_("an NCCL error"), "nccl_warn": N_("an NCCL warning"),
               "ecc": N_("an uncorrectable ECC error"), "xid": N_("a GPU Xid"), "cuda_error": N_("a CUDA error"),
               "oom": N_("CUDA out of memory"), "hang": N_("a hang (no log progress)"),
               None: N_("no failure signature")}
PLATFORM_NAMES = {"slurm": N_("Slurm"), "k8s": N_("Kubernetes")}
MAX_FINDINGS = 5
PROBLEMS = ("fail", "error", "warn")


def _scalar(value):
    return value is None or isinstance(value, (str, int, float, bool))


def _str(value):
    """The text of a scalar; "" for None and for anything that is not a scalar (damaged data)."""
    return str(value) if value is not None and _scalar(value) else ""


def _strs(value):
    """The texts of a list's scalars; [] when ``value`` is not a list."""
    return [str(item) for item in value if item is not None and _scalar(item)] if isinstance(value, list) else []


def _number(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return value


def _duration(tr, seconds, fmt):
    """``5400 s (1.5 h)``; the hours only from an hour on."""
    value = _number(seconds)
    if value is None:
        return fmt(None)
    text = "%s s" % fmt(value)
    if value >= 3600:
        text += tr.gettext(" (%(hours)s h)") % {"hours": fmt(round(value / 3600.0, 2))}
    return text


def _ratio(value, fmt):
    value = _number(value)
    return fmt(None) if value is None else "%s %%" % fmt(round(value * 100, 2))


def _inputs_text(inputs, fmt):
    if not isinstance(inputs, dict):
        return ""
    parts = []
    for key in sorted(inputs):
        value = inputs[key]
        if key == "attempts" and isinstance(value, list):
            value = "; ".join("#%s %s %s..%s" % tuple(_str(a.get(k)) for k in ("id", "state", "start", "end"))
                              for a in value if isinstance(a, dict)) or None
        elif not (_scalar(value) or (isinstance(value, list) and all(_scalar(v) for v in value))):
            value = "\u2026"
        parts.append("%s=%s" % (_str(key), fmt(value)))
    return ", ".join(parts)


def quality_section(results, tr, fmt):
    """One row per indicator in ``cluster.quality``: name, value with its unit, extras, definition, inputs, missing."""
    block = (results.get("cluster") or {}).get("quality")
    if not isinstance(block, dict):
        return None
    rows = []
    for key in list(QUALITY_ORDER) + sorted(k for k in block if k not in QUALITY_ORDER):
        item = block.get(key)
        if not isinstance(item, dict):
            continue
        unit = _str(item.get("unit"))
        value = _number(item.get("value"))
        if unit == "ratio":
            value_text = _ratio(value, fmt)
        elif unit == "s":
            value_text = _duration(tr, value, fmt)
        else:
            value_text = "%s %s" % (fmt(value), unit) if unit and value is not None else fmt(value)
        extra = []
        if key == "effective_training_time":
            if _number(item.get("share")) is not None:
                extra.append(tr.gettext("%(share)s of the wall-clock time %(wall)s")
                             % {"share": _ratio(item["share"], fmt), "wall": _duration(tr, item.get("wall_s"), fmt)})
            if _number(item.get("interruptions")) is not None:
                extra.append(tr.gettext("interruptions: %(n)s") % {"n": fmt(item["interruptions"])})
        if key == "task_recovery_time" and _strs(item.get("all_s")):
            extra.append(tr.gettext("mean %(mean)s; each: %(all)s")
                         % {"mean": _duration(tr, item.get("mean_s"), fmt),
                            "all": ", ".join("%s s" % fmt(v) for v in item["all_s"] if _number(v) is not None)})
        missing = item.get("missing") or []
        rows.append({"key": key, "name": tr.gettext(QUALITY_NAMES[key]) if key in QUALITY_NAMES else key,
                     "value": value, "value_text": value_text, "unit": unit, "extra": "; ".join(extra),
                     "definition": _str(item.get("definition")), "inputs": _inputs_text(item.get("inputs"), fmt),
                     "missing": ", ".join(_strs(missing)) if isinstance(missing, list) else _str(missing)})
    return rows or None


def _checks_of(view):
    by_host = {}
    for host in view.get("hosts") or []:
        by_host[host["name"]] = host["checks"]
    by_host["cluster"] = view.get("cluster") or []
    return by_host


def _remedy(tr, remedy):
    return tr.gettext(REMEDY_NAMES[remedy]) if remedy in REMEDY_NAMES else str(remedy or "")


def _finding(tr, host, check):
    return {"host": host, "id": check["id"], "component": check["component"], "status": check["status"],
            "message": check.get("message_l10n") or check["message"], "remedy": check["remedy"],
            "remedy_text": _remedy(tr, check["remedy"])}


def job_section(results, view, tr):
    """The job line: what happened to ``cluster.job`` and what its suspects' checks found (RDMA ports first)."""
    job = (results.get("cluster") or {}).get("job")
    if not isinstance(job, dict) or not _str(job.get("id")):
        return None
    classification = job.get("classification")
    classification = classification if classification is None or isinstance(classification, str) else ""
    what = tr.gettext(CLASS_WORDS[classification]) if classification in CLASS_WORDS else \
        (_str(job.get("classification_text")) or classification)
    job_id, name, state = _str(job["id"]), _str(job.get("name")), _str(job.get("state"))
    label = "%s (%s)" % (job_id, name) if name else job_id
    headline = tr.gettext("job %(job)s is %(state)s: %(what)s") % {"job": label, "state": state or "?", "what": what}
    checks = _checks_of(view)
    findings = []
    suspects = _strs(job.get("suspects"))
    for host in suspects:
        bad = [c for c in checks.get(host) or [] if c["status"] in ("fail", "error")]
        bad.sort(key=lambda c: (c["id"] != "rdma.port.state", not c["id"].startswith(("rdma.", "nic.")),
                                c["status"] != "fail", natural_key(c["id"]), natural_key(c["component"])))
        findings.extend(_finding(tr, host, c) for c in bad[:MAX_FINDINGS])
    parts = [headline]
    parts.extend(tr.gettext("%(host)s %(component)s: %(check)s %(status)s (%(remedy)s)")
                 % {"host": f["host"], "component": f["component"], "check": f["id"],
                    "status": tr.gettext(STATUS_WORDS.get(f["status"], f["status"])).lower(), "remedy": f["remedy_text"]}
                 for f in findings if f["id"] == "rdma.port.state")
    return {"id": job_id, "name": name, "state": state, "what": what,
            "headline": headline, "line": "; ".join(parts), "ranks": _strs(job.get("ranks")),
            "suspects": suspects, "nodes": _strs(job.get("nodes")), "kinds": _strs(job.get("kinds")), "findings": findings,
            "clean": [s for s in suspects if not any(f["host"] == s for f in findings)]}


def platform_section(results, tr, fmt):
    """Nodes per state and GPUs usable (Slurm) or allocatable (Kubernetes) against installed, per scheduler."""
    cluster = results.get("cluster") or {}
    out = []
    for kind in ("slurm", "k8s"):
        data = cluster.get(kind)
        if not isinstance(data, dict) or not (data.get("states") or data.get("gpus_installed")):
            continue
        states = data.get("states") if isinstance(data.get("states"), dict) else {}
        usable = data.get("gpus_usable") if kind == "slurm" else data.get("gpus_allocatable")
        counts = dict((str(state), _number(count)) for state, count in states.items() if _number(count) is not None)
        out.append({"kind": kind, "name": tr.gettext(PLATFORM_NAMES[kind]),
                    "states": [(state, fmt(counts[state])) for state in sorted(counts, key=natural_key)],
                    "nodes": sum(counts.values()),
                    "usable": fmt(_number(usable)), "installed": fmt(_number(data.get("gpus_installed"))),
                    "availability": _ratio(data.get("availability"), fmt)})
    return out or None


def _evidence_nodes(evidence):
    """``{family: [failing nodes]}`` and the members from a fleet.shared check's evidence
    (``rdma: failing a, b; members: a, b, c``)."""
    failing, members = [], []
    for part in str(evidence or "").split("; "):
        head, sep, tail = part.partition(": ")
        if not sep:
            continue
        names = [n for n in tail.split(", ") if n]
        if head == "members":
            members = names
        elif tail.startswith("failing "):
            failing.append((head, [n for n in tail[len("failing "):].split(", ") if n]))
    return failing, members


def shared_section(view, tr):
    """The shared causes: each failing ``fleet.shared.<kind>.<name>`` check with its component and failing nodes."""
    rows = []
    for check in view.get("cluster") or []:
        parts = check["id"].split(".")
        if parts[:2] != ["fleet", "shared"] or len(parts) < 4 or check["status"] not in PROBLEMS \
                or check["id"] == "fleet.shared.components.localised":
            continue
        failing, members = _evidence_nodes(check["evidence"])
        rows.append({"id": check["id"], "kind": parts[2], "component": check["component"] or ".".join(parts[3:]),
                     "status": check["status"], "message": check.get("message_l10n") or check["message"],
                     "failing": failing, "members": len(members), "remedy": check["remedy"],
                     "remedy_text": _remedy(tr, check["remedy"])})
    return rows or None


def repeat_section(results, view, tr):
    """Repeat offenders: the ``remediate.repeat.<node>`` checks (tries, the escalation, the reason) and
    ``cluster.remediation``'s ``repeat_offenders`` and ``shared`` node lists."""
    rows = []
    for check in view.get("cluster") or []:
        if not check["id"].startswith("remediate.repeat.") or check["status"] == "pass":
            continue
        rows.append({"id": check["id"], "node": check["component"] or check["id"][len("remediate.repeat."):],
                     "tries": check["observed_text"], "escalation": check["remedy"],
                     "escalation_text": _remedy(tr, check["remedy"]), "cause": check["evidence"],
                     "message": check.get("message_l10n") or check["message"]})
    remediation = (results.get("cluster") or {}).get("remediation")
    remediation = remediation if isinstance(remediation, dict) else {}
    offenders = _strs(remediation.get("repeat_offenders"))
    shared = _strs(remediation.get("shared"))
    known = set(r["node"] for r in rows)
    rows.extend({"id": "", "node": name, "tries": "", "escalation": "", "escalation_text": "", "cause": "",
                 "message": ""} for name in offenders if name not in known)
    if not rows and not shared:
        return None
    return {"rows": rows, "offenders": offenders, "shared": shared}


def ops_sections(results, view, tr, fmt):
    """{job, quality, platform, shared_causes, repeat_offenders}: each None when the run has no such data."""
    return {"job": job_section(results, view, tr), "quality": quality_section(results, tr, fmt),
            "platform": platform_section(results, tr, fmt), "shared_causes": shared_section(view, tr),
            "repeat_offenders": repeat_section(results, view, tr)}
