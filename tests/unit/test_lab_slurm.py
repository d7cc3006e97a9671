# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""lab/sched/slurm_lab.py (a real slurmctld + slurmd per node + munged on loopback) and its hook in labctl
(`scheduler: slurm`). Every test starts and stops its own Slurm in a tmp dir and checks that no process is left."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
LABCTL = REPO / "lab" / "labctl.py"


def _load_lab():
    spec = importlib.util.spec_from_file_location("zhisuan_lab_sched_slurm_t", REPO / "lab" / "sched" / "slurm_lab.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


LAB = _load_lab()


def client(info, tool, *args):
    return subprocess.run([info["tools"][tool]] + list(args), capture_output=True, text=True, timeout=30, check=False)


def test_start_writes_the_essentials_and_stop_leaves_nothing(tmp_path):
    info = LAB.start(str(tmp_path), ["gpu01", "gpu02"], gpus_per_node=4)
    try:
        conf = Path(info["conf"]).read_text()
        for line in ("ClusterName=zhisuan-lab", "SlurmctldHost=localhost", "CommunicationParameters=NoInAddrAny,NoCtldInAddrAny",
                     "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "SelectType=select/cons_tres",
                     "AccountingStorageType=accounting_storage/none", "SlurmdParameters=config_overrides", "ReturnToService=2",
                     "GresTypes=gpu", "AuthInfo=socket=%s/munge.sock" % info["run_dir"]):
            assert line + "\n" in conf, line
        ports = sorted(info["node_ports"].values())
        assert len(set(ports + [info["ctld_port"]])) == 3
        assert "NodeName=gpu01 NodeAddr=127.0.0.1 Port=%d " % info["node_ports"]["gpu01"] in conf
        gpus = sorted(os.listdir(os.path.join(info["dir"], "gpu")))
        assert gpus == ["nvidia0", "nvidia1", "nvidia2", "nvidia3"]
        assert all(os.readlink(os.path.join(info["dir"], "gpu", g)) == "/dev/null" for g in gpus)

        assert client(info, "scontrol", "ping").stdout.strip().endswith("is UP")
        res = client(info, "sinfo", "-h", "-N", "-o", "%N %t %G")
        assert res.stdout.splitlines() == ["gpu01 idle gpu:4", "gpu02 idle gpu:4"]
        assert LAB.scontrol_env(str(tmp_path)) == {"SLURM_CONF": info["conf"], "MUNGE_SOCKET": info["run_dir"] + "/munge.sock"}
        assert info["started_s"] > 0

        # a job's processes are the lab's too: stop ends them with the daemons
        out = client(info, "sbatch", "-w", "gpu02", "-o", "/dev/null", "--wrap", "sleep 300").stdout
        assert out.startswith("Submitted batch job ")
        daemons = dict(info["pids"])
    finally:
        LAB.stop(str(tmp_path))
    assert LAB._marked_pids(info["dir"]) == []  # pylint: disable=protected-access
    for name, pid in daemons.items():
        assert not LAB._alive(pid), name  # pylint: disable=protected-access
    assert not os.path.exists(info["run_dir"])
    with pytest.raises(LAB.SlurmLabError) as err:
        LAB.scontrol_env(str(tmp_path))
    assert str(err.value) == "no slurm lab at %s" % info["dir"]
    LAB.stop(str(tmp_path))  # twice: a no-op


def test_start_needs_nodes(tmp_path):
    with pytest.raises(LAB.SlurmLabError) as err:
        LAB.start(str(tmp_path), [])
    assert str(err.value) == "slurm lab: no nodes"


def labctl(*args):
    return subprocess.run([sys.executable, str(LABCTL)] + [str(a) for a in args], capture_output=True, text=True, timeout=120,
                          check=False)


def test_labctl_remediate_scenario_runs_slurm_for_every_node(tmp_path):
    run_dir, inv = tmp_path / "lab", tmp_path / "hosts.yml"
    res = labctl("up", "--scenario", REPO / "lab" / "scenarios" / "remediate.yml", "--dir", run_dir, "--inventory", inv)
    try:
        assert res.returncode == 0, res.stderr
        hosts = yaml.safe_load(inv.read_text())["all"]["children"]["gpu_nodes"]["hosts"]
        assert sorted(hosts) == ["node%02d" % i for i in range(1, 11)]
        hv = hosts["node03"]
        assert hv["zhisuan_scheduler"] == "slurm"
        assert hv["zhisuan_tools"]["scontrol"] == str(run_dir / "slurm" / "bin" / "scontrol")
        assert hv["zhisuan_tools"]["sinfo"] == str(run_dir / "slurm" / "bin" / "sinfo")
        assert hv["zhisuan_tools"]["nvidia_smi"].endswith("/nodes/node03/bin/nvidia-smi")  # the simulators stay
        assert hv["zhisuan_lab_faults"] == [{"kind": "ecc_volatile_uncorrectable", "gpu": 3, "count": 2}]
        out = subprocess.run([hv["zhisuan_tools"]["sinfo"], "-h", "-N", "-o", "%N %t"], capture_output=True, text=True,
                             timeout=30, check=True).stdout
        assert out.splitlines() == ["node%02d idle" % i for i in range(1, 11)]
        wrapper = Path(hv["zhisuan_tools"]["scontrol"]).read_text()
        assert "SLURM_CONF=%s; export SLURM_CONF\n" % (run_dir / "slurm" / "etc" / "slurm.conf") in wrapper
    finally:
        down = labctl("down", "--dir", run_dir)
    assert down.returncode == 0, down.stderr
    assert not run_dir.exists() and not inv.exists()
    assert LAB._marked_pids(str(run_dir / "slurm")) == []  # pylint: disable=protected-access


def test_labctl_rejects_an_unknown_scheduler(tmp_path):
    scenario = tmp_path / "s.yml"
    scenario.write_text("scheduler: pbs\nnodes:\n  node01: {}\n")
    res = labctl("up", "--scenario", scenario, "--dir", tmp_path / "lab", "--inventory", tmp_path / "hosts.yml")
    assert res.returncode == 1
    assert res.stderr == "labctl: error: scenario %s: 'scheduler' must be one of slurm, slurm-accounting, got 'pbs'\n" % scenario


def test_the_accounting_store_confs_point_slurmctld_at_slurmdbd_and_slurmdbd_at_its_mariadb(tmp_path):
    paths = LAB._paths(str(tmp_path))  # pylint: disable=protected-access
    plain = LAB.slurm_conf(paths, "/tmp/zslurm-x", ["gpu01"], 7000, [7001], 8)
    assert "AccountingStorageType=accounting_storage/none\n" in plain and "AccountingStoragePort" not in plain
    conf = LAB.slurm_conf(paths, "/tmp/zslurm-x", ["gpu01"], 7000, [7001], 8, dbd_port=7002)
    for line in ("AccountingStorageType=accounting_storage/slurmdbd", "AccountingStorageHost=localhost",
                 "AccountingStoragePort=7002", "AccountingStoragePass=/tmp/zslurm-x/munge.sock",
                 "JobCompType=jobcomp/filetxt"):
        assert line + "\n" in conf, line
    assert "accounting_storage/none" not in conf
    dbd = LAB.slurmdbd_conf(paths, "/tmp/zslurm-x", 7002, 7003, "s3cret")
    for line in ("DbdPort=7002", "DbdAddr=127.0.0.1", "StorageType=accounting_storage/mysql", "StorageHost=127.0.0.1",
                 "StoragePort=7003", "StorageUser=slurm", "StoragePass=s3cret", "StorageLoc=slurm_acct_db",
                 "AuthInfo=socket=/tmp/zslurm-x/munge.sock"):
        assert line + "\n" in dbd, line
