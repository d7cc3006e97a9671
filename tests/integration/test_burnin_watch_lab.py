# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Burn-in without forks held (issue 26 item 3), on the lab with gpu_burn taking the seconds it is given
(``labctl up --burn-realtime``): with fewer forks than nodes every node is sampled throughout its own burn (the
record's sample times say so), the console gets a progress line instead of a retry line per poll, and an
nvidia-smi that hangs during one node's burn costs that node its sample timeout only: the other nodes finish, and
nvidia-smi is not called on it again.

Run ``flock /work/lab.lock timeout 900 .venv/bin/python -m pytest -q tests/integration/test_burnin_watch_lab.py``.
Set ZHISUAN_BURNIN_NODES / ZHISUAN_BURNIN_FORKS / ZHISUAN_BURNIN_DURATION for the 64-node run (64, 16, 120)."""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import threading
import time

from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import validate

from .conftest import REPO, run_playbook, start_lab

NODES = int(os.environ.get("ZHISUAN_BURNIN_NODES", "8"))
FORKS = int(os.environ.get("ZHISUAN_BURNIN_FORKS", "2"))
DURATION = int(os.environ.get("ZHISUAN_BURNIN_DURATION", "30"))
SAMPLE_S = 5
# slack for a loaded 2-core CI machine: a sample may come this much later than its interval
SLACK_S = 4


def _epoch(text):
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()


def _watch(document, host):
    return document["hosts"][host]["facts"]["burn"]["stability"]["watch"]


def test_every_node_is_sampled_throughout_its_burn_with_fewer_forks(tmp_path):
    inventory = start_lab(tmp_path, "burnin.yml", nodes=NODES, burn_realtime=True)
    extra = {"zhisuan_burn_duration": DURATION, "zhisuan_burnin_sample_s": SAMPLE_S, "check_burn_poll_delay": 2,
             "check_burn_progress_s": 10}
    runner, document = run_playbook(tmp_path, "burnin.yml", inventory, extravars=extra, forks=FORKS)
    stdout = runner.stdout.read()
    assert runner.rc == 0, stdout
    assert validate(document) == []
    assert len(document["hosts"]) == NODES
    windows = {}
    for host, record in sorted(document["hosts"].items()):
        assert record["status"] == "pass", (host, [c for c in record["checks"] if c["status"] != "pass"])
        watch = _watch(document, host)
        start, end = _epoch(watch["started_at"]), _epoch(watch["ended_at"])
        times = [_epoch(text) for text in watch["sample_times"]]
        windows[host] = (start, end, times)
        assert watch["sample_s"] == SAMPLE_S and watch["stopped"] is None and watch["failed_samples"] == []
        assert end - start >= DURATION, (host, watch)
        # every sample inside the node's own burn, the first one interval after its start, the last one within an
        # interval of its end, never a gap of much more than the interval (a sample stamped in the burn's last
        # millisecond may read the same millisecond as its end; none is ever taken after it)
        assert times and all(start < moment <= end for moment in times), (host, watch)
        assert times[0] - start <= SAMPLE_S + SLACK_S, (host, watch)
        assert end - times[-1] <= SAMPLE_S + SLACK_S, (host, watch)
        assert watch["coverage"]["max_gap_s"] <= SAMPLE_S + SLACK_S, (host, watch)
        assert len(times) >= DURATION // SAMPLE_S - 2, (host, watch)
        print("%s burn %s .. %s, %d samples, max gap %s s" % (host, watch["started_at"], watch["ended_at"],
                                                                len(times), watch["coverage"]["max_gap_s"]))
    # the burns ran at the same time: no node's burn waited for a fork until another's had ended
    assert max(start for start, _end, _times in windows.values()) < min(end for _start, end, _times in windows.values())
    assert "FAILED - RETRYING" not in stdout
    assert "gpu burn (%d s): still waiting on" % DURATION in stdout


def _add_fault_when_sampling(lab_dir, node, samples_file, done, deadline_s=120):
    """Hang nvidia-smi on ``node`` once its watch has written a sample (its burn is running)."""
    stop = time.monotonic() + deadline_s
    while time.monotonic() < stop and not done.is_set():
        if os.path.exists(samples_file) and os.path.getsize(samples_file) > 0:
            subprocess.run([sys.executable, os.path.join(REPO, "lab", "labctl.py"), "fault", "--dir", str(lab_dir),
                            node, "add", "hang", "tool=nvidia-smi"], check=True, capture_output=True, timeout=60)
            return
        time.sleep(0.2)


def test_nvidia_smi_hung_during_one_burn_costs_only_that_node(tmp_path):
    inventory = start_lab(tmp_path, "burnin.yml", nodes=4, burn_realtime=True)
    lab_dir = tmp_path / "lab"
    samples_file = lab_dir / "nodes" / "node03" / "burn-samples.jsonl"
    extra = {"zhisuan_burn_duration": 20, "zhisuan_burnin_sample_s": 2, "check_burn_sample_timeout": 4,
             "check_burn_poll_delay": 2, "check_burn_progress_s": 10,
             "check_burn_samples_path": "{{ zhisuan_lab_state | dirname }}/burn-samples.jsonl"}
    done = threading.Event()
    watcher = threading.Thread(target=_add_fault_when_sampling, args=(lab_dir, "node03", str(samples_file), done))
    watcher.start()
    try:
        started = time.monotonic()
        runner, document = run_playbook(tmp_path, "burnin.yml", inventory, extravars=extra, forks=2)
        elapsed = time.monotonic() - started
    finally:
        done.set()
        watcher.join()
    stdout = runner.stdout.read()
    assert runner.rc == 0, stdout
    assert validate(document) == []
    assert set(document["hosts"]) == {"node01", "node02", "node03", "node04"}
    for host in ("node01", "node02", "node04"):
        assert document["hosts"][host]["status"] == "pass", host
        assert _watch(document, host)["stopped"] is None
    hung = document["hosts"]["node03"]
    assert hung["status"] == "error"
    watch = _watch(document, "node03")
    assert "nvidia-smi timed out" in watch["stopped"] and "not called again" in watch["stopped"]
    # one sample timed out, and none was taken after it although the burn went on
    assert len(watch["failed_samples"]) == 1
    failed_at = _epoch(watch["failed_samples"][0]["at"])
    assert all(_epoch(moment) < failed_at for moment in watch["sample_times"])
    assert _epoch(watch["ended_at"]) - failed_at > 4
    lines = [json.loads(line) for line in samples_file.read_text().splitlines()]
    assert [line.get("error_kind") for line in lines].count("timed_out") == 1 and "error" in lines[-1]
    # the sample after the burn was not tried either: the record says why
    errors = [c for c in hung["checks"] if c["status"] == "error"]
    assert [c["id"] for c in errors] == ["burn.stability.gpu_count"], errors
    assert "not called again" in errors[0]["message"] and "timed out" in errors[0]["message"]
    # the burn itself is judged as usual
    assert any(c["id"].startswith("burn.") and not c["id"].startswith("burn.stability.") and c["status"] == "pass"
               for c in hung["checks"])
    # the hang cost node03 its 4 s sample timeout, not the fleet a 20 s burn per fork batch
    assert elapsed < 300, elapsed
