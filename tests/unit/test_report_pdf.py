# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The signed copy (issue 26 item 1): report.html printed to report.pdf by real headless Chromium, read back page by
page with poppler's pdfinfo/pdftotext. Before the print style, the 8-node lab demo printed as 174 A4 pages (every
passed-or-skipped table opened), with Chromium's file:// header and footer; now a few pages with the run id and
"page N / M" in the margin, the sign-off with a seal line last, no heading left alone at a page's foot."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from ansible_collections.zhisuan.ops.plugins.plugin_utils import _report, _report_pdf
from ansible_collections.zhisuan.ops.plugins.plugin_utils._report_errors import ReportError

from report_samples import rich_results

CHROMIUM = next((shutil.which(n) for n in _report_pdf.CHROMIUM_NAMES if shutil.which(n)), None)
PDFTOTEXT = shutil.which("pdftotext")
# tests/sysdeps.sh installs both (apt chromium, poppler-utils): a machine without them fails here, it does not skip
# Chromium's own header: the print date and time at the top left ("12/3/26, 2:27 PM")
DATE_HEADER = re.compile(r"\d{1,2}/\d{1,2}/\d{2}, \d{1,2}:\d{2}\s*[AP]M")
SECTION_HEADINGS = ("Summary", "Node × family status", "Open issues", "Not applicable", "Hosts", "Cluster-wide checks",
                    "Sign-off", "Changes since the previous run", "Fleet comparison", "KPIs")


def pdf_pages(path):
    """Page count: pdfinfo's, checked against the page objects in the file."""
    with open(path, "rb") as handle:
        data = handle.read()
    objects = len(re.findall(rb"/Type\s*/Page(?![a-z])", data))
    if shutil.which("pdfinfo"):
        out = subprocess.run(["pdfinfo", path], capture_output=True, text=True, timeout=60, check=True).stdout
        pages = int(re.search(r"^Pages:\s+(\d+)", out, re.M).group(1))
        assert objects in (0, pages)  # Skia writes page objects plainly; 0 only if they sat in object streams
        return pages
    return objects


def page_texts(path, pages):
    assert PDFTOTEXT, "pdftotext is not installed (apt poppler-utils; tests/sysdeps.sh installs it)"
    return [subprocess.run([PDFTOTEXT, "-layout", "-f", str(n), "-l", str(n), path, "-"], capture_output=True,
                           text=True, timeout=60, check=True).stdout for n in range(1, pages + 1)]


def failing_checks(results):
    hosts = results["hosts"].values()
    return (sum(1 for h in hosts for c in h["checks"] if c["status"] in ("fail", "error", "warn"))
            + sum(1 for h in hosts if h["status"] == "unreachable")
            + sum(1 for c in results["cluster"]["checks"] if c["status"] in ("fail", "error", "warn")))


def print_report(tmp_path, results, language="en"):
    assert CHROMIUM, "chromium is not installed (apt chromium fonts-dejavu-core; tests/sysdeps.sh installs it)"
    out = tmp_path / ("out-%s" % language)
    paths = _report.write_reports(results, str(out), ["html"], language=language)
    pdf = _report_pdf.print_pdf(paths["html"], chromium=CHROMIUM)
    assert pdf == str(out / "report.pdf")
    return pdf, paths["html"]


def assert_signable(pdf, results, max_pages):
    pages = pdf_pages(pdf)
    assert 2 <= pages <= max_pages, pages
    texts = page_texts(pdf, pages)
    whole = "\n".join(texts)
    assert "file://" not in whole and "report.html" in whole  # the only mention: the note on what is left out
    assert not any(DATE_HEADER.match(t.strip()) for t in texts)  # no browser header (date, title) either
    for number, text in enumerate(texts, 1):
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        # the page margin: the run id and "page N / M" on every page
        assert lines[-1].startswith(results["run"]["id"]) and lines[-1].endswith("page %d / %d" % (number, pages))
        # no section heading stranded at a page's foot (the line above the margin)
        assert lines[-2] not in SECTION_HEADINGS, (number, lines[-2])
    return pages, texts


@pytest.mark.parametrize("nodes, max_pages", [(8, 8), (64, 20)])
def test_signed_pdf_is_compact(tmp_path, nodes, max_pages):
    results = rich_results(nodes=nodes)
    pdf, dummy_html = print_report(tmp_path, results)
    pages, texts = assert_signable(pdf, results, max_pages + failing_checks(results) // 10)
    whole = "\n".join(texts)
    # passed checks counted per family, never listed: the failing host's line, and no passed check id at all
    assert "Passed or not applicable, by family:" in whole
    assert "gpu.count.present" not in whole and "burn.gflops.median" not in whole
    assert "Failed to connect to the host via ssh: Connection refused" in whole  # the unreachable node, its reason
    # the overview's legend whole, on the page of the grid
    grid_page = next(t for t in texts if "Node × family status" in t)
    assert re.search(r"fail\s+unreachable\s+error\s+warn\s+pass", grid_page)
    # one line per node in the node x family table
    assert all(re.search(r"^\s*node%02d\s" % n, whole, re.M) for n in range(1, nodes + 1))
    # the sign-off, whole, on the last page, with the seal line
    last = texts[-1]
    for words in ("Sign-off", "Delivery engineer", "Customer representative", "Signature", "Company seal"):
        assert words in last, words


def test_header_check_sees_chromiums_own_header(tmp_path):
    """The header checks are not vacuous: printed without --no-pdf-header-footer, Chromium prints the date and title
    at the top of each page, and on a page without the report's own margin boxes the file:// path at the foot."""
    def print_without_flag(html, pdf):
        argv = [a for a in _report_pdf.print_argv(CHROMIUM, html, pdf, str(tmp_path / "profile"))
                if a != "--no-pdf-header-footer"]
        subprocess.run(argv, capture_output=True, timeout=120, check=True)
        return page_texts(pdf, pdf_pages(pdf))

    html = _report.write_reports(rich_results(nodes=2), str(tmp_path), ["html"])["html"]
    texts = print_without_flag(html, str(tmp_path / "with-header.pdf"))
    assert all(DATE_HEADER.match(t.strip()) for t in texts)
    plain = tmp_path / "plain.html"
    plain.write_text("<!DOCTYPE html><html><head><title>t</title></head><body><p>x</p></body></html>", encoding="utf-8")
    assert "file://%s" % plain in "".join(print_without_flag(str(plain), str(tmp_path / "plain.pdf")))
    pdf = _report_pdf.print_pdf(str(plain), chromium=CHROMIUM)
    assert "file://" not in "".join(page_texts(pdf, 1)) and not DATE_HEADER.match(page_texts(pdf, 1)[0].strip())


def test_signed_pdf_in_chinese(tmp_path):
    results = rich_results(nodes=8)
    pdf, dummy_html = print_report(tmp_path, results, language="zh_CN")
    pages = pdf_pages(pdf)
    assert pages <= 8
    texts = page_texts(pdf, pages)
    assert "file://" not in "".join(texts)
    for words in ("签字", "盖章", "交付工程师", "甲方代表"):
        assert words in texts[-1], words
    assert all(t.strip().endswith("第 %d 页，共 %d 页" % (n, pages)) for n, t in enumerate(texts, 1))


def test_missing_chromium_names_it(tmp_path):
    page = tmp_path / "report.html"
    page.write_text("<html></html>", encoding="utf-8")
    with pytest.raises(ReportError, match=r"^zhisuan.ops.report: pdf: chromium /nonexistent/chromium is not an "):
        _report_pdf.print_pdf(str(page), chromium="/nonexistent/chromium")
    with pytest.raises(ReportError, match=r"no Chromium on the controller's PATH \(looked for chromium, "):
        _report_pdf.find_chromium(which=lambda name: None)


def _stub_browser(tmp_path, body):
    stub = tmp_path / "fake-chromium"
    stub.write_text("#!/bin/sh\n" + body + "\n", encoding="utf-8")
    stub.chmod(0o755)
    page = tmp_path / "report.html"
    page.write_text("<html></html>", encoding="utf-8")
    return str(stub), str(page)


def test_failing_or_hung_chromium_is_an_error_naming_it(tmp_path):
    stub, page = _stub_browser(tmp_path, 'echo "crashed: no display" >&2; exit 3')
    with pytest.raises(ReportError, match=r"pdf: .*fake-chromium exited 3 printing .*report.html: crashed: no display"):
        _report_pdf.print_pdf(page, chromium=stub)
    stub, page = _stub_browser(tmp_path, "sleep 30 & sleep 30")
    with pytest.raises(ReportError, match=r"fake-chromium timed out after 1 s printing"):
        _report_pdf.print_pdf(page, chromium=stub, timeout=1)
    stub, page = _stub_browser(tmp_path, "exit 0")  # exits 0 and writes nothing
    with pytest.raises(ReportError, match=r"wrote no PDF for"):
        _report_pdf.print_pdf(page, chromium=stub)
    assert sorted(os.listdir(str(tmp_path))) == ["fake-chromium", "report.html"]  # no temp file left behind
