# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""GPU model profiles (data/profiles/*.yml) and their loader (plugin_utils/_profiles.py)."""

from __future__ import annotations

import glob
import os
import re

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._judge.gpu import select_profile
from ansible_collections.zhisuan.ops.plugins.plugin_utils import _profiles
from ansible_collections.zhisuan.ops.plugins.plugin_utils._profiles import load_profiles

PROFILE_FILES = sorted(glob.glob(os.path.join(_profiles.DEFAULT_DIRECTORY, "*.yml")))

# Every numeric figure a profile may carry: number, or null where no source gives one.
NUMERIC_FIELDS = (
    ("gpu_count",),
    ("memory_total_mib_min",),
    ("pcie", "gen_max"),
    ("pcie", "width_max"),
    ("power_limit_w",),
    ("nvlink", "links"),
    ("nvlink", "speed_gbs_per_link"),
    ("temperature", "gpu_warn_margin_c"),
    ("nccl_allreduce_busbw_floor_gbs",),
    ("ib_write_bw_floor_gbps",),
    ("h2d_bw_floor_gbs",),
    ("p2p_bw_floor_gbs",),
    ("burn", "gflops_floor_fp32"),
    ("burn", "gflops_floor_fp32_tc"),
    ("burn", "gflops_floor_fp64"),
    ("burn", "gflops_floor_fp64_tc"),
    ("nccl", "judge_bytes"),
    ("nccl", "busbw_floor_gbs", "all_gather_perf"),
    ("nccl", "cluster_busbw_floor_gbs", "all_reduce_perf"),
    ("peak_tflops", "bf16_dense"),
    ("peak_tflops", "fp8_dense"),
)
BURN_FLOORS = ("gflops_floor_fp32", "gflops_floor_fp32_tc", "gflops_floor_fp64", "gflops_floor_fp64_tc")
# Every model the delivery guide names (DESIGN.md "Model profiles"), plus the variants shipped beside them.
GUIDE_MODELS = ("gb300", "b300", "gb200", "b200", "h200", "h100", "h800", "h20", "l20", "l40s", "a100")
REQUIRED_NUMBERS = (("gpu_count",), ("memory_total_mib_min",), ("power_limit_w",),
                    ("temperature", "gpu_warn_margin_c"), ("peak_tflops", "bf16_dense"))
TAG = re.compile(r"\[(V|S|U)\]")
NUMBER_LINE = re.compile(r"^\s*[A-Za-z0-9_]+:\s*-?\d+(\.\d+)?\s*(#.*)?$")
NULL_LINE = re.compile(r"^\s*[A-Za-z0-9_]+:\s*null\s*(#.*)?$")


def _walk(profile, path):
    value = profile
    for key in path:
        if value is None:
            return None
        assert isinstance(value, dict), path
        value = value.get(key)
    return value


def test_the_shipped_models_are_there():
    profiles = load_profiles()
    for name in GUIDE_MODELS:
        assert name in profiles, name
    assert len(PROFILE_FILES) == len(profiles)


@pytest.mark.parametrize("path", PROFILE_FILES, ids=os.path.basename)
def test_profile_fields_are_numbers(path):
    profile = _profiles._load_one(path)
    assert profile["name"] == os.path.basename(path)[:-4]
    assert profile["match"] and all(isinstance(item, str) for item in profile["match"])
    for field in NUMERIC_FIELDS:
        value = _walk(profile, field)
        assert value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)), (field, value)
    for field in REQUIRED_NUMBERS:
        assert isinstance(_walk(profile, field), (int, float)), field
    assert profile["nvlink"] is None or isinstance(profile["nvlink"], dict)
    assert isinstance(profile["pcie"], dict)
    # Every profile states its gpu-burn floors, a number or null (the peer rule works without one).
    assert isinstance(profile["burn"], dict) and set(profile["burn"]) == set(BURN_FLOORS), profile.get("burn")
    # Nothing numeric hides outside the known fields.
    known = set(field[0] for field in NUMERIC_FIELDS) | {"name", "description", "match"}
    assert set(profile) <= known, set(profile) - known


@pytest.mark.parametrize("path", PROFILE_FILES, ids=os.path.basename)
def test_every_number_carries_its_source(path):
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    checked = 0
    for number, line in enumerate(lines, 1):
        if NUMBER_LINE.match(line) or NULL_LINE.match(line):
            checked += 1
            assert "#" in line, "%s:%d has no source comment: %s" % (path, number, line)
            comment = line.split("#", 1)[1]
            assert TAG.search(comment), "%s:%d has no [V]/[S]/[U] tag: %s" % (path, number, line)
            assert len(comment.strip()) > 8, "%s:%d: the source is missing: %s" % (path, number, line)
    assert checked >= 10


@pytest.mark.parametrize("product, expected", [
    ("NVIDIA H100 80GB HBM3", "h100"),
    ("NVIDIA H100 NVL", "h100_nvl"),
    ("NVIDIA H100 PCIe", None),
    ("NVIDIA H200", "h200"),
    ("NVIDIA H200 NVL", None),
    ("NVIDIA GH200 480GB", "gh200"),
    ("NVIDIA GH200 96GB HBM3", "gh200"),
    ("NVIDIA H20", "h20"),
    ("NVIDIA H800", "h800"),
    ("NVIDIA H800 PCIe", None),
    ("NVIDIA B200", "b200"),
    ("NVIDIA GB200 185GB", "gb200"),
    ("NVIDIA B300", "b300"),
    ("NVIDIA B300 SXM6 AC", "b300"),
    ("NVIDIA GB300", "gb300"),
    ("NVIDIA L20", "l20"),
    ("NVIDIA L40S", "l40s"),
    ("NVIDIA L40", None),
    ("NVIDIA A100-SXM4-80GB", "a100"),
    ("NVIDIA A100-SXM4-40GB", "a100_40gb"),
    ("NVIDIA A100 80GB PCIe", None),
    ("NVIDIA GeForce RTX 4090", None),
])
def test_product_names_select_exactly_one_profile(product, expected):
    profiles = load_profiles()
    matching = [name for name, profile in profiles.items()
                if any(re.search(pattern, product, re.IGNORECASE) for pattern in profile["match"])]
    assert matching == ([expected] if expected else [])
    selected = select_profile(product, profiles)
    assert (selected["name"] if selected else None) == expected


def test_unreadable_yaml_names_the_file(tmp_path):
    (tmp_path / "good.yml").write_text("name: good\nmatch: ['X1']\n")
    (tmp_path / "broken.yml").write_text("name: [unclosed\n")
    with pytest.raises(ValueError, match="broken.yml"):
        load_profiles(str(tmp_path))


def test_missing_name_names_the_file(tmp_path):
    (tmp_path / "noname.yml").write_text("match: ['X1']\ngpu_count: 8\n")
    with pytest.raises(ValueError, match=r"noname\.yml has no 'name'"):
        load_profiles(str(tmp_path))


def test_bad_regex_and_duplicate_names_are_reported(tmp_path):
    (tmp_path / "a.yml").write_text("name: x\nmatch: ['(']\n")
    with pytest.raises(ValueError, match=r"a\.yml: bad 'match' regex"):
        load_profiles(str(tmp_path))
    (tmp_path / "a.yml").write_text("name: x\nmatch: ['X']\n")
    (tmp_path / "b.yml").write_text("name: x\nmatch: ['Y']\n")
    with pytest.raises(ValueError, match=r"b\.yml: name 'x' is already defined in .*a\.yml"):
        load_profiles(str(tmp_path))


def test_not_a_mapping_and_missing_directory(tmp_path):
    (tmp_path / "list.yml").write_text("- a\n- b\n")
    with pytest.raises(ValueError, match=r"list\.yml is not a mapping"):
        load_profiles(str(tmp_path))
    with pytest.raises(ValueError, match="does not exist"):
        load_profiles(str(tmp_path / "nope"))


def test_burn_floor_of_the_a100_comes_from_the_real_log():
    """The one floor with a source: 90 % of the slowest steady GPU (16890 Gflop/s) of the real A100 -d -tc log."""
    profiles = load_profiles()
    assert profiles["a100"]["burn"]["gflops_floor_fp64_tc"] == 15200
    assert 15200 <= 0.9 * 16890 + 1
    assert [profiles["a100"]["burn"][key] for key in BURN_FLOORS[:3]] == [None, None, None]
    with open(os.path.join(_profiles.DEFAULT_DIRECTORY, "a100.yml"), encoding="utf-8") as handle:
        line = [text for text in handle if text.strip().startswith("gflops_floor_fp64_tc:")][0]
    assert "gpu-burn-8xA100-80GB-all-OK.log" in line and "[U] derived" in line


def test_new_blackwell_ultra_profiles():
    profiles = load_profiles()
    b300, gb300 = profiles["b300"], profiles["gb300"]
    assert (b300["gpu_count"], gb300["gpu_count"]) == (8, 4)
    assert (b300["power_limit_w"], gb300["power_limit_w"]) == (1100, 1400)
    assert b300["memory_total_mib_min"] == gb300["memory_total_mib_min"] == 260000
    assert b300["pcie"] == {"gen_max": 6, "width_max": 16}
    assert gb300["pcie"] == {"gen_max": None, "width_max": None}
    assert b300["nvlink"] == {"links": 18, "speed_gbs_per_link": 50}
    # GB300 NVL72: one NVLink domain across the rack (gpu.fabric.state judges the clique id); HGX B300 is one board
    assert gb300["nvlink"] == {"links": 18, "speed_gbs_per_link": 50, "multi_node": True}


@pytest.mark.parametrize("written, meant", [
    ("h100", "h100"), ("H100", "h100"), (" H200 ", "h200"), ("H100-NVL", "h100_nvl"), ("h100 nvl", "h100_nvl"),
    ("GB200", "gb200"), ("h1OO", None), ("h100x", None), ("", None)])
def test_a_profile_is_named_in_any_case(written, meant):
    """Vendors and the README write H100; the profile files are named h100: both name the same profile."""
    assert _profiles.resolve_profile_name(written, load_profiles()) == meant


def test_dense_peaks_are_dense_and_fp8_only_from_hopper_on():
    profiles = load_profiles()
    # dense (no sparsity) figures of the datasheets: H100 SXM BF16 989 / FP8 1979, A100 BF16 312 and no FP8
    assert (profiles["h100"]["peak_tflops"]["bf16_dense"], profiles["h100"]["peak_tflops"]["fp8_dense"]) == (989, 1979)
    assert (profiles["a100"]["peak_tflops"]["bf16_dense"], profiles["a100"]["peak_tflops"]["fp8_dense"]) == (312, None)
    for name, profile in profiles.items():
        peak = profile["peak_tflops"]
        if peak["fp8_dense"] is not None:
            assert peak["fp8_dense"] == pytest.approx(2 * peak["bf16_dense"], rel=0.02), name  # L40S: 733 vs 362.05
