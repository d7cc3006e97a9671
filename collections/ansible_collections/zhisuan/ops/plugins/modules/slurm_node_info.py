#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: slurm_node_info
short_description: Slurm as the GPU platform - every node's state, reason and GPU gres, and the partitions
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Reads C(scontrol -o show node) and C(scontrol -o show partition) once and returns every node's state (as
    C(sinfo) words it - idle, mixed, drained, draining, down, C(idle*) when slurmd does not answer), drain reason with
    who set it and when, partitions and the GPUs its C(Gres=) configures; and every partition's state and nodes.
  - It collects facts only; the C(slurm) rules (filter P(zhisuan.ops.platform_checks#filter)) judge them.
  - Runs where the Slurm clients and slurm.conf are (the controller, a login node), usually with C(run_once).
extends_documentation_fragment:
  - zhisuan.ops._tool
  - zhisuan.ops._attributes
  - zhisuan.ops._attributes.info_module
options:
  scontrol_path:
    description:
      - The C(scontrol) program, a name looked up in PATH or an absolute path (the roles pass C(zhisuan_tools.scontrol)).
    type: str
    default: scontrol
  src:
    description:
      - A saved C(scontrol show node) output to read instead of running O(scontrol_path) (a file a site sent) - the
        C(-o) form (one node a line) or the multi-line form an operator pastes (Slurm 17.11 to 24.x), detected line
        by line. A node record it cannot read is a warning naming its line; the other nodes are read.
      - The partitions are then read from O(partition_src), else not at all (RV(slurm.partitions) is empty).
    type: path
  partition_src:
    description: A saved C(scontrol show partition) output (either form), with O(src).
    type: path
"""

EXAMPLES = r"""
- name: Read the Slurm nodes and partitions
  zhisuan.ops.slurm_node_info:
    scontrol_path: "{{ zhisuan_tools.scontrol | default('scontrol') }}"
  delegate_to: localhost
  run_once: true
  register: slurm

- name: Read the nodes from the 'scontrol show node' a site pasted into its ticket
  zhisuan.ops.slurm_node_info:
    src: /var/tmp/case-1234/scontrol-show-node.txt
  delegate_to: localhost
  run_once: true
  register: slurm
"""

RETURN = r"""
slurm:
  description: The cluster as slurmctld sees it.
  returned: success
  type: dict
  contains:
    nodes:
      description: Node name -> C(name), C(state), C(raw_state), C(drain), C(down), C(responding), C(reason),
        C(reason_user), C(reason_time), C(partitions), C(gres), C(gpus), C(cpus_alloc).
      type: dict
    partitions:
      description: Partition name -> C(state) (UP, DOWN, DRAIN, INACTIVE), C(nodes), C(default).
      type: dict
    warnings:
      description: The node records that could not be read, each naming its line.
      type: list
      elements: str
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._base import run_module
from ansible_collections.zhisuan.ops.plugins.module_utils._sched.slurm_nodes import collect_slurm_facts


def main():
    run_module(dict(scontrol_path=dict(type="str", default="scontrol"), src=dict(type="path"),
                    partition_src=dict(type="path")), collect_slurm_facts)


if __name__ == "__main__":
    main()
