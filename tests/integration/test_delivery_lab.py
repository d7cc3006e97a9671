# SPDX-License-Identifier: GPL-3.0-or-later
"""Delivery on the lab with real BMC peers (issue 4): our Redfish server over captured vendor trees and ipmi_sim
reached with real ipmitool. The power-on faults appear with their remedies; no BMC password reaches any output."""

from __future__ import annotations

import csv
import io
import os

import pytest
import yaml

from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import validate

from .conftest import REPO, run_playbook, start_lab


@pytest.fixture(scope="module")
def delivery(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("delivery")
    inventory = start_lab(tmp_path, "delivery.yml")
    try:
        runner, document = run_playbook(tmp_path, "delivery.yml", inventory)
        yield tmp_path, inventory, runner, document
    finally:
        import subprocess
        import sys
        subprocess.run([sys.executable, os.path.join(REPO, "lab", "labctl.py"), "down", "--dir", str(tmp_path / "lab")],
                       capture_output=True, timeout=60)


def failing(document, host):
    return sorted(set((c["id"], c["status"], c["remedy"]) for c in document["hosts"][host]["checks"]
                      if c["status"] in ("fail", "error")))


def test_delivery_run_is_recorded(delivery):
    _, _, runner, document = delivery
    assert runner.rc == 0, runner.stdout.read()
    assert validate(document) == []
    assert document["run"]["kind"] == "delivery"
    assert document["hosts"]["ipmi01"]["status"] == "pass"
    assert document["hosts"]["dgx01"]["status"] in ("pass", "warn")


def test_each_power_on_fault_has_its_remedy(delivery):
    _, _, _, document = delivery
    assert ("bmc.psu.health", "fail", "replace_part") in failing(document, "dgx02")
    assert ("bmc.sel.critical", "fail", "investigate") in failing(document, "dgx03")
    assert ("baseline.bios.version", "fail", "update_firmware") in failing(document, "dgx04")
    assert ("baseline.bios.turbo", "fail", "tune") in failing(document, "dgx04")
    assert ("bmc.gpu.count", "fail", "reseat") in failing(document, "dgx05")
    assert ("bmc.collect.bmc", "error", "investigate") in failing(document, "dgx06")
    assert ("bmc.collect.bmc", "error", "investigate") in failing(document, "dgx07")
    assert {("bmc.psu.health", "fail", "replace_part"), ("bmc.sensor.temperature", "fail", "investigate")} <= set(
        failing(document, "ipmi02"))
    messages = dict((c["id"], c["message"]) for c in document["hosts"]["dgx06"]["checks"])
    assert "authentication failed" in messages["bmc.collect.bmc"]


def test_fleet_drift_names_the_node_on_old_firmware(delivery):
    _, _, _, document = delivery
    drift = [c for c in document["cluster"]["checks"] if c["id"] == "baseline.bios.drift"]
    # compared per server model: the DGX H100 nodes disagree (dgx04), the single Dell agrees with itself
    assert sorted((c["component"], c["status"]) for c in drift) == [
        ("DGXH100: BIOS", "fail"), ("PowerEdge R750: BIOS", "pass")]
    assert "dgx04" in [c for c in drift if c["status"] == "fail"][0]["message"]


def test_delivery_report_has_assets_and_marked_drift(delivery):
    tmp_path, _, _, _ = delivery
    html = (tmp_path / "out" / "test-run" / "report.html").read_text()
    assert "Assets and baseline" in html
    assert html.count('class="st-fail drift"') == 1  # dgx04's BIOS


def test_asset_list(delivery):
    tmp_path, _, _, document = delivery
    rows = list(csv.DictReader(io.StringIO((tmp_path / "out" / "test-run" / "assets.csv").read_text())))
    assert [row["node"] for row in rows] == ["dgx01", "dgx02", "dgx03", "dgx04", "dgx05", "dgx06", "dgx07",
                                              "dell01", "ipmi01", "ipmi02"]
    dgx01 = rows[0]
    assert (dgx01["rack"], dgx01["u"], dgx01["model"]) == ("R01", "1", "DGXH100")
    assert dgx01["serial"] and dgx01["bios_version"]
    # issue 26 item 6: the list says what the report and the checks say
    by_node = dict((row["node"], row) for row in rows)
    for name in ("dgx01", "dgx04"):
        assert by_node[name]["bios_version"] == document["hosts"][name]["facts"]["baseline"]["versions"]["bios"]
    assert by_node["dgx04"]["bios_version"] != by_node["dgx01"]["bios_version"]  # the outlier baseline.bios.drift names
    assert (dgx01["gpu_model"], dgx01["gpu_count"]) == ("H100 80GB HBM3", "8")  # from the BMC: no GPU family here
    assert by_node["dgx05"]["gpu_count"] == "7"  # the GPU its BMC lost (bmc.gpu.count fails)
    redfish = [row["serial"] for row in rows if row["node"].startswith("dgx") and row["serial"]]
    assert len(redfish) == len(set(redfish)) >= 5  # one captured tree, each lab node its own serial
    parts = list(csv.DictReader(io.StringIO((tmp_path / "out" / "test-run" / "assets-components.csv").read_text())))
    gpus = [row for row in parts if row["node"] == "dgx01" and row["kind"] == "gpu"]
    assert len(gpus) == 8 and all(row["serial"] and row["firmware"] and row["source"] == "bmc" for row in gpus)
    duplicate = [c for c in document["cluster"]["checks"] if c["id"] == "assets.serial.duplicate"]
    assert [c["status"] for c in duplicate] == ["pass"], duplicate  # no false duplicate on the lab


def test_no_bmc_password_in_any_output(delivery):
    tmp_path, inventory, runner, _ = delivery
    with open(inventory) as handle:
        hosts = yaml.safe_load(handle)["all"]["children"]["gpu_nodes"]["hosts"]
    secrets = set(hv["bmc_password"] for hv in hosts.values() if hv.get("bmc_password"))
    assert len(secrets) >= 2
    outputs = [runner.stdout.read()]
    for base in (tmp_path / "out", tmp_path / "runner" / "artifacts"):
        for folder, _, files in os.walk(str(base)):
            for name in files:
                with open(os.path.join(folder, name), errors="replace") as handle:
                    outputs.append(handle.read())
    with open(os.path.join(str(tmp_path), "lab", "bmc", "redfish.log"), errors="replace") as handle:
        outputs.append(handle.read())
    leaked = [secret for secret in secrets for text in outputs if secret in text]
    assert leaked == []


def test_bmc_actions_on_live_peers(tmp_path):
    inventory = start_lab(tmp_path, "delivery.yml")
    try:
        runner, _ = run_playbook(tmp_path, os.path.join(REPO, "tests", "integration", "playbooks", "bmc_actions.yml"),
                                 inventory)
        assert runner.rc == 0, runner.stdout.read()
        assert runner.stats["ok"]["dgx01"] >= 10 and runner.stats["ok"]["ipmi01"] >= 3
    finally:
        import subprocess
        import sys
        subprocess.run([sys.executable, os.path.join(REPO, "lab", "labctl.py"), "down", "--dir", str(tmp_path / "lab")],
                       capture_output=True, timeout=60)
