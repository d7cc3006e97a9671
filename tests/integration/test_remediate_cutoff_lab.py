# SPDX-License-Identifier: GPL-3.0-or-later
"""A remediation cut off after its action, on the lab with a real Slurm (issue 25). The cut-off is the one AWX makes:
the job is run by ansible-runner and cancelled through its cancel callback, which kills the playbook's whole process
group (SIGKILL: no handler, no end-of-play task runs) - here as soon as the history holds node03's GPU reset, i.e.
after the reset and before the verification and the resume. What that leaves: node03 repaired but drained with our
mark. Then: an inspection with the default families reports it (remediate.stranded.node03); the next remediate run
verifies it and resumes it, taking no second slot; the history holds the cut-off run's reset, and escalation counts
it. One lab node acts (the scenario's node03)."""

from __future__ import annotations

import datetime
import json
import os

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._remediate import history as remediation_history
from ansible_collections.zhisuan.ops.plugins.module_utils._remediate.escalate import tries
from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import validate

from .conftest import REPO
from .test_remediate_lab import FAST, Lab, remediation

CAUSE = "gpu.ecc.volatile_uncorrectable"
MARK = "zhisuan:%s run cut-run" % CAUSE


def _run(tmp_path, playbook, inventory, run_id, extra, cancel=None, limit="node03"):
    """The playbook as AWX runs it (ansible-runner, extra vars, its own run id): (runner, results or None)."""
    import ansible_runner

    out_root = tmp_path / "out"
    private = tmp_path / ("runner-" + run_id)
    private.mkdir(parents=True, exist_ok=True)
    runner = ansible_runner.run(
        private_data_dir=str(private), playbook=os.path.join(REPO, "playbooks", playbook), inventory=inventory,
        extravars=dict(extra, results_out_root=str(out_root), zhisuan_run_id=run_id), limit=limit, quiet=True,
        cancel_callback=cancel, settings={"pexpect_timeout": 0.2},
        envvars={"ANSIBLE_CONFIG": os.path.join(REPO, "ansible.cfg"), "PATH": os.environ["PATH"]}, timeout=600)
    path = out_root / run_id / "results.json"
    return runner, (json.loads(path.read_text()) if path.exists() else None)


@pytest.fixture(scope="module")
def cutoff(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("cutoff")
    lab = Lab(tmp_path, "remediate.yml")
    history_dir = tmp_path / "history"
    log = history_dir / remediation_history.FILE_NAME
    extra = dict(FAST, zhisuan_history_dir=str(history_dir))

    def reset_recorded():
        # AWX's cancel, at the moment the reset is in the history (the action returned; verification next)
        return log.exists() and any(r["outcome"] == "acted" for r in remediation_history.read(str(log), raw=True))
    try:
        cut = _run(tmp_path, "remediate.yml", lab.inventory, "cut-run", extra, cancel=reset_recorded)
        after_cut = (lab.nodes()["node03"], lab.faults("node03"), remediation_history.read(str(log), raw=True))
        inspected = _run(tmp_path, "inspect.yml", lab.inventory, "inspect-run", {"zhisuan_history_dir": str(history_dir)})
        nxt = _run(tmp_path, "remediate.yml", lab.inventory, "next-run", extra)
        yield lab, cut, after_cut, inspected, nxt, log
    finally:
        lab.down()


def test_the_cancel_cut_the_run_after_the_reset_and_stranded_the_node(cutoff):
    lab, (runner, document), (node, faults, records), _, _, _ = cutoff
    assert runner.status == "canceled" and runner.rc == 254
    assert document is None  # killed: no results.json, no end-of-run task
    # the reset happened (the volatile count is gone; the lifetime count stays) and the node is still drained by us
    assert faults == [{"kind": "ecc_aggregate_uncorrectable", "gpu": 3, "count": 2}]
    assert node == ("drained", MARK)
    # the history has the reset as it returned, and nothing after it
    assert [(r["run_id"], r["node"], r["action"], r["outcome"]) for r in records] == [
        ("cut-run", "node03", "reset_gpu", "acted")]
    assert records[0]["cause"] == CAUSE and records[0]["scheduler"]["reason"] == MARK
    assert records[0]["durations"]["action_s"] >= 0


def test_the_default_inspection_reports_the_stranded_node(cutoff):
    _, _, _, (runner, document), _, _ = cutoff
    assert runner.rc == 0, runner.stdout.read()[-3000:]
    assert validate(document) == []
    assert "slurm" not in document["run"]["families"]
    stranded = [c for c in document["cluster"]["checks"] if c["id"] == "remediate.stranded.node03"]
    assert len(stranded) == 1
    check = stranded[0]
    assert (check["status"], check["remedy"], check["component"]) == ("warn", "investigate", "node03")
    assert check["message"].startswith("node03 is drained by run cut-run for %s (reason '%s') and was never resumed"
                                       % (CAUSE, MARK))
    assert document["cluster"]["stranded"] == ["node03"]
    # the inspection changed nothing
    assert [c for c in document["cluster"]["checks"] if c["id"] == "remediate.breaker.tripped"] == []


def test_the_next_remediation_verifies_and_resumes_the_stranded_node(cutoff):
    lab, _, _, _, (runner, document), _ = cutoff
    assert runner.rc == 0, runner.stdout.read()[-3000:]
    assert validate(document) == []
    data = document["cluster"]["remediation"]
    assert data["stranded"] == ["node03"] and data["order"] == ["node03"] and data["deferred"] == []
    assert data["limit"]["already_drained"] == ["node03"]
    done = remediation(document, "node03")
    assert (done["action"], done["outcome"]) == ("verify", "resumed")
    assert done["message"] == ("stranded: drained by run cut-run for %s and never resumed: the five verification "
                               "steps passed, the node is back in slurm" % CAUSE)
    verify = dict((c["id"], c["status"]) for c in document["hosts"]["node03"]["checks"] if c["id"].startswith("verify."))
    assert sorted(verify) == ["verify.gpu.result", "verify.memory.result", "verify.power.result",
                              "verify.stability.result", "verify.stress.result"]
    assert set(verify.values()) == {"pass"}
    assert document["hosts"]["node03"]["status"] != "fail"
    assert lab.nodes()["node03"] == ("idle", "none")


def test_the_history_keeps_the_cut_off_reset_and_escalation_counts_it(cutoff):
    _, _, _, _, _, log = cutoff
    warnings = []
    records = remediation_history.read(str(log), warn=warnings.append)
    assert warnings == []
    assert [(r["run_id"], r["action"], r["outcome"]) for r in records] == [
        ("cut-run", "reset_gpu", "acted"), ("next-run", "verify", "resumed")]
    now = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=1)
    # the plan's own count: one reset of node03 for the cause (the resume is not a try of any remedy)
    assert tries(records, "node03", CAUSE, 30, now) == {"reset_gpu": 1}
