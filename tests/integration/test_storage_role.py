# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The check_storage role with the REAL fio on two local nodes (1 s jobs in a temporary folder): per-node checks
against site floors, and the concurrent run's cluster aggregate in results.json."""

from __future__ import annotations

import os
import shutil
import sys

import pytest
import yaml

from .conftest import REPO, run_playbook

pytestmark = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed (apt install fio)")


def _inventory(tmp_path, concurrent, floors):
    hosts = dict((name, {"ansible_connection": "local", "ansible_python_interpreter": sys.executable})
                 for name in ("st01", "st02"))
    inventory = {"storage_test": {"hosts": hosts, "vars": {
        "zhisuan_storage_dir": str(tmp_path / "storage"),
        "zhisuan_storage_concurrent": concurrent,
        "zhisuan_storage_jobs": [
            {"name": "seq_read", "rw": "read", "bs": "1M", "size": "8M", "runtime": 1, "iodepth": 4},
            {"name": "rand_write", "rw": "randwrite", "bs": "4k", "size": "8M", "runtime": 1, "iodepth": 8}],
        "zhisuan_thresholds": {"storage": floors}}}}
    (tmp_path / "storage").mkdir()
    path = tmp_path / "hosts.yml"
    path.write_text(yaml.safe_dump(inventory))
    return str(path)


def test_concurrent_run_keeps_node_checks_and_the_aggregate(tmp_path):
    floors = {"jobs": {"seq_read": {"bw_mib_min": 1}, "rand_write": {"iops_min": 10 ** 9}},
              "aggregate": {"read_bw_mib_min": 10 ** 9}}
    runner, document = run_playbook(tmp_path, os.path.join(REPO, "tests", "integration", "playbooks", "storage.yml"),
                                    _inventory(tmp_path, True, floors))
    assert runner.rc == 0, runner.stdout.read()
    for host in ("st01", "st02"):
        checks = dict((c["id"], c) for c in document["hosts"][host]["checks"])
        assert checks["storage.seq_read.bandwidth"]["status"] == "pass"
        assert checks["storage.seq_read.errors"]["status"] == "pass"
        assert (checks["storage.rand_write.iops"]["status"], checks["storage.rand_write.iops"]["remedy"]) == (
            "fail", "investigate")
        assert document["hosts"][host]["status"] == "fail"
        assert document["hosts"][host]["facts"]["storage"]["job_order"] == ["seq_read", "rand_write"]
    aggregate = document["cluster"]["storage"]["aggregate"]
    assert (aggregate["nodes"], aggregate["hosts"], aggregate["read_bw_job"]) == (2, ["st01", "st02"], "seq_read")
    assert aggregate["read_bw_mib"] > 0 and aggregate["write_iops"] > 0
    cluster = dict((c["id"], c) for c in document["cluster"]["checks"])
    assert cluster["storage.aggregate.read_bandwidth"]["status"] == "fail"
    assert cluster["storage.aggregate.write_bandwidth"]["status"] == "pass"
    assert os.listdir(str(tmp_path / "storage")) == []


def test_one_node_at_a_time_keeps_no_aggregate(tmp_path):
    runner, document = run_playbook(tmp_path, os.path.join(REPO, "tests", "integration", "playbooks", "storage.yml"),
                                    _inventory(tmp_path, False, {}))
    assert runner.rc == 0, runner.stdout.read()
    assert "storage" not in document["cluster"]
    statuses = set(c["status"] for host in ("st01", "st02") for c in document["hosts"][host]["checks"])
    assert statuses == {"pass"}
