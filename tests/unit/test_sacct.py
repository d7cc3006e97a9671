# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Slurm's accounting (issue 23): real ``sacct --json`` of Slurm 21.08, 22.05, 23.02 (two projects), 23.11 and 25.05,
a real ``sacct --parsable --noheader --delimiter=☃``, and the lab's own slurmdbd (22.05.8: ``--json``, ``-P`` and
``-p`` of the same six attempts) (tests/fixtures/slurm, PROVENANCE.md), read by
_sched/sacct.py; the per-node counts judged by _judge/job.py (``job.sched.node_failures``). Fault states are edits of
the real records in code."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.zhisuan.ops.plugins.filter.platform_checks import platform_checks
from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._sched import sacct
from fuzzing import FUZZ, assert_total, fixture_text, json_mutations, json_text, text_mutations

JSON = {"21.08.8-2": "slurm/sacct-json-21.08.8-sarc.json", "22.05.9": "slurm/sacct-json-22.05.9-sarc.json",
        "23.02.6": "slurm/sacct-json-23.02.6-sarc.json", "23.02.8": "slurm/sacct-json-23.02.8-slurmdog.json",
        "23.11.5": "slurm/sacct-json-23.11.5-sarc.json", "25.05.2": "slurm/sacct-json-25.05.2-sarc-test-cluster.json"}
SNOWMAN = "slurm/sacct-parsable-noheader-snowman-slurm-jobinfo.txt"
# the --format of that capture, as its repository's test/data/README.md gives it
SNOWMAN_FIELDS = ("JobID,JobName,User,Partition,NodeList,NNodes,ncpus,NTasks,State,Submit,start,end,timelimit,elapsed,"
                  "TotalCPU,UserCPU,SystemCPU,ReqMem,MaxRSS,TRESUsageInTot,TRESUsageOutTot,MaxDiskWrite,MaxDiskRead,"
                  "MaxRSSNode,MaxDiskWriteNode,MaxDiskReadNode,Comment")


def parsed(version):
    return sacct.parse_sacct(fixture_text(JSON[version]))


@pytest.mark.parametrize("version,first", [
    ("21.08.8-2", ("55978384", "REQUEUED", ["cdr896"], 86301)),
    ("22.05.9", ("20247445_100", "FAILED", ["ng30103", "ng30203", "ng30706", "ng30707"], 124403)),
    ("23.02.6", ("4", "RUNNING", ["mila02"], 83853331)),
    ("23.02.8", ("12078642_6", "COMPLETED", ["c3cpu-a2-u1-1"], 326)),
    ("23.11.5", ("4", "RUNNING", ["mila02"], 102228976)),
    ("25.05.2", ("6", "OUT_OF_MEMORY", ["fg-v020"], 2343)),
])
def test_every_json_shape_reads_the_same_record(version, first):
    result = parsed(version)
    job = result["jobs"][0]
    assert result["form"] == "json" and result["version"] == version and result["warnings"] == []
    assert (job["id"], job["state"], job["nodes"], job["elapsed_s"]) == first
    assert job["start"] and (job["end"] is None) == (job["state"] == "RUNNING")


def test_the_newer_shapes_unwrap_numbers_lists_and_signals():
    # 25.05: state a list, exit_code.return_code and signal.id {"set", "number"}; the OOM job was killed by signal 9
    jobs = parsed("25.05.2")["jobs"]
    assert len(jobs) == 13
    oom = [j for j in jobs if j["state"] == "OUT_OF_MEMORY"]
    assert [(j["id"], j["signal"], j["restarts"], j["exit_code"]) for j in oom] == [("6", 9, 0, 0), ("33", 9, 0, 0)]
    pending = [j for j in jobs if j["state"] == "PENDING"]
    assert pending and all(j["nodes"] == [] and j["start"] is None for j in pending)


def test_parsable_noheader_with_its_format_and_delimiter():
    result = sacct.parse_sacct(fixture_text(SNOWMAN), fields=SNOWMAN_FIELDS, delimiter="\u2603")
    jobs = result["jobs"]
    assert result["form"] == "parsable" and result["warnings"] == []
    assert jobs[0]["id"] == "20872560" and jobs[0]["steps"] == 2 and jobs[0]["elapsed_s"] == 30 * 3600 + 51 * 60 + 32
    assert sorted(set(j["state"] for j in jobs)) == ["COMPLETED", "FAILED", "PENDING", "RUNNING"]
    assert all("." not in j["id"] for j in jobs)


def test_parsable_with_a_header_line_from_the_same_capture():
    # the capture given its --format as a header line (what `sacct -p` prints without --noheader)
    text = fixture_text(SNOWMAN)
    header = "\u2603".join(SNOWMAN_FIELDS.split(",")) + "\u2603"
    result = sacct.parse_sacct(header + "\n" + text, delimiter="\u2603")
    assert len(result["jobs"]) == len(sacct.parse_sacct(text, SNOWMAN_FIELDS, "\u2603")["jobs"]) == 37


LAB = {"json": "slurm/sacct-json-22.05.8-lab-accounting.json", "P": "slurm/sacct-P-22.05.8-lab-accounting.txt",
       "p": "slurm/sacct-p-22.05.8-lab-accounting.txt"}
# the lab's six real attempts (slurmdbd 22.05.8 on MariaDB): job id, name, state, nodes
LAB_ATTEMPTS = [("1", "slow", "TIMEOUT"), ("2", "done", "COMPLETED"), ("3", "train", "REQUEUED"),
                ("4", "bad1", "FAILED"), ("5", "bad2", "FAILED"), ("3", "train", "FAILED")]


@pytest.mark.parametrize("form", ["json", "P", "p"])
def test_the_lab_accounting_reads_the_same_attempts_in_every_form(form):
    result = sacct.parse_sacct(fixture_text(LAB[form]))
    assert result["warnings"] == [] and result["form"] == ("json" if form == "json" else "parsable")
    got = sorted((j["id"], j["name"], j["state"]) for j in result["jobs"])
    assert got == sorted(LAB_ATTEMPTS)
    if form != "p":  # sacct's default columns have no NodeList and no times
        nodes = dict(((j["id"], j["state"]), j["nodes"]) for j in result["jobs"])
        assert nodes[("1", "TIMEOUT")] == ["node03"] and nodes[("3", "REQUEUED")] == ["node02"]
        train = [j for j in result["jobs"] if j["id"] == "3"]
        assert train[0]["end"] <= train[1]["start"] and train[1]["start"] - train[0]["end"] == 2


def test_the_lab_window_flags_the_node_that_took_three_jobs_down_not_the_timeout():
    result = sacct.parse_sacct(fixture_text(LAB["P"]))
    job = {"id": "3", "state": "FAILED", "nodes": ["node02"], "events": [], "accounting": result}
    hostmap = {"node01": "node01", "node02": "node02", "node03": "node03"}
    checks = platform_checks({"job": job}, "job", hostmap=hostmap, thresholds={})
    flagged = [c for c in checks["checks"] if c["id"] == "job.sched.node_failures"]
    assert [c["component"] for c in flagged] == ["node node02"]
    assert "took down 3 job(s)" in flagged[0]["message"] and "REQUEUED 1" in flagged[0]["message"]
    assert "node02" in checks["summary"]["suspects"]
    summary = [c for c in checks["checks"] if c["id"] == "job.sched.accounting"][0]
    assert "node03: TIMEOUT 1" in summary["evidence"]


def test_a_damaged_line_is_a_warning_and_the_rest_is_read():
    lines = fixture_text(SNOWMAN).splitlines()
    lines.insert(5, "20940996\u2603cut short")
    lines.insert(9, "\u2603" * 27)
    result = sacct.parse_sacct("\n".join(lines), SNOWMAN_FIELDS, "\u2603")
    assert len(result["jobs"]) == 37
    assert result["warnings"][0].startswith("line 6 has 2 fields") and "line 10 has no JobID" in result["warnings"][1]


def test_a_truncated_json_keeps_the_jobs_before_the_cut():
    text = fixture_text(JSON["25.05.2"])
    cut = text[:text.index('"job_id": 33,')]
    result = sacct.parse_sacct(cut)
    assert result["truncated"] and [j["id"] for j in result["jobs"]] == ["6", "19", "27", "30", "31", "32"]
    assert "cut short" in result["warnings"][0]


def test_a_record_without_id_or_state_is_named_and_skipped():
    doc = json.loads(fixture_text(JSON["25.05.2"]))
    del doc["jobs"][2]["state"]
    doc["jobs"][4] = "garbage"
    result = sacct.parse_json(json.dumps(doc))
    assert len(result["jobs"]) == 11
    assert result["warnings"] == ["jobs[2] has no job_id or state.current: left out",
                                  "jobs[4] is not a job record (a str)"]


@pytest.mark.parametrize("text", ["", "   \n", "not sacct at all\n", "{\"meta\": {}}"])
def test_nothing_readable_is_a_parse_error_naming_sacct(text):
    with pytest.raises(ParseError) as err:
        sacct.parse_sacct(text)
    assert err.value.tool == "sacct"


def _window_with_a_bad_node():
    """The 25.05 test cluster's records, edited: fg-v012 also ends job 35 NODE_FAIL and job 38 REQUEUED (job 27
    FAILED there already); fg-v006's OOM stays the job's."""
    doc = json.loads(fixture_text(JSON["25.05.2"]))
    for job in doc["jobs"]:
        if job["job_id"] == 35:
            job["state"]["current"] = ["NODE_FAIL"]
        if job["job_id"] == 38:
            job["state"]["current"] = ["REQUEUED"]
    return sacct.parse_json(json.dumps(doc))


def test_per_node_counts_and_the_node_that_takes_jobs_down():
    result = _window_with_a_bad_node()
    counts = sacct.per_node(result["jobs"])
    assert counts["fg-v012"]["states"] == {"FAILED": 1, "NODE_FAIL": 1, "REQUEUED": 1}
    job = {"id": "4127", "state": "FAILED", "nodes": ["node01"], "events": [],
           "accounting": dict(result, window={"since": "2024-05-20T00:00:00", "until": None})}
    checks = platform_checks({"job": job}, "job", hostmap={"fg-v012": "node07"}, thresholds={})
    flagged = [c for c in checks["checks"] if c["id"] == "job.sched.node_failures"]
    assert [(c["component"], c["status"], c["remedy"]) for c in flagged] == [("node fg-v012", "fail", "investigate")]
    assert "node07 took down 3 job(s)" in flagged[0]["message"] and "NODE_FAIL 1" in flagged[0]["message"]
    assert checks["summary"]["suspects"] == ["node07"]
    summary = [c for c in checks["checks"] if c["id"] == "job.sched.accounting"][0]
    assert summary["status"] == "pass" and "fg-v006: COMPLETED" not in summary["evidence"]
    assert "fg-v006: OUT_OF_MEMORY 1" in summary["evidence"]


def test_the_real_window_flags_no_node_and_a_higher_limit_none():
    result = parsed("25.05.2")
    job = {"id": "1", "state": "COMPLETED", "nodes": [], "events": [], "accounting": result}
    checks = platform_checks({"job": job}, "job", hostmap={}, thresholds={})["checks"]
    assert not [c for c in checks if c["id"] == "job.sched.node_failures"]
    edited = dict(_window_with_a_bad_node())
    job["accounting"] = edited
    checks = platform_checks({"job": job}, "job", hostmap={}, thresholds={"node_failures_max": 4})["checks"]
    assert not [c for c in checks if c["id"] == "job.sched.node_failures"]


def test_unread_lines_make_the_accounting_check_warn():
    lines = fixture_text(SNOWMAN).splitlines()
    lines.insert(3, "broken")
    result = sacct.parse_sacct("\n".join(lines), SNOWMAN_FIELDS, "\u2603")
    job = {"id": "1", "state": "COMPLETED", "nodes": [], "events": [], "accounting": result}
    checks = platform_checks({"job": job}, "job", hostmap={}, thresholds={})["checks"]
    summary = [c for c in checks if c["id"] == "job.sched.accounting"][0]
    assert summary["status"] == "warn" and "line 4 has 1 fields" in summary["message"]


def test_interruptions_lost_time_and_recovery_from_the_attempts():
    # 21.08: the requeued attempt, and (edit) its next attempt that started 600 s after it ended and completed
    doc = json.loads(fixture_text(JSON["21.08.8-2"]))
    again = copy.deepcopy(doc["jobs"][0])
    again["state"]["current"] = "COMPLETED"
    again["time"]["start"] = doc["jobs"][0]["time"]["end"] + 600
    again["time"]["end"] = again["time"]["start"] + 3600
    again["time"]["elapsed"] = 3600
    doc["jobs"].append(again)
    jobs = sacct.parse_json(json.dumps(doc))["jobs"]
    got = sacct.interruptions(jobs)
    assert got == {"jobs": 2, "interrupted": 1, "by_state": {"REQUEUED": 1}, "run_s": 86301 + 3600,
                   "lost_s": 86301, "recovery_s": [600]}


@FUZZ
@given(st.sampled_from(sorted(JSON.values())).flatmap(lambda path: json_mutations(json.loads(fixture_text(path)))))
def test_sacct_json_is_total(doc):
    assert_total("sacct.parse_json", sacct.parse_sacct, json_text(doc))


@FUZZ
@given(st.sampled_from(sorted(JSON.values())).flatmap(lambda path: text_mutations(fixture_text(path))))
def test_sacct_json_text_damage_is_total(text):
    assert_total("sacct.parse_json text", sacct.parse_sacct, text)


@FUZZ
@given(text_mutations(fixture_text(SNOWMAN)))
def test_sacct_parsable_is_total(text):
    assert_total("sacct.parse_parsable", sacct.parse_sacct, text, SNOWMAN_FIELDS, "\u2603")
