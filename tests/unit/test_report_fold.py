# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A delivery is many runs (issue 26 item 8): a re-test of two repaired nodes folds into the acceptance run, the newer
result per node wins, the report names the re-tested nodes and when; through the report action (ansible-playbook
playbooks/report.yml) and as the pure fold; and the report's times in the site's zone (item 2)."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys

import pytest

from ansible_collections.zhisuan.ops.plugins.plugin_utils import _report, _report_time
from ansible_collections.zhisuan.ops.plugins.plugin_utils._report_errors import ReportError
from ansible_collections.zhisuan.ops.plugins.plugin_utils._report_fold import fold_retests

from report_samples import rich_results

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))


def acceptance_and_retest():
    """The acceptance run (node03 fails ECC, node08 unreachable) and a re-test of node03 and node08 after repair,
    both passing: node03's passing record and node08's, each from a passing node of the same run."""
    base = rich_results()
    retest = rich_results(run_id="20261201T090000Z-acceptance", started="2026-12-01T09:00:00+00:00")
    retest["run"]["finished"] = "2026-12-01T09:20:00+00:00"
    good = copy.deepcopy(retest["hosts"]["node01"])
    for name in ("node03", "node08"):
        record = copy.deepcopy(good)
        for check in record["checks"]:
            check["host"] = name
        retest["hosts"][name] = record
    retest["hosts"] = dict((n, r) for n, r in retest["hosts"].items() if n in ("node03", "node08"))
    retest["run"]["hosts_total"] = 2
    return base, retest


def test_newer_result_wins_and_the_fold_is_recorded():
    base, retest = acceptance_and_retest()
    assert base["hosts"]["node03"]["status"] == "fail" and base["hosts"]["node08"]["status"] == "unreachable"
    folded = fold_retests(base, [retest])
    assert folded["hosts"]["node03"]["status"] == "pass" and folded["hosts"]["node08"]["status"] == "pass"
    assert folded["hosts"]["node05"] == base["hosts"]["node05"]  # not re-tested: the first result stays
    assert folded["cluster"]["checks"] == base["cluster"]["checks"]
    assert folded["run"]["retests"] == [{"id": "20261201T090000Z-acceptance", "started": "2026-12-01T09:00:00+00:00",
                                         "finished": "2026-12-01T09:20:00+00:00", "hosts": ["node03", "node08"]}]
    assert folded["run"]["id"] == base["run"]["id"] and folded["run"]["finished"] == "2026-12-01T09:20:00+00:00"
    assert folded["summary"]["hosts"]["unreachable"] == 0 and folded["summary"]["hosts"]["fail"] < \
        base["summary"]["hosts"]["fail"] + 1
    assert base["hosts"]["node03"]["status"] == "fail"  # the base is not changed
    _report.validate_results(folded)
    # a second re-test of node03 wins over the first; node08 stays with the first
    later = copy.deepcopy(retest)
    later["run"].update(id="r3", started="2026-12-02T09:00:00+00:00", finished="2026-12-02T09:05:00+00:00")
    later["hosts"] = {"node03": later["hosts"]["node03"]}
    twice = fold_retests(base, [later, retest])
    assert [(r["id"], r["hosts"]) for r in twice["run"]["retests"]] == [("20261201T090000Z-acceptance", ["node08"]),
                                                                        ("r3", ["node03"])]


@pytest.mark.parametrize("change, message", [
    (lambda r: r["run"].update(kind="burnin"), r"retest r2 is a burnin run, the base run .* is acceptance; fold"),
    (lambda r: r["run"].update(started="2026-11-01T00:00:00+00:00"), r"retest r2 \(2026-11-01T00:00:00\+00:00\) "
                                                                      r"started before the base run"),
    (lambda r: r["hosts"].update(node99=r["hosts"]["node03"]), r"retest r2 has hosts the base run .* does not: node99"),
])
def test_a_retest_that_does_not_fit_is_refused(change, message):
    base, retest = acceptance_and_retest()
    change(retest)
    with pytest.raises(ReportError, match=message):
        fold_retests(base, [retest], sources=["r2"])


def test_the_report_names_the_retested_nodes():
    base, retest = acceptance_and_retest()
    folded = fold_retests(base, [retest])
    html = _report.render_html(folded)
    section = html[html.index('<section id="retests">'):html.index("</section>", html.index('<section id="retests">'))]
    assert section.count('data-retest="20261201T090000Z-acceptance"') == 2
    assert '<tr data-host="node03" data-retest="20261201T090000Z-acceptance">' in section
    assert "2026-12-01T09:00:00+00:00" in section
    md = _report.render_markdown(folded)
    assert "| node08 | `20261201T090000Z-acceptance` | 2026-12-01T09:00:00+00:00 |" in md
    zh = _report.render_html(folded, language="zh_CN")
    assert "<h2>\u590d\u6d4b\u8282\u70b9</h2>" in zh  # 复测节点
    assert '<section id="retests">' not in _report.render_html(base)


def test_report_playbook_folds_a_retest(tmp_path):
    base, retest = acceptance_and_retest()
    for doc in (base, retest):
        run_dir = tmp_path / "out" / doc["run"]["id"]
        run_dir.mkdir(parents=True)
        (run_dir / "results.json").write_text(json.dumps(doc), encoding="utf-8")
    src = tmp_path / "out" / base["run"]["id"] / "results.json"
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"))
    proc = subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"),
         os.path.join(REPO, "playbooks", "report.yml"),
         "-e", "report_src=%s" % src, "-e", json.dumps({"report_retests": [str(tmp_path / "out" / retest["run"]["id"])],
                                                         "report_history_dir": str(tmp_path / "history")})],
        capture_output=True, text=True, timeout=300, cwd=REPO, env=env, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    dest = tmp_path / "out" / (base["run"]["id"] + "-retested")
    folded = json.loads((dest / "results.json").read_text(encoding="utf-8"))
    assert folded["run"]["retests"][0]["hosts"] == ["node03", "node08"]
    assert 'data-retest="20261201T090000Z-acceptance"' in (dest / "report.html").read_text(encoding="utf-8")
    assert json.loads(src.read_text(encoding="utf-8")) == base  # the signed run's own record is untouched
    assert not (tmp_path / "history").exists() or not os.listdir(str(tmp_path / "history"))


def test_times_in_the_sites_zone():
    """Issue 26 item 2: zhisuan_timezone (the report's timezone) shows every time in the site's zone with its offset;
    the records keep theirs."""
    base, retest = acceptance_and_retest()
    folded = fold_retests(base, [retest])
    rendered, view = _report.render_reports(folded, ["html", "markdown"], language="zh_CN", timezone="Asia/Shanghai")
    assert view["run"]["started"] == "2026-12-01T06:00:00+08:00"  # 2026-11-30T22:00:00+00:00
    signoff = rendered["html"][rendered["html"].index('<section id="signoff"'):]
    assert "2026-12-01T06:00:00+08:00" in signoff and "+00:00" not in signoff
    assert "2026-12-01T17:00:00+08:00" in rendered["html"]  # the re-test's start, through the iso filter
    assert "2026-12-01T17:00:00+08:00" in rendered["markdown"]
    assert folded["run"]["started"] == "2026-11-30T22:00:00+00:00"
    # no zone: as recorded; an unknown zone is refused naming it
    assert _report.build_view(folded)["run"]["started"] == "2026-11-30T22:00:00+00:00"
    with pytest.raises(ReportError, match=r"timezone 'Asia/Shanghia' is not a known IANA time zone"):
        _report.build_view(folded, timezone="Asia/Shanghia")
    assert _report_time.controller_zone({"TZ": ":Asia/Shanghai"}) == "Asia/Shanghai"
    assert _report_time.controller_zone({}, localtime="/usr/share/zoneinfo/Etc/UTC") == "Etc/UTC"
