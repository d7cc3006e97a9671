# SPDX-License-Identifier: GPL-3.0-or-later
"""The InfiniBand subnet as a whole on the SSH lab (issue 23): lab/scenarios/fabric-ib-subnet.yml serves the
subnet's ``ibnetdiscover -p`` view (the real EDR capture of treydock/infiniband_exporter) with o0001's and o0002's
cables swapped on their leaf and p0001's cable pulled. acceptance.yml --tags cabling runs ibnetdiscover once (on
the play's first node) and fails the swapped and the missing link from the subnet's view, with check_cable. The
same run judges a saved ibdiagnet output (zhisuan_ibdiagnet_file: a copy of the real 2.7.0 capture of
ydanzig/logParserTask, a 2x link among its Speed / Width errors) as the fabric's cluster checks."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import validate

from .conftest import REPO, run_playbook, start_lab

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the SSH lab creates network namespaces (root only)")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("ibsubnet")
    inventory = start_lab(tmp_path, "fabric-ib-subnet.yml")
    try:
        (tmp_path / "cabling").mkdir()
        ibdiagnet = tmp_path / "ibdiagnet.txt"
        shutil.copyfile(os.path.join(REPO, "tests", "fixtures", "ib", "ibdiagnet-2.7.0-fabric-42-nodes-logparsertask.txt"),
                        str(ibdiagnet))
        yield run_playbook(tmp_path / "cabling", "acceptance.yml", inventory, tags="cabling",
                           extravars={"zhisuan_ibdiagnet_file": str(ibdiagnet)})
    finally:
        subprocess.run([sys.executable, os.path.join(REPO, "lab", "labctl.py"), "down", "--dir", str(tmp_path / "lab")],
                       capture_output=True, timeout=120, check=False)


def check(document, host, check_id):
    [found] = [c for c in document["hosts"][host]["checks"] if c["id"] == check_id]
    return found


def test_the_swapped_and_the_pulled_cable_fail_from_the_subnets_view(lab):
    runner, document = lab
    assert runner.rc == 0, runner.stdout.read()[-3000:]
    assert validate(document) == []
    swapped = check(document, "o0001", "cabling.ib.hca_1_1.neighbor")
    assert (swapped["status"], swapped["remedy"], swapped["observed"]) == ("fail", "check_cable", "ib-i1l1s01 port 11")
    assert swapped["evidence"].startswith("ibnetdiscover: ")
    other = check(document, "o0002", "cabling.ib.hca_1_1.neighbor")
    assert (other["status"], other["observed"]) == ("fail", "ib-i1l1s01 port 10")
    pulled = check(document, "p0001", "cabling.ib.hca_1_1.neighbor")
    assert (pulled["status"], pulled["remedy"], pulled["observed"]) == ("fail", "check_cable", "no live link")
    cluster = dict((c["id"], c) for c in document["cluster"]["checks"])
    assert cluster["cabling.ib.isl.neighbor"]["status"] == "pass"
    assert cluster["cabling.ib.isl.rate"]["status"] == "pass"


def test_a_saved_ibdiagnet_output_is_judged_in_the_cabling_run(lab):
    runner, document = lab
    assert runner.rc == 0, runner.stdout.read()[-3000:]
    cluster = dict((c["id"], c) for c in document["cluster"]["checks"])
    links = cluster["cabling.ibdiagnet.links"]
    assert (links["status"], links["remedy"]) == ("fail", "check_cable")
    assert "actual link width is 2x" in links["evidence"]
    assert cluster["cabling.ibdiagnet.subnet"]["status"] == "warn"
