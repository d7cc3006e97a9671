#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: judge
short_description: Turn collected facts into check records on the controller
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Runs the pure judgement rules of one check family over the registered result of its collect task, with the
    node's model profile, the bill of materials (C(zhisuan_expected)) and site thresholds from the inventory.
  - It never connects to the node. A collect task that failed (tool not found, timed out, failed, unparsable output)
    becomes one check with status C(error); an unreachable node is reported in RV(host_unreachable).
  - Check ids are C(<family>.<subject>.<metric>), for example C(gpu.ecc.volatile_uncorrectable) or C(gpu.pcie.width).
extends_documentation_fragment:
  - zhisuan.ops._attributes
  - zhisuan.ops._attributes.controller
attributes:
  check_mode:
    support: full
    details:
      - Judging reads only; it runs the same in check mode.
  diff_mode:
    support: none
options:
  family:
    description: The check family whose rules to run.
    type: str
    required: true
    choices: [baseline, bmc, burn, burn_stability, cabling, dcgm, dcgm_health, drive, gpu, gpu_bandwidth, job,
              k8s_cluster, k8s_node, nccl, nccl_bisect, nic, rdma_ports, remediate, remediate_plan, slurm_cluster,
              slurm_node, storage, storage_aggregate, tuning, verify, xid]
  collected:
    description:
      - The registered result of the family's collect task, registered with C(ignore_errors) and
        C(ignore_unreachable) so failures reach the judge - C(bmc) M(zhisuan.ops.redfish_info) or
        M(zhisuan.ops.ipmi_info), C(baseline) M(zhisuan.ops.redfish_firmware_info) (or C(ipmi_info)), C(tuning)
        M(zhisuan.ops.host_info), C(gpu) M(zhisuan.ops.gpu_info), C(xid)
        M(zhisuan.ops.xid_info), C(dcgm) M(zhisuan.ops.dcgm_diag), C(dcgm_health) M(zhisuan.ops.dcgm_health),
        C(gpu_bandwidth) M(zhisuan.ops.gpu_bandwidth), C(burn) M(zhisuan.ops.gpu_burn) (its C(async_status) result), C(burn_stability) a result holding
        C(stability) (C(before), C(during), C(after) gpu facts and C(xid_before), C(xid_after) events), C(verify) a
        result holding C(verify) (the post-repair verification's C(checks), C(recheck) ids, C(power) read and result,
        C(reachable); roles/verify_node), C(remediate) a result holding C(remediate) (one node's remediation
        C(action), C(outcome), C(message), the plan entry's C(remedy) and C(why), C(stranded), C(history_errors),
        C(history_file); roles/remediate_node), C(storage_aggregate) a result holding C(storage_aggregate) (a mapping
        of host name to that host's C(storage) facts of one concurrent fio run; roles/check_storage),
        C(remediate_plan) a result holding C(remediate_plan) (a node the remediation did not act on - the plan's
        C(entry) for it, whether it was C(skipped) and why, C(check_mode), a failed C(history_error);
        playbooks/remediate.yml), C(k8s_node) and C(k8s_cluster) M(zhisuan.ops.k8s_node_info), C(slurm_node) and
        C(slurm_cluster) M(zhisuan.ops.slurm_node_info), C(job) M(zhisuan.ops.job_log) (each run once on the
        controller; the node parts judge the task's host, the cluster parts the inventory's GPU nodes together and
        return the availability as their summary).
    type: dict
    required: true
  profile:
    description:
      - Model profile name (C(a100), C(h100), C(h200), C(l40s), ...), in any case (C(H100) names C(h100)). By default detected from the GPU name.
    type: str
  profile_overrides:
    description: Site overrides of profile values, merged over the selected profile.
    type: dict
    default: {}
  profiles_dir:
    description: A directory of profile YAML files to use instead of the ones shipped in the collection.
    type: path
  expected:
    description:
      - The node's bill of materials and baseline, usually C(zhisuan_expected) (C(gpu_count), C(gpu_model),
        C(driver_version), C(cuda_version), C(mig_devices_per_gpu)).
    type: dict
    default: {}
  thresholds:
    description: Site thresholds for the family, usually C(zhisuan_thresholds.gpu).
    type: dict
    default: {}
  xid_catalog_overrides:
    description:
      - For C(family=xid), a site override of the shipped XID catalog (C(data/xid_catalog.yml)) - a path to a YAML
        file of the same shape, or the mapping itself (for example C(zhisuan_xid_catalog_overrides)).
    type: raw
  context:
    description:
      - What else a family reads, by family. C(bmc) - C(log) (log entries of M(zhisuan.ops.redfish_log_info) or
        M(zhisuan.ops.ipmi_info)), C(log_errors) (the logs M(zhisuan.ops.redfish_log_info) could not read whole,
        its RV(zhisuan.ops.redfish_log_info#module:log_errors)), C(since) (ISO time; older entries are not judged),
        C(firmware) (for the report).
        C(baseline) - C(software) (C(host.software) of M(zhisuan.ops.host_info)), C(baseline) (the site baseline,
        usually C(zhisuan_baseline)), C(bios_attributes) (current BIOS attributes), C(bios_expected) (portable
        names to values, usually C(zhisuan_expected.bios)) and C(vendor) (the BMC adapter, for the vendor's BIOS names).
        C(k8s_node) and C(slurm_node) - C(node) (the node's name in the scheduler, default the host), C(installed)
        (GPUs installed) and C(installed_source) (where that comes from); C(k8s_node) also C(profile) (the profile
        the GPU product label must match) and C(baseline) (its driver and CUDA against the labels).
        C(k8s_cluster) and C(slurm_cluster) - C(installed) (a mapping of scheduler node name to GPUs installed).
        C(job) - C(hostmap) (address or scheduler name to inventory host, to name the hosts of the job's lines).
    type: dict
    default: {}
  gpu_facts:
    description:
      - The node's C(gpu) facts from M(zhisuan.ops.gpu_info), for families that name GPUs by index, UUID and bus id
        (C(xid), C(dcgm), C(burn)) and for the model profile of families other than C(gpu).
    type: dict
"""

EXAMPLES = r"""
- name: Collect GPU facts, keeping failures for the judge
  zhisuan.ops.gpu_info:
    nvidia_smi_path: "{{ zhisuan_tools.nvidia_smi | default('nvidia-smi') }}"
  register: gpu_facts
  ignore_errors: true
  ignore_unreachable: true

- name: Judge them against the H100 profile and the bill of materials
  zhisuan.ops.judge:
    family: gpu
    collected: "{{ gpu_facts }}"
    profile: h100
    expected:
      gpu_count: 8
      driver_version: 550.90.07
  register: gpu_checks
"""

RETURN = r"""
checks:
  description: Check records (see the collection's C(docs/results.md)).
  returned: always
  type: list
  elements: dict
  sample:
    - id: gpu.ecc.volatile_uncorrectable
      host: node03
      component: "GPU 3 (GPU-5c1e0a2b-1…, 0000:4E:00.0)"
      status: fail
      observed: 2
      expected: "== 0"
      message: GPU 3 has 2 uncorrectable ECC errors since the driver loaded
      remedy: reset_gpu
      evidence: "volatile_uncorrected=2"
summary:
  description: A few facts the report shows for the host (model, count, driver, profile).
  returned: always
  type: dict
host_unreachable:
  description: Whether the collect task found the node unreachable.
  returned: always
  type: bool
"""
