# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The drive family (issue 29 item 5): smartctl -j -a read from real captures (prometheus-community/smartctl_exporter's
test data, tests/fixtures/PROVENANCE.md), the collector through zhisuan.ops.node_collect with a real program behind
the seam, the rules, the judge's registry and the lab's smartctl."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import drive as rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._util import ThresholdError
from ansible_collections.zhisuan.ops.plugins.module_utils._storage import smartctl
from ansible_collections.zhisuan.ops.plugins.module_utils._storage.drive_collect import nvme_controllers
from ansible_collections.zhisuan.ops.plugins.modules import node_collect
from ansible_collections.zhisuan.ops.plugins.plugin_utils._judging import judge_family

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
CAPTURES = os.path.join(REPO, "tests", "fixtures", "smartctl")
HEALTHY = os.path.join(CAPTURES, "nvme-null-Micron_7450_MTFDKCC3T8TFR-nvme11.json")
BACKUP_FAILED = os.path.join(CAPTURES, "nvme-null-SAMSUNG_MZWLL3T2HAJQ-00005-nvme0.json")
WORN = os.path.join(CAPTURES, "nvme-null-INTEL_SSDPE2KX020T7-nvme6.json")
SPARE_93 = os.path.join(CAPTURES, "nvme-null-INTEL_SSDPEDMD800G4-nvme0.json")


def _text(path):
    with open(path) as handle:
        return handle.read()


def _edited(path, edit):
    """A real capture with values edited (a fault state made from a real report)."""
    data = json.loads(_text(path))
    edit(data)
    return json.dumps(data, indent="\t")


def _by_metric(checks):
    return dict((check["id"].rsplit(".", 1)[1], check) for check in checks)


@pytest.mark.parametrize("path, expected", [
    (HEALTHY, {"device": "/dev/nvme11", "model": "Micron_7450_MTFDKCC3T8TFR", "exit_status": 0, "critical_warning": 0,
               "media_errors": 0, "percentage_used": 0, "available_spare": 100, "available_spare_threshold": 10,
               "temperature": 25, "smart_passed": True, "critical_flags": []}),
    (BACKUP_FAILED, {"device": "/dev/nvme0", "model": "SAMSUNG MZWLL3T2HAJQ-00005", "exit_status": 8,
                     "critical_warning": 16, "media_errors": 0, "percentage_used": 0, "available_spare": 100,
                     "temperature": 40, "smart_passed": False, "critical_flags": ["volatile_memory_backup_failed"]}),
    (WORN, {"device": "/dev/nvme6", "percentage_used": 75, "available_spare": 99, "temperature": 19,
            "power_on_hours": 49441, "unsafe_shutdowns": 106}),
    (SPARE_93, {"device": "/dev/nvme0", "percentage_used": 51, "available_spare": 93}),
])
def test_the_parser_reads_real_reports(path, expected):
    warnings = []
    facts = smartctl.parse_drive(_text(path), warn=warnings.append)
    assert dict((key, facts[key]) for key in expected) == expected
    assert warnings == []


def test_a_report_without_the_health_log_or_with_a_read_failure_is_a_parse_error():
    def unreadable(data):
        # what smartctl reports for a device it cannot open: exit status bit 1, no health log
        data["smartctl"]["exit_status"] = 2
        data["smartctl"]["messages"] = [{"string": "Smartctl open device: /dev/nvme11 failed", "severity": "error"}]
        del data["nvme_smart_health_information_log"]
    with pytest.raises(ParseError) as info:
        smartctl.parse_drive(_edited(HEALTHY, unreadable))
    assert str(info.value) == ("smartctl: /dev/nvme11: smartctl could not read the drive (exit status 2): "
                               "Smartctl open device: /dev/nvme11 failed")
    for text in ("", "not json", "[1, 2]", '{"device": {}}'):
        with pytest.raises(ParseError):
            smartctl.parse_drive(text)


def test_a_field_of_an_odd_type_is_left_out_with_a_warning():
    warnings = []
    text = _edited(HEALTHY, lambda data: data["nvme_smart_health_information_log"].update(media_errors="many"))
    facts = smartctl.parse_drive(text, warn=warnings.append)
    assert facts["media_errors"] is None
    assert warnings == ["smartctl: /dev/nvme11: media_errors is 'many', not a count; please report"]
    checks = _by_metric(rules.judge_drive("n1", {"drives": [facts]}))
    assert checks["media_errors"]["status"] == "skip"


def test_the_rules_on_real_and_edited_reports():
    healthy = smartctl.parse_drive(_text(HEALTHY))
    checks = rules.judge_drive("n1", {"drives": [healthy], "errors": []})
    assert [check["id"] for check in checks] == [
        "drive.nvme11.critical_warning", "drive.nvme11.media_errors", "drive.nvme11.percentage_used",
        "drive.nvme11.available_spare", "drive.nvme11.temperature"]
    assert set(check["status"] for check in checks) == {"pass"}
    assert checks[0]["component"] == "drive nvme11 (Micron_7450_MTFDKCC3T8TFR)"

    failed = _by_metric(rules.judge_drive("n1", {"drives": [smartctl.parse_drive(_text(BACKUP_FAILED))]}))
    assert (failed["critical_warning"]["status"], failed["critical_warning"]["remedy"]) == ("fail", "replace_part")
    assert failed["critical_warning"]["message"] == "the drive raises a critical warning: volatile memory backup failed"

    worn = _by_metric(rules.judge_drive("n1", {"drives": [smartctl.parse_drive(_text(WORN))]}))
    assert worn["percentage_used"]["status"] == "pass"  # 75 % is below the 80 % warning
    worn = _by_metric(rules.judge_drive("n1", {"drives": [smartctl.parse_drive(_text(WORN))]},
                                        thresholds={"wear_warn_pct": 70}))
    assert (worn["percentage_used"]["status"], worn["percentage_used"]["remedy"]) == ("warn", "monitor")

    def faulty(data):
        log = data["nvme_smart_health_information_log"]
        log.update(media_errors=3, percentage_used=100, available_spare=5, temperature=81, critical_warning=2)
    bad = _by_metric(rules.judge_drive("n1", {"drives": [smartctl.parse_drive(_edited(HEALTHY, faulty))]}))
    assert dict((metric, (check["status"], check["remedy"])) for metric, check in bad.items()) == {
        "critical_warning": ("fail", "investigate"),  # the temperature bit alone: the cooling first
        "media_errors": ("fail", "replace_part"),
        "percentage_used": ("fail", "replace_part"),
        "available_spare": ("fail", "replace_part"),
        "temperature": ("fail", "investigate"),
    }
    spare = _by_metric(rules.judge_drive("n1", {"drives": [smartctl.parse_drive(_edited(
        HEALTHY, lambda data: data["nvme_smart_health_information_log"].update(available_spare=15)))]}))
    assert (spare["available_spare"]["status"], spare["available_spare"]["remedy"]) == ("warn", "monitor")


def test_no_drive_and_an_unreadable_drive():
    assert [(c["id"], c["status"]) for c in rules.judge_drive("n1", {"devices": [], "drives": [], "errors": []})] == [
        ("drive.devices.present", "skip")]
    checks = rules.judge_drive("n1", {"drives": [], "errors": [{"device": "/dev/nvme1", "error": "boom", "rc": 2}]})
    assert [(c["id"], c["status"], c["remedy"], c["message"]) for c in checks] == [
        ("drive.nvme1.readout", "error", "investigate", "boom")]
    with pytest.raises(ThresholdError):
        rules.judge_drive("n1", {"drives": []}, thresholds={"temp_warn_c": "hot"})


def test_the_judge_registry_judges_the_family():
    facts = {"devices": ["/dev/nvme0"], "drives": [smartctl.parse_drive(_text(BACKUP_FAILED))], "errors": []}
    checks, summary, unreachable = judge_family("drive", "n1", {"drive": facts})
    assert not unreachable and [c["status"] for c in checks].count("fail") == 1
    assert summary == {"count": 1, "unreadable": 0, "models": ["SAMSUNG MZWLL3T2HAJQ-00005"],
                       "percentage_used_max": 0, "temperature_max_c": 40}
    # smartctl missing: the family's collect error check
    checks, _summary, _unreachable = judge_family("drive", "n1", {"failed": True, "error_kind": "tool_not_found",
                                                                  "msg": "smartctl: not found"})
    assert [(c["id"], c["status"]) for c in checks] == [("drive.collect.smartctl", "error")]


def test_the_controllers_are_read_from_sysfs(tmp_path):
    folder = tmp_path / "sys" / "class" / "nvme"
    for name in ("nvme10", "nvme2", "nvme-subsys0", "nvme0"):
        (folder / name).mkdir(parents=True)
    assert nvme_controllers(str(tmp_path)) == ["/dev/nvme0", "/dev/nvme2", "/dev/nvme10"]
    assert nvme_controllers(str(tmp_path / "absent")) == []


def _program(tmp_path, name, body):
    path = tmp_path / name
    path.write_text("#!/bin/sh\n%s" % body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


@pytest.mark.usefixtures("as_node")
def test_node_collect_reads_every_drive_through_the_seam(tmp_path, capsys):
    # a real program behind the seam: the healthy capture for nvme0, the failing one for nvme1 (rc 8, a reading),
    # an unreadable nvme2 (rc 2, no JSON)
    program = _program(tmp_path, "smartctl", 'case "$3" in /dev/nvme0) cat %s ;; /dev/nvme1) cat %s; exit 8 ;;'
                       ' *) echo "Smartctl open device: $3 failed" >&2; exit 2 ;; esac\n' % (HEALTHY, BACKUP_FAILED))
    args = {"families": ["drive"], "options": {"drive": {"smartctl_path": program,
                                                         "devices": ["/dev/nvme0", "/dev/nvme1", "/dev/nvme2"]}}}
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            node_collect.main()
    out = json.loads(capsys.readouterr().out)
    facts = out["collected"]["drive"]["drive"]
    assert [drive["device"] for drive in facts["drives"]] == ["/dev/nvme0", "/dev/nvme1"]
    assert [(error["device"], error["rc"]) for error in facts["errors"]] == [("/dev/nvme2", 2)]
    checks, _summary, _unreachable = judge_family("drive", "n1", out["collected"]["drive"])
    assert sorted(set((c["id"].split(".")[1], c["status"]) for c in checks if c["status"] != "pass")) == [
        ("nvme1", "fail"), ("nvme2", "error")]


@pytest.mark.usefixtures("as_node")
def test_a_device_that_is_not_under_dev_is_refused(capsys):
    args = {"families": ["drive"], "options": {"drive": {"devices": ["nvme0; reboot"]}}}
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            node_collect.main()
    out = json.loads(capsys.readouterr().out)["collected"]["drive"]
    assert out["failed"] is True and out["error_kind"] == "bad_option"
    assert "the drive devices must be paths under /dev, got nvme0; reboot" in out["msg"]


def _lab(tmp_path, faults):
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"schema": 1, "node": "n1", "index": 1, "gpus": 8, "faults": faults}))
    return [sys.executable, "-I", "-S", os.path.join(REPO, "lab", "sim", "smartctl.py"), "--state", str(state)]


def test_the_lab_replays_the_capture_and_edits_only_values(tmp_path):
    command = _lab(tmp_path, [{"kind": "drive_critical_warning", "device": "/dev/nvme1", "bits": 16},
                              {"kind": "drive_media_errors", "device": "/dev/nvme1", "count": 4}])
    same = subprocess.run(command + ["-j", "-a", "/dev/nvme11"], capture_output=True, text=True, timeout=30)
    assert same.returncode == 0 and same.stdout == _text(HEALTHY)  # byte for byte
    edited = smartctl.parse_drive(subprocess.run(command + ["-j", "-a", "/dev/nvme1"], capture_output=True,
                                                 text=True, timeout=30).stdout)
    real = smartctl.parse_drive(_text(BACKUP_FAILED))
    # the fault reads as the real failing drive does
    assert [edited[key] for key in ("critical_warning", "critical_flags", "smart_passed", "exit_status")] == [
        real[key] for key in ("critical_warning", "critical_flags", "smart_passed", "exit_status")]
    assert edited["media_errors"] == 4 and edited["device"] == "/dev/nvme1"
    other = subprocess.run(command + ["-j", "-a", "/dev/nvme0"], capture_output=True, text=True, timeout=30)
    assert smartctl.parse_drive(other.stdout)["critical_warning"] == 0
    refused = subprocess.run(command + ["-x", "/dev/sda"], capture_output=True, text=True, timeout=30)
    assert refused.returncode == 2 and "only -j -a /dev/nvmeN" in refused.stderr
