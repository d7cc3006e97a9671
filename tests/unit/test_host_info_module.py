# SPDX-License-Identifier: GPL-3.0-or-later
"""zhisuan.ops.host_info as Ansible runs it: arguments in, exit_json/fail_json out. /proc and /sys come from a tree
built under tmp_path (option ``root``) with real file formats (/proc/meminfo and /proc/<pid>/limits captures, the
one-value sysfs/procfs attributes the kernel ABI defines); the programs behind the seam are shell scripts that print
real captures (nvidia-smi topo -m, lspci ACSCtl lines, ofed_info -s) or fail."""

from __future__ import annotations

import json
import os
import stat

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.zhisuan.ops.plugins.modules import host_info

pytestmark = pytest.mark.usefixtures("as_node")

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures")
TOPO = os.path.join(FIXTURES, "nvidia-smi", "topo-m-asus-esc8000a-e12-4gpu-4nic.txt")
ACS = os.path.join(FIXTURES, "lspci", "lspci-vvv-grep-acsctl-asus-esc8000a-e12.txt")
OFED = os.path.join(FIXTURES, "host", "ofed_info-s-mlnx-ofed-23.07.txt")
# The kernel parameters of the same ASUS server (its /etc/default/grub GRUB_CMDLINE_LINUX_DEFAULT, luigifcruz/stelline).
CMDLINE = ("amd_iommu=off iommu=pt pci=realloc=off default_hugepagesz=1G hugepagesz=1G hugepages=8 isolcpus=0-3,32-35 "
           "nohz_full=0-3,32-35 rcu_nocbs=0-3,32-35 irqaffinity=4-31,36-63 rcu_nocb_poll tsc=reliable audit=0 nosoftlockup")
# /proc/driver/nvidia/version as printed by a 440 driver (quoted in diambra/arena's docs).
NVRM = ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  440.95.01  Thu May 28 07:03:08 UTC 2020\n"
        "GCC version:  gcc version 7.5.0 (Ubuntu 7.5.0-3ubuntu1~18.04) \n")


def _write(root, path, text):
    full = os.path.join(str(root), path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w", encoding="utf-8") as handle:
        handle.write(text)


def _tree(tmp_path):
    root = tmp_path / "root"
    _write(root, "proc/cmdline", CMDLINE + "\n")
    _write(root, "proc/self/limits", open(os.path.join(FIXTURES, "host", "proc-limits-procfs-26231.txt")).read())
    _write(root, "proc/meminfo", open(os.path.join(FIXTURES, "host", "meminfo-node-exporter.txt")).read())
    _write(root, "proc/driver/nvidia/version", NVRM)
    _write(root, "proc/sys/kernel/osrelease", "6.8.0-58-generic\n")
    _write(root, "proc/sys/kernel/numa_balancing", "0\n")
    _write(root, "proc/sys/net/core/rmem_max", "212992\n")
    _write(root, "proc/sys/net/ipv4/tcp_rmem", "4096\t131072\t6291456\n")
    _write(root, "sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n")
    for cpu in range(4):
        _write(root, "sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor" % cpu, "performance\n")
    _write(root, "sys/devices/system/cpu/online", "0-3\n")
    _write(root, "sys/devices/system/node/node0/cpulist", "0-31\n")
    _write(root, "sys/devices/system/node/node1/cpulist", "32-63\n")
    for index, (bdf, numa) in enumerate([("0000:01:00.0", 0), ("0000:01:00.1", 0), ("0000:c1:00.0", 1)]):
        dev = "sys/class/infiniband/mlx5_%d/device" % index
        _write(root, dev + "/numa_node", "%d\n" % numa)
        _write(root, dev + "/uevent", "DRIVER=mlx5_core\nPCI_CLASS=20000\nPCI_ID=15B3:1021\nPCI_SLOT_NAME=%s\n" % bdf)
        _write(root, dev + "/net/ens%df0np0/ifindex" % index, "%d\n" % (4 + index))
    os.makedirs(str(root / "sys/class/iommu"))
    os.makedirs(str(root / "sys/kernel/iommu_groups"))
    _write(root, "usr/lib/x86_64-linux-gnu/libnccl.so.2.21.5", "")
    _write(root, "usr/lib/x86_64-linux-gnu/libnccl.so.2.18.3", "")
    _write(root, "usr/lib/x86_64-linux-gnu/libnccl.so.2", "")
    return root


def _program(tmp_path, name, body):
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def _programs(tmp_path, calls):
    return {
        "nvidia_smi_path": _program(tmp_path, "nvidia-smi", 'echo "nvidia-smi $@" >> %s\ncat %s\n' % (calls, TOPO)),
        "lspci_path": _program(tmp_path, "lspci", 'echo "lspci $@" >> %s\ncat %s\n' % (calls, ACS)),
        "ofed_info_path": _program(tmp_path, "ofed_info", 'echo "ofed_info $@" >> %s\ncat %s\n' % (calls, OFED)),
        # nv-fabricmanager --version and dcgmi --version as printed (quoted in leptonai/gpud and DCGM issue reports)
        "nv_fabricmanager_path": _program(tmp_path, "nv-fabricmanager",
                                          'echo "nv-fabricmanager $@" >> %s\nprintf "Fabric Manager version is : 535.161.08\\n"\n' % calls),
        "dcgmi_path": _program(tmp_path, "dcgmi", 'echo "dcgmi $@" >> %s\nprintf "\\ndcgmi  version: 3.3.9\\n\\n"\n' % calls),
    }


def _run(args, capsys):
    with patch_module_args(args):
        with pytest.raises(SystemExit) as info:
            host_info.main()
    return info.value.code, json.loads(capsys.readouterr().out)


def test_reads_the_whole_node_in_one_task(tmp_path, capsys):
    root = _tree(tmp_path)
    calls = tmp_path / "calls"
    code, out = _run(dict(root=str(root), **_programs(tmp_path, calls)), capsys)
    assert code == 0 and out["changed"] is False
    assert calls.read_text().splitlines() == [
        "ofed_info -s", "nv-fabricmanager --version", "dcgmi --version", "nvidia-smi topo -m", "lspci -vvv"]
    host = out["host"]
    assert host["errors"] == []
    assert host["topo"]["matrix"]["GPU0"]["NIC0"] == "NODE"
    assert host["topo"]["nics"][3] == {"name": "NIC3", "device": "mlx5_3"}
    assert host["acs"] == {"controls": 46, "enabled": [], "access_denied": False}
    assert host["numa"] == {
        "nodes": [{"id": 0, "cpulist": "0-31"}, {"id": 1, "cpulist": "32-63"}],
        "nics": [
            {"device": "mlx5_0", "pci": "0000:01:00.0", "numa_node": 0, "netdevs": ["ens0f0np0"]},
            {"device": "mlx5_1", "pci": "0000:01:00.1", "numa_node": 0, "netdevs": ["ens1f0np0"]},
            {"device": "mlx5_2", "pci": "0000:c1:00.0", "numa_node": 1, "netdevs": ["ens2f0np0"]},
        ]}
    assert host["sysctl"]["kernel.numa_balancing"] == "0"
    assert host["sysctl"]["net.core.rmem_max"] == "212992"
    assert host["sysctl"]["net.ipv4.tcp_rmem"] == "4096 131072 6291456"
    assert host["sysctl"]["vm.max_map_count"] is None  # not in the tree: not on this kernel
    assert host["ulimits"]["nofile"] == {"soft": 2048, "hard": 4096, "units": "files"}
    assert host["ulimits"]["memlock"] == {"soft": 18446744073708503040, "hard": 18446744073708503040, "units": "bytes"}
    assert host["ulimits"]["stack"] == {"soft": 8388608, "hard": "unlimited", "units": "bytes"}
    assert host["ulimits"]["nice"] == {"soft": 0, "hard": 0, "units": None}
    assert host["hugepages"] == {"total": 0, "free": 0, "reserved": 0, "surplus": 0, "size_kib": 2048,
                                 "mem_total_kib": 3742148, "transparent": "madvise"}
    assert host["cpu_governor"] == {"value": "performance", "counts": {"performance": 4}}
    assert host["iommu"] == {"mode": "off", "units": [], "group_types": {},
                             "cmdline_flags": {"amd_iommu": "off", "iommu": "pt"}}
    assert host["kernel_cmdline"] == CMDLINE
    assert host["software"] == {"nvidia_driver": "440.95.01", "kernel": "6.8.0-58-generic", "nccl": "2.21.5",
                                "ofed": "23.07-0.5.1.2", "ofed_package": "MLNX_OFED_LINUX",
                                "fabric_manager": "535.161.08", "dcgm": "3.3.9"}


def test_software_not_installed_is_null_without_error_but_missing_topo_tools_are_errors(tmp_path, capsys):
    root = _tree(tmp_path)
    os.remove(str(root / "proc/driver/nvidia/version"))
    missing = str(tmp_path / "absent")
    code, out = _run(dict(root=str(root), nvidia_smi_path=missing + "/nvidia-smi", lspci_path=missing + "/lspci",
                          ofed_info_path=missing + "/ofed_info", nv_fabricmanager_path=missing + "/nv-fabricmanager",
                          dcgmi_path=missing + "/dcgmi"), capsys)
    assert code == 0
    host = out["host"]
    assert host["software"] == {"nvidia_driver": None, "kernel": "6.8.0-58-generic", "nccl": "2.21.5", "ofed": None,
                                "ofed_package": None, "fabric_manager": None, "dcgm": None}
    assert host["topo"] is None and host["acs"] is None
    assert host["errors"] == [
        {"source": "nvidia-smi topo", "error": "nvidia-smi topo: not found at %s/nvidia-smi" % missing},
        {"source": "lspci", "error": "lspci: not found at %s/lspci" % missing},
    ]


def test_failing_programs_and_unreadable_files_are_reported_not_fatal(tmp_path, capsys):
    root = _tree(tmp_path)
    _write(root, "proc/self/limits", "Max open files  2048  4096  files\n")  # header line cut off
    programs = _programs(tmp_path, tmp_path / "calls")
    programs["nvidia_smi_path"] = _program(
        tmp_path, "nvidia-smi-broken",
        'echo "NVIDIA-SMI has failed because it couldn\'t communicate with the NVIDIA driver." \nexit 9\n')
    programs["dcgmi_path"] = _program(tmp_path, "dcgmi-odd", 'echo "usage: dcgmi <subsystem>"\n')
    code, out = _run(dict(root=str(root), **programs), capsys)
    assert code == 0
    host = out["host"]
    assert host["ulimits"] is None and host["topo"] is None and host["software"]["dcgm"] is None
    assert host["errors"] == [
        {"source": "/proc/self/limits", "error": "/proc/self/limits: no 'Limit  Soft Limit  Hard Limit  Units' header"},
        {"source": "dcgmi", "error": "dcgmi: no 'dcgmi  version: <version>' line"},
        {"source": "nvidia-smi topo",
         "error": "nvidia-smi topo: exited with rc 9: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."},
    ]


@pytest.mark.parametrize("types, units, cmdline, mode", [
    ({"DMA-FQ": 3, "identity": 1}, ["dmar0", "dmar1"], "intel_iommu=on", "translated"),
    ({"identity": 4}, ["dmar0"], "intel_iommu=on iommu=pt", "passthrough"),
    ({}, ["ivhd0"], "iommu=pt", "passthrough"),
    ({}, ["ivhd0"], "quiet", "enabled"),
])
def test_iommu_mode_from_group_types_units_and_cmdline(tmp_path, capsys, types, units, cmdline, mode):
    root = _tree(tmp_path)
    _write(root, "proc/cmdline", cmdline + "\n")
    for unit in units:
        os.makedirs(str(root / "sys/class/iommu" / unit))
    group = 0
    for kind, count in types.items():
        for _ in range(count):
            _write(root, "sys/kernel/iommu_groups/%d/type" % group, kind + "\n")
            group += 1
    if not types and units:
        os.makedirs(str(root / "sys/kernel/iommu_groups/0"))  # a group without a type file (older kernel)
    code, out = _run(dict(root=str(root), topo=False, acs=False, software=False), capsys)
    assert code == 0
    assert out["host"]["iommu"]["mode"] == mode
    assert out["host"]["iommu"]["units"] == units


def test_acs_enabled_ports_and_mixed_governors(tmp_path, capsys):
    root = _tree(tmp_path)
    _write(root, "sys/devices/system/cpu/cpu3/cpufreq/scaling_governor", "powersave\n")
    capture = open(ACS).read().replace("ACSCtl: SrcValid- TransBlk- ReqRedir- CmpltRedir-",
                                       "ACSCtl: SrcValid+ TransBlk- ReqRedir+ CmpltRedir+", 2)
    edited = tmp_path / "acs-edited.txt"
    edited.write_text(capture)
    lspci = _program(tmp_path, "lspci", "cat %s\n" % edited)
    code, out = _run(dict(root=str(root), topo=False, software=False, lspci_path=lspci), capsys)
    assert code == 0
    assert out["host"]["acs"] == {"controls": 46, "access_denied": False, "enabled": [
        {"device": None, "flags": "SrcValid ReqRedir CmpltRedir"}, {"device": None, "flags": "SrcValid ReqRedir CmpltRedir"}]}
    assert out["host"]["cpu_governor"] == {"value": "mixed", "counts": {"performance": 3, "powersave": 1}}


def test_bad_sysctl_name_fails_the_task(tmp_path, capsys):
    code, out = _run(dict(root=str(tmp_path), topo=False, acs=False, software=False,
                          sysctl_keys=["net.core.rmem_max", "../../etc/shadow"]), capsys)
    assert code == 1
    assert out["msg"] == "sysctl_keys: ../../etc/shadow is not a sysctl name (letters, digits, '.', '_', '-')"
