#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: check
short_description: Collect a node's GPU, XID, DCGM and tuning facts and judge them, in one task per node
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Collects the node-side families on the node in one module run (M(zhisuan.ops.node_collect) - what
    M(zhisuan.ops.gpu_info), M(zhisuan.ops.xid_info), M(zhisuan.ops.dcgm_diag), M(zhisuan.ops.dcgm_health),
    M(zhisuan.ops.gpu_bandwidth) and M(zhisuan.ops.host_info) each collect, one round trip per node), and judges each
    family's output on the controller with the rules M(zhisuan.ops.judge) uses, in the same task.
  - The GPU facts are collected first; the other families name GPUs by index, UUID and bus id with them.
  - A family whose collection fails (the tool is missing, hangs, fails or prints unreadable output) becomes the family's
    C(<family>.collect.<tool>) error check, as with M(zhisuan.ops.judge); a judgement that cannot run (an XID catalog
    override that cannot be read) becomes the family's C(<family>.task.failed) error check. The other families run.
  - An unreachable node ends the task with RV(host_unreachable); the node is recorded as unreachable.
  - With O(record), the checks and the report facts are kept in the host fact C(results_node_record) for that run in
    the same task (no C(set_fact)); the C(results) role's record reads them. The fact is one JSON document, a string
    to read with C(ansible.builtin.from_json), holding C(run), C(checks), C(facts) and C(unreachable). Ansible copies
    and walks a mapping fact several times a result, which cost the controller about 35 ms a node for ~250 checks.
  - The host facts C(check_gpu_facts) and C(check_tuning_host) are set for the families that follow (nccl, k8s, slurm,
    baseline).
  - This is an action plugin; the C(check_node) role calls it with the variables of the per-family roles.
extends_documentation_fragment:
  - zhisuan.ops._attributes
attributes:
  action:
    description: Indicates this has a corresponding action plugin so some parts of the options can be executed on the controller.
    support: full
  async:
    description: Supports being used with the C(async) keyword.
    support: none
  check_mode:
    support: partial
    details:
      - The families are collected in check mode, except C(dcgm) (C(dcgmi diag) loads the GPUs), which is skipped.
  diff_mode:
    support: none
  platform:
    description: Target OS/families that can be operated against.
    support: full
    platforms: posix
options:
  families:
    description:
      - The families to collect, in this order whatever the order given. C(gpu_bandwidth) is
        M(zhisuan.ops.gpu_bandwidth) (nvbandwidth), C(dcgm) C(dcgmi diag), C(dcgm_health) C(dcgmi health -c -j),
        C(tuning) M(zhisuan.ops.host_info), C(drive) C(smartctl -j -a) on every NVMe drive (M(zhisuan.ops.node_collect)).
      - Left out (with O(variables)), the C(check_node) role's variables choose them and O(keep) and O(record) -
        C(check_node_families), C(check_node_gpu_facts), C(check_node_dcgm_diag), C(check_gpu_bandwidth),
        C(check_dcgm_health) and C(check_node_record), with that role's defaults.
    type: list
    elements: str
    choices: [gpu, gpu_bandwidth, xid, dcgm, dcgm_health, tuning, drive]
  collect:
    description:
      - The options of each family's collect module, by family (C(gpu) those of M(zhisuan.ops.gpu_info),
        C(gpu_bandwidth) of M(zhisuan.ops.gpu_bandwidth), C(xid) of
        M(zhisuan.ops.xid_info), C(dcgm) of M(zhisuan.ops.dcgm_diag), C(dcgm_health) of M(zhisuan.ops.dcgm_health),
        C(tuning) of M(zhisuan.ops.host_info)). Options set to V(null) are left out.
      - With O(variables), an option left out here is taken from the node's variables (see O(variables)).
    type: dict
    default: {}
  judge:
    description:
      - The judgement options of each family, by family, as M(zhisuan.ops.judge) takes them - C(profile),
        C(profile_overrides), C(profiles_dir), C(expected), C(thresholds), C(xid_catalog_overrides).
    type: dict
    default: {}
  keep:
    description:
      - The families whose checks are judged and returned; by default all of O(families). A family collected but
        not kept only provides its facts (the GPU facts that name GPUs, for a run that selected xid but not gpu).
    type: list
    elements: str
  gpu_facts:
    description: GPU facts to name GPUs by when O(families) does not collect C(gpu).
    type: dict
  record:
    description:
      - The run the checks belong to (its id). The checks, the report facts and whether the node was unreachable are
        added to the host fact C(results_node_record) of that run (a record of another run is replaced).
    type: str
  variables:
    description:
      - Take each option that O(collect) and O(judge) leave out from the node's variables, as the per-family roles
        do - the role's own variable first (C(check_gpu_nvidia_smi), C(check_xid_since), C(check_dcgm_timeout),
        C(check_tuning_root), ...), then the inventory's (C(zhisuan_tools.nvidia_smi), C(zhisuan_xid_since),
        C(zhisuan_dcgm_level), C(zhisuan_expected), C(zhisuan_thresholds.gpu), C(zhisuan_gpu_profile), ...), then
        those roles' defaults. The C(check_node) role gives no options and lets this resolve them all, in one pass.
      - V(false) leaves out what is not given, so each module's and the judge's own defaults apply.
    type: bool
    default: true
seealso:
  - module: zhisuan.ops.judge
  - module: zhisuan.ops.node_collect
  - module: zhisuan.ops.gpu_info
  - module: zhisuan.ops.xid_info
"""

EXAMPLES = r"""
- name: GPU, XID and DCGM checks of an acceptance run, one task per node
  zhisuan.ops.check:
    families: [gpu, xid, dcgm, dcgm_health]
    collect:
      gpu:
        nvidia_smi_path: "{{ zhisuan_tools.nvidia_smi | default('nvidia-smi') }}"
        timeout: 60
      dcgm:
        level: 3
    judge:
      gpu:
        expected: "{{ zhisuan_expected | default({}) }}"
    record: "{{ hostvars['localhost'].results_run_id }}"
"""

RETURN = r"""
checks:
  description: The check records of the kept families (see the collection's C(docs/results.md)).
  returned: when O(record) is not set (with O(record) they are in the host fact C(results_node_record) only)
  type: list
  elements: dict
checks_kept:
  description: How many checks this task added to the host fact C(results_node_record).
  returned: when O(record) is set
  type: int
  sample: 245
summary:
  description: The report facts of each kept family, by family (C(gpu), C(xid), C(dcgm), C(dcgm_health), C(tuning)).
  returned: always
  type: dict
host_unreachable:
  description: Whether the node was unreachable.
  returned: always
  type: bool
ansible_facts:
  description: C(check_gpu_facts), C(check_tuning_host) and, with O(record), C(results_node_record) (a JSON string).
  returned: always
  type: dict
"""
