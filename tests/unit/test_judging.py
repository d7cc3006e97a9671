# SPDX-License-Identifier: GPL-3.0-or-later
"""From a collect task's registered result to checks: unreachable, tool errors, and real facts."""

from __future__ import annotations

import os

from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import nvidia_smi
from ansible_collections.zhisuan.ops.plugins.plugin_utils._judging import Context, judge_collected
from ansible_collections.zhisuan.ops.plugins.plugin_utils._profiles import load_profiles

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "nvidia-smi")
PROFILES = load_profiles()


def test_unreachable_has_no_checks():
    assert judge_collected("gpu", "n1", {"unreachable": True, "msg": "ssh: connect refused"}) == ([], {}, True)


def test_timed_out_collect_becomes_one_error_check():
    collected = {"failed": True, "error_kind": "timed_out", "tool": "nvidia-smi", "cmd": ["/x/nvidia-smi", "-q", "-x"],
                 "msg": "nvidia-smi: timed out after 60 s (process group killed)"}
    checks, summary, unreachable = judge_collected("gpu", "n1", collected)
    assert (summary, unreachable) == ({}, False)
    assert [(c["id"], c["status"], c["observed"], c["remedy"], c["host"]) for c in checks] == [
        ("gpu.collect.nvidia_smi", "error", "timed out", "investigate", "n1")]
    assert checks[0]["message"] == "nvidia-smi: timed out after 60 s (process group killed)"
    assert checks[0]["evidence"] == "cmd: /x/nvidia-smi -q -x"


def test_failure_without_kind_keeps_rc_and_streams():
    collected = {"failed": True, "msg": "boom", "rc": 9, "stdout": "NVIDIA-SMI has failed", "stderr": ""}
    checks, _, _ = judge_collected("gpu", "n1", collected)
    assert checks[0]["observed"] == "failed"
    assert checks[0]["evidence"] == "rc: 9\nstdout: NVIDIA-SMI has failed"


def test_missing_dcgmi_gives_one_row_per_dcgmi_command_never_two_identical():
    # issue 17: check_dcgm runs dcgm_diag and dcgm_health; with dcgmi missing both fail the same way
    collected = {"failed": True, "error_kind": "not_found", "tool": "dcgmi",
                 "msg": "dcgmi: not found (looked for dcgmi on PATH)"}
    rows = judge_collected("dcgm", "n1", collected)[0] + judge_collected("dcgm_health", "n1", collected)[0]
    assert [(c["id"], c["component"], c["expected"]) for c in rows] == [
        ("dcgm.collect.dcgmi", "dcgmi", "dcgmi answers with readable output"),
        ("dcgm.collect.dcgmi_health", "dcgmi health", "dcgmi health answers with readable output")]


def test_skipped_collect_records_nothing():
    assert judge_collected("gpu", "n1", {"skipped": True}) == ([], {}, False)


def test_real_h100_capture_is_judged_with_its_profile():
    with open(os.path.join(FIXTURES, "q-h100x8-535.161.08-hw-power-brake-slowdown.txt")) as handle:
        facts = nvidia_smi.parse_text(handle.read())
    ctx = Context(profiles=PROFILES, expected={"gpu_count": 8, "driver_version": "535.161.08"})
    checks, summary, unreachable = judge_collected("gpu", "dgx01", {"gpu": facts}, ctx)
    assert unreachable is False
    # a saved text dump carries no NVLink status: the NVLink summary is empty, not zero
    devices = summary.pop("devices")
    assert summary == {"model": "NVIDIA H100 80GB HBM3", "count": 8, "driver_version": "535.161.08",
                       "cuda_version": "12.2", "profile": "h100", "nvlink_active": None, "nvlink_total": None,
                       "nvlink_error": None}
    # each GPU as the asset list's component rows take it: bus id, name, serial, VBIOS, UUID from the capture
    first = facts["gpus"][0]
    assert devices[0] == {"kind": "gpu", "slot": first["pci_bus_id"], "model": "NVIDIA H100 80GB HBM3",
                          "serial": first["serial"], "firmware": first["vbios_version"], "extra_id": first["uuid"],
                          "source": "nvidia-smi"}
    assert len(devices) == 8 and len(set(d["serial"] for d in devices)) == 8 and devices[0]["extra_id"].startswith("GPU-")
    failing = sorted(set((c["id"], c["remedy"]) for c in checks if c["status"] == "fail"))
    assert failing == [("gpu.throttle.hw_power_brake_slowdown", "investigate"), ("gpu.throttle.hw_slowdown", "investigate")]
    assert sum(1 for c in checks if c["id"] == "gpu.throttle.hw_power_brake_slowdown" and c["status"] == "fail") == 8
    assert [c["status"] for c in checks if c["id"] == "gpu.count.present"] == ["pass"]


def test_the_judge_documents_every_registered_family():
    import yaml
    from ansible_collections.zhisuan.ops.plugins.modules import judge as judge_doc
    from ansible_collections.zhisuan.ops.plugins.plugin_utils._judging import FAMILIES as registered
    documented = yaml.safe_load(judge_doc.DOCUMENTATION)["options"]["family"]["choices"]
    assert documented == sorted(registered)
