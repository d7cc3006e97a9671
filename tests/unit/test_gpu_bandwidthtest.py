# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Issue 23: the bandwidth tools as sites run them.

CUDA samples' ``bandwidthTest`` (real captures: a quick-mode run on an A100-SXM4-40GB from router-gao/cuda-demo, the
shmoo ``--csv`` runs of a V100-PCIE-32GB from microsoft/superbenchmark's test data) read, laid out per GPU and judged
by the nvbandwidth rules; nvbandwidth's data-verification failure (NVIDIA/nvbandwidth issue #34, v0.7 on 8x A100) a
``fail``, never a skip; the ``Waived:`` (v0.6, superbenchmark's GH200 log) and ``Waiving NAME.`` (v0.1-v0.4) forms read.
"""

from __future__ import annotations

import os
import stat

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError, ToolFailed
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import bandwidthtest, nvbandwidth
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu.bandwidth_collect import (
    DEFAULT_TESTCASES, run_bandwidthtest, run_nvbandwidth, saved_bandwidthtest)
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import bandwidth as rules
from ansible_collections.zhisuan.ops.plugins.plugin_utils._profiles import load_profiles

HERE = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "nvbandwidth")
QUICK = "bandwidthTest-quick-a100-sxm4-40gb-cuda-demo.txt"
SHMOO_H2D = "bandwidthTest-shmoo-csv-h2d-v100-pcie-superbench.txt"
SHMOO_D2H = "bandwidthTest-shmoo-csv-d2h-v100-pcie-superbench.txt"
ASSERT = "nvbandwidth-v0.7-a100x8-550.127.08-d2d-verify-assert.txt"
WAIVED = "nvbandwidth-v0.6-gh200-waived-superbench.txt"
H800 = "nvbandwidth-v0.2-h800x8-525.105.17-ce.txt"
PROFILES = load_profiles()


def text(name):
    with open(os.path.join(HERE, name), encoding="utf-8") as handle:
        return handle.read()


def by_id(checks, check_id):
    return [c for c in checks if c["id"] == check_id]


def test_quick_mode_reads_each_direction():
    facts = bandwidthtest.parse(text(QUICK))
    assert (facts["mode"], facts["result"], facts["devices"][0]["name"]) == ("quick", "PASS", "NVIDIA A100-SXM4-40GB")
    assert facts["results"]["h2d"] == [{"memory": "pinned", "bytes": 32000000, "gbs": 12.3}]
    assert bandwidthtest.best(facts, "d2h") == 13.2 and bandwidthtest.best(facts, "d2d") == 1157.5
    assert facts["warnings"] == [] and facts["verification_failures"] == []


def test_shmoo_csv_takes_the_plateau_of_the_large_transfers():
    facts = bandwidthtest.parse(text(SHMOO_H2D))
    assert facts["mode"] == "shmoo" and len(facts["results"]["h2d"]) == 81
    # the small transfers (0.4 GB/s at 1000 bytes) are not the link's rate; the top quarter of the sizes is
    assert 11.5 < bandwidthtest.best(facts, "h2d") < 12.5
    assert bandwidthtest.best(bandwidthtest.parse(text(SHMOO_D2H)), "d2h") > 13.0


def test_mb_per_s_form_of_older_cuda_is_converted():
    body = text(QUICK).replace("Bandwidth(GB/s)", "Bandwidth(MB/s)").replace("12.3", "12300.0")
    assert bandwidthtest.best(bandwidthtest.parse(body), "h2d") == 12.3


def test_a_damaged_line_is_named_and_a_cut_output_is_partial():
    body = text(QUICK)
    damaged = body.replace(" PINNED Memory Transfers\n", " PINNED Memory Tr\ufffdnsfers\n", 1)
    facts = bandwidthtest.parse(damaged)
    assert any("unread line" in w and "Tr\ufffdnsfers" in w for w in facts["warnings"])
    assert bandwidthtest.best(facts, "d2h") == 13.2
    cut = bandwidthtest.parse(body[:body.index(" Device to Device")])
    assert cut["partial"] is True and bandwidthtest.best(cut, "h2d") == 12.3
    with pytest.raises(ParseError) as info:
        bandwidthtest.parse("[CUDA Bandwidth Test] - Starting...\nRunning on...\n")
    assert info.value.tool == "bandwidthTest"


def test_per_gpu_runs_are_judged_by_the_nvbandwidth_rules():
    # the real A100-SXM4-40GB run: 12.3 / 13.2 GB/s is below the A100 floor (a PCIe path at half rate)
    facts = saved_bandwidthtest(text(QUICK))
    checks = rules.judge_bandwidth("n1", facts, PROFILES["a100_40gb"])
    h2d = by_id(checks, "gpu.bandwidth.h2d")
    assert [(c["status"], c["observed"], c["remedy"]) for c in h2d] == [("fail", "12.3 GB/s", "reseat")]
    assert by_id(checks, "gpu.bandwidth.d2h")[0]["observed"] == "13.2 GB/s"


def test_a_failed_bandwidthtest_is_a_verification_fail_not_a_skip():
    facts = saved_bandwidthtest(text(QUICK).replace("Result = PASS", "Result = FAIL"))
    checks = rules.judge_bandwidth("n1", facts, PROFILES["a100_40gb"])
    [check] = by_id(checks, "gpu.bandwidth.verification")
    assert (check["status"], check["remedy"]) == ("fail", "investigate")
    assert "bandwidthTest" in check["message"]


def test_nvbandwidth_verification_assert_is_a_fail_on_the_real_capture():
    facts = nvbandwidth.parse(text(ASSERT))
    assert facts["verification_failures"][0]["testcase"] == "device_to_device_memcpy_read_ce"
    assert "h_errorFlag == 0" in facts["verification_failures"][0]["evidence"] and facts["unparsed"] == []
    checks = rules.judge_bandwidth("n1", facts, PROFILES["a100"])
    [check] = by_id(checks, "gpu.bandwidth.verification")
    assert (check["status"], check["remedy"], check["component"]) == (
        "fail", "investigate", "GPUs (device_to_device_memcpy_read_ce)")
    # no per-GPU p2p skip stands in for the failure
    assert by_id(checks, "gpu.bandwidth.p2p") == []


def _script(tmp_path, name, body):
    prog = tmp_path / name
    prog.write_text("#!/bin/sh\n" + body)
    prog.chmod(prog.stat().st_mode | stat.S_IXUSR)
    return str(prog)


def test_an_nvbandwidth_run_that_exits_1_on_a_verification_failure_keeps_its_facts(tmp_path):
    (tmp_path / "out.txt").write_text(text(ASSERT))
    prog = _script(tmp_path, "nvbandwidth", "cat %s/out.txt; exit 1\n" % tmp_path)
    facts = run_nvbandwidth(prog, DEFAULT_TESTCASES, 30)
    assert facts["rc"] == 1 and facts["verification_failures"]
    # an exit 1 without a verification failure is still the tool's failure
    (tmp_path / "h800.txt").write_text(text(H800))
    prog = _script(tmp_path, "nvb2", "cat %s/h800.txt; exit 1\n" % tmp_path)
    with pytest.raises(ToolFailed):
        run_nvbandwidth(prog, DEFAULT_TESTCASES, 30)


def test_bandwidthtest_runs_once_per_gpu(tmp_path):
    (tmp_path / "out.txt").write_text(text(QUICK))
    prog = _script(tmp_path, "bandwidthTest", 'echo "$@" >> %s/args; sed "s/Device 0:/Device ${1#--device=}:/" %s/out.txt\n'
                   % (tmp_path, tmp_path))
    facts = run_bandwidthtest(prog, [0, 3], 30)
    assert (tmp_path / "args").read_text().splitlines() == [
        "--device=0 --htod --dtoh --memory=pinned --mode=quick", "--device=3 --htod --dtoh --memory=pinned --mode=quick"]
    assert nvbandwidth.per_gpu(facts, "host_to_device_memcpy_ce") == {0: 12.3, 3: 12.3}


def test_waived_forms_of_both_nvbandwidth_generations():
    facts = nvbandwidth.parse(text(WAIVED))
    assert facts["waived"] == 17 and facts["version"] == "v0.6" and facts["waived_testcases"] == []
    assert nvbandwidth.per_gpu(facts, "device_to_host_bidirectional_memcpy_ce") == {0: 187.26}
    # v0.1-v0.4 printed "Waiving NAME." instead of running it: an edit of the real v0.2 capture
    body = text(H800)
    start = body.index("Running device_to_host_memcpy_ce.")
    end = body.index("Running", start + 10)
    older = body[:start] + "Waiving device_to_host_memcpy_ce.\n\n" + body[end:]
    facts = nvbandwidth.parse(older)
    assert facts["waived_testcases"] == ["device_to_host_memcpy_ce"] and facts["unparsed"] == []
    checks = rules.judge_bandwidth("n1", facts, PROFILES["h800"])
    assert set(c["status"] for c in by_id(checks, "gpu.bandwidth.d2h")) == {"skip"}
    # only waivers, no testcase run: read, not refused
    only = nvbandwidth.parse("nvbandwidth Version: v0.2\n\nWaiving device_to_device_memcpy_read_ce.\n")
    assert only["waived_testcases"] == ["device_to_device_memcpy_read_ce"]


def test_a_damaged_nvbandwidth_row_is_named_and_the_other_testcases_are_read():
    body = text(H800)
    row = "0     55.28     55.30     55.32     55.30     55.31     55.34     55.32     55.34"
    assert row in body
    damaged = body.replace(row, row.replace("55.30", "5\ufffd.30", 1), 1)
    facts = nvbandwidth.parse(damaged)
    assert facts["unparsed"] == [row.replace("55.30", "5\ufffd.30", 1)]
    # the damaged host-to-device row is lost; its SUM line and the five other testcases are still read
    assert facts["testcases"]["host_to_device_memcpy_ce"]["sum"] == 442.52
    d2h = facts["testcases"]["device_to_host_memcpy_ce"]["matrix"]
    assert d2h == [{"row": 0, "values": [55.15, 55.15, 55.15, 55.15, 55.09, 55.13, 55.1, 55.13]}]
    assert facts["testcases"]["host_to_device_memcpy_ce"]["matrix"] == []
    assert len(facts["testcases"]) == 6
