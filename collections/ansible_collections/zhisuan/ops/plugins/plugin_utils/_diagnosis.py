# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""Per-node root cause and remedy from a node's check records (pure).

The most decisive finding wins: a status order (fail before error before warn), then the remedy order below — the
remedy that settles most (an RMA settles a GPU whatever else is wrong; a BMC power cycle comes before a reseat, which
comes before a GPU reset, because each later step is useless while the earlier cause stands).
"""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import SEVERITY

REMEDY_ORDER = (
    "rma", "replace_part", "power_cycle", "reseat", "reset_gpu", "reboot", "update_firmware", "check_cable",
    "clean_optic", "drain", "tune", "investigate", "restart_app", "monitor", "none",
)
_RANK = dict((remedy, position) for position, remedy in enumerate(REMEDY_ORDER))


def _key(check):
    return (-SEVERITY[check["status"]], _RANK.get(check["remedy"], len(REMEDY_ORDER)), check["id"], check["component"])


def diagnose(checks):
    """``{status, root_cause: {id, component, message, remedy, evidence}, remedies: [...], findings: n}``.

    ``remedies`` lists every distinct remedy of the non-passing checks, in the order to apply them. A node with no
    finding gets ``status: healthy`` and no root cause.
    """
    findings = [check for check in checks if check["status"] in ("fail", "error", "warn")]
    if not findings:
        return {"status": "healthy", "root_cause": None, "remedies": [], "findings": 0}
    findings.sort(key=_key)
    top = findings[0]
    remedies = []
    for check in findings:
        if check["remedy"] not in remedies and check["remedy"] != "none":
            remedies.append(check["remedy"])
    remedies.sort(key=lambda remedy: _RANK.get(remedy, len(REMEDY_ORDER)))
    return {
        "status": top["status"],
        "root_cause": dict((key, top[key]) for key in ("id", "component", "message", "remedy", "evidence")),
        "remedies": remedies,
        "findings": len(findings),
    }
