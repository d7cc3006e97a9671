# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""The report's languages: standard gettext catalogs shipped in the collection (``data/locale/<lang>/LC_MESSAGES/
report.mo``, compiled from ``report.po``; Babel extracts the messages, see docs/report.md). English is the source
language and needs no catalog."""

from __future__ import annotations

import gettext
import os
import re

from ansible_collections.zhisuan.ops.plugins.plugin_utils._report_errors import ReportError

LOCALE_DIR = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "data",
                                           "locale"))
DOMAIN = "report"
LANGUAGES = ("en", "zh_CN")
_CACHE = {}


def translations(language="en"):
    """The gettext translations of ``language`` (``en``: the identity); ReportError for a language without a
    catalog."""
    language = language or "en"
    if language not in LANGUAGES:
        raise ReportError("zhisuan.ops.report: report_language %s is not supported; choose from %s"
                          % (language, ", ".join(LANGUAGES)))
    if language == "en":
        return gettext.NullTranslations()
    if language not in _CACHE:
        path = os.path.join(LOCALE_DIR, language, "LC_MESSAGES", DOMAIN + ".mo")
        try:
            with open(path, "rb") as handle:
                _CACHE[language] = gettext.GNUTranslations(handle)
        except (OSError, ValueError) as exc:
            raise ReportError("zhisuan.ops.report: cannot read the %s catalog %s: %s" % (language, path, exc))
    return _CACHE[language]


def N_(text):
    """Marks a text for extraction (Babel keyword N_); translated where it is shown."""
    return text


def NP_(dummy_context, text):
    """Marks a text with its context for extraction (Babel keyword NP_:1c,2); translated with pgettext."""
    return text


def NN_(one, many):
    """Marks a singular and plural pair for extraction (Babel keyword NN_:1,2); translated with ngettext."""
    return one, many


KIND_NAMES = {"delivery": N_("delivery"), "burnin": N_("burn-in"), "acceptance": N_("acceptance"),
              "diagnose": N_("diagnosis"), "remediate": N_("remediation"), "inspect": N_("inspection"),
              "site": N_("site delivery")}
STATUS_WORDS = {"pass": N_("PASS"), "warn": N_("WARN"), "fail": N_("FAIL"), "error": N_("ERROR"), "skip": N_("SKIP"),
                "unreachable": N_("UNREACHABLE"), "none": N_("NONE")}
GRADE_WORDS = {"pass": NP_("grade", "PASS"), "conditional": NP_("grade", "CONDITIONAL"), "fail": NP_("grade", "FAIL")}
VERDICT_TEXTS = (N_("ACCEPTED"), N_("NOT ACCEPTED"), N_("ACCEPTED WITH CONDITIONS"))
# The words of each run's verdict, by grade: an inspection, a diagnosis and a repair plan are not an acceptance (their
# reports carry no acceptance sign-off). The runs not named here (delivery, burn-in, acceptance) are accepted or not.
KIND_VERDICTS = {
    "inspect": {"pass": N_("INSPECTION PASSED"), "conditional": N_("INSPECTION PASSED WITH WARNINGS"),
                "fail": N_("INSPECTION FOUND PROBLEMS")},
    "diagnose": {"pass": N_("NO FAULT FOUND"), "conditional": N_("NO FAULT FOUND, WARNINGS TO REVIEW"),
                 "fail": N_("FAULTS FOUND")},
    "remediate": {"pass": N_("NOTHING LEFT TO REPAIR"), "conditional": N_("REPAIRS LEFT OPEN"),
                  "fail": N_("REPAIRS FAILED")},
}
# remediate.yml --check: the plan, nothing done
PLAN_VERDICT = N_("REPAIR PLAN")
ACCEPTANCE_WORDS = {"pass": "ACCEPTED", "conditional": "ACCEPTED WITH CONDITIONS", "fail": "NOT ACCEPTED"}
# The title of each run's report (the other runs: "GPU cluster <kind> report")
KIND_TITLES = {"inspect": N_("GPU cluster inspection report"), "diagnose": N_("GPU cluster diagnosis report"),
               "remediate": N_("GPU cluster remediation report"),
               "site": N_("GPU cluster delivery acceptance report")}
PLAN_TITLE = N_("GPU cluster repair plan")


def is_acceptance(kind):
    """Whether a run of ``kind`` ends in an acceptance verdict with a sign-off (delivery, burn-in, acceptance, and
    the site record of site.yml)."""
    return kind not in KIND_VERDICTS


def verdict_text(kind, grade, plan=False):
    """The English verdict words of a run of ``kind`` at ``grade`` (pass, conditional, fail); ``plan``: a
    remediate --check run (the plan only)."""
    if kind == "remediate" and plan:
        return PLAN_VERDICT
    return (KIND_VERDICTS.get(kind) or ACCEPTANCE_WORDS)[grade]


# The family names are the family codes in English (as the check ids spell them); other languages name them.
# Written here, not taken from the family table, because Babel's extraction finds only literal N_() calls and skips
# the _family folder; tests/unit/test_family_table.py holds them to the table's labels.
FAMILY_NAMES = {"bmc": N_("bmc"), "baseline": N_("baseline"), "tuning": N_("tuning"), "gpu": N_("gpu"), "xid": N_("xid"),
                "dcgm": N_("dcgm"), "burn": N_("burn"), "cabling": N_("cabling"), "nic": N_("nic"), "rdma": N_("rdma"),
                "nccl": N_("nccl"), "storage": N_("storage"), "host": N_("host"), "run": N_("run"), "verify": N_("verify"),
                "drive": N_("drive")}
REMEDY_NAMES = {"none": N_("no action"), "monitor": N_("monitor"), "restart_app": N_("restart the application"),
                "reset_gpu": N_("reset the GPU"), "reboot": N_("reboot the node"), "power_cycle": N_("power-cycle the node"),
                "drain": N_("drain the node"), "reseat": N_("reseat the part"), "check_cable": N_("check the cable"),
                "clean_optic": N_("clean the optic"), "replace_part": N_("replace the part"), "rma": N_("return for repair (RMA)"),
                "update_firmware": N_("update the firmware"), "tune": N_("tune"), "investigate": N_("investigate")}
# The families whose check messages are translated by check id (the rest stay in English, with their check id).
TRANSLATED_FAMILIES = ("gpu", "xid", "nic", "rdma", "nccl", "bmc", "drive")
CHECK_TEMPLATES = {"pass": N_("{component}: {subject} OK (observed {observed}, expected {expected})"),
                   "warn": N_("{component}: {subject} needs attention (observed {observed}, expected {expected})"),
                   "fail": N_("{component}: {subject} failed (observed {observed}, expected {expected})"),
                   "error": N_("{component}: {subject} could not be checked: {message}"),
                   "skip": N_("{component}: {subject} does not apply here")}
# The subject of each translated check id, looked up as check:<id>, check:<family>.<subject> (ids with a variable
# part: rdma.pair.<a>.<b>) or check:<family>.<last word> (xid.<code>.events, nccl.<scope>.busbw).
CHECK_SUBJECTS = (
    N_("check:bmc.drive.count"), N_("check:bmc.fan.health"), N_("check:bmc.gpu.count"),
    N_("check:bmc.gpu.model"), N_("check:bmc.health.system"), N_("check:bmc.memory.count"),
    N_("check:bmc.memory.size"), N_("check:bmc.nic.count"), N_("check:bmc.power.state"), N_("check:bmc.psu.count"),
    N_("check:bmc.psu.health"), N_("check:bmc.readout"), N_("check:bmc.sel.critical"), N_("check:bmc.sensor"),
    N_("check:drive.available_spare"), N_("check:drive.critical_warning"), N_("check:drive.media_errors"),
    N_("check:drive.percentage_used"), N_("check:drive.readout"), N_("check:drive.temperature"),
    N_("check:drive.devices.present"),
    N_("check:gpu.collect"), N_("check:gpu.count.present"), N_("check:gpu.count.visible"),
    N_("check:gpu.cuda.version"), N_("check:gpu.driver.version"), N_("check:gpu.ecc.aggregate_uncorrectable"),
    N_("check:gpu.ecc.mode"), N_("check:gpu.ecc.volatile_uncorrectable"), N_("check:gpu.fabric.state"),
    N_("check:gpu.facts.readable"), N_("check:gpu.memory.total"), N_("check:gpu.mig.mode"),
    N_("check:gpu.model.name"),
    N_("check:gpu.nvlink.capabilities"), N_("check:gpu.nvlink.count"), N_("check:gpu.nvlink.links"),
    N_("check:gpu.nvlink.remote"), N_("check:gpu.nvlink.speed"), N_("check:gpu.nvlink.traffic"),
    N_("check:gpu.pcie.generation"), N_("check:gpu.pcie.width"), N_("check:gpu.power.draw"),
    N_("check:gpu.power.limit"), N_("check:gpu.readout.unreadable"), N_("check:gpu.remap.failure"),
    N_("check:gpu.remap.pending"), N_("check:gpu.remap.uncorrectable"), N_("check:gpu.retired_pages.count"),
    N_("check:gpu.retired_pages.pending"), N_("check:gpu.temperature.gpu"), N_("check:gpu.temperature.peers"),
    N_("check:gpu.throttle.hw_power_brake_slowdown"), N_("check:gpu.throttle.hw_slowdown"),
    N_("check:gpu.throttle.hw_thermal_slowdown"), N_("check:gpu.throttle.rate"),
    N_("check:gpu.throttle.sw_thermal_slowdown"),
    N_("check:nccl.bisect.suspect"), N_("check:nccl.collect.nccl_tests"), N_("check:nccl.facts.readable"),
    N_("check:nccl.busbw"), N_("check:nccl.coverage"), N_("check:nccl.wrong"), N_("check:nic.collect.facts"),
    N_("check:nic.counters.discards"), N_("check:nic.counters.errors"), N_("check:nic.counters.pause"),
    N_("check:nic.link.flaps"), N_("check:nic.link.speed"), N_("check:nic.link.state"),
    N_("check:nic.mtu.consistency"), N_("check:nic.mtu.value"), N_("check:nic.numa.alignment"),
    N_("check:nic.optic.alarm"), N_("check:nic.optic.readings"), N_("check:nic.optic.rx_power"),
    N_("check:nic.pfc.consistency"), N_("check:nic.trust.consistency"), N_("check:rdma.bandwidth.pairs"),
    N_("check:rdma.device.count"), N_("check:rdma.device.present"), N_("check:rdma.device.readable"),
    N_("check:rdma.firmware.version"), N_("check:rdma.node.bandwidth"), N_("check:rdma.pair"),
    N_("check:rdma.pair.error"), N_("check:rdma.pair.timeout"), N_("check:rdma.pairs.summary"),
    N_("check:rdma.port.errors"), N_("check:rdma.port.link_layer"), N_("check:rdma.port.rate"),
    N_("check:rdma.port.state"),
    N_("check:rdma.rate.consistency"), N_("check:xid.events"), N_("check:xid.facts.readable"),
    N_("check:xid.log.readable")
)
# Why a check did not apply, by check id (the reason its judge gives for status skip; one reason per id), looked up
# as skip-reason:<id>. A skipped check without one is shown as its subject "does not apply".
SKIP_REASONS = (
    N_("skip-reason:burn.mig.untested"), N_("skip-reason:dcgm.diag.tests"),
    N_("skip-reason:dcgm.eud.result"), N_("skip-reason:gpu.cuda.version"), N_("skip-reason:gpu.fabric.state"),
    N_("skip-reason:gpu.remap.failure"), N_("skip-reason:gpu.remap.pending"), N_("skip-reason:gpu.remap.uncorrectable"),
    N_("skip-reason:gpu.retired_pages.count"), N_("skip-reason:gpu.retired_pages.pending"),
    N_("skip-reason:gpu.nvlink.count"), N_("skip-reason:rdma.port.link_layer"), N_("skip-reason:rdma.port.rate"),
)
COUNT_WORDS = {"host": NN_("%d host", "%d hosts"), "check": NN_("%d check", "%d checks"),
               "node": NN_("%d node", "%d nodes"), "run": NN_("%d run", "%d runs"),
               "pair": NN_("%d pair", "%d pairs"), "link": NN_("%d link", "%d links"),
               "warning": NN_("%d warning", "%d warnings"), "measurement": NN_("%d measurement", "%d measurements"),
               "cluster check": NN_("%d cluster check", "%d cluster checks"),
               "passed or skipped check": NN_("%d passed or skipped check", "%d passed or skipped checks")}


def plural_text(tr, count, word):
    """``3 hosts`` in the report's language (English plural rule for words without a catalog entry)."""
    one, many = COUNT_WORDS.get(word, ("%d " + word, "%d " + word + "s"))
    return tr.ngettext(one, many, count) % count


# Checks of the fleet and remediation families whose messages are translated by id from the record's fields.
FLEET_RE = re.compile(r"^\S+ .+?: (?P<failing>\d+) of its (?P<members>\d+) nodes fail (?P<check>\S+) \((?P<share>[^)]*)\), "
                      r"the rest of the fleet (?P<rest>[^:]*): ")
SPECIAL_TEMPLATES = {
    "fleet.shared": N_("{component}: {failing} of its {members} nodes fail {check} ({share}), the rest of the fleet "
                       "{rest}: one shared cause; check the component, not each node"),
    "fleet.shared.components.localised": N_("no rack, power feed or switch has more failing nodes than the rest of the "
                                            "fleet"),
    "remediate.repeat": N_("{component}: repeat offender, tried {observed}; escalated to {remedy}"),
    # the asset list's check (plugin_utils/_assets.py): the shared serials and their nodes are data (the evidence)
    "assets.serial.duplicate.fail": N_("{shared} serial numbers are reported by more than one node: {evidence}; have "
                                       "the vendor program each node's own serial before the asset list is handed over"),
    "assets.serial.duplicate.pass": N_("{count} serial numbers read on {nodes} nodes, none on more than one node"),
}
ASSETS_PASS_RE = re.compile(r"^(?P<count>\d+) serial numbers on (?P<nodes>\d+) nodes$")
ASSETS_FAIL_RE = re.compile(r"^(?P<shared>\d+) shared$")


def _special_message(tr, check):
    """The translated message of a ``fleet.shared.<kind>.<name>``, ``fleet.shared.components.localised`` (pass),
    ``remediate.repeat.<node>`` or ``assets.serial.duplicate`` (pass, fail) check; None when the record does not have
    the producers' shape."""
    check_id = check["id"]
    if check_id == "assets.serial.duplicate" and check["status"] in ("pass", "fail"):
        template = SPECIAL_TEMPLATES["assets.serial.duplicate." + check["status"]]
        if check["status"] == "pass":
            match = ASSETS_PASS_RE.match(str(check.get("evidence") or ""))
            return tr.gettext(template).format(**match.groupdict()) if match else None
        match = ASSETS_FAIL_RE.match(str(check.get("observed_text") or check.get("observed") or ""))
        return tr.gettext(template).format(shared=match.group("shared"), evidence=check.get("evidence") or "") \
            if match else None
    if check_id == "fleet.shared.components.localised":
        template = SPECIAL_TEMPLATES[check_id]
        return tr.gettext(template) if check["status"] == "pass" else None
    if check_id.startswith("fleet.shared.") and check["status"] == "fail":
        match = FLEET_RE.match(check["message"])
        if not match:
            return None
        template = SPECIAL_TEMPLATES["fleet.shared"]
        return tr.gettext(template).format(component=check["component"], **match.groupdict())
    if check_id.startswith("remediate.repeat.") and check["status"] == "warn":
        remedy = check.get("remedy") or "none"
        template = SPECIAL_TEMPLATES["remediate.repeat"]
        return tr.gettext(template).format(
            component=check["component"], observed=check["observed_text"],
            remedy=tr.gettext(REMEDY_NAMES[remedy]) if remedy in REMEDY_NAMES else remedy)
    return None


def check_message(tr, check):
    """The check's message in the report's language: a template per check id (its subject, ``check:<id>`` in the
    catalog, or ``check:<family>.<subject>`` for ids with a variable tail) filled from the record's fields; None when
    the family is not translated or the catalog has no subject for the id (the English message stays)."""
    if check["family"] in ("fleet", "remediate", "assets"):
        try:
            special = _special_message(tr, check)
        except (KeyError, IndexError, ValueError):
            special = None
        if special or check["id"].startswith("fleet.shared."):
            # a shared-cause message not in its producer's shape stays as it came (nothing to translate it from)
            return special
    subject = check_subject(tr, check["id"]) if check["family"] in TRANSLATED_FAMILIES else None
    template = tr.gettext(CHECK_TEMPLATES.get(check["status"], CHECK_TEMPLATES["error"]))
    status = check["status"]
    if status == "skip":
        reason = skip_reason(tr, check["id"])
        if reason:
            return tr.gettext(N_("{component}: {subject} does not apply here ({reason})")).format(
                component=check["component"] or check["host"], subject=subject or check["id"], reason=reason)
    elif status == "error" and subject is None:
        # the tool's own words (an error message) are data: shown as they came, after the check id
        template = tr.gettext(N_("{component}: {subject} could not be checked (see the evidence)"))
    try:
        text = template.format(component=check["component"] or check["host"], subject=subject or check["id"],
                               observed=value_text(tr, check["observed_text"]),
                               expected=value_text(tr, check["expected_text"]), message=check["message"],
                               host=check["host"])
    except (KeyError, IndexError, ValueError):
        return None
    remedy = check.get("remedy") or "none"
    if status in ("fail", "warn", "error") and remedy in REMEDY_NAMES and remedy != "none":
        text = tr.gettext(N_("{message}; what to do: {remedy}")).format(message=text,
                                                                        remedy=tr.gettext(REMEDY_NAMES[remedy]))
    return text


def check_subject(tr, check_id):
    """The catalog's subject of ``check_id`` (``check:<id>``, ``check:<family>.<subject>`` or
    ``check:<family>.<last word>``), or None."""
    parts = check_id.split(".")
    lookup = tr.gettext  # a name Babel does not extract: the keys are the CHECK_SUBJECTS
    for key in (check_id, ".".join(parts[:2]), "%s.%s" % (parts[0], parts[-1])):
        found = lookup("check:" + key)
        if found != "check:" + key:
            return found
    return None


def skip_reason(tr, check_id):
    """Why a check does not apply, from the catalog (``skip-reason:<id>``), or None."""
    lookup = tr.gettext  # the keys are the SKIP_REASONS
    found = lookup("skip-reason:" + check_id)
    return None if found == "skip-reason:" + check_id else found


# Observed and expected texts the judges word in English ("no Xid 79"), translated by shape.
VALUE_TEXTS = ((re.compile(r"^no Xid (?P<code>\d+)$"), N_("no Xid {code}")),
               (re.compile(r"^(?P<n>\d+) pairs below floor$"), N_("{n} pairs below floor")))


def value_text(tr, text):
    for pattern, template in VALUE_TEXTS:
        match = pattern.match(text or "")
        if match:
            return tr.gettext(template).format(**match.groupdict())
    return text


def _detail(tr, view):
    """The verdict's one-line reason in the report's language, from the counts (as _report_view builds it)."""
    hosts, cluster = view["host_counts"], view["cluster_counts"]
    plan = view["verdict"].get("plan")
    if plan:
        return tr.gettext("check mode, nothing was changed: %(planned)s to repair, %(nothing)s with nothing to do") % {
            "planned": plural_text(tr, plan["planned"], "node"), "nothing": plural_text(tr, plan["nothing"], "node")}
    if view["verdict"]["accepted"]:
        total = len(view["hosts"])
        text = tr.gettext("all %s passed") % plural_text(tr, total, "host") if total != 1 else tr.gettext("the host passed")
        if view["verdict"]["warnings"]:
            text += tr.gettext("; %s to review") % plural_text(tr, view["verdict"]["warnings"], "warning")
    else:
        reasons = [] if view["hosts"] else [tr.gettext("no hosts in this run")]
        for status in ("fail", "error", "unreachable"):
            if hosts.get(status):
                reasons.append("%s %s" % (plural_text(tr, hosts[status], "host"), tr.gettext(STATUS_WORDS[status]).lower()))
        for status in ("fail", "error"):
            if cluster.get(status):
                reasons.append("%s %s" % (plural_text(tr, cluster[status], "cluster check"),
                                          tr.gettext(STATUS_WORDS[status]).lower()))
        text = tr.gettext(", ").join(reasons)
    if view.get("outliers") and view["verdict"]["grade"] == "conditional" and view["verdict"]["accepted"] \
            and not view["verdict"]["warnings"]:
        text += tr.gettext("; %s below the fleet") % plural_text(tr, len(view["outliers"]), "measurement")
    return text


OVERVIEW_WORDS = {"nodes": N_("%d nodes"), "more": N_("+ %d more not passing (see Open issues)"),
                  "summary": N_("%d nodes: %d in %d racks, %d without a rack"), "summary_racks": N_("%d nodes in %d racks"),
                  "summary_loose": N_("%d nodes (no rack given; in groups of 64 by name)"), "rack": N_("rack %s")}


def overview_words(language="en"):
    """The status overview's fixed texts in ``language`` (see _svg_overview.WORDS)."""
    if language == "en":
        return {}
    tr = translations(language)
    words = dict((key, tr.gettext(text)) for key, text in OVERVIEW_WORDS.items())
    words.update((status, tr.gettext(word)) for status, word in STATUS_WORDS.items())
    return words


def localise(view, language="en"):
    """Add the texts the templates show in ``language`` to the view (``title``, ``lang``, ``status_words``,
    ``family_names``, ``remedy_names``, the verdict's ``display_text``/``display_detail``/``grade_text`` and each
    translated check's ``message_l10n``). The English fields stay as they are for JSON, JUnit and the action."""
    tr = translations(language)
    text_of = tr.gettext
    run = view["run"]
    kind = text_of(KIND_NAMES.get(run["kind"], run["kind"])) if run["kind"] else run["kind"]
    if run["kind"] == "remediate" and view["verdict"].get("plan"):
        title = text_of(PLAN_TITLE)
    elif run["kind"] in KIND_TITLES:
        title = text_of(KIND_TITLES[run["kind"]])
    else:
        title = text_of(N_("GPU cluster %(kind)s report")) % {"kind": kind}
    # an inspection, a diagnosis or a repair plan: a result, not an acceptance verdict, and no sign-off block
    view["acceptance"] = is_acceptance(run["kind"])
    view["verdict"]["heading"] = (text_of(N_("Verdict: %(text)s")) if view["acceptance"]
                                  else text_of(N_("Result: %(text)s"))) % {"text": text_of(view["verdict"]["text"])}
    view["title"] = "%s: %s" % (title, run["site"]) if run.get("site") else title
    view["lang"] = "zh-CN" if language == "zh_CN" else "en"
    view["language"] = language
    view["status_words"] = dict((status, text_of(word)) for status, word in STATUS_WORDS.items())
    view["family_names"] = dict((family, text_of(FAMILY_NAMES.get(family, family))) for family in view["families"])
    view["remedy_names"] = dict((remedy, text_of(name)) for remedy, name in REMEDY_NAMES.items()) if language != "en" else {}
    verdict = view["verdict"]
    verdict["grade_text"] = tr.pgettext("grade", GRADE_WORDS.get(verdict["grade"], verdict["grade"].upper()))
    verdict["display_text"] = text_of(verdict["text"])
    verdict["display_detail"] = verdict["detail"] if language == "en" else _detail(tr, view)
    if language != "en":
        for group in view.get("skips") or []:
            group["message_l10n"] = _skip_group_text(tr, group)
        for host in view["hosts"]:
            for check in host["checks"]:
                text = check_message(tr, check)
                if text:
                    check["message_l10n"] = text
            for group in host["skip_groups"]:
                group["message_l10n"] = _skip_group_text(tr, group)
            host["facts"] = [_fact_text(tr, host, label, value) for label, value in host["facts"]]
        for check in view["cluster"]:
            text = check_message(tr, check)
            if text:
                check["message_l10n"] = text
        _localise_changes(tr, view)
    return view


def _skip_group_text(tr, group):
    """A group of skipped checks in the report's language: its reason from the catalog, else its subject."""
    reason = skip_reason(tr, group["id"])
    subject = check_subject(tr, group["id"]) or group["id"]
    if reason:
        return tr.gettext(N_("{subject}: {reason}")).format(subject=subject, reason=reason)
    return tr.gettext(N_("{subject} does not apply to what was tested")).format(subject=subject)


def _fact_text(tr, host, label, value):
    """A host fact in the report's language: the root cause as its check's translated message."""
    if label == "Root cause":
        cause_id = value.split(" ", 1)[0]
        found = next((c for c in host["checks"] if c["id"] == cause_id and c.get("message_l10n")), None)
        if found:
            return label, "%s: %s" % (cause_id, found["message_l10n"])
    return label, value


def _localise_changes(tr, view):
    """The changes since the previous run in the report's language: a check still in this run as its translated
    message; a fixed or unchecked one (its record is the previous run's) as its subject."""
    changes = view.get("changes")
    if not changes:
        return
    current = {}
    for host in view["hosts"]:
        for check in host["checks"]:
            current.setdefault((host["name"], check["id"]), check.get("message_l10n"))
    for check in view["cluster"]:
        current.setdefault(("cluster", check["id"]), check.get("message_l10n"))
    for word in ("new", "persisting", "fixed", "unchecked"):
        for item in changes.get(word) or []:
            text = current.get((item["host"], item["id"])) if word in ("new", "persisting") else None
            if not text and item["id"] == "host.reachable":
                text = tr.gettext(N_("the host could not be reached"))
            item["message_l10n"] = text or check_subject(tr, item["id"]) or item["id"]
