# SPDX-License-Identifier: GPL-3.0-or-later
"""diagnose.yml on a folder of saved outputs with a saved ``nvidia-smi nvlink -R`` (issue 23): the file is read by
gpu_info's ``nvlink_remote_src`` and judged as ``gpu.nvlink.remote``, offline, the node never reached (its inventory
points at TEST-NET-1). The node is the one-H100 folder of test_diagnose_saved_outputs (real captures); its ``-R`` is
NVIDIA NVSentinel's real A100 HGX capture (GPU 0, two links to each of six NVSwitches), matched to the node's GPU 0
by position - a capture of another machine, used to test the path, not the machine. A remote port claimed by two
links, made by editing that capture, fails with ``investigate``."""

from __future__ import annotations

import os
import shutil

from .conftest import REPO, run_playbook

FIXTURES = os.path.join(REPO, "tests", "fixtures")
NODE07 = {
    "nvidia-smi-q.txt": "nvidia-smi/excerpt-h100-80gb-hbm3-q-load.txt",
    "nvidia-smi-nvlink-s.txt": "nvidia-smi/excerpt-h100-80gb-hbm3-nvlink-s.txt",
    "nvidia-smi-nvlink-R.txt": "nvidia-smi/nvlink-R-a100-sxm4-nvswitch-gpu0.txt",
}


def _diagnose(tmp_path, edit=None):
    saved = tmp_path / "case-23"
    folder = saved / "node07"
    folder.mkdir(parents=True)
    for name, fixture in NODE07.items():
        shutil.copyfile(os.path.join(FIXTURES, fixture), str(folder / name))
    if edit is not None:
        edit(folder / "nvidia-smi-nvlink-R.txt")
    inventory = tmp_path / "hosts.yml"
    inventory.write_text("all:\n  children:\n    gpu_nodes:\n      hosts:\n        node07: {ansible_host: 192.0.2.7}\n"
                         "  vars:\n    ansible_connection: ssh\n    ansible_timeout: 3\n")
    runner, document = run_playbook(tmp_path, "diagnose.yml", str(inventory),
                                    extravars={"zhisuan_saved_outputs": str(saved)})
    assert runner.rc == 0, runner.stdout.read()[-3000:]
    return document


def _remote(document):
    return [c for c in document["hosts"]["node07"]["checks"] if c["id"] == "gpu.nvlink.remote"]


def test_a_saved_remote_link_info_is_judged(tmp_path):
    document = _diagnose(tmp_path)
    checks = _remote(document)
    assert [c["status"] for c in checks] == ["pass"], checks
    assert "6 other devices" in checks[0]["message"]


def test_a_remote_port_claimed_twice_fails(tmp_path):
    def claim_twice(path):
        text = path.read_text()
        old = "Link 1: Remote Device 00000008:00:00.0: Link 28"
        assert text.count(old) == 1
        path.write_text(text.replace(old, "Link 1: Remote Device 00000008:00:00.0: Link 29"))

    checks = _remote(_diagnose(tmp_path, edit=claim_twice))
    assert [(c["status"], c["remedy"]) for c in checks] == [("fail", "investigate")], checks
    assert "0008:00:00.0 link 29 is claimed by GPU 0 link 0, GPU 0 link 1" in checks[0]["message"]
