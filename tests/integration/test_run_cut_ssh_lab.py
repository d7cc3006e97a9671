# SPDX-License-Identifier: GPL-3.0-or-later
"""A run cut off while a node's tool hangs, over SSH with ControlPersist (issue 25): the SSH lab (network
namespaces with their own sshd), Ansible's own ssh connection with its default ControlMaster=auto and
ControlPersist=60s and pipelining. ``ansible-playbook`` gets SIGTERM while node01's nvidia-smi hangs.

No signal crosses SSH: the worker kills its ssh client (a ControlMaster mux client); the master and the node's sshd
live on, and sshd closes the session's pipes but signals nothing (no pty). What stops the node's tool is the
module's own watch on its output (``_runner``: a module whose stdout was closed kills its tools' process groups).
Needs root and the apt packages iproute2, openssh-server, openssh-client, lldpd."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest
import yaml

from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import validate

from .conftest import REPO
from .test_run_cut_lab import alive, cmdline_pids, descendants, start_playbook, wait_for

LABCTL = os.path.join(REPO, "lab", "labctl.py")
# its own namespace prefix and management subnet, so it never meets another SSH lab on this machine
PREFIX, MGMT_NET = "zcut-", "10.97.0.0/24"

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the SSH lab creates network namespaces: needs root")


def labctl(*args, timeout=120):
    return subprocess.run([sys.executable, LABCTL] + [str(a) for a in args], capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def cut_over_ssh(tmp_path_factory):
    for program in ("ip", "sshd", "ssh", "lldpd", "lldpcli"):
        assert shutil.which(program), "%s missing: apt install iproute2 openssh-server openssh-client lldpd" % program
    tmp = tmp_path_factory.mktemp("cut-ssh")
    scenario = {
        "name": "cut-ssh", "description": "two nodes over SSH; node01's nvidia-smi hangs",
        "network": {"transport": "ssh", "leaves": 1, "spine": False, "ports": ["eth0"], "mtu": 1500,
                    "prefix": PREFIX, "mgmt_net": MGMT_NET},
        "defaults": {"model": "a100", "gpus": 8, "expected": {"gpu_count": 8, "driver_version": "535.54.03"}},
        "nodes": {"node01": {"faults": [{"kind": "hang", "tool": "nvidia-smi"}]}, "node02": {}},
    }
    (tmp / "cut-ssh.yml").write_text(yaml.safe_dump(scenario))
    lab_dir, inventory = tmp / "lab", tmp / "hosts.yml"
    res = labctl("up", "--scenario", tmp / "cut-ssh.yml", "--dir", lab_dir, "--inventory", inventory)
    assert res.returncode == 0, res.stderr
    try:
        hosts = yaml.safe_load(inventory.read_text())["all"]["children"]["gpu_nodes"]["hosts"]
        out_root = tmp / "out"
        extra = {"results_out_root": str(out_root), "zhisuan_run_id": "cut-ssh", "zhisuan_families": ["gpu"],
                 "zhisuan_history_dir": str(tmp / "history"), "check_gpu_timeout": 600}
        proc, log = start_playbook(tmp, "inspect.yml", inventory, extra)
        state = str(lab_dir / "nodes" / "node01" / "state.json")
        before = []
        try:
            hung = wait_for(lambda: cmdline_pids(state), 300, "node01's nvidia-smi to hang")
            time.sleep(1)
            before = alive(set(descendants(proc.pid)))
            # the ControlPersist masters of this lab's control path (daemons of their own, not the run's children)
            control_dir = hosts["node01"]["ansible_control_path_dir"]
            masters = [p for p in cmdline_pids(control_dir) if p not in before]
            proc.send_signal(signal.SIGTERM)
            rc = proc.wait(timeout=120)
            # the node side learns of it only through its closed pipes: give it the runner's watch period and more
            cut_at = time.monotonic()
            deadline = cut_at + 15
            while alive(hung) and time.monotonic() < deadline:
                time.sleep(0.1)
            gone_after = round(time.monotonic() - cut_at, 1)
            seen = {"rc": rc, "log": log.read_text(errors="replace"), "hung": hung, "hung_left": alive(hung),
                    "gone_after_s": gone_after,
                    "controller_left": alive(before), "masters": masters, "masters_left": alive(masters),
                    "hosts": hosts,
                    "results": out_root / "cut-ssh" / "results.json"}
        finally:
            for pid in alive(set(before) | set(cmdline_pids(state))):
                # the masters are left to labctl down (ssh -O exit)
                os.kill(pid, signal.SIGKILL)
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)
        yield seen
    finally:
        labctl("down", "--dir", lab_dir)


def test_the_run_went_over_ssh_with_controlpersist_and_the_master_outlives_the_cut(cut_over_ssh):
    node = cut_over_ssh["hosts"]["node01"]
    assert node["ansible_connection"] == "ssh" and node["ansible_pipelining"] is True
    assert "ControlPersist" not in node.get("ansible_ssh_common_args", "")  # Ansible's default ssh_args hold it
    assert cut_over_ssh["masters"], "no ControlPersist master was running"
    # what survives the cut: the masters, until their idle time (60 s) ends; the next run reuses them
    assert cut_over_ssh["masters_left"] == cut_over_ssh["masters"]


def test_the_cut_run_exits_143_with_its_partial_record(cut_over_ssh):
    assert cut_over_ssh["rc"] == 143, cut_over_ssh["log"][-3000:]
    document = json.loads(cut_over_ssh["results"].read_text())
    assert validate(document) == [] and document["run"]["partial"] is True
    assert document["run"]["partial_reason"].startswith("the run was stopped (SIGTERM: ")


def test_nothing_of_the_run_is_left_on_the_controller(cut_over_ssh):
    assert cut_over_ssh["controller_left"] == []


def test_the_nodes_hung_tool_is_stopped_though_no_signal_crosses_ssh(cut_over_ssh):
    assert cut_over_ssh["hung"]
    assert cut_over_ssh["hung_left"] == []
    # the module looks at its output every 0.5 s; the rest is the ssh master and sshd closing the session
    assert cut_over_ssh["gone_after_s"] < 5, cut_over_ssh["gone_after_s"]
