# SPDX-License-Identifier: GPL-3.0-or-later
"""One history per site on the lab (issue 26 item 5): two sites - two inventories in two folders, as a user's
inventories/<site> beside the lab's - inspected from one checkout with the default history (no zhisuan_history_dir).
A new site's first report compares with nothing and counts only its own nodes in its KPIs (the issue: it compared
itself with the lab and counted the lab's nodes); the first site's next run compares with its own previous run,
not with the other site's newer one; a saved run re-rendered with playbooks/report.yml reads its own site's history."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from ansible_collections.zhisuan.ops.plugins.plugin_utils._history import load_history
from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import validate
from ansible_collections.zhisuan.ops.plugins.plugin_utils._site_history import site_key

from .conftest import REPO, run_playbook, start_lab

SITE_A = "node01,node02,node03"  # node03: the default scenario's ECC fault (gpu.ecc)
SITE_B = "node04,node05,node06"  # node06: its PCIe width fault (gpu.pcie)


def inspect(tmp_path, inventory, run_id, limit):
    runner, dummy = run_playbook(tmp_path, "inspect.yml", inventory, extravars={"zhisuan_run_id": run_id}, limit=limit)
    assert runner.rc == 0, runner.stdout.read()
    run_dir = tmp_path / "out" / run_id
    document = json.loads((run_dir / "results.json").read_text())
    assert validate(document) == []
    return document, json.loads((run_dir / "report.json").read_text())


def issue_hosts(report):
    return set(repair["host"] for repair in report["kpis"]["repairs"]) | set(issue["host"] for issue in report["issues"])


@pytest.fixture(scope="module")
def two_sites(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("sites")
    lab_inventory = start_lab(tmp_path, "default.yml")
    inventories = {}
    for site in ("site-a", "site-b"):  # a user's inventories/<site>: one folder each, no zhisuan_site_name
        (tmp_path / "inventories" / site).mkdir(parents=True)
        inventories[site] = str(tmp_path / "inventories" / site / "hosts.yml")
        shutil.copy(lab_inventory, inventories[site])
    try:
        a1 = inspect(tmp_path, inventories["site-a"], "insp-a1", SITE_A)
        b1 = inspect(tmp_path, inventories["site-b"], "insp-b1", SITE_B)
        a2 = inspect(tmp_path, inventories["site-a"], "insp-a2", SITE_A)
        yield tmp_path, inventories, a1, b1, a2
    finally:
        subprocess.run([sys.executable, os.path.join(REPO, "lab", "labctl.py"), "down", "--dir", str(tmp_path / "lab")],
                       capture_output=True, timeout=60)


def test_each_site_has_its_own_history_folder(two_sites):
    tmp_path, inventories, (a1, dummy), (b1, dummy2), (a2, dummy3) = two_sites
    key_a = site_key(None, os.path.dirname(inventories["site-a"]), REPO)
    key_b = site_key(None, os.path.dirname(inventories["site-b"]), REPO)
    assert key_a.startswith("inventory-site-a-") and key_b.startswith("inventory-site-b-")
    assert (a1["run"]["site_key"], b1["run"]["site_key"], a2["run"]["site_key"]) == (key_a, key_b, key_a)
    history = tmp_path / "history"
    assert sorted(name for name in os.listdir(history)) == sorted([key_a, key_b])  # nothing flat in the root
    assert [doc["run"]["id"] for doc in load_history(str(history / key_a))] == ["insp-a1", "insp-a2"]
    assert [doc["run"]["id"] for doc in load_history(str(history / key_b))] == ["insp-b1"]


def test_a_new_sites_first_report_sees_only_its_own_nodes(two_sites):
    dummy_tmp, dummy_inv, (dummy_a1, a1_report), (b1, b1_report), dummy_a2 = two_sites
    assert a1_report["kpis"]["hosts"] == 3 and "gpu.ecc" in [c["class"] for c in a1_report["kpis"]["classes"]]
    # site B started after site A's run of the same kind: still nothing to compare with
    assert b1_report["changes"] is None
    assert b1_report["kpis"]["runs"] == 1 and b1_report["kpis"]["hosts"] == 3
    classes = [c["class"] for c in b1_report["kpis"]["classes"]]
    assert "gpu.pcie" in classes and "gpu.ecc" not in classes  # node06's fault, not site A's node03
    assert sorted(b1["hosts"]) == ["node04", "node05", "node06"]
    assert "node06" in issue_hosts(b1_report) and issue_hosts(b1_report) <= {"node04", "node05", "node06", "cluster"}


def test_a_sites_next_run_compares_with_its_own_previous_run(two_sites):
    dummy_tmp, dummy_inv, dummy_a1, dummy_b1, (dummy_a2, a2_report) = two_sites
    assert a2_report["changes"]["previous"]["id"] == "insp-a1"  # not insp-b1, which started later
    persisting = sorted((item["host"], item["id"]) for item in a2_report["changes"]["persisting"])
    assert ("node03", "gpu.ecc.volatile_uncorrectable") in persisting
    assert not any(host in ("node04", "node05", "node06") for host, dummy in persisting)
    assert a2_report["changes"]["fixed"] == [] and a2_report["changes"]["unchecked"] == []
    assert a2_report["kpis"]["runs"] == 2 and a2_report["kpis"]["hosts"] == 3
    assert "gpu.pcie" not in [c["class"] for c in a2_report["kpis"]["classes"]]


def test_a_saved_run_rerendered_reads_its_own_sites_history(two_sites):
    tmp_path, inventories, dummy_a1, (b1, b1_report), dummy_a2 = two_sites
    src = tmp_path / "out" / "insp-b1" / "results.json"
    (tmp_path / "out" / "insp-b1" / "report.json").unlink()
    runner, dummy = run_playbook(tmp_path, "report.yml", inventories["site-a"], extravars={"report_src": str(src)})
    assert runner.rc == 0, runner.stdout.read()
    again = json.loads((tmp_path / "out" / "insp-b1" / "report.json").read_text())
    # the re-render knows no inventory folder: the record's run.site_key leads it to site B's history
    assert again["kpis"] == b1_report["kpis"] and again["changes"] is None
    assert [doc["run"]["id"] for doc in load_history(str(tmp_path / "history" / b1["run"]["site_key"]))] == ["insp-b1"]
