# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The post-repair verification's five steps graded in Python (issue 29 item 3; module_utils/_judge/verify.py), as
the verify_node role calls it through zhisuan.ops.judge family=verify."""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.module_utils._judge.verify import STEPS, judge_verify, power_state
from ansible_collections.zhisuan.ops.plugins.plugin_utils._judging import judge_family


def _check(check_id, status="pass"):
    return make_check(check_id, "node03", status, component="GPU 3", observed=0, expected="== 0", message="m")


HEALTHY = [_check(i) for i in ("gpu.count.present", "gpu.model.match", "gpu.ecc.volatile_uncorrectable",
                               "gpu.remap.pending", "gpu.pcie.width", "burn.gflops.median", "burn.errors.count",
                               "burn.stability.temperature", "burn.stability.gpu_count")]
POWER_ON = {"read": True, "result": {"changed": False, "before": {"power_state": "On"}, "power_state": "On"}}


def _facts(checks=HEALTHY, recheck=(), power=POWER_ON, reachable=True):
    return {"checks": list(checks), "recheck": list(recheck), "power": power, "reachable": reachable}


def _by_step(checks):
    return dict((c["id"].split(".")[1], c) for c in checks)


def test_a_repaired_node_passes_all_five_steps():
    checks = judge_verify("node03", _facts())
    assert [c["id"] for c in checks] == ["verify.%s.result" % step for step in STEPS]
    assert all(c["status"] == "pass" and c["remedy"] == "none" for c in checks)
    steps = _by_step(checks)
    assert steps["power"]["observed"] == "power On, reachable"
    assert steps["gpu"]["observed"] == "2 check(s) passed"  # count and model; the PCIe width was not failing before
    assert steps["memory"]["observed"] == "2 check(s) passed"
    assert steps["stress"]["observed"] == "2 check(s) passed" and steps["stability"]["observed"] == "2 check(s) passed"
    assert steps["memory"]["message"] == "post-repair memory and ECC: passed"
    summary = judge_family("verify", "node03", {"verify": _facts()})
    assert summary[1]["passed"] is True and summary[0] == checks


def test_each_step_fails_on_its_own_checks_with_its_remedy():
    checks = list(HEALTHY)
    checks[2] = _check("gpu.ecc.volatile_uncorrectable", "fail")
    checks[6] = _check("burn.errors.count", "error")
    steps = _by_step(judge_verify("node03", _facts(checks)))
    assert steps["memory"]["status"] == "fail" and steps["memory"]["remedy"] == "rma"
    assert steps["memory"]["observed"] == steps["memory"]["evidence"] == "gpu.ecc.volatile_uncorrectable"
    assert steps["memory"]["message"] == ("post-repair memory and ECC failed (gpu.ecc.volatile_uncorrectable): the node "
                                          "stays drained")
    assert steps["stress"]["status"] == "fail" and steps["stress"]["observed"] == "burn.errors.count"
    assert steps["gpu"]["status"] == steps["stability"]["status"] == steps["power"]["status"] == "pass"
    # a warning is no failure
    checks = list(HEALTHY)
    checks[7] = _check("burn.stability.temperature", "warn")
    assert _by_step(judge_verify("node03", _facts(checks)))["stability"]["status"] == "pass"


def test_a_check_that_failed_before_the_repair_is_judged_again_in_the_gpu_step():
    checks = list(HEALTHY)
    checks[4] = _check("gpu.pcie.width", "fail")
    assert _by_step(judge_verify("node03", _facts(checks)))["gpu"]["status"] == "pass"  # not asked to re-check it
    steps = _by_step(judge_verify("node03", _facts(checks, recheck=["gpu.pcie.width", "gpu.ecc.volatile_uncorrectable"])))
    assert steps["gpu"]["status"] == "fail" and steps["gpu"]["observed"] == "gpu.pcie.width"
    # the memory and burn checks stay in their own steps, never counted twice in the GPU step
    assert steps["gpu"]["evidence"] == "gpu.pcie.width"


def test_a_step_that_did_not_run_fails():
    checks = [c for c in HEALTHY if not c["id"].startswith("burn.")]
    steps = _by_step(judge_verify("node03", _facts(checks)))
    assert steps["stress"]["status"] == "fail" and steps["stress"]["observed"] == "did not run"
    assert steps["stability"]["observed"] == "did not run"


def test_power_from_the_bmc_and_the_connection():
    off = {"read": True, "result": {"before": {"power_state": "Off"}}}
    step = _by_step(judge_verify("node03", _facts(power=off)))["power"]
    assert step["status"] == "fail" and step["remedy"] == "power_cycle" and step["observed"] == "power Off, reachable"
    # no BMC to read: the connection alone decides
    none = {"read": False, "result": {"skipped": True}}
    step = _by_step(judge_verify("node03", _facts(power=none)))["power"]
    assert step["status"] == "pass" and step["observed"] == "power not read (no BMC), reachable"
    step = _by_step(judge_verify("node03", _facts(power=none, reachable=False)))["power"]
    assert step["status"] == "fail" and step["observed"] == "power not read (no BMC), unreachable"
    # a BMC read that failed is an unknown power state: the step fails
    failed = {"read": True, "result": {"failed": True, "msg": "HTTP Error 401"}}
    step = _by_step(judge_verify("node03", _facts(power=failed)))["power"]
    assert step["status"] == "fail" and step["observed"] == "power unknown, reachable"
    assert power_state({"power_state": "On"}) == "On" and power_state(None) == "unknown"
