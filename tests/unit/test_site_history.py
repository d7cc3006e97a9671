# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One history per site (issue 26 item 5): the site key (plugin_utils/_site_history.py), the run's history chosen
once at its start (zhisuan.ops.results claim) and recorded (run.site_key), and the report that reads its own site's
history only, also when a saved run is re-rendered; the flat history of earlier versions named, never lost."""

from __future__ import annotations

import json
import os
import shutil
from types import SimpleNamespace
from unittest.mock import MagicMock

import pytest
import yaml
from ansible.errors import AnsibleActionFail

from report_samples import rich_results

from ansible_collections.zhisuan.ops.plugins.action.report import ActionModule as ReportAction
from ansible_collections.zhisuan.ops.plugins.action.results import ActionModule as ResultsAction
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.plugin_utils import _results
from ansible_collections.zhisuan.ops.plugins.plugin_utils._history import load_history
from ansible_collections.zhisuan.ops.plugins.plugin_utils._run_record import RunRecorder
from ansible_collections.zhisuan.ops.plugins.plugin_utils._site_history import (
    KEY_PATTERN,
    NO_SITE_KEY,
    default_root,
    legacy_warning,
    record_history_dir,
    record_key,
    run_history_dir,
    site_key,
)

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
TEMPLATES = os.path.join(REPO, "collections", "ansible_collections", "zhisuan", "ops", "data", "templates")


# ---- the key --------------------------------------------------------------------------------------------------------

def test_the_key_of_a_site_name_is_pinned():
    """A history is found again only while its key stays the same: the rule is pinned on the lab's and the example
    inventory's names (inventories/*/group_vars), so a change to it cannot orphan every site's history unseen."""
    assert site_key("zhisuan lab (simulated cluster)") == "zhisuan-lab-simulated-cluster-2b9402c2"
    assert site_key("example-dc hall 1") == "example-dc-hall-1-651b97fd"
    # the name as the record keeps it (run.site.name is stripped): the same key
    assert site_key("  example-dc hall 1\n") == site_key("example-dc hall 1")


@pytest.mark.parametrize("names", [
    ("Hall 2/Row A", "Hall 2 Row A", "hall 2 row a", "Hall 2_Row A", "Hall-2-Row-A"),  # slashes, spaces, case
    ("杭州 机房 2", "杭州 机房 3", "上海 机房 2", "机房 2"),  # Chinese names that differ only in Chinese
    ("../../etc", "..", "etc", "/etc"),  # a name that looks like a path
])
def test_names_that_differ_are_different_folder_names(names):
    keys = [site_key(name) for name in names]
    assert len(set(keys)) == len(keys), dict(zip(names, keys))
    for key in keys:
        assert KEY_PATTERN.match(key) and os.sep not in key and len(key) <= 49 and not key.startswith(".")


def test_a_name_without_ascii_letters_is_still_readable():
    assert site_key("杭州 机房 2").startswith("site-2-")
    assert site_key("杭州机房").startswith("site-") and site_key("杭州机房") != site_key("上海机房")
    assert site_key("Hangzhou IDC hall 2").startswith("hangzhou-idc-hall-2-")
    assert len(site_key("x" * 300)) == 40 + 9


def test_two_inventories_in_two_folders_are_two_histories(tmp_path):
    project = tmp_path / "checkout"
    one, two = project / "inventories" / "prod", tmp_path / "elsewhere" / "prod"  # the same folder name
    assert site_key(None, str(one), str(project)) != site_key(None, str(two), str(project))
    assert site_key(None, str(one), str(project)).startswith("inventory-prod-")
    # one folder, however it is written, is one history
    assert site_key(None, str(one) + "/", str(project)) == site_key(None, str(one), str(project)) == \
        site_key(None, str(project / "inventories" / "x" / ".." / "prod"), str(project))


def test_an_inventory_inside_the_checkout_keeps_its_key_when_the_checkout_moves(tmp_path):
    moved = site_key(None, str(tmp_path / "b" / "inventories" / "site1"), str(tmp_path / "b"))
    assert site_key(None, str(tmp_path / "a" / "inventories" / "site1"), str(tmp_path / "a")) == moved
    # outside the checkout the absolute folder counts
    assert site_key(None, "/srv/inv/site1", str(tmp_path / "a")) != site_key(None, "/srv/other/site1", str(tmp_path / "a"))


def test_the_same_site_is_the_same_history_whatever_its_inventory():
    assert site_key("Hall 2", "/a/inventories/one", "/a") == site_key("Hall 2", "/b/x", "/b") == site_key("Hall 2")
    assert site_key("Hall 2", "/a/inventories/one", "/a") != site_key("Hall 3", "/a/inventories/one", "/a")
    # a site name is never confused with an inventory folder of the same words
    assert site_key("prod") != site_key(None, "/a/prod", "/a")


def test_without_a_site_name_or_inventory_folder_the_run_has_the_no_site_history():
    assert site_key(None, None) == site_key("", "") == site_key("   ") == NO_SITE_KEY
    # a name that is not text (a mistake run.site names) is no name: the inventory's folder decides
    assert site_key({"name": "x"}, "/a/inv", "/a") == site_key(None, "/a/inv", "/a")


def test_the_history_folder_of_a_run(tmp_path):
    assert default_root(str(tmp_path / "reports" / "out")) == str(tmp_path / "reports" / "history")
    assert default_root(str(tmp_path / "reports" / "out") + "/") == str(tmp_path / "reports" / "history")
    root = str(tmp_path / "history")
    assert run_history_dir(root, "hall-2-5d8e2c1a") == os.path.join(root, "hall-2-5d8e2c1a")
    # zhisuan_history_dir overrides everything
    assert run_history_dir(root, "hall-2-5d8e2c1a", override=str(tmp_path / "mine")) == str(tmp_path / "mine")
    assert run_history_dir(root, "hall-2-5d8e2c1a", override="") == os.path.join(root, "hall-2-5d8e2c1a")
    for bad in ("../x", "a/b", "", None, "Hall"):
        with pytest.raises(ValueError, match="site key"):
            run_history_dir(root, bad)


def test_a_saved_run_finds_its_sites_history(tmp_path):
    root = str(tmp_path / "history")
    assert record_key({"site_key": "hall-2-5d8e2c1a", "site": {"name": "other"}}) == ("hall-2-5d8e2c1a", None)
    # a record from before run.site_key: the key of its site name; with neither, the root (the flat history)
    assert record_key({"site": {"name": "example-dc hall 1"}}) == ("example-dc-hall-1-651b97fd", None)
    assert record_key({"id": "r1"}) == (None, None)
    assert record_history_dir(root, {"id": "r1"}) == (root, None)
    assert record_history_dir(root, {"site_key": "a-1"}) == (os.path.join(root, "a-1"), None)
    for bad in ("../../etc", "A", 7, None):
        key, problem = record_key({"site_key": bad})
        assert key is None and problem.startswith("run.site_key %r is not a site key" % (bad,))
        assert record_history_dir(root, {"site_key": bad})[0] is None


def test_the_flat_history_is_named_with_the_command_that_moves_it(tmp_path):
    root = tmp_path / "history"
    site = root / "hall-2-5d8e2c1a"
    site.mkdir(parents=True)
    (root / "other-site-1").mkdir()  # site folders are not the flat layout
    assert legacy_warning(str(root), str(site)) is None
    (root / "r1.json").write_text("{}")
    (root / "r2.json").write_text("{}")
    (root / "index").mkdir()
    (root / "remediation.jsonl").write_text("")
    warning = legacy_warning(str(root), str(site))
    assert warning.startswith("zhisuan.ops: %s holds 2 kept runs and remediation.jsonl of the one history every site "
                              "shared" % root)
    assert "mkdir -p %s && mv %s/*.json %s/index %s/remediation.jsonl %s/ " % (site, root, root, root, site) in warning
    assert "zhisuan_history_dir: %s" % root in warning
    # a history outside the root (zhisuan_history_dir) is not this root's site folder
    assert legacy_warning(str(root), str(tmp_path / "mine")) is None
    # the moved history is that site's, and nothing is left to warn about
    for name in ("r1.json", "r2.json", "index", "remediation.jsonl"):
        shutil.move(str(root / name), str(site / name))
    assert legacy_warning(str(root), str(site)) is None and sorted(os.listdir(site)) == [
        "index", "r1.json", "r2.json", "remediation.jsonl"]


# ---- the run: chosen at its start, recorded ---------------------------------------------------------------------

def _action(cls, args, name):
    task = SimpleNamespace(args=args, check_mode=False, async_val=0, action=name)
    connection = MagicMock()
    connection._shell.tmpdir = "/nonexistent"
    # the sixth argument (shared_loader_obj) is required by ansible-core 2.16, optional since 2.17
    action = cls(task, connection, MagicMock(), MagicMock(), MagicMock(), MagicMock())
    action._display = MagicMock()  # pylint: disable=protected-access
    return action


def claim(tmp_path, **args):
    base = {"claim": True, "kind": "inspect", "run_id": "r1", "out_root": str(tmp_path / "out"),
            "project_dir": str(tmp_path)}
    base.update(args)
    return _action(ResultsAction, base, "zhisuan.ops.results").run(task_vars={})


def test_the_runs_start_chooses_its_sites_history(tmp_path):
    (tmp_path / "out").mkdir()
    out = claim(tmp_path, site_name="Hall 2/Row A", inventory_dir=str(tmp_path / "inventories" / "a"))
    assert out["site_key"] == site_key("Hall 2/Row A")
    assert out["history_dir"] == str(tmp_path / "history" / site_key("Hall 2/Row A"))
    out = claim(tmp_path, run_id="r2", inventory_dir=str(tmp_path / "inventories" / "a"))
    assert out["history_dir"] == str(tmp_path / "history" / site_key(None, str(tmp_path / "inventories" / "a"),
                                                                      str(tmp_path)))
    # zhisuan_history_dir overrides everything (the key is still the site's, for the record)
    out = claim(tmp_path, run_id="r3", site_name="Hall 2", history_dir=str(tmp_path / "mine"))
    assert (out["history_dir"], out["site_key"]) == (str(tmp_path / "mine"), site_key("Hall 2"))
    assert "warnings" not in out


def test_the_runs_start_names_the_flat_history_it_does_not_read(tmp_path):
    (tmp_path / "history").mkdir()
    (tmp_path / "history" / "20261101T000000Z-inspect.json").write_text("{}")
    out = claim(tmp_path, site_name="Hall 2")
    assert len(out["warnings"]) == 1 and "holds 1 kept run of the one history" in out["warnings"][0]
    # with zhisuan_history_dir the flat folder may be the history itself: nothing to say
    assert "warnings" not in claim(tmp_path, run_id="r2", site_name="Hall 2", history_dir=str(tmp_path / "history"))


def test_the_record_carries_the_site_key(tmp_path):
    action = _action(ResultsAction, {"run_id": "r1", "kind": "inspect", "started": "2026-12-01T10:00:00+00:00",
                                     "dest": str(tmp_path / "r1")}, "zhisuan.ops.results")
    check = make_check("gpu.count.present", "node01", "pass", observed=8, expected=8)
    out = action.run(task_vars={"hostvars": {
        "localhost": {"results_run_site": {"name": "Hall 2"}, "results_run_site_key": site_key("Hall 2")},
        "node01": {"results_targeted": True, "results_checks": [check]}}})
    with open(out["path"], encoding="utf-8") as handle:
        document = json.load(handle)
    assert document["run"]["site_key"] == site_key("Hall 2") and _results.validate(document) == []
    broken = dict(document, run=dict(document["run"], site_key="../x"))
    assert any("site_key" in problem for problem in _results.validate(broken))


def test_a_partial_record_carries_the_site_key(tmp_path):
    recorder = RunRecorder(write_report=None, warn=lambda message: None)
    recorder.observe_facts("node01", {
        "results_run_started": "2026-12-01T10:00:00+00:00", "results_run_id": "r1", "results_run_kind": "inspect",
        "results_run_families": ["gpu"], "results_run_latest_link": str(tmp_path / "latest"),
        "results_run_site_key": "inventory-lab-1a2b3c4d"})
    recorder.observe_facts("node01", {"results_run_dir": str(tmp_path / "r1")})
    with open(recorder.finish("interrupted"), encoding="utf-8") as handle:
        document = json.load(handle)
    assert document["run"]["site_key"] == "inventory-lab-1a2b3c4d" and _results.validate(document) == []


# ---- the report: its own site's history only ---------------------------------------------------------------------

def site_run(tmp_path, run_id, started, site, hosts):
    """A saved run of ``site`` (its record's run.site and run.site_key) on ``hosts``, under <tmp>/out/<id>."""
    doc = rich_results(run_id=run_id, started=started)
    doc["hosts"] = dict((name, doc["hosts"][name]) for name in hosts)
    doc["run"]["hosts_total"] = len(hosts)
    doc["run"]["site"] = {"name": site}
    doc["run"]["site_key"] = site_key(site)
    folder = tmp_path / "out" / run_id
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(json.dumps(doc), encoding="utf-8")
    return folder / "results.json"


def report(src, **args):
    base = {"src": str(src), "template_dir": TEMPLATES, "formats": ["json"]}
    base.update(args)
    out = _action(ReportAction, base, "zhisuan.ops.report").run(task_vars={})
    with open(os.path.join(os.path.dirname(str(src)), "report.json"), encoding="utf-8") as handle:
        return out, json.load(handle)


def test_two_sites_in_one_root_never_see_each_others_runs(tmp_path):
    root = tmp_path / "history"
    lab = site_run(tmp_path, "lab-1", "2026-11-30T20:00:00+00:00", "zhisuan lab", ["node01", "node02", "node03"])
    out, lab_report = report(lab, history_root=str(root))
    assert out["history"]["dir"] == str(root / site_key("zhisuan lab")) and lab_report["kpis"]["hosts"] == 3
    new = site_run(tmp_path, "hall-1", "2026-11-30T22:00:00+00:00", "Hall 2", ["node04", "node05"])
    out, new_report = report(new, history_root=str(root))
    assert out["history"]["dir"] == str(root / site_key("Hall 2"))
    # the new site's first report: nothing to compare with, KPIs of its own two nodes, none of the lab's
    assert out["history"]["runs"] == 1 and out["history"]["previous"] is None and new_report["changes"] is None
    assert new_report["kpis"]["runs"] == 1 and new_report["kpis"]["hosts"] == 2
    assert not any(r["host"] in ("node01", "node02", "node03") for r in new_report["kpis"]["repairs"])
    # a second lab run compares with the lab's first, not with the new site's run (which started later)
    lab2 = site_run(tmp_path, "lab-2", "2026-11-30T23:00:00+00:00", "zhisuan lab", ["node01", "node02", "node03"])
    out, lab2_report = report(lab2, history_root=str(root))
    assert lab2_report["changes"]["previous"]["id"] == "lab-1" and lab2_report["kpis"]["runs"] == 2
    assert [doc["run"]["id"] for doc in load_history(str(root / site_key("zhisuan lab")))] == ["lab-1", "lab-2"]
    assert [doc["run"]["id"] for doc in load_history(str(root / site_key("Hall 2")))] == ["hall-1"]
    # re-rendering a saved run (playbooks/report.yml) reads its own site's history again: the same report
    again, again_report = report(new, history_root=str(root))
    assert again["history"]["dir"] == str(root / site_key("Hall 2")) and again_report["kpis"] == new_report["kpis"]
    # history_dir (zhisuan_history_dir, or the run's own folder) wins over the root
    out, dummy = report(new, history_root=str(root), history_dir=str(tmp_path / "mine"))
    assert out["history"]["dir"] == str(tmp_path / "mine")


def test_a_run_saved_before_one_history_per_site_reads_the_flat_history(tmp_path):
    root = tmp_path / "history"
    old = site_run(tmp_path, "old-1", "2026-11-30T20:00:00+00:00", "x", ["node01"])
    doc = json.loads(old.read_text(encoding="utf-8"))
    del doc["run"]["site"], doc["run"]["site_key"]
    old.write_text(json.dumps(doc), encoding="utf-8")
    out, dummy = report(old, history_root=str(root))
    assert out["history"]["dir"] == str(root) and (root / "old-1.json").is_file()
    # a new site's run in the same root is told about that flat history, and does not read it
    new = site_run(tmp_path, "hall-1", "2026-11-30T22:00:00+00:00", "Hall 2", ["node04"])
    out, new_report = report(new, history_root=str(root))
    assert out["history"]["runs"] == 1 and new_report["kpis"]["hosts"] == 1
    assert any(w.startswith("zhisuan.ops: %s holds 1 kept run of the one history" % root) for w in out["warnings"])


def test_a_broken_site_key_never_leads_the_history_elsewhere(tmp_path):
    """A hand-edited run.site_key is refused by the results schema (the report names it and writes nothing); without
    jsonschema the action itself renders without history (record_history_dir above)."""
    src = site_run(tmp_path, "r1", "2026-11-30T20:00:00+00:00", "Hall 2", ["node01"])
    doc = json.loads(src.read_text(encoding="utf-8"))
    doc["run"]["site_key"] = "../../elsewhere"
    src.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(AnsibleActionFail, match=r"\$\.run\.site_key: '\.\./\.\./elsewhere' does not match"):
        report(src, history_root=str(tmp_path / "history"))
    assert not (tmp_path / "history").exists() and not (tmp_path / "elsewhere").exists()
    warnings = []
    assert ReportAction._site_history(str(tmp_path / "history"), doc, warnings) is None  # pylint: disable=protected-access
    assert warnings == ["zhisuan.ops.report: run.site_key '../../elsewhere' is not a site key (lower-case ASCII words "
                        "and digits joined by '-'); the report is rendered without the history"]


def test_the_lab_and_example_inventories_have_different_histories():
    """A site started from inventories/example never shares the lab demo's history (the issue's first report)."""
    with open(os.path.join(REPO, "inventories", "lab", "group_vars", "all.yml"), encoding="utf-8") as handle:
        lab = yaml.safe_load(handle)["zhisuan_site_name"]
    with open(os.path.join(REPO, "inventories", "example", "group_vars", "gpu_nodes", "main.yml"),
              encoding="utf-8") as handle:
        example = yaml.safe_load(handle)["zhisuan_site_name"]
    assert site_key(lab) != site_key(example)
