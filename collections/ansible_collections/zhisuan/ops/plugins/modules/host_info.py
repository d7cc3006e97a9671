#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: host_info
short_description: Tuning state of a GPU node (topology, NUMA, IOMMU/ACS, sysctl, ulimits, hugepages, versions) in one task
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Reads, in one task, what the C(tuning) and C(baseline) rules of C(zhisuan.ops.judge) compare with the site's
    values (delivery guide sections 4.4 and 5.2) and returns it as facts. It never decides pass or fail.
  - "GPU/NIC topology from C(nvidia-smi topo -m); NUMA nodes and the NUMA node and PCI address of each RDMA device
    (C(/sys/class/infiniband)); IOMMU state (C(/sys/class/iommu), C(/sys/kernel/iommu_groups/*/type), the kernel
    command line); ACS control bits from C(lspci -vvv); sysctl values; the limits of the module's own process
    (C(/proc/self/limits)), which are those a job started the same way gets; hugepages and transparent hugepages;
    the CPU frequency governor of every CPU."
  - "Software versions: NVIDIA kernel module (C(/proc/driver/nvidia/version)), NCCL (C(libnccl.so.X.Y.Z) file names
    in O(nccl_lib_dirs)), MLNX_OFED or DOCA-OFED (C(ofed_info -s)), Fabric Manager (C(nv-fabricmanager --version)),
    DCGM (C(dcgmi --version)), kernel release. Each is V(null) when not installed."
  - Nothing is fatal. A part that could not be read is V(null) and listed in RV(host.errors); a program that is not
    installed is V(null) without an error, except C(nvidia-smi) and C(lspci), which the rules need.
extends_documentation_fragment:
  - zhisuan.ops._tool
  - zhisuan.ops._attributes
  - zhisuan.ops._attributes.info_module
options:
  root:
    description:
      - Directory under which C(/proc) and C(/sys) and the library directories are read. V(/) on a node; tests and
        the lab point it at a prepared tree.
    type: path
    default: /
  nvidia_smi_path:
    description: The C(nvidia-smi) program (C(zhisuan_tools.nvidia_smi)).
    type: str
    default: nvidia-smi
  lspci_path:
    description: The C(lspci) program (C(zhisuan_tools.lspci)). It must run as root to show ACS capabilities.
    type: str
    default: lspci
  ofed_info_path:
    description: The C(ofed_info) program (C(zhisuan_tools.ofed_info)).
    type: str
    default: ofed_info
  nv_fabricmanager_path:
    description: The C(nv-fabricmanager) program (C(zhisuan_tools.nv_fabricmanager)).
    type: str
    default: nv-fabricmanager
  dcgmi_path:
    description: The C(dcgmi) program (C(zhisuan_tools.dcgmi)).
    type: str
    default: dcgmi
  topo:
    description: Run C(nvidia-smi topo -m).
    type: bool
    default: true
  acs:
    description: Run C(lspci -vvv) for the ACS control bits.
    type: bool
    default: true
  software:
    description: Read the software versions.
    type: bool
    default: true
  sysctl_keys:
    description: Sysctl names to read (from C(/proc/sys)); a name that does not exist on the node is V(null).
    type: list
    elements: str
    default: [kernel.numa_balancing, kernel.pid_max, kernel.threads-max, vm.zone_reclaim_mode, vm.swappiness,
              vm.max_map_count, fs.file-max, fs.nr_open, net.core.rmem_max, net.core.wmem_max, net.core.somaxconn,
              net.core.netdev_max_backlog, net.ipv4.tcp_rmem, net.ipv4.tcp_wmem, net.ipv4.tcp_mtu_probing,
              net.ipv4.conf.all.arp_ignore, net.ipv4.conf.all.arp_announce]
  nccl_lib_dirs:
    description: Directories searched for C(libnccl.so.X.Y.Z); the highest version found is reported.
    type: list
    elements: path
    default: [/usr/lib/x86_64-linux-gnu, /usr/lib/aarch64-linux-gnu, /usr/lib64, /usr/local/lib, /usr/local/nccl/lib,
              /usr/local/cuda/lib64]
notes:
  - Run it with C(become=true) so C(lspci) can read the PCIe capabilities; without root C(access_denied) in RV(host.acs) is
    V(true) and the ACS rule reports an error.
seealso:
  - name: NCCL troubleshooting (PCI Access Control Services, IOMMU)
    description: Why ACS and IOMMU translation matter for GPUDirect peer-to-peer and RDMA.
    link: https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html
"""

EXAMPLES = r"""
- name: Read the tuning state of a GPU node
  zhisuan.ops.host_info:
    nvidia_smi_path: "{{ zhisuan_tools.nvidia_smi | default('nvidia-smi') }}"
    lspci_path: "{{ zhisuan_tools.lspci | default('lspci') }}"
    ofed_info_path: "{{ zhisuan_tools.ofed_info | default('ofed_info') }}"
    nv_fabricmanager_path: "{{ zhisuan_tools.nv_fabricmanager | default('nv-fabricmanager') }}"
    dcgmi_path: "{{ zhisuan_tools.dcgmi | default('dcgmi') }}"
  become: true
  register: host

- name: Show which NIC each GPU reaches through a PCIe switch
  ansible.builtin.debug:
    msg: "{{ host.host.topo.matrix['GPU0'] }}"

- name: Read only sysctl values and limits, no programs
  zhisuan.ops.host_info:
    topo: false
    acs: false
    software: false
    sysctl_keys: [net.core.rmem_max, kernel.numa_balancing]
  register: host
"""

RETURN = r"""
host:
  description: The node's tuning facts. Every part is V(null) when it could not be read; RV(host.errors) says why.
  returned: success
  type: dict
  contains:
    topo:
      description:
        - C(nvidia-smi topo -m) as C(devices) (the columns), C(gpus) (C(name), C(index), C(cpu_affinity),
          C(numa_affinity), C(gpu_numa_id)), C(nics) (C(name), C(device) from the NIC legend) and C(matrix)
          (row name to column name to link, C(X), C(NV18), C(PIX), C(PXB), C(PHB), C(NODE), C(SYS)).
      type: dict
    acs:
      description: C(controls) (ACSCtl lines), C(enabled) (C(device), C(flags) set), C(access_denied).
      type: dict
    numa:
      description: C(nodes) (C(id), C(cpulist)) and C(nics) (C(device), C(pci), C(numa_node), C(netdevs)).
      type: dict
    sysctl:
      description: Sysctl name to value as read (whitespace collapsed), V(null) when absent.
      type: dict
      sample: {net.core.rmem_max: "16777216", net.ipv4.tcp_rmem: "4096 87380 16777216"}
    ulimits:
      description: Limit name (C(nofile), C(memlock), C(nproc), C(stack) ...) to C(soft), C(hard) (numbers or
        C(unlimited)) and C(units) (memlock in bytes).
      type: dict
    hugepages:
      description: C(total), C(free), C(reserved), C(surplus), C(size_kib), C(mem_total_kib), C(transparent).
      type: dict
    cpu_governor:
      description: C(value) (the governor, or C(mixed)) and C(counts) per governor; V(null) without cpufreq.
      type: dict
    iommu:
      description: C(mode) (C(off), C(passthrough), C(translated), C(enabled)), C(units), C(group_types),
        C(cmdline_flags).
      type: dict
    kernel_cmdline:
      description: The kernel command line.
      type: str
    software:
      description: C(nvidia_driver), C(nccl), C(ofed), C(ofed_package), C(fabric_manager), C(dcgm), C(kernel).
      type: dict
    errors:
      description: Parts that could not be read, as C(source) and C(error).
      type: list
      elements: dict
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._base import run_module
from ansible_collections.zhisuan.ops.plugins.module_utils._host.collect import HOST_INFO_ARGSPEC, collect_host_facts


def main():
    run_module(HOST_INFO_ARGSPEC, collect_host_facts)


if __name__ == "__main__":
    main()
