# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""NVLink error counters (issue 16): ``nvidia-smi nvlink -e`` parsed from the real H100 capture, its growth over a
window, the ``gpu.nvlink.errors`` rule (DCGM's NVLink health-watch limits) on edited copies of the capture, the collect
path with a real program behind the runner seam, and the lab simulator's ``nvlink_errors`` fault end to end."""

from __future__ import annotations

import json
import os
import stat
import sys

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import nvidia_smi, nvlink_errors
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu.collect import (
    collect_facts,
    with_windows,
)
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import gpu as rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._util import ThresholdError

from fuzzing import FUZZ, assert_total, fixture_text, text_mutations  # noqa: F401  (FUZZ used by the decorator)
from hypothesis import given

HERE = os.path.dirname(__file__)
FIXTURES = os.path.join(HERE, os.pardir, "fixtures", "nvidia-smi")
REPO = os.path.abspath(os.path.join(HERE, os.pardir, os.pardir))
CAPTURE = "nvlink-e-h100-healthy-excerpt.txt"


def read(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        return handle.read()


HEALTHY = read(CAPTURE)
# The same capture's header, UUID edited to the -q capture's (masked) one so the two name the same GPU.
Q_TEXT = read("excerpt-h100-80gb-hbm3-q-load.txt")
Q_UUID = nvidia_smi.parse(Q_TEXT)["gpus"][0]["uuid"]


def edited(text, line, value):
    """The capture with one counter line's value edited (the fault), asserting the line exists once."""
    old = "         %s: 0" % line
    assert text.count(old + "\n") == 1, line
    return text.replace(old + "\n", "         %s: %s\n" % (line, value))


def facts_with(before, after, window_s=60):
    facts = nvidia_smi.parse(Q_TEXT)
    before = before.replace("GPU-abcdefab-cdef-abdc-abcd-abababababab", Q_UUID)
    after = after.replace("GPU-abcdefab-cdef-abdc-abcd-abababababab", Q_UUID)
    facts["nvlink_errors"] = {"window_s": window_s, "unparsed": [], "gpus": nvlink_errors.growth(
        nvlink_errors.parse(before), nvlink_errors.parse(after), window_s)}
    facts["nvlink_errors_error"] = None
    return facts


def check_of(facts, thresholds=None):
    found = [c for c in rules.judge_gpu("node07", facts, None, thresholds=thresholds) if c["id"] == "gpu.nvlink.errors"]
    assert len(found) == 1
    return found[0]


# ------------------------------------------------------------------------------------------------ parser

def test_real_capture_parses_links_counters_and_keeps_the_elision():
    parsed = nvlink_errors.parse(HEALTHY)
    assert parsed["unparsed"] == ["[...]"]
    [gpu] = parsed["gpus"]
    assert (gpu["index"], gpu["name"], gpu["uuid"]) == (0, "NVIDIA H100 80GB HBM3",
                                                        "GPU-abcdefab-cdef-abdc-abcd-abababababab")
    assert [link["link"] for link in gpu["links"]] == [0, 1, 17]
    assert gpu["links"][2]["counters"] == {"replay": 0, "recovery": 0, "crc": 0}


def _as_gpu(text, index):
    """The capture as GPU ``index`` (header index and UUID edited), to build a multi-GPU loop output from it."""
    return text.replace("GPU 0:", "GPU %d:" % index, 1).replace(
        "GPU-abcdefab-cdef-abdc-abcd-abababababab", "GPU-abcdefab-cdef-abdc-abcd-abababab%04d" % index, 1)


def test_echo_lines_of_a_per_gpu_loop_are_named_not_messages():
    # `for i in ...; do echo "=== GPU $i NVLink Errors ==="; nvidia-smi nvlink -e -i $i; done` as users paste it, built
    # from the real capture; GPU 1 is a GPU without NVLink (the L40S capture's header and message)
    no_nvlink = read("excerpt-l40s-nvlink-s.txt").replace("GPU 0:", "GPU 1:", 1)
    text = "".join("=== GPU %d NVLink Errors ===\n%s" % (index, block)
                   for index, block in enumerate([HEALTHY, no_nvlink, _as_gpu(HEALTHY, 2)]))
    parsed = nvlink_errors.parse(text)
    assert [gpu["index"] for gpu in parsed["gpus"]] == [0, 1, 2]
    assert [gpu["messages"] for gpu in parsed["gpus"]] == [[], ["Device does not have or support Nvlink"], []]
    assert [[link["link"] for link in gpu["links"]] for gpu in parsed["gpus"]] == [[0, 1, 17], [], [0, 1, 17]]
    assert parsed["unparsed"] == ["=== GPU 0 NVLink Errors ===", "[...]", "=== GPU 1 NVLink Errors ===",
                                  "=== GPU 2 NVLink Errors ===", "[...]"]
    # the GPU without NVLink is skipped with its own message, not the next block's echo line
    [gpu1] = [gpu for gpu in nvlink_errors.growth(parsed, parsed, 60) if gpu["index"] == 1]
    assert gpu1["messages"] == ["Device does not have or support Nvlink"] and gpu1["links"] == []


def test_a_line_with_control_bytes_is_named_and_the_rest_read():
    text = HEALTHY.replace("Link 1: CRC Errors: 0", "Link 1: CRC \x00Errors: 0", 1)
    assert text != HEALTHY
    parsed = nvlink_errors.parse(text)
    assert parsed["unparsed"] == [repr("Link 1: CRC \x00Errors: 0"), "[...]"]
    links = parsed["gpus"][0]["links"]
    assert links[1]["counters"] == {"replay": 0, "recovery": 0}
    assert links[2]["counters"] == {"replay": 0, "recovery": 0, "crc": 0}


def test_a_lost_header_never_moves_counters_to_the_gpu_before():
    # GPU 1's header damaged (":" lost) and its link 0 replaying: its lines are named, GPU 0's counters stay its own
    second = edited(_as_gpu(HEALTHY, 1), "Link 0: Replay Errors", 7).replace("GPU 1:", "GPU 1", 1)
    parsed = nvlink_errors.parse(HEALTHY + second)
    assert [gpu["index"] for gpu in parsed["gpus"]] == [0]
    assert parsed["gpus"][0]["links"][0]["counters"] == {"replay": 0, "recovery": 0, "crc": 0}
    assert parsed["unparsed"][1].startswith("GPU 1 NVIDIA H100 80GB HBM3")
    assert "Link 0: Replay Errors: 7" in parsed["unparsed"]


def test_folded_links_of_newer_drivers_expand_to_each_link():
    # R580 folds equal links into one line (the form, on the capture's header, with the capture's counter names)
    text = HEALTHY.splitlines()[0] + "\n         Link 3: Replay Errors: 2353\n" \
        "         Links 0-2, 4-5: Replay/Recovery/CRC Errors: 0\n"
    links = nvlink_errors.parse(text)["gpus"][0]["links"]
    assert [link["link"] for link in links] == [0, 1, 2, 3, 4, 5]
    assert links[3]["counters"] == {"replay": 2353}
    assert links[5]["counters"] == {"replay": 0, "recovery": 0, "crc": 0}


@pytest.mark.parametrize("text, says", [
    ("\x00\x01garbage", "binary data"),
    ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n", "no 'GPU n: <name>' header"),
])
def test_unreadable_output_is_a_typed_parse_error(text, says):
    with pytest.raises(ParseError) as info:
        nvlink_errors.parse(text)
    assert info.value.tool == "nvidia-smi nvlink -e" and says in info.value.detail


@FUZZ
@given(text_mutations(HEALTHY))
def test_parser_and_growth_are_total_on_damaged_captures(text):
    parsed = assert_total("nvlink_errors.parse", nvlink_errors.parse, text)
    if isinstance(parsed, dict):
        assert_total("nvlink_errors.growth", nvlink_errors.growth, nvlink_errors.parse(HEALTHY), parsed, 60)


def test_growth_reports_delta_rate_saturation_and_clearing():
    before = nvlink_errors.parse(edited(HEALTHY, "Link 1: CRC Errors", 65535))
    after = nvlink_errors.parse(edited(edited(HEALTHY, "Link 0: Replay Errors", 30), "Link 1: CRC Errors", 65535))
    [gpu] = nvlink_errors.growth(before, after, 60)
    counters = dict((link["link"], link["counters"]) for link in gpu["links"])
    assert counters[0]["replay"] == {"before": 0, "after": 30, "delta": 30, "per_s": 0.5, "saturated": False,
                                     "cleared": False}
    assert counters[1]["crc"]["saturated"] is True and counters[1]["crc"]["delta"] == 0
    cleared = nvlink_errors.growth(after, before, 60)[0]["links"][0]["counters"]["replay"]
    assert (cleared["delta"], cleared["cleared"]) == (0, True)


# ------------------------------------------------------------------------------------------------ rule

def test_no_growth_passes():
    check = check_of(facts_with(HEALTHY, HEALTHY))
    assert (check["status"], check["remedy"], check["observed"]) == ("pass", "none", "no growth")
    assert check["message"] == "GPU 0: no NVLink error counter of its 3 links grew over 60 s"


@pytest.mark.parametrize("line", ["Link 17: Replay Errors", "Link 0: Recovery Errors"])
def test_replay_or_recovery_growth_fails_with_reset(line):
    check = check_of(facts_with(HEALTHY, edited(HEALTHY, line, 4)))
    assert (check["status"], check["remedy"]) == ("fail", "reset_gpu")
    assert "replay/recovery errors grew" in check["message"] and "drain the node and reset the GPU" in check["message"]
    assert "+4 (0 -> 4)" in check["message"]


def test_crc_growth_fails_at_100_per_second_and_warns_below():
    fast = check_of(facts_with(HEALTHY, edited(HEALTHY, "Link 1: CRC Errors", 6000)))  # 100/s over 60 s
    assert (fast["status"], fast["remedy"]) == ("fail", "reset_gpu")
    slow = check_of(facts_with(HEALTHY, edited(HEALTHY, "Link 1: CRC Errors", 5999)))
    assert (slow["status"], slow["remedy"], slow["observed"]) == ("warn", "monitor", "CRC +5999")
    # a site that tolerates some replays
    assert check_of(facts_with(HEALTHY, edited(HEALTHY, "Link 0: Replay Errors", 2)),
                    thresholds={"nvlink_replay_max": 5})["status"] == "pass"


def test_saturated_counter_warns_that_growth_is_invisible():
    full = edited(HEALTHY, "Link 1: CRC Errors", 65535)
    check = check_of(facts_with(full, full))
    assert (check["status"], check["remedy"], check["observed"]) == ("warn", "investigate", "saturated")
    assert "nvidia-smi nvlink -re" in check["message"]


def test_collect_failure_is_an_error_and_not_collected_is_no_check():
    facts = nvidia_smi.parse(Q_TEXT)
    facts.update({"nvlink_errors": None, "nvlink_errors_error": "nvidia-smi nvlink -e: timed out after 60 s"})
    check = check_of(facts)
    assert (check["status"], check["remedy"]) == ("error", "investigate")
    facts["nvlink_errors_error"] = None
    assert [c for c in rules.judge_gpu("n", facts, None) if c["id"] == "gpu.nvlink.errors"] == []


def test_bad_threshold_is_a_configuration_error():
    with pytest.raises(ThresholdError):
        rules.judge_gpu("n", facts_with(HEALTHY, HEALTHY), None, thresholds={"nvlink_crc_per_s_max": "lots"})


# ------------------------------------------------------------------------------------------------ collect

def _program(tmp_path, first, second):
    """A real program behind the runner seam: prints ``first`` on its first call and ``second`` after."""
    (tmp_path / "one.txt").write_text(first)
    (tmp_path / "two.txt").write_text(second)
    prog = tmp_path / "nvidia-smi"
    prog.write_text('#!/bin/sh\nif [ -e %s/seen ]; then cat %s/two.txt; else touch %s/seen; cat %s/one.txt; fi\n'
                    % ((tmp_path,) * 4))
    prog.chmod(prog.stat().st_mode | stat.S_IXUSR)
    return str(prog)


def test_collect_reads_twice_a_window_apart(tmp_path):
    waited = []
    prog = _program(tmp_path, HEALTHY, edited(HEALTHY, "Link 0: Recovery Errors", 1))
    facts = with_windows({"gpus": []}, prog, 30, 45, 0, sleep=waited.append)
    data = facts["nvlink_errors"]
    assert waited == [45] and data["window_s"] == 45 and facts["throttle_window"] is None
    assert data["gpus"][0]["links"][0]["counters"]["recovery"]["delta"] == 1


def test_collect_failure_is_kept_as_the_reason(tmp_path):
    prog = _program(tmp_path, HEALTHY, "\x00binary")
    facts = with_windows({"gpus": []}, prog, 30, 5, 0, sleep=lambda s: None)
    assert facts["nvlink_errors"] is None
    assert facts["nvlink_errors_error"].startswith("nvidia-smi nvlink -e: output contains binary data")
    assert with_windows({"gpus": []}, prog, 30, 0, 0) == {"gpus": [], "nvlink_errors": None, "nvlink_errors_error": None,
                                                          "throttle_window": None, "throttle_window_error": None}


def test_lab_fault_grows_between_two_reads(tmp_path):
    """The lab simulator's nvlink_errors fault, collected twice and judged: GPU 2 link 17 replays -> reset."""
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"schema": 1, "node": "unit01", "index": 1, "model": "a100", "gpus": 8,
                                 "capture": os.path.join(FIXTURES, "q-x-a100-sxm4-80gb-mig-535.xml"),
                                 "faults": [{"kind": "nvlink_errors", "gpu": 2, "link": 17, "counter": "replay",
                                             "per_read": 3}]}))
    prog = tmp_path / "nvidia-smi"
    prog.write_text('#!/bin/sh\nexec %s -I -S %s --state %s "$@"\n'
                    % (sys.executable, os.path.join(REPO, "lab", "sim", "nvidia_smi.py"), state))
    prog.chmod(prog.stat().st_mode | stat.S_IXUSR)
    waited = []
    facts = with_windows(collect_facts(str(prog), 30), str(prog), 30, 10, 30, sleep=waited.append)
    # the two windows run at once: 30 s in all, not 40; each judged over its own length
    assert waited == [10, 20]
    assert facts["nvlink_errors"]["window_s"] == 10 and facts["throttle_window"]["window_s"] == 30
    assert facts["throttle_window_error"] is None
    checks = [c for c in rules.judge_gpu("unit01", facts, None) if c["id"] == "gpu.nvlink.errors"]
    assert len(checks) == 8
    bad = [(c["component"].split(" (")[0], c["status"], c["remedy"]) for c in checks if c["status"] != "pass"]
    assert bad == [("GPU 2", "fail", "reset_gpu")]
    assert "link 17 replay +3 (3 -> 6)" in [c for c in checks if c["status"] == "fail"][0]["message"]
