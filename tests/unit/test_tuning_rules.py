# SPDX-License-Identifier: GPL-3.0-or-later
"""Tuning rules on host facts built from real captures (nvidia-smi topo -m of an HGX H100 and of a PCIe server,
lspci ACSCtl lines, /proc/<pid>/limits, /proc/meminfo), with faults made by editing those captures' values."""

from __future__ import annotations

import os

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._host import sysinfo
from ansible_collections.zhisuan.ops.plugins.module_utils._host.topo import parse_topo
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import REMEDIES
from ansible_collections.zhisuan.ops.plugins.module_utils._judge.tuning import judge_tuning, matches, summarize_tuning

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures")


def _read(*parts):
    with open(os.path.join(FIXTURES, *parts), encoding="utf-8") as handle:
        return handle.read()


LIMITS = _read("host", "proc-limits-procfs-26231.txt")


def _host(topo="topo-m-h100x8-8nic.txt", limits=LIMITS, acs=None, **overrides):
    facts = {
        "topo": parse_topo(_read("nvidia-smi", topo)),
        "acs": sysinfo.parse_acs(acs if acs is not None else _read("lspci", "lspci-vvv-grep-acsctl-asus-esc8000a-e12.txt")),
        "numa": {"nodes": [], "nics": []},
        "sysctl": {"net.core.rmem_max": "212992", "net.ipv4.tcp_rmem": "4096 131072 6291456", "kernel.numa_balancing": "0",
                   "vm.max_map_count": None},
        "ulimits": sysinfo.parse_limits(limits),
        "hugepages": dict(sysinfo.parse_meminfo(_read("host", "meminfo-node-exporter.txt")), transparent="madvise"),
        "cpu_governor": {"value": "performance", "counts": {"performance": 192}},
        "iommu": {"mode": "passthrough", "units": ["dmar0"], "group_types": {"identity": 120},
                  "cmdline_flags": {"intel_iommu": "on", "iommu": "pt"}},
        "kernel_cmdline": "intel_iommu=on iommu=pt",
        "software": {},
        "errors": [],
    }
    facts.update(overrides)
    return facts


def _gpus(name="NVIDIA H100 80GB HBM3", count=8, off=()):
    return {"gpus": [{"index": index, "name": name, "persistence_mode": index not in off} for index in range(count)]}


def _by(checks, check_id):
    return [check for check in checks if check["id"] == check_id]


def _well_formed(checks):
    for check in checks:
        assert check["remedy"] in REMEDIES
        assert (check["remedy"] == "none") == (check["status"] in ("pass", "skip")), check
        assert len(check["id"].split(".")) == 3 and check["id"].startswith("tuning."), check["id"]


def test_hgx_h100_defaults():
    checks = judge_tuning("node01", _host(), _gpus())
    _well_formed(checks)
    assert [(check["id"], check["status"]) for check in checks] == (
        [("tuning.affinity.gpu_nic", "pass")] * 8 + [
            ("tuning.iommu.mode", "pass"), ("tuning.acs.redirect", "pass"),
            ("tuning.ulimit.memlock", "pass"), ("tuning.ulimit.nofile", "warn"),
            ("tuning.cpu.governor", "pass"), ("tuning.gpu.persistence_mode", "pass")])
    first = checks[0]
    assert (first["component"], first["observed"], first["expected"], first["message"]) == (
        "GPU0 (NUMA 0)", "mlx5_0 PIX", "PXB (default)", "GPU0 reaches mlx5_0 at PIX (within PXB)")
    # memlock 18446744073708503040 (2**64 - 2**20, how a container runtime prints "no limit") counts as unlimited
    memlock = _by(checks, "tuning.ulimit.memlock")[0]
    assert memlock["observed"] == 18446744073708503040
    nofile = _by(checks, "tuning.ulimit.nofile")[0]
    assert nofile["message"] == ("ulimit nofile is 2048, the target is >= 1048576 (default): raise nofile in limits.conf "
                                 "(and LimitNOFILE for services)")
    assert nofile["evidence"] == "soft=2048, hard=4096 files"


def test_pcie_server_nics_not_under_the_gpu_switch_fail():
    checks = _by(judge_tuning("asus01", _host(topo="topo-m-asus-esc8000a-e12-4gpu-4nic.txt"), None), "tuning.affinity.gpu_nic")
    assert [(check["component"], check["status"], check["observed"]) for check in checks] == [
        ("GPU0 (NUMA 0)", "fail", "mlx5_0, mlx5_1 NODE"), ("GPU1 (NUMA 0)", "fail", "mlx5_0, mlx5_1 NODE"),
        ("GPU2 (NUMA 1)", "fail", "mlx5_2, mlx5_3 NODE"), ("GPU3 (NUMA 1)", "fail", "mlx5_2, mlx5_3 NODE")]
    assert checks[0]["remedy"] == "tune"
    assert checks[0]["message"] == (
        "GPU0's nearest NICs (mlx5_0, mlx5_1) are reached across PCIe host bridges of the NUMA node (NODE), farther "
        "than PXB: GPUDirect RDMA is not used past PXB by default and traffic crosses the host; fit the NIC under the "
        "GPU's PCIe switch (or pin jobs to the nearest GPU/NIC pairs), or set "
        "zhisuan_expected.tuning.gpu_nic_max_distance for a platform built this way")
    assert checks[0]["evidence"] == "mlx5_0=NODE, mlx5_1=NODE, mlx5_2=SYS, mlx5_3=SYS"
    # a site that accepts NODE on this platform
    relaxed = _by(judge_tuning("asus01", _host(topo="topo-m-asus-esc8000a-e12-4gpu-4nic.txt"), None,
                               {"tuning": {"gpu_nic_max_distance": "NODE"}}), "tuning.affinity.gpu_nic")
    assert [(check["status"], check["expected"]) for check in relaxed] == [
        ("pass", "NODE (zhisuan_expected.tuning.gpu_nic_max_distance)")] * 4


def test_one_gpu_whose_nic_moved_to_the_other_socket():
    text = _read("nvidia-smi", "topo-m-h100x8-8nic.txt")
    # edit GPU5's row: its own NIC5 is now across the socket (SYS) and it reaches NIC4 only through NODE
    row = [line for line in text.splitlines() if line.startswith("GPU5")][0]
    edited_row = row.replace("NODE    PIX     NODE    NODE", "NODE    SYS     NODE    NODE")
    host = _host()
    host["topo"] = parse_topo(text.replace(row, edited_row))
    checks = _by(judge_tuning("node05", host, _gpus()), "tuning.affinity.gpu_nic")
    assert [check["status"] for check in checks] == ["pass"] * 5 + ["fail"] + ["pass"] * 2
    assert checks[5]["observed"] == "mlx5_4, mlx5_6, mlx5_7 NODE"


def test_gpu_nic_filter_and_grace_default():
    # only mlx5_4..7 are compute NICs: GPUs 0-3 see them across the socket
    checks = _by(judge_tuning("node01", _host(), _gpus(), {"tuning": {"gpu_nics": "^mlx5_[4-7]$"}}), "tuning.affinity.gpu_nic")
    assert [check["observed"] for check in checks[:1]] == ["mlx5_4, mlx5_5, mlx5_6, mlx5_7 SYS"]
    assert [check["status"] for check in checks] == ["fail"] * 4 + ["pass"] * 4
    # a GB200 node: the NIC hangs off the Grace CPU, NODE is the nearest there is, so the default limit is NODE
    grace = judge_tuning("gb01", _host(topo="topo-m-asus-esc8000a-e12-4gpu-4nic.txt"), _gpus("NVIDIA GB200", 4))
    assert [(check["status"], check["expected"]) for check in _by(grace, "tuning.affinity.gpu_nic")] == [
        ("pass", "NODE (default)")] * 4
    with pytest.raises(ValueError) as info:
        judge_tuning("node01", _host(), None, {"tuning": {"gpu_nic_max_distance": "near"}})
    assert str(info.value) == ("zhisuan_expected.tuning.gpu_nic_max_distance must be one of PIX, PXB, PHB, NODE, SYS; "
                               "got 'near'")


def test_iommu_and_acs():
    translated = {"mode": "translated", "units": ["dmar0", "dmar1"], "group_types": {"DMA-FQ": 97, "identity": 2},
                  "cmdline_flags": {"intel_iommu": "on"}}
    acs = _read("lspci", "lspci-vvv-grep-acsctl-asus-esc8000a-e12.txt").replace(
        "SrcValid- TransBlk- ReqRedir- CmpltRedir- UpstreamFwd-", "SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+", 3)
    checks = judge_tuning("node02", _host(iommu=translated, acs=acs), None)
    iommu = _by(checks, "tuning.iommu.mode")[0]
    assert (iommu["status"], iommu["remedy"], iommu["evidence"]) == (
        "fail", "tune", "units=dmar0,dmar1, group_types=DMA-FQ:97,identity:2, cmdline=intel_iommu=on")
    assert iommu["message"].startswith("IOMMU is translated: DMA translation sends GPU peer-to-peer")
    redirect = _by(checks, "tuning.acs.redirect")[0]
    assert (redirect["status"], redirect["observed"]) == ("fail", "enabled on 3 of 46 ports")
    assert redirect["evidence"] == "; ".join(["port: SrcValid ReqRedir CmpltRedir UpstreamFwd"] * 3)
    unknown = _by(judge_tuning("node02", _host(iommu=dict(translated, mode="enabled", group_types={})), None),
                  "tuning.iommu.mode")[0]
    assert (unknown["status"], unknown["remedy"]) == ("warn", "investigate")
    # a virtualisation host wants the IOMMU translating and ACS on
    vm = judge_tuning("hv01", _host(iommu=translated, acs=acs), None,
                      {"tuning": {"iommu": "translated", "acs": "enabled"}})
    assert [check["status"] for check in _by(vm, "tuning.iommu.mode") + _by(vm, "tuning.acs.redirect")] == ["pass", "pass"]


def test_collection_errors_become_error_checks():
    host = _host()
    host.update(topo=None, acs=None, ulimits=None, errors=[
        {"source": "nvidia-smi topo", "error": "nvidia-smi topo: exited with rc 9: NVIDIA-SMI has failed"},
        {"source": "lspci", "error": "lspci: not found at /usr/sbin/lspci"},
        {"source": "/proc/self/limits", "error": "/proc/self/limits: no 'Max open files' row"},
    ])
    checks = judge_tuning("node03", host, None)
    _well_formed(checks)
    assert [(check["id"], check["status"]) for check in checks[:4]] == [
        ("tuning.collect.proc_self_limits", "error"), ("tuning.affinity.gpu_nic", "error"),
        ("tuning.iommu.mode", "pass"), ("tuning.acs.redirect", "error")]
    assert checks[1]["message"] == ("The GPU/NIC topology could not be read: nvidia-smi topo: exited with rc 9: "
                                    "NVIDIA-SMI has failed")
    assert [(check["id"], check["status"]) for check in _by(checks, "tuning.ulimit.memlock")] == [
        ("tuning.ulimit.memlock", "error")]
    denied = judge_tuning("node03", _host(acs="\tCapabilities: <access denied>\n"), None)
    assert _by(denied, "tuning.acs.redirect")[0]["message"] == (
        "lspci could not read PCIe capabilities (not root): run host_info with become")


def test_site_values_sysctl_ulimits_hugepages_and_dropped_defaults():
    limits = LIMITS.replace("Max locked memory         18446744073708503040 18446744073708503040 bytes",
                            "Max locked memory         65536                65536                bytes")
    expected = {"tuning": {
        "sysctl": {"net.core.rmem_max": ">= 16777216", "net.ipv4.tcp_rmem": ">= 6291456", "kernel.numa_balancing": 0,
                   "vm.max_map_count": ">= 262144", "net.core.somaxconn": 4096},
        "ulimits": {"nofile": None, "nproc": ">= 60000"},
        "hugepages": {"total": ">= 8", "transparent": "never"},
        "cpu_governor": None,
    }}
    checks = judge_tuning("node04", _host(limits=limits), _gpus(), expected)
    _well_formed(checks)
    got = dict((check["id"], (check["status"], check["observed"])) for check in checks if check["id"].split(".")[1] in (
        "sysctl", "ulimit", "hugepages", "cpu"))
    assert got == {
        "tuning.sysctl.kernel_numa_balancing": ("pass", "0"),
        "tuning.sysctl.net_core_rmem_max": ("fail", "212992"),
        "tuning.sysctl.net_core_somaxconn": ("error", None),
        "tuning.sysctl.net_ipv4_tcp_rmem": ("pass", "4096 131072 6291456"),
        "tuning.sysctl.vm_max_map_count": ("error", None),
        "tuning.ulimit.memlock": ("fail", 65536),
        "tuning.ulimit.nproc": ("pass", 62898),
        "tuning.hugepages.total": ("fail", 0),
        "tuning.hugepages.transparent": ("fail", "madvise"),
    }
    somaxconn = _by(checks, "tuning.sysctl.net_core_somaxconn")[0]
    assert somaxconn["evidence"] == "not read: add net.core.somaxconn to host_info's sysctl_keys"
    assert _by(checks, "tuning.sysctl.vm_max_map_count")[0]["evidence"] == "vm.max_map_count = (not on this kernel)"
    memlock = _by(checks, "tuning.ulimit.memlock")[0]
    assert memlock["message"] == (
        "ulimit memlock is 65536, the target is unlimited (default): RDMA registers (pins) the job's buffers and fails or "
        "falls back without it; set memlock unlimited (limits.conf, and LimitMEMLOCK=infinity for services such as slurmd)")
    rmem = _by(checks, "tuning.sysctl.net_core_rmem_max")[0]
    assert (rmem["status"], rmem["expected"]) == ("fail", ">= 16777216 (zhisuan_expected.tuning.sysctl.net.core.rmem_max)")


def test_governor_and_persistence():
    checks = judge_tuning("node06", _host(cpu_governor={"value": "mixed", "counts": {"performance": 190, "powersave": 2}}),
                          _gpus(off=(2, 5)))
    governor = _by(checks, "tuning.cpu.governor")[0]
    assert (governor["status"], governor["observed"], governor["evidence"]) == (
        "warn", "mixed", "performance: 190 CPUs, powersave: 2 CPUs")
    persistence = _by(checks, "tuning.gpu.persistence_mode")[0]
    assert (persistence["status"], persistence["observed"]) == ("warn", "2 of 8 off target")
    assert persistence["message"].startswith("Persistence mode is off on GPU 2, GPU 5: the driver unloads between jobs")
    site = _by(judge_tuning("node06", _host(), _gpus(off=(2,)), {"tuning": {"persistence_mode": True}}),
               "tuning.gpu.persistence_mode")[0]
    assert site["status"] == "fail"
    none = judge_tuning("node06", _host(cpu_governor=None), None)
    assert [(check["status"], check["message"][:32]) for check in _by(none, "tuning.cpu.governor")] == [
        ("skip", "No cpufreq governor on this node")]
    assert _by(none, "tuning.gpu.persistence_mode")[0]["status"] == "skip"


@pytest.mark.parametrize("observed, want, result", [
    ("unlimited", "unlimited", True), (65536, "unlimited", False), (18446744073709551615, "unlimited", True),
    ("unlimited", ">= 1048576", True), (1048576, ">= 1048576", True), ("4096 87380 16777216", ">= 16777216", True),
    ("0", 0, True), ("1", [0, 2], False), ("never", "never", True), (None, 0, False), (True, True, True),
])
def test_matches(observed, want, result):
    assert matches(observed, want) is result


def test_summary():
    assert summarize_tuning(_host(software={"nccl": "2.21.5"})) == {
        "iommu": "passthrough", "cpu_governor": "performance", "hugepages": 0, "software": {"nccl": "2.21.5"}}
