# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""DCGM rules: facts parsed from the real captures (tests/fixtures/dcgm), and from value-edited variants of them,
-> check records (ids, statuses, remedies, messages, evidence)."""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import dcgm, dcgm_health, nvidia_smi
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import dcgm as rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import REMEDIES, STATUSES

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, os.pardir, "fixtures")
T4 = "dcgm/dcgmi-diag-r3-j-tesla-t4-pass.json"
GB10_ALLOWED = "dcgm/dcgmi-diag-r2-j-gb10-4.5.2-plugins-allowed.json"
GB10_GATED = "dcgm/dcgmi-diag-r2-j-gb10-4.5.2-plugins-gated.json"
HEALTHY = "dcgm/dcgmi-health-c-j-healthy.json"
KEYS = ["id", "host", "component", "status", "observed", "expected", "message", "remedy", "evidence"]


def read(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        return handle.read()


def t4_facts(edit=None, level=3):
    doc = json.loads(read(T4))
    if edit:
        edit(doc)
    return dcgm.parse_diag(json.dumps(doc), level=level)


def set_result(name, status, warnings=None, index=0):
    def edit(doc):
        for category in doc["DCGM GPU Diagnostic"]["test_categories"]:
            for test in category["tests"]:
                if test["name"] == name:
                    test["results"][index]["status"] = status
                    if warnings is not None:
                        test["results"][index]["warnings"] = warnings
    return edit


def brief(checks):
    return [(c["id"], c["component"], c["status"], c["remedy"]) for c in checks]


def well_formed(checks):
    for check in checks:
        assert list(check) == KEYS
        assert check["status"] in STATUSES and check["remedy"] in REMEDIES
        assert (check["remedy"] == "none") == (check["status"] in ("pass", "skip")), check
    return checks


def test_t4_capture_all_pass_with_gpu_components():
    gpu_facts = nvidia_smi.parse_xml(read("nvidia-smi/q-x-tesla-t4-515.xml"))
    checks = well_formed(rules.judge_dcgm_diag("node01", t4_facts(), gpu_facts=gpu_facts))
    t4 = u"GPU 0 (GPU-d37e67a5\u2026, 0000:00:1E.0)"
    assert brief(checks) == [
        ("dcgm.software.result", "all GPUs", "pass", "none"),
        ("dcgm.pcie.result", t4, "pass", "none"),
        ("dcgm.memory.result", t4, "pass", "none"),
        ("dcgm.diagnostic.result", t4, "pass", "none"),
        ("dcgm.eud.result", t4, "skip", "none"),
        ("dcgm.targeted_stress.result", t4, "pass", "none"),
        ("dcgm.targeted_power.result", t4, "pass", "none"),
        ("dcgm.memory_bandwidth.result", t4, "pass", "none"),
    ]
    assert checks[0]["message"] == "all GPUs passed the DCGM software checks (9 tests)"
    assert checks[0]["evidence"] == (
        "dcgmi diag -r 3: Denylist=Pass, NVML Library=Pass, CUDA Main Library=Pass, Permissions and OS Blocks=Pass, "
        "Persistence Mode=Pass, Environment Variables=Pass, Page Retirement/Row Remap=Pass, Graphics Processes=Pass, "
        "Inforom=Pass")
    assert checks[2]["message"] == "GPU 0 passed the DCGM memory test"
    assert checks[2]["evidence"] == "dcgmi diag -r 3: GPU Memory GPU 0=Pass; info: GPU 0 Allocated 15206918958 bytes (97.3%)"
    assert checks[4]["message"] == "The DCGM eud test did not run on GPU 0 (status Skip)"
    assert all(c["host"] == "node01" and c["expected"] == "Pass" for c in checks)


def test_without_gpu_facts_the_component_is_the_dcgm_id():
    assert rules.judge_dcgm_diag("n", t4_facts())[1]["component"] == "GPU 0"


@pytest.mark.parametrize("name, status, check_id, expected, remedy", [
    ("GPU Memory", "Fail", "dcgm.memory.result", "fail", "reset_gpu"),
    ("GPU Memory", "Warn", "dcgm.memory.result", "warn", "reset_gpu"),
    ("PCIe", "Fail", "dcgm.pcie.result", "fail", "reseat"),
    ("Diagnostic", "Fail", "dcgm.diagnostic.result", "fail", "investigate"),
    ("Targeted Stress", "Fail", "dcgm.targeted_stress.result", "fail", "investigate"),
    ("Targeted Power", "Warn", "dcgm.targeted_power.result", "warn", "investigate"),
    ("Memory Bandwidth", "Fail", "dcgm.memory_bandwidth.result", "fail", "investigate"),
    ("EUD Test", "Fail", "dcgm.eud.result", "fail", "investigate"),
    ("PCIe", "Skip", "dcgm.pcie.result", "skip", "none"),
    ("PCIe", "Not Run", "dcgm.pcie.result", "skip", "none"),
    ("PCIe", "Pass", "dcgm.pcie.result", "pass", "none"),
    ("PCIe", "Bogus", "dcgm.pcie.result", "error", "investigate"),
])
def test_status_and_remedy_per_test(name, status, check_id, expected, remedy):
    checks = well_formed(rules.judge_dcgm_diag("n", t4_facts(set_result(name, status))))
    [check] = [c for c in checks if c["id"] == check_id]
    assert (check["status"], check["remedy"], check["observed"]) == (expected, remedy, status)
    baseline = dict((c["id"], c["status"]) for c in rules.judge_dcgm_diag("n", t4_facts()))
    assert [c["status"] for c in checks if c["id"] != check_id] == [s for i, s in baseline.items() if i != check_id]


def test_failed_memory_message_and_evidence():
    facts = t4_facts(set_result("GPU Memory", "Fail", "Found 3 faulty memory elements on GPU 0"))
    [check] = [c for c in rules.judge_dcgm_diag("node02", facts) if c["id"] == "dcgm.memory.result"]
    assert check["message"] == (
        "GPU 0 failed the DCGM memory test: Found 3 faulty memory elements on GPU 0; drain the node, reset the GPU and "
        "rerun the diagnostic; RMA the GPU if the memory test fails again")
    assert check["evidence"] == ("dcgmi diag -r 3: GPU Memory GPU 0=Fail; warnings: Found 3 faulty memory elements on "
                                 "GPU 0; info: GPU 0 Allocated 15206918958 bytes (97.3%)")


def test_warn_is_fail_threshold():
    facts = t4_facts(set_result("Targeted Power", "Warn"))
    [check] = [c for c in rules.judge_dcgm_diag("n", facts, thresholds={"dcgm_warn_is_fail": True})
               if c["id"] == "dcgm.targeted_power.result"]
    assert (check["status"], check["observed"]) == ("fail", "Warn")
    assert check["message"].startswith("GPU 0 raised a warning in the DCGM targeted_power test; the GPU did not reach")


@pytest.mark.parametrize("edits, remedy, reason", [
    ([("Persistence Mode", "Fail", "Persistence mode for GPU 0 is disabled.")], "tune",
     "(9 tests): Persistence mode for GPU 0 is disabled.;"),
    ([("Page Retirement/Row Remap", "Fail", None)], "reset_gpu", " (Page Retirement/Row Remap=Fail);"),
    ([("Denylist", "Fail", "Found driver on the denylist: nouveau")], "update_firmware",
     ": Denylist: Found driver on the denylist: nouveau;"),
    ([("Inforom", "Warn", "A corrupt InfoROM has been detected in GPU 0.")], "update_firmware",
     ": Inforom: A corrupt InfoROM has been detected in GPU 0.;"),
    ([("Environment Variables", "Fail", "Found CUDA performance-limiting environment variable 'CUDA_LAUNCH_BLOCKING'.")],
     "tune", ": Environment Variables: Found CUDA performance-limiting environment variable 'CUDA_LAUNCH_BLOCKING'.;"),
    ([("Persistence Mode", "Fail", "Persistence mode for GPU 0 is disabled."),
      ("Page Retirement/Row Remap", "Fail", "GPU 0 had memory errors and row remappings are pending")], "reset_gpu",
     "(9 tests): Persistence mode for GPU 0 is disabled. (and 1 more);"),
])
def test_software_checks_fold_and_pick_the_remedy(edits, remedy, reason):
    def edit(doc):
        for name, status, warning in edits:
            set_result(name, status, warning)(doc)
    [check] = [c for c in well_formed(rules.judge_dcgm_diag("n", t4_facts(edit))) if c["id"] == "dcgm.software.result"]
    status = "fail" if any(e[1] == "Fail" for e in edits) else "warn"
    assert (check["status"], check["remedy"], check["component"]) == (status, remedy, "all GPUs")
    assert reason in check["message"]


def test_dcgm4_software_failure_gb10():
    checks = well_formed(rules.judge_dcgm_diag("spark", dcgm.parse_diag(read(GB10_ALLOWED), level=2)))
    assert brief(checks) == [("dcgm.software.result", "GPU 0", "fail", "tune"),
                             ("dcgm.memory.result", "GPU 0", "pass", "none"),
                             ("dcgm.pcie.result", "GPU 0", "pass", "none")]
    assert checks[0]["message"] == (
        "GPU 0 failed the DCGM software test: Persistence Mode: Persistence mode for GPU 0 is disabled. Enable "
        "persistence mode by running \"nvidia-smi -i <gpuId> -pm 1 \" as root. (DCGM error 29); enable persistence "
        "mode (the nvidia-persistenced service, or nvidia-smi -pm 1)")
    assert checks[0]["evidence"] == (
        "dcgmi diag -r 2 (DCGM 4.5.2): software GPU 0=Fail; warnings: Persistence Mode: Persistence mode for GPU 0 is "
        "disabled. Enable persistence mode by running \"nvidia-smi -i <gpuId> -pm 1 \" as root. (DCGM error 29); "
        "info: Error getting the SRAM Threshold Count for GPU 0. Status = 0. Value = 9223372036854775794. SRAM "
        "Threshold checking was skipped.")


def test_dcgm4_gated_plugins_are_skips():
    checks = rules.judge_dcgm_diag("spark", dcgm.parse_diag(read(GB10_GATED), level=2))
    assert [(c["id"], c["status"]) for c in checks] == [
        ("dcgm.software.result", "fail"), ("dcgm.memory.result", "skip"), ("dcgm.pcie.result", "skip")]


def test_one_check_per_gpu():
    """Edit: the per-GPU results replicated for GPUs 0..3 (as the lab does); GPU 2's memory result fails."""
    def edit(doc):
        for category in doc["DCGM GPU Diagnostic"]["test_categories"]:
            for test in category["tests"]:
                if "gpu_ids" in test["results"][0]:
                    test["results"] = [dict(test["results"][0], gpu_ids=str(i)) for i in range(4)]
        set_result("GPU Memory", "Fail", "A memory mismatch was detected on GPU 2, but no error was reported by CUDA or "
                                         "NVML.", index=2)(doc)
    checks = rules.judge_dcgm_diag("n", t4_facts(edit))
    memory = [(c["component"], c["status"]) for c in checks if c["id"] == "dcgm.memory.result"]
    assert memory == [("GPU 0", "pass"), ("GPU 1", "pass"), ("GPU 2", "fail"), ("GPU 3", "pass")]
    assert len(checks) == 1 + 7 * 4


@pytest.mark.parametrize("facts", [None, {}, {"tests": []}, "garbage"])
def test_no_results_is_an_error(facts):
    [check] = well_formed(rules.judge_dcgm_diag("n", facts))
    assert (check["id"], check["status"], check["remedy"]) == ("dcgm.diag.tests", "error", "investigate")
    assert check["message"] == "dcgmi diag returned no test results, so no GPU was judged; read the raw output"


def test_no_results_on_a_gpu_in_mig_mode_is_a_skip_with_the_reason():
    # the real A100 capture is in MIG mode (4 MIG devices); its minor number makes it GPU 1
    gpu_facts = nvidia_smi.parse_xml(read("nvidia-smi/q-x-a100-sxm4-80gb-mig-535.xml"))
    [check] = well_formed(rules.judge_dcgm_diag("n", {"tests": []}, gpu_facts=gpu_facts))
    assert (check["id"], check["status"], check["observed"]) == ("dcgm.diag.tests", "skip", "MIG mode")
    assert check["message"].startswith("dcgmi diag returned no test results and GPU 1 is in MIG mode, which the DCGM "
                                       "diagnostic does not test as a whole GPU: disable MIG")
    # the same GPU with MIG off: no result is an error again
    gpu_facts["gpus"][0]["mig_mode"] = {"current": "Disabled", "pending": "Disabled"}
    [check] = rules.judge_dcgm_diag("n", {"tests": []}, gpu_facts=gpu_facts)
    assert check["status"] == "error"


def test_diag_summary():
    assert rules.summarize_dcgm_diag(dcgm.parse_diag(read(GB10_ALLOWED), level=2)) == {
        "level": 2, "version": "4.5.2", "overall": "Fail", "tests": ["software", "memory", "pcie"],
        "failed": ["software"], "gpus": 1}
    assert rules.summarize_dcgm_diag(t4_facts())["tests"] == [
        "software", "pcie", "memory", "diagnostic", "eud", "targeted_stress", "targeted_power", "memory_bandwidth"]


# --------------------------------------------------------------------------------------------- health

def health(overall, incidents):
    """The healthy capture with Overall Health edited and GPU sections in dcgmi's box layout (see test_dcgm_parse)."""
    doc = json.loads(read(HEALTHY))
    doc["body"]["Overall Health"]["value"] = overall
    children = {}
    for gpu, system, value, message in incidents:
        entity = children.setdefault(str(gpu), {"children": {"Errors": {"children": {}}}, "value": value})
        entity["children"]["Errors"]["children"][system] = {"overflow": [message], "value": value}
    if children:
        doc["body"]["GPU"] = {"children": children}
    return dcgm_health.parse_health(json.dumps(doc))


def test_healthy():
    checks = well_formed(rules.judge_dcgm_health("n", dcgm_health.parse_health(read(HEALTHY))))
    assert brief(checks) == [("dcgm.health.overall", "GPUs", "pass", "none")]
    assert checks[0]["message"] == "DCGM health watches report the GPUs healthy"
    assert checks[0]["evidence"] == "dcgmi health -c: Overall Health=Healthy; 0 incident(s)"


def test_failing_health_per_system():
    gpu_facts = nvidia_smi.parse_xml(read("nvidia-smi/q-x-tesla-t4-515.xml"))
    facts = health("Failure", [
        (0, "Memory system", "Failure", "Detected 2 volatile double-bit ECC error(s) in GPU 0."),
        (1, "PCIe system", "Warning", "Detected more than 8 PCIe replays per minute for GPU 1 : 13"),
        (1, "NVLINK system", "Warning", "GPU 1's NvLink link 3 is currently down"),
        (1, "Thermal system", "Warning", "Detected clock throttling due to thermal violation in GPU 1."),
        (1, "Power system", "Warning", "Detected clock throttling due to power violation in GPU 1."),
        (1, "InfoROM system", "Warning", "A corrupt InfoROM has been detected in GPU 1."),
        (1, "SM system", "Warning", "Detected XID 13 for GPU 1"),
    ])
    checks = well_formed(rules.judge_dcgm_health("n", facts, gpu_facts=gpu_facts))
    assert brief(checks) == [
        ("dcgm.health.overall", "GPUs", "fail", "reset_gpu"),
        ("dcgm.health.memory", u"GPU 0 (GPU-d37e67a5\u2026, 0000:00:1E.0)", "fail", "reset_gpu"),
        ("dcgm.health.pcie", "GPU 1", "warn", "reseat"),
        ("dcgm.health.nvlink", "GPU 1", "warn", "investigate"),
        ("dcgm.health.thermal", "GPU 1", "warn", "investigate"),
        ("dcgm.health.power", "GPU 1", "warn", "investigate"),
        ("dcgm.health.inforom", "GPU 1", "warn", "update_firmware"),
        ("dcgm.health.sm", "GPU 1", "warn", "investigate"),
    ]
    assert checks[1]["message"] == ("DCGM health watch reports Failure for the Memory system of GPU 0: Detected 2 "
                                    "volatile double-bit ECC error(s) in GPU 0.; drain the GPU and reset it, or reboot "
                                    "the node")
    assert checks[1]["evidence"] == ("dcgmi health -c: GPU 0 Memory system=Failure: Detected 2 volatile double-bit ECC "
                                     "error(s) in GPU 0.")
    assert checks[0]["message"] == "DCGM health watches report Failure overall; see the dcgm.health checks per GPU"


def test_warning_overall_without_detail_and_unknown_health():
    [check] = well_formed(rules.judge_dcgm_health("n", health("Warning", [])))
    assert (check["status"], check["remedy"]) == ("warn", "investigate")
    assert check["message"] == "DCGM health watches report Warning overall with no incident detail"
    checks = well_formed(rules.judge_dcgm_health("n", health("Internal error", [(2, "Driver", "Odd", "x")])))
    assert brief(checks) == [("dcgm.health.overall", "GPUs", "error", "investigate"),
                             ("dcgm.health.driver", "GPU 2", "error", "investigate")]


def test_no_health_facts():
    [check] = well_formed(rules.judge_dcgm_health("n", None))
    assert (check["id"], check["status"]) == ("dcgm.health.overall", "error")


def test_health_summary():
    facts = health("Warning", [(1, "PCIe system", "Warning", "Detected more than 8 PCIe replays per minute for GPU 1 : 13")])
    assert rules.summarize_dcgm_health(facts) == {"overall": "Warning", "incidents": 1, "systems": ["pcie"]}
