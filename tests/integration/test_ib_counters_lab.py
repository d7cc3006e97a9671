# SPDX-License-Identifier: GPL-3.0-or-later
"""InfiniBand port error counters as rates over a window, on the SSH lab (issue 24 item 5):
lab/scenarios/fabric-ib-counters.yml gives each node the real sysfs counters of procfs' test tree under its
``zhisuan_host_root`` and the lab's ticker grows the faulted ones while net_info reads them twice a window apart
(``check_net_counter_window``, 5 s). ``acceptance.yml --tags rdma``: n02's symbol errors (2 a second, 7200 an hour
against the field's 120) fail ``rdma.port.errors`` with ``check_cable`` on mlx5_1 alone; n03's link error recovery
warns (``monitor``) on mlx5_4; n01, whose counters do not move, passes every port. The ticker is stopped by
``labctl down``."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import validate

from .conftest import REPO, run_playbook, start_lab

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the SSH lab creates network namespaces (root only)")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("ibcounters")
    inventory = start_lab(tmp_path, "fabric-ib-counters.yml")
    try:
        counter = tmp_path / "lab" / "nodes" / "n02" / "root" / "sys" / "class" / "infiniband" / "mlx5_1" / \
            "ports" / "1" / "counters" / "symbol_error"
        first = int(counter.read_text())
        time.sleep(1.5)
        grown = int(counter.read_text()) - first
        runner, document = run_playbook(tmp_path, "acceptance.yml", inventory, tags="rdma")
        yield runner, document, grown, tmp_path
    finally:
        subprocess.run([sys.executable, os.path.join(REPO, "lab", "labctl.py"), "down", "--dir", str(tmp_path / "lab")],
                       capture_output=True, timeout=120, check=False)


def port_checks(document, host):
    return dict((c["component"], c) for c in document["hosts"][host]["checks"] if c["id"] == "rdma.port.errors")


def test_the_ticker_grows_the_faulted_counter(lab):
    _runner, _document, grown, _tmp = lab
    assert 2 <= grown <= 5  # 2 a second over 1.5 s, in 0.5 s ticks


def test_counter_growth_over_the_window_is_judged(lab):
    runner, document, _grown, _tmp = lab
    assert runner.rc == 0, runner.stdout.read()[-3000:]
    assert validate(document) == []
    n02 = port_checks(document, "n02")
    bad = [(name, c["status"], c["remedy"]) for name, c in sorted(n02.items()) if c["status"] != "pass"]
    assert bad == [("mlx5_1 port 1", "fail", "check_cable")], bad
    assert "symbol errors in 5 s" in n02["mlx5_1 port 1"]["message"]
    assert "an hour, more than 120" in n02["mlx5_1 port 1"]["message"]
    n03 = port_checks(document, "n03")
    assert [(name, c["status"], c["remedy"]) for name, c in sorted(n03.items()) if c["status"] != "pass"] == [
        ("mlx5_4 port 1", "warn", "monitor")]
    n01 = port_checks(document, "n01")
    assert len(n01) >= 8 and all(c["status"] == "pass" for c in n01.values())


def test_labctl_down_stops_the_ticker(lab):
    _runner, _document, _grown, tmp_path = lab
    pid = int((tmp_path / "lab" / "ib_ticker.pid").read_text())
    os.kill(pid, 0)  # running while the lab is up
    subprocess.run([sys.executable, os.path.join(REPO, "lab", "labctl.py"), "down", "--dir", str(tmp_path / "lab")],
                   capture_output=True, timeout=120, check=True)
    time.sleep(0.5)
    with pytest.raises(OSError):
        os.kill(pid, 0)
