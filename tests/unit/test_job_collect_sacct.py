# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""job_log's Slurm path with the accounting (issue 23), through the real runner: stand-in ``scontrol`` and ``sacct``
programs print real captures (tests/fixtures/slurm); the saved-output entry point ``sacct_src``; the fallback to
``-P`` for an sacct without ``--json``; an sacct failure that costs the job nothing."""

from __future__ import annotations

import json
import os
import stat

from ansible_collections.zhisuan.ops.plugins.filter.platform_checks import platform_checks
from ansible_collections.zhisuan.ops.plugins.filter.quality_indicators import quality_indicators
from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ToolNotFound
from ansible_collections.zhisuan.ops.plugins.module_utils._sched.job_collect import collect_job_facts
from fuzzing import FIXTURES, CollectModule, fixture_text

JOB = os.path.join(FIXTURES, "slurm", "scontrol-o-show-job-failed.txt")
LOG = os.path.join(FIXTURES, "joblog", "nccl-ras-outlier-incomplete-2.27.3-nccl-1762.log")
JSON_2505 = "slurm/sacct-json-25.05.2-sarc-test-cluster.json"
SNOWMAN = "slurm/sacct-parsable-noheader-snowman-slurm-jobinfo.txt"
SNOWMAN_FIELDS = ("JobID,JobName,User,Partition,NodeList,NNodes,ncpus,NTasks,State,Submit,start,end,timelimit,elapsed,"
                  "TotalCPU,UserCPU,SystemCPU,ReqMem,MaxRSS,TRESUsageInTot,TRESUsageOutTot,MaxDiskWrite,MaxDiskRead,"
                  "MaxRSSNode,MaxDiskWriteNode,MaxDiskReadNode,Comment")


def program(tmp_path, name, script):
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def params(**extra):
    out = {"job": "1", "scheduler": "slurm", "scontrol_path": "scontrol", "timeout": 30, "max_bytes": 1 << 20,
           "jobcomp_path": None, "log_path": LOG, "sacct_path": None, "sacct_since": "now-7days", "sacct_src": None,
           "sacct_fields": None, "sacct_delimiter": None}
    out.update(extra)
    return out


def edited_window(tmp_path):
    """The 25.05 test cluster's records with job 1's attempts added (edits: job 38 becomes job 1's requeued attempt
    on fg-v012, job 35 its completed next attempt there, 1346 s later) and job 30 ending NODE_FAIL on fg-v012 (27
    FAILED there already): fg-v012 took three jobs down."""
    doc = json.loads(fixture_text(JSON_2505))
    for job in doc["jobs"]:
        if job["job_id"] == 38:
            job["job_id"], job["state"]["current"] = 1, ["REQUEUED"]
        if job["job_id"] == 35:
            job["job_id"], job["state"]["current"] = 1, ["COMPLETED"]
        if job["job_id"] == 30:
            job["nodes"], job["state"]["current"] = "fg-v012", ["NODE_FAIL"]
    path = tmp_path / "sacct.json"
    path.write_text(json.dumps(doc))
    return str(path)


def test_sacct_json_window_through_the_runner_and_the_judge(tmp_path):
    window = edited_window(tmp_path)
    scontrol = program(tmp_path, "scontrol", "cat %s\n" % JOB)
    sacct = program(tmp_path, "sacct", 'echo "$@" > %s/args\ncat %s\n' % (tmp_path, window))
    module = CollectModule(params(scontrol_path=scontrol, sacct_path=sacct, sacct_since="2024-05-20T00:00"))
    job = collect_job_facts(module)["job"]
    assert (tmp_path / "args").read_text().split() == ["-a", "-D", "-X", "-S", "2024-05-20T00:00", "-E", "now", "--json"]
    assert job["accounting"]["form"] == "json" and job["accounting"]["version"] == "25.05.2"
    assert sorted((a["start"], a["state"], a["end"]) for a in job["attempts"]) == [
        ("2024-05-24T23:08:36", "REQUEUED", "2024-05-24T23:28:58"),
        ("2024-05-24T23:51:24", "COMPLETED", "2024-05-25T00:00:00")]
    # the quality indicators read these attempts: one interruption, recovered 1346 s later
    quality = quality_indicators(job["attempts"])
    assert (quality["task_recovery_time"]["all_s"], quality["effective_training_time"]["interruptions"]) == ([1346], 1)
    assert quality["effective_training_time"]["value"] == 1222 + 516
    result = platform_checks({"job": job}, "job", hostmap={"fg-v012": "node07", "10.4.109.13": "node03"},
                             thresholds={})
    ids = dict((c["id"], c) for c in result["checks"])
    assert ids["job.sched.node_failures"]["component"] == "node fg-v012"
    # the RAS outlier of the log and the node the accounting blames: both diagnosed in this run
    assert result["summary"]["suspects"] == ["node03", "node07"]


def test_an_sacct_without_json_is_asked_for_its_table(tmp_path):
    header = "|".join(SNOWMAN_FIELDS.split(","))
    table = tmp_path / "table.txt"
    table.write_text(header + "\n" + fixture_text(SNOWMAN).replace("\u2603", "|"))
    scontrol = program(tmp_path, "scontrol", "cat %s\n" % JOB)
    sacct = program(tmp_path, "sacct", 'case "$*" in *--json*) echo "sacct: unrecognized option \'--json\'" >&2; '
                                       'exit 1;; esac\ncat %s\n' % table)
    job = collect_job_facts(CollectModule(params(scontrol_path=scontrol, sacct_path=sacct)))["job"]
    assert job["accounting"]["form"] == "parsable" and len(job["accounting"]["jobs"]) == 37


def test_a_saved_sacct_output_is_read_instead(tmp_path):
    scontrol = program(tmp_path, "scontrol", "cat %s\n" % JOB)
    module = CollectModule(params(scontrol_path=scontrol, sacct_src=os.path.join(FIXTURES, SNOWMAN),
                                  sacct_fields=SNOWMAN_FIELDS, sacct_delimiter="\u2603"))
    job = collect_job_facts(module)["job"]
    assert job["accounting"]["source"].startswith("file ") and job["accounting"]["window"]["since"] is None
    assert len(job["accounting"]["jobs"]) == 37 and "accounting_error" not in job


def test_an_sacct_failure_costs_the_job_nothing(tmp_path):
    scontrol = program(tmp_path, "scontrol", "cat %s\n" % JOB)
    # what the lab's real sacct (22.05.8, no slurmdbd) says: tests/fixtures/slurm/sacct-accounting-disabled.stderr
    sacct = program(tmp_path, "sacct", "cat %s >&2; exit 1\n" % os.path.join(FIXTURES, "slurm",
                                                                           "sacct-accounting-disabled.stderr"))
    module = CollectModule(params(scontrol_path=scontrol, sacct_path=sacct))
    job = collect_job_facts(module)["job"]
    assert job["state"] == "FAILED" and job["events"] and "accounting storage is disabled" in job["accounting_error"]
    assert module.warnings and module.warnings[0].startswith("sacct:")
    checks = dict((c["id"], c) for c in platform_checks({"job": job}, "job", hostmap={}, thresholds={})["checks"])
    assert checks["job.collect.sacct"]["status"] == "error" and "job.nccl.ras" in checks


def test_a_job_slurmctld_forgot_comes_from_the_accounting(tmp_path):
    window = edited_window(tmp_path)
    scontrol = program(tmp_path, "scontrol", 'echo "slurm_load_jobs error: Invalid job id specified" >&2; exit 1\n')
    module = CollectModule(params(scontrol_path=scontrol, sacct_src=window))
    job = collect_job_facts(module)["job"]
    assert job["source"] == "sacct" and job["restarts"] == 1 and job["nodes"] == ["fg-v012"]


def test_saved_files_alone_are_judged_where_there_is_no_scontrol(tmp_path):
    # an SRE's machine with what the site sent: the job's output file and a week of sacct, no Slurm at all
    module = CollectModule(params(scontrol_path=str(tmp_path / "no-such-scontrol"), sacct_src=edited_window(tmp_path)))
    job = collect_job_facts(module)["job"]
    assert job["source"] == "sacct" and job["restarts"] == 1 and job["nodes"] == ["fg-v012"]
    checks = dict((c["id"], c) for c in platform_checks({"job": job}, "job", hostmap={}, thresholds={})["checks"])
    assert "job.nccl.ras" in checks and checks["job.sched.accounting"]["status"] == "pass"


def test_no_scontrol_and_no_saved_records_is_still_an_error(tmp_path):
    module = CollectModule(params(scontrol_path=str(tmp_path / "no-such-scontrol")))
    try:
        collect_job_facts(module)
    except ToolNotFound as exc:
        assert "no-such-scontrol" in str(exc)
    else:
        raise AssertionError("a job with no scontrol and no saved records was read")
