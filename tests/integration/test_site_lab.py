# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""site.yml on the lab's delivery scenario (issue 26 item 8): delivery, burn-in and acceptance, then one site verdict
and one report - the three runs folded into one site record whose stage view and stages.csv say, per node, the
result and run of each stage; a node with a delivery fault is not ready for sign-off even when its burn-in and
acceptance passed.

Run ``flock /work/lab.lock timeout 900 .venv/bin/python -m pytest -q tests/integration/test_site_lab.py``."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys

from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import validate

from .conftest import REPO, start_lab


def test_site_yml_ends_with_one_site_verdict_and_report(tmp_path):
    import ansible_runner

    inventory = start_lab(tmp_path, "delivery.yml")
    out_root = tmp_path / "out"
    (tmp_path / "runner").mkdir()
    try:
        # site.yml gives each run its own id (no zhisuan_run_id); BMC checks, a short burn and the GPU acceptance
        runner = ansible_runner.run(
            private_data_dir=str(tmp_path / "runner"), playbook=os.path.join(REPO, "playbooks", "site.yml"),
            inventory=inventory, tags="bmc,burn,gpu", quiet=True, timeout=800,
            extravars={"results_out_root": str(out_root), "zhisuan_burn_duration": 5, "zhisuan_power_on": False},
            envvars={"ANSIBLE_CONFIG": os.path.join(REPO, "ansible.cfg"), "PATH": os.environ["PATH"]})
        stdout = runner.stdout.read()
    finally:
        subprocess.run([sys.executable, os.path.join(REPO, "lab", "labctl.py"), "down", "--dir", str(tmp_path / "lab")],
                       capture_output=True, timeout=60)
    assert runner.rc == 0, stdout[-6000:]
    runs = sorted(name for name in os.listdir(out_root) if name != "latest")
    kinds = dict((name.split("-")[1], name) for name in runs if not name.endswith("-site"))
    assert sorted(kinds) == ["acceptance", "burnin", "delivery"], runs
    site_dir = out_root / (kinds["acceptance"] + "-site")
    site = json.loads((site_dir / "results.json").read_text(encoding="utf-8"))
    assert validate(site) == []
    assert site["run"]["kind"] == "site"
    assert [(s["kind"], s["id"]) for s in site["run"]["stages"]] == [
        (kind, json.loads((out_root / kinds[kind] / "results.json").read_text())["run"]["id"])
        for kind in ("delivery", "burnin", "acceptance")]
    # one verdict at the end: the site record's; each stage's report is one line above it
    tail = stdout[stdout.index("PLAY RECAP"):]
    verdicts = [line for line in tail.splitlines() if "ZHISUAN VERDICT" in line]
    assert len(verdicts) == 1, tail
    for kind in ("delivery", "burnin", "acceptance"):
        assert "  %s run: " % kind in tail and str(out_root / kinds[kind] / "report.html") in tail
    assert str(site_dir / "report.html") in tail[tail.index(verdicts[0]):]
    # the delivery's faults stay the site's: dgx02's failed PSU (its burn-in and acceptance passed or not, it is not
    # ready); a node without a fault passed every stage
    delivery = json.loads((out_root / kinds["delivery"] / "results.json").read_text())
    failing = sorted(name for name, record in delivery["hosts"].items() if record["status"] != "pass")
    assert "dgx02" in failing
    rows = dict((row["host"], row) for row in csv.DictReader(io.StringIO((site_dir / "stages.csv").read_text())))
    assert sorted(rows) == sorted(site["hosts"])
    assert rows["dgx02"]["delivery_status"] == delivery["hosts"]["dgx02"]["status"] and rows["dgx02"]["ready"] == "no"
    assert site["hosts"]["dgx02"]["status"] != "pass"
    assert any(c["id"].startswith("bmc.psu") and c["status"] in ("fail", "error")
               for c in site["hosts"]["dgx02"]["checks"])
    ready = [name for name, row in rows.items() if row["ready"] == "yes"]
    for name in ready:
        assert site["hosts"][name]["status"] == "pass"
        assert all(rows[name]["%s_status" % kind] == "pass" for kind in ("delivery", "burnin", "acceptance"))
    ids = dict((s["kind"], s["id"]) for s in site["run"]["stages"])
    assert all(rows[name]["burnin_run"] == ids["burnin"] for name in rows)
    html = (site_dir / "report.html").read_text(encoding="utf-8")
    assert '<section id="stages">' in html and '<section id="signoff"' in html
    # each stage's own folder also has its stages.csv: the acceptance's already knows each node's delivery and
    # burn-in from the site's history
    own = dict((row["host"], row) for row in csv.DictReader(
        io.StringIO((out_root / kinds["acceptance"] / "stages.csv").read_text())))
    assert own["dgx02"]["delivery_run"] == ids["delivery"] and own["dgx02"]["burnin_run"] == ids["burnin"]
