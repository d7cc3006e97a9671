# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""zhisuan.ops.scheduler_node as Ansible runs it, against a real Slurm: the lab's slurmctld, one slurmd per node and
munge (lab/sched/slurm_lab.py), started in a tmp dir for this file and stopped after it, reached through the lab's
scontrol/squeue wrappers (they only set SLURM_CONF and exec the real clients)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import time

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.zhisuan.ops.plugins.modules import scheduler_node

pytestmark = pytest.mark.usefixtures("as_node")

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
NODES = ["node%02d" % i for i in range(1, 11)]
OPERATOR = "fan replacement, ticket OPS-1432"


def _load_lab():
    spec = importlib.util.spec_from_file_location("zhisuan_lab_sched_slurm", os.path.join(REPO, "lab", "sched", "slurm_lab.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


LAB = _load_lab()


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    lab_dir = tmp_path_factory.mktemp("slurmlab")
    info = LAB.start(str(lab_dir), NODES)
    yield info
    LAB.stop(str(lab_dir))
    assert LAB._marked_pids(info["dir"]) == []  # pylint: disable=protected-access
    assert not os.path.exists(info["run_dir"])


def slurm(lab, *args, check=True):
    res = subprocess.run([lab["tools"][args[0]]] + list(args[1:]), capture_output=True, text=True, timeout=30, check=False)
    if check:
        assert res.returncode == 0, res.stderr
    return res


def show(lab, name):
    """(State, Reason) as scontrol prints them."""
    line = slurm(lab, "scontrol", "-o", "show", "node", name).stdout
    state = line.split(" State=")[1].split()[0]
    reason = line.split(" Reason=")[1].rsplit(" [", 1)[0] if " Reason=" in line else None
    return state, reason


def run(lab, capsys, check_mode=False, **args):
    params = dict({"scontrol_path": lab["tools"]["scontrol"]}, **args)
    if check_mode:
        params["_ansible_check_mode"] = True
    with patch_module_args(params):
        with pytest.raises(SystemExit) as info:
            scheduler_node.main()
    return info.value.code, json.loads(capsys.readouterr().out)


def submit(lab, node, seconds):
    out = slurm(lab, "sbatch", "-w", node, "-J", "zs-test", "-o", "/dev/null", "--wrap", "sleep %d" % seconds).stdout
    job = out.split()[-1]
    for _ in range(100):  # until slurmctld has started it
        if slurm(lab, "squeue", "-h", "-j", job, "-t", "RUNNING", "-o", "%i").stdout.strip() == job:
            return job
        time.sleep(0.1)
    raise AssertionError("job %s did not start on %s" % (job, node))


def test_drain_with_our_reason_then_again_is_a_no_op(lab, capsys):
    code, out = run(lab, capsys, name="node01", state="drained", reason="gpu.ecc.volatile_uncorrectable (run r1)")
    assert code == 0 and out["changed"] is True and out["action"] == "drained"
    assert out["msg"] == "drained node01 (reason 'zhisuan: gpu.ecc.volatile_uncorrectable (run r1)')"
    node = out["node"]
    assert (node["name"], node["scheduler"], node["state"], node["drain"], node["drained_by_us"], node["jobs_running"]) == (
        "node01", "slurm", "drained", True, True, 0)
    assert node["reason"] == "zhisuan: gpu.ecc.volatile_uncorrectable (run r1)" and node["reason_user"]
    assert show(lab, "node01") == ("IDLE+DRAIN", "zhisuan: gpu.ecc.volatile_uncorrectable (run r1)")
    assert out["diff"]["before"]["state"] == "idle" and out["diff"]["after"]["state"] == "drained"

    code, out = run(lab, capsys, name="node01", state="drained", reason="another check (run r2)")
    assert code == 0 and out["changed"] is False and out["action"] == "none"
    assert out["msg"].startswith("node01 is already drained by zhisuan (reason 'zhisuan: gpu.ecc.volatile_uncorrectable (run r1)' set by ")
    assert show(lab, "node01") == ("IDLE+DRAIN", "zhisuan: gpu.ecc.volatile_uncorrectable (run r1)")


def test_drain_of_an_operator_drained_node_is_refused_and_the_reason_kept(lab, capsys):
    slurm(lab, "scontrol", "update", "NodeName=node02", "State=DRAIN", "Reason=" + OPERATOR)
    code, out = run(lab, capsys, name="node02", state="drained", reason="xid.79 (run r1)")
    assert code == 0 and out.get("failed") is None
    assert out["changed"] is False and out["action"] == "refused"
    assert out["node"]["drained_by_other"] is True and out["node"]["drained_by_us"] is False
    assert out["msg"].startswith("node02 is already drained by someone else (reason '%s' set by " % OPERATOR)
    assert out["msg"].endswith("; left as it is, the reason is kept")
    assert show(lab, "node02") == ("IDLE+DRAIN", OPERATOR)

    code, out = run(lab, capsys, name="node02", state="drained", reason="xid.79 (run r1)", strict=True)
    assert code == 1 and out["failed"] is True and out["action"] == "refused" and out["changed"] is False
    assert show(lab, "node02") == ("IDLE+DRAIN", OPERATOR)


def test_resume_of_our_drain_returns_an_idle_node(lab, capsys):
    run(lab, capsys, name="node03", state="drained", reason="gpu.pcie.link_width (run r1)")
    assert show(lab, "node03")[0] == "IDLE+DRAIN"
    code, out = run(lab, capsys, name="node03", state="resumed")
    assert code == 0 and out["changed"] is True and out["action"] == "resumed" and out["msg"] == "resumed node03"
    # polled past the idle* (NOT_RESPONDING) that follows a resume
    assert (out["node"]["state"], out["node"]["drain"], out["node"]["responding"], out["node"]["reason"]) == ("idle", False, True, None)
    assert "warnings" not in out
    assert show(lab, "node03") == ("IDLE", None)

    code, out = run(lab, capsys, name="node03", state="resumed")  # not drained: read first, no scontrol error
    assert code == 0 and out["changed"] is False and out["action"] == "none"
    assert out["msg"] == "node03 is not drained (idle); nothing to resume"


def test_resume_of_an_operator_drained_node_is_refused(lab, capsys):
    slurm(lab, "scontrol", "update", "NodeName=node04", "State=DRAIN", "Reason=" + OPERATOR)
    code, out = run(lab, capsys, name="node04", state="resumed")
    assert code == 0 and out["changed"] is False and out["action"] == "refused"
    assert out["msg"].startswith("refused to resume node04: it was drained by someone else (reason '%s' set by " % OPERATOR)
    assert out["msg"].endswith("), not by zhisuan; resume it by hand once that work is done")
    assert show(lab, "node04") == ("IDLE+DRAIN", OPERATOR)
    code, out = run(lab, capsys, name="node04", state="resumed", strict=True)
    assert code == 1 and out["failed"] is True and out["msg"].startswith("refused to resume node04")
    assert show(lab, "node04") == ("IDLE+DRAIN", OPERATOR)


def test_resume_of_a_down_node_is_refused(lab, capsys):
    slurm(lab, "scontrol", "update", "NodeName=node05", "State=DOWN", "Reason=operator: PSU swap")
    code, out = run(lab, capsys, name="node05", state="resumed")
    assert code == 0 and out["action"] == "refused" and out["changed"] is False
    assert out["msg"].startswith("refused to resume node05: it is down (reason 'operator: PSU swap' set by ")
    assert show(lab, "node05") == ("DOWN", "operator: PSU swap")


def test_check_mode_changes_nothing(lab, capsys):
    before = show(lab, "node06")
    code, out = run(lab, capsys, check_mode=True, name="node06", state="drained", reason="gpu.ecc (run r1)")
    assert code == 0 and out["changed"] is True and out["action"] == "drained" and out["msg"] == "check mode: would drain node06"
    assert show(lab, "node06") == before == ("IDLE", None)

    run(lab, capsys, name="node06", state="drained", reason="gpu.ecc (run r1)")
    drained = show(lab, "node06")
    code, out = run(lab, capsys, check_mode=True, name="node06", state="resumed")
    assert code == 0 and out["changed"] is True and out["action"] == "resumed" and out["msg"] == "check mode: would resume node06"
    assert out["node"]["state"] == "drained"
    assert show(lab, "node06") == drained == ("IDLE+DRAIN", "zhisuan: gpu.ecc (run r1)")


def test_a_node_with_a_running_job_is_draining_until_the_job_ends(lab, capsys):
    job = submit(lab, "node07", 8)  # long enough to still run after a module run on a loaded machine
    code, out = run(lab, capsys, name="node07", state="drained", reason="xid.79 (run r1)")
    assert code == 0 and out["changed"] is True
    assert (out["node"]["state"], out["node"]["jobs_running"], out["node"]["drained_by_us"]) == ("draining", 1, True)
    assert show(lab, "node07")[0] in ("MIXED+DRAIN", "ALLOCATED+DRAIN")

    code, out = run(lab, capsys, name="node07", state="drained", reason="xid.79 (run r1)", wait_drained=True, timeout=60)
    assert code == 0 and out["changed"] is False and out["action"] == "none"
    assert (out["node"]["state"], out["node"]["jobs_running"]) == ("drained", 0)
    assert out["msg"].endswith("; no jobs run on it")
    assert show(lab, "node07") == ("IDLE+DRAIN", "zhisuan: xid.79 (run r1)")
    assert slurm(lab, "squeue", "-h", "-j", job, "-o", "%i", check=False).stdout.strip() in ("", job)


def test_wait_drained_that_runs_out_fails_and_the_node_stays_drained(lab, capsys):
    job = submit(lab, "node08", 120)
    try:
        code, out = run(lab, capsys, name="node08", state="drained", reason="xid.79 (run r1)", wait_drained=True, timeout=1)
        assert code == 1 and out["failed"] is True and out["changed"] is True and out["action"] == "drained"
        assert out["error_kind"] == "timed_out"
        assert out["msg"] == ("scontrol: node08 is still draining after 1 s with 1 job(s) running; it stays drained (no new work "
                              "starts on it): wait longer or stop the jobs")
        assert show(lab, "node08")[0] in ("MIXED+DRAIN", "ALLOCATED+DRAIN")
    finally:
        slurm(lab, "scancel", job)


def test_info_reads_only(lab, capsys):
    code, out = run(lab, capsys, name="node09")
    assert code == 0 and out["changed"] is False and out["action"] == "none" and out["msg"] == "node09 is idle"
    assert sorted(out["node"]) == ["drain", "drained_by_other", "drained_by_us", "jobs_running", "name", "raw_state", "reason",
                                   "reason_time", "reason_user", "responding", "scheduler", "state"]
    assert show(lab, "node09") == ("IDLE", None)


def test_unknown_node_fails_with_scontrol_words(lab, capsys):
    code, out = run(lab, capsys, name="nodeXX", state="drained", reason="x")
    assert code == 1 and out["failed"] is True and out["error_kind"] == "failed"
    assert out["msg"] == "scontrol: node nodeXX is not known to slurmctld (Node nodeXX not found)"


def test_missing_scontrol(lab, capsys, tmp_path):
    code, out = run(lab, capsys, name="node10", scontrol_path=str(tmp_path / "scontrol"))
    assert code == 1 and out["error_kind"] == "not_found"
    assert out["msg"] == "scontrol: not found at %s" % (tmp_path / "scontrol")


def test_check_mode_diff_shows_the_state_the_change_would_leave(lab, capsys):
    code, out = run(lab, capsys, check_mode=True, name="node09", state="drained", reason="gpu.ecc (run r2)")
    before, after = out["diff"]["before"], out["diff"]["after"]
    assert code == 0 and out["changed"] is True and show(lab, "node09") == ("IDLE", None)
    assert (before["state"], before["drain"], before["reason"]) == ("idle", False, None)
    assert (after["state"], after["drain"], after["reason"], after["drained_by_us"]) == (
        "drained", True, "zhisuan: gpu.ecc (run r2)", True)
    assert out["node"] == before

    run(lab, capsys, name="node09", state="drained", reason="gpu.ecc (run r2)")
    code, out = run(lab, capsys, check_mode=True, name="node09", state="resumed")
    before, after = out["diff"]["before"], out["diff"]["after"]
    assert code == 0 and out["changed"] is True and show(lab, "node09") == ("IDLE+DRAIN", "zhisuan: gpu.ecc (run r2)")
    assert (before["state"], before["drained_by_us"]) == ("drained", True)
    assert (after["state"], after["drain"], after["reason"], after["reason_user"], after["drained_by_us"]) == (
        "idle", False, None, None, False)
    code, out = run(lab, capsys, name="node09", state="resumed")
    assert code == 0 and out["node"]["state"] == "idle" and show(lab, "node09") == ("IDLE", None)
