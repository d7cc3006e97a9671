# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""dcgmi diag / health JSON parsers against the real captures in tests/fixtures/dcgm (see PROVENANCE.md).

Real captures: ``dcgmi-diag-r3-j-tesla-t4-pass.json`` (DCGM 2.x/3.x shape, 1x T4, all Pass, EUD Skip),
``dcgmi-diag-r2-j-gb10-4.5.2-plugins-{allowed,gated}.json`` (DCGM 4.5.2 shape, GB10, software Fail on persistence
mode), ``dcgmi-health-c-j-healthy.json``. Failing variants are made by editing values of these documents in memory;
each test says what it edits. The failing health variants add the GPU section in the layout dcgmi's own writer
produces (NVIDIA/DCGM dcgmi/Health.cpp + DcgmiOutput.h: ``children`` / ``value`` / ``overflow`` boxes) with
messages from DCGM's error templates (dcgmlib/dcgm_errors.h), since no real failing health capture exists.
"""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError, ToolFailed
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import dcgm, dcgm_health

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "fixtures", "dcgm")
T4 = "dcgmi-diag-r3-j-tesla-t4-pass.json"
GB10_ALLOWED = "dcgmi-diag-r2-j-gb10-4.5.2-plugins-allowed.json"
GB10_GATED = "dcgmi-diag-r2-j-gb10-4.5.2-plugins-gated.json"
HEALTHY = "dcgmi-health-c-j-healthy.json"
NO_HOST_ENGINE = ("Error: unable to establish a connection to the specified host: localhost\n"
                  "Error: Unable to connect to host engine. Host engine connection invalid/disconnected.\n")
PERSISTENCE = ("Persistence Mode: Persistence mode for GPU 0 is disabled. Enable persistence mode by running "
               "\"nvidia-smi -i <gpuId> -pm 1 \" as root.")
SRAM = ("Error getting the SRAM Threshold Count for GPU 0. Status = 0. Value = 9223372036854775794. "
        "SRAM Threshold checking was skipped.")


def read(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        return handle.read()


def edited(name, edit):
    """The capture with ``edit(doc)`` applied to its parsed JSON, printed again as JSON."""
    doc = json.loads(read(name))
    edit(doc)
    return json.dumps(doc, indent="\t")


def find_test(doc, name):
    root = doc.get("DCGM GPU Diagnostic") or doc["DCGM Diagnostic"]
    for category in root["test_categories"]:
        for test in category["tests"]:
            if test["name"] == name:
                return test
    raise KeyError(name)


def by_name(facts):
    return dict((test["name"], test) for test in facts["tests"])


# ------------------------------------------------------------------------------------------ real captures

def test_t4_r3_capture():
    facts = dcgm.parse_diag(read(T4), level=3)
    assert (facts["level"], facts["schema"], facts["version"], facts["driver_version"], facts["overall"]) == (
        3, "2.x/3.x", None, None, "Pass")
    assert [(t["category"], t["name"], t["slug"]) for t in facts["tests"]] == [
        ("Deployment", "Denylist", "software"),
        ("Deployment", "NVML Library", "software"),
        ("Deployment", "CUDA Main Library", "software"),
        ("Deployment", "Permissions and OS Blocks", "software"),
        ("Deployment", "Persistence Mode", "software"),
        ("Deployment", "Environment Variables", "software"),
        ("Deployment", "Page Retirement/Row Remap", "software"),
        ("Deployment", "Graphics Processes", "software"),
        ("Deployment", "Inforom", "software"),
        ("Integration", "PCIe", "pcie"),
        ("Hardware", "GPU Memory", "memory"),
        ("Hardware", "Diagnostic", "diagnostic"),
        ("Hardware", "EUD Test", "eud"),
        ("Stress", "Targeted Stress", "targeted_stress"),
        ("Stress", "Targeted Power", "targeted_power"),
        ("Stress", "Memory Bandwidth", "memory_bandwidth"),
    ]
    # Deployment results carry no gpu_ids: one result for all GPUs.
    for test in facts["tests"][:9]:
        assert test["results"] == [{"gpu": None, "entity": None, "status": "Pass", "warnings": [], "info": []}]
        assert test["summary"] is None
    tests = by_name(facts)
    assert [(t, tests[t]["results"][0]["gpu"], tests[t]["results"][0]["status"]) for t in (
        "PCIe", "GPU Memory", "Diagnostic", "EUD Test", "Targeted Stress", "Targeted Power", "Memory Bandwidth")] == [
        ("PCIe", 0, "Pass"), ("GPU Memory", 0, "Pass"), ("Diagnostic", 0, "Pass"), ("EUD Test", 0, "Skip"),
        ("Targeted Stress", 0, "Pass"), ("Targeted Power", 0, "Pass"), ("Memory Bandwidth", 0, "Pass")]
    assert tests["GPU Memory"]["results"][0] == {
        "gpu": 0, "entity": "GPU 0", "status": "Pass", "warnings": [],
        "info": ["GPU 0 Allocated 15206918958 bytes (97.3%)"]}
    assert tests["Targeted Power"]["results"][0]["info"] == ["GPU 0 GPU 0 power average:\t70 W"]
    assert tests["EUD Test"]["results"][0]["info"] == []
    assert facts["entities"] == [] and facts["messages"] == []


def test_gb10_dcgm4_capture():
    facts = dcgm.parse_diag(read(GB10_ALLOWED), level=2)
    assert (facts["schema"], facts["version"], facts["driver_version"], facts["overall"]) == (
        "4.x", "4.5.2", "580.82.09", "Fail")
    assert [(t["category"], t["name"], t["slug"]) for t in facts["tests"]] == [
        ("Deployment", "software", "software"), ("Hardware", "memory", "memory"), ("Integration", "pcie", "pcie")]
    software, memory, pcie = facts["tests"]
    persistence = {"text": PERSISTENCE, "error_id": 29, "category": 8, "severity": 5}
    assert software["results"] == [
        {"gpu": 0, "entity": "GPU 0", "status": "Fail", "warnings": [persistence], "info": []}]
    assert software["summary"] == {
        "gpu": None, "entity": None, "status": "Fail", "warnings": [persistence], "info": [SRAM]}
    assert memory["results"][0]["info"] == ["Allocated 112427837082 bytes (87.5%)"]
    assert memory["summary"]["status"] == "Pass"
    assert pcie["results"][0]["info"] == [
        "GPU to Host bandwidth:\t\t58.62 GB/s", "Host to GPU bandwidth:\t\t58.88 GB/s",
        "bidirectional bandwidth:\t58.69 GB/s", "GPU to Host latency:\t\t1.563 us",
        "Host to GPU latency:\t\t1.740 us", "bidirectional latency:\t\t3.078 us"]
    assert facts["entities"] == [{"gpu": 0, "device_id": "2e12", "serial": None}]


def test_gb10_gated_capture_skips():
    facts = dcgm.parse_diag(read(GB10_GATED), level=2)
    assert [(t["name"], [r["status"] for r in t["results"]], t["summary"]["status"]) for t in facts["tests"]] == [
        ("software", ["Fail"], "Fail"), ("memory", ["Skip"], "Skip"), ("pcie", ["Skip"], "Skip")]
    assert facts["overall"] == "Fail"


# ------------------------------------------------------------------------------------- edited variants

def test_t4_with_failing_memory_test():
    """Edit: GPU Memory's status Pass -> Fail and a warning string, as dcgmi 2.x/3.x prints one."""
    def edit(doc):
        result = find_test(doc, "GPU Memory")["results"][0]
        result["status"] = "Fail"
        result["warnings"] = "Found 3 faulty memory elements on GPU 0"
    facts = dcgm.parse_diag(edited(T4, edit), level=3)
    assert facts["overall"] == "Fail"
    assert by_name(facts)["GPU Memory"]["results"][0]["warnings"] == [
        {"text": "Found 3 faulty memory elements on GPU 0", "error_id": None, "category": None, "severity": None}]


@pytest.mark.parametrize("word, status, overall", [
    ("PASS", "Pass", "Pass"), ("FAIL", "Fail", "Fail"), ("WARN", "Warn", "Warn"), ("Warn", "Warn", "Warn"),
    ("SKIPPED", "Skip", "Pass"), ("Not Run", "Not Run", "Pass"), ("not_run", "Not Run", "Pass"),
])
def test_status_words(word, status, overall):
    """Edit: the PCIe result's status (NVVS documents PASS|FAIL|WARN|SKIPPED; dcgmi prints Pass/Fail/Warn/Skip)."""
    facts = dcgm.parse_diag(edited(T4, lambda doc: find_test(doc, "PCIe")["results"][0].update(status=word)))
    assert by_name(facts)["PCIe"]["results"][0]["status"] == status
    assert facts["overall"] == overall


def test_unknown_status_is_kept_and_reported():
    messages = []
    facts = dcgm.parse_diag(edited(T4, lambda doc: find_test(doc, "PCIe")["results"][0].update(status="Bogus")),
                            warn=messages.append)
    assert by_name(facts)["PCIe"]["results"][0]["status"] == "Bogus"
    assert facts["overall"] == "Unknown"
    assert messages == ["dcgmi diag: unknown status 'Bogus' in test 'PCIe'; please report"]


def test_everything_skipped_is_skip_and_nothing_is_none():
    def skip_all(doc):
        for category in doc["DCGM GPU Diagnostic"]["test_categories"]:
            for test in category["tests"]:
                for result in test["results"]:
                    result["status"] = "Skip"
    assert dcgm.parse_diag(edited(T4, skip_all))["overall"] == "Skip"
    assert dcgm.parse_diag('{"DCGM GPU Diagnostic": {"test_categories": []}}')["overall"] is None


def test_gpu_id_list_nvvs_warnings_and_null_entries():
    """Edits: a Deployment result with gpu_ids "0,1,2,3" (NVVS's CSV form) and NVVS's warning objects; a null test
    entry as in DCGM's own 'Deserialize real output' test (dcgmlib tests)."""
    def edit(doc):
        denylist = find_test(doc, "Denylist")["results"][0]
        warning = {"warning": "Found driver on the denylist: nouveau", "error_id": 22}
        denylist.update(gpu_ids="0,1,2,3", status="FAIL", warnings=[warning])
        doc["DCGM GPU Diagnostic"]["test_categories"][0]["tests"].insert(1, None)
    facts = dcgm.parse_diag(edited(T4, edit))
    assert len(facts["tests"]) == 16
    assert facts["tests"][0]["results"] == [{
        "gpu": None, "entity": "GPUs 0,1,2,3", "status": "Fail",
        "warnings": [{"text": "Found driver on the denylist: nouveau", "error_id": 22, "category": None, "severity": None}],
        "info": []}]


def test_gb10_with_failing_memory_result():
    """Edit (4.x shape): memory's result and test_summary -> Fail with a warning object like the real software one."""
    warning = {"error_category": 2, "error_id": 58, "error_severity": 2,
               "warning": "A memory mismatch was detected on GPU 0, but no error was reported by CUDA or NVML."}

    def edit(doc):
        test = find_test(doc, "memory")
        test["results"][0].update(status="Fail", warnings=[warning])
        test["test_summary"].update(status="Fail", warnings=[warning])
    memory = by_name(dcgm.parse_diag(edited(GB10_ALLOWED, edit)))["memory"]
    assert memory["results"][0]["status"] == "Fail"
    assert memory["results"][0]["warnings"] == [{"text": warning["warning"], "error_id": 58, "category": 2, "severity": 2}]
    assert memory["results"][0]["info"] == ["Allocated 112427837082 bytes (87.5%)"]


def test_non_gpu_entity():
    """Edit (4.x shape): a result of a CPU entity (entity_group "CPU", as cpu_eud reports) is not a GPU."""
    def edit(doc):
        find_test(doc, "pcie")["results"][0].update(entity_group="CPU", entity_group_id=7, entity_id=0)
    result = by_name(dcgm.parse_diag(edited(GB10_ALLOWED, edit)))["pcie"]["results"][0]
    assert (result["gpu"], result["entity"]) == (None, "CPU 0")


def test_banner_around_the_document():
    messages = []
    facts = dcgm.parse_diag("Successfully ran diagnostic for group.\n" + read(T4), warn=messages.append)
    assert facts["overall"] == "Pass" and facts["messages"] == ["Successfully ran diagnostic for group."]
    assert messages == ["dcgmi diag: text outside the JSON document: 'Successfully ran diagnostic for group.'"]


def test_runtime_error_is_a_tool_failure():
    """Edit (4.x shape): runtime_error instead of the tests (a property of NVIDIA's dcgm_diag_schema.json)."""
    def edit(doc):
        doc["DCGM Diagnostic"] = {"runtime_error": "Unable to run diagnostic on unsupported GPU 0."}
    with pytest.raises(ToolFailed) as info:
        dcgm.parse_diag(edited(GB10_ALLOWED, edit))
    assert str(info.value) == "dcgmi: the diagnostic could not run: Unable to run diagnostic on unsupported GPU 0."


# ----------------------------------------------------------------------------------------- bad output

@pytest.mark.parametrize("text, error, message", [
    ("", ParseError, "dcgmi: no output; expected the JSON document of `dcgmi diag -j`"),
    ("   \n", ParseError, "dcgmi: no output; expected the JSON document of `dcgmi diag -j`"),
    (NO_HOST_ENGINE, ToolFailed,
     "dcgmi: Error: unable to establish a connection to the specified host: localhost; "
     "Error: Unable to connect to host engine. Host engine connection invalid/disconnected."),
    ("Running level 3 diagnostics\n", ParseError,
     "dcgmi: the output of `dcgmi diag -j` is not JSON: 'Running level 3 diagnostics'"),
    ("[1, 2]\n", ParseError, "dcgmi: the output of `dcgmi diag -j` is not JSON: '[1, 2]'"),
    ('{"DCGM GPU Diagnostic": []}', ParseError,
     "dcgmi: 'DCGM GPU Diagnostic' in the JSON of `dcgmi diag -j` is not an object"),
    ('{"DCGM GPU Diagnostic": {"version": "1.7"}}', ParseError,
     "dcgmi: 'DCGM GPU Diagnostic' in the JSON of `dcgmi diag -j` has no 'test_categories' list"),
    ("{}", ParseError,
     "dcgmi: the JSON of `dcgmi diag -j` has no 'DCGM GPU Diagnostic' or 'DCGM Diagnostic' object (keys: none)"),
])
def test_bad_diag_output(text, error, message):
    with pytest.raises(error) as info:
        dcgm.parse_diag(text)
    assert str(info.value) == message
    assert info.value.tool == "dcgmi"


def test_health_document_is_not_a_diag_document():
    with pytest.raises(ParseError) as info:
        dcgm.parse_diag(read(HEALTHY))
    assert str(info.value) == ("dcgmi: the JSON of `dcgmi diag -j` has no 'DCGM GPU Diagnostic' or 'DCGM Diagnostic' "
                               "object (keys: body, header)")


def test_truncated_diag_output():
    text = read(T4)[:1500]
    with pytest.raises(ParseError) as info:
        dcgm.parse_diag(text)
    assert str(info.value) == ("dcgmi: the JSON document of `dcgmi diag -j` is incomplete or invalid "
                               "(Unterminated string starting at: line 103 column 18 (char 1457))")


# --------------------------------------------------------------------------------------------- health

def failing_health(overall, sections):
    """The healthy capture with Overall Health edited and the per-entity sections dcgmi adds for incidents."""
    doc = json.loads(read(HEALTHY))
    doc["body"]["Overall Health"]["value"] = overall
    doc["body"].update(sections)
    return json.dumps(doc, indent="\t")


def gpu_section(entries):
    """``{gpu id: (entity health, {system: (health, [overflow pieces])})}`` -> dcgmi's box tree."""
    children = {}
    for gpu, (health, systems) in entries.items():
        errors = dict((system, {"overflow": pieces, "value": value}) for system, (value, pieces) in systems.items())
        children[str(gpu)] = {"children": {"Errors": {"children": errors}}, "value": health}
    return {"GPU": {"children": children}}


def test_healthy_capture():
    facts = dcgm_health.parse_health(read(HEALTHY))
    assert facts == {"overall": "Healthy", "entities": [], "incidents": [], "header": ["Health Monitor Report"],
                     "messages": []}


def test_failing_health_with_incidents():
    text = failing_health("Failure", gpu_section({
        0: ("Failure", {"Memory system": ("Failure", ["Detected 2 volatile double-bit ECC error(s) in GPU 0."])}),
        1: ("Warning", {"PCIe system": ("Warning", ["Detected more than 8 PCIe replays per minute for GPU", "1 : 13"]),
                        "Thermal system": ("Warning", ["Detected clock throttling due to thermal violation in GPU 1."])}),
    }))
    facts = dcgm_health.parse_health(text)
    assert facts["overall"] == "Failure"
    assert facts["entities"] == [{"entity": "GPU 0", "gpu": 0, "health": "Failure"},
                                 {"entity": "GPU 1", "gpu": 1, "health": "Warning"}]
    assert facts["incidents"] == [
        {"entity": "GPU 0", "gpu": 0, "system": "memory", "system_name": "Memory system", "health": "Failure",
         "message": "Detected 2 volatile double-bit ECC error(s) in GPU 0."},
        {"entity": "GPU 1", "gpu": 1, "system": "pcie", "system_name": "PCIe system", "health": "Warning",
         "message": "Detected more than 8 PCIe replays per minute for GPU 1 : 13"},
        {"entity": "GPU 1", "gpu": 1, "system": "thermal", "system_name": "Thermal system", "health": "Warning",
         "message": "Detected clock throttling due to thermal violation in GPU 1."},
    ]


def test_health_warning_overall_and_unknown_words():
    messages = []
    text = failing_health("Warning", gpu_section({3: ("Degraded", {"NvSwitch F": ("Degraded", [])})}))
    facts = dcgm_health.parse_health(text, warn=messages.append)
    assert facts["overall"] == "Warning"
    assert facts["incidents"] == [{"entity": "GPU 3", "gpu": 3, "system": "nvswitch_f", "system_name": "NvSwitch F",
                                   "health": "Degraded", "message": ""}]
    assert messages == ["dcgmi health: unknown health value 'Degraded' in GPU 3; please report",
                        "dcgmi health: unknown health value 'Degraded' in GPU 3 NvSwitch F; please report"]


@pytest.mark.parametrize("text, error, message", [
    ("Error: Health watches not enabled. Please enable watches. \n", ToolFailed,
     "dcgmi: Error: Health watches not enabled. Please enable watches."),
    ("", ParseError, "dcgmi: no output; expected the JSON document of `dcgmi health -c -j`"),
    ('{"header": ["Health Monitor Report"]}', ParseError, "dcgmi: the JSON of `dcgmi health -c -j` has no 'body' object"),
    ('{"body": {}}', ParseError, "dcgmi: the JSON of `dcgmi health -c -j` has no 'Overall Health' value"),
])
def test_bad_health_output(text, error, message):
    with pytest.raises(error) as info:
        dcgm_health.parse_health(text)
    assert str(info.value) == message


def test_truncated_health_output():
    with pytest.raises(ParseError) as info:
        dcgm_health.parse_health(read(HEALTHY)[:60])
    assert str(info.value).startswith("dcgmi: the JSON document of `dcgmi health -c -j` is incomplete or invalid (")


def test_slugs():
    assert [dcgm.test_slug(name) for name in ("GPU Memory", "Targeted Stress", "memory_bandwidth", "New Plugin 2")] == [
        "memory", "targeted_stress", "memory_bandwidth", "new_plugin_2"]
    assert dcgm.test_slug("Inforom", "Deployment") == "software"
