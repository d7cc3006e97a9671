# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Repeat offenders in the KPIs (issue 16): counted from the remediation log by the escalation rule of
module_utils/_remediate/escalate.py, with the rule a remediation run recorded, and shown with its definition in the
KPI table of the report, in English and Chinese."""

from __future__ import annotations

import datetime

from ansible_collections.zhisuan.ops.plugins.module_utils._remediate import history
from ansible_collections.zhisuan.ops.plugins.module_utils._remediate.escalate import repeat_offenders
from ansible_collections.zhisuan.ops.plugins.module_utils._remediate.policy import normalize
from ansible_collections.zhisuan.ops.plugins.plugin_utils import _kpi as kpi
from ansible_collections.zhisuan.ops.plugins.plugin_utils import _report

from report_samples import check

NOW = datetime.datetime(2026, 12, 1, 12, 0, tzinfo=datetime.timezone.utc)
ECC = "gpu.ecc.volatile_uncorrectable"
XID = "xid.48.events"


def records(node, cause, *remedies, days_ago=1, outcome="repaired"):
    """History records as zhisuan.ops.remediation_history writes them (history.make_record)."""
    out = []
    for index, remedy in enumerate(remedies):
        finished = (NOW - datetime.timedelta(days=days_ago, hours=index + 1)).isoformat()
        out.append(history.make_record({"time": finished, "run_id": "rem%d" % index, "node": node, "cause": cause,
                                        "remedy": remedy, "action": remedy, "outcome": outcome, "finished": finished,
                                        "detected": finished, "resumed": finished}))
    return out


def run(run_id, started, hosts, kind="acceptance", escalation=None):
    doc = {"schema": "zhisuan.ops/results/v1",
           "run": {"id": run_id, "kind": kind, "started": started, "finished": started, "playbook": "p",
                   "collection_version": "0.1.0", "ansible_version": "2.19.14", "hosts_total": len(hosts)},
           "hosts": hosts, "cluster": {"checks": []}, "summary": {"hosts": {}, "checks": {}}}
    if escalation is not None:
        doc["cluster"]["remediation"] = {"escalation": escalation, "repeat_offenders": []}
    return doc


def host(name):
    return {"status": "pass", "facts": {"gpu": {"count": 8}},
            "checks": [check("gpu.count.present", name, "pass", "node", 8, "== 8", "8 GPUs")]}


def test_repeat_offenders_follow_the_escalation_rule():
    rules = normalize({})["escalation"]
    log = (records("node07", XID, "reset_gpu", "reset_gpu", "reset_gpu")
           + records("node03", ECC, "reset_gpu", "reset_gpu")                       # two resets: not yet
           + records("node05", ECC, "reset_gpu", "reset_gpu", "reset_gpu", days_ago=40)  # outside the window
           + records("node06", ECC, "reset_gpu", "reset_gpu", "reset_gpu", outcome="ticket")  # not carried out
           + records("node08", ECC, "reset_gpu") + records("node08", XID, "reset_gpu", "reset_gpu"))  # two causes
    rows = repeat_offenders(log, rules, NOW)
    assert [(r["node"], r["cause"], r["tries"], r["remedy"], r["to"]) for r in rows] == [
        ("node07", XID, {"reset_gpu": 3}, "reset_gpu", "power_cycle")]
    assert "3 x reset_gpu within 30 days" in rows[0]["reason"]
    # after the escalated power cycle the same cause coming back is an RMA; the node stays one offender
    log += records("node07", XID, "power_cycle", days_ago=0)
    assert [(r["node"], r["to"], r["tries"]) for r in repeat_offenders(log, rules, NOW)] == [
        ("node07", "rma", {"reset_gpu": 3, "power_cycle": 1})]
    # a site's N = 2 makes node03 and node08's xid one too
    two = normalize({"escalation": {"repeats": 2}})["escalation"]
    assert [(r["node"], r["cause"]) for r in repeat_offenders(log, two, NOW)] == [
        ("node03", ECC), ("node07", XID), ("node08", XID)]


def test_kpis_count_repeat_offenders_by_the_rule_the_remediation_run_recorded():
    log = (records("node07", XID, "reset_gpu", "reset_gpu", "reset_gpu")
           + records("node03", ECC, "reset_gpu", "reset_gpu"))
    hosts = {"node03": host("node03"), "node07": host("node07")}
    first = run("a1", "2026-11-20T10:00:00+00:00", hosts)
    last = run("a2", "2026-11-30T08:00:00+00:00", hosts)
    block = kpi.kpis([first, last], log)["repeat_offenders"]
    assert (block["count"], block["nodes"], block["repeats"], block["window_days"], block["source"]) == (
        1, ["node07"], 3, 30, "default")
    # the newest log record is later than the last run: the count is as of that record
    assert block["as_of"] == "2026-11-30T11:00:00+00:00"
    remediate = run("rem", "2026-11-25T10:00:00+00:00", hosts, kind="remediate",
                    escalation={"repeats": 2, "window_days": 14, "ladder": ["reset_gpu", "power_cycle", "rma"]})
    block = kpi.kpis([first, remediate, last], log)["repeat_offenders"]
    assert (block["count"], block["nodes"], block["repeats"], block["window_days"], block["source"]) == (
        2, ["node03", "node07"], 2, 14, "run rem")
    # the history's slimmed copy of the run keeps the rule (and nothing else of the remediation block)
    from ansible_collections.zhisuan.ops.plugins.plugin_utils._history import slim
    assert slim(remediate)["cluster"]["remediation"] == {"escalation": remediate["cluster"]["remediation"]["escalation"]}
    assert kpi.kpis([first, slim(remediate), last], log)["repeat_offenders"]["source"] == "run rem"
    assert "remediation" not in slim(first)["cluster"]
    # a rule the caller gives wins; a broken recorded rule is passed over for the defaults
    assert kpi.kpis([first, remediate, last], log, escalation={"repeats": 5})["repeat_offenders"]["count"] == 0
    broken = dict(remediate, cluster={"checks": [], "remediation": {"escalation": {"repeats": 0}}})
    assert kpi.kpis([first, broken, last], log)["repeat_offenders"]["source"] == "default"
    # no log: none, as of the last run
    block = kpi.kpis([first, last])["repeat_offenders"]
    assert (block["count"], block["rows"], block["as_of"]) == (0, [], "2026-11-30T08:00:00+00:00")


def test_the_kpi_table_shows_the_count_with_its_definition():
    log = (records("node07", XID, "reset_gpu", "reset_gpu", "reset_gpu")
           + records("node07", XID, "power_cycle", days_ago=0))
    hosts = {"node03": host("node03"), "node07": host("node07")}
    results = run("a2", "2026-12-01T10:00:00+00:00", hosts)
    history_runs = [run("a1", "2026-11-20T10:00:00+00:00", hosts), results]
    view = _report.build_view(results, history_runs, log)
    assert view["kpis"]["repeat_offenders"]["count"] == 1
    assert view["kpi_notes"]["repeat_offenders"] == [
        "node07 (xid.48.events: reset_gpu \u00d7 3, power_cycle \u00d7 1 \u2192 rma)"]
    html = _report.render_html(results, None, view)
    kpis = html[html.index('<section id="kpis">'):]
    row = kpis[kpis.index("<th>Repeat offenders</th>"):]
    row = row[:row.index("</tr>")]
    assert '<td data-kpi="repeat_offenders">1<br>' in row
    assert ("Nodes with the same cause repaired 3 times within 30 days (remediation log; actions carried out, "
            "repaired or failed), so that the escalation rule moves their next remedy up the ladder reset_gpu "
            "\u2192 power_cycle \u2192 rma. As of 2026-12-01T11:00:00+00:00; rule from the remediation policy "
            "defaults.") in row
    md = _report.render_markdown(results, None, view)
    line = [text for text in md.splitlines() if text.startswith("| Repeat offenders |")]
    assert len(line) == 1 and line[0].startswith(
        "| Repeat offenders | 1: node07 (xid.48.events: reset_gpu \u00d7 3, power_cycle \u00d7 1 \u2192 rma) | Nodes with")
    # the KPI table in Chinese: the label and the definition from the catalog
    zh = _report.build_view(results, history_runs, log, language="zh_CN")
    html = _report.render_html(results, None, zh, language="zh_CN")
    # 同一原因在 30 天内已修复 3 次的节点
    assert "\u540c\u4e00\u539f\u56e0\u5728 30 \u5929\u5185\u5df2\u4fee\u590d 3 \u6b21\u7684\u8282\u70b9" in html
    assert "\u4fee\u590d\u7b56\u7565\u7684\u9ed8\u8ba4\u503c" in html  # 修复策略的默认值
    md = _report.render_markdown(results, None, zh, language="zh_CN")
    assert "\u540c\u4e00\u539f\u56e0\u5728 30 \u5929\u5185" in md and "Nodes with the same cause" not in md
