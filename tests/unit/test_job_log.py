# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The job family: real log lines (tests/fixtures/joblog, each from a public issue, PROVENANCE.md) read into events
(_sched/joblog.py) and judged (_judge/job.py) through platform_checks."""

from __future__ import annotations

import pytest
from hypothesis import given

from ansible_collections.zhisuan.ops.plugins.filter.platform_checks import platform_checks
from ansible_collections.zhisuan.ops.plugins.module_utils._sched.joblog import classify_line, parse_log
from fuzzing import FUZZ, assert_total, fixture_text, text_mutations


def log(name):
    return fixture_text("joblog/" + name)


def judged(text, state="FAILED", nodes=("node01", "node02"), hostmap=None, **extra):
    job = dict(parse_log(text), id="4127", name="train", state=state, nodes=list(nodes), **extra)
    result = platform_checks({"job": job}, "job", hostmap=hostmap or {}, thresholds={"hang_after_s": 600})
    return dict((c["id"], c) for c in result["checks"]), result["summary"]


def test_watchdog_timeout_names_ranks_operation_and_timeout():
    parsed = parse_log(log("pytorch-watchdog-timeout-basicsr-737.log"))
    timeouts = [e for e in parsed["events"] if e["kind"] == "nccl_timeout"]
    assert [(e["rank"], e["op"], e["seq"], e["timeout_ms"], e["ran_ms"]) for e in timeouts] == [
        (1, "ALLREDUCE", 808, 600000, 600020), (0, "ALLREDUCE", 808, 600000, 600030), (2, "ALLREDUCE", 808, 600000, 600061)]
    checks, summary = judged(log("pytorch-watchdog-timeout-basicsr-737.log"))
    assert checks["job.nccl.timeout"]["status"] == "fail" and "rank(s) 0, 1, 2" in checks["job.nccl.timeout"]["message"]
    assert summary["classification"] == "nccl_timeout" and summary["ranks"] == [0, 1, 2]


def test_old_watchdog_format():
    events = parse_log(log("pytorch-watchdog-timeout-old-format-pytorch-118369.log"))["events"]
    assert [(e["rank"], e["seq"], e["timeout_ms"]) for e in events] == [(0, 96120, 1800000), (7, 64088, 1800000)]


def test_ib_completion_error_names_status_host_and_peer():
    event = parse_log(log("nccl-ib-completion-status12-nccl-1405.log"))["events"][0]
    assert (event["kind"], event["host"], event["peer"], event["status"], event["status_name"], event["vendor_err"]) == (
        "ib_completion", "kp-ddp-worker-0", "10.216.210.236", 12, "IBV_WC_RETRY_EXC_ERR", 129)
    older = parse_log(log("nccl-ib-completion-error4-nccl-928.log"))["events"][0]
    assert (older["host"], older["status_name"], older["direction"]) == ("H100-2", "IBV_WC_LOC_PROT_ERR", "Send")


def test_timeout_with_an_ib_error_hands_the_peer_node_to_the_node_diagnosis():
    # a real watchdog timeout and a real IB completion error; the peer address edited to the lab's node07
    text = log("pytorch-watchdog-timeout-basicsr-737.log") + log("nccl-ib-completion-status12-nccl-1405.log").replace(
        "kp-ddp-worker-0", "node03").replace("10.216.210.236", "10.0.0.7")
    checks, summary = judged(text, nodes=["node03", "node07"], hostmap={"10.0.0.7": "node07", "node03": "node03"})
    assert summary["classification"] == "nccl_timeout" and summary["suspects"] == ["node03", "node07"]
    assert "node03 -> peer node07" in checks["job.nccl.timeout"]["message"]
    assert "IBV_WC_RETRY_EXC_ERR" in checks["job.nccl.error"]["message"]


def test_nccl_error_classes():
    remote = parse_log(log("nccl-remote-error-alpaca-207.log"))["events"][0]
    assert (remote["kind"], remote["error_class"], remote["status"]) == ("nccl_error", "remote", 12)
    system = parse_log(log("nccl-system-error-nccl-tests-166.log"))["events"]
    assert [(e["kind"], e["error_class"], e["peer"]) for e in system] == [("nccl_warn", "system", "10.0.0.2")]


def test_ecc_is_reset_gpu_on_the_jobs_nodes():
    checks, summary = judged(log("cuda-ecc-uncorrectable-sd-scripts-1434.log"))
    assert checks["job.cuda.ecc"]["remedy"] == "reset_gpu" and summary["suspects"] == ["node01", "node02"]


def test_oom_is_the_jobs_not_the_nodes():
    checks, summary = judged(log("cuda-oom-framepack-369.log"))
    assert checks["job.memory.oom"]["remedy"] == "restart_app" and summary["suspects"] == []


def test_silence_while_running_is_a_hang_and_a_fresh_log_is_not():
    checks, summary = judged("step 1\nstep 2\n", state="RUNNING", silent_s=900.0, running=True, last_write="x", tail=["step 2"])
    assert checks["job.progress.hang"]["status"] == "fail" and summary["classification"] == "hang"
    checks, summary = judged("step 1\nstep 2\n", state="RUNNING", silent_s=5.0, running=True)
    assert "job.progress.hang" not in checks and checks["job.log.signature"]["status"] == "pass"


def test_the_lab_jobs_real_output_file():
    # written by a real Slurm job of the lab (lab/sched/slurm_lab.py job_script) that replayed the watchdog lines
    parsed = parse_log(log("slurm-lab-job-watchdog-timeout.out"))
    assert parsed["lines"] == 6 and [e["kind"] for e in parsed["events"]] == ["nccl_timeout"] * 3


@pytest.mark.parametrize("line", ["", "step 100 loss 2.3", "NCCL INFO Bootstrap : Using eth0", "x" * 10000])
def test_ordinary_lines_are_no_event(line):
    assert classify_line(line) is None


@FUZZ
@given(text_mutations(log("pytorch-watchdog-timeout-basicsr-737.log") + log("nccl-ib-completion-status12-nccl-1405.log")))
def test_log_parser_is_total(text):
    assert_total("joblog.parse_log", parse_log, text)
