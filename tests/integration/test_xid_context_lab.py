# SPDX-License-Identifier: GPL-3.0-or-later
"""Xid 13 / 31 / 43 by NVIDIA's investigatory workflows and the clearing rules, on the lab (issue 24 items 7 and 8):
lab/scenarios/xid-context.yml edits the first real Xid line of the gpud capture into each node's real kernel log.
``diagnose.yml --tags xid`` (quick): the same GPC/TPC in two incidents is a possible hardware fault (investigate) and
its Xid 43s pass; faults at other places each time stay the application's (restart_app) although there are three; MMU
faults repeated on one GPU alone are investigated; an Xid 13 the log has been quiet about for two hours is cleared."""

from __future__ import annotations

import pytest

from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import validate

from .conftest import run_playbook, start_lab, stop_lab


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("xidctx")
    inventory = start_lab(tmp_path, "xid-context.yml")
    try:
        yield run_playbook(tmp_path, "diagnose.yml", inventory, tags="xid",
                           extravars={"zhisuan_diag_level": "quick", "check_dcgm_timeout": 4})
    finally:
        stop_lab(tmp_path)


def xid(document, host, code):
    return [c for c in document["hosts"][host]["checks"] if c["id"] == "xid.%d.events" % code]


def test_the_workflows_and_clearing_on_the_lab(run):
    runner, document = run
    assert runner.rc == 0, runner.stdout.read()[-3000:]
    assert validate(document) == []
    [same] = xid(document, "same01", 13)
    assert (same["status"], same["remedy"]) == ("warn", "investigate")
    assert "GPC 8 TPC 5 in 2 incidents" in same["message"] and "WORKFLOW_XID_13" in same["message"]
    [channel] = xid(document, "same01", 43)
    assert (channel["status"], channel["remedy"]) == ("pass", "none")
    [places] = xid(document, "places01", 13)
    assert (places["status"], places["remedy"]) == ("warn", "restart_app")
    assert "each of 3 incidents faulted at other GPC/TPC" in places["message"]
    [mmu] = xid(document, "mmu01", 31)
    assert (mmu["status"], mmu["remedy"]) == ("warn", "investigate")
    assert "MMU faults repeated on this GPU alone in 2 incidents (MMU fault of GRAPHICS GPCCLIENT_T1_6)" in \
        mmu["message"]
    [quiet] = xid(document, "quiet01", 13)
    assert (quiet["status"], quiet["remedy"]) == ("pass", "none")
    assert "2.0 h of quiet to the log's end" in quiet["message"] and "cleared" in quiet["message"]
