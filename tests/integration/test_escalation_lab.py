# SPDX-License-Identifier: GPL-3.0-or-later
"""Escalation from the remediation history on the lab (issue 16), N = 3. node02's GPU 2 logs XID 48, whose remedy is
a GPU reset. The history already holds three resets of node02 for that cause, written the way remediation writes
them (zhisuan.ops.remediation_history's make_record and append): the run plans and carries out a power cycle through
the node's lab Redfish BMC instead, and records it. The XID comes back: the next run gives an RMA ticket. Its report
lists node02 as a repeat offender, and its KPIs count it."""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._remediate import history as remediation_history
from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import validate

from .conftest import REPO, run_playbook, start_lab
from .test_remediate_lab import FAST, remediation

CAUSE = "xid.48.events"
POLICY = {"escalation": {"repeats": 3, "window_days": 30}}


def seed_resets(history_dir, node, count):
    """``count`` repaired GPU resets of ``node`` for CAUSE in the last days, each as the remediate_node role records
    it, made and appended by the remediation history's own code."""
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    records = []
    for day in range(count, 0, -1):
        detected = now - datetime.timedelta(days=day, minutes=30)
        started, finished = detected + datetime.timedelta(minutes=5), detected + datetime.timedelta(minutes=6)
        resumed = detected + datetime.timedelta(minutes=10)
        records.append(remediation_history.make_record({
            "time": resumed.isoformat(), "run_id": "rem-%dd" % day, "source_run_id": None, "node": node,
            "cause": CAUSE, "component": "GPU 2", "remedy": "reset_gpu", "action": "reset_gpu", "mode": "automatic",
            "outcome": "repaired", "message": "reset_gpu repaired it: verification passed, the node is back in service",
            "detected": detected.isoformat(), "started": started.isoformat(), "finished": finished.isoformat(),
            "resumed": resumed.isoformat(), "verification": None,
            "scheduler": {"name": node, "drained": False, "reason": ""}, "evidence": None, "ticket": None}))
    remediation_history.append(history_dir, records)


def lab_fault(lab_dir, *argv):
    subprocess.run([sys.executable, os.path.join(REPO, "lab", "labctl.py"), "fault", "--dir", str(lab_dir)] + list(argv),
                   check=True, capture_output=True, timeout=60)


def remediate(tmp_path, inventory, run_id, extra):
    """remediate.yml as AWX runs it, under its own run id: (runner, results document)."""
    runner, _ = run_playbook(tmp_path, "remediate.yml", inventory, extravars=dict(extra, zhisuan_run_id=run_id))
    path = tmp_path / "out" / run_id / "results.json"
    return runner, json.loads(path.read_text()) if path.exists() else None


@pytest.fixture(scope="module")
def escalation(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("escalation")
    inventory = start_lab(tmp_path, "escalation.yml")
    history_dir = tmp_path / "history"
    seed_resets(str(history_dir), "node02", 3)
    extra = dict(FAST, zhisuan_history_dir=str(history_dir), zhisuan_remediation_policy=POLICY)
    try:
        cycle = remediate(tmp_path, inventory, "esc-cycle", extra)
        # the same XID again after the power cycle (which cleared it from the node)
        lab_fault(tmp_path / "lab", "node02", "add", "xid", "gpu=2", "code=48")
        again = remediate(tmp_path, inventory, "esc-again", extra)
        yield tmp_path, cycle, again
    finally:
        subprocess.run([sys.executable, os.path.join(REPO, "lab", "labctl.py"), "down", "--dir", str(tmp_path / "lab")],
                       capture_output=True, timeout=120, check=False)


def records(tmp_path):
    """The history as its readers see it (history.read: a node's final record supersedes its ``acted`` record)."""
    return remediation_history.read(str(tmp_path / "history" / "remediation.jsonl"))


def test_three_resets_make_the_next_remedy_a_power_cycle(escalation):
    tmp_path, (runner, document), _ = escalation
    assert runner.rc == 0, runner.stdout.read()[-3000:]
    assert validate(document) == []
    data = document["cluster"]["remediation"]
    assert data["order"] == ["node02"] and data["repeat_offenders"] == ["node02"]
    assert data["escalation"] == {"repeats": 3, "window_days": 30, "ladder": ["reset_gpu", "power_cycle", "rma"]}
    done = remediation(document, "node02")
    assert done["why"]["cause"] == CAUSE
    assert (done["remedy"], done["action"], done["outcome"]) == ("power_cycle", "power_cycle", "repaired")
    repeat = [c for c in document["cluster"]["checks"] if c["id"] == "remediate.repeat.node02"]
    assert len(repeat) == 1 and repeat[0]["remedy"] == "power_cycle"
    with open(tmp_path / "lab" / "bmc" / "redfish.log") as handle:
        assert "node02 127.0.0.1 POST /redfish/v1/Systems/DGX/Actions/ComputerSystem.Reset 204" in handle.read()
    # the run recorded the power cycle for the cause, after the three seeded resets
    cycled = [r for r in records(tmp_path) if r["run_id"] == "esc-cycle"]
    assert [(r["node"], r["cause"], r["remedy"], r["outcome"]) for r in cycled] == [
        ("node02", CAUSE, "power_cycle", "repaired")]


def test_the_cause_back_after_the_power_cycle_is_an_rma_ticket(escalation):
    tmp_path, _, (runner, document) = escalation
    assert runner.rc == 0, runner.stdout.read()[-3000:]
    assert validate(document) == []
    done = remediation(document, "node02")
    assert done["why"]["cause"] == CAUSE
    assert (done["remedy"], done["action"], done["outcome"]) == ("rma", "ticket", "ticket")
    ticket = json.loads((tmp_path / "out" / "esc-again" / "tickets" / "node02.json").read_text())
    assert (ticket["remedy"], ticket["cause"]) == ("rma", CAUSE)
    assert document["cluster"]["remediation"]["repeat_offenders"] == ["node02"]
    node02 = [(r["action"], r["outcome"]) for r in records(tmp_path) if r["node"] == "node02"]
    assert node02 == [("reset_gpu", "repaired")] * 3 + [("power_cycle", "repaired"), ("ticket", "ticket")]


def test_the_report_lists_the_repeat_offender_and_counts_it(escalation):
    tmp_path, _, _ = escalation
    out = tmp_path / "out" / "esc-again"
    report = json.loads((out / "report.json").read_text())
    block = report["kpis"]["repeat_offenders"]
    assert (block["count"], block["nodes"], block["repeats"], block["source"]) == (1, ["node02"], 3, "run esc-again")
    assert [(r["node"], r["cause"], r["to"]) for r in block["rows"]] == [("node02", CAUSE, "rma")]
    html = (out / "report.html").read_text()
    section = html[html.index('id="repeat-offenders"'):]
    assert "node02" in section[:section.index("</section>")]
    kpis = html[html.index('<section id="kpis">'):]
    assert '<td data-kpi="repeat_offenders">1<br>' in kpis
    assert "node02 (xid.48.events: reset_gpu \u00d7 3, power_cycle \u00d7 1 \u2192 rma)" in kpis
