# SPDX-License-Identifier: GPL-3.0-or-later
"""diagnose.yml on a folder of saved outputs (issue 23 item 3): two nodes judged offline on the controller from
copies of real captures (tests/fixtures, provenance there), with the readers and rules of a live run, and never
reached - their inventory points at an address of TEST-NET-1 over SSH, so a task that tried would make them
unreachable. The report says each node was judged from saved outputs; a fault made by editing a real capture (one
NVLink link inactive) is found the same way as on a live node."""

from __future__ import annotations

import os
import shutil

import pytest

from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import validate

from .conftest import REPO, run_playbook

FIXTURES = os.path.join(REPO, "tests", "fixtures")
NODE07 = {  # one H100 80GB HBM3 (utkuozdemir/nvidia_gpu_exporter), a dmesg with Xid 119 (leptonai/gpud), DCGM 3.x
    "nvidia-smi-q.txt": "nvidia-smi/excerpt-h100-80gb-hbm3-q-load.txt",
    "nvidia-smi-nvlink-s.txt": "nvidia-smi/excerpt-h100-80gb-hbm3-nvlink-s.txt",
    "dmesg.txt": "kernel-log/dmesg-ctime-xid119-gsp-rpc-timeout-xe9680.log",
    "dcgmi-diag.json": "dcgm/dcgmi-diag-r3-j-tesla-t4-pass.json",
    "dcgmi-health.json": "dcgm/dcgmi-health-c-j-healthy.json",
}
NODE08 = {  # 8 x H800 (liguodongiot/llm-action): nvidia-smi -q and nvbandwidth of the same machine, nothing else
    "nvidia-smi-q.txt": "nvidia-smi/i0-q-h800x8-525.105.17.txt",
    "nvbandwidth.txt": "nvbandwidth/nvbandwidth-v0.2-h800x8-525.105.17-ce.txt",
}


def _folder(root, host, files):
    folder = root / host
    folder.mkdir(parents=True)
    for name, fixture in files.items():
        shutil.copyfile(os.path.join(FIXTURES, fixture), str(folder / name))
    return folder


def _inventory(tmp_path):
    path = tmp_path / "hosts.yml"
    path.write_text(
        "all:\n  children:\n    gpu_nodes:\n      hosts:\n"
        "        node07: {ansible_host: 192.0.2.7}\n        node08: {ansible_host: 192.0.2.8}\n"
        "  vars:\n    ansible_connection: ssh\n    ansible_timeout: 3\n")
    return str(path)


def _diagnose(tmp_path, edit=None):
    saved = tmp_path / "case-1234"
    node07 = _folder(saved, "node07", NODE07)
    _folder(saved, "node08", NODE08)
    if edit is not None:
        edit(node07)
    runner, document = run_playbook(tmp_path, "diagnose.yml", _inventory(tmp_path),
                                    extravars={"zhisuan_saved_outputs": str(saved)})
    assert runner.rc == 0, runner.stdout.read()[-3000:]
    assert validate(document) == []
    return saved, document


@pytest.fixture(scope="module")
def healthy_links(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("saved")
    return tmp_path, _diagnose(tmp_path)


def _checks(document, host, prefix):
    return [c for c in document["hosts"][host]["checks"] if c["id"].startswith(prefix)]


def test_nodes_are_judged_from_their_saved_outputs_and_never_reached(healthy_links):
    tmp_path, (saved, document) = healthy_links
    assert document["summary"]["hosts"]["unreachable"] == 0
    node07 = document["hosts"]["node07"]
    assert node07["facts"]["saved_outputs"] == str(saved / "node07")
    assert sorted(node07["facts"]["saved_outputs_read"]) == sorted(NODE07)
    assert "saved_outputs_missing" not in node07["facts"]
    node08 = document["hosts"]["node08"]
    assert node08["facts"]["saved_outputs"] == str(saved / "node08")
    assert sorted(node08["facts"]["saved_outputs_read"]) == sorted(NODE08)
    # no kernel log and no DCGM files sent: xid and dcgm are not judged, and the report says so
    assert node08["facts"]["saved_outputs_missing"] == ["xid", "dcgm", "dcgm_health"]
    assert _checks(document, "node08", "dcgm.") == [] and _checks(document, "node08", "xid.") == []
    report = (tmp_path / "out" / "test-run" / "report.md").read_text()
    assert "Judged from the saved outputs in" in report and str(saved / "node08") in report
    assert "Not in the saved outputs, not judged" in report


def test_the_same_rules_judge_the_saved_outputs(healthy_links):
    _, (_, document) = healthy_links
    # the Xid 119 of the saved dmesg is a failure with its remedy, as on a live node
    xid = [c for c in _checks(document, "node07", "xid.119.") if c["status"] == "fail"]
    assert xid and xid[0]["remedy"] == "reset_gpu"
    # the saved nvidia-smi -q: one H100; its saved nvlink -s: 18 active links, none inactive
    gpu = document["hosts"]["node07"]["facts"]["gpu"]
    assert gpu["count"] == 1 and "H100" in gpu["model"]
    inactive = [c for c in _checks(document, "node07", "gpu.nvlink.") if c["status"] in ("fail", "error")]
    assert inactive == []
    # the saved dcgmi diag and health were read and passed
    assert [c["status"] for c in _checks(document, "node07", "dcgm.") if c["status"] in ("fail", "error")] == []
    assert _checks(document, "node07", "dcgm.")
    assert gpu["nvlink_active"] == 18 and gpu["nvlink_total"] == 18
    # node08: an H800 (nvidia-smi -i 0 -q) and the machine's saved nvbandwidth judged against the h800 profile
    assert document["hosts"]["node08"]["facts"]["gpu"]["profile"] == "h800"
    h2d = [(c["component"].split(" (")[0], c["status"]) for c in _checks(document, "node08", "gpu.bandwidth.h2d")]
    assert h2d == [("GPU %d" % index, "pass") for index in range(8)]


def _link_5_inactive(folder):
    path = folder / "nvidia-smi-nvlink-s.txt"
    text = path.read_text()
    assert "\t Link 5: 26.562 GB/s\n" in text
    path.write_text(text.replace("\t Link 5: 26.562 GB/s\n", "\t Link 5: <inactive>\n"))


def test_an_inactive_link_in_a_saved_nvlink_output_fails(tmp_path):
    _, document = _diagnose(tmp_path, edit=_link_5_inactive)
    failing = [c for c in _checks(document, "node07", "gpu.nvlink.") if c["status"] == "fail"]
    assert failing, _checks(document, "node07", "gpu.nvlink.")
    assert "5" in " ".join(str(c["observed"]) + c["message"] for c in failing)
