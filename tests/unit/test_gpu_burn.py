# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The gpu-burn output parser on the real 8x A100 log and on value-edited copies of it (faults are edits of the
capture's numbers, in gpu_burn's own printf formats; never a new format)."""

from __future__ import annotations

import os
import re

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError, ToolFailed
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import gpu_burn

CAPTURE = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "gpu-burn", "gpu-burn-8xA100-80GB-all-OK.log")
RECORD = re.compile(r"^(\d+\.\d%  proc'd: )(.*?)(  errors: )(.*?)(  temps: )(.*)$")


def real_log():
    with open(CAPTURE, encoding="utf-8", newline="") as handle:
        return handle.read()


def edit_records(text, edit, after=0):
    """Apply ``edit(procd_items, error_items)`` to every progress record in lines after line number ``after``;
    items are [count, gflops] / [count, note] lists, re-printed with gpu_burn's formats."""
    lines = text.split("\n")
    for number, line in enumerate(lines):
        if number < after or "\r" not in line:
            continue
        parts = []
        for part in line.split("\r"):
            found = RECORD.match(part)
            if not found:
                parts.append(part)
                continue
            procd = [list(item) for item in re.findall(r"(-?\d+) \((\d+) Gflop/s\) ", found.group(2))]
            errors = [[item[0], item[1]] for item in re.findall(r"(-?\d+) (?: \((WARNING|DIED)!\))?", found.group(4))]
            edit(procd, errors)
            part = found.group(1) + "- ".join("%s (%s Gflop/s) " % tuple(item) for item in procd) + found.group(3)
            part += "- ".join("%s " % count + (" (%s!)" % note if note else "") for count, note in errors)
            parts.append(part + found.group(5) + found.group(6))
        lines[number] = "\r".join(parts)
    return "\n".join(lines)


def set_verdict(text, gpu, verdict):
    return text.replace("\tGPU %d: OK\n" % gpu, "\tGPU %d: %s\n" % (gpu, verdict))


def test_the_edit_helper_reprints_the_capture_byte_for_byte():
    assert edit_records(real_log(), lambda procd, errors: None) == real_log()


def test_real_log_run_facts():
    warnings = []
    facts = gpu_burn.parse(real_log(), warn=warnings.append)
    assert warnings == []
    assert facts["tested_gpus"] == 8
    assert (facts["doubles"], facts["tensor_cores"]) == (True, True)
    assert facts["burn_seconds"] is None and facts["compare_file"] is None  # this (2022) build prints neither
    assert facts["progress_pct"] == 100
    assert facts["progress_records"] == 196
    assert facts["summaries"] == ["Thu Mar 10 19:21:17 UTC 2022", "Thu Mar 10 19:21:18 UTC 2022",
                                  "Thu Mar 10 19:21:20 UTC 2022", "Thu Mar 10 19:21:22 UTC 2022"]
    assert facts["failures"] == []
    assert [gpu["index"] for gpu in facts["gpus"]] == list(range(8))
    assert all(gpu["verdict"] == "OK" and gpu["errors"] == 0 and not gpu["died"] for gpu in facts["gpus"])


def test_real_log_per_gpu_numbers():
    gpus = gpu_burn.parse(real_log())["gpus"]
    first, second, fifth = gpus[0], gpus[1], gpus[4]
    assert first["name"] == "NVIDIA A100-SXM4-80GB"
    assert first["uuid"] == "GPU-b876c63f-396c-f826-5cd0-6b8409990352"
    # A sample per new proc'd count; the first report's interval includes the GPU's start-up.
    assert first["gflops_samples"] == [7150, 17039, 16942]
    assert (first["gflops_median"], first["gflops_final"], first["gflops_min"], first["gflops_max"]) == (16990.5, 16942, 16942, 17039)
    assert (first["processed"], first["reports"]) == (6783, 3)
    assert (first["temperature_c_final"], first["temperature_c_max"]) == (62, 62)
    assert first["memory_used_mb"] == 72443 and first["power_w_max"] is None
    assert second["gflops_samples"] == [6045, 17177, 17093] and second["gflops_median"] == 17135
    assert fifth["gflops_samples"] == [5865, 16890] and fifth["gflops_median"] == 16890
    assert (fifth["processed"], fifth["temperature_c_final"]) == (4522, 60)
    assert [gpu["gflops_final"] for gpu in gpus] == [16942, 17093, 16957, 16926, 16890, 16950, 17010, 16926]
    assert [gpu["temperature_c_final"] for gpu in gpus] == [62, 59, 58, 60, 60, 59, 58, 61]


def test_line_breaks_instead_of_carriage_returns_parse_the_same():
    """A log that went through a terminal copy has its records on separate lines."""
    assert gpu_burn.parse(real_log().replace("\r", "\n")) == gpu_burn.parse(real_log())


def test_zero_gflops_is_still_ok_for_gpu_burn():
    def idle(procd, errors):
        procd[3] = ["0", "0"]
    facts = gpu_burn.parse(edit_records(real_log(), idle))
    gpu = facts["gpus"][3]
    assert (gpu["verdict"], gpu["errors"]) == ("OK", 0)
    assert (gpu["gflops_median"], gpu["gflops_final"], gpu["reports"], gpu["gflops_samples"]) == (0, 0, 0, [])
    assert facts["gpus"][2]["gflops_median"] == 16973.5


def test_slow_gpu_keeps_its_counts():
    def slow(procd, errors):
        if procd[6][0] != "0":
            procd[6][1] = "12000"
    gpu = gpu_burn.parse(edit_records(real_log(), slow))["gpus"][6]
    assert (gpu["gflops_samples"], gpu["gflops_median"], gpu["processed"], gpu["verdict"]) == ([12000, 12000], 12000, 4522, "OK")


def test_faulty_gpu_errors_summed_across_summaries():
    """gpu_burn zeroes its error counters at each 'Summary at' line, so a run's total is the sum of the periods."""
    text = real_log()

    def two(procd, errors):
        errors[5] = ["2", "WARNING"]

    def three(procd, errors):
        errors[5] = ["3", "WARNING"]
    lines = text.split("\n")
    first_summary = next(i for i, line in enumerate(lines) if line.startswith("\tSummary at:"))
    last_summary = max(i for i, line in enumerate(lines) if line.startswith("\tSummary at:"))
    head = edit_records("\n".join(lines[:first_summary]), two)
    text = head + "\n" + "\n".join(lines[first_summary:])
    text = set_verdict(edit_records(text, three, after=last_summary), 5, "FAULTY")
    assert "errors: 0 - 0 - 0 - 0 - 0 - 3  (WARNING!)- 0 - 0   temps" in text
    gpus = gpu_burn.parse(text)["gpus"]
    assert (gpus[5]["errors"], gpus[5]["verdict"]) == (5, "FAULTY")
    assert [gpu["errors"] for gpu in gpus] == [0, 0, 0, 0, 0, 5, 0, 0]


def test_died_worker():
    def died(procd, errors):
        if procd[1][0] == "6783":
            procd[1][0] = "-1"
            errors[1] = ["-1", "DIED"]
    text = set_verdict(edit_records(real_log(), died), 1, "FAULTY")
    gpu = gpu_burn.parse(text, "Failure during compute: Error in SGEMM (gpu_burn-drv.cpp:201): \n")["gpus"][1]
    assert (gpu["died"], gpu["errors"], gpu["verdict"], gpu["processed"]) == (True, 0, "FAULTY", 4522)
    facts = gpu_burn.parse(text, "Failure during compute: Error in SGEMM (gpu_burn-drv.cpp:201): \n")
    assert facts["failures"] == ["Failure during compute: Error in SGEMM (gpu_burn-drv.cpp:201):"]


def test_newer_builds_power_column_and_header():
    """Builds since 2023 (gpu_burn-drv.cpp, commit 0831a45 in the index) print 'Using compare file', 'Burning for N
    seconds.' and a '  power: %d W' column ('--' while unknown); added here to the real records as that code prints them."""
    text = real_log().replace("GPU 0: NVIDIA", "Using compare file: compare.ptx\nBurning for 60 seconds.\nGPU 0: NVIDIA", 1)
    watts = " - ".join(["400 W"] * 7 + ["--"])
    text = re.sub(r"(temps: (?:\d+ C - ){7}\d+ C )", r"\1  power: %s " % watts, text)
    facts = gpu_burn.parse(text)
    assert (facts["burn_seconds"], facts["compare_file"]) == (60, "compare.ptx")
    assert [gpu["power_w_max"] for gpu in facts["gpus"]] == [400] * 7 + [None]
    assert facts["gpus"][0]["gflops_samples"] == [7150, 17039, 16942]


def test_truncated_before_the_summary():
    text = real_log()
    cut = text[:text.index("Tested 8 GPUs")]
    with pytest.raises(ParseError) as info:
        gpu_burn.parse(cut)
    assert info.value.message == ("gpu_burn: output is truncated: 196 progress records (last at 100 %) but no "
                                  "'Tested N GPUs' summary")


def test_truncated_inside_the_verdicts():
    text = real_log()
    with pytest.raises(ParseError) as info:
        gpu_burn.parse(text[:text.index("\tGPU 5: OK")])
    assert info.value.message == ("gpu_burn: the final summary is truncated or inconsistent: no verdict for GPU 5, 6, 7")


def test_truncated_in_the_middle_of_the_run():
    text = real_log()
    with pytest.raises(ParseError) as info:
        gpu_burn.parse(text[:text.index("Summary at:   Thu Mar 10 19:21:20")])
    assert info.value.message == ("gpu_burn: output is truncated: 98 progress records (last at 80 %) but no "
                                  "'Tested N GPUs' summary")


@pytest.mark.parametrize("stdout, stderr, message", [
    ("", "", "gpu_burn: no output"),
    ("  \n", "Segmentation fault\n", "gpu_burn: no output (stderr: Segmentation fault)"),
    ("GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-b876c63f-396c-f826-5cd0-6b8409990352)\n", "",
     "gpu_burn: no progress line and no 'Tested N GPUs' summary: not gpu_burn output "
     "(first line: 'GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-b876c63f-396c-f826-5cd0-6b8409990352)')"),
])
def test_empty_and_foreign_output(stdout, stderr, message):
    with pytest.raises(ParseError) as info:
        gpu_burn.parse(stdout, stderr)
    assert info.value.message == message


@pytest.mark.parametrize("stderr, reason", [
    # gpu_burn-drv.cpp initCuda(): cuInit failed, then the parent sees 0 devices.
    ("Couldn't init CUDA: Error (gpu_burn-drv.cpp:385): no CUDA-capable device is detected\nNo CUDA devices\n",
     "Couldn't init CUDA: Error (gpu_burn-drv.cpp:385): no CUDA-capable device is detected"),
    # startBurn(): the compare kernel is not in the working directory; every worker dies.
    ("Couldn't init a GPU test: Error in couldn't find compare kernel: compare.ptx (gpu_burn-drv.cpp:238): "
     "named symbol not found\nread[0] error 0\n\nNo clients are alive!  Aborting\n",
     "Couldn't init a GPU test: Error in couldn't find compare kernel: compare.ptx (gpu_burn-drv.cpp:238): "
     "named symbol not found"),
    ("\n\nNo clients are alive!  Aborting\n", "No clients are alive!  Aborting"),
    # Older builds do not catch the exception: the C++ runtime prints it.
    ("terminate called after throwing an instance of 'std::runtime_error'\n  what():  Error (gpu_burn-drv.cpp:337): "
     "unknown error\n", "what():  Error (gpu_burn-drv.cpp:337): unknown error"),
])
def test_gpu_burn_error_output_is_a_tool_failure(stderr, reason):
    stdout = "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-b876c63f-396c-f826-5cd0-6b8409990352)\n"
    with pytest.raises(ToolFailed) as info:
        gpu_burn.parse(stdout, stderr)
    assert info.value.message == "gpu_burn: gpu_burn did not complete: %s" % reason
    assert gpu_burn.failure_reason(stderr) == reason


def test_inconsistent_column_count():
    text = real_log()
    second = text.index(" - 0 (0 Gflop/s)   errors", text.index("Summary at:"))
    text = text[:second] + text[second + len(" - 0 (0 Gflop/s)"):]
    with pytest.raises(ParseError) as info:
        gpu_burn.parse(text)
    assert info.value.message == "gpu_burn: progress record 2 has 7 proc'd values but the run has 8 GPUs"


def test_tested_count_must_match_the_columns():
    with pytest.raises(ParseError) as info:
        gpu_burn.parse(real_log().replace("Tested 8 GPUs:", "Tested 9 GPUs:"))
    assert info.value.message == "gpu_burn: 'Tested 9 GPUs' but the progress records have 8 GPUs"


def test_unreadable_item():
    with pytest.raises(ParseError) as info:
        gpu_burn.parse(real_log().replace("temps: 38 C", "temps: hot", 1))
    assert info.value.message == "gpu_burn: progress record 1: cannot read temps item 'hot'"


def test_unknown_lines_warn_but_do_not_fail():
    warnings = []
    text = real_log().replace("done\n", "done\nsomething new\n")
    assert gpu_burn.parse(text, warn=warnings.append)["tested_gpus"] == 8
    assert warnings == ["gpu_burn: unknown output line 'something new'; please report"]


def test_samples_are_thinned_evenly():
    values = list(range(300))
    thinned = gpu_burn._thin(values)
    assert len(thinned) == gpu_burn.MAX_SAMPLES == 120
    assert thinned[0] == 0 and thinned[-1] == 299
    assert thinned == sorted(thinned)
    assert gpu_burn._thin([1, 2, 3]) == [1, 2, 3]


def test_cut_in_the_middle_of_a_record_is_reported_as_truncated():
    text = real_log()
    cut = text[:text.index("Killing processes") - 60]
    assert not cut.endswith(("\n", "\r"))
    with pytest.raises(ParseError) as info:
        gpu_burn.parse(cut)
    assert info.value.message == ("gpu_burn: output is truncated: 195 progress records (last at 100 %) but no "
                                  "'Tested N GPUs' summary")
