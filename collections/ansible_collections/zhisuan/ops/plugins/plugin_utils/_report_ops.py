# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""The operations sections of the report (issues 15, 16, 17): the job line (``cluster.job`` and the suspects'
failing checks), the quality indicators (``cluster.quality``, docs/quality.md), the platform summary
(``cluster.slurm`` / ``cluster.k8s``, docs/platform.md), the shared causes (``fleet.shared.<kind>.<name>``,
docs/fleet.md), the repeat offenders (``remediate.repeat.<node>`` and ``cluster.remediation``,
docs/remediation.md) and the operations appendix (the alert rules the monitoring role installs, read from the
collection's ``data/monitoring/alert-rules.yml``, and ``run.site``: service level and contacts; docs/report.md).
Pure functions of the results document and the localised view (the appendix also reads the alert rules data, once
per file version); each section is None when the run has no such data, so the templates leave it out."""

from __future__ import annotations

import math
import os

import yaml

from ansible_collections.zhisuan.ops.plugins.module_utils._text import natural_key
from ansible_collections.zhisuan.ops.plugins.plugin_utils._report_i18n import N_, NP_, REMEDY_NAMES, STATUS_WORDS

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


# ---------------------------------------------------------------------------------------------------------------
# the operations appendix (delivery guide section 6.2): the alert rules and the site's service level and contacts

ALERT_RULES_PATH = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir,
                                                 "data", "monitoring", "alert-rules.yml"))
ALERT_RULES_SOURCE = "data/monitoring/alert-rules.yml"
# The runs whose report is a document handed over (delivery guide section 6.2) list the alert rules.
APPENDIX_KINDS = ("acceptance", "delivery")
ALERT_SEVERITIES = ("critical", "warning")
SEVERITY_CONTEXT = "alert severity"
SEVERITY_WORDS = {"critical": NP_("alert severity", "critical"), "warning": NP_("alert severity", "warning")}
ALERT_FIELDS = ("alert", "expr", "severity", "remedy", "check_id", "summary", "meaning", "action")
CONTACT_KEYS = ("role", "name", "organisation", "phone", "email")
CONTACT_WORDS = {"role": N_("Role"), "name": N_("Name"), "organisation": N_("Organisation"), "phone": N_("Phone"),
                 "email": N_("Email")}
# What each alert means and its first action, in the report's language: looked up as alert-meaning:<alert> and
# alert-action:<alert> (the English is the data's meaning and action; tests keep this list to the data's alerts).
ALERT_TEXTS = (
    N_("alert-meaning:GpuXidResetRequired"), N_("alert-action:GpuXidResetRequired"),
    N_("alert-meaning:GpuXidResetAdvised"), N_("alert-action:GpuXidResetAdvised"),
    N_("alert-meaning:GpuXidRebootRequired"), N_("alert-action:GpuXidRebootRequired"),
    N_("alert-meaning:GpuXidRmaCandidate"), N_("alert-action:GpuXidRmaCandidate"),
    N_("alert-meaning:GpuXidReseat"), N_("alert-action:GpuXidReseat"),
    N_("alert-meaning:GpuEccVolatileUncorrectable"), N_("alert-action:GpuEccVolatileUncorrectable"),
    N_("alert-meaning:GpuEccAggregateUncorrectable"), N_("alert-action:GpuEccAggregateUncorrectable"),
    N_("alert-meaning:GpuRowRemapFailure"), N_("alert-action:GpuRowRemapFailure"),
    N_("alert-meaning:GpuRowRemapPending"), N_("alert-action:GpuRowRemapPending"),
    N_("alert-meaning:GpuRemappedRowsUncorrectable"), N_("alert-action:GpuRemappedRowsUncorrectable"),
    N_("alert-meaning:GpuTemperatureAtSlowdown"), N_("alert-action:GpuTemperatureAtSlowdown"),
    N_("alert-meaning:GpuTemperatureNearSlowdown"), N_("alert-action:GpuTemperatureNearSlowdown"),
    N_("alert-meaning:GpuTemperatureAbovePeers"), N_("alert-action:GpuTemperatureAbovePeers"),
    N_("alert-meaning:GpuThermalViolation"), N_("alert-action:GpuThermalViolation"),
    N_("alert-meaning:GpuMemoryTemperatureAtLimit"), N_("alert-action:GpuMemoryTemperatureAtLimit"),
    N_("alert-meaning:GpuMemoryTemperatureNearLimit"), N_("alert-action:GpuMemoryTemperatureNearLimit"),
    N_("alert-meaning:GpuNVLinkCrcErrors"), N_("alert-action:GpuNVLinkCrcErrors"),
    N_("alert-meaning:GpuNVLinkDown"), N_("alert-action:GpuNVLinkDown"),
    N_("alert-meaning:NicLinkFlapping"), N_("alert-action:NicLinkFlapping"),
    N_("alert-meaning:NicLinkFlappingRepeatedly"), N_("alert-action:NicLinkFlappingRepeatedly"),
    N_("alert-meaning:NicLinkDown"), N_("alert-action:NicLinkDown"),
)
_ALERT_CACHE = {}


class AlertRulesError(ValueError):
    """The alert rules data cannot be read or does not have its shape; the message names the file."""


def load_alert_rules(path=ALERT_RULES_PATH):
    """The alert rules of the data file, in its order: [{group, alert, expr, for, severity, remedy, check_id,
    summary, meaning, action}]. AlertRulesError naming the file and the rule when it is unreadable or a rule lacks
    one of those fields (``for`` is optional). Cached per file version."""
    try:
        info = os.stat(path)
        stamp = (info.st_mtime_ns, info.st_size)
        if _ALERT_CACHE.get(path, (None,))[0] == stamp:
            return _ALERT_CACHE[path][1]
        with open(path, encoding="utf-8") as handle:
            data = yaml.safe_load(handle)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise AlertRulesError("cannot read the alert rules %s: %s" % (path, exc))
    groups = data.get("groups") if isinstance(data, dict) else None
    if not isinstance(groups, list) or not groups:
        raise AlertRulesError("the alert rules %s have no list of groups" % path)
    rules = []
    for group in groups:
        group_rules = group.get("rules") if isinstance(group, dict) else None
        if not isinstance(group_rules, list):
            raise AlertRulesError("the alert rules %s: a group without a list of rules" % path)
        for rule in group_rules:
            rule = rule if isinstance(rule, dict) else {}
            missing = [key for key in ALERT_FIELDS if not isinstance(rule.get(key), str) or not rule[key].strip()]
            if missing:
                raise AlertRulesError("the alert rules %s: rule %s lacks %s"
                                      % (path, rule.get("alert") or "#%d" % (len(rules) + 1), ", ".join(missing)))
            if rule["severity"] not in ALERT_SEVERITIES or rule["remedy"] not in REMEDY_NAMES:
                values = (path, rule["alert"], rule["severity"], rule["remedy"], ", ".join(ALERT_SEVERITIES))
                raise AlertRulesError("the alert rules %s: rule %s has severity %s and remedy %s (severity: %s; remedy: "
                                      "one of the suite's remedies)" % values)
            rules.append(dict(rule, group=_str(group.get("name")), **{"for": _str(rule.get("for")) or None}))
    _ALERT_CACHE[path] = (stamp, rules)
    return rules


def _keyed(tr, key, english):
    """The catalog's text for ``key`` (alert-meaning:<alert>), the English of the data when it has none."""
    text = tr.gettext(key)
    return english if text == key else text


def _alert_row(tr, rule):
    name = rule["alert"]
    word = SEVERITY_WORDS[rule["severity"]]
    return {"name": name, "group": rule["group"], "severity": rule["severity"],
            "severity_text": tr.pgettext(SEVERITY_CONTEXT, word),
            "check_id": rule["check_id"], "remedy": rule["remedy"], "remedy_text": _remedy(tr, rule["remedy"]),
            "meaning": _keyed(tr, "alert-meaning:" + name, rule["meaning"].strip()),
            "action": _keyed(tr, "alert-action:" + name, rule["action"].strip()),
            "meaning_en": rule["meaning"].strip(), "action_en": rule["action"].strip()}


def site_view(site):
    """run.site for the report: {name, service_level, contacts: [{role, name, organisation, phone, email}]}; None
    when the run has none (damaged values are left out, never shown raw)."""
    if not isinstance(site, dict):
        return None
    contacts = []
    for contact in site.get("contacts") if isinstance(site.get("contacts"), list) else []:
        if isinstance(contact, dict) and _str(contact.get("name")):
            contacts.append(dict((key, _str(contact.get(key))) for key in CONTACT_KEYS))
    out = {"name": _str(site.get("name")), "service_level": _str(site.get("service_level")), "contacts": contacts}
    return out if out["name"] or out["service_level"] or contacts else None


def appendix_section(results, tr, path=ALERT_RULES_PATH):
    """The operations appendix: {site, alerts, problem, source}. ``alerts`` (the alert rules with their severity,
    meaning and first action) in acceptance and delivery reports; ``site`` whenever the run has ``run.site``;
    ``problem`` says why the alert rules are missing when their data cannot be read. None when there is nothing."""
    run = results.get("run") if isinstance(results.get("run"), dict) else {}
    site = site_view(run.get("site"))
    if site:
        # the contact columns that have a value in some contact, with their heading in the report's language
        site["columns"] = [(key, tr.gettext(CONTACT_WORDS[key])) for key in CONTACT_KEYS
                           if any(contact[key] for contact in site["contacts"])]
    alerts = problem = None
    if run.get("kind") in APPENDIX_KINDS:
        try:
            alerts = [_alert_row(tr, rule) for rule in load_alert_rules(path)]
        except AlertRulesError as exc:
            problem = "zhisuan.ops.report: %s" % exc
    if site is None and alerts is None and problem is None:
        return None
    return {"site": site, "alerts": alerts, "problem": problem, "source": ALERT_RULES_SOURCE}


def ops_sections(results, view, tr, fmt):
    """{job, quality, platform, shared_causes, repeat_offenders, appendix}: each None when the run has no such
    data."""
    return {"job": job_section(results, view, tr), "quality": quality_section(results, tr, fmt),
            "platform": platform_section(results, tr, fmt), "shared_causes": shared_section(view, tr),
            "repeat_offenders": repeat_section(results, view, tr), "appendix": appendix_section(results, tr)}
