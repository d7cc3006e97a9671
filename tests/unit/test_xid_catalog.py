# SPDX-License-Identifier: GPL-3.0-or-later
"""The Xid catalog shipped as data (data/xid_catalog.yml) and its site override file."""

from __future__ import annotations

import pytest
import yaml

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import REMEDIES
from ansible_collections.zhisuan.ops.plugins.plugin_utils._xid_catalog import DEFAULT_PATH, CatalogError, load_catalog

# The codes of the reference notes (REFERENCE.md, shared with the team) section 2 (144-150 as one row there), and the two 48 qualifiers it names.
REFERENCE_CODES = [13, 31, 43, 45, 46, 48, 61, 62, 63, 64, 74, 79, 92, 94, 95, 109, 119, 120, 136, 137, 140, 143,
                   144, 145, 146, 147, 148, 149, 150, 151, 154, 155, 156, 157, 158]


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data))
    return str(path)


def shipped():
    with open(DEFAULT_PATH, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def test_version_and_sources(catalog):
    assert catalog["version"] == "1.3.0"
    assert catalog["nvidia_catalog_as_of"] == "2025-10-29"
    assert catalog["files"] == [DEFAULT_PATH]
    tags = [source["tag"] for source in catalog["source"]]
    assert tags == ["NV", "G", "E", "T", "S", "HV", "L", "MEM", "NVML", "P", "NLE", "U"]
    assert all(source.get("what") and source.get("where") for source in catalog["source"])


def test_every_reference_code_has_a_row(catalog):
    assert set(REFERENCE_CODES) <= set(catalog["codes"])
    assert set(catalog["codes"]) - set(REFERENCE_CODES) == {54, 110, 171, 172}


def test_every_row_is_well_formed(catalog):
    buckets = catalog["buckets"]
    tags = set(source["tag"] for source in catalog["source"])
    for code, row in catalog["codes"].items():
        assert isinstance(code, int)
        assert row["meaning"].strip(), code
        assert row["class"] in ("application", "hardware", "informational", "decode_required"), code
        assert row["severity"] in ("fail", "warn", "info"), code
        assert row["remedy"] in REMEDIES, code
        assert row["nvidia_action"] == "" or row["nvidia_action"] in buckets, code
        assert row["source"] and set(row["source"]) <= tags, code
        assert (row["severity"] == "info") == (row["remedy"] == "none"), code
    for name, bucket in buckets.items():
        assert bucket["remedy"] in REMEDIES, name
        assert bucket["meaning"], name


@pytest.mark.parametrize("code, action, kind, severity, remedy", [
    (13, "RESTART_APP", "application", "warn", "restart_app"),
    (31, "RESTART_APP", "application", "warn", "restart_app"),
    (43, "IGNORE", "application", "warn", "restart_app"),
    (48, "WORKFLOW_XID_48", "hardware", "fail", "reset_gpu"),
    (63, "IGNORE", "hardware", "warn", "reset_gpu"),
    (64, "RESET_GPU", "hardware", "fail", "reset_gpu"),  # alone never an RMA (issue 24): the remap state decides
    (74, "WORKFLOW_NVLINK_ERR", "hardware", "fail", "reset_gpu"),
    (79, "RESTART_BM", "hardware", "fail", "power_cycle"),
    (94, "RESTART_APP", "hardware", "warn", "restart_app"),
    (95, "RESET_GPU", "hardware", "fail", "reset_gpu"),
    (119, "RESET_GPU", "hardware", "fail", "reset_gpu"),
    (144, "WORKFLOW_NVLINK5_ERR", "decode_required", "warn", "investigate"),
    (150, "WORKFLOW_NVLINK5_ERR", "decode_required", "warn", "investigate"),
    (154, "XID_154", "informational", "info", "none"),
])
def test_rows_from_the_reference(catalog, code, action, kind, severity, remedy):
    row = catalog["codes"][code]
    assert (row["nvidia_action"], row["class"], row["severity"], row["remedy"]) == (action, kind, severity, remedy)


def test_48_companions_and_nvlink5_rows(catalog):
    assert catalog["codes"][48]["companions"] == [63, 64]
    assert [catalog["codes"][code]["mnemonic"] for code in range(144, 151)] == [
        "NVLINK_SAW_ERROR", "NVLINK_RLW_ERROR", "NVLINK_TLW_ERROR", "NVLINK_TREX_ERROR", "NVLINK_NVLPW_CTRL_ERROR",
        "NVLINK_NETIR_ERROR", "NVLINK_MSE_ERROR"]


def test_recovery_actions(catalog):
    actions = catalog["recovery_actions"]
    assert sorted(actions) == [0, 1, 2, 3, 4, 5]
    assert [(actions[n]["name"], actions[n]["remedy"]) for n in range(6)] == [
        ("None", "none"), ("GPU Reset Required", "reset_gpu"), ("Node Reboot Required", "reboot"),
        ("Drain P2P", "drain"), ("Drain and Reset", "reset_gpu"), ("GPU Reset Bus", "reset_gpu")]


# ------------------------------------------------------------------------------------------ overrides

def test_override_file_merges_over_the_catalog(tmp_path, catalog):
    path = write(tmp_path, "site.yml", {
        "version": "acme-2",
        "codes": {109: {"severity": "warn", "notes": "acme: context switch timeouts are driver noise here"},
                  "13": {"remedy": "investigate"},
                  200: {"meaning": "A code from a newer driver", "nvidia_action": "RESET_GPU", "class": "hardware",
                        "severity": "fail", "remedy": "reset_gpu", "source": ["U"]}},
        "recovery_actions": {6: {"name": "Recover IMEX Domain", "severity": "fail", "remedy": "investigate",
                                 "meaning": "recover the IMEX domain"}},
    })
    site = load_catalog(overrides=path)
    assert site["version"] == "1.3.0+acme-2"
    assert site["files"] == [DEFAULT_PATH, path]
    assert site["codes"][109]["severity"] == "warn"
    assert site["codes"][109]["remedy"] == "reset_gpu"          # untouched keys stay
    assert site["codes"][109]["notes"].startswith("acme:")
    assert site["codes"][13]["remedy"] == "investigate"
    assert site["codes"][200]["companions"] == []
    assert site["recovery_actions"][6]["name"] == "Recover IMEX Domain"
    assert catalog["codes"][109]["severity"] == "fail"          # the shipped catalog is not changed


def test_override_mapping_without_version():
    site = load_catalog(overrides={"codes": {79: {"remedy": "reboot"}}})
    assert site["version"] == "1.3.0+site"
    assert site["codes"][79]["remedy"] == "reboot"
    assert site["files"] == [DEFAULT_PATH]


# ------------------------------------------------------------------------------------------ bad files

def test_missing_file(tmp_path):
    path = str(tmp_path / "nope.yml")
    with pytest.raises(CatalogError) as info:
        load_catalog(path)
    assert str(info.value) == "Xid catalog %s cannot be read: No such file or directory" % path


def test_not_yaml_and_not_a_mapping(tmp_path):
    bad = write(tmp_path, "bad.yml", "codes: [\n")
    with pytest.raises(CatalogError, match="^Xid catalog %s is not valid YAML: " % bad):
        load_catalog(bad)
    flat = write(tmp_path, "flat.yml", "- 13\n")
    with pytest.raises(CatalogError) as info:
        load_catalog(overrides=flat)
    assert str(info.value) == "Xid catalog %s is not a mapping" % flat


@pytest.mark.parametrize("row, message", [
    ({"remedy": "pray"}, "code 13: remedy is 'pray'; allowed: " + ", ".join(REMEDIES)),
    ({"severity": "critical"}, "code 13: severity is 'critical'; allowed: fail, warn, info"),
    ({"class": "driver"}, "code 13: class is 'driver'; allowed: application, hardware, informational, decode_required"),
    ({"source": ["XX"]}, "code 13: unknown source tag(s) XX; defined: E, G, HV, L, MEM, NLE, NV, NVML, P, S, T, U"),
    ({"nvidia_action": "PANIC"}, "code 13: nvidia_action 'PANIC' is not a bucket of the catalog"),
    ({"colour": "red"}, "code 13 has unknown key(s) colour; allowed: "),
    ({"companions": ["63"]}, "code 13: companions must be a list of Xid codes"),
])
def test_bad_override_rows_name_the_file(tmp_path, row, message):
    path = write(tmp_path, "site.yml", {"codes": {13: row}})
    with pytest.raises(CatalogError) as info:
        load_catalog(overrides=path)
    assert str(info.value).startswith("Xid catalog %s with overrides %s: %s" % (DEFAULT_PATH, path, message))


def test_new_code_needs_every_key(tmp_path):
    path = write(tmp_path, "site.yml", {"codes": {200: {"meaning": "new", "severity": "warn"}}})
    with pytest.raises(CatalogError) as info:
        load_catalog(overrides=path)
    assert str(info.value) == ("Xid catalog %s with overrides %s: code 200 is missing nvidia_action, class, remedy, "
                               "source" % (DEFAULT_PATH, path))


def test_override_top_level_and_code_keys(tmp_path):
    odd = write(tmp_path, "odd.yml", {"cdoes": {}})
    with pytest.raises(CatalogError) as info:
        load_catalog(overrides=odd)
    assert str(info.value) == ("Xid catalog overrides %s: unknown key(s) cdoes; allowed: buckets, clearing, codes, "
                               "nvlink_error_registers, recovery_actions, source, sxid, version" % odd)
    word = write(tmp_path, "word.yml", {"codes": {"thirteen": {"remedy": "none"}}})
    with pytest.raises(CatalogError) as info:
        load_catalog(overrides=word)
    assert str(info.value) == "%s: codes key 'thirteen' is not a number" % word


def test_bad_recovery_action(tmp_path):
    path = write(tmp_path, "site.yml", {"recovery_actions": {2: {"remedy": "nap"}}})
    with pytest.raises(CatalogError) as info:
        load_catalog(overrides=path)
    assert str(info.value).startswith("Xid catalog %s with overrides %s: recovery_actions 2: remedy is 'nap'"
                                      % (DEFAULT_PATH, path))


def test_base_catalog_without_version(tmp_path):
    data = shipped()
    del data["version"]
    path = write(tmp_path, "catalog.yml", data)
    with pytest.raises(CatalogError) as info:
        load_catalog(path)
    assert str(info.value) == "Xid catalog %s has no 'version'" % path
