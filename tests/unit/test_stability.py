# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The stability watch around a burn: GPU facts from real nvidia-smi captures, sampled before, during and after,
with one value edited per kind of change."""

from __future__ import annotations

import copy
import os

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import nvidia_smi
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import _stability as stability

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "nvidia-smi")
BUSES = ("07", "0F", "47", "4E", "87", "90", "B7", "BD")
HOST_IDS = ("burn.stability.gpu_count", "burn.stability.xid")


@pytest.fixture(scope="module")
def a100_node():
    """8 copies of the real A100 XML capture's GPU (index, bus id, UUID edited), idle at 1275 of 1410 MHz, 27 C."""
    with open(os.path.join(FIXTURES, "q-x-a100-sxm4-80gb-mig-535.xml"), encoding="utf-8") as fh:
        one = nvidia_smi.parse_xml(fh.read())
    node = copy.deepcopy(one)
    node["gpus"] = []
    for index, bus in enumerate(BUSES):
        gpu = copy.deepcopy(one["gpus"][0])
        gpu.update(index=index, pci_bus_id="0000:%s:00.0" % bus, uuid=gpu["uuid"][:-2] + "%02x" % index)
        node["gpus"].append(gpu)
    node["attached_gpus"] = 8
    return node


@pytest.fixture(scope="module")
def h100_node():
    """The real 8x H100 text dump: T.Limit temperatures, row remapping, HW power brake slowdown active on its GPUs."""
    with open(os.path.join(FIXTURES, "q-h100x8-535.161.08-hw-power-brake-slowdown.txt"), encoding="utf-8") as fh:
        return nvidia_smi.parse(fh.read())


def sample(node, gpu=None, **edits):
    """A copy of ``node`` with dotted-path edits on one GPU (``ecc__volatile_uncorrected=2``)."""
    node = copy.deepcopy(node)
    for path, value in edits.items():
        target = node["gpus"][gpu]
        keys = path.split("__")
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value
    return node


def by_id(checks, check_id):
    return [check for check in checks if check["id"] == check_id]


def statuses(checks):
    return dict(((check["id"], check["component"][:5]), check["status"]) for check in checks)


def test_no_change_all_pass(a100_node):
    checks = stability.judge_stability("node01", a100_node, [a100_node, a100_node], a100_node, xid_before=[],
                                       xid_after=[])
    assert len(checks) == 2 + 8 * len(stability.GPU_CHECK_IDS)
    assert [check["id"] for check in checks[:5]] == ["burn.stability.gpu_count"] + list(stability.GPU_CHECK_IDS)
    assert checks[-1]["id"] == "burn.stability.xid"
    assert set(check["status"] for check in checks) == {"pass"}
    assert checks[0]["message"] == "All 8 GPUs stayed visible in every one of 3 samples"
    temp = by_id(checks, "burn.stability.temperature")[0]
    assert temp["message"] == u"GPU 0 stayed 62 \u00b0C or more below its slowdown limit 89 \u00b0C under load (peak 27 \u00b0C)"
    clocks = by_id(checks, "burn.stability.clocks")[0]
    assert (clocks["observed"], clocks["message"]) == ("90.4 %", "GPU 0: its SM clock stayed at or above 1275 MHz "
                                                                 "(90.4 % of 1410 MHz) under load")
    assert by_id(checks, "burn.stability.ecc")[3]["component"] == u"GPU 3 (GPU-513536b6\u2026, 0000:4E:00.0)"


def test_ecc_volatile_uncorrected_grew(a100_node):
    after = sample(a100_node, 3, ecc__volatile_uncorrected=2)
    checks = stability.judge_stability("n", a100_node, [a100_node], after)
    ecc = by_id(checks, "burn.stability.ecc")[3]
    assert (ecc["status"], ecc["remedy"], ecc["observed"], ecc["expected"]) == ("fail", "reset_gpu", 2, "<= 0 (before the burn)")
    assert ecc["message"] == ("GPU 3: under load volatile uncorrectable ECC errors grew from 0 to 2: drain the node and "
                              "reset the GPU so the row is remapped or the page retired, then burn again")
    assert [check["status"] for check in by_id(checks, "burn.stability.ecc")].count("pass") == 7


def test_row_remap_pending_and_failure(h100_node):
    during = sample(h100_node, 5, remapped_rows__pending=True)
    after = sample(during, 5, remapped_rows__failure=True)
    ecc = by_id(stability.judge_stability("n", h100_node, [during], after), "burn.stability.ecc")[5]
    assert (ecc["status"], ecc["remedy"]) == ("fail", "rma")
    assert ecc["message"] == ("GPU 5: under load a row remap became pending; row remapping FAILED (no spare row left): "
                              "return the GPU (RMA)")


def test_temperature_reached_slowdown(a100_node):
    hot = sample(a100_node, 2, temperature__gpu_c=89)
    warm = sample(a100_node, 4, temperature__gpu_c=85)
    checks = stability.judge_stability("n", a100_node, [hot, warm], a100_node)
    temp = by_id(checks, "burn.stability.temperature")
    assert (temp[2]["status"], temp[2]["remedy"]) == ("fail", "investigate")
    assert temp[2]["message"].startswith(u"GPU 2 reached its slowdown limit 89 \u00b0C under load (peak 89 \u00b0C)")
    assert (temp[4]["status"], temp[4]["observed"]) == ("warn", u"4 \u00b0C to slowdown")
    assert [check["status"] for check in temp].count("pass") == 6


def test_temperature_tlimit_form(h100_node):
    during = sample(h100_node, 1, temperature__tlimit_c=-3)
    checks = stability.judge_stability("n", h100_node, [during], h100_node)
    temp = by_id(checks, "burn.stability.temperature")[1]
    assert (temp["status"], temp["observed"]) == ("fail", u"-1 \u00b0C to slowdown")
    assert "slowdown limit (T.Limit form)" in temp["message"]


def test_throttle_appeared(a100_node):
    during = sample(a100_node, 6, throttle__hw_slowdown=True, throttle__hw_thermal_slowdown=True)
    checks = stability.judge_stability("n", a100_node, [during], a100_node)
    throttle = by_id(checks, "burn.stability.throttle")[6]
    assert (throttle["status"], throttle["remedy"], throttle["observed"]) == (
        "fail", "investigate", "HW Slowdown, HW Thermal Slowdown")
    assert throttle["message"] == ("GPU 6 throttled under load: HW Slowdown, HW Thermal Slowdown; the GPU got too hot: "
                                   "check cooling (fans, airflow, heatsink or coolant loop)")
    # SW power cap is how a loaded GPU runs: not a finding.
    capped = sample(a100_node, 6, throttle__sw_power_cap=True)
    assert by_id(stability.judge_stability("n", a100_node, [capped], capped), "burn.stability.throttle")[6]["status"] == "pass"


def test_throttle_already_active_before_the_burn(h100_node):
    loaded = copy.deepcopy(h100_node)
    for gpu in loaded["gpus"]:
        gpu["clocks"]["sm_mhz"] = 1755
    checks = stability.judge_stability("n", h100_node, [loaded], h100_node)
    throttle = by_id(checks, "burn.stability.throttle")[0]
    assert throttle["status"] == "fail"
    assert throttle["message"] == ("GPU 0 throttled under load: HW Slowdown, HW Power Brake Slowdown (already active "
                                   "before the burn: HW Slowdown, HW Power Brake Slowdown); the system asserted the "
                                   "power brake: check the PSUs and the power delivery to the GPU baseboard")
    assert by_id(checks, "burn.stability.clocks")[0]["observed"] == "88.6 %"


def test_clocks_dropped_under_load(a100_node):
    during = sample(a100_node, 1, clocks__sm_mhz=600)
    checks = stability.judge_stability("n", a100_node, [a100_node, during], a100_node)
    clocks = by_id(checks, "burn.stability.clocks")[1]
    assert (clocks["status"], clocks["remedy"], clocks["observed"]) == ("warn", "investigate", "42.6 %")
    assert clocks["message"] == ("GPU 1: under load its SM clock dropped to 600 MHz, 42.6 % of its 1410 MHz maximum: "
                                 "read its throttle reasons and temperature")
    # The threshold is the site's; the clock after the burn (idle) is not judged.
    relaxed = stability.judge_stability("n", a100_node, [during], during, thresholds={"burn_clock_min_pct": 40})
    assert by_id(relaxed, "burn.stability.clocks")[1]["status"] == "pass"
    none = stability.judge_stability("n", a100_node, [], during)
    assert by_id(none, "burn.stability.clocks")[1]["status"] == "skip"


def test_gpu_fell_off_the_bus(a100_node):
    after = copy.deepcopy(a100_node)
    del after["gpus"][3]
    checks = stability.judge_stability("n", a100_node, [a100_node, a100_node], after)
    count = checks[0]
    assert (count["id"], count["status"], count["remedy"], count["observed"]) == (
        "burn.stability.gpu_count", "fail", "power_cycle", 7)
    assert count["message"] == ("1 GPU disappeared from the driver during the burn: GPU 3 (0000:4E:00.0, first missing "
                                "in sample 3 of 3). The GPU fell off the bus (look for XID 79): power-cycle the node "
                                "through its BMC")
    # The lost GPU's own checks use the samples where it was still there.
    assert by_id(checks, "burn.stability.ecc")[3]["status"] == "pass"


def test_after_sample_missing_is_an_error(a100_node):
    checks = stability.judge_stability("n", a100_node, [a100_node], None)
    assert (checks[0]["status"], checks[0]["remedy"]) == ("error", "investigate")
    assert checks[0]["message"].startswith("No GPU facts could be read after the burn")


def test_no_baseline(a100_node):
    checks = stability.judge_stability("n", None, [a100_node], a100_node)
    assert [(check["id"], check["status"]) for check in checks] == [("burn.stability.gpu_count", "error")]


def test_new_xid_events(a100_node):
    old = {"code": 13, "pci_bus_id": "0000:07:00.0", "time": "2024-05-01T10:00:00"}
    new = [
        {"code": 79, "pci_bus_id": "0000:4e:00.0", "time": "2024-05-01T11:00:00"},
        {"code": 48, "pci_bus_id": "0000:47:00.0", "time": "2024-05-01T11:00:05"},
        {"code": 79, "pci_bus_id": "0000:4E:00.0", "time": "2024-05-01T11:00:07"},
    ]
    checks = stability.judge_stability("n", a100_node, [], a100_node, xid_before=[old], xid_after=[old] + new)
    xid = checks[-1]
    assert (xid["id"], xid["status"], xid["remedy"], xid["observed"]) == ("burn.stability.xid", "fail", "investigate", 3)
    assert xid["message"] == ("3 new XID events during the burn: XID 79 on GPU 3, XID 48 on GPU 2; see the xid checks "
                              "for the action each code needs")
    assert xid["evidence"].startswith("codes: 48, 79; ")
    assert stability.new_xid_events([old], [old]) == []
    unread = stability.judge_stability("n", a100_node, [], a100_node)[-1]
    assert (unread["status"], unread["id"]) == ("skip", "burn.stability.xid")


def test_summary_for_the_report(a100_node):
    hot = sample(a100_node, 2, temperature__gpu_c=88)
    after = copy.deepcopy(a100_node)
    del after["gpus"][7]
    events = [{"code": 79, "pci_bus_id": "0000:BD:00.0", "time": "t1"},
              {"code": 13, "pci_bus_id": "0000:07:00.0", "time": "t2"}]
    assert stability.summarize_stability(a100_node, [hot], after, xid_before=[], xid_after=events) == {
        "samples": 2, "gpus_before": 8, "gpus_lost": ["0000:BD:00.0"], "max_temperature_c": 88,
        "new_xid_codes": [13, 79],
        # the real capture: 27 C and SM 1275 MHz on every GPU; sample 1 has GPU 2 at 88 C
        "trace": [{"t": 0, "temp_max_c": 27, "sm_clock_min_mhz": 1275}, {"t": 1, "temp_max_c": 88, "sm_clock_min_mhz": 1275},
                  {"t": 2, "temp_max_c": 27, "sm_clock_min_mhz": 1275}],
    }


def test_trace_skips_unread_samples_and_missing_values(a100_node):
    slow = sample(a100_node, 5, clocks__sm_mhz=600)
    blind = copy.deepcopy(a100_node)
    for gpu in blind["gpus"]:
        gpu["temperature"] = {}
        gpu["clocks"] = {}
    assert stability.stability_trace(a100_node, [slow, None, blind], None) == [
        {"t": 0, "temp_max_c": 27, "sm_clock_min_mhz": 1275}, {"t": 1, "temp_max_c": 27, "sm_clock_min_mhz": 600},
        {"t": 2, "temp_max_c": None, "sm_clock_min_mhz": None}]
    assert stability.stability_trace(None, [], None) == []


def test_watch_record_keeps_sample_times_failures_and_coverage(a100_node):
    watch = {"sample_s": 30, "started": 1000.0, "started_at": "2026-12-03T17:40:01.250Z", "ended": 1100.0,
             "ended_at": "2026-12-03T17:41:41.250Z", "stopped": None,
             "samples": [{"t": 1030.0, "at": "A", "gpu": {"gpus": []}},
                         {"t": 1060.0, "at": "B", "error": "nvidia-smi: exited with rc 9", "error_kind": "failed"},
                         {"t": 1090.0, "at": "C", "gpu": {"gpus": []}}]}
    record = stability.watch_record(watch)
    assert record["sample_times"] == ["A", "C"]
    assert record["failed_samples"] == [{"at": "B", "error": "nvidia-smi: exited with rc 9"}]
    # gaps: start->A 30, A->C 60 (the failed sample is no coverage), C->end 10
    assert record["coverage"] == {"samples": 2, "first_s": 30.0, "last_s": 90.0, "max_gap_s": 60.0}
    summary = stability.summarize_stability(a100_node, [a100_node], a100_node, watch=watch)
    assert summary["watch"] == record and summary["samples"] == 2
    assert "watch" not in stability.summarize_stability(a100_node, [a100_node], a100_node)
    assert stability.watch_record(None) is None


def test_after_error_names_why_nvidia_smi_was_not_called(a100_node):
    why = "nvidia-smi was not called after the burn: nvidia-smi timed out at sample 3; it is not called again"
    checks = stability.judge_stability("n", a100_node, [a100_node], None, after_error=why)
    count = [check for check in checks if check["id"] == "burn.stability.gpu_count"][0]
    assert count["status"] == "error"
    assert count["message"] == ("No GPU facts could be read after the burn (%s), so the GPUs' state after it is "
                                "unknown" % why)
    plain = stability.judge_stability("n", a100_node, [a100_node], None)
    assert "(nvidia-smi failed or timed out?)" in [c for c in plain if c["id"] == "burn.stability.gpu_count"][0][
        "message"]
