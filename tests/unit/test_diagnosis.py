# SPDX-License-Identifier: GPL-3.0-or-later
"""Root cause and remedy order from check records."""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.plugin_utils._diagnosis import diagnose


def _c(check_id, status, remedy=None, component="GPU 7"):
    return make_check(check_id, "n1", status, component=component, message=check_id, remedy=remedy)


def test_healthy_node():
    assert diagnose([_c("gpu.count.present", "pass"), _c("gpu.nvlink.links", "skip")]) == {
        "status": "healthy", "root_cause": None, "remedies": [], "findings": 0}


def test_gpu_off_the_bus_power_cycle_before_reseat():
    checks = [_c("gpu.count.present", "fail", "reseat", "GPUs"), _c("xid.79.events", "fail", "power_cycle"),
              _c("xid.13.events", "warn", "restart_app"), _c("gpu.ecc.mode", "pass")]
    result = diagnose(checks)
    assert result["root_cause"]["id"] == "xid.79.events"
    assert result["root_cause"]["remedy"] == "power_cycle"
    assert result["remedies"] == ["power_cycle", "reseat", "restart_app"]
    assert result["findings"] == 3
    assert result["status"] == "fail"


def test_fail_outranks_error_and_warn_whatever_the_remedy():
    checks = [_c("gpu.collect.nvidia_smi", "error", "investigate"), _c("gpu.remap.failure", "warn", "rma"),
              _c("gpu.pcie.width", "fail", "reseat", "GPU 5")]
    result = diagnose(checks)
    assert (result["root_cause"]["id"], result["status"]) == ("gpu.pcie.width", "fail")
    assert result["remedies"] == ["rma", "reseat", "investigate"]


def test_rma_settles_first_among_failures():
    checks = [_c("gpu.ecc.volatile_uncorrectable", "fail", "reset_gpu"), _c("gpu.remap.failure", "fail", "rma")]
    assert diagnose(checks)["root_cause"]["remedy"] == "rma"
