# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The Chinese report complete (issue 26 item 2): the zh_CN HTML and Markdown of an acceptance run with a previous
run and a history (changes, KPIs, every data section) and of a diagnosis run built by the producers from real
captures (report_samples.ops_results) hold no English sentence outside data values. A sentence is three or more
English words in a row; data values are what the records carry as data (host names, components, observed and
expected values, evidence, tool errors, the site's own texts, check ids in code) and are taken out first.
test_report_language.py checks the catalog itself: every extracted message has its Chinese."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from ansible_collections.zhisuan.ops.plugins.plugin_utils import _report

from report_samples import ops_results, rich_results

# three or more English words in a row (a word: a letter then lower-case letters), not part of an id or a path
SENTENCE = re.compile(r"(?<![\w./-])(?:[A-Za-z][a-z]+[,;:]? ){2,}[A-Za-z][a-z]+(?![\w./-])")
# elements whose text is data: code and values, pictures and CSS, and the hidden page title
DATA_TAGS = {"code", "pre", "style", "svg", "title"}
DATA_CLASSES = {"val", "num"}


class _Text(HTMLParser):
    """The visible text of an HTML report, one line per block, without the data elements."""

    BLOCKS = {"td", "th", "p", "li", "div", "h1", "h2", "h3", "dt", "dd", "summary", "figcaption", "tr"}
    VOID = {"br", "meta", "link", "img", "input", "hr"}

    def __init__(self):
        super().__init__()
        self.stack, self.out, self.data = [], [], 0

    def handle_starttag(self, tag, attrs):
        if tag in self.VOID:
            return
        classes = set((dict(attrs).get("class") or "").split())
        is_data = tag in DATA_TAGS or bool(classes & DATA_CLASSES)
        self.stack.append((tag, is_data))
        self.data += is_data
        if tag in self.BLOCKS:
            self.out.append("\n")

    def handle_endtag(self, tag):
        while self.stack:
            name, is_data = self.stack.pop()
            self.data -= is_data
            if name == tag:
                break
        self.out.append("\n")

    def handle_data(self, data):
        if not self.data:
            self.out.append(data)


def html_text(html):
    parser = _Text()
    parser.feed(html)
    return "".join(parser.out)


def markdown_text(md):
    md = re.sub(r"```.*?```", "\n", md, flags=re.S)
    return re.sub(r"`[^`\n]*`", " ", md)


def data_values(results):
    """Every text the records carry as data, longest first."""
    values = set()

    def add(value):
        if isinstance(value, str) and value.strip():
            values.add(value.strip())
        elif isinstance(value, dict):
            for key, item in value.items():
                add(key.replace("_", " "))  # fact names head the data tables ("rx power dbm")
                add(item)
        elif isinstance(value, list):
            for item in value:
                add(item)

    checks = [c for h in results["hosts"].values() for c in h.get("checks") or []] + results["cluster"]["checks"]
    for check in checks:
        for key in ("component", "observed", "expected", "evidence"):
            add(check.get(key))
        if check["status"] == "error":
            add(check["message"])  # a tool's own error words
    for record in results["hosts"].values():
        add(record.get("message"))  # the connection's own words for an unreachable host
        add(record.get("facts"))
    add(results["run"].get("site"))
    # family codes are codes, like the check ids they begin (the family table, _report_i18n.FAMILY_NAMES, names the
    # families it knows; a family it does not know yet is shown by its code)
    add(sorted(set(c["id"].split(".")[0] for c in checks) | set(results["run"].get("families") or [])))
    add({k: v for k, v in results["cluster"].items() if k != "checks"})
    return sorted(values, key=len, reverse=True)


def english_sentences(text, values):
    for value in values:
        for form in {value, _report.md_text(value)}:
            text = re.sub(r"(?<!\w)%s(?!\w)" % re.escape(form), " ", text)
    found = []
    for line in text.splitlines():
        found.extend((m.group(0), line.strip()[:160]) for m in SENTENCE.finditer(line))
    return found


def acceptance_with_history():
    previous = rich_results(run_id="r0", started="2026-11-30T20:00:00+00:00")
    previous["hosts"]["node02"]["checks"][0].update(status="fail", observed=7, remedy="reseat")
    previous["hosts"]["node02"]["status"] = "fail"
    current = rich_results()
    return current, [previous, current]


CASES = {"acceptance": acceptance_with_history, "diagnosis": lambda: (ops_results(), None)}


@pytest.mark.parametrize("case", sorted(CASES))
def test_chinese_report_has_no_english_sentence(case):
    results, history = CASES[case]()
    rendered, view = _report.render_reports(results, ["html", "markdown"], history=history, remediation=[],
                                            language="zh_CN")
    if case == "acceptance":
        assert view["kpis"] and view["changes"] and view["skips"] is not None  # the sections are there to be read
    values = data_values(results)
    html = english_sentences(html_text(rendered["html"]), values)
    md = english_sentences(markdown_text(rendered["markdown"]), values)
    assert html == [] and md == []


def test_the_detector_finds_english():
    """Not vacuous: the English report of the same run is full of sentences, and one English sentence put into the
    Chinese HTML is found."""
    results, history = acceptance_with_history()
    rendered, dummy_view = _report.render_reports(results, ["html"], history=history, remediation=[])
    assert len(english_sentences(html_text(rendered["html"]), data_values(results))) > 50
    zh, dummy_view = _report.render_reports(results, ["html"], history=history, remediation=[], language="zh_CN")
    planted = zh["html"].replace("</h1>", "</h1><p>This run was not checked</p>", 1)
    assert english_sentences(html_text(planted), data_values(results)) == [
        ("This run was not checked", "This run was not checked")]


def test_translated_failures_keep_their_remedy():
    results, history = acceptance_with_history()
    html = _report.render_html(results, language="zh_CN")
    issues = html[html.index('<section id="issues">'):html.index("</section>", html.index('<section id="issues">'))]
    # the ECC failure of node03: its subject, the values, and what to do, in Chinese
    row = re.search(r'<tr class="issue st-row-fail" data-host="node03" data-check="gpu.ecc.volatile_uncorrectable">'
                    r'(.*?)</tr>', issues, re.S).group(1)
    assert "不合格" in row and "处理建议：重置 GPU" in row
    assert "GPU 集群验收报告" in html and "跑分" not in html
