# SPDX-License-Identifier: GPL-3.0-or-later
"""AWX job slicing: each slice runs the playbook on its share of the inventory (a --limit, as AWX gives each slice a
slice of the hosts) into its own run directory; report.yml merges the slices into one run and one report."""

from __future__ import annotations

import json

from .conftest import REPO, run_playbook, start_lab

SLICES = {"insp-slice1": "node01,node02,node03,node04", "insp-slice2": "node05,node06,node07,node08"}


def test_slices_merge_into_one_run_and_report(tmp_path):
    inventory = start_lab(tmp_path, "default.yml")
    out_root = tmp_path / "out"
    for run_id, limit in SLICES.items():
        runner, dummy = run_playbook(tmp_path / run_id, "acceptance.yml", inventory,
                                     extravars={"zhisuan_run_id": run_id, "results_out_root": str(out_root)},
                                     limit=limit, tags="gpu")
        assert runner.rc == 0  # failing checks are recorded; the job itself succeeds
        written = json.loads((out_root / run_id / "results.json").read_text())
        assert sorted(written["hosts"]) == limit.split(",")
        stats = [event for event in runner.events if event.get("event") == "playbook_on_stats"]
        assert stats[0]["event_data"]["artifact_data"]["zhisuan_results"]["run_id"] == run_id
    runner, dummy = run_playbook(
        tmp_path / "merge", REPO + "/playbooks/report.yml", inventory,
        extravars={"report_merge": [str(out_root / run_id) for run_id in SLICES],
                   "report_merge_dest": str(out_root / "insp")})
    assert runner.rc == 0, runner.stdout.read()[-2000:]
    merged = json.loads((out_root / "insp" / "results.json").read_text())
    assert merged["run"]["merged_from"] == list(SLICES)
    assert merged["run"]["hosts_total"] == 8 and sorted(merged["hosts"]) == ["node%02d" % i for i in range(1, 9)]
    failing = sorted(name for name, host in merged["hosts"].items() if host["status"] == "fail")
    assert failing == ["node03", "node06", "node08"]
    assert merged["summary"]["hosts"]["fail"] == 3
    html = (out_root / "insp" / "report.html").read_text()
    # the slices are acceptance runs (acceptance.yml): the merged report is an acceptance, whatever the merged run's id
    assert "node08" in html and "NOT ACCEPTED" in html and "INSPECTION" not in html
