# SPDX-License-Identifier: GPL-3.0-or-later
"""The report at its edges (plugin_utils/_report.py, _report_formats.py): link and image syntax from a tool's
output printed as text in report.md, a full disk named in one line, the temp files of a killed render removed by
the next one, and a results.json over the size cap refused before it is read.

The documents are report_samples.rich_results (built on the real captures named there), with a check's message,
component and evidence edited to carry Markdown link and image syntax, as a tool's output or a BMC string could."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import markdown_it
import pytest

from ansible_collections.zhisuan.ops.plugins.plugin_utils import _report
from ansible_collections.zhisuan.ops.plugins.plugin_utils._report import ReportError
from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import atomic_write

import report_samples

HERE = os.path.dirname(os.path.abspath(__file__))
COLLECTIONS = os.path.abspath(os.path.join(HERE, os.pardir, os.pardir, "collections"))
LINKS = ("[click me](javascript:alert(document.cookie))", "![](http://tracker.example/p.png)",
         "[ref]: http://evil.example/", "\\[x\\](javascript:alert(2))")


def _with_links():
    document = report_samples.rich_results(nodes=4)
    target = next(c for c in document["hosts"]["node03"]["checks"] if c["status"] == "fail")
    target["message"] = "GPU reports " + " and ".join(LINKS)
    target["component"] = "GPU 3 " + LINKS[1]
    target["evidence"] = "NVRM: " + LINKS[0]
    document["hosts"]["node02"]["checks"][0]["message"] = LINKS[0]
    return document


def test_markdown_prints_links_and_images_from_tool_output_as_text():
    text = _report.render_markdown(_with_links())
    html = markdown_it.MarkdownIt("commonmark").enable("table").render(text)
    assert "<img" not in html
    assert 'href="javascript' not in html and "evil.example" in html and 'href="http://evil' not in html
    # the words are all there, readable
    assert "[click me](javascript:alert(document.cookie))" in html
    assert "![](http://tracker.example/p.png)" in html
    # in a fenced evidence block the text stays verbatim (a code block makes no link)
    assert "NVRM: [click me](javascript:alert(document.cookie))" in text
    # the report's own links still work (the host index links to each host's section)
    assert re.search(r'<a href="#node03">node03</a>', html)


def test_md_text_and_md_cell_escape_brackets_and_backslashes_before_them():
    assert _report.md_text("[a](b)") == "\\[a\\](b)"
    assert _report.md_text("\\[a\\](b)") == "\\\\\\[a\\\\\\](b)"
    assert _report.md_text("no brackets \\ here") == "no brackets \\ here"  # unchanged as before
    assert _report.md_cell("x | ![i](u)") == "x \\| !\\[i\\](u)"


def _dead_pid():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_the_next_render_removes_what_a_killed_render_left(tmp_path):
    dest = tmp_path / "run"
    dest.mkdir()
    (dest / "results.json").write_text(json.dumps(report_samples.rich_results(nodes=200)))
    code = ("import sys; sys.path.insert(0, %r); from ansible_collections.zhisuan.ops.plugins.plugin_utils import "
            "_report; d = _report.load_results(%r); _report.write_reports(d, %r, list(_report.FORMATS))"
            % (COLLECTIONS, str(dest / "results.json"), str(dest)))
    proc = subprocess.Popen([sys.executable, "-c", code])
    deadline = time.monotonic() + 60
    while not any(name.endswith(".tmp") for name in os.listdir(dest)) and time.monotonic() < deadline:
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)  # kill -9 mid-render
    proc.wait()
    left = [name for name in os.listdir(dest) if name.endswith(".tmp")]
    assert left and all(name.startswith(".") and (".%d." % proc.pid) in name for name in left)
    # a render still running elsewhere (pid 1 lives) keeps its temp file; an old one without a pid goes
    live = dest / ".report.html.1.abcdefgh.tmp"
    live.write_text("x")
    old = dest / ".report.md.zyxwvuts.tmp"
    old.write_text("x")
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    _report.write_reports(_report.load_results(str(dest / "results.json")), str(dest), list(_report.FORMATS))
    assert sorted(name for name in os.listdir(dest) if name.endswith(".tmp")) == [live.name]
    assert (dest / "report.html").stat().st_size > 0


def test_sweep_leaves_a_fresh_pidless_temp_and_other_files_alone(tmp_path):
    fresh = tmp_path / ".junit.xml.q1w2e3r4.tmp"
    fresh.write_text("x")
    dead = tmp_path / (".report.json.%d.a1b2c3d4.tmp" % _dead_pid())
    dead.write_text("x")
    other = tmp_path / ".results.json.x.tmp"  # not a report's: left to its writer
    other.write_text("x")
    assert _report.sweep_stale_temps(str(tmp_path)) == [str(dead)]
    assert sorted(os.listdir(tmp_path)) == sorted([fresh.name, other.name])


def test_a_results_file_over_the_cap_is_refused_before_it_is_read(tmp_path, monkeypatch):
    path = tmp_path / "results.json"
    path.write_text(json.dumps(report_samples.rich_results(nodes=200)))
    size_mib = path.stat().st_size / 1048576.0
    assert 1 < size_mib < 4
    with pytest.raises(ReportError) as info:
        _report.load_results(str(path), max_mib=1)
    assert str(info.value) == (
        "zhisuan.ops.report: results file %s is %.1f MiB, over the 1 MiB cap for a report (reading it takes about 8 "
        "times its size in memory); raise max_results_mib or ZHISUAN_MAX_RESULTS_MIB if this run is really that large"
        % (path, size_mib))
    assert _report.load_results(str(path), max_mib=4)["run"]["kind"] == "acceptance"
    monkeypatch.setenv("ZHISUAN_MAX_RESULTS_MIB", "0.5")
    with pytest.raises(ReportError, match="over the 0.5 MiB cap"):
        _report.load_results(str(path))
    monkeypatch.setenv("ZHISUAN_MAX_RESULTS_MIB", "lots")
    with pytest.raises(ReportError, match="must be a number of MiB, got 'lots'"):
        _report.load_results(str(path))
    monkeypatch.delenv("ZHISUAN_MAX_RESULTS_MIB")
    assert _report.MAX_RESULTS_MIB == 512 and _report.max_results_mib() == 512.0
    with pytest.raises(ReportError, match="positive number of MiB, got -1"):
        _report.load_results(str(path), max_mib=-1)


FULL_DISK = r"""
import json, sys
sys.path.insert(0, %(collections)r)
sys.path.insert(0, %(here)r)
import report_samples
from ansible_collections.zhisuan.ops.plugins.plugin_utils import _report
from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import atomic_write
document = report_samples.rich_results(nodes=20)
out = {}
try:
    _report.write_reports(document, %(dest)r, list(_report.FORMATS))
except _report.ReportError as exc:
    out["report"] = str(exc)
try:
    atomic_write(%(dest)r + "/results.json", json.dumps(document))
except OSError as exc:
    out["record"] = str(exc)
print(json.dumps(out))
"""


def test_a_full_disk_is_named_in_one_line(tmp_path):
    """A real full filesystem: a 64 KiB tmpfs mounted in a private mount namespace (unshare, as an unprivileged user
    namespace's root), where the report and the record are written."""
    if not shutil.which("unshare"):
        pytest.skip("unshare (util-linux) is not installed: no private tmpfs to fill")
    dest = tmp_path / "full"
    dest.mkdir()
    code = FULL_DISK % {"collections": COLLECTIONS, "here": HERE, "dest": str(dest)}
    script = tmp_path / "full.py"
    script.write_text(code)
    argv = ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
            'mount -t tmpfs -o size=64k zhisuan-full "$1" && exec "$2" "$3"', "sh", str(dest), sys.executable,
            str(script)]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0 and "mount" in proc.stderr and not proc.stdout:
        pytest.skip("this machine allows no private tmpfs mount: %s" % proc.stderr.strip())
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert re.fullmatch(r"zhisuan\.ops\.report: cannot write %s/(report\.html|report\.md|junit\.xml|report\.json): "
                        r"No space left on device" % re.escape(str(dest)), out["report"]), out["report"]
    assert out["record"] == "[Errno 28] No space left on device: '%s/results.json'" % dest
    assert "Traceback" not in proc.stderr


def test_atomic_write_names_the_file_it_could_not_write(tmp_path):
    with pytest.raises(OSError) as info:
        atomic_write(str(tmp_path / "missing" / "results.json"), "{}")
    assert info.value.filename == str(tmp_path / "missing" / "results.json")
