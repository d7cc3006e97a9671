# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""zhisuan.ops.gpu_reset as Ansible runs it, against a lab node: the lab's nvidia-smi simulator (real A100 captures,
value-edited faults; its --gpu-reset rewrites the node's state file) behind a wrapper that logs every call."""

from __future__ import annotations

import json
import os
import stat
import sys

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.zhisuan.ops.plugins.modules import gpu_reset

pytestmark = pytest.mark.usefixtures("as_node")

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
LAB_SIM = os.path.join(REPO, "lab", "sim", "nvidia_smi.py")
A100_XML = os.path.join(REPO, "tests", "fixtures", "nvidia-smi", "q-x-a100-sxm4-80gb-mig-535.xml")
ECC_GPU3 = {"kind": "ecc_volatile_uncorrectable", "gpu": 3, "count": 2}
IN_USE = (
    "The following GPUs could not be reset:\n  GPU 00000000:4E:00.0: In use by another client\n\n1 device is currently "
    "being used by one or more other processes (e.g., Fabric Manager, CUDA application, graphics application such as "
    "an X server, or a monitoring application such as another instance of nvidia-smi). Please first kill all "
    "processes using this device and all compute applications running in the system.\n")


class Node(object):
    """A lab node: state file + a logging wrapper around the simulator (``before_sim`` runs first in the wrapper)."""

    def __init__(self, tmp_path, faults=(), before_sim=""):
        self.state = tmp_path / "state.json"
        self.state.write_text(json.dumps({"schema": 1, "node": "unit01", "index": 1, "model": "a100",
                                          "capture": A100_XML, "gpus": 8, "faults": list(faults)}))
        self.calls = tmp_path / "calls"
        self.calls.write_text("")
        self.prog = str(tmp_path / "nvidia-smi")
        with open(self.prog, "w") as handle:
            handle.write('#!/bin/sh\necho "$@" >> %s\n%s\nexec %s -I -S %s --state %s "$@"\n'
                         % (self.calls, before_sim, sys.executable, LAB_SIM, self.state))
        os.chmod(self.prog, os.stat(self.prog).st_mode | stat.S_IXUSR)

    def faults(self):
        return json.loads(self.state.read_text())["faults"]

    def call_log(self):
        return self.calls.read_text().splitlines()


def run(node, capsys, check_mode=False, diff=False, **args):
    params = dict(nvidia_smi_path=node.prog, **args)
    if check_mode:
        params["_ansible_check_mode"] = True
    if diff:
        params["_ansible_diff"] = True
    with patch_module_args(params):
        with pytest.raises(SystemExit) as info:
            gpu_reset.main()
    return info.value.code, json.loads(capsys.readouterr().out)


def gpu3(facts):
    return [g for g in facts["gpus"] if g["index"] == 3][0]


# ------------------------------------------------------------------------------------------------ guards

def test_gpu_with_a_process_is_not_reset(tmp_path, capsys):
    node = Node(tmp_path, faults=[ECC_GPU3, {"kind": "gpu_process", "gpu": 3, "pid": 4242, "name": "python3"}])
    before = node.faults()
    code, out = run(node, capsys, gpus=["3"])
    assert code == 1
    assert out["failed"] is True and out.get("changed", False) is False
    assert out["error_kind"] == "refused"
    assert out["msg"] == ("gpu_reset: refused, nothing was reset: GPU 3 (0000:4E:00.0) is in use by pid 4242 (python3); "
                          "stop it (drain the node) first")
    assert out["refusals"] == [{"gpu": "GPU 3 (0000:4E:00.0)", "reason": "in_use",
                                "processes": [{"gpu": 3, "pid": 4242, "name": "python3"}],
                                "message": "GPU 3 (0000:4E:00.0) is in use by pid 4242 (python3); stop it (drain the "
                                           "node) first"}]
    assert node.call_log() == ["-q -x", "nvlink -s"]  # no --gpu-reset was run
    assert node.faults() == before


def test_process_on_another_nvlink_gpu_refuses(tmp_path, capsys):
    node = Node(tmp_path, faults=[ECC_GPU3, {"kind": "gpu_process", "gpu": 5, "pid": 77, "name": "torchrun"}])
    code, out = run(node, capsys, gpus=["3"])
    assert (code, out["error_kind"]) == (1, "refused")
    assert out["msg"] == ("gpu_reset: refused, nothing was reset: GPU 3 (0000:4E:00.0): it shares the NVLink fabric "
                          "with the other NVLink GPUs, so their processes may be an NVLink job (running: pid 77 "
                          "(torchrun) on GPU 5); stop that job first or reset those GPUs together with it")
    assert out["refusals"][0]["reason"] == "nvlink_job"
    assert node.call_log() == ["-q -x", "nvlink -s"]
    # resetting GPU 5 too is not allowed either: it runs the job itself
    code, out = run(node, capsys, gpus=["3", "5"])
    assert [r["reason"] for r in out["refusals"]] == ["in_use"]


def test_unreadable_nvlink_state_refuses_when_another_gpu_is_busy(tmp_path, capsys):
    node = Node(tmp_path, faults=[{"kind": "gpu_process", "gpu": 5, "pid": 77, "name": "torchrun"}],
                before_sim='if [ "$1" = nvlink ]; then exit 3; fi')
    code, out = run(node, capsys, gpus=["3"])
    assert (code, out["refusals"][0]["reason"]) == (1, "nvlink_job")
    assert out["msg"].startswith("gpu_reset: refused, nothing was reset: GPU 3 (0000:4E:00.0): the NVLink state could "
                                 "not be read (nvidia-smi nvlink: exited with rc 3: no output), so a process on another "
                                 "GPU may be an NVLink job (running: pid 77 (torchrun) on GPU 5)")


def test_unknown_gpu_is_refused(tmp_path, capsys):
    node = Node(tmp_path, faults=[{"kind": "gpu_missing", "gpu": 7}])
    code, out = run(node, capsys, gpus=["7", "0000:99:00.0"])
    assert (code, out["error_kind"]) == (1, "refused")
    assert out["msg"] == (
        "gpu_reset: refused: not on this node (by index or PCI bus id): '7', '0000:99:00.0'; the driver "
        "lists GPU 0 (0000:07:00.0), GPU 1 (0000:0F:00.0), GPU 2 (0000:47:00.0), GPU 3 (0000:4E:00.0), GPU 4 "
        "(0000:87:00.0), GPU 5 (0000:90:00.0), GPU 6 (0000:B7:00.0)")
    assert [r["reason"] for r in out["refusals"]] == ["unknown_gpu", "unknown_gpu"]
    assert node.call_log() == ["-q -x", "nvlink -s"]


# ------------------------------------------------------------------------------------------ check mode

def test_check_mode_predicts_and_runs_no_reset(tmp_path, capsys):
    node = Node(tmp_path, faults=[ECC_GPU3])
    code, out = run(node, capsys, check_mode=True, diff=True, gpus=["4e:00.0"])
    assert code == 0
    assert out["changed"] is True
    assert out["msg"] == "would reset GPU 3 (0000:4E:00.0)"
    assert out["reset"] == [{"index": 3, "nvidia_smi_index": 3, "pci_bus_id": "0000:4E:00.0",
                             "uuid": "GPU-51000103-7d19-9063-b049-1e6966000103"}]
    assert node.call_log() == ["-q -x", "nvlink -s"]
    assert node.faults() == [ECC_GPU3]
    assert gpu3(out["gpu"])["ecc"]["volatile_uncorrected"] == 2
    assert out["diff"]["before"]["gpus"]["GPU 3 (0000:4E:00.0)"]["reset"] is False
    assert out["diff"]["after"]["gpus"]["GPU 3 (0000:4E:00.0)"]["reset"] is True


# ------------------------------------------------------------------------------------------------ reset

def test_reset_clears_the_volatile_ecc_fault(tmp_path, capsys):
    node = Node(tmp_path, faults=[ECC_GPU3, {"kind": "pcie_width", "gpu": 3, "width": 8}])
    code, out = run(node, capsys, diff=True, gpus=["3"])
    assert code == 0, out
    assert out["changed"] is True
    assert out["msg"] == "reset GPU 3 (0000:4E:00.0)"
    assert node.call_log() == ["-q -x", "nvlink -s", "--gpu-reset -i 3", "-q -x", "nvlink -s"]
    # the lab's reset cleared the volatile count; the lifetime count and the PCIe width stay
    assert node.faults() == [{"kind": "ecc_aggregate_uncorrectable", "gpu": 3, "count": 2},
                             {"kind": "pcie_width", "gpu": 3, "width": 8}]
    after = gpu3(out["gpu"])
    assert (after["ecc"]["volatile_uncorrected"], after["ecc"]["aggregate_uncorrected"]) == (0, 2)
    assert after["pcie"]["width_current"] == 8
    assert after["nvlink"]["active"] == 12
    diff = out["diff"]
    assert diff["before"]["gpus"]["GPU 3 (0000:4E:00.0)"]["ecc_volatile_uncorrected"] == 2
    assert diff["after"]["gpus"]["GPU 3 (0000:4E:00.0)"]["ecc_volatile_uncorrected"] == 0


def test_reset_uses_the_enumeration_index_when_a_gpu_is_missing(tmp_path, capsys):
    node = Node(tmp_path, faults=[{"kind": "gpu_missing", "gpu": 0}, {"kind": "temperature", "gpu": 3,
                                                                      "gpu_temp_c": 91}])
    code, out = run(node, capsys, gpus=["3"])
    assert code == 0, out
    assert out["reset"][0]["nvidia_smi_index"] == 2  # GPU 3 is the third GPU nvidia-smi lists
    assert "--gpu-reset -i 2" in node.call_log()
    assert node.faults() == [{"kind": "gpu_missing", "gpu": 0}]


def test_failing_reset_fails_the_task(tmp_path, capsys):
    # the driver refuses (a client the facts do not show holds the GPU): exit 255 with its message
    node = Node(tmp_path, faults=[ECC_GPU3],
                before_sim='if [ "$1" = --gpu-reset ]; then printf "\\n%s" "%s"; exit 255; fi' % ("%s", IN_USE))
    code, out = run(node, capsys, gpus=["3"])
    assert code == 1
    assert out["error_kind"] == "failed"
    assert out["rc"] == 255
    assert out["msg"] == "nvidia-smi: GPU 3 (0000:4E:00.0) was not reset: exited with rc 255: The following GPUs could not be reset:"
    assert "In use by another client" in out["stdout"]
    assert out["changed"] is False and out["reset"] == []
    assert node.faults() == [ECC_GPU3]


def test_gpu_gone_after_the_reset_fails_with_power_cycle(tmp_path, capsys):
    # after the reset the GPU does not come back: the wrapper adds gpu_missing for it once the lab reset has run
    add_missing = ('if [ "$1" = --gpu-reset ]; then %s -I -S %s --state %s "$@"; %s -c "import json,sys; p=sys.argv[1]; '
                   's=json.load(open(p)); s[\'faults\'].append({\'kind\': \'gpu_missing\', \'gpu\': 3}); '
                   'json.dump(s, open(p, \'w\'))" %%s; exit 0; fi')
    node = Node(tmp_path, faults=[ECC_GPU3])
    with open(node.prog) as handle:
        body = handle.read()
    hook = add_missing % (sys.executable, LAB_SIM, node.state, sys.executable) % node.state
    with open(node.prog, "w") as handle:
        handle.write(body.replace("\nexec ", "\n%s\nexec " % hook, 1))
    code, out = run(node, capsys, gpus=["3"])
    assert code == 1
    assert out["error_kind"] == "not_verified"
    assert out["msg"] == ("gpu_reset: GPU 3 (0000:4E:00.0) was reset but not listed by nvidia-smi afterwards: it fell "
                          "off the bus; power cycle the node")
    assert out["changed"] is True and [item["index"] for item in out["reset"]] == [3]


def test_missing_program(tmp_path, capsys):
    node = Node(tmp_path)
    node.prog = str(tmp_path / "none")
    code, out = run(node, capsys, gpus=["3"])
    assert (code, out["error_kind"], out["msg"]) == (1, "not_found", "nvidia-smi: not found at %s" % node.prog)


def test_empty_gpu_list_is_refused(tmp_path, capsys):
    code, out = run(Node(tmp_path), capsys, gpus=[])
    assert (code, out["error_kind"]) == (1, "refused")
    assert out["msg"] == "gpu_reset: refused: gpus must name at least one GPU (index or PCI bus id)"
