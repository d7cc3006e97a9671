# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""The signed copy: report.html printed to report.pdf by headless Chromium on the controller.

The print style is the HTML report's own (``@media print`` and ``@page`` in report.html.j2): passed and skipped
checks summarised per family, hosts that passed everything left to the node x family table, pictures scaled to the
page, the run id and "page N / M" in the page margin. Chromium is asked for no header and footer of its own
(``--no-pdf-header-footer``), which would print the file's ``file://`` path and the date. The PDF is written to a
temp file beside its destination and moved into place only when Chromium succeeded. Chromium runs through the
collection's one subprocess seam (``module_utils._runner.run``): a timeout that kills its whole process group, its
output bounded, and Chromium stopped when the run that started it is cut off.
"""

from __future__ import annotations

import os
import shutil
import tempfile

from ansible_collections.zhisuan.ops.plugins.module_utils import _runner
from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ToolFailed, ToolNotFound, ToolTimeout, ZhisuanError
from ansible_collections.zhisuan.ops.plugins.plugin_utils._report_errors import ReportError

PDF_FILENAME = "report.pdf"
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
DEFAULT_TIMEOUT_S = 120
# headless, as root in a container, with nothing reaching the network (LAB-NOTES "fio and Chromium")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--no-default-browser-check",
         "--no-pdf-header-footer")


def find_chromium(path=None, which=shutil.which):
    """The Chromium to run: ``path`` when given (a name on PATH or a file), else the first of CHROMIUM_NAMES on PATH.
    ReportError naming what was looked for when there is none."""
    if path:
        found = which(path)
        if not found:
            raise ReportError("zhisuan.ops.report: pdf: chromium %s is not an executable file or a program on PATH"
                              % path)
        return found
    for name in CHROMIUM_NAMES:
        found = which(name)
        if found:
            return found
    raise ReportError("zhisuan.ops.report: pdf: no Chromium on the controller's PATH (looked for %s); install it "
                      "(Debian: apt-get install chromium fonts-dejavu-core fonts-wqy-microhei) or set the report's "
                      "chromium option" % ", ".join(CHROMIUM_NAMES))


def print_argv(chromium, html_path, pdf_path, profile):
    """The argv that prints ``html_path`` to ``pdf_path`` with a throw-away profile folder."""
    return [chromium] + list(FLAGS) + ["--user-data-dir=%s" % profile, "--print-to-pdf=%s" % pdf_path,
                                       "file://%s" % os.path.abspath(html_path)]


def _tail(text, limit=400):
    text = (text or "").strip()
    return text[-limit:] if text else "(no output)"


def print_pdf(html_path, pdf_path=None, chromium=None, timeout=DEFAULT_TIMEOUT_S):
    """Print ``html_path`` to ``pdf_path`` (default: report.pdf beside it). Returns the PDF's path. ReportError naming
    Chromium on a missing browser, a non-zero exit, a timeout (its whole process group is killed) or no PDF."""
    binary = find_chromium(chromium)
    pdf_path = pdf_path or os.path.join(os.path.dirname(os.path.abspath(html_path)), PDF_FILENAME)
    if not os.path.isfile(html_path):
        raise ReportError("zhisuan.ops.report: pdf: %s does not exist (the PDF is printed from the HTML report)"
                          % html_path)
    dest_dir = os.path.dirname(os.path.abspath(pdf_path))
    profile = tempfile.mkdtemp(prefix="zhisuan-chromium-")
    fd, tmp = tempfile.mkstemp(dir=dest_dir, prefix=".%s.%d." % (os.path.basename(pdf_path), os.getpid()),
                               suffix=".tmp")
    os.close(fd)
    try:
        try:
            result = _runner.run(print_argv(binary, html_path, tmp, profile), timeout=timeout, tool="chromium")
        except ToolTimeout:
            raise ReportError("zhisuan.ops.report: pdf: %s timed out after %s s printing %s (process group killed)"
                              % (binary, timeout, html_path))
        except ToolNotFound as exc:
            raise ReportError("zhisuan.ops.report: pdf: cannot start %s: %s" % (binary, exc.detail))
        except ToolFailed as exc:
            if exc.rc is None:
                raise ReportError("zhisuan.ops.report: pdf: %s printing %s: %s" % (binary, html_path, exc.detail))
            raise ReportError("zhisuan.ops.report: pdf: %s exited %s printing %s: %s"
                              % (binary, exc.rc, html_path, _tail(exc.stderr)))
        except ZhisuanError as exc:  # output over the cap
            raise ReportError("zhisuan.ops.report: pdf: %s printing %s: %s" % (binary, html_path, exc.detail))
        with open(tmp, "rb") as handle:
            head = handle.read(5)
        if head != b"%PDF-":
            raise ReportError("zhisuan.ops.report: pdf: %s wrote no PDF for %s: %s"
                              % (binary, html_path, _tail(result.stderr)))
        os.chmod(tmp, 0o644)
        os.replace(tmp, pdf_path)
    except OSError as exc:
        raise ReportError("zhisuan.ops.report: pdf: cannot write %s: %s" % (pdf_path, exc.strerror or exc))
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
        shutil.rmtree(profile, ignore_errors=True)
    return pdf_path
