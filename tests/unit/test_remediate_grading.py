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
    with pytest.raises(ValueError, match="remediation outcome 'stuck' is none of failed, refused"):
        judge_family("remediate", "node07", {"remediate": _facts("stuck")})
