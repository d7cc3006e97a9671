# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""The outcome of one node's remediation graded into its checks (issue 29 item 3: here, not in the remediate_node
role's Jinja).

Pure functions, no I/O. The ``remediate`` facts (roles/remediate_node) are::

    {"action": <reset_gpu | reboot | power_cycle | ticket | ...>, "outcome": <repaired | resumed | ticket | failed |
     refused | skipped>, "message": <what happened, in words>, "remedy": <the plan entry's remedy>,
     "why": <the plan entry's why: cause, checks, component>, "stranded": <the stranded-node record or null>,
     "history_errors": [<history writes that failed>], "history_file": <the remediation log's path>}

``remediate.<action>.result``  pass when the node was repaired (or a stranded node resumed); fail for a ticket (remedy
                               the entry's: a person acts) and for a failed repair or verification (``rma``); warn
                               when the guard refused (``drain``) or the node was skipped (``investigate``).
                               An outcome the role never sets is an error (``investigate``) naming it.
``remediate.history.write``    error when a history record could not be appended (escalation and the KPIs will not
                               count this remediation); only then.
"""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import REMEDIES, make_check

# outcome -> (status, remedy); a ticket's remedy is the plan entry's own
GRADES = {
    "repaired": ("pass", "none"),
    "resumed": ("pass", "none"),
    "ticket": ("fail", None),
    "failed": ("fail", "rma"),
    "refused": ("warn", "drain"),
    "skipped": ("warn", "investigate"),
}


def grade(outcome, remedy=None):
    """``(status, remedy)`` of an outcome; ``(error, investigate)`` for an outcome the role never sets (a bug to
    look into, said in the check's message)."""
    if not isinstance(outcome, str) or outcome not in GRADES:
        return "error", "investigate"
    status, graded = GRADES[outcome]
    return status, graded if graded is not None else _remedy(remedy)


def _remedy(remedy):
    """The plan entry's remedy, or ``investigate`` when it names none the record knows."""
    return remedy if isinstance(remedy, str) and remedy in REMEDIES else "investigate"


def judge_remediate(host, facts):
    """The node's ``remediate.<action>.result`` check, and ``remediate.history.write`` when a write failed."""
    facts = facts or {}
    why = facts.get("why") or {}
    stranded = facts.get("stranded")
    status, remedy = grade(facts.get("outcome"), facts.get("remedy"))
    if stranded:
        evidence = "drain reason: %s" % stranded.get("reason")
    else:
        evidence = "cause %s; failing checks %s" % (why.get("cause"), ", ".join(str(c) for c in why.get("checks") or []))
    message = str(facts.get("message") or "") or "%s: %s" % (facts.get("action"), facts.get("outcome"))
    if facts.get("outcome") not in GRADES:
        known = ", ".join(sorted(GRADES))
        message = "remediation outcome %r is none of %s; %s" % (facts.get("outcome"), known, message)
    checks = [make_check("remediate.%s.result" % facts.get("action"), host, status, component=why.get("component") or "node",
                         observed=facts.get("outcome"), expected="repaired", message=message,
                         remedy=remedy, evidence=evidence)]
    errors = [str(error) for error in facts.get("history_errors") or []]
    if errors:
        checks.append(make_check(
            "remediate.history.write", host, "error", component=str(facts.get("history_file")),
            observed="%d write(s) failed" % len(errors), expected="every record appended",
            message="the history lacks this node's remediation (escalation and the KPIs will not count it): %s"
                    % "; ".join(errors),
            remedy="investigate", evidence="\n".join(errors)))
    return checks


def summarize_remediate(facts):
    """The graded outcome: ``{outcome, status, remedy}``."""
    facts = facts or {}
    status, remedy = grade(facts.get("outcome"), facts.get("remedy"))
    return {"outcome": facts.get("outcome"), "status": status, "remedy": remedy}


# ---------------------------------------------------------------------------------------------------------------
# a node the run did not act on: the plan's word for it (playbooks/remediate.yml), ``remediate_plan`` facts:
#   {"entry": <the plan's entry for the node, or null>, "skipped": <whether the plan skipped the node>,
#    "skip_reason": <why, or null>, "check_mode": <remediate.yml --check>, "history_error": <a failed write, or null>}
# the outcomes whose remedy is to look (nothing the plan can do by itself), and the one that waits
LOOK_OUTCOMES = ("held", "skipped", "shared_cause")
NOTHING = "no finding that remediation acts on"


def plan_outcome(facts):
    """``{in_plan, outcome, message, remedy}`` of a node the run did not act on."""
    facts = facts or {}
    entry = facts.get("entry") or None
    skipped = bool(facts.get("skipped"))
    planned = bool(facts.get("check_mode")) and entry is not None and entry.get("status") != "shared_cause"
    if entry is None:
        outcome = "skipped" if skipped else "none"
        message = facts.get("skip_reason") if skipped and facts.get("skip_reason") is not None else NOTHING
    elif planned:
        outcome = "planned"
        message = "check mode: %s would run (%s, batch %s)" % (entry.get("action"), entry.get("mode"), entry.get("batch"))
    else:
        outcome = entry.get("status")
        message = entry.get("message")
    in_plan = entry is not None or skipped
    if not in_plan:
        remedy = "none"
    elif entry is None or outcome in LOOK_OUTCOMES:
        remedy = "investigate"
    elif outcome == "deferred":
        remedy = "monitor"
    else:
        remedy = _remedy(entry.get("remedy"))
    message = str(message if message is not None else "").strip() or "remediation plan: %s" % outcome
    return {"in_plan": in_plan, "outcome": outcome, "message": message, "remedy": remedy}


def judge_plan(host, facts):
    """The node's ``remediate.plan.status`` check, and ``remediate.history.write`` when its record was not kept."""
    facts = facts or {}
    entry = facts.get("entry") or None
    word = plan_outcome(facts)
    why = (entry or {}).get("why") or {}
    evidence = ("cause %s; failing checks %s" % (why.get("cause"), ", ".join(str(c) for c in why.get("checks") or []))
                if entry is not None else "")
    checks = [make_check(
        "remediate.plan.status", host, "warn" if word["in_plan"] else "pass",
        component=(why.get("component") if entry is not None else "node") or "node",
        observed=word["outcome"] if word["in_plan"] else "nothing to do",
        expected="repaired" if word["in_plan"] else "nothing to do", message=word["message"], remedy=word["remedy"],
        evidence=evidence)]
    error = facts.get("history_error")
    if error is not None and error is not False:
        text = str(error) if error is not True else "failed"
        checks.append(make_check(
            "remediate.history.write", host, "error", component="remediation.jsonl", observed="write failed",
            expected="every record appended", message="the history lacks this node: %s" % text,
            remedy="investigate", evidence="" if error is True else text))
    return checks
