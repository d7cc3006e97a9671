# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Throttle counters as a rate over a window (issue 24 item 4): the clocks event reasons counters of two
``nvidia-smi -q`` reads. The real pair is the L40S capture bundle of utkuozdemir/nvidia_gpu_exporter, whose idle and
load ``-q`` sections were taken 15 s apart (08:33:38, 08:33:53): SW power capping grew 3.9 s (the GPU at its power
limit under load, not judged), nothing else. Faults edit the load section's HW counters. The XML form is the real A100
capture with a counters block in driver 575's tags (``clocks_event_reasons_counters_hw_therm_slowdown``, ...: the
names gpud, nvidia_gpu_exporter-style readers and a user's driver-575 output agree on)."""

from __future__ import annotations

import os
import re

from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import nvidia_smi
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import gpu as rules
from ansible_collections.zhisuan.ops.plugins.plugin_utils._profiles import load_profiles

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "nvidia-smi")
L40S = load_profiles().get("l40s")


def _bundle_section(name):
    with open(os.path.join(FIXTURES, "capture-bundle-l40s.txt"), encoding="utf-8") as handle:
        text = handle.read()
    start = text.index("# %s :: query (-q)" % name)
    body = text[text.index("==============NVSMI LOG", start):]
    return body[:body.index("\n####")]


IDLE, LOAD = _bundle_section("idle"), _bundle_section("load")


def _edit(text, label, microseconds):
    edited = re.sub(r"(Clocks Event Reasons Counters\n(?:\s+.*\n)*?\s+%s\s+: )\d+ us" % re.escape(label),
                    r"\g<1>%d us" % microseconds, text, count=1)
    assert edited != text
    return edited


def judged(first, second, window_s=15, thresholds=None):
    facts = nvidia_smi.parse(second)
    facts["throttle_window"] = nvidia_smi.throttle_growth(nvidia_smi.parse(first), facts, window_s)
    facts["throttle_window_error"] = None
    checks = rules.judge_gpu("node01", facts, L40S, thresholds=thresholds)
    return facts, [check for check in checks if check["id"] == "gpu.throttle.rate"]


def test_counters_read_and_the_real_window_passes():
    idle, load = nvidia_smi.parse(IDLE)["gpus"][0], nvidia_smi.parse(LOAD)["gpus"][0]
    assert idle["throttle_counters_us"] == {"sw_power_cap": 200740215, "sync_boost": 0, "sw_thermal_slowdown": 0,
                                            "hw_thermal_slowdown": 0, "hw_power_brake_slowdown": 0}
    assert load["throttle_counters_us"]["sw_power_cap"] == 204642816
    facts, [check] = judged(IDLE, LOAD)
    [entry] = facts["throttle_window"]["gpus"]
    assert entry["held_us"]["sw_power_cap"] == 3902601 and entry["share_pct"]["sw_power_cap"] == 26.02
    assert (check["status"], check["observed"]) == ("pass", "0 %")
    assert "sw_power_cap_pct=26.02" in check["evidence"]


def test_hw_thermal_slowdown_over_the_window_fails_and_a_little_warns():
    # 2.25 s of 15 s held down by HW thermal slowdown: 15 %
    dummy, [check] = judged(IDLE, _edit(LOAD, "HW Thermal Slowdown", 2250000))
    assert (check["status"], check["remedy"], check["observed"]) == ("fail", "investigate", "15 %")
    assert check["message"] == ("GPU 0: its clocks were held down for 15 % of the 15 s window (HW thermal slowdown "
                                "15 %): check cooling, airflow and fans")
    # 0.3 s (2 %) of power braking: a warning naming the PSUs
    dummy, [check] = judged(IDLE, _edit(LOAD, "HW Power Braking", 300000))
    assert (check["status"], check["observed"]) == ("warn", "2 %")
    assert "HW power brake 2 %" in check["message"] and "the PSUs and the power delivery" in check["message"]
    # the site raises the warning limit
    dummy, [check] = judged(IDLE, _edit(LOAD, "HW Power Braking", 300000), thresholds={"throttle_rate_warn_pct": 5})
    assert check["status"] == "pass"


def test_a_counter_that_went_down_is_a_skip_and_no_window_no_check():
    dummy, [check] = judged(_edit(IDLE, "SW Power Capping", 900000000), LOAD)
    assert check["status"] == "skip" and "the driver reloaded" in check["message"]
    checks = rules.judge_gpu("node01", nvidia_smi.parse(LOAD), L40S)
    assert [c for c in checks if c["id"] == "gpu.throttle.rate"] == []
    facts = nvidia_smi.parse(LOAD)
    facts.update(throttle_window=None, throttle_window_error="nvidia-smi: timed out after 60 s (process group killed)")
    [check] = [c for c in rules.judge_gpu("node01", facts, L40S) if c["id"] == "gpu.throttle.rate"]
    assert (check["status"], check["remedy"]) == ("error", "investigate")


def _xml_with_counters(hw_therm_us):
    with open(os.path.join(FIXTURES, "q-x-a100-sxm4-80gb-mig-535.xml"), encoding="utf-8") as handle:
        text = handle.read()
    block = ("<clocks_event_reasons_counters>\n"
             "\t\t\t<clocks_event_reasons_counters_sw_power_cap>0 us</clocks_event_reasons_counters_sw_power_cap>\n"
             "\t\t\t<clocks_event_reasons_counters_sync_boost>0 us</clocks_event_reasons_counters_sync_boost>\n"
             "\t\t\t<clocks_event_reasons_counters_sw_therm_slowdown>0 us"
             "</clocks_event_reasons_counters_sw_therm_slowdown>\n"
             "\t\t\t<clocks_event_reasons_counters_hw_therm_slowdown>%d us"
             "</clocks_event_reasons_counters_hw_therm_slowdown>\n"
             "\t\t\t<clocks_event_reasons_counters_hw_power_brake>0 us</clocks_event_reasons_counters_hw_power_brake>\n"
             "\t\t</clocks_event_reasons_counters>\n" % hw_therm_us)
    # right after the GPU's own <clocks_event_reasons>, where driver 575 prints it
    return text.replace("</clocks_event_reasons>\n", "</clocks_event_reasons>\n" + block, 1)


def test_the_xml_form_reads_the_same_counters():
    warnings = []
    first = nvidia_smi.parse_xml(_xml_with_counters(1000), warn=warnings.append)
    second = nvidia_smi.parse_xml(_xml_with_counters(3001000), warn=warnings.append)
    assert warnings == []
    assert second["gpus"][0]["throttle_counters_us"]["hw_thermal_slowdown"] == 3001000
    growth = nvidia_smi.throttle_growth(first, second, 30)
    assert growth["gpus"][0]["share_pct"]["hw_thermal_slowdown"] == 10.0
