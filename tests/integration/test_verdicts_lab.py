# SPDX-License-Identifier: GPL-3.0-or-later
"""The verdicts where operators look (issue 27 item 3), on the lab: an acceptance run writes each node's series for
node_exporter's textfile collector; real node_exporters (Debian's prometheus-node-exporter, one per lab node) export
them and a real Prometheus scrapes them (queried over its HTTP API). A remediation run planned from that acceptance
run silences the nodes it repairs in a real Alertmanager (Debian's prometheus-alertmanager), expires the silence of
the node it repaired and leaves that of the node whose repair failed, saying so."""

from __future__ import annotations

import os
import sys

import pytest

from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import validate

from .conftest import run_playbook
from .test_remediate_lab import FAST, Lab

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "unit"))
import promstack  # noqa: E402  (tests/unit/promstack.py)

pytestmark = pytest.mark.integration
NODES = ("node01", "node03", "node05")


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("verdicts")
    lab = Lab(tmp_path, "remediate.yml")
    daemons = []
    try:
        exporters = {}
        for node in NODES:
            folder = tmp_path / "textfile" / node
            folder.mkdir(parents=True)
            (tmp_path / node).mkdir()
            daemon, port = promstack.node_exporter(tmp_path / node, folder)
            daemons.append(daemon)
            exporters[node] = port
        server, prometheus_port = promstack.prometheus(tmp_path, dict(
            ("node_" + node, ("127.0.0.1:%d" % port, False)) for node, port in exporters.items()))
        daemons.append(server)
        (tmp_path / "am").mkdir()
        manager, manager_port = promstack.alertmanager(tmp_path / "am")
        daemons.append(manager)
        yield lab, tmp_path, prometheus_port, "http://127.0.0.1:%d" % manager_port
    finally:
        for daemon in reversed(daemons):
            daemon.stop()
        lab.down()


@pytest.fixture(scope="module")
def acceptance(stack):
    lab, tmp_path, dummy, dummy2 = stack
    run_dir = tmp_path / "acceptance"
    run_dir.mkdir()
    runner, document = run_playbook(run_dir, "acceptance.yml", lab.inventory, tags="gpu", limit=",".join(NODES),
                                    extravars={"zhisuan_metrics_textfile_dir":
                                               str(tmp_path / "textfile") + "/{{ inventory_hostname }}"})
    return runner, document, run_dir


def test_acceptance_verdicts_are_scraped_by_prometheus(stack, acceptance):
    dummy, tmp_path, port, dummy2 = stack
    runner, document, dummy3 = acceptance
    assert runner.rc == 0, runner.stdout.read()
    assert validate(document) == []
    for node in NODES:
        text = (tmp_path / "textfile" / node / "zhisuan_acceptance.prom").read_text()
        assert 'node="%s"' % node in text
        assert not [other for other in NODES if other != node and 'node="%s"' % other in text]
    worst = promstack.query(port, 'max by (node) (zhisuan_check_status{kind="acceptance"})', expect=len(NODES))
    expected = dict((node, {"pass": 0, "warn": 1, "fail": 2, "error": 3}[document["hosts"][node]["status"]])
                    for node in NODES)
    assert {s["metric"]["node"]: int(s["value"][1]) for s in worst} == expected
    assert expected["node03"] == 2 and expected["node05"] == 2 and expected["node01"] == 0
    ecc = promstack.query(port, 'zhisuan_check_status{check="gpu.ecc.volatile_uncorrectable"} == 2', expect=2)
    assert sorted(s["metric"]["node"] for s in ecc) == ["node03", "node05"]
    info = promstack.query(port, "zhisuan_run_info", expect=len(NODES))
    assert {s["metric"]["run_id"] for s in info} == {"test-run"}
    assert len(info) == len(NODES)   # one info series per node_exporter, the same run


def test_remediation_silences_then_expires(stack, acceptance):
    lab, tmp_path, dummy, alertmanager = stack
    dummy2, dummy3, run_dir = acceptance
    remediate_dir = tmp_path / "remediate"
    remediate_dir.mkdir()
    extra = dict(FAST, zhisuan_history_dir=str(remediate_dir / "history"), zhisuan_remediate_batch=5,
                 zhisuan_remediate_from=str(run_dir / "out" / "test-run" / "results.json"),
                 zhisuan_alertmanager_url=alertmanager,
                 zhisuan_remediation_policy={"limits": {"max_nodes": 6, "max_percent": 100}})
    runner, document = run_playbook(remediate_dir, "remediate.yml", lab.inventory, extravars=extra,
                                    limit="node03,node05")
    assert runner.rc == 0, runner.stdout.read()
    assert validate(document) == []
    silences = promstack.get_json(alertmanager + "/api/v2/silences")
    by_node = {}
    for silence in silences:
        node = [m["value"] for m in silence["matchers"] if m["name"] == "Hostname"]
        node = node[0] if node else silence["matchers"][0]["value"].split("(")[0]
        by_node.setdefault(node, []).append(silence)
    assert sorted(by_node) == ["node03", "node05"]
    for node in ("node03", "node05"):
        assert len(by_node[node]) == 2
        assert {s["createdBy"] for s in by_node[node]} == {"zhisuan.ops"}
        assert {s["comment"] for s in by_node[node]} == {
            "zhisuan.ops remediation run test-run: %s drained for repair (gpu.ecc.volatile_uncorrectable)" % node}
    repaired = document["hosts"]["node03"]["facts"]["remediation"]
    failed = document["hosts"]["node05"]["facts"]["remediation"]
    assert repaired["outcome"] == "repaired" and failed["outcome"] == "failed"
    # the repaired node is back: its silences expired; the failed one's stay active for an operator, said so
    assert {s["status"]["state"] for s in by_node["node03"]} == {"expired"}
    assert {s["status"]["state"] for s in by_node["node05"]} == {"active"}
    assert repaired["silences"]["state"] == "expired"
    assert sorted(repaired["silences"]["expired"]) == sorted(s["id"] for s in by_node["node03"])
    assert failed["silences"]["state"] == "active"
    assert sorted(failed["silences"]["ids"]) == sorted(s["id"] for s in by_node["node05"])
    assert "its Alertmanager silences (" in failed["message"] and "are left for an operator" in failed["message"]
