# SPDX-License-Identifier: GPL-3.0-or-later
"""Words per run (issue 26 item 7): an inspection, a diagnosis and a repair plan speak of an inspection, a diagnosis
and a repair plan, never of acceptance, in English and in Chinese; no acceptance sign-off block on them; a
remediate --check plan over broken nodes does not read "ACCEPTED WITH CONDITIONS ... all hosts passed"."""

from __future__ import annotations

import pytest

from report_samples import rich_results

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.plugin_utils import _report, _results

RUN = {"id": "20261203T170000Z-remediate", "kind": "remediate", "started": "2026-12-03T17:00:00+00:00",
       "finished": "2026-12-03T17:01:00+00:00", "playbook": "playbooks/remediate.yml",
       "collection_version": "0.1.0", "ansible_version": "2.19.14", "families": ["remediate"]}
ACCEPTANCE_WORDS = ("ACCEPTED", "Sign-off", "The undersigned", "accepted only when")
# 验收结论, 验收签字, 予以验收, 不予验收, 有条件验收, 签字各方确认
ACCEPTANCE_WORDS_ZH = ("\u9a8c\u6536\u7ed3\u8bba", "\u9a8c\u6536\u7b7e\u5b57", "\u4e88\u4ee5\u9a8c\u6536",
                       "\u4e0d\u4e88\u9a8c\u6536", "\u6709\u6761\u4ef6\u9a8c\u6536", "\u7b7e\u5b57\u5404\u65b9\u786e\u8ba4")


def repair_plan(planned=6, nothing=4, check_mode=True):
    """The record remediate.yml --check writes: a warn "planned" plan check on each node to repair, a pass on the
    others (playbooks/remediate.yml, "Keep the plan's word for a node that was not acted on")."""
    hosts = {}
    for index in range(planned + nothing):
        name = "node%02d" % (index + 1)
        if index < planned:
            check = make_check("remediate.plan.status", name, "warn", component="GPU 3", observed="planned",
                               expected="repaired", remedy="reset_gpu",
                               message="check mode: reset_gpu would run (automatic, batch 1)")
        else:
            check = make_check("remediate.plan.status", name, "pass", component="node", observed="nothing to do",
                               expected="nothing to do", message="no finding that remediation acts on")
        hosts[name] = _results.host_record(name, [check])
    return _results.build_results(RUN, hosts, cluster_data={"remediation": {"check_mode": check_mode}})


def rendered(results, language):
    view = _report.build_view(results, language=language)
    return view, _report.render_html(results, None, view, language=language), \
        _report.render_markdown(results, None, view, language=language)


def test_a_repair_plan_over_broken_nodes_is_a_plan_not_an_acceptance():
    view, html, md = rendered(repair_plan(), "en")
    assert view["verdict"]["text"] == "REPAIR PLAN"
    assert view["verdict"]["detail"] == "check mode, nothing was changed: 6 nodes to repair, 4 nodes with nothing to do"
    assert view["title"] == "GPU cluster repair plan"
    assert "all 10 hosts passed" not in html + md
    for words in ACCEPTANCE_WORDS:
        assert words not in html and words not in md, words
    assert "## Result: REPAIR PLAN" in md
    assert 'id="signoff"' not in html
    # the verdict line the run prints at its end (zhisuan.ops.run_summary reads it from the action's summary)
    key, summary = _report.verdict_summary(repair_plan())
    assert summary["grade"] == "conditional"


def test_a_real_remediation_is_worded_as_one():
    view = _report.build_view(repair_plan(check_mode=False))
    assert view["verdict"]["text"] == "REPAIRS LEFT OPEN" and view["title"] == "GPU cluster remediation report"


@pytest.mark.parametrize("kind, text, title, zh_text, zh_title", [
    # 巡检发现问题, GPU 集群巡检报告
    ("inspect", "INSPECTION FOUND PROBLEMS", "GPU cluster inspection report",
     "\u5de1\u68c0\u53d1\u73b0\u95ee\u9898", "GPU \u96c6\u7fa4\u5de1\u68c0\u62a5\u544a"),
    # 发现故障, GPU 集群故障诊断报告
    ("diagnose", "FAULTS FOUND", "GPU cluster diagnosis report",
     "\u53d1\u73b0\u6545\u969c", "GPU \u96c6\u7fa4\u6545\u969c\u8bca\u65ad\u62a5\u544a"),
])
def test_an_inspection_and_a_diagnosis_speak_of_themselves(kind, text, title, zh_text, zh_title):
    results = rich_results(kind=kind, run_id="20261130T220000Z-%s" % kind)
    view, html, md = rendered(results, "en")
    assert view["verdict"]["text"] == text and view["title"] == title
    assert "## Result: %s" % text in md and "<h1>%s</h1>" % title in html
    for words in ACCEPTANCE_WORDS:
        assert words not in html and words not in md, words
    view, html, md = rendered(results, "zh_CN")
    assert view["verdict"]["display_text"] == zh_text
    assert "<h1>%s</h1>" % zh_title in html
    assert "## \u7ed3\u8bba\uff1a%s" % zh_text in md  # 结论：...
    for words in ACCEPTANCE_WORDS_ZH:
        assert words not in html and words not in md, words


def test_a_clean_inspection_passes_as_an_inspection():
    results = repair_plan(planned=0, nothing=3)
    results["run"] = dict(results["run"], kind="inspect")
    del results["cluster"]["remediation"]
    view = _report.build_view(results, language="zh_CN")
    assert view["verdict"]["text"] == "INSPECTION PASSED"
    assert view["verdict"]["display_text"] == "\u5de1\u68c0\u901a\u8fc7"  # 巡检通过


def test_the_acceptance_keeps_its_verdict_and_sign_off():
    view, html, md = rendered(rich_results(), "en")
    assert view["verdict"]["text"] == "NOT ACCEPTED" and view["title"] == "GPU cluster acceptance report"
    assert 'id="signoff"' in html and "## Verdict: NOT ACCEPTED" in md and "## Sign-off" in md


def test_a_re_render_in_another_language_goes_beside_the_original(tmp_path):
    results = rich_results(nodes=3)
    first = _report.write_reports(results, str(tmp_path), ["html", "markdown", "json"])
    assert first["html"] == str(tmp_path / "report.html")
    english = (tmp_path / "report.html").read_text()
    assert '<html lang="en">' in english
    again = _report.write_reports(results, str(tmp_path), ["html", "markdown", "json"], language="zh_CN")
    assert again["html"] == str(tmp_path / "report.zh_CN.html") and again["markdown"] == str(tmp_path / "report.zh_CN.md")
    assert '<html lang="zh-CN">' in (tmp_path / "report.zh_CN.html").read_text()
    assert "\u9a8c\u6536" in (tmp_path / "report.zh_CN.md").read_text()  # 验收
    # the original is untouched, and English again rewrites the original only
    assert (tmp_path / "report.html").read_text() == english
    assert _report.write_reports(results, str(tmp_path), ["html"])["html"] == str(tmp_path / "report.html")
    # a run first rendered in Chinese keeps report.html in Chinese; its English re-render goes beside it
    zh_dir = tmp_path / "zh"
    assert _report.write_reports(results, str(zh_dir), ["html"], language="zh_CN")["html"] == str(zh_dir / "report.html")
    assert _report.write_reports(results, str(zh_dir), ["html"])["html"] == str(zh_dir / "report.en.html")
    assert '<html lang="zh-CN">' in (zh_dir / "report.html").read_text()
