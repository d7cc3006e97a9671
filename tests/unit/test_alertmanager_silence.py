# SPDX-License-Identifier: GPL-3.0-or-later
"""Silences of a node under repair against a real Alertmanager (Debian's prometheus-alertmanager, started here on
loopback), and the findings as CloudEvents posted to a webhook (a real HTTP server in this process)."""

from __future__ import annotations

import datetime
import http.server
import json
import threading

import promstack
import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.plugin_utils import _alertmanager, _http, _results


@pytest.fixture(name="alertmanager")
def fixture_alertmanager(tmp_path):
    daemon, port = promstack.alertmanager(tmp_path)
    try:
        yield "http://127.0.0.1:%d" % port
    finally:
        daemon.stop()


def silences(url):
    return promstack.get_json(url + "/api/v2/silences")


def test_create_then_expire(alertmanager):
    ids = _alertmanager.create(alertmanager, "node07", "gpu.ecc.volatile_uncorrectable", "run-1", 3600)
    assert len(ids) == 2
    other = _alertmanager.create(alertmanager, "node08", "xid.79.events", "run-1", 3600)
    live = dict((item["id"], item) for item in silences(alertmanager))
    assert set(ids) | set(other) == set(live)
    mine = [live[item] for item in ids]
    assert {item["status"]["state"] for item in mine} == {"active"}
    assert {item["createdBy"] for item in mine} == {"zhisuan.ops"}
    assert {item["comment"] for item in mine} == {
        "zhisuan.ops remediation run run-1: node07 drained for repair (gpu.ecc.volatile_uncorrectable)"}
    assert sorted((m["name"], m["value"], m["isRegex"]) for item in mine for m in item["matchers"]) == [
        ("Hostname", "node07", False), ("instance", "node07(:[0-9]+)?", True)]
    ends = datetime.datetime.fromisoformat(mine[0]["endsAt"].replace("Z", "+00:00"))
    assert 3500 < (ends - datetime.datetime.now(datetime.timezone.utc)).total_seconds() <= 3600

    assert sorted(_alertmanager.expire(alertmanager, "node07")) == sorted(ids)
    states = dict((item["id"], item["status"]["state"]) for item in silences(alertmanager))
    assert [states[item] for item in ids] == ["expired", "expired"]
    assert [states[item] for item in other] == ["active", "active"]   # another node's silences stay
    assert _alertmanager.expire(alertmanager, "node07") == []          # nothing left to expire


def test_an_operators_silence_is_left_alone(alertmanager):
    body = _alertmanager.silence_bodies("node07", "x", "r", 600, datetime.datetime.now(datetime.timezone.utc))[0]
    body["createdBy"] = "operator@example"
    dummy, answer = _http.request_json("test", "POST", alertmanager + "/api/v2/silences", body=body)
    assert _alertmanager.expire(alertmanager, "node07") == []
    assert [item["status"]["state"] for item in silences(alertmanager) if item["id"] == answer["silenceID"]] == ["active"]


def test_unreachable_alertmanager_names_the_service():
    port = promstack.free_port()
    with pytest.raises(_http.HTTPError, match=r"zhisuan.ops alertmanager: POST http://127.0.0.1:%d/api/v2/silences "
                                              r"failed" % port):
        _alertmanager.create("http://user:secret@127.0.0.1:%d" % port, "node07", "c", "r", 60, timeout=2)
    try:
        _alertmanager.create("http://user:secret@127.0.0.1:%d" % port, "node07", "c", "r", 60, timeout=2)
    except _http.HTTPError as exc:
        assert "secret" not in str(exc)


def test_refused_silence_is_an_error_with_the_answer(alertmanager):
    with pytest.raises(_http.HTTPError, match="answered HTTP 422: .*endsAt in body is required"):
        _http.request_json("zhisuan.ops alertmanager", "POST", alertmanager + "/api/v2/silences",
                           body={"matchers": [], "createdBy": "x", "comment": "x"})
    with pytest.raises(_http.HTTPError, match="positive number of seconds"):
        _alertmanager.create(alertmanager, "node07", "c", "r", 0)


class _Hook(http.server.BaseHTTPRequestHandler):
    received = []
    fail_after = None

    def do_POST(self):  # noqa: N802 - http.server's name
        length = int(self.headers["Content-Length"])
        _Hook.received.append((self.headers["Content-Type"], json.loads(self.rfile.read(length))))
        code = 500 if _Hook.fail_after is not None and len(_Hook.received) > _Hook.fail_after else 202
        self.send_response(code)
        self.end_headers()

    def log_message(self, *args):  # quiet
        pass


@pytest.fixture(name="webhook")
def fixture_webhook():
    _Hook.received, _Hook.fail_after = [], None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hook)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield "http://127.0.0.1:%d/hook" % server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def _doc():
    hosts = {
        "node01": _results.host_record("node01", [make_check("gpu.count.present", "node01", "pass", observed=8)]),
        "node02": _results.host_record("node02", [
            make_check("gpu.ecc.volatile_uncorrectable", "node02", "fail", component="GPU 3", observed=2,
                       remedy="reset_gpu"),
            make_check("gpu.nvlink.state", "node02", "skip")]),
    }
    run = {"id": "r-9", "kind": "inspect", "started": "2026-12-03T17:00:00+00:00",
           "finished": "2026-12-03T17:01:00+00:00", "playbook": "playbooks/inspect.yml"}
    return _results.build_results(run, hosts, [make_check("baseline.driver.drift", "cluster", "warn", remedy="tune")])


def test_findings_are_cloudevents(webhook):
    events = _alertmanager.findings(_doc())
    assert [event["subject"] for event in events] == ["node02/gpu.ecc.volatile_uncorrectable",
                                                      "cluster/baseline.driver.drift"]
    for event in events:
        _http.request("test", "POST", webhook, body=json.dumps(event),
                      content_type=_alertmanager.CLOUDEVENTS_CONTENT_TYPE)
    assert len(_Hook.received) == 2
    content_type, first = _Hook.received[0]
    assert content_type == "application/cloudevents+json; charset=utf-8"
    # CloudEvents 1.0 required attributes, structured mode
    assert {key: first[key] for key in ("specversion", "type", "source", "datacontenttype", "time")} == {
        "specversion": "1.0", "type": "io.github.zhisuan-ops.finding", "source": "/zhisuan.ops/inspect",
        "datacontenttype": "application/json", "time": "2026-12-03T17:01:00+00:00"}
    assert first["data"]["status"] == "fail" and first["data"]["run_id"] == "r-9"
    assert len({event["id"] for dummy, event in _Hook.received}) == 2


def test_failed_post_is_an_error_naming_the_webhook(webhook):
    _Hook.fail_after = 0
    with pytest.raises(_http.HTTPError, match=r"findings webhook: POST http://127.0.0.1:\d+/hook answered HTTP 500"):
        _http.request("findings webhook", "POST", webhook, body="{}", timeout=5)
