# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One node's remediation outcome graded in Python (issue 29 item 3; module_utils/_judge/remediate.py), as the
remediate_node role calls it through zhisuan.ops.judge family=remediate."""

from __future__ import annotations

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._judge.remediate import GRADES, judge_remediate
from ansible_collections.zhisuan.ops.plugins.plugin_utils._judging import judge_family

WHY = {"cause": "gpu.ecc", "checks": ["gpu.ecc.volatile_uncorrectable", "xid.48.events"],
       "component": "GPU 3 (GPU-5c1e, 0000:4E:00.0)"}


def _facts(outcome, action="reset_gpu", stranded=None, errors=(), remedy="reset_gpu", why=WHY):
    return {"action": action, "outcome": outcome, "message": "reset_gpu fixed gpu.ecc", "remedy": remedy, "why": why,
            "stranded": stranded, "history_errors": list(errors), "history_file": "/srv/h/remediation.jsonl"}


@pytest.mark.parametrize("outcome, status, remedy", [
    ("repaired", "pass", "none"), ("resumed", "pass", "none"), ("ticket", "fail", "replace_part"),
    ("failed", "fail", "rma"), ("refused", "warn", "drain"), ("skipped", "warn", "investigate"),
])
def test_each_outcome_has_its_status_and_remedy(outcome, status, remedy):
    checks = judge_remediate("node07", _facts(outcome, remedy="replace_part"))
    assert len(checks) == 1
    check = checks[0]
    assert (check["id"], check["status"], check["remedy"]) == ("remediate.reset_gpu.result", status, remedy)
    assert check["observed"] == outcome and check["expected"] == "repaired"
    assert check["component"] == WHY["component"] and check["message"] == "reset_gpu fixed gpu.ecc"
    assert check["evidence"] == "cause gpu.ecc; failing checks gpu.ecc.volatile_uncorrectable, xid.48.events"


def test_a_stranded_node_names_its_drain_reason_and_a_part_less_cause_the_node():
    check = judge_remediate("node07", _facts("resumed", stranded={"reason": "zhisuan:gpu.ecc run r1", "run_id": "r1"},
                                             why={"cause": "gpu.ecc", "checks": [], "component": ""}))[0]
    assert check["evidence"] == "drain reason: zhisuan:gpu.ecc run r1" and check["component"] == "node"


def test_a_history_write_that_failed_is_its_own_error_check():
    checks = judge_remediate("node07", _facts("repaired", errors=["No space left on device", "Read-only file system"]))
    assert [c["id"] for c in checks] == ["remediate.reset_gpu.result", "remediate.history.write"]
    write = checks[1]
    assert write["status"] == "error" and write["remedy"] == "investigate"
    assert write["component"] == "/srv/h/remediation.jsonl" and write["observed"] == "2 write(s) failed"
    assert write["message"].endswith("will not count it): No space left on device; Read-only file system")
    assert write["evidence"] == "No space left on device\nRead-only file system"


def test_through_the_judge_and_an_outcome_the_role_never_sets():
    checks, summary, unreachable = judge_family("remediate", "node07", {"remediate": _facts("failed")})
    assert summary == {"outcome": "failed", "status": "fail", "remedy": "rma"} and not unreachable
    assert checks == judge_remediate("node07", _facts("failed"))
    assert sorted(GRADES) == ["failed", "refused", "repaired", "resumed", "skipped", "ticket"]
    stuck = judge_family("remediate", "node07", {"remediate": _facts("stuck")})[0][0]
    assert (stuck["status"], stuck["remedy"]) == ("error", "investigate")
    assert stuck["message"].startswith("remediation outcome 'stuck' is none of failed, refused")


# a node the run did not act on: the plan's word (playbooks/remediate.yml, family remediate_plan)
ENTRY = {"status": "deferred", "action": "reset_gpu", "mode": "automatic", "batch": 2, "message": "deferred: batch 2",
         "remedy": "reset_gpu", "why": WHY}


def _plan(entry=None, skipped=False, reason=None, check_mode=False, error=None):
    facts = {"entry": entry, "skipped": skipped, "skip_reason": reason, "check_mode": check_mode}
    if error is not None:
        facts["history_error"] = error
    return facts


def _plan_check(facts):
    checks = judge_remediate_plan(facts)
    assert checks[0]["id"] == "remediate.plan.status"
    return checks


def judge_remediate_plan(facts):
    return judge_family("remediate_plan", "node07", {"remediate_plan": facts})[0]


@pytest.mark.parametrize("status, remedy", [
    ("deferred", "monitor"), ("held", "investigate"), ("skipped", "investigate"), ("shared_cause", "investigate"),
    ("awaiting_approval", "reset_gpu"),
])
def test_the_plan_s_word_for_a_node_it_names(status, remedy):
    check = _plan_check(_plan(dict(ENTRY, status=status, message=" %s by the plan " % status)))[0]
    assert (check["status"], check["observed"], check["remedy"]) == ("warn", status, remedy)
    assert check["message"] == "%s by the plan" % status and check["component"] == WHY["component"]
    assert check["evidence"] == "cause gpu.ecc; failing checks gpu.ecc.volatile_uncorrectable, xid.48.events"


def test_check_mode_plans_and_a_node_outside_the_plan_has_nothing_to_do():
    check = _plan_check(_plan(ENTRY, check_mode=True))[0]
    assert (check["observed"], check["message"]) == ("planned", "check mode: reset_gpu would run (automatic, batch 2)")
    # a shared cause is no action even in check mode
    shared = _plan_check(_plan(dict(ENTRY, status="shared_cause", message="leaf L3"), check_mode=True))[0]
    assert shared["observed"] == "shared_cause" and shared["remedy"] == "investigate"
    skipped = _plan_check(_plan(skipped=True, reason="no BMC address"))[0]
    assert (skipped["status"], skipped["observed"], skipped["message"], skipped["remedy"]) == (
        "warn", "skipped", "no BMC address", "investigate")
    assert skipped["component"] == "node" and skipped["evidence"] == ""
    none = _plan_check(_plan())
    assert len(none) == 1 and (none[0]["status"], none[0]["observed"], none[0]["expected"], none[0]["remedy"]) == (
        "pass", "nothing to do", "nothing to do", "none")
    assert none[0]["message"] == "no finding that remediation acts on"


def test_a_plan_record_the_history_did_not_keep():
    checks = _plan_check(_plan(ENTRY, error="[Errno 28] No space left on device"))
    assert [c["id"] for c in checks] == ["remediate.plan.status", "remediate.history.write"]
    assert checks[1]["message"] == "the history lacks this node: [Errno 28] No space left on device"
    assert checks[1]["evidence"] == "[Errno 28] No space left on device" and checks[1]["status"] == "error"
    bare = _plan_check(_plan(ENTRY, error=True))[1]
    assert bare["message"] == "the history lacks this node: failed" and bare["evidence"] == ""
