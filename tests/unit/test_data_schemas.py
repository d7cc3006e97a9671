# SPDX-License-Identifier: GPL-3.0-or-later
"""The JSON Schemas shipped in the collection's data/schema/ (the contracts a site's own files are written against)
accept the shipped remediation policy and GPU profiles, and agree with the code that reads those files."""

from __future__ import annotations

import glob
import json
import os

import jsonschema
import pytest
import yaml

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import REMEDIES
from ansible_collections.zhisuan.ops.plugins.module_utils._remediate.policy import MODES, PolicyError, normalize

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
DATA = os.path.join(REPO, "collections", "ansible_collections", "zhisuan", "ops", "data")


def _schema(name):
    with open(os.path.join(DATA, "schema", name)) as handle:
        schema = json.load(handle)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _yaml(path):
    with open(path) as handle:
        return yaml.safe_load(handle)


POLICY = _schema("remediation-policy-v1.json")
PROFILE = _schema("gpu-profile-v1.json")


def _errors(validator, doc):
    return sorted(error.message for error in validator.iter_errors(doc))


def test_the_shipped_policy_follows_its_schema():
    doc = _yaml(os.path.join(DATA, "remediation", "policy.yml"))
    assert _errors(POLICY, doc) == []
    assert doc["schema"] == "zhisuan.ops/remediation-policy/v1"


def test_the_policy_schema_knows_the_remedies_and_modes_of_the_code():
    defs = POLICY.schema["$defs"]
    assert tuple(defs["remedy"]["enum"]) == REMEDIES
    assert tuple(defs["mode"]["enum"]) == MODES


@pytest.mark.parametrize("doc", [
    {"remedies": {"reset_gpu": "sometimes"}},
    {"remedies": {"melt": "automatic"}},
    {"limits": {"max_nodes": -1}},
    {"limits": {"max_percent": 150}},
    {"limits": {"max_nodes": True}},
    {"limits": {"blast": 1}},
    {"causes": [{"match": "xid.*"}]},
    {"causes": [{"remedy": "reboot"}]},
    {"causes": [{"match": "xid.*", "remedy": "reboot", "colour": "red"}]},
    {"act_on": ["broken"]},
    {"act_on": []},
    {"drain_on_ticket": "yes"},
    {"escalation": {"ladder": ["rma"]}},
    {"escalation": {"ladder": ["rma", "rma"]}},
    {"escalation": {"repeats": 0}},
    {"escalation": {"window_days": 4000}},
    {"escalation": {"often": 1}},
    {"colour": "red"},
    [],
])
def test_a_policy_the_code_refuses_the_schema_refuses_too(doc):
    with pytest.raises(PolicyError):
        normalize(doc)
    assert _errors(POLICY, doc) != []


@pytest.mark.parametrize("doc", [
    {},
    {"remedies": {"reboot": "automatic"}, "limits": {"max_nodes": 5}},
    {"causes": [{"match": "xid.119.*", "remedy": "reboot", "mode": "approval", "why": "GSP"}], "act_on": ["warn"]},
    {"causes": None, "limits": {"max_percent": 12.5, "breaker_percent": 0}},
    {"escalation": {"repeats": 2, "window_days": 7.5, "ladder": ["reset_gpu", "rma"]}, "drain_on_ticket": False},
])
def test_a_policy_the_code_accepts_the_schema_accepts_too(doc):
    normalize(doc)
    assert _errors(POLICY, doc) == []


PROFILES = sorted(glob.glob(os.path.join(DATA, "profiles", "*.yml")))


@pytest.mark.parametrize("path", PROFILES, ids=[os.path.basename(path) for path in PROFILES])
def test_every_shipped_profile_follows_its_schema(path):
    doc = _yaml(path)
    assert _errors(PROFILE, doc) == []
    assert doc["name"] == os.path.basename(path)[:-len(".yml")]


def test_the_profile_schema_names_the_mistakes():
    doc = _yaml(os.path.join(DATA, "profiles", "h100.yml"))
    assert _errors(PROFILE, dict(doc, gpu_cout=8)) == ["Additional properties are not allowed ('gpu_cout' was unexpected)"]
    assert _errors(PROFILE, dict(doc, power_limit_w="700 W")) == ["'700 W' is not of type 'number', 'null'"]
    assert _errors(PROFILE, dict(doc, match=[])) == ["[] should be non-empty"]
    assert _errors(PROFILE, dict(doc, nccl=dict(doc["nccl"], busbw_floor_gbs={"allreduce": 400}))) == [
        "'allreduce' does not match '^[a-z_]+_perf$'"]
    missing = dict(doc)
    del missing["match"]
    assert _errors(PROFILE, missing) == ["'match' is a required property"]
