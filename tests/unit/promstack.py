# SPDX-License-Identifier: GPL-3.0-or-later
"""Real Prometheus daemons for the tests, from Debian's packages (tests/sysdeps.sh): Prometheus, node_exporter with
the textfile collector, a Pushgateway and Alertmanager, each started on loopback on a free port with its own
configuration and storage in a temporary folder, and stopped by the test that started it."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.request

import pytest

PROGRAMS = {
    "prometheus": "prometheus (apt install prometheus)",
    "prometheus-node-exporter": "prometheus-node-exporter (apt install prometheus-node-exporter)",
    "prometheus-pushgateway": "prometheus-pushgateway (apt install prometheus-pushgateway)",
    "prometheus-alertmanager": "prometheus-alertmanager (apt install prometheus-alertmanager)",
    "promtool": "promtool (apt install prometheus)",
}


def program(name):
    path = shutil.which(name) or (os.path.exists("/usr/bin/" + name) and "/usr/bin/" + name)
    if not path:
        pytest.fail("%s is not installed: run tests/sysdeps.sh as root" % PROGRAMS[name])
    return path


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def get_json(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as answer:  # noqa: S310 - loopback
        return json.loads(answer.read().decode("utf-8"))


class Daemon:
    def __init__(self, name, argv, log, ready_url):
        self.name, self.log_path, self.ready_url = name, log, ready_url
        self.log = open(log, "wb")  # pylint: disable=consider-using-with
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT)  # pylint: disable=consider-using-with
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(ready_url, timeout=2):  # noqa: S310 - loopback
                    return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    with open(log, encoding="utf-8", errors="replace") as handle:
                        pytest.fail("%s did not start: %s" % (name, handle.read()[-2000:]))
                time.sleep(0.2)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.log.close()


def node_exporter(tmp, textfile_dir):
    port = free_port()
    argv = [program("prometheus-node-exporter"), "--web.listen-address=127.0.0.1:%d" % port,
            "--collector.disable-defaults", "--collector.textfile",
            "--collector.textfile.directory=%s" % textfile_dir]
    return Daemon("node_exporter", argv, str(tmp / "node_exporter.log"), "http://127.0.0.1:%d/metrics" % port), port


def pushgateway(tmp):
    port = free_port()
    argv = [program("prometheus-pushgateway"), "--web.listen-address=127.0.0.1:%d" % port]
    return Daemon("pushgateway", argv, str(tmp / "pushgateway.log"), "http://127.0.0.1:%d/-/ready" % port), port


def prometheus(tmp, targets):
    """Prometheus scraping ``targets`` (job name -> (host:port, honor_labels)) every second."""
    port = free_port()
    config = tmp / "prometheus.yml"
    jobs = []
    for job, (target, honor) in sorted(targets.items()):
        jobs.append("  - job_name: %s\n    honor_labels: %s\n    static_configs:\n      - targets: ['%s']\n"
                    % (job, "true" if honor else "false", target))
    config.write_text("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n" + "".join(jobs))
    argv = [program("prometheus"), "--config.file=%s" % config, "--storage.tsdb.path=%s" % (tmp / "tsdb"),
            "--web.listen-address=127.0.0.1:%d" % port]
    return Daemon("prometheus", argv, str(tmp / "prometheus.log"), "http://127.0.0.1:%d/-/ready" % port), port


def alertmanager(tmp):
    port = free_port()
    config = tmp / "alertmanager.yml"
    config.write_text("route:\n  receiver: none\nreceivers:\n  - name: none\n")
    argv = [program("prometheus-alertmanager"), "--config.file=%s" % config, "--storage.path=%s" % (tmp / "am"),
            "--web.listen-address=127.0.0.1:%d" % port, "--cluster.listen-address="]
    return Daemon("alertmanager", argv, str(tmp / "alertmanager.log"), "http://127.0.0.1:%d/-/ready" % port), port


def query(port, promql, wait=30, expect=1):
    """The result vector of an instant query, waiting up to ``wait`` seconds for it to hold at least ``expect``
    series (the targets are scraped one after the other: a series written to several nodes at once appears node by
    node)."""
    deadline = time.monotonic() + wait
    url = "http://127.0.0.1:%d/api/v1/query?query=%s" % (port, urllib.request.quote(promql))
    while True:
        answer = get_json(url)
        assert answer["status"] == "success", answer
        if len(answer["data"]["result"]) >= expect or time.monotonic() > deadline:
            return answer["data"]["result"]
        time.sleep(0.5)
