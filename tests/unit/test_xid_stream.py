# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The kernel log read as a stream and filtered on the node: the same facts as the whole-text parser on real
captures, a bounded number of Xid lines kept, and a storm of unrelated lines that costs bounded memory."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ToolOutputTooLarge
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import xid, xid_collect
from ansible_collections.zhisuan.ops.plugins.module_utils._runner import MIB, set_output_limit

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
COLLECTIONS = os.path.join(ROOT, "collections")
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "kernel-log")
CAPTURES = sorted(name for name in os.listdir(FIXTURES) if name.endswith((".log", ".txt")))
UNRELATED = os.path.join(FIXTURES, "journalctl-short-iso-peermem.log")
XID_119 = os.path.join(FIXTURES, "dmesg-ctime-xid119-gsp-rpc-timeout-xe9680.log")
LARGE = os.path.join(FIXTURES, "dmesg-decode-iso-xid13-xid43-large.log")


class Module(object):
    def __init__(self, **params):
        self.params = dict(source="journalctl", since="-24h", journalctl_path="journalctl", dmesg_path="dmesg",
                           src=None, timeout=60)
        self.params.update(params)
        self.warnings = []

    def warn(self, msg):
        self.warnings.append(msg)


def _program(tmp_path, name, body):
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def _text(path):
    with open(path, "rb") as handle:
        return handle.read().decode("utf-8", "replace")


@pytest.mark.parametrize("name", CAPTURES)
def test_the_stream_gives_the_whole_text_facts_on_every_real_capture(tmp_path, name):
    path = os.path.join(FIXTURES, name)
    text = _text(path)
    expected = dict(xid.parse(text), **xid.log_shape(text))
    program = _program(tmp_path, "journalctl", "cat '%s'\n" % path)
    streamed = Module(journalctl_path=program)
    facts = xid_collect.collect_xid_facts(streamed)["xid"]
    saved = xid_collect.collect_xid_facts(Module(src=path, since=None))["xid"]
    for got in (facts, saved):
        assert dict((key, got[key]) for key in expected) == expected
        assert got["xid_lines_dropped"] == 0
    parsed_warnings = []
    xid.parse(text, warn=parsed_warnings.append)
    assert streamed.warnings == parsed_warnings


def test_lines_fed_one_by_one_count_as_splitlines_does():
    text = "a\r\nb\n\nc\x0bd\u2028e\n"
    log = xid.LogFilter()
    for line in text.split("\n")[:-1]:
        log.feed(line)
    assert log.facts()["lines"] == len(text.splitlines()) == 6


def test_an_xid_storm_keeps_the_first_and_the_last_lines_and_counts_the_rest():
    xid_lines = [line for line in _text(LARGE).splitlines() if xid.XID_MARK in line]
    assert len(xid_lines) == 636
    log = xid.LogFilter()
    fed = []
    for _ in range(16):  # 10176 Xid lines, the real capture's 636 sixteen times over
        for line in xid_lines:
            log.feed(line)
            fed.append(line)
    facts = log.facts()
    assert facts["lines"] == 10176 and facts["xid_lines_dropped"] == 10176 - xid.MAX_XID_LINES
    assert len(facts["events"]) == xid.MAX_XID_LINES
    assert facts["events"][0]["line"] == fed[0] and facts["events"][1999]["line"] == fed[1999]
    assert facts["events"][2000]["line"] == fed[-2000] and facts["events"][-1]["line"] == fed[-1]


def test_a_line_without_end_stops_the_read_with_a_typed_error(tmp_path):
    endless = _program(tmp_path, "journalctl", "cat /dev/zero\n")
    set_output_limit(1)
    try:
        with pytest.raises(ToolOutputTooLarge, match=r"^journalctl: output over 1 MiB \(process group killed\)"):
            xid_collect.collect_xid_facts(Module(journalctl_path=endless))
        # auto falls back to dmesg and says why
        dmesg = _program(tmp_path, "dmesg", "cat '%s'\n" % XID_119)
        facts = xid_collect.collect_xid_facts(Module(source="auto", journalctl_path=endless, dmesg_path=dmesg,
                                                     since=""))["xid"]
    finally:
        set_output_limit(None)
    assert facts["source"] == "dmesg" and facts["fallback"].startswith("journalctl: output over 1 MiB")
    assert [event["code"] for event in facts["events"]] == [119] * 5


def test_a_saved_log_with_a_line_over_the_cap_is_a_typed_error(tmp_path):
    path = tmp_path / "one-line.log"
    path.write_bytes(b"x" * (3 * 65536))
    with pytest.raises(ToolOutputTooLarge, match="saved log .* has a line over 65536 bytes"):
        xid_collect.stream_saved(str(path), lambda line: None, limit=65536)


STORM = textwrap.dedent("""
    import sys
    total, unrelated, xids = int(sys.argv[1]), open(sys.argv[2], "rb").read(), open(sys.argv[3], "rb").read()
    unrelated = unrelated.rstrip(b"\\n") + b"\\n"  # the capture ends without a newline
    out = sys.stdout.buffer
    out.write(xids)
    block = unrelated * max(1, (1 << 20) // len(unrelated))
    written = 0
    while written < total:
        out.write(block)
        written += len(block)
    out.write(xids)
""")

PEAK_CHILD = textwrap.dedent("""
    import json, sys
    from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import xid_collect
    class Module(object):
        params = dict(source="journalctl", since="-24h", journalctl_path=sys.argv[1], dmesg_path="dmesg", src=None,
                      timeout=600)
        def warn(self, msg):
            pass
    facts = xid_collect.collect_xid_facts(Module())["xid"]
    with open("/proc/self/status") as handle:
        peak = int([line.split()[1] for line in handle if line.startswith("VmHWM:")][0])
    print(json.dumps({"lines": facts["lines"], "codes": [event["code"] for event in facts["events"]],
                      "kernel_lines": facts["kernel_lines"], "peak_kib": peak}))
""")


def test_a_kernel_log_storm_costs_the_module_bounded_memory(tmp_path):
    # 1 GiB of real unrelated kernel lines between two copies of a real Xid 119 capture: read whole, as before,
    # this cost the module 2-3 GiB; streamed, the few Xid lines are all it holds
    total = 1024 * MIB
    script = tmp_path / "storm.py"
    script.write_text(STORM)
    program = _program(tmp_path, "journalctl", 'exec "%s" "%s" %d "%s" "%s"\n' % (sys.executable, script, total,
                                                                                 UNRELATED, XID_119))
    child = subprocess.run([sys.executable, "-c", PEAK_CHILD, program], capture_output=True, text=True, timeout=600,
                           env=dict(os.environ, PYTHONPATH=COLLECTIONS))
    assert child.returncode == 0, child.stderr
    result = json.loads(child.stdout)
    unrelated = _text(UNRELATED).rstrip("\n") + "\n"
    size = len(unrelated.encode("utf-8"))
    unrelated_lines = len(unrelated.splitlines())
    per_block = max(1, MIB // size)
    blocks = -(-total // (per_block * size))
    assert result["lines"] == 2 * len(_text(XID_119).splitlines()) + blocks * per_block * unrelated_lines
    assert result["codes"] == [119] * 10
    assert result["kernel_lines"] == result["lines"]
    assert result["peak_kib"] < 200 * 1024, "peak RSS %s KiB" % result["peak_kib"]
