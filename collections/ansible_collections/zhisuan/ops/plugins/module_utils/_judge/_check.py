# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""The check record shared by every stage (see docs/results.md)."""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._util import ThresholdError

STATUSES = ("pass", "warn", "fail", "error", "skip")
# A host's status is its worst check: fail > error > warn > pass (skip counts as pass).
SEVERITY = {"skip": 0, "pass": 1, "warn": 2, "error": 3, "fail": 4}
REMEDIES = (
    "none", "monitor", "restart_app", "reset_gpu", "reboot", "power_cycle", "drain", "reseat",
    "check_cable", "clean_optic", "replace_part", "rma", "update_firmware", "tune", "investigate",
)


def make_check(check_id, host, status, component="", observed=None, expected=None, message="",
               remedy=None, evidence=""):
    """Build one check record. ``remedy`` defaults to ``none`` for pass/skip and ``investigate`` otherwise."""
    if status not in STATUSES:
        raise ValueError("unknown check status %r for %s" % (status, check_id))
    if remedy is None:
        remedy = "none" if status in ("pass", "skip") else "investigate"
    if remedy not in REMEDIES:
        raise ValueError("unknown remedy %r for %s" % (remedy, check_id))
    if len(check_id.split(".")) < 3:
        raise ValueError("check id %r must be <family>.<subject>.<metric>" % check_id)
    return {
        "id": check_id,
        "host": host,
        "component": component,
        "status": status,
        "observed": observed,
        "expected": expected,
        "message": message,
        "remedy": remedy,
        "evidence": evidence,
    }


def worst_status(statuses, default="pass"):
    """Worst of check statuses (fail > error > warn > pass/skip)."""
    worst = None
    for status in statuses:
        if worst is None or SEVERITY[status] > SEVERITY[worst]:
            worst = status
    if worst is None or worst == "skip":
        return default
    return worst


# What reading facts of an unexpected shape raises inside a judge (a string where a number should be, a list where a
# mapping should be). Thresholds and inventory values are checked before, so a ValueError here is the facts'.
FACT_ERRORS = (TypeError, AttributeError, KeyError, IndexError, ValueError, OverflowError, RecursionError,
               ZeroDivisionError)


def guarded(check_id, host, component, what, judge, *args, **kwargs):
    """Run ``judge`` and turn an error from reading odd facts into one ``error`` check (``facts_error``).

    A configuration error (``ThresholdError``: a threshold or profile figure that is not a number) is raised as it is.
    """
    try:
        return judge(*args, **kwargs)
    except ThresholdError:
        raise
    except FACT_ERRORS as exc:  # facts of an unexpected shape: said in a check, never a crash
        return [facts_error(check_id, host, component, what, exc)]


def facts_error(check_id, host, component, what, exc):
    """The one check a judge returns when the facts cannot be read at all: an ``error``, never a pass."""
    detail = "%s: %s" % (type(exc).__name__, exc)
    return make_check(
        check_id, host, "error", component=component, observed="unreadable", expected="%s facts" % what,
        message="The %s facts of this host are unreadable (a value of an unexpected type or shape: %s), so they were "
                "not judged; collect them again and report the raw output if it repeats" % (what, detail[:200]),
        remedy="investigate", evidence=detail[:500])
