# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""NCCL's own diagnosis and a CUDA OOM inside NCCL's lines (issue 23): real RAS reports of NCCL 2.26.2 and 2.27.3 and
real NCCL out-of-memory logs (tests/fixtures/joblog, each from an NVIDIA/nccl issue, PROVENANCE.md), read by
_sched/joblog.py and judged by _judge/job.py: the outlier node the report names is handed to the node diagnosis
(``suspects``, which check_job turns into check_job_suspects); an OOM is the job's, no node's."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.zhisuan.ops.plugins.filter.platform_checks import platform_checks
from ansible_collections.zhisuan.ops.plugins.module_utils._sched.joblog import parse_log
from fuzzing import FUZZ, assert_total, fixture_text, text_mutations

RAS_OUTLIER = "joblog/nccl-ras-outlier-incomplete-2.27.3-nccl-1762.log"
RAS_MISMATCH = "joblog/nccl-ras-mismatch-2.26.2-nccl-1911.log"
RAS_OK = "joblog/nccl-ras-ok-watchdog-2.26.2-nccl-1730.log"
OOM_ALLOC = "joblog/nccl-cuda-oom-alloc-nccl-844.log"
OOM_CALLOC = "joblog/nccl-cuda-oom-calloc-nccl-1235.log"
# the inventory: node07 is the host whose IB address the RAS report names
HOSTMAP = {"10.4.109.13": "node07", "10.137.190.124": "node03", "ng30903": "node01", "10.0.0.4": "node02"}


def judged(path, nodes=("node01", "node07"), state="FAILED", hostmap=None):
    job = dict(parse_log(fixture_text(path)), id="4127", name="train", state=state, nodes=list(nodes))
    result = platform_checks({"job": job}, "job", hostmap=HOSTMAP if hostmap is None else hostmap, thresholds={})
    return dict((c["id"], c) for c in result["checks"]), result["summary"]


def kinds(path):
    return [e["kind"] for e in parse_log(fixture_text(path))["events"]]


def test_ras_outlier_and_incomplete_lines_are_read_with_their_block():
    events = parse_log(fixture_text(RAS_OUTLIER))["events"]
    outlier = [e for e in events if e["kind"] == "ras_outlier"]
    assert [(e["host"], e["pids"], e["line"]) for e in outlier] == [("10.4.109.13", [60004, 60035], 18)]
    missing = [(e["kind"], e["status"], e["block"], e.get("rank"), e["pid"], e["host"]) for e in events
               if e["kind"] in ("ras_rank", "ras_process")]
    assert missing == [("ras_process", "INCOMPLETE", "job", None, 60004, "10.4.109.13"),
                       ("ras_rank", "INCOMPLETE", "#0-0", 1, 60004, "10.4.109.13")]
    groups = [(e["group"], e["state"], e["errors"]) for e in events if e["kind"] == "ras_group"]
    assert groups == [(0, "RUNNING", ["INCOMPLETE"]), (1, "RUNNING", ["MISMATCH"]), (2, "NOCOMM", ["INCOMPLETE", "MISMATCH"])]


def test_the_outlier_node_is_diagnosed_in_the_same_run():
    checks, summary = judged(RAS_OUTLIER)
    ras = checks["job.nccl.ras"]
    assert (ras["status"], ras["remedy"]) == ("fail", "investigate")
    assert "outlier node node07 (processes 60004,60035)" in ras["message"] and "Node diagnosis of node07" in ras["message"]
    # the node named, not every node of the job
    assert summary["suspects"] == ["node07"] and summary["classification"] == "ras"


def test_an_outlier_outside_the_inventory_is_named_not_diagnosed():
    checks, summary = judged(RAS_OUTLIER, hostmap={})
    assert summary["suspects"] == [] and "Not in the inventory" in checks["job.nccl.ras"]["message"]
    assert "10.4.109.13" in checks["job.nccl.ras"]["message"]


def test_a_mismatch_names_the_ranks_and_diagnoses_no_node():
    checks, summary = judged(RAS_MISMATCH)
    ras = checks["job.nccl.ras"]
    assert "rank(s) 12,13 on node03" in ras["message"] and "AllGather operation counts" in ras["message"]
    assert summary["suspects"] == []


def test_a_healthy_ras_report_is_no_ras_event_and_its_watchdog_line_still_is():
    assert kinds(RAS_OK) == ["nccl_timeout"]
    checks, summary = judged(RAS_OK)
    assert "job.nccl.ras" not in checks and summary["classification"] == "nccl_timeout"


@pytest.mark.parametrize("path,oom_lines", [(OOM_ALLOC, [8]), (OOM_CALLOC, [14, 16])])
def test_nccls_cuda_oom_lines_are_oom_not_nccl_warnings(path, oom_lines):
    events = parse_log(fixture_text(path))["events"]
    assert [e["line"] for e in events if e["kind"] == "oom"] == oom_lines
    # the '-> 1' result after the OOM belongs to it: no later WARN takes the cuda class
    assert not [e for e in events if e["kind"] == "nccl_warn" and e.get("error_class") == "cuda"]


@pytest.mark.parametrize("path", [OOM_ALLOC, OOM_CALLOC])
def test_a_job_that_dies_of_an_oom_is_an_application_fault(path):
    checks, summary = judged(path)
    assert summary["classification"] == "oom" and summary["suspects"] == []
    assert checks["job.memory.oom"]["remedy"] == "restart_app"
    assert checks["job.scheduler.state"]["remedy"] == "restart_app"
    # NCCL's warnings around it are reported as its consequences, with no hardware action
    assert (checks["job.nccl.error"]["status"], checks["job.nccl.error"]["remedy"]) == ("warn", "restart_app")
    assert "follow the CUDA out of memory" in checks["job.nccl.error"]["message"]
    assert not [c for c in checks.values() if c["remedy"] in ("check_cable", "reset_gpu", "drain")]


def test_the_same_nccl_warnings_without_the_oom_still_go_to_the_node_diagnosis():
    # the 1235 log with its two OOM lines cut out: the socket errors are NCCL's again
    text = "\n".join(line for line in fixture_text(OOM_CALLOC).splitlines()
                     if "out of memory" not in line and "CUDA calloc" not in line)
    job = dict(parse_log(text), id="4127", name="train", state="FAILED", nodes=["node01"])
    result = platform_checks({"job": job}, "job", hostmap=HOSTMAP, thresholds={})
    checks = dict((c["id"], c) for c in result["checks"])
    assert checks["job.nccl.error"]["status"] == "fail" and result["summary"]["suspects"] == ["node01"]


def test_a_cut_ras_report_keeps_what_was_read():
    # the 2.27.3 report as the issue quotes it ends inside the '#2-0' block: the lines before still count
    lines = fixture_text(RAS_OUTLIER).splitlines()
    events = parse_log("\n".join(lines[:35]))["events"]
    assert [e["kind"] for e in events] == ["ras_outlier", "ras_group", "ras_group", "ras_group", "ras_process"]


@FUZZ
@given(st.sampled_from([RAS_OUTLIER, RAS_MISMATCH, OOM_ALLOC, OOM_CALLOC]).flatmap(
    lambda path: text_mutations(fixture_text(path))))
def test_ras_and_oom_logs_are_total_through_the_judge(text):
    result, error = assert_total("joblog.parse_log ras/oom", parse_log, text)
    job = dict(result, id="1", name="x", state="FAILED", nodes=["node01"])
    assert_total("judge_job ras/oom", platform_checks, {"job": job}, "job", hostmap=HOSTMAP, thresholds={})
