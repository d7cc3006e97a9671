# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The monitoring role's Prometheus alert rules: rendered from the role's template with its defaults, validated with
``promtool check rules`` and unit-tested with ``promtool test rules`` (tests/monitoring/*.yml: series that fire and
series that must not); and kept in step with the suite's own rules (Xid catalog classes, thresholds)."""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import subprocess

import jinja2
import pytest
import yaml

from ansible_collections.zhisuan.ops.plugins.module_utils._judge import gpu as gpu_rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import net as net_rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import REMEDIES
from ansible_collections.zhisuan.ops.plugins.plugin_utils._profiles import load_profiles
from ansible_collections.zhisuan.ops.plugins.plugin_utils._xid_catalog import load_catalog

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
ROLE = os.path.join(ROOT, "roles", "monitoring")
TEMPLATE = os.path.join(ROLE, "templates", "zhisuan-gpu-alerts.rules.yml.j2")
ALERT_DATA = os.path.join(ROOT, "collections", "ansible_collections", "zhisuan", "ops", "data", "monitoring",
                          "alert-rules.yml")
RULE_TESTS = sorted(glob.glob(os.path.join(ROOT, "tests", "monitoring", "*.yml")))
PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(PROMTOOL is None, reason="promtool is not installed (apt install prometheus)")


def _defaults():
    with open(os.path.join(ROLE, "defaults", "main.yml")) as handle:
        return yaml.safe_load(handle)


def alert_data():
    """The collection's alert rules data (data/monitoring/alert-rules.yml), the one source of the rules file."""
    with open(ALERT_DATA, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def render(variables=None, data=None):
    """The rules file as the role's template task writes it (the template's #jinja2 header sets [[ ]] delimiters):
    the alert rules data, with the role's values (its defaults, ``variables`` over them) of the variables the data
    names (tasks/rules.yml: _monitoring_alert_rules, _monitoring_alert_values)."""
    with open(TEMPLATE) as handle:
        header, body = handle.read().split("\n", 1)
    assert header == "#jinja2: variable_start_string:'[[', variable_end_string:']]'"
    env = jinja2.Environment(variable_start_string="[[", variable_end_string="]]", trim_blocks=True,
                             undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    values = _defaults()
    values.update(variables or {})
    data = alert_data() if data is None else data
    return env.from_string(body).render(_monitoring_alert_rules=data, _monitoring_alert_values=dict(
        (name, values[name]) for name in data["parameters"]))


def _rules():
    return [rule for group in yaml.safe_load(render())["groups"] for rule in group["rules"]]


@needs_promtool
def test_promtool_check_rules(tmp_path):
    path = tmp_path / "zhisuan-gpu-alerts.rules.yml"
    path.write_text(render())
    result = subprocess.run([PROMTOOL, "check", "rules", str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS: %d rules found" % len(_rules()) in result.stdout


@needs_promtool
def test_promtool_unit_tests_fire_and_stay_quiet(tmp_path):
    assert [os.path.basename(path) for path in RULE_TESTS] == ["links.yml", "memory_thermal.yml", "xid.yml"]
    (tmp_path / "zhisuan-gpu-alerts.rules.yml").write_text(render())
    for path in RULE_TESTS:
        shutil.copy(path, str(tmp_path))
    names = [os.path.basename(path) for path in RULE_TESTS]
    result = subprocess.run([PROMTOOL, "test", "rules"] + names, cwd=str(tmp_path), capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("SUCCESS") == len(names)


@needs_promtool
def test_promtool_unit_tests_catch_a_wrong_threshold(tmp_path):
    """The rule tests can fail: with the remapped-row limit raised, the 513-row series no longer fires."""
    (tmp_path / "zhisuan-gpu-alerts.rules.yml").write_text(render({"monitoring_remapped_rows_uncorrectable_max": 600}))
    shutil.copy(os.path.join(ROOT, "tests", "monitoring", "memory_thermal.yml"), str(tmp_path))
    result = subprocess.run([PROMTOOL, "test", "rules", "memory_thermal.yml"], cwd=str(tmp_path), capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 1
    assert "alertname: GpuRemappedRowsUncorrectable" in result.stdout + result.stderr


def test_xid_classes_follow_the_catalog():
    catalog = load_catalog()
    codes = catalog["codes"]
    defaults = _defaults()

    def pick(remedies, severity=None):
        return sorted(code for code, row in codes.items() if row["remedy"] in remedies and row["class"] == "hardware"
                      and (severity is None or row["severity"] == severity))

    assert defaults["monitoring_xid_reset_codes"] == pick(("reset_gpu",), "fail")
    assert defaults["monitoring_xid_reset_warn_codes"] == pick(("reset_gpu",), "warn")
    assert defaults["monitoring_xid_reboot_codes"] == pick(("reboot",))
    assert defaults["monitoring_xid_power_cycle_codes"] == pick(("power_cycle",))
    assert defaults["monitoring_xid_rma_codes"] == pick(("rma",))
    assert defaults["monitoring_xid_reseat_codes"] == pick(("reseat",))
    applications = sorted(code for code, row in codes.items() if row["class"] == "application")
    rendered = render()
    for code in applications:
        assert "DCGM_FI_DEV_XID_ERRORS == %d\n" % code not in rendered


def test_thresholds_are_the_suites():
    defaults = _defaults()
    assert defaults["monitoring_ecc_volatile_uncorrected_max"] == gpu_rules.DEFAULT_THRESHOLDS["ecc_volatile_uncorrected_max"]
    assert defaults["monitoring_ecc_aggregate_uncorrected_max"] == gpu_rules.DEFAULT_THRESHOLDS["ecc_aggregate_uncorrected_max"]
    assert defaults["monitoring_remapped_rows_uncorrectable_max"] == \
        gpu_rules.DEFAULT_THRESHOLDS["remapped_rows_uncorrectable_max"]
    margins = set(profile["temperature"]["gpu_warn_margin_c"] for profile in load_profiles().values())
    assert margins == {defaults["monitoring_gpu_temperature_margin_c"]}
    assert defaults["monitoring_gpu_temperature_margin_c"] == gpu_rules.DEFAULT_TEMPERATURE_MARGIN_C
    assert defaults["monitoring_nic_link_flaps_warn"] == net_rules.DEFAULT_THRESHOLDS["link_flaps_warn"]
    assert defaults["monitoring_nic_link_flaps_fail"] == net_rules.DEFAULT_THRESHOLDS["link_flaps_fail"]


def test_every_alert_names_a_check_a_remedy_and_a_severity():
    rules = _rules()
    # every alert of the shipped data is in the rules file the role writes, and nothing else
    assert [rule["alert"] for rule in rules] == [rule["alert"] for group in alert_data()["groups"]
                                                 for rule in group["rules"]] and rules
    for rule in rules:
        assert rule["labels"]["severity"] in ("critical", "warning"), rule["alert"]
        assert rule["labels"]["remedy"] in REMEDIES, rule["alert"]
        family = rule["annotations"]["check_id"].split(".")[0]
        assert family in ("gpu", "xid", "nic"), rule["alert"]
        assert rule["annotations"]["summary"], rule["alert"]


def test_counters_csv_exports_every_dcgm_field_the_rules_use():
    with open(os.path.join(ROLE, "files", "zhisuan-counters.csv")) as handle:
        fields = set(line.split(",")[0].strip() for line in handle if line.strip() and not line.startswith("#"))
    import re
    used = set(re.findall(r"DCGM_FI_[A-Z0-9_]+", render()))
    assert sorted(used - fields) == []


@pytest.mark.parametrize("role", ["monitoring", "check_storage"])
def test_every_variable_is_documented(role):
    with open(os.path.join(ROOT, "roles", role, "defaults", "main.yml")) as handle:
        defaults = yaml.safe_load(handle)
    with open(os.path.join(ROOT, "roles", role, "meta", "argument_specs.yml")) as handle:
        specs = yaml.safe_load(handle)["argument_specs"]
    documented = set()
    for entry in specs.values():
        documented.update(entry["options"])
    assert sorted(set(defaults) - documented) == []
    assert sorted(documented - set(defaults)) == []


# ---------------------------------------------------------------------------------------------------------------
# Grafana dashboards as code (roles/monitoring/files/dashboards, tasks_from: dashboards)

DASHBOARDS = sorted(glob.glob(os.path.join(ROLE, "files", "dashboards", "*.json")))
DASHBOARD_SCHEMA = os.path.join(ROLE, "files", "grafana-dashboard.schema.json")


def _dashboard(path):
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def _schema_errors(document):
    import jsonschema  # pylint: disable=import-outside-toplevel

    with open(DASHBOARD_SCHEMA, encoding="utf-8") as handle:
        schema = json.load(handle)
    return sorted(error.message for error in jsonschema.Draft202012Validator(schema).iter_errors(document))


@pytest.mark.parametrize("path", DASHBOARDS, ids=os.path.basename)
def test_dashboards_are_valid_dashboard_json(path):
    dashboard = _dashboard(path)
    assert _schema_errors(dashboard) == []
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    cells = set()
    for panel in dashboard["panels"]:  # panels tile the grid without overlapping
        pos = panel["gridPos"]
        assert pos["x"] + pos["w"] <= 24
        area = set((x, y) for x in range(pos["x"], pos["x"] + pos["w"]) for y in range(pos["y"], pos["y"] + pos["h"]))
        assert not area & cells, panel["title"]
        cells |= area
    variables = set(v["name"] for v in dashboard["templating"]["list"])
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            used = set(re.findall(r"\$(?!__)(\w+)", target["expr"])) | set(re.findall(r"\$\{(\w+)\}", panel["datasource"]["uid"]))
            assert used <= variables, (panel["title"], used - variables)


def test_the_schema_refuses_a_broken_dashboard():
    broken = _dashboard(DASHBOARDS[0])
    broken["panels"][0]["gridPos"]["w"] = 30
    del broken["panels"][1]["targets"][0]["refId"]
    broken["templating"]["list"][0]["type"] = "dropdown"
    errors = _schema_errors(broken)
    assert len(errors) == 3 and "30 is greater than the maximum of 24" in errors


def test_every_metric_of_the_alert_rules_has_a_panel():
    exprs = " ".join(target["expr"] for path in DASHBOARDS for panel in _dashboard(path)["panels"]
                     for target in panel["targets"])
    rules = render()
    metrics = set(re.findall(r"\b(DCGM_FI_[A-Z_]+|node_[a-z_]+)\b", rules)) - {"node_exporter"}
    assert len(metrics) >= 15
    assert sorted(m for m in metrics if m not in exprs) == []
    alerts = set(re.findall(r"alert: (\w+)", rules))
    described = " ".join(panel.get("description", "") for path in DASHBOARDS for panel in _dashboard(path)["panels"])
    assert any(alert in described for alert in alerts)


# ---------------------------------------------------------------------------------------------------------------
# one source of truth: the rules file is the collection's alert rules data (data/monitoring/alert-rules.yml)

PLACEHOLDER = re.compile(r"\$\{(\w+)\}")


def _fill(text, values, code=None):
    """The data's ${name} placeholders filled the way the rules file must show them (lists joined with ", ")."""
    def value(match):
        name = match.group(1)
        if name == "code":
            assert code is not None, text
            return str(code)
        found = values[name]
        return ", ".join(str(item) for item in found) if isinstance(found, list) else str(found)
    return PLACEHOLDER.sub(value, text)


def _expected_rules(data, values):
    """What each rule of the data must become in Prometheus' rules file, computed apart from the template."""
    groups = []
    for group in data["groups"]:
        rules = []
        for rule in group["rules"]:
            if "codes" in rule:
                codes = [code for variable in rule["codes"] for code in values[variable]]
                expr = " or ".join(_fill(rule["expr"], values, code) for code in codes)
            else:
                expr = " ".join(_fill(rule["expr"], values).split())
            out = {"alert": rule["alert"], "expr": expr,
                   "labels": {"severity": rule["severity"], "remedy": rule["remedy"]},
                   "annotations": {"check_id": rule["check_id"], "summary": _fill(rule["summary"], values)}}
            if "description" in rule:
                out["annotations"]["description"] = _fill(rule["description"], values)
            if "for" in rule:
                out["for"] = _fill(rule["for"], values)
            rules.append(out)
        groups.append({"name": group["name"], "rules": rules})
    return {"groups": groups}


@pytest.mark.parametrize("variables", [None, {"monitoring_remapped_rows_uncorrectable_max": 600,
                                              "monitoring_xid_reseat_codes": [54, 99],
                                              "monitoring_alert_for": "5m"}])
def test_the_rules_file_is_the_alert_rules_data(variables):
    values = dict(_defaults(), **(variables or {}))
    rendered = yaml.safe_load(render(variables))
    assert rendered == _expected_rules(alert_data(), values)
    assert [rule["alert"] for group in rendered["groups"] for rule in group["rules"]] == \
        [rule["alert"] for group in alert_data()["groups"] for rule in group["rules"]]
    if variables:
        text = render(variables)
        assert "DCGM_FI_DEV_XID_ERRORS == 54\n          or DCGM_FI_DEV_XID_ERRORS == 99\n" in text
        assert "(more than 600): RMA" in text and "for: 5m" in text and "for: 1m" not in text


def test_a_rule_changed_in_the_data_changes_the_rules_file():
    data = alert_data()
    rule = data["groups"][1]["rules"][0]
    rule.update(severity="warning", expr="DCGM_FI_DEV_ECC_DBE_VOL_TOTAL\n> ${monitoring_ecc_volatile_uncorrected_max} + 1",
                summary='ECC "quoted" \\ text')
    data["groups"][1]["rules"].append({"alert": "GpuExtra", "expr": "up == 0", "for": "2m", "severity": "critical",
                                       "remedy": "investigate", "check_id": "gpu.collect", "summary": "down",
                                       "meaning": "m", "action": "a"})
    rendered = yaml.safe_load(render(data=data))
    assert rendered == _expected_rules(data, _defaults())
    memory = rendered["groups"][1]["rules"]
    assert memory[0]["labels"]["severity"] == "warning" and memory[0]["expr"] == "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL > 0 + 1"
    assert memory[0]["annotations"]["summary"] == 'ECC "quoted" \\ text'
    assert memory[-1] == {"alert": "GpuExtra", "expr": "up == 0", "for": "2m",
                          "labels": {"severity": "critical", "remedy": "investigate"},
                          "annotations": {"check_id": "gpu.collect", "summary": "down"}}


def test_the_data_names_only_role_variables_and_every_rule_is_complete():
    data = alert_data()
    defaults = _defaults()
    used = set()
    for group in data["groups"]:
        for rule in group["rules"]:
            assert set(rule) <= {"alert", "expr", "codes", "for", "severity", "remedy", "check_id", "summary",
                                 "description", "meaning", "action"}, rule["alert"]
            for key in ("alert", "expr", "severity", "remedy", "check_id", "summary", "meaning", "action"):
                assert isinstance(rule.get(key), str) and rule[key].strip(), (rule["alert"], key)
            assert rule["severity"] in ("critical", "warning") and rule["remedy"] in REMEDIES, rule["alert"]
            for key in ("expr", "for", "summary", "description"):
                used.update(PLACEHOLDER.findall(rule.get(key, "")))
            used.update(rule.get("codes", []))
            assert ("${code}" in rule["expr"]) == ("codes" in rule), rule["alert"]
    used.discard("code")
    assert sorted(used) == sorted(data["parameters"])
    assert sorted(set(data["parameters"]) - set(defaults)) == []
    names = [rule["alert"] for group in data["groups"] for rule in group["rules"]]
    assert len(names) == len(set(names)) == len(_rules())


def _rules_file(role_path):
    """The role's default monitoring_alert_rules_file as Ansible renders it for a role at ``role_path``."""
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar
    try:
        from ansible.template import trust_as_template
    except ImportError:  # ansible-core < 2.19: every template string is trusted
        def trust_as_template(value):
            return value
    templar = Templar(loader=DataLoader(), variables={"role_path": role_path})
    return os.path.normpath(templar.template(trust_as_template(_defaults()["monitoring_alert_rules_file"])))


def test_the_role_reads_the_collections_data_file(tmp_path):
    with open(os.path.join(ROLE, "defaults", "main.yml")) as handle:
        text = handle.read()
    assert "monitoring_alert_rules_file" in text
    # this checkout: the collection under collections/, beside the roles
    assert _rules_file(ROLE) == ALERT_DATA
    # the installed collection (issue 27 item 5): roles/monitoring beside the collection's data/
    installed = tmp_path / "ops"
    (installed / "data" / "monitoring").mkdir(parents=True)
    (installed / "data" / "monitoring" / "alert-rules.yml").write_text("groups: []\n")
    (installed / "roles" / "monitoring").mkdir(parents=True)
    assert _rules_file(str(installed / "roles" / "monitoring")) == str(installed / "data" / "monitoring" /
                                                                        "alert-rules.yml")
    with open(os.path.join(ROLE, "tasks", "rules.yml")) as handle:
        tasks = yaml.safe_load(handle)
    install = [task for task in tasks if task["name"] == "Install the zhisuan.ops alert rules"][0]
    assert "monitoring_alert_rules_file" in install["vars"]["_monitoring_alert_rules"]
