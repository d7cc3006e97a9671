# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Preflight (plugin_utils/_preflight.py) and the family selection of every run (plugin_utils/_families.py)."""

from __future__ import annotations

import glob
import os

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from fuzzing import FUZZ
from ansible_collections.zhisuan.ops.plugins.plugin_utils import _families as families
from ansible_collections.zhisuan.ops.plugins.plugin_utils._families import SelectionError, select_families
from ansible_collections.zhisuan.ops.plugins.plugin_utils._preflight import (
    CHECK_ID,
    EXPECTED_KEYS,
    KNOWN_TOOLS,
    THRESHOLD_KEYS,
    preflight,
    preflight_check,
)
from ansible_collections.zhisuan.ops.plugins.plugin_utils._profiles import load_profiles
from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import host_record

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
PROFILES = load_profiles()
GOOD = {
    "zhisuan_gpu_profile": "h100",
    "zhisuan_expected": {"gpu_count": 8, "driver_version": "550.90.07", "tuning": {"ulimits": {"nofile": None}}},
    "zhisuan_thresholds": {"gpu": {"temperature_margin_c": 5}, "rdma": {}},
    "zhisuan_dcgm_level": 3,
    "zhisuan_acceptance_families": ["gpu", "xid", "dcgm"],
    "bmc_protocol": "redfish",
    "zhisuan_tools": {"nvidia_smi": "/usr/bin/nvidia-smi", "dcgmi": "dcgmi", "all_reduce_perf": "/opt/nccl-tests/build/all_reduce_perf"},
}


def problems(kind="acceptance", **changes):
    variables = dict(GOOD, **changes)
    return preflight(kind, dict((k, v) for k, v in variables.items() if v is not None), PROFILES)["problems"]


def test_a_correct_node_has_no_problem():
    assert preflight("acceptance", GOOD, PROFILES) == {"problems": [], "profile": "h100"}
    assert preflight("acceptance", {}, PROFILES) == {"problems": [], "profile": None}


@pytest.mark.parametrize("written, meant", [("H100", "h100"), ("h100", "h100"), ("H100-NVL", "h100_nvl"),
                                            ("h100 nvl", "h100_nvl"), ("L40S", "l40s"), ("A100_40GB", "a100_40gb")])
def test_profiles_are_named_as_vendors_write_them(written, meant):
    assert preflight("acceptance", {"zhisuan_gpu_profile": written}, PROFILES) == {"problems": [], "profile": meant}


def test_a_mistyped_profile_is_named_with_the_known_ones():
    found = problems(zhisuan_gpu_profile="h1OO")
    assert len(found) == 1
    assert "zhisuan_gpu_profile 'h1OO' is not a known GPU profile" in found[0]
    assert "known profiles: " + ", ".join(sorted(PROFILES)) in found[0]
    assert "did you mean" in problems(zhisuan_gpu_profile="h2000")[0]


@pytest.mark.parametrize("changes, words", [
    ({"zhisuan_expected": {"gpu_cout": 8}}, ["zhisuan_expected has an unknown key 'gpu_cout'", "did you mean gpu_count?"]),
    ({"zhisuan_expected": [8]}, ["zhisuan_expected must be a mapping, got list"]),
    ({"zhisuan_thresholds": {"gpus": {}}}, ["zhisuan_thresholds has an unknown key 'gpus'", "did you mean gpu?"]),
    ({"zhisuan_thresholds": {"gpu": 5}}, ["zhisuan_thresholds.gpu must be a mapping, got 5"]),
    ({"zhisuan_dcgm_level": 5}, ["zhisuan_dcgm_level 5 is out of range: dcgmi diag levels are 1 to 4"]),
    ({"zhisuan_dcgm_level": "three"}, ["zhisuan_dcgm_level 'three' is out of range"]),
    ({"zhisuan_dcgm_level": True}, ["zhisuan_dcgm_level True is out of range"]),
    ({"zhisuan_acceptance_families": ["gpu", "xdi"]},
     ["zhisuan_acceptance_families names 'xdi', not a family of the acceptance run", "did you mean xid?"]),
    ({"zhisuan_families": "gpu,bmc"}, ["zhisuan_families names 'bmc', not a family of the acceptance run"]),
    ({"bmc_protocol": "redfsh"}, ["bmc_protocol 'redfsh' is not one of redfish, ipmi"]),
    ({"zhisuan_tools": {"nvidia_smi": "bin/nvidia-smi"}},
     ["zhisuan_tools.nvidia_smi 'bin/nvidia-smi' is a relative path: give the absolute path on the node"]),
    ({"zhisuan_tools": {"nvidia-smi": "/usr/bin/nvidia-smi"}},
     ["zhisuan_tools key 'nvidia-smi' is never read: tool keys use '_' for '-' (nvidia_smi)"]),
    ({"zhisuan_tools": {"dcgmi": ""}}, ["zhisuan_tools.dcgmi must be a path, got ''"]),
    ({"zhisuan_tools": {"dmesg": "", "journalctl": 7}}, ["zhisuan_tools.journalctl must be a path, got 7"]),
    ({"zhisuan_tools": "/usr/bin"}, ["zhisuan_tools must be a mapping of tool name to path, got str"]),
])
def test_each_mistake_is_named(changes, words):
    found = problems(**changes)
    assert len(found) == 1, found
    for word in words:
        assert word in found[0]


@pytest.mark.parametrize("section, typo, meant", [
    ("gpu", "temprature_margin_c", "temperature_margin_c"),
    ("gpu", "ecc_volatile_uncorrectable_max", "ecc_volatile_uncorrected_max"),
    ("burn", "burn_peer_warn_pc", "burn_peer_warn_pct"),
    ("xid", "repeat_incident", "repeat_incidents"),
])
def test_a_mistyped_nested_threshold_is_named_with_the_key_meant(section, typo, meant):
    found = problems(zhisuan_thresholds={section: {typo: 3}})
    assert len(found) == 1, found
    assert "zhisuan_thresholds.%s has an unknown key %r (did you mean %s?)" % (section, typo, meant) in found[0]
    # the right key is fine, and the sections with free-form content are not checked key by key
    assert problems(zhisuan_thresholds={section: {meant: 3}}) == []
    assert problems(zhisuan_thresholds={"storage": {"jobs": {"seq_read": {"bw_mib_min": 1}}}}) == []


def test_every_key_the_gpu_rules_read_is_a_known_threshold():
    from ansible_collections.zhisuan.ops.plugins.module_utils._judge import gpu
    assert problems(zhisuan_thresholds={"gpu": dict((key, 1) for key in gpu.DEFAULT_THRESHOLDS)}) == []
    assert problems(zhisuan_thresholds={"gpu": {"nvlink_errors_window_s": 10, "bandwidth_warn_factor": 1.1}}) == []
    # the windows gpu_info is given (the role's defaults read them from zhisuan_thresholds.gpu)
    assert problems(zhisuan_thresholds={"gpu": {"throttle_window_s": 30}}) == []
    assert "did you mean throttle_window_s?" in problems(zhisuan_thresholds={"gpu": {"throttle_windows_s": 30}})[0]


@pytest.mark.parametrize("variables, unreadable, words", [
    ({}, (), "bmc_password is missing: the BMC is not tried without it"),
    ({"bmc_password": ""}, (), "bmc_password is empty: the BMC is not tried without it"),
])
def test_a_delivery_without_the_bmc_password_is_a_mistake_named_by_the_variable(variables, unreadable, words):
    found = preflight("delivery", variables, PROFILES, families=["bmc", "tuning"], unreadable=unreadable)["problems"]
    assert found == [words + " (set it for this node, from a vault)"]
    # the value itself is never in the message
    secret = preflight("delivery", {"bmc_password": "s3cret-Pw"}, PROFILES, families=["bmc"])["problems"]
    assert secret == []
    # a run or a selection that does not log in to the BMC does not need it
    assert preflight("delivery", variables, PROFILES, families=["tuning"])["problems"] == []
    assert preflight("acceptance", variables, PROFILES, families=["gpu"])["problems"] == []
    # an undefined one (a vault variable that is not there) is named once, by the template's own words
    assert preflight("delivery", {}, PROFILES, families=["bmc"], unreadable=["bmc_password"])["problems"] == []


def test_every_mistake_of_a_node_is_in_its_one_error_check():
    found = problems(zhisuan_gpu_profile="h1OO", zhisuan_dcgm_level=9, zhisuan_tools={"dcgmi": "./dcgmi"})
    assert len(found) == 3
    check = preflight_check("node07", found)
    assert (check["id"], check["status"], check["host"], check["remedy"]) == (CHECK_ID, "error", "node07", "investigate")
    for value in ("'h1OO'", "9", "'./dcgmi'"):
        assert value in check["message"]
    record = host_record("node07", [check])
    assert record["status"] == "error"


def test_the_family_variables_of_other_runs_are_not_this_runs_business():
    # the lab sets zhisuan_acceptance_families on every node: an inspection does not read it
    assert problems("inspect", zhisuan_acceptance_families=["gpu", "nic"]) == []
    assert problems("diagnose", zhisuan_diag_families=["gpu", "tuning"])[0].startswith(
        "zhisuan_diag_families names 'tuning', not a family of the diagnose run")


def test_what_the_inventories_we_ship_and_the_lab_write_passes():
    """The example inventory and every lab scenario's expected keys and tools are known to the preflight."""
    with open(os.path.join(REPO, "inventories", "example", "group_vars", "gpu_nodes", "main.yml")) as handle:
        example = yaml.safe_load(handle)
    assert preflight("acceptance", example, PROFILES)["problems"] == []
    for path in glob.glob(os.path.join(REPO, "lab", "scenarios", "*.yml")):
        with open(path) as handle:
            scenario = yaml.safe_load(handle)
        expected = dict((scenario.get("defaults") or {}).get("expected") or {})
        for node in (scenario.get("nodes") or {}).values():
            expected.update((node or {}).get("expected") or {})
        assert set(expected) <= EXPECTED_KEYS, (path, set(expected) - EXPECTED_KEYS)
        assert set((scenario.get("vars") or {}).get("zhisuan_thresholds") or {}) <= THRESHOLD_KEYS, path


def test_the_tools_the_roles_read_are_known():
    """A key a role reads from zhisuan_tools is in KNOWN_TOOLS (so its dashed spelling is caught)."""
    import re

    read = set()
    for path in glob.glob(os.path.join(REPO, "roles", "*", "defaults", "main.yml")) + \
            glob.glob(os.path.join(REPO, "playbooks", "*.yml")):
        with open(path) as handle:
            read.update(re.findall(r"zhisuan_tools \| default\(\{\}\)\)\.([a-z_]+)", handle.read()))
    assert read and read <= KNOWN_TOOLS, read - KNOWN_TOOLS


@FUZZ
@given(st.dictionaries(st.sampled_from(sorted(GOOD) + ["zhisuan_diag_families", "zhisuan_families"]),
                       st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=12),
                                 st.lists(st.text(max_size=6), max_size=3),
                                 st.dictionaries(st.text(max_size=8), st.one_of(st.text(max_size=8), st.integers()),
                                                 max_size=3))))
def test_preflight_is_total(variables):
    """Whatever an inventory holds, preflight answers with problems as text, never an exception."""
    for kind in families.RUN_FAMILIES:
        found = preflight(kind, variables, PROFILES)
        assert all(isinstance(problem, str) and problem for problem in found["problems"])
        if found["problems"]:
            record = host_record("n1", [preflight_check("n1", found["problems"])])
            assert record["status"] == "error" and record["checks"][0]["message"].startswith("Not tested: ")


# ------------------------------------------------------------------------------------------ family selection

@pytest.mark.parametrize("kind, tags, variables, expected", [
    ("acceptance", ["all"], {}, ["gpu", "xid", "dcgm", "nic", "rdma", "cabling", "nccl", "storage"]),
    ("acceptance", ["all"], {"zhisuan_acceptance_families": ["dcgm", "gpu"]}, ["gpu", "dcgm"]),
    ("acceptance", ["xid", "gpu"], {"zhisuan_acceptance_families": ["gpu", "xid", "dcgm"]}, ["gpu", "xid"]),
    ("acceptance", ["all"], {"zhisuan_families": "gpu, xid", "zhisuan_acceptance_families": ["dcgm"]}, ["gpu", "xid"]),
    ("diagnose", ["all"], {}, ["gpu", "xid", "dcgm"]),
    ("diagnose", ["gpu"], {}, ["gpu"]),
    ("diagnose", ["all"], {"zhisuan_diag_level": "deep"}, ["gpu", "xid", "dcgm", "burn"]),
    ("diagnose", ["all"], {"zhisuan_diag_level": "custom", "zhisuan_diag_families": ["xid"]}, ["xid"]),
    ("diagnose", ["all"], {"zhisuan_diag_level": "custom"}, ["gpu", "xid"]),
    ("inspect", ["xid"], {}, ["xid"]),
    ("inspect", ["always"], {}, ["gpu", "xid", "dcgm", "tuning"]),
    ("burnin", ["gpu"], {}, ["gpu"]),
    ("delivery", ["bmc", "baseline"], {}, ["bmc", "baseline"]),
    ("remediate", ["all"], {}, ["gpu", "xid"]),
])
def test_tags_and_variables_select_from_one_table(kind, tags, variables, expected):
    assert select_families(kind, tags, [], variables)["families"] == expected


def test_skip_tags_take_families_out():
    assert select_families("inspect", ["all"], ["dcgm", "tuning"])["families"] == ["gpu", "xid"]
    assert "--skip-tags dcgm,tuning" in select_families("inspect", ["all"], ["tuning", "dcgm"])["source"]


def test_the_dcgm_level_follows_the_diagnosis_level_or_the_variable():
    assert select_families("diagnose", variables={"zhisuan_diag_level": "standard"})["dcgm_level"] == 2
    assert select_families("diagnose", variables={"zhisuan_diag_level": "custom", "zhisuan_dcgm_level": 4})["dcgm_level"] == 4
    assert select_families("acceptance")["dcgm_level"] == 3
    assert select_families("acceptance", variables={"zhisuan_dcgm_level": 1})["dcgm_level"] == 1


@pytest.mark.parametrize("kind, tags, skip, variables, message", [
    ("diagnose", ["bmc"], [], {}, "--tags bmc: bmc is not a family of the diagnose run (its families: gpu, xid, dcgm, burn, job)"),
    ("inspect", ["gpu", "nccl", "fio"], [], {}, "--tags gpu,nccl,fio: nccl, fio are not a family of the inspect run"),
    ("acceptance", ["nic"], [], {"zhisuan_acceptance_families": ["gpu", "xid", "dcgm"]},
     "the family selection of the acceptance run is empty: --tags nic within zhisuan_acceptance_families selects none"),
    ("inspect", ["all"], ["gpu", "xid", "dcgm", "tuning"], {}, "the family selection of the inspect run is empty"),
    ("diagnose", ["all"], [], {"zhisuan_diag_level": "fast"}, "zhisuan_diag_level must be one of quick, standard, deep, custom"),
    ("diagnose", ["all"], [], {"zhisuan_diag_level": ["deep"]}, "zhisuan_diag_level must be one of quick, standard"),
    ("diagnose", ["all"], [], {"zhisuan_diag_level": "custom", "zhisuan_diag_families": ["tuning"]},
     "zhisuan_diag_families = tuning"),
    ("acceptance", ["all"], [], {"zhisuan_families": 7}, "zhisuan_families must be a list of family names, got 7"),
])
def test_a_selection_of_nothing_is_an_error_that_says_so(kind, tags, skip, variables, message):
    with pytest.raises(SelectionError) as caught:
        select_families(kind, tags, skip, variables)
    assert message in str(caught.value)


def test_site_leaves_out_a_run_its_tags_do_not_name():
    assert select_families("delivery", ["gpu", "burn"], site=True) == {
        "families": [], "source": "--tags gpu,burn", "dcgm_level": 1, "skip": True}
    assert select_families("burnin", ["gpu", "burn"], site=True)["families"] == ["gpu", "burn"]
    with pytest.raises(SelectionError):
        select_families("delivery", ["tunnig"], site=True)


def test_the_playbooks_tag_every_family_of_their_run():
    """Each run's playbook carries a tag for every family the table gives it: --tags <family> reaches its tasks."""
    for kind, names in families.RUN_FAMILIES.items():
        with open(os.path.join(REPO, "playbooks", "%s.yml" % kind)) as handle:
            text = handle.read()
        for family in names:
            assert ("tags: [%s" % family in text) or (", %s]" % family in text) or (", %s," % family in text), (kind, family)


def test_the_module_docs_list_every_run_kind():
    from ansible_collections.zhisuan.ops.plugins.modules import preflight as doc

    options = yaml.safe_load(doc.DOCUMENTATION)["options"]
    assert options["kind"]["choices"] == sorted(families.RUN_FAMILIES)


@FUZZ
@given(st.sampled_from(sorted(families.RUN_FAMILIES)),
       st.lists(st.sampled_from(list(families.ALL_FAMILIES) + ["all", "always", "tagged", "untagged", "x"]), max_size=4),
       st.lists(st.sampled_from(list(families.ALL_FAMILIES) + ["x"]), max_size=3),
       st.dictionaries(st.sampled_from(["zhisuan_families", "zhisuan_acceptance_families", "zhisuan_diag_level",
                                        "zhisuan_diag_families", "zhisuan_dcgm_level"]),
                       st.one_of(st.none(), st.integers(), st.text(max_size=10),
                                 st.lists(st.sampled_from(list(families.ALL_FAMILIES) + ["x"]), max_size=3))),
       st.booleans())
def test_selection_is_total_and_never_empty(kind, tags, skip, variables, site):
    """Any tags and variables: a non-empty list of the run's own families, a site skip, or a SelectionError."""
    try:
        selection = select_families(kind, tags, skip, variables, site=site)
    except SelectionError as exc:
        assert str(exc)
        return
    assert set(selection["families"]) <= set(families.RUN_FAMILIES[kind])
    assert selection["families"] or (site and selection["skip"])
