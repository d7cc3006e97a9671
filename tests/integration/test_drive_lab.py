# SPDX-License-Identifier: GPL-3.0-or-later
"""The drive family on the lab (issue 29 item 5): inspect.yml --tags drive on lab/scenarios/drive.yml, every node's two
NVMe drives read with the lab's smartctl (a real report, values edited per fault), each fault found with its remedy;
without the tag the inspection has no drive check (the family is opt-in)."""

from __future__ import annotations

import pytest

from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import validate

from .conftest import run_playbook, start_lab


def _failing(document, host):
    return sorted((c["id"], c["status"], c["remedy"]) for c in document["hosts"][host]["checks"]
                  if c["status"] not in ("pass", "skip"))


@pytest.fixture(scope="module")
def drive_lab(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("drive")
    return tmp_path, start_lab(tmp_path, "drive.yml")


def test_inspect_tags_drive_finds_each_fault(drive_lab):
    tmp_path, inventory = drive_lab
    runner, document = run_playbook(tmp_path / "tagged", "inspect.yml", inventory, tags="drive")
    assert runner.rc == 0, runner.stdout.read()
    assert validate(document) == []
    assert document["run"]["families"] == ["drive"]
    healthy = document["hosts"]["healthy01"]["checks"]
    assert len(healthy) == 10 and set(c["status"] for c in healthy) == {"pass"}
    assert _failing(document, "backup01") == [("drive.nvme1.critical_warning", "fail", "replace_part")]
    assert _failing(document, "media01") == [("drive.nvme0.media_errors", "fail", "replace_part")]
    assert _failing(document, "worn01") == [("drive.nvme0.percentage_used", "warn", "monitor"),
                                            ("drive.nvme1.available_spare", "fail", "replace_part")]
    assert document["hosts"]["healthy01"]["facts"]["drive"]["count"] == 2


def test_the_inspection_without_the_tag_reads_no_drive(drive_lab):
    tmp_path, inventory = drive_lab
    runner, document = run_playbook(tmp_path / "plain", "inspect.yml", inventory)
    assert runner.rc == 0, runner.stdout.read()
    assert "drive" not in document["run"]["families"]
    assert not [c for host in document["hosts"].values() for c in host["checks"] if c["id"].startswith("drive.")]
