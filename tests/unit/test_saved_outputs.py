# SPDX-License-Identifier: GPL-3.0-or-later
"""The saved-output entry points (issue 23 item 3): dcgm_diag's and dcgm_health's ``src``, gpu_info's
``nvlink_src``, and the folder of a node's saved outputs that diagnose.yml judges offline (plugin_utils
_saved_outputs). Real captures from tests/fixtures, copied into a tmp folder; fault states by editing them."""

from __future__ import annotations

import os
import shutil
import types

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ToolNotFound
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu.collect import collect_gpu_facts
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu.dcgm_collect import collect_dcgm_diag, collect_dcgm_health
from ansible_collections.zhisuan.ops.plugins.plugin_utils._saved_outputs import node_folder, saved_options

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures")
H100_Q = os.path.join(FIXTURES, "nvidia-smi", "excerpt-h100-80gb-hbm3-q-load.txt")
H100_NVLINK = os.path.join(FIXTURES, "nvidia-smi", "excerpt-h100-80gb-hbm3-nvlink-s.txt")
DIAG_T4 = os.path.join(FIXTURES, "dcgm", "dcgmi-diag-r3-j-tesla-t4-pass.json")
HEALTH = os.path.join(FIXTURES, "dcgm", "dcgmi-health-c-j-healthy.json")


def _module(**params):
    warnings = []
    module = types.SimpleNamespace(params=params, warn=warnings.append, check_mode=False)
    return module, warnings


def _gpu(src, nvlink_src=None):
    module, warnings = _module(src=src, nvlink_src=nvlink_src, nvidia_smi_path="/nonexistent/nvidia-smi",
                               timeout=5, nvlink=True, nvlink_errors_window=0, source="nvidia-smi")
    return collect_gpu_facts(module)["gpu"], warnings


def test_a_saved_nvlink_output_fills_the_link_states():
    facts, _ = _gpu(H100_Q, H100_NVLINK)
    nvlink = facts["gpus"][0]["nvlink"]
    assert facts["nvlink_error"] is None
    assert (nvlink["active"], nvlink["total"]) == (18, 18)
    assert len(nvlink["links"]) == 18 and all(link["active"] for link in nvlink["links"])


def test_without_nvlink_src_the_states_are_unknown():
    facts, _ = _gpu(H100_Q)
    assert facts["gpus"][0]["nvlink"] is None


def test_an_inactive_link_of_a_saved_output_fails_the_rule(tmp_path):
    text = open(H100_NVLINK, encoding="utf-8").read()
    edited = tmp_path / "nvlink-s.txt"
    edited.write_text(text.replace("\t Link 5: 26.562 GB/s\n", "\t Link 5: <inactive>\n"))
    facts, _ = _gpu(H100_Q, str(edited))
    nvlink = facts["gpus"][0]["nvlink"]
    assert (nvlink["active"], nvlink["total"]) == (17, 18)
    assert [link["link"] for link in nvlink["links"] if not link["active"]] == [5]
    # the rule's verdict on it: tests/integration/test_diagnose_saved_outputs.py (the same edit, through diagnose.yml)


def test_an_unreadable_saved_nvlink_output_is_the_nvlink_error_only(tmp_path):
    facts, _ = _gpu(H100_Q, str(tmp_path / "absent.txt"))
    assert facts["gpus"] and "cannot read saved output" in facts["nvlink_error"]
    assert "absent.txt" in facts["nvlink_error"]


def test_saved_dcgm_diag_and_health_are_read_without_dcgmi():
    module, _ = _module(src=DIAG_T4, level=3, gpus=None, dcgmi_path="/nonexistent/dcgmi", timeout=None)
    diag = collect_dcgm_diag(module)["dcgm"]
    assert diag["rc"] is None and diag["overall"] == "Pass"
    module, _ = _module(src=HEALTH, dcgmi_path="/nonexistent/dcgmi", timeout=5)
    health = collect_dcgm_health(module)["dcgm_health"]
    assert health["rc"] is None and health["overall"] == "Healthy"


def test_a_missing_saved_dcgm_file_names_the_tool_and_the_file(tmp_path):
    module, _ = _module(src=str(tmp_path / "dcgmi-diag.json"), level=1, gpus=None, dcgmi_path="dcgmi",
                        timeout=None)
    with pytest.raises(ToolNotFound) as info:
        collect_dcgm_diag(module)
    assert info.value.tool == "dcgmi" and "dcgmi-diag.json" in info.value.message


def test_the_node_folder_and_the_options_per_part(tmp_path):
    shutil.copyfile(H100_Q, str(tmp_path / "nvidia-smi-q.txt"))
    shutil.copyfile(H100_NVLINK, str(tmp_path / "nvidia-smi-nvlink-s.txt"))
    shutil.copyfile(DIAG_T4, str(tmp_path / "dcgmi-diag.json"))
    assert node_folder(str(tmp_path), "node07") == str(tmp_path)
    (tmp_path / "node07").mkdir()
    assert node_folder(str(tmp_path), "node07") == str(tmp_path / "node07")
    with pytest.raises(ValueError, match="not a folder"):
        node_folder(str(tmp_path / "absent"), "node07")
    read, options, used, missing = saved_options(
        str(tmp_path), ["gpu", "xid", "dcgm", "dcgm_health"],
        {"gpu": {"nvlink_errors_window": 10, "timeout": 60}, "xid": {"since": "-24h"}, "dcgm": {"level": 3}})
    assert read == ["gpu", "dcgm"] and missing == ["xid", "dcgm_health"]
    assert used == ["nvidia-smi-q.txt", "nvidia-smi-nvlink-s.txt", "dcgmi-diag.json"]
    assert options["gpu"] == {"timeout": 60, "src": str(tmp_path / "nvidia-smi-q.txt"),
                              "nvlink_src": str(tmp_path / "nvidia-smi-nvlink-s.txt")}
    assert options["dcgm"] == {"level": 3, "src": str(tmp_path / "dcgmi-diag.json")}


def test_a_bandwidthtest_file_is_read_with_its_tool(tmp_path):
    shutil.copyfile(H100_Q, str(tmp_path / "nvidia-smi-q.txt"))
    shutil.copyfile(os.path.join(FIXTURES, "nvbandwidth", "bandwidthTest-quick-a100-sxm4-40gb-cuda-demo.txt"),
                    str(tmp_path / "bandwidthTest.txt"))
    read, options, _, missing = saved_options(str(tmp_path), ["gpu"], {})
    assert read == ["gpu", "gpu_bandwidth"] and missing == []
    assert options["gpu_bandwidth"] == {"src": str(tmp_path / "bandwidthTest.txt"), "tool": "bandwidthTest"}
