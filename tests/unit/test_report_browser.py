# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The HTML report in a real browser (headless Chromium: it renders, the DOM holds the sections and pictures, no
console errors, a screenshot) and junit.xml against a real JUnit schema (the Jenkins xUnit plugin's junit-10.xsd,
tests/fixtures/junit, see PROVENANCE.md)."""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess

import pytest
import xmlschema
import yaml

from ansible_collections.zhisuan.ops.plugins.plugin_utils import _report

from report_samples import rich_results

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
TEMPLATES = os.path.join(REPO, "collections", "ansible_collections", "zhisuan", "ops", "data", "templates")
JUNIT_XSD = os.path.join(REPO, "tests", "fixtures", "junit", "junit-10.xsd")
ALERT_DATA = os.path.join(REPO, "collections", "ansible_collections", "zhisuan", "ops", "data", "monitoring",
                          "alert-rules.yml")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
# LAB-NOTES "fio and Chromium": the flags that run headless Chromium as root in a container, quietly
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run", "--enable-logging=stderr", "--v=0"]
# Chromium logs every page console message, whatever its level, as `...:INFO:CONSOLE:<line>] "<message>", source:
# <url> (<line>)` (Chromium 150; older builds wrote CONSOLE(<line>)). The report has no script, so any message fails.
CONSOLE_RE = re.compile(r':CONSOLE(?::\d+|\(\d+\))\] "(.*)", source: (\S*)')

needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt chromium fonts-dejavu-core)")


def chromium(tmp_path, page, *args):
    """Run Chromium on a file; returns (stdout, stderr)."""
    profile = tmp_path / "chromium-profile"
    profile.mkdir(exist_ok=True)
    proc = subprocess.run([CHROMIUM] + FLAGS + ["--user-data-dir=%s" % profile] + list(args) + ["file://%s" % page],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout, proc.stderr


def console_messages(stderr):
    """(message, source) of every console message the page logged."""
    return CONSOLE_RE.findall(stderr)


def png_size(path):
    with open(path, "rb") as handle:
        head = handle.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", head[16:24])


@pytest.fixture(name="report_page")
def fixture_report_page(tmp_path):
    """report.html of a rich acceptance run with a previous run (changes) and a history (KPIs)."""
    previous = rich_results(run_id="r0", started="2026-11-30T20:00:00+00:00")
    previous["hosts"]["node02"]["checks"][0].update(status="fail", observed=7, remedy="reseat")
    previous["hosts"]["node02"]["status"] = "fail"
    current = rich_results()
    paths = _report.write_reports(current, str(tmp_path / "out"), ["html", "junit"], TEMPLATES,
                                  history=[previous, current], remediation=[])
    return tmp_path, paths["html"]


@needs_chromium
def test_console_check_sees_a_broken_page(tmp_path):
    """The console parser is not vacuous: a page whose script throws shows up as a console error."""
    page = tmp_path / "broken.html"
    page.write_text("<!DOCTYPE html><html><body><p>x</p><script>console.error('boom ' + 1); undefinedThing();"
                    "</script></body></html>", encoding="utf-8")
    dummy_out, err = chromium(tmp_path, str(page), "--dump-dom")
    assert console_messages(err) == [("boom 1", "file://%s" % page),
                                     ("Uncaught ReferenceError: undefinedThing is not defined", "file://%s" % page)]


@needs_chromium
def test_report_renders_in_chromium(report_page):
    tmp_path, page = report_page
    dom, err = chromium(tmp_path, page, "--dump-dom")
    assert console_messages(err) == []
    for section in ("verdict", "summary", "grid", "issues", "changes", "fleet", "kpis", "gpu-data", "network",
                    "storage", "stability", "remediation", "hosts", "cluster", "signoff", "operations"):
        assert '<section id="%s"' % section in dom, section
    # the operations appendix of an acceptance run: every alert rule the monitoring role installs
    with open(ALERT_DATA, encoding="utf-8") as handle:
        shipped = [rule["alert"] for group in yaml.safe_load(handle)["groups"] for rule in group["rules"]]
    assert dom.count('<tr data-alert="') == len(shipped) > 0
    assert all('<tr data-alert="%s"' % name in dom for name in shipped)
    # the parsed DOM holds the five pictures as SVG elements with their marks
    assert dom.count("<svg ") == 5
    assert len(re.findall(r'<rect class="pair', dom)) == 7 * 6  # every ordered pair of the 7 reachable nodes
    assert dom.count('<polyline class="series"') == 1 + 7 and dom.count('<polyline class="trace"') == 2 * 7
    assert 'data-change="fixed" data-host="node02" data-check="gpu.count.present"' in dom
    assert "<script" not in dom

    screenshot = tmp_path / "report.png"
    dummy_out, err = chromium(tmp_path, page, "--window-size=1280,2400", "--screenshot=%s" % screenshot)
    assert console_messages(err) == []
    assert png_size(str(screenshot)) == (1280, 2400)
    assert os.path.getsize(str(screenshot)) > 50000  # a rendered page, not a blank one
    print("report screenshot: %s" % screenshot)


def test_junit_validates_against_the_jenkins_schema(report_page, tmp_path):
    schema = xmlschema.XMLSchema(JUNIT_XSD)
    dummy_tmp, page = report_page
    junit = os.path.join(os.path.dirname(page), "junit.xml")
    schema.validate(junit)
    # the control: the schema rejects a suite without its required `tests` count
    bad = tmp_path / "bad.xml"
    bad.write_text('<testsuites><testsuite name="x"><testcase name="a"/></testsuite></testsuites>', encoding="utf-8")
    with pytest.raises(xmlschema.XMLSchemaValidationError, match="missing required attribute 'tests'"):
        schema.validate(str(bad))


def test_junit_of_every_status_validates(tmp_path):
    results = rich_results()
    results["hosts"]["node02"]["checks"].append({"id": "gpu.collect.nvidia_smi", "host": "node02", "component": "nvidia-smi",
                                                 "status": "error", "observed": "timed out", "expected": None,
                                                 "message": "nvidia-smi: timed out after 60 s", "remedy": "investigate",
                                                 "evidence": "rc: -9\x1b[0m <tag> & \"quotes\""})
    results["hosts"]["node02"]["checks"].append({"id": "gpu.nvlink.count", "host": "node02", "component": "GPU 0",
                                                 "status": "skip", "observed": None, "expected": 12, "message": "PCIe card",
                                                 "remedy": "none", "evidence": ""})
    xmlschema.XMLSchema(JUNIT_XSD).validate(_report.render_junit(results))
