# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The report in Chinese and English (issue 17 item 7): gettext catalogs in the collection (data/locale), extracted
with Babel from the templates and the report's Python, every extracted message translated in zh_CN, the shipped .mo
compiled from the shipped .po; a Chinese render with Chinese headings, verdict, sign-off, family and remedy names and
the GPU, XID, NIC, RDMA, NCCL and BMC check messages, the other families in English; both checked in Chromium."""

from __future__ import annotations

import gettext
import io
import os
import re
import shutil
import subprocess

import pytest
from markupsafe import escape
from babel.messages.extract import extract_from_dir
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

from report_samples import rich_results

from ansible_collections.zhisuan.ops.plugins.plugin_utils import _report, _report_i18n

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
COLLECTION = os.path.join(REPO, "collections", "ansible_collections", "zhisuan", "ops")
LOCALE = os.path.join(COLLECTION, "data", "locale")
PO = os.path.join(LOCALE, "zh_CN", "LC_MESSAGES", "report.po")
MO = os.path.join(LOCALE, "zh_CN", "LC_MESSAGES", "report.mo")
ARTEFACTS = os.environ.get("ZHISUAN_TEST_ARTEFACTS") or os.path.join(REPO, "reports", "out", "test-artefacts")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run", "--enable-logging=stderr", "--v=0"]
CONSOLE_RE = re.compile(r':CONSOLE(?::\d+|\(\d+\))\] "(.*)", source: (\S*)')
KEYWORDS = {"_": None, "gettext": None, "ngettext": (1, 2), "pgettext": ((1, "c"), 2), "N_": None, "NN_": (1, 2),
            "NP_": ((1, "c"), 2)}
METHODS = [("plugins/plugin_utils/_report*.py", "python"), ("plugins/plugin_utils/_svg_overview.py", "python"),
           ("data/templates/*.j2", "jinja2")]


def catalog():
    with open(PO, "rb") as handle:
        return read_po(handle, locale="zh_CN")


def extracted():
    """(context, msgid) of every message Babel extracts with data/locale/babel.cfg's settings."""
    found = set()
    for dummy_file, dummy_line, message, dummy_comments, context in extract_from_dir(
            COLLECTION, METHODS, options_map={"data/templates/*.j2": {"extensions": "jinja2.ext.i18n"}}, keywords=KEYWORDS):
        found.add((context, message[0] if isinstance(message, (tuple, list)) else message))
    return found


def test_every_extracted_message_is_translated():
    messages = extracted()
    assert ("grade", "FAIL") in messages and (None, "Sign-off") in messages and (None, "check:gpu.pcie.width") in messages
    translated = dict(((m.context, m.id[0] if isinstance(m.id, tuple) else m.id), m.string) for m in catalog() if m.id)
    missing = sorted("%s|%s" % key for key in messages if not translated.get(key)
                     or (isinstance(translated[key], tuple) and not all(translated[key])))
    assert missing == []


def test_the_shipped_mo_is_the_compiled_po():
    compiled = io.BytesIO()
    write_mo(compiled, catalog())
    compiled.seek(0)
    with open(MO, "rb") as handle:
        shipped = gettext.GNUTranslations(handle)
    fresh = gettext.GNUTranslations(compiled)
    body = dict((k, v) for k, v in fresh._catalog.items() if k != "")  # pylint: disable=protected-access
    assert body == dict((k, v) for k, v in shipped._catalog.items() if k != "")  # pylint: disable=protected-access
    assert shipped.pgettext("grade", "FAIL") == "\u4e0d\u901a\u8fc7" and shipped.ngettext("%d host", "%d hosts", 3) == "%d \u53f0\u4e3b\u673a"


def test_an_unknown_language_is_refused():
    with pytest.raises(_report.ReportError, match="report_language fr is not supported; choose from en, zh_CN"):
        _report.render_html(rich_results(), language="fr")


def test_the_chinese_report():
    results = rich_results()
    view = _report.build_view(results, language="zh_CN")
    html = _report.render_html(results, None, view, language="zh_CN")
    md = _report.render_markdown(results, None, view, language="zh_CN")
    assert '<html lang="zh-CN">' in html
    assert "<h1>GPU \u96c6\u7fa4\u9a8c\u6536\u62a5\u544a</h1>" in html  # GPU 集群验收报告 (formal; issue 26)
    assert '<div class="word">\u4e0d\u4e88\u9a8c\u6536</div>' in html  # 不予验收
    assert "## \u9a8c\u6536\u7ed3\u8bba\uff1a\u4e0d\u4e88\u9a8c\u6536" in md  # 验收结论：不予验收
    signoff = html[html.index('<section id="signoff"'):]
    assert "\u7b7e\u5b57\u5404\u65b9\u786e\u8ba4" in signoff and "\u4ea4\u4ed8\u5de5\u7a0b\u5e08" in signoff  # 签字各方确认, 交付工程师
    for heading in ("\u672a\u89e3\u51b3\u95ee\u9898", "GPU \u6d4b\u8bd5\u6570\u636e", "\u7f51\u7edc\u6d4b\u8bd5\u6570\u636e",
                    "\u7a33\u5b9a\u6027\u6d4b\u8bd5\u8bb0\u5f55", "\u95ee\u9898\u5904\u7406\u95ed\u73af"):
        assert "<h2>%s</h2>" % heading in html, heading
    assert '<th class="fam">GPU \u5065\u5eb7\u68c0\u67e5</th>' in html  # GPU 健康检查
    translated = dict((c["id"], c["message_l10n"]) for h in view["hosts"] for c in h["checks"] if c.get("message_l10n"))
    families = set(i.split(".", 1)[0] for i in translated)
    # issue 26: every family's messages are Chinese (a family without subjects in the catalog by its check id)
    assert {"gpu", "xid", "nic", "burn", "dcgm", "storage"} <= families
    ecc = [c for c in view["hosts"][2]["checks"] if c["id"] == "gpu.ecc.volatile_uncorrectable"][0]
    # {component}：易失性不可纠正 ECC 错误不合格（实测 {observed}，期望 {expected}）
    # ...；处理建议：重置 GPU (what to do, from the remedy: issue 26)
    template = ("%s\uff1a\u6613\u5931\u6027\u4e0d\u53ef\u7ea0\u6b63 ECC \u9519\u8bef\u4e0d\u5408\u683c"
                "\uff08\u5b9e\u6d4b %s\uff0c\u671f\u671b %s\uff09\uff1b\u5904\u7406\u5efa\u8bae\uff1a\u91cd\u7f6e GPU")
    assert ecc["message_l10n"] == template % (ecc["component"], ecc["observed_text"], ecc["expected_text"])
    assert ecc["message_l10n"] in html and "<code>reset_gpu</code> \u91cd\u7f6e GPU" in html
    # a family without subjects in the catalog is worded by its check id, not left in English (issue 26)
    burn = [c for c in view["hosts"][2]["checks"] if c["family"] == "burn" and c["status"] == "fail"][0]
    assert burn["message_l10n"].startswith("%s\uff1a%s\u4e0d\u5408\u683c" % (burn["component"], burn["id"]))
    assert str(escape(burn["message"])) not in html
    # the English fields stay for JSON, JUnit and the action
    assert view["verdict"]["text"] == "NOT ACCEPTED" and '"text": "NOT ACCEPTED"' in _report.render_json(results, view)


def test_the_english_report_is_unchanged_by_the_catalogs():
    results = rich_results()
    html = _report.render_html(results)
    assert '<html lang="en">' in html and '<div class="word">NOT ACCEPTED</div>' in html
    assert "\u9a8c\u6536" not in html and "<h2>Sign-off</h2>" in html


def _chromium(tmp_path, page, *args):
    profile = tmp_path / "chromium-profile"
    profile.mkdir(exist_ok=True)
    proc = subprocess.run([CHROMIUM] + FLAGS + ["--user-data-dir=%s" % profile] + list(args) + ["file://%s" % page],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout, proc.stderr


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt chromium fonts-dejavu-core)")
@pytest.mark.parametrize("language, lang, words", [
    ("en", "en", ["NOT ACCEPTED", "Sign-off", "Open issues"]),
    ("zh_CN", "zh-CN", ["\u4e0d\u4e88\u9a8c\u6536", "\u9a8c\u6536\u7b7e\u5b57", "\u672a\u89e3\u51b3\u95ee\u9898"]),
])
def test_both_languages_render_in_chromium(tmp_path, language, lang, words):
    paths = _report.write_reports(rich_results(), str(tmp_path / language), ["html"], language=language)
    dom, err = _chromium(tmp_path, paths["html"], "--dump-dom")
    assert CONSOLE_RE.findall(err) == []
    assert '<html lang="%s">' % lang in dom
    for word in words:
        assert word in dom, word
    os.makedirs(ARTEFACTS, exist_ok=True)
    shot = os.path.join(ARTEFACTS, "report-%s.png" % language)
    _chromium(tmp_path, paths["html"], "--window-size=1280,1600", "--screenshot=%s" % shot)
    assert os.path.getsize(shot) > 50000
    print("report screenshot (%s): %s" % (language, shot))
