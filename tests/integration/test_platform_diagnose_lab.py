# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""diagnose.yml -e zhisuan_job=<id> on the lab (lab/scenarios/platform-jobs.yml: four nodes under the lab's real Slurm,
node04's IB port mlx5_4 down): a real Slurm job across node01 and node04 dies on an NCCL watchdog timeout, its log
(real lines, the IB completion line's host and peer edited to node01 and node04's address) is classified, node04 is
named, and node04's RDMA checks fail with check_cable - one run, one results.json and report. And acceptance.yml
--tags slurm judges the lab's nodes through the real slurmctld. Then (issue 23) a real job whose log is NCCL 2.27.3's
own RAS report (the outlier's address edited to node02's) gets node02, and only node02, diagnosed in the same run;
and a real job that dies of NCCL's CUDA out-of-memory is the application's fault: no node diagnosed, no hardware
remedy."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest
import yaml

from .conftest import REPO, run_playbook, start_lab

pytestmark = pytest.mark.skipif(not os.path.exists("/usr/sbin/slurmctld"), reason="slurm-wlm is not installed")


def _slurm_lab():
    spec = importlib.util.spec_from_file_location("zhisuan_lab_sched_slurm_diag", os.path.join(REPO, "lab", "sched", "slurm_lab.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SLURM = _slurm_lab()


def lines(name):
    with open(os.path.join(REPO, "tests", "fixtures", "joblog", name), encoding="utf-8") as handle:
        return handle.read().splitlines()


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("platformdiag")
    inventory = start_lab(tmp_path, "platform-jobs.yml")
    lab_dir = str(tmp_path / "lab")
    try:
        doc = yaml.safe_load(open(inventory, encoding="utf-8"))
        hosts = doc["all"]["children"]["gpu_nodes"]["hosts"] if "all" in doc else doc["gpu_nodes"]["hosts"]
        hosts["node04"]["zhisuan_ib_addresses"] = ["10.0.4.1"]  # the address node04's IB port would have
        hosts["node02"]["zhisuan_ib_addresses"] = ["10.0.2.1"]  # the address the RAS report's outlier is edited to
        with open(inventory, "w", encoding="utf-8") as handle:
            yaml.safe_dump(doc, handle)
        ib = [line.replace("kp-ddp-worker-0", "node01").replace("10.216.210.236", "10.0.4.1")
              for line in lines("nccl-ib-completion-status12-nccl-1405.log")]
        script = SLURM.job_script(lab_dir, "pretrain", ["iteration 120 | loss 2.07"] + ib
                                  + lines("pytorch-watchdog-timeout-basicsr-737.log"), interval=0.02, exit_code=1)
        job = SLURM.submit(lab_dir, script, "pretrain", nodes=["node01", "node04"])
        SLURM.wait_job(lab_dir, job, ("FAILED",), timeout=30)
        yield {"inventory": inventory, "job": job, "jobcomp": os.path.join(lab_dir, "slurm", "log", "jobcomp.txt"),
               "dir": lab_dir, "log": os.path.join(lab_dir, "slurm", "jobs", "pretrain-%s.out" % job)}
    finally:
        subprocess.run([sys.executable, os.path.join(REPO, "lab", "labctl.py"), "down", "--dir", lab_dir],
                       capture_output=True, timeout=120, check=False)


def test_a_job_killed_by_an_nccl_timeout_ends_on_the_downed_ib_port(tmp_path, lab):
    runner, document = run_playbook(tmp_path, "diagnose.yml", lab["inventory"], extravars={
        "zhisuan_job": lab["job"], "zhisuan_slurm_jobcomp": lab["jobcomp"], "zhisuan_job_log": lab["log"]})
    assert runner.rc == 0, runner.stdout.read()
    assert "job" in document["run"]["families"]
    cluster = dict((c["id"], c) for c in document["cluster"]["checks"])
    job = document["cluster"]["job"]
    assert (job["classification"], job["suspects"]) == ("nccl_timeout", ["node01", "node04"])
    assert "node01 -> peer node04" in cluster["job.nccl.timeout"]["message"]
    port = [c for c in document["hosts"]["node04"]["checks"] if c["id"] == "rdma.port.state" and c["status"] == "fail"]
    assert [(c["component"], c["remedy"]) for c in port] == [("mlx5_4 port 1", "check_cable")]
    # node01 was named too: its ports were read and are up; the nodes the job does not name get no RDMA checks
    assert all(c["status"] == "pass" for c in document["hosts"]["node01"]["checks"] if c["id"] == "rdma.port.state")
    assert not [c for c in document["hosts"]["node02"]["checks"] if c["id"].startswith("rdma.")]
    quality = document["cluster"]["quality"]
    assert quality["effective_training_time"]["value"] is not None and quality["effective_training_time"]["interruptions"] == 0
    # the job's run read the scheduler's nodes itself (no slurm family in a diagnose run): all four usable
    assert quality["cluster_compute_availability"]["value"] == 1.0
    assert quality["cluster_compute_availability"]["inputs"]["source"] == "slurm"
    report = os.path.join(os.path.dirname(runner.config.artifact_dir), os.pardir)  # the run's report is rendered
    assert runner.status == "successful" and os.path.isdir(report)


def test_acceptance_tags_slurm_judges_the_lab_nodes(tmp_path, lab):
    runner, document = run_playbook(tmp_path, "acceptance.yml", lab["inventory"], tags="slurm")
    assert runner.rc == 0, runner.stdout.read()
    assert document["run"]["families"] == ["slurm"]
    for host in ("node01", "node02", "node03", "node04"):
        ids = dict((c["id"], c["status"]) for c in document["hosts"][host]["checks"])
        assert ids["slurm.node.state"] == "pass" and ids["slurm.gres.gpu"] == "pass", (host, ids)
    cluster = dict((c["id"], c) for c in document["cluster"]["checks"])
    assert cluster["slurm.cluster.gpus"]["status"] == "pass" and document["cluster"]["slurm"]["availability"] == 1.0


def _failed_job(lab, name, log_lines, nodes):
    script = SLURM.job_script(lab["dir"], name, ["iteration 40 | loss 2.31"] + log_lines, interval=0.02, exit_code=1)
    job = SLURM.submit(lab["dir"], script, name, nodes=nodes)
    SLURM.wait_job(lab["dir"], job, ("FAILED",), timeout=30)
    return job, os.path.join(lab["dir"], "slurm", "jobs", "%s-%s.out" % (name, job))


def _diagnose(tmp_path, lab, job, log):
    runner, document = run_playbook(tmp_path, "diagnose.yml", lab["inventory"], extravars={
        "zhisuan_job": job, "zhisuan_slurm_jobcomp": lab["jobcomp"], "zhisuan_job_log": log})
    assert runner.rc == 0, runner.stdout.read()
    return document, dict((c["id"], c) for c in document["cluster"]["checks"])


def _rdma_checked(document, host):
    return [c for c in document["hosts"][host]["checks"] if c["id"].startswith("rdma.")]


def test_the_outlier_node_of_an_nccl_ras_report_is_diagnosed_in_the_same_run(tmp_path, lab):
    ras = [line.replace("10.4.109.13", "10.0.2.1")
           for line in lines("nccl-ras-outlier-incomplete-2.27.3-nccl-1762.log")]
    job, log = _failed_job(lab, "ras-train", ras, ["node01", "node02"])
    document, cluster = _diagnose(tmp_path, lab, job, log)
    summary = document["cluster"]["job"]
    assert (summary["classification"], summary["suspects"]) == ("ras", ["node02"])
    assert (cluster["job.nccl.ras"]["status"], cluster["job.nccl.ras"]["remedy"]) == ("fail", "investigate")
    assert "outlier node node02" in cluster["job.nccl.ras"]["message"]
    # node02 got its node checks in this run (its IB ports are up in this lab); node01, in the job but not named, not
    assert _rdma_checked(document, "node02") and all(c["status"] == "pass" for c in _rdma_checked(document, "node02")
                                                     if c["id"] == "rdma.port.state")
    assert not _rdma_checked(document, "node01") and not _rdma_checked(document, "node04")


def test_a_job_that_dies_of_a_cuda_oom_in_nccl_sends_no_node_to_hardware_diagnosis(tmp_path, lab):
    job, log = _failed_job(lab, "oom-train", lines("nccl-cuda-oom-calloc-nccl-1235.log"), ["node01", "node03"])
    document, cluster = _diagnose(tmp_path, lab, job, log)
    summary = document["cluster"]["job"]
    assert (summary["classification"], summary["suspects"]) == ("oom", [])
    assert cluster["job.memory.oom"]["remedy"] == "restart_app"
    assert not [c for c in cluster.values() if c["remedy"] in ("check_cable", "reset_gpu", "drain", "rma")]
    assert not any(_rdma_checked(document, host) for host in ("node01", "node02", "node03", "node04"))
