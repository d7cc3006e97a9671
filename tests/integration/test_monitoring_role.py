# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The monitoring role run for real on the local machine, every path under tmp_path: check mode writes nothing,
a real run writes the units, counters and rules (the rules checked by promtool as the role installs them, and
identical to what the unit tests render), and no service is started on a machine without systemd."""

from __future__ import annotations

import os
import shutil
import sys

import pytest
import yaml

from .conftest import REPO, run_playbook

sys.path.insert(0, os.path.join(REPO, "tests", "unit"))
from test_monitoring_rules import render  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("promtool") is None or os.path.isdir("/run/systemd/system"),
                                reason="needs promtool, and a machine without systemd (the role would start services)")
PLAYBOOK = os.path.join(REPO, "tests", "integration", "playbooks", "monitoring.yml")


def _inventory(tmp_path):
    root = tmp_path / "root"
    programs = tmp_path / "programs"
    programs.mkdir()
    for name in ("node_exporter", "dcgm-exporter"):
        (programs / name).write_text("#!/bin/sh\necho stand-in for %s\n" % name)
    variables = {
        "ansible_connection": "local", "ansible_python_interpreter": sys.executable,
        "monitoring_node_exporter_install": "binary", "monitoring_dcgm_exporter_install": "binary",
        "monitoring_node_exporter_binary_src": str(programs / "node_exporter"),
        "monitoring_dcgm_exporter_binary_src": str(programs / "dcgm-exporter"),
        "monitoring_create_user": False, "monitoring_user": "nobody",
        "monitoring_bin_dir": str(root / "bin"), "monitoring_systemd_dir": str(root / "systemd"),
        "monitoring_textfile_dir": str(root / "textfile"), "monitoring_dcgm_exporter_config_dir": str(root / "dcgm"),
        "monitoring_rules_dir": str(root / "rules"), "monitoring_promtool": shutil.which("promtool"),
        "monitoring_grafana_dashboards_dir": str(root / "grafana" / "dashboards"),
        "monitoring_grafana_provisioning_dir": str(root / "grafana" / "provisioning"),
    }
    for name in ("bin", "systemd"):
        (root / name).mkdir(parents=True)
    path = tmp_path / "hosts.yml"
    path.write_text(yaml.safe_dump({"monitoring_test": {"hosts": {"mon01": variables}}}))
    return str(path), root


def _tasks(runner, status):
    return sorted(set(event["event_data"]["task"] for event in runner.events
                      if event.get("event") == status and event.get("event_data", {}).get("task")))


def test_check_mode_writes_nothing(tmp_path):
    import ansible_runner

    inventory, root = _inventory(tmp_path)
    (tmp_path / "runner").mkdir()
    runner = ansible_runner.run(private_data_dir=str(tmp_path / "runner"), playbook=PLAYBOOK, inventory=inventory,
                                cmdline="--check", quiet=True, timeout=300,
                                envvars={"ANSIBLE_CONFIG": os.path.join(REPO, "ansible.cfg"), "PATH": os.environ["PATH"]})
    assert runner.rc == 0, runner.stdout.read()
    assert "Install the zhisuan.ops alert rules" in _tasks(runner, "runner_on_ok")
    assert sorted(os.listdir(str(root))) == ["bin", "systemd"]
    assert os.listdir(str(root / "bin")) == [] and os.listdir(str(root / "systemd")) == []


def test_real_run_writes_units_counters_and_checked_rules(tmp_path):
    inventory, root = _inventory(tmp_path)
    runner, _document = run_playbook(tmp_path, PLAYBOOK, inventory)
    assert runner.rc == 0, runner.stdout.read()
    assert sorted(os.listdir(str(root / "bin"))) == ["dcgm-exporter", "node_exporter"]
    unit = (root / "systemd" / "node_exporter.service").read_text()
    assert "ExecStart=%s/node_exporter --web.listen-address=:9100 --collector.textfile.directory=%s\n" % (
        root / "bin", root / "textfile") in unit
    assert "User=nobody\n" in unit
    dcgm = (root / "systemd" / "dcgm-exporter.service").read_text()
    assert "ExecStart=%s/dcgm-exporter --address=:9400 --collectors=%s/zhisuan-counters.csv\n" % (
        root / "bin", root / "dcgm") in dcgm
    with open(os.path.join(REPO, "roles", "monitoring", "files", "zhisuan-counters.csv")) as handle:
        assert (root / "dcgm" / "zhisuan-counters.csv").read_text() == handle.read()
    assert (root / "textfile").is_dir()
    assert (root / "rules" / "zhisuan-gpu-alerts.rules.yml").read_text() == render()
    with open(os.path.join(REPO, "roles", "monitoring", "files", "dashboards", "zhisuan-gpu-health.json")) as handle:
        assert (root / "grafana" / "dashboards" / "zhisuan-gpu-health.json").read_text() == handle.read()
    provider = yaml.safe_load((root / "grafana" / "provisioning" / "zhisuan-ops.yml").read_text())
    assert provider["providers"][0]["options"]["path"] == str(root / "grafana" / "dashboards")
    assert provider["providers"][0]["type"] == "file" and provider["providers"][0]["folder"] == "zhisuan.ops"
    skipped = _tasks(runner, "runner_on_skipped")
    assert "Enable and start node_exporter" in skipped and "Enable and start dcgm-exporter" in skipped
