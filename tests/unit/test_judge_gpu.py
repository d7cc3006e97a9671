# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""GPU judgement rules (module_utils/_judge/gpu.py) on facts built from the docs/gpu-facts.md contract."""

from __future__ import annotations


import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._judge import gpu as rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import REMEDIES, STATUSES
from ansible_collections.zhisuan.ops.plugins.plugin_utils._profiles import load_profiles

PROFILES = load_profiles()
H100 = PROFILES["h100"]
# Bus ids of an HGX H100 8-GPU board, as lspci prints them upper-cased.
BUS_IDS = ["0000:18:00.0", "0000:2A:00.0", "0000:3A:00.0", "0000:5D:00.0",
           "0000:9A:00.0", "0000:AB:00.0", "0000:BA:00.0", "0000:DB:00.0"]


# ------------------------------------------------------------------------------------------------ builders

def h100_gpu(index, **sections):
    """One healthy, idle H100 SXM5 as gpu_info reports it (T.Limit temperature form, values from a real -q)."""
    gpu = {
        "index": index,
        "name": "NVIDIA H100 80GB HBM3",
        "brand": "NVIDIA",
        "architecture": "Hopper",
        "uuid": "GPU-5c1e%04d-aaaa-bbbb-cccc-0123456789ab" % index,
        "serial": "165012403%04d" % index,
        "pci_bus_id": BUS_IDS[index],
        "vbios_version": "96.00.74.00.0D",
        "persistence_mode": True,
        "mig_mode": {"current": "Disabled", "pending": "Disabled"},
        "memory": {"total_mib": 81559, "used_mib": 0, "reserved_mib": 551},
        "temperature": {"gpu_c": 29, "memory_c": 39, "shutdown_c": None, "slowdown_c": None,
                        "max_operating_c": None, "memory_max_c": None, "tlimit_c": 56, "shutdown_tlimit_c": -8,
                        "slowdown_tlimit_c": -2, "max_operating_tlimit_c": 0},
        "power": {"draw_w": 67.74, "limit_w": 700.0, "default_limit_w": 700.0, "min_limit_w": 200.0,
                  "max_limit_w": 700.0},
        "clocks": {"graphics_mhz": 345, "sm_mhz": 345, "memory_mhz": 2619, "max_graphics_mhz": 1980,
                   "max_sm_mhz": 1980, "max_memory_mhz": 2619},
        "pcie": {"gen_current": 5, "gen_max": 5, "width_current": 16, "width_max": 16, "replays": 0},
        "fan_speed_pct": None,
        "performance_state": "P0",
        "ecc": {"mode_current": True, "mode_pending": True, "volatile_corrected": 0, "volatile_uncorrected": 0,
                "aggregate_corrected": 0, "aggregate_uncorrected": 0},
        "retired_pages": {"single_bit": None, "double_bit": None, "pending": None},
        "remapped_rows": {"correctable": 0, "uncorrectable": 0, "pending": False, "failure": False},
        "throttle": {"gpu_idle": True, "applications_clocks_setting": False, "sw_power_cap": False,
                     "hw_slowdown": False, "hw_thermal_slowdown": False, "hw_power_brake_slowdown": False,
                     "sync_boost": False, "sw_thermal_slowdown": False, "display_clocks_setting": False},
        "processes": [],
        "unreadable": [],
    }
    for key, value in sections.items():
        if isinstance(value, dict) and isinstance(gpu.get(key), dict):
            gpu[key] = dict(gpu[key], **value)
        else:
            gpu[key] = value
    return gpu


def h100_node(count=8, faults=None):
    """A node's gpu facts; ``faults`` maps a GPU index to the sections to change on it."""
    faults = faults or {}
    gpus = [h100_gpu(i, **faults.get(i, {})) for i in range(count)]
    return {"source": "xml", "timestamp": "Mon Apr 24 16:22:39 2023", "driver_version": "535.161.08",
            "cuda_version": "12.2", "attached_gpus": count, "gpus": gpus}


def judge(facts, profile=H100, expected=None, thresholds=None, host="node07"):
    return rules.judge_gpu(host, facts, profile, expected=expected, thresholds=thresholds)


def pick(checks, check_id, gpu=None):
    """The one check with ``check_id`` (for GPU ``gpu`` when given)."""
    found = [c for c in checks if c["id"] == check_id
             and (gpu is None or c["component"].startswith("GPU %d " % gpu))]
    assert len(found) == 1, (check_id, gpu, [c["component"] for c in found])
    return found[0]


def not_passing(checks):
    return sorted((c["id"], c["component"].split(" (")[0], c["status"]) for c in checks
                  if c["status"] not in ("pass", "skip"))


# ----------------------------------------------------------------------------------------------- healthy

def test_healthy_h100_node_passes_everything():
    checks = judge(h100_node(), expected={"gpu_count": 8, "driver_version": "535.161.08", "cuda_version": "12.2"})
    assert not_passing(checks) == []
    ids = [c["id"] for c in checks]
    assert ids[:3] == list(rules.HOST_CHECK_IDS)
    # One check per (id, GPU), in GPU order then rule order.
    assert ids[3:] == list(rules.GPU_CHECK_IDS) * 8
    assert len(checks) == 3 + 8 * len(rules.GPU_CHECK_IDS)
    for check in checks:
        assert check["host"] == "node07"
        assert check["status"] in STATUSES and check["remedy"] in REMEDIES
        assert check["remedy"] == "none"
        assert check["message"]
    # Row remapping applies to Hopper; page retirement is N/A there.
    assert pick(checks, "gpu.retired_pages.pending", 0)["status"] == "skip"
    assert pick(checks, "gpu.remap.pending", 0)["status"] == "pass"


def test_component_names_gpu_short_uuid_and_bus_id():
    check = pick(judge(h100_node()), "gpu.ecc.volatile_uncorrectable", 3)
    assert check["component"] == u"GPU 3 (GPU-5c1e0003\u2026, 0000:5D:00.0)"


def test_deterministic_output():
    facts = h100_node(faults={2: {"ecc": {"volatile_uncorrected": 1}}})
    assert judge(facts) == judge(facts)


def test_does_not_modify_inputs():
    facts = h100_node()
    profile = dict(H100)
    before = repr(facts), repr(profile)
    judge(facts, profile=profile, expected={"gpu_count": 8})
    assert (repr(facts), repr(profile)) == before


# ----------------------------------------------------------------------------------------------- count

def test_one_gpu_missing_fails_count_with_reseat_and_bus_ids():
    facts = h100_node()
    del facts["gpus"][4]  # 0000:9A:00.0 fell off the bus
    facts["attached_gpus"] = 7
    check = pick(judge(facts, expected={"gpu_count": 8}), "gpu.count.present")
    assert check["status"] == "fail"
    assert check["remedy"] == "reseat"
    assert check["observed"] == 7 and check["expected"] == "== 8"
    assert "7 of 8" in check["message"] and "XID 79" in check["message"]
    assert "0000:DB:00.0" in check["evidence"] and "0000:9A:00.0" not in check["evidence"]
    assert check["component"] == "GPUs"


def test_count_falls_back_to_profile_and_expected_wins():
    facts = h100_node(count=4)
    assert pick(judge(facts), "gpu.count.present")["status"] == "fail"  # profile h100: 8
    assert pick(judge(facts, expected={"gpu_count": "4"}), "gpu.count.present")["status"] == "pass"


def test_more_gpus_than_expected_is_a_bom_mismatch():
    check = pick(judge(h100_node(), expected={"gpu_count": 4}), "gpu.count.present")
    assert (check["status"], check["remedy"]) == ("fail", "investigate")
    assert "8 GPUs found but 4 expected" in check["message"]


def test_no_facts_is_an_error_not_a_pass():
    checks = judge(None)
    assert [(c["id"], c["status"]) for c in checks] == [("gpu.count.present", "error")]


# ------------------------------------------------------------------------------------- identity / memory

def test_wrong_model_fails_with_replace_part():
    facts = h100_node(faults={5: {"name": "NVIDIA H100 PCIe"}})
    checks = judge(facts)
    check = pick(checks, "gpu.model.name", 5)
    assert (check["status"], check["remedy"]) == ("fail", "replace_part")
    assert "NVIDIA H100 PCIe" in check["message"]
    assert pick(checks, "gpu.model.name", 4)["status"] == "pass"


def test_expected_model_substring_or_regex_wins_over_profile():
    facts = h100_node()
    assert pick(judge(facts, expected={"gpu_model": "H100 80GB"}), "gpu.model.name", 0)["status"] == "pass"
    assert pick(judge(facts, expected={"gpu_model": "H1[0-9]0.*HBM3"}), "gpu.model.name", 0)["status"] == "pass"
    # Not a valid regex: treated as a literal substring.
    assert pick(judge(facts, expected={"gpu_model": "H200 ("}), "gpu.model.name", 0)["status"] == "fail"


def test_memory_below_profile_minimum_fails():
    facts = h100_node(faults={1: {"memory": {"total_mib": 40536}}})
    check = pick(judge(facts), "gpu.memory.total", 1)
    assert (check["status"], check["remedy"]) == ("fail", "replace_part")
    assert check["observed"] == 40536 and check["expected"] == ">= 80000 MiB"
    assert "40536" in check["message"]


# ------------------------------------------------------------------------------------------------ ECC

def test_volatile_uncorrectable_ecc_on_gpu3():
    facts = h100_node(faults={3: {"ecc": {"volatile_uncorrected": 2, "aggregate_uncorrected": 2}}})
    checks = judge(facts)
    check = pick(checks, "gpu.ecc.volatile_uncorrectable", 3)
    assert check["status"] == "fail"
    assert check["remedy"] == "reset_gpu"
    assert check["observed"] == 2 and check["expected"] == "== 0"
    assert check["message"].startswith("GPU 3 has 2 uncorrectable ECC errors since the driver loaded")
    assert "ecc.volatile_uncorrected=2" in check["evidence"]
    agg = pick(checks, "gpu.ecc.aggregate_uncorrectable", 3)
    assert (agg["status"], agg["remedy"]) == ("warn", "monitor")
    assert not_passing(checks) == [("gpu.ecc.aggregate_uncorrectable", "GPU 3", "warn"),
                                   ("gpu.ecc.volatile_uncorrectable", "GPU 3", "fail")]


def test_ecc_threshold_override():
    facts = h100_node(faults={3: {"ecc": {"volatile_uncorrected": 2}}})
    check = pick(judge(facts, thresholds={"ecc_volatile_uncorrected_max": 2}), "gpu.ecc.volatile_uncorrectable", 3)
    assert check["status"] == "pass" and check["expected"] == "<= 2"


def test_ecc_disabled_warns():
    facts = h100_node(faults={0: {"ecc": {"mode_current": False, "mode_pending": False,
                                          "volatile_uncorrected": None, "aggregate_uncorrected": None}}})
    checks = judge(facts)
    check = pick(checks, "gpu.ecc.mode", 0)
    assert (check["status"], check["remedy"], check["observed"]) == ("warn", "tune", "disabled")
    assert pick(checks, "gpu.ecc.volatile_uncorrectable", 0)["status"] == "skip"


def test_ecc_disabled_on_a_consumer_gpu_is_not_judged():
    facts = h100_node(faults={0: {"brand": "GeForce", "ecc": {"mode_current": False, "mode_pending": False}}})
    assert pick(judge(facts, profile=None), "gpu.ecc.mode", 0)["status"] == "skip"


def test_ecc_enable_pending_reset():
    facts = h100_node(faults={0: {"ecc": {"mode_current": False, "mode_pending": True}}})
    check = pick(judge(facts), "gpu.ecc.mode", 0)
    assert (check["status"], check["remedy"]) == ("warn", "reset_gpu")


# ------------------------------------------------------------------------------ row remap / retired pages

def test_remap_pending_fails_with_reset():
    facts = h100_node(faults={6: {"remapped_rows": {"uncorrectable": 1, "pending": True}}})
    checks = judge(facts)
    check = pick(checks, "gpu.remap.pending", 6)
    assert (check["status"], check["remedy"], check["observed"]) == ("fail", "reset_gpu", "yes")
    assert "reset" in check["message"]
    assert pick(checks, "gpu.remap.failure", 6)["status"] == "pass"
    assert not_passing(checks) == [("gpu.remap.pending", "GPU 6", "fail")]


def test_remap_failure_is_rma():
    facts = h100_node(faults={2: {"remapped_rows": {"failure": True}}})
    check = pick(judge(facts), "gpu.remap.failure", 2)
    assert (check["status"], check["remedy"]) == ("fail", "rma")


def test_remap_uncorrectable_over_cap_is_rma():
    facts = h100_node(faults={2: {"remapped_rows": {"uncorrectable": 513}}})
    check = pick(judge(facts), "gpu.remap.uncorrectable", 2)
    assert (check["status"], check["remedy"], check["observed"]) == ("fail", "rma", 513)


def test_na_sections_skip():
    facts = h100_node(faults={0: {"remapped_rows": None, "ecc": None, "throttle": None,
                                  "retired_pages": {"single_bit": 0, "double_bit": 0, "pending": True}}})
    checks = judge(facts)
    for check_id in ("gpu.remap.pending", "gpu.remap.failure", "gpu.remap.uncorrectable", "gpu.ecc.mode",
                     "gpu.ecc.volatile_uncorrectable", "gpu.ecc.aggregate_uncorrectable",
                     "gpu.throttle.hw_slowdown", "gpu.throttle.hw_power_brake_slowdown"):
        assert pick(checks, check_id, 0)["status"] == "skip", check_id
    # Pre-Ampere: page retirement is the mechanism, and a pending retirement needs a reset.
    check = pick(checks, "gpu.retired_pages.pending", 0)
    assert (check["status"], check["remedy"]) == ("fail", "reset_gpu")
    assert pick(checks, "gpu.retired_pages.count", 0)["status"] == "pass"


def test_retired_pages_over_max_is_rma():
    facts = h100_node(faults={0: {"retired_pages": {"single_bit": 9, "double_bit": 3, "pending": False}}})
    check = pick(judge(facts), "gpu.retired_pages.count", 0)
    assert (check["status"], check["remedy"], check["observed"]) == ("fail", "rma", 12)
    assert "9 single-bit, 3 double-bit" in check["message"]


# ----------------------------------------------------------------------------------------------- PCIe

def test_pcie_width_x8_of_x16_fails_reseat():
    facts = h100_node(faults={4: {"pcie": {"width_current": 8}}})
    checks = judge(facts)
    check = pick(checks, "gpu.pcie.width", 4)
    assert (check["status"], check["remedy"]) == ("fail", "reseat")
    assert check["observed"] == 8 and check["expected"] == ">= 16"
    assert "x8 of x16" in check["message"]
    assert check["component"] == u"GPU 4 (GPU-5c1e0004\u2026, 0000:9A:00.0)"
    assert not_passing(checks) == [("gpu.pcie.width", "GPU 4", "fail")]


def test_pcie_gen1_of_gen5_at_idle_passes():
    facts = h100_node(faults={0: {"pcie": {"gen_current": 1}, "performance_state": "P8", "processes": []}})
    checks = judge(facts)
    check = pick(checks, "gpu.pcie.generation", 0)
    assert check["status"] == "pass"
    assert check["remedy"] == "none"
    assert "Gen1 of Gen5" in check["message"] and "idle" in check["message"]
    assert not_passing(checks) == []


def test_pcie_gen_below_max_while_busy_only_warns():
    busy = {"pcie": {"gen_current": 3}, "performance_state": "P0",
            "processes": [{"pid": 725, "type": "C", "name": "python", "used_memory_mib": 70000}]}
    check = pick(judge(h100_node(faults={0: busy})), "gpu.pcie.generation", 0)
    assert (check["status"], check["remedy"]) == ("warn", "investigate")


def test_pcie_capability_below_model_warns():
    check = pick(judge(h100_node(faults={0: {"pcie": {"gen_current": 4, "gen_max": 4}}})), "gpu.pcie.generation", 0)
    assert check["status"] == "warn" and "BIOS" in check["message"]


# -------------------------------------------------------------------------------------------- thermal

def test_tlimit_form_near_slowdown_warns():
    # 3 degC of T.Limit headroom; slowdown is 2 degC past T.Limit, so 5 degC from slowdown: within the margin.
    facts = h100_node(faults={7: {"temperature": {"gpu_c": 84, "tlimit_c": 3}}})
    check = pick(judge(facts), "gpu.temperature.gpu", 7)
    assert (check["status"], check["remedy"]) == ("warn", "investigate")
    assert check["observed"] == u"5 \u00b0C to slowdown"
    assert "84" in check["message"] and "5" in check["message"]


def test_tlimit_form_past_slowdown_fails():
    facts = h100_node(faults={7: {"temperature": {"gpu_c": 91, "tlimit_c": -4}}})
    check = pick(judge(facts), "gpu.temperature.gpu", 7)
    assert (check["status"], check["remedy"]) == ("fail", "investigate")
    assert "2 \u00b0C past its slowdown limit" in check["message"]


def test_tlimit_form_healthy_passes_with_headroom():
    check = pick(judge(h100_node()), "gpu.temperature.gpu", 0)
    assert check["status"] == "pass"
    assert check["observed"] == u"58 \u00b0C to slowdown"  # 56 - (-2)
    assert "tlimit_c=56" in check["evidence"] and "slowdown_tlimit_c=-2" in check["evidence"]


def test_absolute_form_over_slowdown_fails():
    absolute = {"gpu_c": 90, "shutdown_c": 92, "slowdown_c": 89, "max_operating_c": 85, "tlimit_c": None,
                "shutdown_tlimit_c": None, "slowdown_tlimit_c": None, "max_operating_tlimit_c": None}
    check = pick(judge(h100_node(faults={2: {"temperature": absolute}})), "gpu.temperature.gpu", 2)
    assert (check["status"], check["remedy"]) == ("fail", "investigate")
    assert check["observed"] == u"90 \u00b0C" and check["expected"] == u"< 89 \u00b0C"
    assert "89" in check["message"]


def test_absolute_form_margin_from_threshold_override():
    absolute = {"gpu_c": 80, "slowdown_c": 89, "tlimit_c": None, "slowdown_tlimit_c": None}
    facts = h100_node(faults={2: {"temperature": absolute}})
    assert pick(judge(facts), "gpu.temperature.gpu", 2)["status"] == "pass"  # 9 degC > 5
    check = pick(judge(facts, thresholds={"temperature_margin_c": "10"}), "gpu.temperature.gpu", 2)
    assert check["status"] == "warn"


def test_temperature_skips_without_any_limit_and_errors_when_unreadable():
    none = {"gpu_c": 40, "slowdown_c": None, "tlimit_c": None, "slowdown_tlimit_c": None}
    assert pick(judge(h100_node(faults={0: {"temperature": none}})), "gpu.temperature.gpu", 0)["status"] == "skip"
    lost = {"gpu_c": None, "slowdown_c": None, "tlimit_c": None}
    facts = h100_node(faults={0: {"temperature": lost, "unreadable": ["temperature.gpu_c", "temperature.tlimit_c"]}})
    assert pick(judge(facts), "gpu.temperature.gpu", 0)["status"] == "error"


# ---------------------------------------------------------------------------------------------- power

def test_power_brake_active_fails_with_investigate():
    # As in the real capture q-h100x8-535.161.08-hw-power-brake-slowdown.txt: HW Slowdown + Power Brake active.
    facts = h100_node(faults={i: {"throttle": {"hw_slowdown": True, "hw_power_brake_slowdown": True}}
                              for i in range(8)})
    checks = judge(facts)
    brake = pick(checks, "gpu.throttle.hw_power_brake_slowdown", 0)
    assert (brake["status"], brake["remedy"]) == ("fail", "investigate")
    assert "PSU" in brake["message"] or "power delivery" in brake["message"]
    slowdown = pick(checks, "gpu.throttle.hw_slowdown", 0)
    assert slowdown["status"] == "fail"
    assert "throttle.hw_power_brake_slowdown=true" in slowdown["evidence"]
    assert pick(checks, "gpu.throttle.hw_thermal_slowdown", 0)["status"] == "pass"
    assert len([c for c in checks if c["status"] == "fail"]) == 16


def test_sw_power_cap_and_idle_are_not_faults():
    facts = h100_node(faults={0: {"throttle": {"sw_power_cap": True, "gpu_idle": True}}})
    assert not_passing(judge(facts)) == []


def test_thermal_throttle_reasons_fail():
    facts = h100_node(faults={1: {"throttle": {"hw_thermal_slowdown": True, "sw_thermal_slowdown": True}}})
    checks = judge(facts)
    assert pick(checks, "gpu.throttle.hw_thermal_slowdown", 1)["status"] == "fail"
    assert pick(checks, "gpu.throttle.sw_thermal_slowdown", 1)["status"] == "fail"


def test_power_draw_over_limit_fails():
    facts = h100_node(faults={0: {"power": {"draw_w": 760.0}}, 1: {"power": {"draw_w": 730.0}}})
    checks = judge(facts)
    check = pick(checks, "gpu.power.draw", 0)
    assert (check["status"], check["remedy"]) == ("fail", "investigate")
    assert "760 W" in check["message"] and "700 W" in check["message"]
    assert check["expected"] == "<= 735 W"
    assert pick(checks, "gpu.power.draw", 1)["status"] == "pass"  # within the 5 % tolerance


def test_power_limit_capped_warns():
    check = pick(judge(h100_node(faults={0: {"power": {"limit_w": 500.0}}})), "gpu.power.limit", 0)
    assert (check["status"], check["remedy"]) == ("warn", "tune")
    assert "500 W" in check["message"]


# ------------------------------------------------------------------------------------------ versions

def test_driver_mismatch_fails():
    checks = judge(h100_node(), expected={"driver_version": "550.90.07", "cuda_version": "12.2"})
    check = pick(checks, "gpu.driver.version")
    assert check["status"] == "fail"
    assert check["remedy"] == "update_firmware"
    assert check["observed"] == "535.161.08" and check["expected"] == "550.90.07"
    assert "550.90.07" in check["message"]
    assert pick(checks, "gpu.cuda.version")["status"] == "pass"


def test_version_prefix_matches_and_unset_skips():
    checks = judge(h100_node(), expected={"driver_version": "535"})
    assert pick(checks, "gpu.driver.version")["status"] == "pass"
    assert pick(checks, "gpu.cuda.version")["status"] == "skip"
    assert pick(judge(h100_node(), expected={"driver_version": "53"}), "gpu.driver.version")["status"] == "fail"


def test_cuda_mismatch_fails():
    check = pick(judge(h100_node(), expected={"cuda_version": "12.4"}), "gpu.cuda.version")
    assert check["status"] == "fail"


# ------------------------------------------------------------------------------------------ readout

def test_unreadable_field_warns_and_its_check_errors():
    facts = h100_node(faults={5: {"fan_speed_pct": None, "unreadable": ["fan_speed_pct"]},
                              6: {"power": {"draw_w": None}, "unreadable": ["power.draw_w"]}})
    checks = judge(facts)
    check = pick(checks, "gpu.readout.unreadable", 5)
    assert (check["status"], check["remedy"]) == ("warn", "investigate")
    assert "fan_speed_pct" in check["message"]
    draw = pick(checks, "gpu.power.draw", 6)
    assert draw["status"] == "error" and "ERR!" in draw["message"]
    assert not_passing(checks) == [("gpu.power.draw", "GPU 6", "error"),
                                   ("gpu.readout.unreadable", "GPU 5", "warn"),
                                   ("gpu.readout.unreadable", "GPU 6", "warn")]


# ------------------------------------------------------------------------------------------ no profile

def test_no_profile_uses_driver_limits_and_expected():
    facts = h100_node(faults={3: {"pcie": {"width_current": 8}},
                              4: {"temperature": {"gpu_c": 92, "tlimit_c": -6}}})
    checks = judge(facts, profile=None, expected={"gpu_count": 8})
    assert pick(checks, "gpu.count.present")["status"] == "pass"
    assert pick(checks, "gpu.model.name", 0)["status"] == "skip"
    assert pick(checks, "gpu.memory.total", 0)["status"] == "skip"
    assert pick(checks, "gpu.pcie.width", 3)["status"] == "fail"  # against the driver's width_max
    assert pick(checks, "gpu.temperature.gpu", 4)["status"] == "fail"
    assert pick(checks, "gpu.power.limit", 0)["status"] == "pass"  # against default_limit_w
    # GPU 4 at 92 degC is also far hotter than its idle peers (gpu.temperature.peers, issue 24 item 4)
    assert not_passing(checks) == [("gpu.pcie.width", "GPU 3", "fail"), ("gpu.temperature.gpu", "GPU 4", "fail"),
                                   ("gpu.temperature.peers", "GPU 4", "warn")]


def test_no_profile_no_expected_count_skips():
    check = pick(judge(h100_node(), profile=None), "gpu.count.present")
    assert check["status"] == "skip" and check["observed"] == 8


def test_minimal_gpu_entries_do_not_crash():
    facts = {"driver_version": None, "cuda_version": None, "attached_gpus": 1,
             "gpus": [{"index": 0, "name": "Tesla T4"}]}
    checks = judge(facts, profile=None)
    assert len(checks) == 3 + len(rules.GPU_CHECK_IDS)
    assert all(c["status"] in ("pass", "skip") for c in checks)


# ------------------------------------------------------------------------------------ profile helpers

def test_select_profile_by_name_and_by_match():
    assert rules.select_profile("NVIDIA H100 80GB HBM3", PROFILES)["name"] == "h100"
    assert rules.select_profile("NVIDIA H100 80GB HBM3", PROFILES, name="h800")["name"] == "h800"
    assert rules.select_profile("NVIDIA GeForce RTX 4090", PROFILES) is None
    assert rules.select_profile(None, PROFILES) is None
    with pytest.raises(ValueError, match="unknown GPU profile 'x100'"):
        rules.select_profile("NVIDIA H100 80GB HBM3", PROFILES, name="x100")


def test_merge_profile_is_pure_and_deep():
    overrides = {"nccl_allreduce_busbw_floor_gbs": 450, "pcie": {"gen_max": 4}, "match": ["H100"]}
    merged = rules.merge_profile(H100, overrides)
    assert merged["nccl_allreduce_busbw_floor_gbs"] == 450
    assert merged["pcie"] == {"gen_max": 4, "width_max": 16}
    assert merged["match"] == ["H100"]
    assert H100["pcie"]["gen_max"] == 5 and H100["nccl_allreduce_busbw_floor_gbs"] == 460
    merged["nvlink"]["links"] = 1
    assert H100["nvlink"]["links"] == 18
    assert rules.merge_profile(None, None) == {}


def test_bad_threshold_is_reported():
    with pytest.raises(ValueError, match="temperature_margin_c"):
        judge(h100_node(), thresholds={"temperature_margin_c": "warm"})


# ------------------------------------------------------------------------------------------ fleet
# (speed is measured by bench/run.py, never by a timed test)

def test_64_nodes_of_8_gpus_yield_every_check():
    fleet = [h100_node(faults={n % 8: {"ecc": {"volatile_uncorrected": n % 3}}}) for n in range(64)]
    expected = {"gpu_count": 8, "driver_version": "535.161.08", "cuda_version": "12.2"}
    total = 0
    failing = 0
    for n, facts in enumerate(fleet):
        checks = rules.judge_gpu("node%02d" % n, facts, H100, expected=expected)
        total += len(checks)
        failing += sum(1 for c in checks if c["id"] == "gpu.ecc.volatile_uncorrectable" and c["status"] == "fail")
    assert total == 64 * (3 + 8 * len(rules.GPU_CHECK_IDS))
    assert failing == sum(1 for n in range(64) if n % 3)


# -- issue 17: the skips of the memory-repair checks agree with each other and with what the GPU reports ---------------

def _real_checks(name):
    import os  # pylint: disable=import-outside-toplevel
    from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import nvidia_smi  # pylint: disable=import-outside-toplevel
    path = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "nvidia-smi", name)
    with open(path, encoding="utf-8") as handle:
        facts = nvidia_smi.parse(handle.read())
    checks = rules.judge_gpu("n1", facts, None)
    first = [c["component"] for c in checks if c["id"] == "gpu.model.name"][0]
    return [c for c in checks if c["component"] == first]


@pytest.mark.parametrize("name, remap, pages", [
    # A100 in MIG mode reports neither: one and the same sentence for both, no "older"/"newer" guess
    ("q-x-a100-sxm4-80gb-mig-535.xml",
     "GPU 1: neither row remapping nor page retirement is reported (N/A), so the memory repair state of this Ampere "
     "GPU cannot be judged", None),
    # Turing retires pages: only the remap checks skip, and they point at the page checks
    ("q-x-tesla-t4-515.xml",
     "GPU 0: row remapping is not reported (N/A); this Turing GPU retires pages instead (gpu.retired_pages.*)", "pass"),
    # Hopper remaps rows: only the page checks skip, and they point at the remap checks
    ("q-h100x8-535.161.08-hw-power-brake-slowdown.txt", "pass",
     "GPU 0: page retirement is not reported (N/A); this Hopper GPU remaps rows instead (gpu.remap.*)"),
])
def test_memory_repair_skips_follow_what_the_gpu_reports(name, remap, pages):
    checks = _real_checks(name)
    remap_checks = [c for c in checks if c["id"].startswith("gpu.remap.")]
    page_checks = [c for c in checks if c["id"].startswith("gpu.retired_pages.")]
    assert len(remap_checks) == 3 and len(page_checks) == 2
    if remap == "pass":
        assert set(c["status"] for c in remap_checks) == {"pass"}
    else:
        assert [(c["status"], c["message"]) for c in remap_checks] == [("skip", remap)] * 3
    if pages is None:  # the same sentence as the remap skips
        assert [(c["status"], c["message"]) for c in page_checks] == [("skip", remap)] * 2
    elif pages == "pass":
        assert set(c["status"] for c in page_checks) == {"pass"}
    else:
        assert [(c["status"], c["message"]) for c in page_checks] == [("skip", pages)] * 2
    texts = " ".join(c["message"] for c in checks)
    assert "older GPUs" not in texts and "newer GPUs" not in texts
