# SPDX-License-Identifier: GPL-3.0-or-later
"""DMTF's Redfish Protocol Validator against the lab's Redfish server (issue 11): the lab must speak standard
Redfish, so the clients tested on it are not only tested against our own assumptions. Every FAIL row of the
validator's TSV report must be one documented in lab/README.md ("DMTF Redfish Protocol Validator on the lab
server"), and there may be no more of them than documented."""

from __future__ import annotations

import csv
import glob
import os
import re
import subprocess
import sys

import pytest

from .conftest import BIN, REPO

sys.path.insert(0, REPO)
from lab.bmc import redfish_lab  # noqa: E402  (after the sys.path set-up above)

TREES = ("nvidia-dgx-h100-viking", "dell-poweredge-r750-h100-pcie")


def documented():
    """{assertion: allowed FAIL rows} from the table in lab/README.md."""
    with open(os.path.join(REPO, "lab", "README.md"), encoding="utf-8") as handle:
        text = handle.read()
    section = text.split("### DMTF Redfish Protocol Validator on the lab server", 1)[1].split("\n### ", 1)[0]
    rows = re.findall(r"^\| `([A-Z0-9_]+)` \| (\d+)", section, re.MULTILINE)
    assert rows, "no documented validator failures table in lab/README.md"
    return dict((name, int(count)) for name, count in rows)


@pytest.mark.parametrize("tree", TREES)
def test_the_protocol_validator_finds_only_the_documented_failures(tmp_path, tree):
    endpoint = redfish_lab.start(str(tmp_path / "run"), [{"node": "n1", "tree": tree, "faults": []}])["n1"]
    report = tmp_path / "report"
    env = dict((key, value) for key, value in os.environ.items() if key not in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"))
    try:
        run = subprocess.run([os.path.join(BIN, "rf_protocol_validator"), "-r", "https://127.0.0.1:%d" % endpoint["port"],
                              "-u", endpoint["username"], "-p", endpoint["password"], "--ca-bundle", endpoint["ca_path"],
                              "--report-dir", str(report), "--report-type", "tsv", "--avoid-http-redirect"],
                             capture_output=True, text=True, timeout=400, env=env, cwd=str(tmp_path))
    finally:
        redfish_lab.stop(str(tmp_path / "run"))
    summary = re.search(r"Summary - PASS: (\d+), WARN: (\d+), FAIL: (\d+), NOT_TESTED: (\d+)", run.stdout + run.stderr)
    assert summary, run.stdout[-2000:] + run.stderr[-2000:]
    tsv = glob.glob(str(report / "*.tsv"))
    assert len(tsv) == 1
    with open(tsv[0], encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    failed = [row for row in rows if row["Result"] == "FAIL"]
    passed = [row for row in rows if row["Result"] == "PASS"]
    assert len(failed) == int(summary.group(3)) and len(passed) == int(summary.group(1)) > 200
    allowed = documented()
    unexplained = [(row["Assertion"], row["URI"], row["Message"]) for row in failed if row["Assertion"] not in allowed]
    assert unexplained == []
    for name, count in allowed.items():
        assert len([row for row in failed if row["Assertion"] == name]) <= count, name
    assert len(failed) <= sum(allowed.values())
    # the certificate was checked against the lab CA: no TLS failure anywhere
    assert not [row for row in rows if "CERTIFICATE_VERIFY_FAILED" in row["Message"]]
    # the password never reaches the report
    with open(tsv[0], encoding="utf-8") as handle:
        assert endpoint["password"] not in handle.read()
