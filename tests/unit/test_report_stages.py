# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A delivery is many runs (issue 26 item 8): where each node stands in it - the newest delivery, burn-in and
acceptance result per node from the run and the site's history, in the report (HTML, Markdown, JSON, in English and
Chinese) and as stages.csv beside it."""

from __future__ import annotations

import copy
import csv
import io
import json
import os
import re

import pytest

from ansible_collections.zhisuan.ops.plugins.plugin_utils import _report
from ansible_collections.zhisuan.ops.plugins.plugin_utils._history import slim
from ansible_collections.zhisuan.ops.plugins.plugin_utils._stages import (
    CSV_HEADER,
    known_elsewhere,
    site_results,
    stage_rows,
    stages_csv,
)

from report_samples import rich_results
from test_report_signed import run_playbook


def _passing(doc, names):
    """``doc`` with ``names`` given node01's passing record (its checks re-hosted)."""
    for name in names:
        record = copy.deepcopy(doc["hosts"]["node01"])
        for check in record["checks"]:
            check["host"] = name
        doc["hosts"][name] = record
    return doc


def delivery_history():
    """A site's delivery: the delivery run (node03 failing), a burn-in, the acceptance (node03 fails ECC, node08
    unreachable) and a re-test of node03 alone after its repair, passing."""
    delivery = rich_results(run_id="20261128T080000Z-delivery", started="2026-11-28T08:00:00+00:00", kind="delivery")
    delivery["run"]["finished"] = "2026-11-28T09:00:00+00:00"
    _passing(delivery, ["node08"])
    burnin = _passing(rich_results(run_id="20261129T080000Z-burnin", started="2026-11-29T08:00:00+00:00",
                                   kind="burnin"), ["node03", "node08"])
    burnin["run"]["finished"] = "2026-11-29T20:00:00+00:00"
    acceptance = rich_results()
    acceptance["run"]["finished"] = "2026-11-30T23:00:00+00:00"
    retest = _passing(rich_results(run_id="20261201T090000Z-acceptance", started="2026-12-01T09:00:00+00:00"),
                      ["node03"])
    retest["hosts"] = {"node03": retest["hosts"]["node03"]}
    retest["run"].update(hosts_total=1, finished="2026-12-01T09:20:00+00:00")
    return delivery, burnin, acceptance, retest


def test_newest_result_of_each_stage_per_node():
    delivery, burnin, acceptance, retest = delivery_history()
    assert delivery["hosts"]["node03"]["status"] == "fail" and acceptance["hosts"]["node03"]["status"] == "fail"
    # the history as the report reads it (slim entries, any order); the acceptance run itself is the one reported
    history = [slim(doc) for doc in (retest, burnin, delivery)]
    rows = dict((row["host"], row) for row in stage_rows(acceptance, history))
    assert sorted(rows) == sorted(acceptance["hosts"])
    node03 = rows["node03"]["stages"]
    assert (node03["delivery"]["status"], node03["delivery"]["run"]) == ("fail", "20261128T080000Z-delivery")
    assert (node03["burnin"]["status"], node03["burnin"]["run"]) == ("pass", "20261129T080000Z-burnin")
    # the re-test of node03 started after the acceptance: it wins for node03 alone
    assert (node03["acceptance"]["status"], node03["acceptance"]["run"]) == ("pass", "20261201T090000Z-acceptance")
    assert node03["acceptance"]["finished"] == "2026-12-01T09:20:00+00:00"
    assert rows["node03"]["ready"] is False  # its delivery failed and was not run again
    assert rows["node01"]["ready"] is True
    assert rows["node08"]["stages"]["acceptance"]["status"] == "unreachable" and rows["node08"]["ready"] is False
    assert rows["node05"]["stages"]["acceptance"]["run"] == acceptance["run"]["id"]
    # natural order of names
    names = [row["host"] for row in stage_rows(acceptance, history)]
    assert names == ["node%02d" % i for i in range(1, 9)]


def test_a_stage_not_run_is_empty_and_a_lone_run_says_nothing_more():
    acceptance = rich_results()
    rows = stage_rows(acceptance, [])
    assert all(row["stages"]["delivery"] is None and row["stages"]["burnin"] is None for row in rows)
    assert all(row["ready"] is False for row in rows)
    assert known_elsewhere(rows, acceptance) is False
    # a run's own slim copy in the history is the same run, not another one
    assert known_elsewhere(stage_rows(acceptance, [slim(acceptance)]), acceptance) is False
    delivery = rich_results(run_id="20261128T080000Z-delivery", started="2026-11-28T08:00:00+00:00", kind="delivery")
    assert known_elsewhere(stage_rows(acceptance, [slim(delivery)]), acceptance) is True
    # an inspection, a diagnosis or a repair in the history is no stage of the delivery
    inspect = rich_results(run_id="20261128T090000Z-inspect", started="2026-11-28T09:00:00+00:00", kind="inspect")
    assert known_elsewhere(stage_rows(acceptance, [slim(inspect)]), acceptance) is False


def test_stages_csv_has_one_row_per_node():
    delivery, burnin, acceptance, retest = delivery_history()
    rows = stage_rows(acceptance, [slim(doc) for doc in (delivery, burnin, retest)])
    table = list(csv.reader(io.StringIO(stages_csv(rows))))
    assert tuple(table[0]) == CSV_HEADER
    assert len(table) == 1 + len(acceptance["hosts"])
    by_host = dict((line[0], dict(zip(CSV_HEADER, line))) for line in table[1:])
    assert by_host["node03"]["delivery_status"] == "fail" and by_host["node03"]["acceptance_run"] == retest["run"]["id"]
    assert by_host["node03"]["ready"] == "no" and by_host["node01"]["ready"] == "yes"
    only = stage_rows(acceptance, [])
    line = dict(zip(CSV_HEADER, list(csv.reader(io.StringIO(stages_csv(only))))[1]))
    assert line["delivery_status"] == "" and line["burnin_run"] == "" and line["acceptance_status"] == "pass"


def test_the_report_shows_the_stages_and_writes_stages_csv(tmp_path):
    delivery, burnin, acceptance, retest = delivery_history()
    history = [slim(doc) for doc in (delivery, burnin, retest)]
    texts, view = _report.render_reports(acceptance, ["html", "markdown", "json"], history=history)
    html = texts["html"]
    section = html[html.index('<section id="stages">'):]
    section = section[:section.index("</section>")]
    row = re.search(r'<tr data-host="node03" data-ready="no">.*?</tr>', section).group(0)
    assert 'data-stage="delivery" data-run="20261128T080000Z-delivery" data-status="fail"' in row
    assert 'data-stage="acceptance" data-run="20261201T090000Z-acceptance" data-status="pass"' in row
    assert '<tr data-host="node01" data-ready="yes">' in section
    assert '<a href="#stages">' in html
    assert "## Delivery stages" in texts["markdown"]
    assert "| node03 | **FAIL** 2026-11-28" in texts["markdown"]
    stages = json.loads(texts["json"])["stages"]
    assert [r["host"] for r in stages][:2] == ["node01", "node02"] and stages[2]["stages"]["delivery"]["status"] == "fail"
    # alone, the section is left out (nothing to add to the verdict), stages.csv is still written
    texts, view = _report.render_reports(acceptance, ["html", "markdown"], history=[])
    assert 'id="stages"' not in texts["html"] and "Delivery stages" not in texts["markdown"]
    paths = _report.write_reports(acceptance, str(tmp_path / "run"), ["html"], history=history)
    assert paths["stages"] == str(tmp_path / "run" / "stages.csv")
    assert open(paths["stages"]).read() == stages_csv(stage_rows(acceptance, history))
    assert sorted(os.listdir(tmp_path / "run")) == ["report.html", "stages.csv"]
    # an inspection has no stage view and no stages.csv
    inspect = rich_results(run_id="20261202T090000Z-inspect", started="2026-12-02T09:00:00+00:00", kind="inspect")
    paths = _report.write_reports(inspect, str(tmp_path / "inspect"), ["html"], history=history)
    assert "stages" not in paths and not os.path.exists(tmp_path / "inspect" / "stages.csv")


def test_the_chinese_stage_view_has_no_english_sentence():
    delivery, burnin, acceptance, retest = delivery_history()
    history = [slim(doc) for doc in (delivery, burnin, retest)]
    texts, view = _report.render_reports(acceptance, ["html", "markdown"], history=history, language="zh_CN")
    html = texts["html"]
    section = html[html.index('<section id="stages">'):]
    section = section[:section.index("</section>")]
    for english in ("Delivery stages", "Ready for sign-off", "The newest result", "burn-in", ">yes<", ">no<"):
        assert english not in section, english
    assert "交付阶段" in section
    md = texts["markdown"]
    md = md[md.index("## 交付阶段"):]
    md = md[:md.index("\n## ", 3)]
    assert "Delivery" not in md and "Ready" not in md and "burn-in" not in md


# ---------------------------------------------------------------------------------------------------------------
# site.yml: the three stage runs as one site record, one verdict, one report


def test_the_site_record_folds_the_three_stages():
    delivery, burnin, acceptance, dummy_retest = delivery_history()
    # node07 was left out of the burn-in (--limit): the site cannot pass it on the other stages alone
    del burnin["hosts"]["node07"]
    site = site_results([acceptance, delivery, burnin])
    _report.validate_results(site)
    run = site["run"]
    assert run["kind"] == "site" and run["id"] == acceptance["run"]["id"] + "-site"
    assert [(s["kind"], s["id"]) for s in run["stages"]] == [("delivery", delivery["run"]["id"]),
                                                             ("burnin", burnin["run"]["id"]),
                                                             ("acceptance", acceptance["run"]["id"])]
    assert run["started"] == delivery["run"]["started"] and run["finished"] == acceptance["run"]["finished"]
    hosts = site["hosts"]
    assert sorted(hosts) == sorted(acceptance["hosts"])
    assert hosts["node01"]["status"] == "pass"
    # a check every stage ran counts once, as the newest stage found it
    ids = [(c["id"], c["component"]) for c in hosts["node01"]["checks"]]
    assert len(ids) == len(set(ids)) and ("gpu.count.present", "node") in ids
    # node08: passing in delivery and burn-in, unreachable in the acceptance - unreachable in the site, and why
    assert hosts["node08"]["status"] == "unreachable"
    lost = [c for c in hosts["node08"]["checks"] if c["id"] == "run.host.unreachable"]
    assert len(lost) == 1 and lost[0]["status"] == "error" and "Connection refused" in lost[0]["message"]
    assert "acceptance run %s" % acceptance["run"]["id"] in lost[0]["component"]
    missing = [c for c in hosts["node07"]["checks"] if c["id"] == "run.stage.burnin"]
    assert len(missing) == 1 and missing[0]["status"] == "error" and hosts["node07"]["status"] != "pass"
    assert "node07 was not in the burnin run" in missing[0]["message"]
    assert hosts["node03"]["status"] == "fail"
    assert hosts["node03"]["facts"]["stages"]["delivery"] == {"run": delivery["run"]["id"], "status": "fail",
                                                              "started": delivery["run"]["started"],
                                                              "finished": delivery["run"]["finished"]}
    # the stage view of a site record is its own stages
    rows = dict((row["host"], row) for row in stage_rows(site, [slim(dummy_retest)]))
    assert rows["node03"]["stages"]["acceptance"]["run"] == acceptance["run"]["id"]
    assert rows["node07"]["stages"]["burnin"] is None and rows["node01"]["ready"] is True
    assert site["summary"]["hosts"]["pass"] == sum(1 for r in hosts.values() if r["status"] == "pass")


def test_the_site_record_refuses_what_is_no_stage():
    delivery, burnin, acceptance, dummy_retest = delivery_history()
    inspect = rich_results(run_id="20261202T090000Z-inspect", started="2026-12-02T09:00:00+00:00", kind="inspect")
    with pytest.raises(ValueError, match="run 20261202T090000Z-inspect is a inspect run; the site record folds"):
        site_results([acceptance, inspect])
    with pytest.raises(ValueError, match="given twice"):
        site_results([acceptance, copy.deepcopy(acceptance)])
    with pytest.raises(ValueError, match="no stage run"):
        site_results([])


def test_site_yml_ends_with_one_verdict_and_one_report(tmp_path):
    """Through ansible-playbook and the report action as site.yml calls it: the stage reports each print a line, the
    site record prints the one verdict, and its report holds the stage view and the three runs' checks."""
    delivery, burnin, acceptance, dummy_retest = delivery_history()
    paths = []
    for doc in (delivery, burnin, acceptance):
        run_dir = tmp_path / "out" / doc["run"]["id"]
        run_dir.mkdir(parents=True)
        (run_dir / "results.json").write_text(json.dumps(doc), encoding="utf-8")
        paths.append(run_dir / "results.json")
    playbook = tmp_path / "site.yml"
    tasks = "".join("    - zhisuan.ops.report:\n        src: %s\n        formats: [html]\n" % p for p in paths)
    tasks += ("    - zhisuan.ops.report:\n        src: %s\n        formats: [html, markdown, json]\n"
              "        stages: [%s, %s]\n" % (paths[2], paths[0].parent, paths[1]))
    playbook.write_text("- hosts: localhost\n  connection: local\n  gather_facts: false\n  tasks:\n" + tasks,
                        encoding="utf-8")
    out = run_playbook(tmp_path, str(playbook))
    tail = out[out.index("PLAY RECAP"):].rstrip("\n").splitlines()
    verdicts = [line for line in tail if line.startswith("ZHISUAN VERDICT")]
    assert len(verdicts) == 1 and verdicts[0].startswith("ZHISUAN VERDICT: NOT ACCEPTED (fail): ")
    site_dir = paths[2].parent.parent / (acceptance["run"]["id"] + "-site")
    for kind, path in (("delivery", paths[0]), ("burnin", paths[1]), ("acceptance", paths[2])):
        assert any(line.startswith("  %s run: NOT ACCEPTED (fail)" % kind) and line.endswith(
            str(path.parent / "report.html")) for line in tail), (kind, tail)
    after = tail[tail.index(verdicts[0]):]
    assert "  %-9s %s" % ("html:", site_dir / "report.html") in after
    assert not any(" run: " in line for line in after)  # the stage lines come before the one verdict
    site = json.loads((site_dir / "results.json").read_text(encoding="utf-8"))
    assert site["run"]["kind"] == "site" and len(site["run"]["stages"]) == 3
    html = (site_dir / "report.html").read_text(encoding="utf-8")
    assert '<section id="stages">' in html and '<section id="signoff"' in html
    assert "GPU cluster delivery acceptance report" in html
    stages_csv_text = (site_dir / "stages.csv").read_text(encoding="utf-8")
    assert stages_csv_text == stages_csv(stage_rows(site))
