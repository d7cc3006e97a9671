# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The record is never lost: the run mirrored from the results role's facts (plugin_utils/_run_record.py), the
partial record written from it, and a task's unexpected failure as its node's error check (_results.py)."""

from __future__ import annotations

import json
import os

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import failed_task_check, validate
from ansible_collections.zhisuan.ops.plugins.plugin_utils._run_record import RunRecorder


def start(recorder, tmp_path, run_id="r1", families=("gpu", "xid")):
    recorder.observe_facts("node01", {
        "results_run_started": "2026-12-01T10:00:00+00:00", "results_run_id": run_id, "results_run_kind": "inspect",
        "results_run_playbook": "playbooks/inspect.yml", "results_run_families": list(families),
        "results_run_latest_link": str(tmp_path / "latest"), "results_cluster_acc_checks": [],
        "results_cluster_acc_data": {}})
    recorder.observe_facts("node01", {"results_run_dir": str(tmp_path / run_id)})


def mark(recorder, *hosts):
    for host in hosts:
        recorder.observe_facts(host, {"results_targeted": True, "results_checks": [], "results_host_facts": {},
                                      "results_unreachable": False, "results_preflight_failed": False})


def gpu_check(host, status="pass"):
    return make_check("gpu.count.present", host, status, component="GPUs", observed=8, expected=8, message="8 GPUs")


def test_nothing_is_written_without_a_run(tmp_path):
    recorder = RunRecorder(write_report=None)
    assert recorder.finish("interrupted") is None
    assert not recorder.pending
    assert os.listdir(str(tmp_path)) == []


def test_an_interrupted_run_writes_what_was_judged_marked_partial(tmp_path):
    reports = []
    recorder = RunRecorder(ansible_version="2.19.14", write_report=reports.append)
    start(recorder, tmp_path)
    mark(recorder, "node01", "node02", "node03")
    recorder.observe_facts("node01", {"results_targeted": True, "results_checks": [gpu_check("node01", "fail")],
                                      "results_host_facts": {"gpu": {"count": 8}}, "results_unreachable": False})
    recorder.observe_facts("node02", {"results_checks": [], "results_unreachable": True})
    assert recorder.pending
    path = recorder.finish("the run was interrupted (SIGINT) before its record was written")
    assert path == str(tmp_path / "r1" / "results.json")
    assert reports == [path] and not recorder.pending
    document = json.loads((tmp_path / "r1" / "results.json").read_text())
    assert validate(document) == []
    assert document["run"]["partial"] is True
    assert document["run"]["partial_reason"] == "the run was interrupted (SIGINT) before its record was written"
    assert (document["run"]["kind"], document["run"]["families"], document["run"]["hosts_total"]) == (
        "inspect", ["gpu", "xid"], 3)
    hosts = document["hosts"]
    assert (hosts["node01"]["status"], hosts["node01"]["facts"]) == ("fail", {"gpu": {"count": 8}})
    assert hosts["node02"]["status"] == "unreachable"
    assert hosts["node03"]["status"] == "error"
    assert hosts["node03"]["message"].startswith("no check was kept for this host before the run stopped: the run was")
    partial = document["cluster"]["checks"]
    assert [(c["id"], c["status"]) for c in partial] == [("run.record.partial", "error")]
    assert "(1 of 3 nodes have checks)" in partial[0]["message"]
    assert os.readlink(str(tmp_path / "latest")) == "r1"
    # once written, a second finish (at exit after the stats) writes nothing again
    assert recorder.finish("again") == path and reports == [path]


def test_a_written_record_is_left_alone_but_its_report_is_rendered_once(tmp_path):
    reports = []
    recorder = RunRecorder(write_report=reports.append)
    start(recorder, tmp_path)
    mark(recorder, "node01")
    recorder.observe_written(str(tmp_path / "r1" / "results.json"))
    assert not recorder.pending
    recorder.finish("ended")
    assert not (tmp_path / "r1").exists()  # the real record is not overwritten
    assert reports == [str(tmp_path / "r1" / "results.json")]
    recorder.observe_reported()
    recorder.finish("ended")
    assert len(reports) == 1


def test_a_new_run_first_writes_the_previous_one_if_it_never_was(tmp_path):
    """site.yml: three runs in one process; a run that stopped without its record is written before the next."""
    recorder = RunRecorder(write_report=None)
    start(recorder, tmp_path, "delivery-1", families=("bmc",))
    mark(recorder, "node01")
    start(recorder, tmp_path, "burnin-1", families=("gpu", "burn"))
    first = json.loads((tmp_path / "delivery-1" / "results.json").read_text())
    assert first["run"]["partial"] is True and first["run"]["families"] == ["bmc"]
    assert recorder.run["id"] == "burnin-1" and recorder.hosts == {} and recorder.pending


def test_cluster_findings_kept_so_far_are_in_the_partial_record(tmp_path):
    recorder = RunRecorder(write_report=None)
    start(recorder, tmp_path)
    mark(recorder, "node01")
    kept = make_check("rdma.pair.bandwidth", "cluster", "fail", component="node01<->node02", observed=10, expected=">= 40",
                      message="slow", remedy="check_cable")
    recorder.observe_facts("node01", {"results_cluster_acc_checks": [kept],
                                      "results_cluster_acc_data": {"fabric": {"rdma_pairs": {"pairs": 1}}}})
    recorder.finish("stopped")
    document = json.loads((tmp_path / "r1" / "results.json").read_text())
    assert [c["id"] for c in document["cluster"]["checks"]] == ["rdma.pair.bandwidth", "run.record.partial"]
    assert document["cluster"]["fabric"] == {"rdma_pairs": {"pairs": 1}}
    assert validate(document) == []


def test_a_report_that_cannot_be_rendered_does_not_hide_the_record(tmp_path):
    warnings = []

    def broken(path):
        raise OSError("disk full")

    recorder = RunRecorder(write_report=broken, warn=warnings.append)
    start(recorder, tmp_path)
    mark(recorder, "node01")
    path = recorder.finish("stopped")
    assert os.path.exists(path)
    assert any("could not be rendered: disk full" in warning for warning in warnings)


# ------------------------------------------------------------------------------- unexpected task failures

def test_a_failed_task_speaks_in_its_own_words():
    check = failed_task_check("node04", "Judge GPU facts on the controller", "zhisuan.ops.judge", {
        "failed": True, "msg": "zhisuan.ops.judge: unknown GPU profile 'x'", "rc": 2,
        "stderr": "line one\nTraceback...\nValueError: boom", "stdout": "partial output",
        "invocation": {"module_args": {"bmc_password": "s3cret"}}}, family="gpu")
    assert (check["id"], check["status"], check["host"], check["remedy"]) == ("gpu.task.failed", "error", "node04", "investigate")
    assert check["message"] == ("Task 'Judge GPU facts on the controller' (zhisuan.ops.judge) failed unexpectedly: "
                                "zhisuan.ops.judge: unknown GPU profile 'x' (rc 2); stderr: ValueError: boom")
    assert "rc: 2" in check["evidence"] and "stdout (tail): partial output" in check["evidence"]
    assert "s3cret" not in json.dumps(check)
    assert "see the Ansible log" not in check["message"]


def test_a_failed_loop_names_its_failed_item_and_long_output_is_cut():
    check = failed_task_check("n1", "Sample", "zhisuan.ops.gpu_info", {
        "failed": True, "msg": "One or more items failed",
        "results": [{"failed": False}, {"failed": True, "msg": "nvidia-smi: timed out after 3 s", "rc": 124}]})
    assert check["message"].startswith("Task 'Sample' (zhisuan.ops.gpu_info) failed unexpectedly: nvidia-smi: timed out")
    assert check["message"].endswith("(rc 124)")
    long = failed_task_check("n1", "", "", {"msg": "x" * 5000, "stderr": "y" * 5000})
    assert len(long["message"]) < 1500 and len(long["evidence"]) < 2600
    assert long["id"] == "run.task.failed" and long["message"].startswith("Task 'unnamed' (unknown module)")
    assert failed_task_check("n1", "t", "m", {}, family="Odd-Family!")["id"] == "odd_family_.task.failed"


def test_the_leases_a_run_claimed_are_released_when_it_stops_and_no_other_runs(tmp_path):
    from ansible_collections.zhisuan.ops.plugins.plugin_utils import _lease

    history = str(tmp_path / "history")
    os.makedirs(history)
    assert _lease.claim(history, ["node03", "node04"], "cut-run", os.getpid())[0] == ["node03", "node04"]
    assert _lease.claim(history, ["node05"], "other-run", os.getpid())[0] == ["node05"]
    warned = []
    recorder = RunRecorder(write_report=None, warn=warned.append)
    # what zhisuan.ops.remediation_plan returns as its result's leases (twice: the plan may be made again)
    for dummy in range(2):
        recorder.observe_leases({"history_dir": history, "run_id": "cut-run", "nodes": ["node03", "node04"]})
    recorder.observe_leases(None)
    assert recorder.release_leases("the run was stopped (SIGTERM)") == ["node03", "node04"]
    assert sorted(_lease.live(history)) == ["node05"]  # another run's lease is left alone
    assert warned == ["zhisuan.ops: the run was stopped (SIGTERM); released the node leases of run cut-run: node03, "
                      "node04"]
    # released once: a second call (the run's end after the record play released them) says nothing
    assert recorder.release_leases("the run ended") == [] and len(warned) == 1


def test_leases_that_cannot_be_released_are_named_and_the_run_still_ends(tmp_path):
    blocked = tmp_path / "history"
    blocked.mkdir()
    (blocked / "leases").mkdir()
    (blocked / "leases" / ".lock").mkdir()  # the lock file cannot be opened
    warned = []
    recorder = RunRecorder(write_report=None, warn=warned.append)
    recorder.observe_leases({"history_dir": str(blocked), "run_id": "cut-run", "nodes": ["node03"]})
    assert recorder.release_leases("the run was stopped (SIGTERM)") == []
    assert len(warned) == 1 and "the node leases of run cut-run in %s could not be released" % blocked in warned[0]
