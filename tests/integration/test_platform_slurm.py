# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The slurm and job families against the lab's REAL Slurm 22.05 (slurmctld, one slurmd per node, munge:
lab/sched/slurm_lab.py): real nodes drained by us and by an operator and one down, real jobs whose output files hold
real log lines (tests/fixtures/joblog, replayed by the job), the real jobcomp/filetxt completion log."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import time

import pytest
import yaml

from .conftest import REPO, run_playbook

pytestmark = pytest.mark.skipif(shutil.which("slurmctld") is None and not os.path.exists("/usr/sbin/slurmctld"),
                                reason="slurm-wlm is not installed")
NODES = ["node01", "node02", "node03", "node04", "node05"]
PLAYBOOK = os.path.join(REPO, "tests", "integration", "playbooks", "platform.yml")


def _lab_module():
    spec = importlib.util.spec_from_file_location("zhisuan_lab_sched_slurm_platform", os.path.join(REPO, "lab", "sched", "slurm_lab.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


LAB = _lab_module()


def fixture_lines(name):
    with open(os.path.join(REPO, "tests", "fixtures", "joblog", name), encoding="utf-8") as handle:
        return handle.read().splitlines()


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    lab_dir = str(tmp_path_factory.mktemp("platformlab"))
    info = LAB.start(lab_dir, NODES)
    # job A: the real watchdog-timeout lines and a real IB completion error, its host and peer edited to the lab's
    # node01 and node04's IB address; exits 1 like a job the watchdog took down
    ib = [line.replace("kp-ddp-worker-0", "node01").replace("10.216.210.236", "10.0.4.1")
          for line in fixture_lines("nccl-ib-completion-status12-nccl-1405.log")]
    script = LAB.job_script(lab_dir, "train-a", ["iteration 10 | loss 2.31"] + ib + fixture_lines("pytorch-watchdog-timeout-basicsr-737.log"),
                            interval=0.02, exit_code=1)
    job_a = LAB.submit(lab_dir, script, "train-a", nodes=["node01", "node04"])
    LAB.wait_job(lab_dir, job_a, ("FAILED",), timeout=30)
    # job B: two lines, then silence while it runs (a hang)
    script = LAB.job_script(lab_dir, "train-b", ["iteration 1 | loss 2.90", "iteration 2 | loss 2.85"], interval=0.02, hang_s=300)
    job_b = LAB.submit(lab_dir, script, "train-b", nodes=["node02"])
    LAB.wait_job(lab_dir, job_b, ("RUNNING",))
    scontrol = info["tools"]["scontrol"]
    import subprocess  # pylint: disable=import-outside-toplevel
    for argv in (["NodeName=node02", "State=DRAIN", "Reason=zhisuan: xid.79 (run r1)"],
                 ["NodeName=node03", "State=DRAIN", "Reason=fan replacement OPS-1432"],
                 ["NodeName=node05", "State=DOWN", "Reason=PSU swap"]):
        subprocess.run([scontrol, "update"] + argv, check=True, capture_output=True, timeout=30)
    time.sleep(3)  # job B's log is now silent for longer than the threshold below
    info.update(job_a=job_a, job_b=job_b, lab_dir=lab_dir)
    yield info
    LAB.stop(lab_dir)


def inventory(tmp_path, lab):
    hosts = {}
    for i, name in enumerate(NODES, 1):
        hosts[name] = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                       "zhisuan_ib_addresses": ["10.0.%d.1" % i]}
    doc = {"gpu_nodes": {"hosts": hosts, "vars": {
        "zhisuan_scheduler": "slurm", "zhisuan_tools": {"scontrol": lab["tools"]["scontrol"]},
        "zhisuan_expected": {"gpu_count": 8}, "zhisuan_slurm_jobcomp": lab["jobcomp"],
        # no peak_tflops: the MFU's dense peak is the A100 profile's peak_tflops.bf16_dense (312)
        "zhisuan_gpu_profile": "A100", "zhisuan_quality": {"throughput": 30000, "flops_per_unit": 4.2e10, "gpus": 16}}}}
    path = tmp_path / "hosts.yml"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def by_id(checks):
    return dict((c["id"], c) for c in checks)


def test_slurm_family_and_a_job_killed_by_an_nccl_timeout(tmp_path, lab):
    runner, document = run_playbook(tmp_path, PLAYBOOK, inventory(tmp_path, lab), extravars={
        "zhisuan_job": lab["job_a"], "zhisuan_test_kind": "diagnose", "zhisuan_test_families": ["slurm", "job"],
        # slurmctld forgets the job 30 s after its end (the lab's MinJobAge): then its output file is given
        "zhisuan_job_log": os.path.join(lab["jobs_dir"], "train-a-%s.out" % lab["job_a"]),
        "check_job_thresholds": {"hang_after_s": 2}})
    assert runner.rc == 0, runner.stdout.read()
    assert document is not None, runner.stdout.read()[-4000:]
    state = dict((host, by_id(document["hosts"][host]["checks"])["slurm.node.state"]) for host in NODES)
    assert state["node01"]["status"] == "pass" and state["node04"]["status"] == "pass"
    assert (state["node02"]["status"], state["node02"]["remedy"], state["node02"]["observed"]) == ("warn", "monitor", "draining")
    assert (state["node03"]["status"], state["node03"]["remedy"]) == ("warn", "investigate")
    assert "fan replacement OPS-1432" in state["node03"]["message"]
    assert (state["node05"]["status"], state["node05"]["remedy"]) == ("fail", "investigate")
    assert all(by_id(document["hosts"][h]["checks"])["slurm.gres.gpu"]["status"] == "pass" for h in NODES)
    cluster = by_id(document["cluster"]["checks"])
    assert cluster["slurm.cluster.nodes"]["status"] == "fail" and cluster["slurm.partition.gpu.gpus"]["observed"] == 16
    assert document["cluster"]["slurm"]["availability"] == 0.4
    assert "job.nccl.timeout" in cluster, (sorted(cluster), runner.stdout.read()[-6000:])
    timeout = cluster["job.nccl.timeout"]
    assert timeout["status"] == "fail" and "node01 -> peer node04" in timeout["message"]
    assert "IBV_WC_RETRY_EXC_ERR" in cluster["job.nccl.error"]["message"]
    assert cluster["job.scheduler.state"]["observed"] == "FAILED"
    job = document["cluster"]["job"]
    assert (job["classification"], job["suspects"], job["ranks"]) == ("nccl_timeout", ["node01", "node04"], [0, 1, 2])
    quality = document["cluster"]["quality"]
    assert quality["effective_training_time"]["value"] is not None and quality["effective_training_time"]["inputs"]["attempts"]
    assert quality["cluster_compute_availability"]["value"] == 0.4
    assert quality["mfu"]["value"] == pytest.approx(30000 * 4.2e10 / (16 * 312e12), abs=1e-4)
    assert quality["mfu"]["inputs"]["peak_tflops_dense"] == 312
    assert quality["mfu"]["inputs"]["peak_tflops_source"] == "profile a100 peak_tflops.bf16_dense"


def test_a_silent_running_job_is_a_hang(tmp_path, lab):
    runner, document = run_playbook(tmp_path, PLAYBOOK, inventory(tmp_path, lab), extravars={
        "zhisuan_job": lab["job_b"], "zhisuan_test_kind": "diagnose", "zhisuan_test_families": ["job"],
        "check_job_thresholds": {"hang_after_s": 2}})
    assert runner.rc == 0, runner.stdout.read()
    cluster = by_id(document["cluster"]["checks"])
    assert cluster["job.progress.hang"]["status"] == "fail" and cluster["job.scheduler.state"]["observed"] == "RUNNING"
    assert document["cluster"]["job"]["classification"] == "hang" and document["cluster"]["job"]["suspects"] == ["node02"]
    # no slurm family in this run: the job's role read the nodes for the availability (node01, node04 of five usable)
    assert document["cluster"]["quality"]["cluster_compute_availability"]["value"] == 0.4
    assert not [c for c in document["cluster"]["checks"] if c["id"].startswith("slurm.")]


def test_a_job_slurmctld_has_forgotten_is_read_from_the_completion_log(lab):
    """slurmctld purges a finished job MinJobAge (30 s in the lab) after its end; the completion log still has it."""
    from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ToolFailed  # pylint: disable=import-outside-toplevel
    from ansible_collections.zhisuan.ops.plugins.module_utils._sched.job_collect import slurm_job  # pylint: disable=import-outside-toplevel
    scontrol = lab["tools"]["scontrol"]
    import subprocess  # pylint: disable=import-outside-toplevel
    deadline = time.monotonic() + 150
    while time.monotonic() < deadline:
        res = subprocess.run([scontrol, "-o", "show", "job", lab["job_a"]], capture_output=True, text=True, timeout=30, check=False)
        if res.returncode != 0:
            break
        time.sleep(2)
    assert "Invalid job id specified" in res.stderr
    with pytest.raises(ToolFailed) as info:
        slurm_job(lab["job_a"], scontrol, jobcomp=lab["jobcomp"])
    assert "no log_path was given" in str(info.value)
    out = os.path.join(lab["jobs_dir"], "train-a-%s.out" % lab["job_a"])
    job = slurm_job(lab["job_a"], scontrol, jobcomp=lab["jobcomp"], log_path=out)
    assert (job["source"], job["state"], job["nodes"]) == ("jobcomp", "FAILED", ["node01", "node04"])
    assert [e["kind"] for e in job["events"]].count("nccl_timeout") == 3
