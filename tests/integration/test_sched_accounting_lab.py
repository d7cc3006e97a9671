# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Slurm's accounting on the lab (issue 23 item 4; lab/scenarios/sched-accounting.yml): the lab's real slurmctld
writes its job records to a real slurmdbd on a real MariaDB, and ``sacct`` is the real program on real lab jobs.

The jobs: on node01 one that completes; on node02 a training that is requeued by the operator while it runs and
whose second attempt dies of an uncorrectable ECC error (real lines), and two more that fail; on node03 one that runs
past its one-minute time limit. ``diagnose.yml -e zhisuan_job=<the training>`` reads ``sacct`` over the window (the
inventory's ``zhisuan_slurm_sacct``, written by labctl): node02 took three jobs down (``job.sched.node_failures``,
diagnosed in the same run), and the training's attempts in the accounting give the quality indicators (one
interruption, its recovery time). The time-out is read from the same ``sacct`` once Slurm has ended it: counted on
node03, never blamed on it."""

from __future__ import annotations

import calendar
import importlib.util
import os
import subprocess
import sys
import time

import pytest
import yaml

from .conftest import REPO, run_playbook

pytestmark = pytest.mark.skipif(
    not all(os.path.exists(p) for p in ("/usr/sbin/slurmctld", "/usr/sbin/slurmdbd", "/usr/sbin/mariadbd")),
    reason="slurm-wlm, slurmdbd and mariadb-server are not installed (tests/sysdeps.sh installs them)")

COLLECTION = os.path.join(REPO, "collections")
if COLLECTION not in sys.path:
    sys.path.insert(0, COLLECTION)

from ansible_collections.zhisuan.ops.plugins.module_utils._judge.job import judge_accounting  # noqa: E402
from ansible_collections.zhisuan.ops.plugins.module_utils._sched.job_collect import read_sacct  # noqa: E402


def _slurm_lab():
    spec = importlib.util.spec_from_file_location("zhisuan_lab_sched_slurm_acct", os.path.join(REPO, "lab", "sched",
                                                                                                "slurm_lab.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SLURM = _slurm_lab()
ECC = os.path.join(REPO, "tests", "fixtures", "joblog", "cuda-ecc-uncorrectable-sd-scripts-1434.log")


def _training_script(lab_dir):
    """The training: its first attempt prints a step and runs until it is requeued; the second (SLURM_RESTART_COUNT
    1) prints a step and the real ECC lines, then exits 1."""
    path = os.path.join(lab_dir, "slurm", "jobs", "train.sh")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("#!/bin/sh\n"
                     "# zhisuan lab test: a training requeued once, whose second attempt dies of an ECC error\n"
                     "echo \"iteration 10 | loss 2.31 | attempt ${SLURM_RESTART_COUNT:-0}\"\n"
                     "if [ \"${SLURM_RESTART_COUNT:-0}\" = 0 ]; then sleep 120; exit 0; fi\n"
                     "sleep 1\n"
                     f"cat {ECC}\n"
                     "exit 1\n")
    os.chmod(path, 0o755)
    return path


def _sacct(info, job=None):
    argv = [info["tools"]["sacct"], "-a", "-D", "-X", "-n", "-P", "--format=JobID,State,NodeList"]
    res = subprocess.run(argv + (["-j", job] if job else []), capture_output=True, text=True, timeout=30, check=False)
    assert res.returncode == 0, res.stderr
    return [line.split("|") for line in res.stdout.splitlines() if line]


def _wait_sacct(info, test, timeout=30.0):
    """slurmctld sends the job records to slurmdbd as they happen, not at once: poll sacct."""
    deadline = time.monotonic() + timeout
    while True:
        rows = _sacct(info)
        if test(rows) or time.monotonic() > deadline:
            return rows
        time.sleep(0.5)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("schedacct")
    lab_dir, inventory = str(tmp_path / "lab"), str(tmp_path / "hosts.yml")
    up = subprocess.run([sys.executable, os.path.join(REPO, "lab", "labctl.py"), "up", "--scenario",
                         os.path.join(REPO, "lab", "scenarios", "sched-accounting.yml"), "--dir", lab_dir,
                         "--inventory", inventory], capture_output=True, text=True, timeout=240, check=False)
    try:
        assert up.returncode == 0, up.stderr
        with open(os.path.join(lab_dir, "slurm", "lab.json"), encoding="utf-8") as handle:
            info = yaml.safe_load(handle)
        # the time-out first: Slurm keeps time limits in minutes and checks them every 30 s, so it ends in 60-90 s
        slow = SLURM.submit(lab_dir, SLURM.job_script(lab_dir, "slow", ["iteration 1 | loss 3.10"], hang_s=300),
                            "slow", nodes=["node03"], extra=["--time=1"])
        done = SLURM.submit(lab_dir, SLURM.job_script(lab_dir, "done", ["iteration 1 | loss 3.10"]), "done",
                            nodes=["node01"])
        train = SLURM.submit(lab_dir, _training_script(lab_dir), "train", nodes=["node02"], requeue=True)
        failed = [SLURM.submit(lab_dir, SLURM.job_script(lab_dir, "bad%d" % i, ["iteration 1 | loss nan"], exit_code=1),
                               "bad%d" % i, nodes=["node02"]) for i in (1, 2)]
        SLURM.wait_job(lab_dir, train, ("RUNNING",), timeout=30)
        SLURM.wait_job(lab_dir, slow, ("RUNNING",), timeout=30)
        time.sleep(1)  # the first attempt runs a moment before the operator requeues it
        SLURM.requeue(lab_dir, train, timeout=30)
        SLURM.wait_job(lab_dir, train, ("FAILED",), timeout=60)
        for job in failed:
            SLURM.wait_job(lab_dir, job, ("FAILED",), timeout=30)
        SLURM.wait_job(lab_dir, done, ("COMPLETED",), timeout=30)
        _wait_sacct(info, lambda rows: sum(1 for r in rows if r[0] == train) == 2
                    and all(any(r[0] == j and r[1] == "FAILED" for r in rows) for j in failed))
        yield {"dir": lab_dir, "inventory": inventory, "info": info, "train": train, "failed": failed, "done": done,
               "slow": slow, "log": os.path.join(lab_dir, "slurm", "jobs", "train-%s.out" % train)}
    finally:
        subprocess.run([sys.executable, os.path.join(REPO, "lab", "labctl.py"), "down", "--dir", lab_dir],
                       capture_output=True, timeout=120, check=False)


def test_the_lab_runs_slurmdbd_and_sacct_reads_its_real_jobs(lab):
    with open(lab["inventory"], encoding="utf-8") as handle:
        doc = yaml.safe_load(handle)
    hosts = doc["all"]["children"]["gpu_nodes"]["hosts"] if "all" in doc else doc["gpu_nodes"]["hosts"]
    assert all(hosts[h]["zhisuan_slurm_sacct"] == lab["info"]["tools"]["sacct"] for h in ("node01", "node02", "node03"))
    conf = open(lab["info"]["conf"], encoding="utf-8").read()
    assert "AccountingStorageType=accounting_storage/slurmdbd\n" in conf
    assert oct(os.stat(lab["info"]["accounting"]["slurmdbd_conf"]).st_mode & 0o777) == "0o600"
    rows = _sacct(lab["info"])
    assert [r[1] for r in rows if r[0] == lab["train"]] == ["REQUEUED", "FAILED"]
    assert [r[1:] for r in rows if r[0] == lab["done"]] == [["COMPLETED", "node01"]]


def test_diagnose_reads_sacct_names_the_node_that_takes_jobs_down_and_the_quality_indicators(tmp_path, lab):
    runner, document = run_playbook(tmp_path, "diagnose.yml", lab["inventory"], extravars={
        "zhisuan_job": lab["train"], "zhisuan_job_log": lab["log"]})
    assert runner.rc == 0, runner.stdout.read()
    cluster = dict((c["id"], c) for c in document["cluster"]["checks"] if c["id"] != "job.sched.node_failures")
    flagged = [c for c in document["cluster"]["checks"] if c["id"] == "job.sched.node_failures"]
    # node02: the requeued training (its two attempts are one job), bad1 and bad2
    assert [(c["component"], c["status"], c["remedy"]) for c in flagged] == [("node node02", "fail", "investigate")]
    for job in [lab["train"]] + lab["failed"]:
        assert job in flagged[0]["message"]
    assert "diagnose it in this run" in flagged[0]["message"]
    accounting = cluster["job.sched.accounting"]
    assert accounting["status"] == "pass" and "sacct json (Slurm 22.05.8)" in accounting["message"]
    assert "node01: COMPLETED 1" in accounting["evidence"]
    job = document["cluster"]["job"]
    assert job["classification"] == "ecc" and "node02" in job["suspects"]
    # node02 was diagnosed in the same run (the node checks ran on it)
    assert any(c["id"].startswith("gpu.") for c in document["hosts"]["node02"]["checks"])
    quality = document["cluster"]["quality"]
    effective, recovery = quality["effective_training_time"], quality["task_recovery_time"]
    # the training's two attempts, as the real sacct -D wrote them
    attempts = effective["inputs"]["attempts"]
    assert [(a["id"], a["state"]) for a in attempts] == [(lab["train"], "REQUEUED"), (lab["train"], "FAILED")]
    assert effective["interruptions"] == 1 and effective["value"] is not None

    def epoch(text):
        return calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%S"))
    assert recovery["value"] == epoch(attempts[1]["start"]) - epoch(attempts[0]["end"])


def test_a_timeout_in_the_real_accounting_is_counted_and_not_blamed_on_the_node(lab):
    rows = _wait_sacct(lab["info"], lambda rows: any(r[0] == lab["slow"] and r[1] == "TIMEOUT" for r in rows),
                       timeout=150)
    assert [r[1:] for r in rows if r[0] == lab["slow"]] == [["TIMEOUT", "node03"]]
    accounting = read_sacct(lab["info"]["tools"]["sacct"], "now-1hour", timeout=60)
    assert (accounting["form"], accounting["version"], accounting["warnings"]) == ("json", "22.05.8", [])
    checks = []
    flagged = judge_accounting(checks, accounting, {}, {"node01": "node01", "node02": "node02", "node03": "node03"})
    assert flagged == ["node02"]
    summary = [c for c in checks if c["id"] == "job.sched.accounting"][0]
    assert "node03: TIMEOUT 1" in summary["evidence"]
    assert not [c for c in checks if c["id"] == "job.sched.node_failures" and "node03" in c["component"]]
