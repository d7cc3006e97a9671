# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Issue 12 on the GPU side: other projects' real captures (format variants), odd values read as unreadable, and empty
or garbage output never judged healthy. Every capture is a real one (tests/fixtures/PROVENANCE.md); fault states are
edits of real captures."""

from __future__ import annotations

import math
import os
import stat

import pytest
from fuzzing import CollectModule

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import dcgm, nvidia_smi, nvlink, xid, xid_collect
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import dcgm as dcgm_rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import gpu as gpu_rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import nccl as nccl_rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._util import clean_facts, fmt, to_number
from ansible_collections.zhisuan.ops.plugins.module_utils._judge.xid import judge_xid
from ansible_collections.zhisuan.ops.plugins.module_utils._net import nccl
from ansible_collections.zhisuan.ops.plugins.plugin_utils._profiles import load_profiles
from ansible_collections.zhisuan.ops.plugins.plugin_utils._xid_catalog import load_catalog

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures")
PROFILES = load_profiles()


def read(relpath):
    with open(os.path.join(FIXTURES, relpath), "rb") as handle:
        return handle.read().decode("utf-8")


def by_id(checks):
    return dict((check["id"], check) for check in checks)


def gpu_facts(text, parser=nvidia_smi.parse, warn=None):
    facts = nvlink.attach(parser(text, warn=warn), [])
    facts["nvlink_error"] = None
    return facts


# ------------------------------------------------------------------------------- nccl-tests: blank redop column

ALLTOALL = "nccl-tests/alltoall_perf-1node-8xA100-40GB-blank-redop.log"


def test_alltoall_with_a_blank_redop_column_is_read():
    warnings = []
    facts = nccl.parse(read(ALLTOALL), op="alltoall_perf", warn=warnings.append)
    assert warnings == []
    assert facts["columns"][:4] == ["size", "count", "type", "redop"]
    assert len(facts["points"]) == 34
    first, last = facts["points"][5], facts["points"][-1]
    assert (first["bytes"], first["count"], first["type"], first["redop"]) == (32, 1, "float", None)
    assert last["bytes"] == 8589934592 and last["count"] == 268435456
    assert last["out_of_place"] == {"time_us": 33508.0, "algbw": 256.36, "busbw": 224.31, "error": None}
    assert last["in_place"] == {"time_us": 33234.0, "algbw": 258.47, "busbw": 226.16, "error": None}
    assert facts["avg_busbw"] == 58.6481
    assert (facts["out_of_bounds"], facts["out_of_bounds_ok"]) == (0, True)
    assert facts["params"]["gpus_per_process"] == 8 and facts["params"]["max_bytes"] == 8589934592
    assert [device["name"] for device in facts["devices"]] == ["A100-SXM4-40GB"] * 8
    assert nccl.point_busbw(last) == (224.31, "out_of_place")


def test_a_row_two_fields_short_is_still_skipped():
    text = read(ALLTOALL).replace("float           1189.1  225.75", "float           1189.1")
    warnings = []
    facts = nccl.parse(text, op="alltoall_perf", warn=warnings.append)
    assert len(facts["points"]) == 33
    assert "skipped a result line with 10 fields, the header has 12" in warnings[0]


@pytest.mark.parametrize("value, why", [
    ("1e29", "an implausible busbw '1e29'"),
    ("-5.00", "an implausible busbw '-5.00'"),
    ("nan", "a float value 'nan' that is not a number"),
    ("inf", "a float value 'inf' that is not a number"),
    ("\u0662\u0662\u0664.31", "a float value '\u0662\u0662\u0664.31' that is not a number"),
    ("224.3.1", "a float value '224.3.1' that is not a number"),
])
def test_an_absurd_bus_bandwidth_is_a_parse_error(value, why):
    text = read(ALLTOALL).replace("256.36  224.31", "256.36  %s" % value)
    with pytest.raises(ParseError) as caught:
        nccl.parse(text, op="alltoall_perf")
    assert why in caught.value.message and caught.value.tool == "nccl-tests"


def test_an_absurd_bus_bandwidth_in_facts_is_not_a_pass():
    facts = nccl.parse(read("nccl-tests/all_reduce_perf-1node-8xA100-40GB.log"), op="all_reduce_perf")
    for point in facts["points"]:
        point["out_of_place"]["busbw"] = point["in_place"]["busbw"] = 1e29
    checks = nccl_rules.judge_nccl("n1", facts, PROFILES["a100_40gb"])
    assert by_id(checks)["nccl.all_reduce_perf.busbw"]["status"] not in ("pass", "skip")
    assert clean_facts(facts)["points"][0]["out_of_place"]["busbw"] is None


# -------------------------------------------------------------------------- nvidia-smi -q -i: one of N GPUs

def test_text_of_an_id_selection_is_accepted_like_the_xml():
    warnings = []
    facts = gpu_facts(read("nvidia-smi/i0-q-h800x8-525.105.17.txt"), warn=warnings.append)
    assert warnings == []
    assert (facts["source"], facts["driver_version"], facts["cuda_version"], facts["attached_gpus"]) == (
        "text", "525.105.17", "12.0", 8)
    (gpu,) = facts["gpus"]
    assert (gpu["index"], gpu["name"], gpu["uuid"], gpu["pci_bus_id"]) == (
        0, "NVIDIA H800", "GPU-34bf77d1-c686-6821-79a8-32d326c5039c", "0000:18:00.0")
    assert gpu["temperature"]["gpu_c"] == 35 and gpu["temperature"]["tlimit_c"] == 51
    assert (gpu["power"]["draw_w"], gpu["power"]["limit_w"]) == (74.71, 700.0)
    assert (gpu["pcie"]["gen_current"], gpu["pcie"]["width_current"], gpu["pcie"]["width_max"]) == (5, 16, 16)
    assert (gpu["fabric"]["state"], gpu["fabric"]["status"]) == ("Completed", "Success")
    assert gpu["unreadable"] == []
    xml = nvidia_smi.parse_xml(read("nvidia-smi/q-x-a100-sxm4-80gb-mig-535.xml"))
    assert (xml["attached_gpus"], len(xml["gpus"])) == (4, 1)  # the XML form of the same selection


def test_a_selection_is_not_the_whole_node():
    facts = gpu_facts(read("nvidia-smi/i0-q-h800x8-525.105.17.txt"))
    check = by_id(gpu_rules.judge_gpu("n1", facts, PROFILES["h800"], expected={"gpu_count": 8}))["gpu.count.present"]
    assert (check["status"], check["observed"]) == ("fail", 1)


def test_a_selection_without_an_expected_count_is_a_warning_not_a_pass():
    facts = gpu_facts(read("nvidia-smi/i0-q-h800x8-525.105.17.txt"))
    check = by_id(gpu_rules.judge_gpu("n1", facts, None))["gpu.count.present"]
    assert (check["status"], check["observed"], check["expected"]) == ("warn", 1, "== 8")
    assert check["message"].startswith("nvidia-smi lists 1 of the 8 attached GPUs")


def test_a_selection_cut_inside_its_block_is_still_truncated():
    text = read("nvidia-smi/i0-q-h800x8-525.105.17.txt")
    with pytest.raises(ParseError, match="text output is truncated inside GPU block 00000000:18:00.0"):
        nvidia_smi.parse_text(text[:text.index("    Temperature")])


# --------------------------------------------------------------------------------- odd numbers are unreadable

A10 = "nvidia-smi/q-a10-535.129.03.txt"


@pytest.mark.parametrize("value", ["-16x", "9" * 400 + "x", "\u0661\u0666x", "1.2.3x", "nanx", "infx", "1e999x",
                                   "99x"])
def test_an_absurd_link_width_is_unreadable_not_a_pass(value):
    text = read(A10).replace("                Max                       : 16x", "                Max                       : " + value)
    assert text != read(A10)
    warnings = []
    facts = gpu_facts(text, warn=warnings.append)
    gpu = facts["gpus"][0]
    assert gpu["pcie"]["width_max"] is None and "pcie.width_max" in gpu["unreadable"]
    assert any("pcie.width_max" in warning for warning in warnings)
    checks = gpu_rules.judge_gpu("n1", facts, None)
    assert by_id(checks)["gpu.readout.unreadable"]["status"] != "pass"


def test_a_negative_tlimit_is_a_reading():
    text = read("nvidia-smi/i0-q-h800x8-525.105.17.txt").replace(
        "GPU T.Limit Temp                  : 51 C", "GPU T.Limit Temp                  : -3 C")
    gpu = gpu_facts(text)["gpus"][0]
    assert (gpu["temperature"]["tlimit_c"], gpu["unreadable"]) == (-3, [])


def test_infinite_facts_are_judged_unreadable():
    facts = gpu_facts(read(A10))
    facts["gpus"][0]["temperature"]["gpu_c"] = float("inf")
    facts["gpus"][0]["pcie"]["width_max"] = 10 ** 40
    facts["gpus"][0]["memory"] = "lots"
    checks = gpu_rules.judge_gpu("n1", facts, PROFILES["h100"])
    assert [check["status"] for check in checks] == ["error"]
    assert checks[0]["id"] == "gpu.facts.readable" and "unreadable" in checks[0]["message"]


class _Unprintable(object):
    def __str__(self):
        raise RuntimeError("no text")


def test_fmt_never_raises_and_to_number_refuses_non_numbers():
    assert [fmt(value) for value in (float("inf"), float("-inf"), float("nan"), 1e308, 10 ** 400, 2.5, 7.0)] == [
        "inf", "-inf", "NaN", "1e+308", "401 digits", "2.5", "7"]
    assert (fmt(-(10 ** 20)), fmt(12345), fmt(object.__new__(_Unprintable))[:8]) == ("-1e+20", "12345", "<test_gp")
    for bad in ("nan", "inf", "-Infinity", "1.2.3", "\u0663", "\uff11\uff12", "9" * 400, 1e308, float("nan"), True,
                None, "1,5"):
        with pytest.raises(ValueError):
            to_number(bad, "threshold x")
    assert [to_number(good, "x") for good in ("8", " 2.5 ", "-3", "1e3", 90, 0.5)] == [8, 2.5, -3, 1000.0, 90, 0.5]
    assert math.isfinite(to_number("1e15", "x"))


# ----------------------------------------------------------------------------------- drivers 590/595 fields

@pytest.mark.parametrize("relpath", ["nvidia-smi/excerpt-h100-80gb-hbm3-q-load.txt",
                                     "nvidia-smi/excerpt-h100-mig-q-load.txt", "nvidia-smi/excerpt-l40s-q-load.txt"])
def test_590_and_595_text_has_no_unknown_field(relpath):
    warnings = []
    facts = nvidia_smi.parse_text(read(relpath), warn=warnings.append)
    assert warnings == [] and facts["driver_version"] in ("590.48.01", "595.80")


def test_590_xml_fields_are_known_and_a_new_one_still_warns():
    text = read("nvidia-smi/q-x-a10g-515.xml")
    added = ("<pdi>0x4cc17b2978ffca4d</pdi><platformInfo><chassis_serial_number>N/A</chassis_serial_number>"
             "</platformInfo><power_profiles><requested_profiles>N/A</requested_profiles></power_profiles>"
             "<vgpu_software_licensed_product><licensed_product_name>N/A</licensed_product_name>"
             "</vgpu_software_licensed_product><sm_clock_samples><max>N/A</max></sm_clock_samples>"
             "<memory_clock_samples><max>N/A</max></memory_clock_samples>")
    edited = text.replace("<product_name>", added + "<product_name>", 1)
    edited = edited.replace("<remapped_rows>", "<remapped_rows><remapped_row_corr_inactive>0</remapped_row_corr_inactive>"
                            "<remapped_row_unc_inactive>0</remapped_row_unc_inactive>", 1)
    assert edited.count("_inactive>") in (0, 4)
    warnings = []
    nvidia_smi.parse_xml(edited, warn=warnings.append)
    assert warnings == []
    nvidia_smi.parse_xml(edited.replace("<pdi>", "<gpu_future_field>1</gpu_future_field><pdi>"), warn=warnings.append)
    assert warnings == ["nvidia-smi: unknown field 'gpu_future_field' in a GPU block; please report"]


# ------------------------------------------------------------------------------------- empty is never healthy

CATALOG = load_catalog()


def _program(tmp_path, name, body):
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


@pytest.mark.parametrize("stdout, status", [
    ("", "error"),
    ("\n\n", "error"),
    ("Segmentation fault\n", "error"),
    ("-- No entries --\n", "pass"),
])
def test_journalctl_output_empty_or_garbage_is_an_error(tmp_path, stdout, status):
    (tmp_path / "out").write_text(stdout)
    program = _program(tmp_path, "journalctl", "cat '%s'\n" % (tmp_path / "out"))
    module = CollectModule({"source": "journalctl", "since": "-24h", "src": None, "journalctl_path": program,
                      "dmesg_path": "/bin/false", "timeout": 10})
    facts = xid_collect.collect_xid_facts(module)["xid"]
    checks = judge_xid("n1", facts, CATALOG)
    assert [(check["id"], check["status"]) for check in checks] == [("xid.log.readable", status)]
    if status == "error":
        assert "a working node's kernel log is never empty" in checks[0]["message"]


def test_a_real_kernel_log_is_still_readable():
    text = read("kernel-log/dmesg-ctime-xid119-gsp-rpc-timeout-xe9680.log")
    shape = xid.log_shape(text)
    assert shape["no_entries"] is False and shape["kernel_lines"] == len([line for line in text.splitlines() if line.strip()])
    facts = dict(xid.parse(text), source="file", since=None, **shape)
    assert by_id(judge_xid("n1", facts, CATALOG))["xid.log.readable"]["status"] == "pass"


def test_a_dcgm_category_that_is_not_an_object_is_not_dropped_silently():
    text = read("dcgm/dcgmi-diag-r3-j-tesla-t4-pass.json")
    doc = dcgm.json.loads(text)
    root = doc["DCGM GPU Diagnostic"]
    root["test_categories"][-1] = "Hardware: Fail"
    facts = dcgm.parse_diag(dcgm.json.dumps(doc), level=3)
    assert facts["unreadable"] == ["test category #%d (str)" % (len(root["test_categories"]) - 1)]
    checks = dcgm_rules.judge_dcgm_diag("n1", facts)
    assert (checks[0]["id"], checks[0]["status"]) == ("dcgm.diag.readable", "error")


@pytest.mark.parametrize("value", [True, 7, "x", {"entities": 3}])
def test_dcgm_entity_groups_of_another_type(value):
    doc = dcgm.json.loads(read("dcgm/dcgmi-diag-r2-j-gb10-4.5.2-plugins-allowed.json"))
    doc["entity_groups"] = value
    assert dcgm.parse_diag(dcgm.json.dumps(doc))["entities"] == []


def test_a_real_journalctl_short_iso_log_without_xid_is_healthy():
    text = read("kernel-log/journalctl-short-iso-peermem.log")
    parsed = xid.parse(text)
    assert (parsed["lines"], parsed["events"], parsed["unparsed"]) == (47, [], [])
    # the log's newest time stamp: the last line's (journalctl short-iso, +0000)
    assert xid.log_shape(text) == {"kernel_lines": 47, "no_entries": False,
                                   "log_end": {"time": "2025-01-17T17:39:30+00:00", "uptime_s": None}}
    facts = dict(parsed, source="journalctl", since="-24h", **xid.log_shape(text))
    (check,) = judge_xid("n1", facts, CATALOG)
    assert (check["id"], check["status"]) == ("xid.log.readable", "pass")
    assert check["message"].startswith("Read 47 kernel log lines from journalctl since -24h: no Xid event")


def test_an_xid_line_in_the_journalctl_form_is_read():
    """The journalctl capture with one of its lines edited into the Xid 79 line a fallen GPU prints."""
    text = read("kernel-log/journalctl-short-iso-peermem.log").replace(
        "kernel: IPv6: ADDRCONF(NETDEV_CHANGE): cali6706ce3460d: link becomes ready",
        "kernel: NVRM: Xid (PCI:0000:9b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.")
    (event,) = xid.parse(text)["events"]
    assert (event["time"], event["pci_bus_id"], event["code"], event["pid"]) == (
        "2025-01-17T17:11:23+00:00", "0000:9B:00.0", 79, None)
    assert xid.time_key(event) == ("t", 1737133883)


def _bundle_sections(relpath, command):
    """The outputs of ``command`` in a capture bundle (each section: a ``# $ <command>`` header, a rule line, output)."""
    lines = read(relpath).split("\n")
    sections = []
    for number, line in enumerate(lines):
        if line == "# $ " + command:
            end = next((k for k in range(number + 2, len(lines)) if lines[k].startswith("####")), len(lines))
            sections.append("\n".join(lines[number + 2:end]))
    return sections


@pytest.mark.parametrize("relpath, driver", [("nvidia-smi/capture-bundle-h100-80gb-hbm3.txt", "590.48.01"),
                                             ("nvidia-smi/capture-bundle-h100-mig.txt", "590.48.01"),
                                             ("nvidia-smi/capture-bundle-l40s.txt", "595.80")])
def test_every_590_595_bundle_section_parses_without_warnings(relpath, driver):
    """Idle and load ``-q`` and the ``nvlink -s`` of the 590/595 bundles: no unknown field, nothing unreadable."""
    q_sections = _bundle_sections(relpath, "nvidia-smi -q")
    link_sections = _bundle_sections(relpath, "nvidia-smi nvlink -s")
    assert (len(q_sections), len(link_sections)) == (2, 1)
    for text in q_sections:
        warnings = []
        facts = nvidia_smi.parse_text(text, warn=warnings.append)
        assert (warnings, facts["driver_version"], facts["attached_gpus"], len(facts["gpus"])) == ([], driver, 1, 1)
        assert facts["gpus"][0]["unreadable"] == []
    warnings = []
    assert len(nvlink.parse_status(link_sections[0], warn=warnings.append)) == 1 and warnings == []
