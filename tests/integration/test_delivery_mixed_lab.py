# SPDX-License-Identifier: GPL-3.0-or-later
"""Delivery's BMC checks on a mixed fleet drawn from the real vendor trees of the corpus (issue 22 item 8): the lab's
Redfish server serves HPE iLO 5, Lenovo XCC, Supermicro HGX and DGX H100 trees side by side. The truths come from
tests/fixtures/redfish/CORPUS.yml (read off the JSON by hand), never from the product's own output."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import yaml

from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import validate

from .conftest import REPO, run_playbook, start_lab

NODES = {"hpe01": "hpe-proliant-xl675d-gen10plus-a100", "lenovo01": "lenovo-thinksystem-sr670-v2",
         "smc01": "supermicro-sys-821ge-tnhr-hgx-h100", "dgx01": "nvidia-dgx-h100-viking"}


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("mixed")
    inventory = start_lab(tmp_path, "delivery-mixed.yml")
    try:
        runner, document = run_playbook(tmp_path, "delivery.yml", inventory, tags="bmc",
                                        extravars={"zhisuan_power_on": False})
        yield runner, document
    finally:
        subprocess.run([sys.executable, os.path.join(REPO, "lab", "labctl.py"), "down", "--dir", str(tmp_path / "lab")],
                       capture_output=True, timeout=60)


def corpus():
    with open(os.path.join(REPO, "tests", "fixtures", "redfish", "CORPUS.yml"), encoding="utf-8") as handle:
        return yaml.safe_load(handle)["trees"]


def checks(document, host, check_id):
    return [c for c in document["hosts"][host]["checks"] if c["id"] == check_id]


def test_every_vendor_is_recorded_without_a_collect_error(mixed):
    runner, document = mixed
    assert runner.rc == 0, runner.stdout.read()
    assert validate(document) == []
    assert sorted(document["hosts"]) == sorted(NODES)
    for host in NODES:
        errors = [(c["id"], c["message"]) for c in document["hosts"][host]["checks"]
                  if c["id"].startswith("bmc.collect") and c["status"] == "error"]
        assert errors == [], host


def test_eight_gpus_are_found_wherever_the_vendor_puts_them(mixed):
    _, document = mixed
    truths = corpus()
    for host, tree in NODES.items():
        if tree in truths:
            assert truths[tree]["gpus"]["count"] == 8
        count = checks(document, host, "bmc.gpu.count")
        assert [c["status"] for c in count] == ["pass"], (host, count)
        assert not [c for c in document["hosts"][host]["checks"] if c["remedy"] == "reseat"], host


def test_identity_is_each_trees_own(mixed):
    _, document = mixed
    truths = corpus()
    for host, tree in NODES.items():
        if tree not in truths:
            continue
        text = repr(document["hosts"][host])
        assert truths[tree]["serial"] in text, host
        assert truths[tree]["model"] in text, host


def test_the_asset_list_has_each_vendors_gpus_and_no_shared_serial(mixed):
    """Issue 26 item 6: without the GPU family the asset list counts the GPUs the BMC lists, wherever the vendor
    puts them; four vendors' serials are four nodes' own."""
    _, document = mixed
    truths = corpus()
    for host, tree in NODES.items():
        gpus = [part for part in document["hosts"][host]["facts"]["bmc"]["parts"] if part["kind"] == "gpu"]
        assert len(gpus) == 8, host
        assert document["hosts"][host]["facts"]["bmc"]["gpu_count"] == 8, host
        if tree in truths:
            assert truths[tree]["serial"] in document["hosts"][host]["facts"]["bmc"]["serial"], host
    duplicate = [c for c in document["cluster"]["checks"] if c["id"] == "assets.serial.duplicate"]
    assert [c["status"] for c in duplicate] == ["pass"], duplicate
