# SPDX-License-Identifier: GPL-3.0-or-later
"""A run's verdicts as Prometheus metrics (plugin_utils/_metrics.py): the series and their values, checked by
``promtool check metrics`` (Debian's prometheus package), and the same text exported by a real node_exporter's
textfile collector and pushed to a real Pushgateway, both scraped by a real Prometheus queried over its HTTP API."""

from __future__ import annotations

import re
import subprocess

import promstack
import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.plugin_utils import _http, _metrics, _results

RUN = {"id": "20261203T170000Z-acceptance", "kind": "acceptance", "started": "2026-12-03T17:00:00+00:00",
       "finished": "2026-12-03T17:04:30+00:00", "playbook": "playbooks/acceptance.yml",
       "collection_version": "0.1.0", "ansible_version": "2.19.14"}


def _doc(kind="acceptance"):
    ok = make_check("gpu.count.present", "node01", "pass", observed=8, expected="== 8")
    warn = make_check("gpu.ecc.aggregate_uncorrectable", "node02", "warn", observed=1, expected="== 0",
                      remedy="monitor")
    fails = [make_check("gpu.ecc.volatile_uncorrectable", "node02", "fail", component="GPU %d" % gpu, observed=2,
                        expected="== 0", message='GPU %d has 2 "uncorrectable" errors\\' % gpu, remedy="reset_gpu")
             for gpu in (3, 5)]
    same_id_pass = make_check("gpu.ecc.volatile_uncorrectable", "node02", "pass", component="GPU 0", observed=0,
                              expected="== 0")
    skip = make_check("gpu.nvlink.state", "node02", "skip", observed="PCIe card")
    err = make_check("gpu.collect.nvidia_smi", "node03", "error", observed="timed out")
    hosts = {
        "node01": _results.host_record("node01", [ok]),
        "node02": _results.host_record("node02", [ok, warn, same_id_pass] + fails + [skip]),
        "node03": _results.host_record("node03", [err]),
        "node04": _results.host_record("node04", [], unreachable=True),
    }
    cluster = [make_check("baseline.driver.drift", "cluster", "warn", observed="2 versions", remedy="update_firmware")]
    return _results.build_results(dict(RUN, kind=kind, id=RUN["id"].replace("acceptance", kind)), hosts, cluster)


def samples(text):
    """{(metric, frozenset(labels)): value} of an exposition text, read independently of the renderer."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        match = re.match(r'^([a-z_]+)\{(.*)\} (\S+)$', line)
        assert match, line
        labels = frozenset(re.findall(r'([a-z_A-Z]+)="((?:[^"\\]|\\.)*)"', match.group(2)))
        key = (match.group(1), labels)
        assert key not in out, "duplicate series %s" % line
        out[key] = float(match.group(3))
    return out


def value(found, metric, **labels):
    return found[(metric, frozenset(labels.items()))]


def test_series_and_values():
    found = samples(_metrics.render(_doc()))
    kind = "acceptance"
    assert value(found, "zhisuan_check_status", kind=kind, node="node02", family="gpu",
                 check="gpu.ecc.volatile_uncorrectable") == 2   # worst of pass, fail, fail: one series
    assert value(found, "zhisuan_check_status", kind=kind, node="node02", family="gpu",
                 check="gpu.ecc.aggregate_uncorrectable") == 1
    assert value(found, "zhisuan_check_status", kind=kind, node="node03", family="gpu",
                 check="gpu.collect.nvidia_smi") == 3
    assert value(found, "zhisuan_check_status", kind=kind, node="cluster", family="baseline",
                 check="baseline.driver.drift") == 1
    assert not [key for key in found if ("check", "gpu.nvlink.state") in key[1]]   # skipped: counted only
    assert value(found, "zhisuan_checks", kind=kind, node="node02", status="skip") == 1
    assert value(found, "zhisuan_checks", kind=kind, node="node02", status="fail") == 2
    assert value(found, "zhisuan_checks", kind=kind, node="node02", status="pass") == 2
    assert value(found, "zhisuan_checks", kind=kind, node="node01", status="error") == 0
    assert [value(found, "zhisuan_node_status", kind=kind, node=node) for node in ("node01", "node02", "node03", "node04")] \
        == [0, 2, 3, 4]
    assert value(found, "zhisuan_run_duration_seconds", kind=kind) == 270
    assert value(found, "zhisuan_run_finished_timestamp_seconds", kind=kind) == 1796317470
    assert value(found, "zhisuan_run_info", kind=kind, run_id=RUN["id"], playbook="playbooks/acceptance.yml") == 1
    # the run id is on the info series only
    assert [key for key in found if any(name == "run_id" for name, dummy in key[1])] \
        == [("zhisuan_run_info", frozenset({("kind", kind), ("run_id", RUN["id"]), ("playbook", "playbooks/acceptance.yml")}))]


def test_one_node_textfile():
    found = samples(_metrics.render(_doc(), nodes=["node03"], cluster=False))
    nodes = set(dict(labels).get("node") for dummy, labels in found)
    assert nodes == {None, "node03"}
    assert _metrics.textfile_name(_doc("inspect")) == "zhisuan_inspect.prom"
    assert _metrics.pushgateway_path(_doc("inspect")) == "/metrics/job/zhisuan/kind/inspect"


def test_label_escaping():
    doc = _doc()
    doc["hosts"]["node01"]["checks"][0]["id"] = 'gpu.odd"id\\\nx'
    text = _metrics.render(doc, nodes=["node01"])
    assert 'check="gpu.odd\\"id\\\\\\nx"' in text


@pytest.mark.parametrize("doc, why", [
    ({"run": {"kind": "Accept ance"}, "hosts": {}}, "is not a lower-case word"),
    ({"hosts": {}}, "not a results document"),
    ([], "not a results document"),
])
def test_bad_documents(doc, why):
    with pytest.raises(_metrics.MetricsError, match=why):
        _metrics.render(doc)


def test_promtool_check_metrics():
    text = _metrics.render(_doc())
    proc = subprocess.run([promstack.program("promtool"), "check", "metrics"], input=text.encode(),
                          capture_output=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not proc.stdout.strip() and not proc.stderr.strip(), proc.stdout + proc.stderr   # no lint complaint


def test_promtool_sees_a_broken_text():
    """The check above can fail: the same text without the help of a series, and with a series typed counter, is
    refused."""
    text = _metrics.render(_doc())
    broken = re.sub(r"# HELP zhisuan_checks [^\n]*\n", "", text).replace(
        "# TYPE zhisuan_node_status gauge", "# TYPE zhisuan_node_status counter")
    proc = subprocess.run([promstack.program("promtool"), "check", "metrics"], input=broken.encode(),
                          capture_output=True, timeout=60, check=False)
    assert proc.returncode != 0
    assert b"zhisuan_checks no help text" in proc.stdout + proc.stderr
    assert b"zhisuan_node_status counter metrics should have" in proc.stdout + proc.stderr


def test_scraped_by_a_real_prometheus(tmp_path):
    """node_exporter exports each node's textfile, the Pushgateway the pushed group (its job label kept: honor_labels); Prometheus scrapes both."""
    textfiles = tmp_path / "textfile"
    textfiles.mkdir()
    doc = _doc()
    (textfiles / _metrics.textfile_name(doc)).write_text(_metrics.render(doc, nodes=["node02"], cluster=False))
    daemons = []
    try:
        exporter, exporter_port = promstack.node_exporter(tmp_path, textfiles)
        daemons.append(exporter)
        gateway, gateway_port = promstack.pushgateway(tmp_path)
        daemons.append(gateway)
        base = "http://127.0.0.1:%d" % gateway_port
        status, dummy = _http.request("test", "PUT", _http.join(base, _metrics.pushgateway_path(doc)),
                                      body=_metrics.render(doc), content_type="text/plain; version=0.0.4")
        assert status == 200
        server, port = promstack.prometheus(tmp_path, {
            "node": ("127.0.0.1:%d" % exporter_port, False),
            "pushgateway": ("127.0.0.1:%d" % gateway_port, True)})
        daemons.append(server)
        textfile = promstack.query(port, 'zhisuan_check_status{job="node"}', expect=3)
        assert {(s["metric"]["node"], s["metric"]["check"], s["value"][1]) for s in textfile} == {
            ("node02", "gpu.count.present", "0"), ("node02", "gpu.ecc.aggregate_uncorrectable", "1"),
            ("node02", "gpu.ecc.volatile_uncorrectable", "2")}
        worst = promstack.query(port, 'max by (node) (zhisuan_check_status{job="zhisuan"})', expect=4)
        assert {s["metric"]["node"]: s["value"][1] for s in worst} == {
            "node01": "0", "node02": "2", "node03": "3", "cluster": "1"}
        info = promstack.query(port, "zhisuan_run_info")
        assert {s["metric"]["run_id"] for s in info} == {RUN["id"]}
    finally:
        for daemon in reversed(daemons):
            daemon.stop()


def test_the_dashboard_panels_query_rendered_series():
    """The shipped dashboard's zhisuan.ops panels name series and labels the renderer writes."""
    import json
    import os
    path = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "roles", "monitoring", "files", "dashboards",
                        "zhisuan-gpu-health.json")
    with open(path, encoding="utf-8") as handle:
        exprs = [target["expr"] for panel in json.load(handle)["panels"] for target in panel["targets"]
                 if "zhisuan_" in target["expr"]]
    assert len(exprs) >= 2
    found = samples(_metrics.render(_doc()))
    names = set(metric for metric, dummy in found)
    labels = set(name for dummy, pairs in found for name, dummy2 in pairs)
    for expr in exprs:
        assert set(re.findall(r"\bzhisuan_[a-z_]+", expr)) <= names, expr
        for group in re.findall(r"by \(([^)]*)\)", expr):
            assert set(item.strip() for item in group.split(",")) <= labels, expr
