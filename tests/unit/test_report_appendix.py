# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The report's operations appendix (issue 17 item 9): the alert rules the monitoring role installs, read from the
same data the role renders them from (data/monitoring/alert-rules.yml), each with its severity, what it means and
its first action, and the site's service level and contacts (results.json run.site, from the inventory through
_results.run_site); in HTML, Markdown and JSON, English and Chinese; run.site in the results schema; written by
the results action and by a partial record."""

from __future__ import annotations

import copy
import json
import os
import re
from types import SimpleNamespace
from unittest.mock import MagicMock

import pytest
import yaml
from hypothesis import given

from fuzzing import FUZZ, assert_total, json_mutations
from report_samples import rich_results
from test_report_browser import chromium, console_messages, needs_chromium, png_size
from test_report_language import ARTEFACTS

from ansible_collections.zhisuan.ops.plugins.action.results import ActionModule as ResultsAction
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.plugin_utils import _report, _report_ops, _results
from ansible_collections.zhisuan.ops.plugins.plugin_utils._report_i18n import translations
from ansible_collections.zhisuan.ops.plugins.plugin_utils._run_record import RunRecorder

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
DATA = os.path.join(REPO, "collections", "ansible_collections", "zhisuan", "ops", "data", "monitoring",
                    "alert-rules.yml")
LAB_VARS = os.path.join(REPO, "inventories", "lab", "group_vars", "all.yml")
SITE = {"name": "Hangzhou IDC hall 2", "service_level": "7x24; first response within 30 minutes",
        "contacts": [{"role": "delivery engineer", "name": "Li Wei", "phone": "+86 10 5555 0101",
                      "email": "delivery@example.com"},
                     {"role": "customer O&M", "name": "Wang Fang", "organisation": "IDC operations"}]}
HAN = re.compile(r"[\u4e00-\u9fff]")


def data_rules():
    with open(DATA, encoding="utf-8") as handle:
        data = yaml.safe_load(handle)
    return [rule for group in data["groups"] for rule in group["rules"]]


def with_site(site=SITE, kind="acceptance"):
    doc = rich_results(kind=kind)
    if site is not None:
        doc["run"]["site"] = copy.deepcopy(site)
    return doc


# ---------------------------------------------------------------------------------------------------------------
# the section


def test_the_appendix_lists_the_data_rules_and_the_site():
    doc = with_site()
    assert _report.validate_results(doc) == []
    view = _report.build_view(doc)
    appendix = view["appendix"]
    rules = data_rules()
    assert [(a["name"], a["severity"], a["remedy"], a["check_id"], a["meaning"], a["action"]) for a in appendix["alerts"]] \
        == [(r["alert"], r["severity"], r["remedy"], r["check_id"], r["meaning"], r["action"]) for r in rules]
    first = appendix["alerts"][0]
    assert (first["group"], first["severity_text"], first["remedy_text"]) == ("zhisuan-gpu-xid", "critical",
                                                                                "reset the GPU")
    assert appendix["site"]["name"] == "Hangzhou IDC hall 2" and appendix["problem"] is None
    # only the contact columns some contact fills, in a fixed order
    assert appendix["site"]["columns"] == [("role", "Role"), ("name", "Name"), ("organisation", "Organisation"),
                                           ("phone", "Phone"), ("email", "Email")]
    assert view["title"] == "GPU cluster acceptance report: Hangzhou IDC hall 2"


def test_english_html_markdown_and_json():
    doc = with_site()
    html = _report.render_html(doc)
    md = _report.render_markdown(doc)
    body = html[html.index('<section id="operations"'):]
    assert 'href="#operations">Operations appendix</a>' in html
    assert html.index('<section id="signoff"') < html.index('<section id="operations"')
    assert '<td data-site="name">Hangzhou IDC hall 2</td>' in body
    assert '<td data-site="service_level">7x24; first response within 30 minutes</td>' in body
    assert ('<tr data-contact="1"><td>delivery engineer</td><td>Li Wei</td><td></td><td>+86 10 5555 0101</td>'
            '<td><a href="mailto:delivery@example.com">delivery@example.com</a></td></tr>') in body
    assert body.count('<tr data-alert="') == len(data_rules()) > 0
    assert ('<tr data-alert="GpuRowRemapFailure" class="sev-critical"><td><code>GpuRowRemapFailure</code><br>'
            '<span class="muted">gpu.remap.failure</span></td><td class="sev">critical</td><td>The GPU could not remap '
            'a faulty memory row because no spare rows are left.</td><td><code>rma</code> return for repair (RMA)<br>'
            'Drain the node and return the GPU for repair (RMA).</td></tr>') in body
    for heading in ("Operations appendix", "Service level and contacts", "Alert rules"):
        assert heading in md
    assert "\n## Operations appendix\n" in md and "\n### Alert rules\n" in md
    assert "- Site: Hangzhou IDC hall 2\n- Service level: 7x24; first response within 30 minutes\n" in md
    assert "| Role | Name | Organisation | Phone | Email |\n|---|---|---|---|---|\n" in md
    assert "| customer O&M | Wang Fang | IDC operations |  |  |\n" in md
    assert ("| `NicLinkDown` (nic.link.state) | critical | A network port is down. | `check_cable` check the cable: "
            "Check the cable, the optic and the switch port. |\n") in md
    report = json.loads(_report.render_json(doc))
    assert report["appendix"]["site"]["contacts"][0] == dict(SITE["contacts"][0], organisation="")
    assert [(a["name"], a["meaning"], a["action"]) for a in report["appendix"]["alert_rules"]] == \
        [(r["alert"], r["meaning"], r["action"]) for r in data_rules()]
    assert report["run"]["site"] == "Hangzhou IDC hall 2"


def test_chinese_html_and_markdown():
    doc = with_site()
    view = _report.build_view(doc, language="zh_CN")
    html = _report.render_html(doc, None, view, language="zh_CN")
    md = _report.render_markdown(doc, None, view, language="zh_CN")
    for heading in ("\u8fd0\u7ef4\u9644\u5f55",):  # 运维附录
        assert "<h2>%s</h2>" % heading in html and "\n## %s\n" % heading in md
    for heading in ("\u670d\u52a1\u7b49\u7ea7\u4e0e\u8054\u7cfb\u4eba", "\u544a\u8b66\u89c4\u5219"):  # 服务等级与联系人, 告警规则
        assert "<h3>%s</h3>" % heading in html and "\n### %s\n" % heading in md
    rules = dict((r["alert"], r) for r in data_rules())
    for alert in view["appendix"]["alerts"]:
        # every alert's meaning and first action is in the catalog: Chinese, and not the English of the data
        assert HAN.search(alert["meaning"]) and alert["meaning"] != rules[alert["name"]]["meaning"], alert["name"]
        assert HAN.search(alert["action"]) and alert["action"] != rules[alert["name"]]["action"], alert["name"]
        assert alert["severity_text"] in ("\u4e25\u91cd", "\u8b66\u544a")  # 严重, 警告
        assert alert["meaning"] in html and alert["action"] in md
    ecc = [a for a in view["appendix"]["alerts"] if a["name"] == "GpuEccVolatileUncorrectable"][0]
    assert ecc["remedy_text"] == "\u91cd\u7f6e GPU"  # 重置 GPU
    assert ecc["action"] == "\u6392\u7a7a\u8282\u70b9\u5e76\u91cd\u7f6e GPU\u3002"  # 排空节点并重置 GPU。
    assert "| `reset_gpu` \u91cd\u7f6e GPU\uff1a\u6392\u7a7a\u8282\u70b9\u5e76\u91cd\u7f6e GPU\u3002 |" in md  # ：
    assert "<th>\u89d2\u8272</th><th>\u59d3\u540d</th>" in html  # 角色, 姓名
    # the inventory's texts stay as written; the JSON report keeps the English of the data
    assert "Hangzhou IDC hall 2" in html and "Li Wei" in md
    report = json.loads(_report.render_json(doc, view))
    assert report["appendix"]["alert_rules"][0]["meaning"] == data_rules()[0]["meaning"]


def test_every_alert_has_its_catalog_keys():
    names = [rule["alert"] for rule in data_rules()]
    assert sorted(_report_ops.ALERT_TEXTS) == sorted(["alert-meaning:" + n for n in names] +
                                                     ["alert-action:" + n for n in names])


def test_which_reports_carry_the_appendix():
    # a diagnosis without run.site: no appendix; with it, the site alone (no alert rules)
    assert _report.build_view(with_site(None, kind="diagnose"))["appendix"] is None
    view = _report.build_view(with_site(kind="diagnose"))
    assert view["appendix"]["alerts"] is None and view["appendix"]["site"]["name"] == "Hangzhou IDC hall 2"
    html = _report.render_html(with_site(kind="diagnose"))
    assert '<section id="operations"' in html and "data-alert=" not in html
    # an acceptance run without run.site: the alert rules alone, and no site block
    doc = with_site(None)
    view = _report.build_view(doc)
    assert view["appendix"]["site"] is None and len(view["appendix"]["alerts"]) == len(data_rules())
    assert "Service level and contacts" not in _report.render_markdown(doc)
    assert view["title"] == "GPU cluster acceptance report"


def test_unreadable_alert_data_is_named_and_the_report_goes_on(tmp_path):
    broken = tmp_path / "alert-rules.yml"
    rules = yaml.safe_load(open(DATA, encoding="utf-8"))
    del rules["groups"][2]["rules"][1]["meaning"]
    broken.write_text(yaml.safe_dump(rules), encoding="utf-8")
    section = _report_ops.appendix_section(with_site(), translations("en"), path=str(broken))
    assert section["alerts"] is None and section["site"]["name"] == "Hangzhou IDC hall 2"
    assert section["problem"] == ("zhisuan.ops.report: the alert rules %s: rule GpuTemperatureNearSlowdown lacks meaning"
                                  % broken)
    rules["groups"][2]["rules"][1].update(meaning="m", severity="page")
    broken.write_text(yaml.safe_dump(rules), encoding="utf-8")
    section = _report_ops.appendix_section(with_site(), translations("en"), path=str(broken))
    assert section["problem"] == ("zhisuan.ops.report: the alert rules %s: rule GpuTemperatureNearSlowdown has severity "
                                  "page and remedy investigate (severity: critical, warning; remedy: one of the suite's "
                                  "remedies)" % broken)
    broken.write_text("groups: [", encoding="utf-8")
    section = _report_ops.appendix_section(with_site(), translations("en"), path=str(broken))
    assert section["problem"].startswith("zhisuan.ops.report: cannot read the alert rules %s: " % broken)
    missing = _report_ops.appendix_section(with_site(), translations("en"), path=str(tmp_path / "none.yml"))
    assert "cannot read the alert rules" in missing["problem"]


def test_damaged_site_values_are_never_shown_raw():
    assert _report_ops.site_view({"name": ["x"], "contacts": [{"role": "a"}, "b", {"name": {"x": 1}}]}) is None
    assert _report_ops.site_view({"contacts": [{"name": "Li", "password": "s3cret"}]}) == {
        "name": "", "service_level": "", "contacts": [
            {"role": "", "name": "Li", "organisation": "", "phone": "", "email": ""}]}


_DOC = with_site()


@FUZZ
@given(json_mutations(SITE))
def test_the_appendix_is_total_on_damaged_site_data(site):
    doc = dict(_DOC, run=dict(_DOC["run"], site=site))
    assert_total("report.appendix_section", _report_ops.appendix_section, doc, translations("zh_CN"), allowed=())


@needs_chromium
@pytest.mark.parametrize("language, words", [
    ("en", ["Operations appendix", "Alert rules", "Service level and contacts"]),
    ("zh_CN", ["\u8fd0\u7ef4\u9644\u5f55", "\u544a\u8b66\u89c4\u5219", "\u670d\u52a1\u7b49\u7ea7"]),
])
def test_the_appendix_renders_in_chromium(tmp_path, language, words):
    paths = _report.write_reports(with_site(), str(tmp_path / "out"), ["html"], language=language)
    dom, err = chromium(tmp_path, paths["html"], "--dump-dom")
    assert console_messages(err) == []
    section = dom[dom.index('<section id="operations"'):]
    assert section.count('<tr data-alert="') == len(data_rules()) and section.count('<tr data-contact="') == 2
    for word in words:
        assert word in section, word
    os.makedirs(ARTEFACTS, exist_ok=True)
    shot = os.path.join(ARTEFACTS, "report-appendix-%s.png" % language)
    dummy_out, err = chromium(tmp_path, paths["html"], "--window-size=1280,2400", "--screenshot=%s" % shot)
    assert console_messages(err) == [] and png_size(shot) == (1280, 2400)


# ---------------------------------------------------------------------------------------------------------------
# run.site: from the inventory into results.json, checked by the schema


def test_run_site_from_the_inventory():
    site, problems = _results.run_site("  lab A ", "7x24", [
        {"role": "delivery engineer", "name": "Li", "phone": 13800000000, "password": "s3cret", "api_token": "t"},
        {"role": "NOC"}, "Wang", {"name": "Zhao", "email": ["a", "b"]}])
    assert site == {"name": "lab A", "service_level": "7x24", "contacts": [
        {"role": "delivery engineer", "name": "Li", "phone": "13800000000"}, {"name": "Zhao"}]}
    assert problems == [
        "zhisuan_contacts[0]: api_token, password left out (a contact has role, name, organisation, phone, email)",
        "zhisuan_contacts[1] has no name; left out",
        "zhisuan_contacts[2] must be a mapping (role, name, organisation, phone, email), not str",
        "zhisuan_contacts[3].email must be text, not list"]
    assert _results.run_site() == (None, []) and _results.run_site("", None, []) == (None, [])
    assert _results.run_site({"a": 1}, None, {"name": "x"}) == (None, [
        "zhisuan_site_name must be text, not dict",
        "zhisuan_contacts must be a list of contacts (role, name, organisation, phone, email), not dict"])
    assert _results.site_of(None) == (None, []) and _results.site_of("x")[0] is None


def test_the_schema_checks_run_site():
    run = dict(rich_results()["run"], site=SITE)
    doc = _results.build_results(run, {})
    assert _results.validate(doc) == []
    for bad, where in (("lab", "run/site"), ({}, "run/site"), ({"name": ""}, "run/site/name"),
                       ({"contacts": []}, "run/site/contacts"),
                       ({"contacts": [{"role": "NOC"}]}, "run/site/contacts/0"),
                       ({"contacts": [{"name": "Li", "password": "x"}]}, "run/site/contacts/0"),
                       ({"name": "lab", "owner": "x"}, "run/site"), ({"service_level": 3}, "run/site/service_level")):
        problems = _results.validate(_results.build_results(dict(run, site=bad), {}))
        assert [p.split(":")[0] for p in problems] == [where], (bad, problems)
    # what run_site builds is always valid
    site, dummy = _results.run_site(*[SITE[k] for k in ("name", "service_level", "contacts")])
    assert _results.validate(_results.build_results(dict(run, site=site), {})) == []


def test_the_lab_inventory_has_example_values_the_schema_accepts():
    with open(LAB_VARS, encoding="utf-8") as handle:
        lab = yaml.safe_load(handle)
    site, problems = _results.run_site(lab["zhisuan_site_name"], lab["zhisuan_service_level"], lab["zhisuan_contacts"])
    assert problems == [] and len(site["contacts"]) == 3 and site["name"].startswith("zhisuan lab")
    assert _results.validate(_results.build_results(dict(rich_results()["run"], site=site), {})) == []


def _record(tmp_path, site_fact):
    task = SimpleNamespace(args={"run_id": "r1", "kind": "acceptance", "started": "2026-12-01T10:00:00+00:00",
                                 "dest": str(tmp_path / "r1")},
                           check_mode=False, async_val=0, action="zhisuan.ops.results")
    connection = MagicMock()
    connection._shell.tmpdir = "/nonexistent"
    # the sixth argument (shared_loader_obj) is required by ansible-core 2.16, optional since 2.17
    action = ResultsAction(task, connection, MagicMock(), MagicMock(), MagicMock(), MagicMock())
    action._display = MagicMock()  # pylint: disable=protected-access
    check = make_check("gpu.count.present", "node01", "pass", observed=8, expected=8)
    hostvars = {"localhost": {"results_run_site": site_fact},
                "node01": {"results_targeted": True, "results_checks": [check], "vault_bmc_password": "s3cret"}}
    out = action.run(task_vars={"hostvars": hostvars})
    with open(out["path"], encoding="utf-8") as handle:
        return json.load(handle), action._display  # pylint: disable=protected-access


def test_the_results_action_writes_run_site(tmp_path):
    document, dummy = _record(tmp_path, {"name": "lab A", "service_level": None,
                                         "contacts": [{"role": "NOC", "name": "desk", "phone": "+86 10 5555 0303"}]})
    assert document["run"]["site"] == {"name": "lab A",
                                       "contacts": [{"role": "NOC", "name": "desk", "phone": "+86 10 5555 0303"}]}
    assert "s3cret" not in json.dumps(document)
    document, display = _record(tmp_path, {"name": None, "service_level": None, "contacts": [{"pager": 1}]})
    assert "site" not in document["run"]
    warned = [call.args[0] for call in display.warning.call_args_list]
    assert "zhisuan.ops.results: run.site: zhisuan_contacts[0] has no name; left out" in warned


def test_a_partial_record_keeps_run_site(tmp_path):
    warnings = []
    recorder = RunRecorder(write_report=None, warn=warnings.append)
    recorder.observe_facts("node01", {
        "results_run_started": "2026-12-01T10:00:00+00:00", "results_run_id": "r1", "results_run_kind": "acceptance",
        "results_run_families": ["gpu"], "results_run_latest_link": str(tmp_path / "latest"),
        "results_run_site": {"name": "lab A", "service_level": "7x24", "contacts": [{"name": "Li", "pager": "x"}]}})
    recorder.observe_facts("node01", {"results_run_dir": str(tmp_path / "r1")})
    path = recorder.finish("interrupted")
    with open(path, encoding="utf-8") as handle:
        document = json.load(handle)
    assert document["run"]["site"] == {"name": "lab A", "service_level": "7x24", "contacts": [{"name": "Li"}]}
    assert _results.validate(document) == []
    assert "zhisuan.ops: run.site: zhisuan_contacts[0]: pager left out (a contact has role, name, organisation, " \
           "phone, email)" in warnings
