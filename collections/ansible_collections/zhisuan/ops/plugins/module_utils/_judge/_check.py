# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""The check record shared by every stage (see docs/results.md)."""

from __future__ import annotations

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
