# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Escalation from the remediation history (pure): a node repaired again and again for the same cause gets the
next remedy up the policy's ladder (``reset_gpu`` → ``power_cycle`` → ``rma`` by default).

The rule (docs/remediation.md): count the node's history records for the cause within ``window_days`` whose action
was carried out (outcome ``repaired`` or ``failed``, or ``acted``: a run cut off after the action), per remedy.
The planned remedy is kept until it has been tried ``repeats`` times; each step above it gets one try: after it,
the cause coming back moves the node one step further.
"""

from __future__ import annotations

import datetime

from ansible_collections.zhisuan.ops.plugins.module_utils._safe_parse import iso_time

# Outcomes of an action that was carried out on the machine (a ticket, a deferral or a hold is not a repair);
# ``acted``: the run was cut off after the action, before its verification (history.read drops an ``acted`` record
# that the node's final record of the same run supersedes, so an action counts once)
TRIED = ("repaired", "failed", "acted")


def _time(value):
    return iso_time(value) if isinstance(value, str) else None


def tries(records, node, cause, window_days, now):
    """``{remedy: count}`` of the actions carried out on ``node`` for ``cause`` within the window before ``now``."""
    since = now - datetime.timedelta(days=window_days)
    counts = {}
    for record in records or []:
        if not isinstance(record, dict) or record.get("node") != node or record.get("cause") != cause:
            continue
        if record.get("outcome") not in TRIED:
            continue
        when = _time(record.get("finished")) or _time(record.get("time"))
        if when is None or when < since or when > now:
            continue
        remedy = record.get("remedy") or record.get("action")
        counts[remedy] = counts.get(remedy, 0) + 1
    return counts


def escalate(records, node, cause, remedy, policy, now):
    """``(remedy, escalation)``: the remedy to plan and, when it went up the ladder, ``{from, to, tries, reason}``
    (else None)."""
    rules = policy["escalation"]
    ladder = rules["ladder"]
    if remedy not in ladder:
        return remedy, None
    counts = tries(records, node, cause, rules["window_days"], now)
    start = position = ladder.index(remedy)
    while position < len(ladder) - 1:
        needed = rules["repeats"] if position == start else 1
        if counts.get(ladder[position], 0) < needed:
            break
        position += 1
    if position == start:
        return remedy, None
    done = ", ".join("%d x %s" % (counts[step], step) for step in ladder[start:position] if counts.get(step))
    reason = ("%s came back on %s after %s within %s days (escalation after %d tries of %s, one of each step above): "
              "next step up is %s" % (cause, node, done, _days(rules["window_days"]), rules["repeats"], remedy, ladder[position]))
    return ladder[position], {"from": remedy, "to": ladder[position], "tries": counts, "reason": reason}


def _days(value):
    return ("%d" % value) if float(value).is_integer() else ("%s" % value)


def repeat_offenders(records, rules, now):
    """The repeat offenders of the history as of ``now``: ``[{node, cause, tries, remedy, to, reason}]``, one per
    node and cause that ``escalate`` moves up the ladder of ``rules`` (the policy's ``escalation`` mapping) from the
    lowest step of the ladder carried out for that cause within the window; sorted by node and cause."""
    ladder = rules["ladder"]
    pairs = set()
    for record in records or []:
        if isinstance(record, dict) and record.get("outcome") in TRIED and \
                (record.get("remedy") or record.get("action")) in ladder and \
                isinstance(record.get("node"), str) and isinstance(record.get("cause"), str):
            pairs.add((record["node"], record["cause"]))
    out = []
    for node, cause in sorted(pairs):
        counts = tries(records, node, cause, rules["window_days"], now)
        steps = [step for step in ladder if counts.get(step)]
        if not steps:
            continue
        remedy, step = escalate(records, node, cause, steps[0], {"escalation": rules}, now)
        if step is not None:
            out.append({"node": node, "cause": cause, "tries": step["tries"], "remedy": steps[0], "to": remedy,
                        "reason": step["reason"]})
    return out
