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
``remediate.history.write``    error when a history record could not be appended (escalation and the KPIs will not
                               count this remediation); only then.
"""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check

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
    """``(status, remedy)`` of an outcome; ValueError for an outcome the role never sets."""
    if outcome not in GRADES:
        raise ValueError("remediation outcome %r is none of %s" % (outcome, ", ".join(sorted(GRADES))))
    status, graded = GRADES[outcome]
    return status, graded if graded is not None else (remedy or "investigate")


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
    checks = [make_check("remediate.%s.result" % facts.get("action"), host, status, component=why.get("component") or "node",
                         observed=facts.get("outcome"), expected="repaired", message=facts.get("message") or "",
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
