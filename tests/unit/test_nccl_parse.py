# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""nccl-tests output parser on the real captures and on value-edited variants of them."""

from __future__ import annotations

import os
import re

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError, ToolFailed
from ansible_collections.zhisuan.ops.plugins.module_utils._net import nccl

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "nccl-tests")
ALL_REDUCE = os.path.join(FIXTURES, "all_reduce_perf-1node-8xA100-40GB.log")
ALL_GATHER = os.path.join(FIXTURES, "all_gather_perf-1node-8xA100-40GB.log")


def _read(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def _edit_row(text, size, column, value):
    """Replace field ``column`` (0-based, whitespace-separated) of the result line for ``size`` bytes."""
    out = []
    for line in text.split("\n"):
        fields = line.split()
        if fields and fields[0] == str(size) and not line.startswith("#"):
            parts = re.findall(r"\s*\S+", line)
            parts[column] = " " + value.rjust(len(parts[column]) - 1)
            line = "".join(parts)
        out.append(line)
    return "\n".join(out)


def _new_header(text):
    """The capture in the 2.13+ layout: a ``root`` column after ``redop`` (-1 for all_reduce) and ``#wrong``
    counts (0) instead of the ``error`` column, as nccl-tests prints them since validation counts wrong elements."""
    out = []
    for line in text.split("\n"):
        if line.startswith("#       size"):
            line = line.replace("   redop  ", "   redop    root  ").replace("  error", " #wrong")
        elif line.strip() and line.split()[0].isdigit():
            fields = line.split()
            fields.insert(4, "-1")
            fields[8] = fields[12] = "0"
            line = " ".join(fields)
        elif line.startswith("#   Rank"):
            line = line.replace(" Pid", " Group  0 Pid")
        out.append(line)
    return "\n".join(out)


def test_all_reduce_capture():
    facts = nccl.parse(_read(ALL_REDUCE), op="all_reduce_perf")
    assert facts["op"] == "all_reduce_perf"
    assert facts["columns"] == ["size", "count", "type", "redop", "time", "algbw", "busbw", "error",
                                "time", "algbw", "busbw", "error"]
    assert facts["params"] == {"threads": 1, "gpus_per_process": 8, "min_bytes": 1, "max_bytes": 8589934592,
                               "warmup_iters": 5, "iters": 20, "validation": 0}
    assert len(facts["points"]) == 34
    assert facts["points"][-1] == {
        "bytes": 8589934592, "count": 2147483648, "type": "float", "redop": "sum", "failed": False,
        "out_of_place": {"time_us": 63896.0, "algbw": 134.44, "busbw": 235.26, "error": None},
        "in_place": {"time_us": 63959.0, "algbw": 134.3, "busbw": 235.03, "error": None}}
    assert facts["out_of_bounds"] == 0 and facts["out_of_bounds_ok"] is True
    assert facts["avg_busbw"] == 68.4048
    assert facts["nodes"] == ["localhost"]
    assert len(facts["devices"]) == 8
    assert facts["devices"][3] == {"rank": 3, "group": None, "pid": 112424, "host": "localhost", "device": 3,
                                   "bus_id": "0x00", "name": "A100-SXM4-40GB"}
    assert nccl.point_busbw(facts["points"][-1]) == (235.03, "in_place")


def test_all_gather_has_no_redop_column():
    facts = nccl.parse(_read(ALL_GATHER), op="all_gather_perf")
    assert facts["columns"][:4] == ["size", "count", "type", "time"]
    last = facts["points"][-1]
    assert "redop" not in last and "root" not in last
    assert last["out_of_place"]["busbw"] == 223.39 and last["in_place"]["busbw"] == 230.07
    assert facts["avg_busbw"] == 58.2651


def test_newer_layout_with_root_and_wrong_columns():
    facts = nccl.parse(_new_header(_read(ALL_REDUCE)))
    assert facts["columns"][:5] == ["size", "count", "type", "redop", "root"]
    assert facts["columns"][8] == "#wrong"
    last = facts["points"][-1]
    assert last["root"] == -1
    assert last["out_of_place"] == {"time_us": 63896.0, "algbw": 134.44, "busbw": 235.26, "wrong": 0}
    assert nccl.point_wrong(last) == 0
    assert facts["devices"][0]["group"] == 0


def test_wrong_count_and_failed_value():
    text = _edit_row(_new_header(_read(ALL_REDUCE)), 4294967296, 8, "12")
    text = _edit_row(text, 8589934592, 12, "FAILED")
    facts = nccl.parse(text)
    assert nccl.point_wrong(facts["points"][-2]) == 12
    assert facts["points"][-1]["failed"] is True and facts["points"][-1]["in_place"]["wrong"] is None


def test_out_of_bounds_line():
    text = _read(ALL_REDUCE).replace("# Out of bounds values : 0 OK", "# Out of bounds values : 5 FAILED")
    facts = nccl.parse(text)
    assert facts["out_of_bounds"] == 5 and facts["out_of_bounds_ok"] is False


def test_mpirun_tagged_output():
    text = "\n".join("[1,0]<stdout>:" + line for line in _read(ALL_REDUCE).split("\n"))
    facts = nccl.parse(text)
    assert len(facts["points"]) == 34 and facts["avg_busbw"] == 68.4048


def test_nccl_failure_is_tool_failed():
    text = _read(ALL_REDUCE).split("#       size")[0] + (
        "node07: Test NCCL failure common.cu:958 'invalid usage (run with NCCL_DEBUG=WARN for details)'\n"
        " .. node07 pid 4242: Test failure common.cu:842\n")
    with pytest.raises(ToolFailed) as info:
        nccl.parse(text, op="all_reduce_perf")
    assert info.value.message == ("nccl-tests: all_reduce_perf: Test NCCL failure on node07 at common.cu:958: "
                                  "'invalid usage (run with NCCL_DEBUG=WARN for details)'")


def test_failure_finds_test_failure_and_mpirun_errors():
    assert nccl.failure(" .. node07 pid 4242: Test failure common.cu:842\n") == \
        "Test failure on node07 (pid 4242) at common.cu:842"
    text = ("-------\nPrimary job  terminated normally, but 1 process returned\n"
            "a non-zero exit code. Per user-direction, the job has been aborted.\n-------\n"
            "mpirun noticed that process rank 3 with PID 0 on node node02 exited on signal 9 (Killed).\n")
    assert nccl.failure(text) == "mpirun: mpirun noticed that process rank 3 with PID 0 on node node02 exited on signal 9 (Killed)."
    assert nccl.failure(_read(ALL_REDUCE)) is None


@pytest.mark.parametrize("text, detail", [
    ("", "empty output"),
    ("# nThread 1 nGpus 8\n", "all_reduce_perf: no result table (no '#  size count type … busbw' header) in the output"),
    ("#       size  count  type  redop  time  algbw  busbw  error  time  algbw  busbw  error\n",
     "all_reduce_perf: the result table has no line"),
    ("#       size  count  type  redop  time  algbw  busbw  bogus\n",
     "unknown result columns time algbw busbw bogus in the header '#       size  count  type  redop  time  algbw  busbw  bogus'"),
])
def test_parse_errors(text, detail):
    with pytest.raises(ParseError) as info:
        nccl.parse(text, op="all_reduce_perf")
    assert info.value.detail == detail


def test_non_number_in_a_value_column():
    text = _edit_row(_read(ALL_REDUCE), 8589934592, 6, "x.yz")
    with pytest.raises(ParseError) as info:
        nccl.parse(text)
    assert info.value.detail.startswith("a float value 'x.yz' that is not a number in the result line '8589934592")


def test_short_line_is_skipped_with_a_warning():
    text = _read(ALL_REDUCE).replace("  8589934592    2147483648   float     sum    63896", "  8589934592    2147483648")
    warnings = []
    facts = nccl.parse(text, warn=warnings.append)
    assert len(facts["points"]) == 33
    assert warnings and warnings[0].startswith("nccl-tests: skipped a result line with 9 fields, the header has 12")
