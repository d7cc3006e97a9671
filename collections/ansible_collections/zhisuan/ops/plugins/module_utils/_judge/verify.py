# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""The post-repair verification of a node (delivery guide 8.2): five steps, each one check ``verify.<step>.result``
built from the checks the verification's own roles made (issue 29 item 3: graded here, not in the verify_node
role's Jinja).

Pure functions, no I/O. The ``verify`` facts (roles/verify_node) are::

    {"checks": [<the check records check_gpu and check_burn made in this verification>],
     "recheck": [<check ids that failed before the repair, re-run here>],
     "power": {"read": <whether the BMC was read>, "result": <the registered redfish_power / ipmi_power result>},
     "reachable": <whether the node answered>}

``power``      passes when the node answers and, with a BMC, the BMC reports power ``On``; remedy ``power_cycle``.
``gpu``        the GPU count, model, collect and readout checks, and the checks that failed before the repair and
               were re-run here (but the memory and burn ones, which their own steps judge); remedy ``rma``.
``memory``     ECC, row remapping and retired pages; remedy ``rma``.
``stress``     gpu-burn's checks but the stability watch's; remedy ``rma``.
``stability``  the stability watch's checks; remedy ``rma``.

A step other than power passes when it has checks and none failed or errored; one without checks "did not run" and
fails. The node passes when all five pass.
"""

from __future__ import annotations

import re

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check

STEPS = ("power", "gpu", "memory", "stress", "stability")
# what each step is and what it expects (the check's component and expected value)
WHAT = {
    "power": ("power on and boot", "the BMC reports power On and the node answers"),
    "gpu": ("GPU count and model", "every GPU of the bill of materials is present, the right model"),
    "memory": ("memory and ECC", "no uncorrectable ECC error, no row-remap failure or pending retirement"),
    "stress": ("full-load stress", "gpu-burn finds no error and every GPU reaches its throughput floor"),
    "stability": ("stability watch", "no GPU lost, no new XID, no ECC growth, no throttling while under load"),
}
BAD = ("fail", "error")
_GPU = re.compile(r"gpu\.(count|model|collect|readout)\.")
_MEMORY = re.compile(r"gpu\.(ecc|remap|retired_pages)\.")
_OWN_STEP = re.compile(r"(gpu\.(ecc|remap|retired_pages)|burn)\.")
_BURN = re.compile(r"burn\.")
_STABILITY = re.compile(r"burn\.stability\.")


def power_state(result):
    """The power state a registered redfish_power / ipmi_power result read (its ``before.power_state``, else its
    ``power_state``), ``unknown`` when the read failed, was skipped or is not there."""
    if not isinstance(result, dict) or result.get("failed") or result.get("skipped") or result.get("unreachable"):
        return "unknown"
    before = result.get("before")
    if isinstance(before, dict) and before.get("power_state") is not None:
        return before["power_state"]
    state = result.get("power_state")
    return "unknown" if state is None else state


def _ids(checks, pattern):
    return [check for check in checks if pattern.match(str(check.get("id") or ""))]


def step_checks(checks, recheck=()):
    """{step: [the checks it is judged by]} for the steps other than power."""
    recheck = set(recheck or ())
    again = [check for check in checks if check.get("id") in recheck and not _OWN_STEP.match(str(check.get("id")))]
    return {
        "gpu": _ids(checks, _GPU) + again,
        "memory": _ids(checks, _MEMORY),
        "stress": [check for check in _ids(checks, _BURN) if not _STABILITY.match(str(check.get("id")))],
        "stability": _ids(checks, _STABILITY),
    }


def grade_steps(facts):
    """{step: {ok, observed, failing}} in STEPS order (the verify_node role's ``verify_node_steps``)."""
    facts = facts or {}
    checks = [check for check in facts.get("checks") or [] if isinstance(check, dict)]
    power = facts.get("power") or {}
    read = bool(power.get("read"))
    reachable = bool(facts.get("reachable"))
    state = power_state(power.get("result"))
    by_step = step_checks(checks, facts.get("recheck"))
    steps = {}
    for step in STEPS:
        if step == "power":
            ok = reachable and (not read or str(state).strip() == "On")
            observed = "power %s, %s" % (state if read else "not read (no BMC)",
                                         "reachable" if reachable else "unreachable")
            failing = []
        else:
            found = by_step[step]
            failing = []
            for check in found:
                if check.get("status") in BAD and check.get("id") not in failing:
                    failing.append(check.get("id"))
            ok = bool(found) and not failing
            if failing:
                observed = ", ".join(str(item) for item in failing)
            elif found:
                observed = "%d check(s) passed" % len(found)
            else:
                observed = "did not run"
        steps[step] = {"ok": ok, "observed": observed, "failing": failing}
    return steps


def judge_verify(host, facts):
    """The five ``verify.<step>.result`` checks of one node."""
    checks = []
    for step, graded in grade_steps(facts).items():
        what, expected = WHAT[step]
        ok = graded["ok"]
        checks.append(make_check(
            "verify.%s.result" % step, host, "pass" if ok else "fail", component=what, observed=graded["observed"],
            expected=expected,
            message=("post-repair %s: passed" % what) if ok
            else "post-repair %s failed (%s): the node stays drained" % (what, graded["observed"]),
            remedy="none" if ok else ("power_cycle" if step == "power" else "rma"),
            evidence=", ".join(str(item) for item in graded["failing"])))
    return checks


def summarize_verify(facts):
    """The node's verification facts: whether it passed, and each step's grade."""
    steps = grade_steps(facts)
    return {"passed": all(step["ok"] for step in steps.values()), "steps": steps}
