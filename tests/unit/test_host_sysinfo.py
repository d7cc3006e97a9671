# SPDX-License-Identifier: GPL-3.0-or-later
"""The host_info parsers on real captures and on real output lines quoted in public reports, with edited variants."""

from __future__ import annotations

import os

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._host import sysinfo

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures")


def _read(*parts):
    with open(os.path.join(FIXTURES, *parts), encoding="utf-8") as handle:
        return handle.read()


def test_limits_capture():
    limits = sysinfo.parse_limits(_read("host", "proc-limits-procfs-26231.txt"))
    assert sorted(limits) == sorted(sysinfo.LIMIT_NAMES.values())
    assert limits["nproc"] == {"soft": 62898, "hard": 62898, "units": "processes"}
    assert limits["as"] == {"soft": 8589934592, "hard": "unlimited", "units": "bytes"}


@pytest.mark.parametrize("text, message", [
    ("", "/proc/self/limits: no 'Limit  Soft Limit  Hard Limit  Units' header"),
    ("Limit                     Soft Limit           Hard Limit           Units\n"
     "Max open files            lots                 4096                 files\n",
     "/proc/self/limits: limit value 'lots' is neither a number nor 'unlimited'"),
    ("Limit                     Soft Limit           Hard Limit           Units\n"
     "Max cpu time              unlimited            unlimited            seconds\n",
     "/proc/self/limits: no 'Max open files' row"),
])
def test_limits_errors(text, message):
    with pytest.raises(ParseError) as info:
        sysinfo.parse_limits(text)
    assert info.value.message == message


def test_meminfo_capture_and_hugepages_edit():
    text = _read("host", "meminfo-node-exporter.txt")
    assert sysinfo.parse_meminfo(text) == {"total": 0, "free": 0, "reserved": 0, "surplus": 0, "size_kib": 2048,
                                           "mem_total_kib": 3742148}
    edited = text.replace("HugePages_Total:       0", "HugePages_Total:       8").replace(
        "Hugepagesize:       2048 kB", "Hugepagesize:    1048576 kB")
    assert sysinfo.parse_meminfo(edited)["total"] == 8
    assert sysinfo.parse_meminfo(edited)["size_kib"] == 1048576
    with pytest.raises(ParseError) as info:
        sysinfo.parse_meminfo("HugePages_Total: 0\n")
    assert info.value.message == "/proc/meminfo: no MemTotal line"


def test_acs_capture_all_off_and_with_device_headers():
    acs = sysinfo.parse_acs(_read("lspci", "lspci-vvv-grep-acsctl-asus-esc8000a-e12.txt"))
    assert acs == {"controls": 46, "enabled": [], "access_denied": False}
    # the same lines under device headers, as full lspci -vvv prints them; one port edited to redirect
    lines = _read("lspci", "lspci-vvv-grep-acsctl-asus-esc8000a-e12.txt").splitlines()
    text = ("0000:00:01.1 PCI bridge: Advanced Micro Devices, Inc. [AMD] Device 14ab\n" + lines[0] + "\n"
            "0000:40:01.1 PCI bridge: Advanced Micro Devices, Inc. [AMD] Device 14ab\n"
            + lines[1].replace("SrcValid-", "SrcValid+").replace("ReqRedir-", "ReqRedir+") + "\n"
            "0000:41:00.0 VGA compatible controller: NVIDIA Corporation AD102GL [RTX 6000 Ada Generation]\n"
            "\tCapabilities: <access denied>\n")
    assert sysinfo.parse_acs(text) == {"controls": 2, "access_denied": True,
                                       "enabled": [{"device": "0000:40:01.1", "flags": "SrcValid ReqRedir"}]}
    with pytest.raises(ParseError) as info:
        sysinfo.parse_acs("\t\tACSCtl: <unreadable>\n")
    assert info.value.message == "lspci: unreadable ACSCtl line 'ACSCtl: <unreadable>'"


@pytest.mark.parametrize("text, version", [
    # quoted from diambra/arena docs, and the open kernel module form (a test of an NVIDIA-on-Linux helper)
    ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  440.95.01  Thu May 28 07:03:08 UTC 2020\n"
     "GCC version:  gcc version 7.5.0 (Ubuntu 7.5.0-3ubuntu1~18.04) \n", "440.95.01"),
    ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  575.57.08  Release Build  (dvs-builder@U16)  "
     "Tue May 20 2025\n", "575.57.08"),
])
def test_nvidia_version(text, version):
    assert sysinfo.parse_nvidia_version(text) == version


@pytest.mark.parametrize("text, result", [
    (None, {"package": "MLNX_OFED_LINUX", "version": "23.07-0.5.1.2"}),  # the fixture
    ("OFED-internal-24.04-0.6.6:\n", {"package": "OFED-internal", "version": "24.04-0.6.6"}),  # DOCA-OFED
    ("OFED-internal-4.7-3.2.9\n", {"package": "OFED-internal", "version": "4.7-3.2.9"}),
    ("MLNX_OFED_LINUX-24.10-1.1.4.0\n", {"package": "MLNX_OFED_LINUX", "version": "24.10-1.1.4.0"}),
])
def test_ofed_info(text, result):
    assert sysinfo.parse_ofed_info(text if text is not None else _read("host", "ofed_info-s-mlnx-ofed-23.07.txt")) == result


def test_version_lines_and_their_errors():
    assert sysinfo.parse_fabricmanager_version("Fabric Manager version is : 450.102.04\n") == "450.102.04"
    assert sysinfo.parse_dcgmi_version("\ndcgmi  version: 3.3.9\n\n") == "3.3.9"
    for parser, message in ((sysinfo.parse_fabricmanager_version,
                             "nv-fabricmanager: no 'Fabric Manager version is : <version>' line"),
                            (sysinfo.parse_dcgmi_version, "dcgmi: no 'dcgmi  version: <version>' line"),
                            (sysinfo.parse_ofed_info, "ofed_info: no '<package>-<version>:' line in 'bash: ofed_info: command not found'"),
                            (sysinfo.parse_nvidia_version,
                             "/proc/driver/nvidia/version: no 'NVRM version: ... Kernel Module <version>' line")):
        with pytest.raises(ParseError) as info:
            parser("bash: ofed_info: command not found\n")
        assert info.value.message == message


def test_nccl_from_library_names_and_small_helpers():
    assert sysinfo.nccl_version(["libnccl.so", "libnccl.so.2", "libnccl.so.2.9.9", "libnccl.so.2.21.5"]) == "2.21.5"
    assert sysinfo.nccl_version(["libcudart.so.12"]) is None
    assert sysinfo.parse_cpulist("0-47,96-143") == 96
    assert sysinfo.parse_thp("always [madvise] never\n") == "madvise"
    assert sysinfo.parse_cmdline("BOOT_IMAGE=/vmlinuz ro quiet iommu=pt iommu=off\n") == (
        "BOOT_IMAGE=/vmlinuz ro quiet iommu=pt iommu=off", {"BOOT_IMAGE": "/vmlinuz", "ro": True, "quiet": True, "iommu": "off"})
