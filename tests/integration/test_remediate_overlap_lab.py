# SPDX-License-Identifier: GPL-3.0-or-later
"""Two remediation runs at once on the lab with a real Slurm (issue 25, what-to-build 4): run A remediates node03
(the scenario's GPU reset fixes it) with a long verification burn, so it holds node03 for a while; run B starts on
node03 while A holds its lease (both through ansible-runner, as two AWX jobs). B reports node03 held by run A's id
and never touches it; A drains, resets, verifies and resumes it; the shared history holds A's repair and B's
``held``, whole; both runs' leases are gone at the end."""

from __future__ import annotations

import json
import os
import time

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._remediate import history as remediation_history
from ansible_collections.zhisuan.ops.plugins.plugin_utils import _lease
from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import validate

from .conftest import REPO
from .test_remediate_lab import FAST, Lab, remediation


def _runner(tmp_path, run_id, extra, run_async=False):
    import ansible_runner

    private = tmp_path / ("runner-" + run_id)
    private.mkdir(parents=True, exist_ok=True)
    kwargs = dict(private_data_dir=str(private), playbook=os.path.join(REPO, "playbooks", "remediate.yml"),
                  inventory=extra.pop("inventory"), limit="node03", quiet=True, timeout=600,
                  extravars=dict(extra, results_out_root=str(tmp_path / "out"), zhisuan_run_id=run_id),
                  envvars={"ANSIBLE_CONFIG": os.path.join(REPO, "ansible.cfg"), "PATH": os.environ["PATH"]})
    if run_async:
        return ansible_runner.run_async(**kwargs)
    return ansible_runner.run(**kwargs)


def _results(tmp_path, run_id):
    return json.loads((tmp_path / "out" / run_id / "results.json").read_text())


@pytest.fixture(scope="module")
def overlap(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("overlap")
    lab = Lab(tmp_path, "remediate.yml")
    history_dir = tmp_path / "history"
    extra = dict(FAST, zhisuan_history_dir=str(history_dir), inventory=lab.inventory)
    try:
        thread, runner_a = _runner(tmp_path, "run-a", dict(extra, zhisuan_verify_burn_duration=60), run_async=True)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and thread.is_alive() and \
                (_lease.holder(str(history_dir), "node03") or {}).get("run_id") != "run-a":
            time.sleep(0.2)
        lease_a = _lease.holder(str(history_dir), "node03")
        runner_b = _runner(tmp_path, "run-b", dict(extra))
        a_alive_after_b = thread.is_alive()
        thread.join(600)
        yield lab, lease_a, (runner_a, _results(tmp_path, "run-a")), (runner_b, _results(tmp_path, "run-b")), \
            a_alive_after_b, history_dir
    finally:
        lab.down()


def test_run_b_reports_the_node_held_by_run_a_and_never_touches_it(overlap):
    _, lease_a, _, (runner_b, document), a_alive_after_b, _ = overlap
    assert lease_a and lease_a["run_id"] == "run-a" and lease_a["node"] == "node03"
    assert a_alive_after_b  # B ran, planned and ended while A was still at work on node03
    assert runner_b.rc == 0, runner_b.stdout.read()[-3000:]
    assert validate(document) == []
    data = document["cluster"]["remediation"]
    assert data["order"] == [] and data["held"] == ["node03"]
    done = remediation(document, "node03")
    assert done["outcome"] == "held"
    assert done["message"].startswith("held by run run-a: another remediation run (pid %s on %s, since "
                                      % (lease_a["pid"], lease_a["host"]))
    assert done["message"].endswith(") acts on this node; left to it")
    # B ran no drain, no reset, no verification on it, and did not call it stranded
    assert not [c for c in document["hosts"]["node03"]["checks"] if c["id"].startswith(("verify.", "remediate.reset"))]
    assert not [c for c in document["cluster"]["checks"] if c["id"].startswith("remediate.stranded.")]


def test_run_a_repairs_and_resumes_the_node(overlap):
    lab, _, (runner_a, document), _, _, _ = overlap
    assert runner_a.rc == 0, runner_a.stdout.read()[-3000:]
    assert validate(document) == []
    done = remediation(document, "node03")
    assert (done["action"], done["outcome"]) == ("reset_gpu", "repaired")
    assert lab.nodes()["node03"] == ("idle", "none")


def test_the_shared_history_is_whole_and_the_leases_are_released(overlap):
    _, _, _, _, _, history_dir = overlap
    warnings = []
    records = remediation_history.read(str(history_dir / remediation_history.FILE_NAME), warn=warnings.append,
                                       raw=True)
    assert warnings == []
    assert sorted((r["run_id"], r["node"], r["outcome"]) for r in records) == [
        ("run-a", "node03", "acted"), ("run-a", "node03", "repaired"), ("run-b", "node03", "held")]
    assert [name for name in os.listdir(str(history_dir / _lease.DIR_NAME)) if name.endswith(".json")] == []
