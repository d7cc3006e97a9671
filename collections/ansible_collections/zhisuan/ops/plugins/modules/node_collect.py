#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: node_collect
short_description: Collect several node-side families (GPU, XID, DCGM, tuning) in one module run
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Runs, in one process on the node, what M(zhisuan.ops.gpu_info), M(zhisuan.ops.gpu_bandwidth),
    M(zhisuan.ops.xid_info), M(zhisuan.ops.dcgm_diag), M(zhisuan.ops.dcgm_health) and M(zhisuan.ops.host_info)
    each do, with each family's options checked against that module's own options and defaults, and returns what
    each module would have returned. One round trip per node instead of one per family.
  - A family that fails (its tool is missing, hangs, fails, prints unreadable output, or its options are wrong) is
    returned as its module's failure (C(failed), C(msg), C(error_kind), C(tool) and, for a program, C(cmd), C(rc),
    C(stdout), C(stderr)); the other families still run and the task itself does not fail.
  - It collects facts only; it never decides pass or fail. The C(zhisuan.ops.check) action runs it and judges each
    family on the controller.
extends_documentation_fragment:
  - zhisuan.ops._attributes
attributes:
  check_mode:
    support: partial
    details:
      - The families run in check mode except C(dcgm) (C(dcgmi diag) loads the GPUs), which is returned as skipped.
  diff_mode:
    support: N/A
    details:
      - This module does not change anything.
options:
  families:
    description:
      - The families to collect. They run in the order C(gpu), C(gpu_bandwidth), C(xid), C(dcgm), C(dcgm_health),
        C(tuning), C(drive), whatever the order given (the family table's, C(module_utils/_family/table.py)).
    type: list
    elements: str
    required: true
    choices: [gpu, gpu_bandwidth, xid, dcgm, dcgm_health, tuning, drive]
  options:
    description:
      - The options of each family, by family - C(gpu) those of M(zhisuan.ops.gpu_info), C(gpu_bandwidth) of
        M(zhisuan.ops.gpu_bandwidth), C(xid) of M(zhisuan.ops.xid_info), C(dcgm) of M(zhisuan.ops.dcgm_diag),
        C(dcgm_health) of M(zhisuan.ops.dcgm_health), C(tuning) of M(zhisuan.ops.host_info), with their defaults;
        C(drive) takes C(smartctl_path) (default V(smartctl)), C(devices) (default V([]), the NVMe controllers under
        C(<root>/sys/class/nvme)), C(root) (default V(/)) and C(timeout) (seconds per C(smartctl -j -a) call).
        Options set to V(null) take the module's default.
    type: dict
    default: {}
seealso:
  - module: zhisuan.ops.check
  - module: zhisuan.ops.gpu_info
  - module: zhisuan.ops.xid_info
"""

EXAMPLES = r"""
- name: GPU facts, Xid events and DCGM health in one round trip
  zhisuan.ops.node_collect:
    families: [gpu, xid, dcgm_health]
    options:
      gpu:
        nvidia_smi_path: "{{ zhisuan_tools.nvidia_smi | default('nvidia-smi') }}"
      xid:
        since: -24h
  become: true
  register: node

- name: Show the Xid codes seen
  ansible.builtin.debug:
    msg: "{{ node.collected.xid.xid.events | map(attribute='code') | list }}"
"""

RETURN = r"""
collected:
  description:
    - What each family's module returned, by family (C(gpu) holds C(gpu) as M(zhisuan.ops.gpu_info) returns it,
      C(xid) holds C(xid), C(dcgm) holds C(dcgm), C(dcgm_health) holds C(dcgm_health), C(tuning) holds C(host),
      C(gpu_bandwidth) holds C(bandwidth)), or that module's failure.
  returned: always
  type: dict
  sample: {"xid": {"changed": false, "xid": {"events": [], "source": "journalctl"}}}
timing:
  description: Seconds each family took on the node, by family.
  returned: always
  type: dict
  sample: {"gpu": 0.41, "xid": 0.05}
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._base import run_module
from ansible_collections.zhisuan.ops.plugins.module_utils._node_collect import ORDER, collect_families


def main():
    argument_spec = dict(
        families=dict(type="list", elements="str", required=True, choices=list(ORDER)),
        options=dict(type="dict", default={}),
    )
    run_module(argument_spec, collect_families, shared=())


if __name__ == "__main__":
    main()
