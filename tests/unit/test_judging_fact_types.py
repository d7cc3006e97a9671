# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The judge's one guard for facts of the wrong type (issue 25 item 7): an ``error`` check naming the family and what
was wrong, at the dispatch edge every family passes; a setting that is wrong still fails as before."""

from __future__ import annotations

import os

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import nvidia_smi
from ansible_collections.zhisuan.ops.plugins.plugin_utils._judging import FAMILIES, judge_collected, judge_family

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures")


def _gpu_facts():
    with open(os.path.join(FIXTURES, "nvidia-smi", "q-x-a100-sxm4-80gb-mig-535.xml"), encoding="utf-8") as handle:
        return nvidia_smi.parse_xml(handle.read())


MAPPINGS = sorted(name for name in FAMILIES if name != "baseline")


@pytest.mark.parametrize("family", MAPPINGS)
@pytest.mark.parametrize("odd, shape", [("{'gpus': []}", "a str, not a mapping"), ([{"gpus": []}], "a list, not a mapping"),
                                        (None, "null, not a mapping"), (8, "a int, not a mapping")])
def test_facts_that_are_not_a_mapping_are_the_familys_error_check(family, odd, shape):
    entry = FAMILIES[family]
    checks, summary, unreachable = judge_collected(family, "n1", {entry.facts_key: odd})
    assert (summary, unreachable) == ({}, False)
    assert [(check["id"], check["status"], check["observed"]) for check in checks] == [
        ("%s.collect.%s" % (entry.name, entry.collect[0]), "error", "facts of the wrong type")]
    assert checks[0]["message"] == (
        "the %s facts of the %s family are of the wrong type (they are %s); collect them again (a fact cache or a "
        "templated variable may hold a damaged copy)" % (entry.facts_key, entry.name, shape))


def test_a_list_where_a_mapping_is_names_the_family_the_error_and_where_the_rules_met_it():
    facts = _gpu_facts()
    facts["gpus"] = [list(gpu.items()) for gpu in facts["gpus"]]  # each GPU's mapping handed back as pairs
    checks, summary, _ = judge_collected("gpu", "n1", {"gpu": facts})
    assert [(check["id"], check["status"]) for check in checks] == [("gpu.collect.nvidia_smi", "error")]
    message = checks[0]["message"]
    assert message.startswith("the gpu facts of the gpu family are of the wrong type (the gpu rules could not read "
                              "them: AttributeError: 'list' object has no attribute 'get', in ")
    assert "plugin_utils/_judging.py:" in message or "module_utils/_judge/" in message
    assert summary == {}
    # the same facts as the module returns them are judged
    good, _, _ = judge_collected("gpu", "n1", {"gpu": _gpu_facts()})
    assert "gpu.collect.nvidia_smi" not in [check["id"] for check in good]


BMC_FIRMWARE = [{"id": "BMC", "name": "BMC firmware", "component": "bmc", "version": "1.0"}]


def test_the_firmware_inventory_is_a_list_or_null_and_anything_else_is_an_error():
    assert FAMILIES["baseline"].shapes == (list, type(None))
    for good in (BMC_FIRMWARE, None):
        checks, _, _ = judge_family("baseline", "n1", {"firmware": good}, context={"baseline": {"bmc": "1.0"}})
        assert "facts of the wrong type" not in [check["observed"] for check in checks]
    checks, _, _ = judge_family("baseline", "n1", {"firmware": {"BMC": "1.0"}}, context={"baseline": {"bmc": "1.0"}})
    assert [(check["id"], check["observed"]) for check in checks] == [("baseline.collect.bmc", "facts of the wrong type")]
    assert "(they are a mapping, not a list or null)" in checks[0]["message"]


def test_a_setting_that_is_wrong_still_fails_the_judge_naming_it():
    # a baseline entry that is a mapping without 'regex' is the site's setting, not a fact: passed on as before
    with pytest.raises(ValueError, match="a baseline entry given as a mapping needs a 'regex' key"):
        judge_family("baseline", "n1", {"firmware": BMC_FIRMWARE}, context={"baseline": {"bmc": {"version": "1.0"}}})
