#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: nccl_test
short_description: Run an nccl-tests collective (all_reduce_perf, all_gather_perf) on one node or over several with mpirun
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Runs one L(nccl-tests,https://github.com/NVIDIA/nccl-tests) binary over a sweep of message sizes and returns
    every measured point (size, time, algorithm and bus bandwidth, wrong values) read by the table's column header,
    the devices it used, the C(Out of bounds values) count and the C(Avg bus bandwidth) line (returned, never judged).
    It collects facts only; the C(zhisuan.ops.judge) rules (family C(nccl)) judge the bus bandwidth at a large
    message against the model's floor.
  - Without O(hosts) (or with one host) the test runs on this node with one process driving O(gpus_per_node) GPUs.
  - With two or more O(hosts) it runs through C(mpirun) from this node, one rank per GPU, with a hostfile written
    from O(hosts) (C(<host> slots=<gpus_per_node>)) into a temporary directory removed afterwards. The nodes must
    reach each other as C(mpirun) expects (passwordless SSH, the same paths).
extends_documentation_fragment:
  - zhisuan.ops._tool
  - zhisuan.ops._attributes
attributes:
  check_mode:
    support: none
    details:
      - A bandwidth test is a load test, not a change that can be predicted; in check mode it does not run.
  diff_mode:
    support: N/A
    details:
      - The module does not change the node's configuration.
  action_group:
    description: Use C(group/zhisuan.ops.nccl) in C(module_defaults) to set defaults for this module.
    support: full
    membership:
      - zhisuan.ops.nccl
options:
  op:
    description: The nccl-tests collective to run.
    type: str
    choices: [all_reduce_perf, all_gather_perf]
    default: all_reduce_perf
  nccl_tests_path:
    description:
      - The test program, a name looked up in PATH or an absolute path (nccl-tests builds into C(build/)).
      - Default the name of O(op). The roles pass C(zhisuan_tools.all_reduce_perf) or C(zhisuan_tools.all_gather_perf).
    type: str
  mpirun_path:
    description: The C(mpirun) program for a multi-node run, a name looked up in PATH or an absolute path.
    type: str
    default: mpirun
  hosts:
    description:
      - Nodes of a multi-node run, as C(mpirun) reaches them (names or fabric addresses), this node usually first.
      - Empty or one host runs on this node alone.
    type: list
    elements: str
    default: []
  gpus_per_node:
    description: GPUs per node (C(-g) of a single-node run; the hostfile's C(slots) and one rank per GPU with mpirun).
    type: int
    default: 8
  min_bytes:
    description: Smallest message (C(-b)), bytes with an optional C(K), C(M) or C(G) suffix.
    type: str
    default: "8"
  max_bytes:
    description:
      - Largest message (C(-e)). The judge reads the bus bandwidth at the largest size of at least 8 GiB; a smaller
        O(max_bytes) leaves the busbw judged on a message too small to reach peak, and a coverage warning.
    type: str
    default: 8G
  step_factor:
    description: Multiplication factor between sizes (C(-f)).
    type: int
    default: 2
  check:
    description: Validate the results (C(-c 1)); wrong values are counted in the C(#wrong) column.
    type: bool
    default: true
  iters:
    description: Timed iterations per size (C(-n)).
    type: int
    default: 20
  warmup_iters:
    description: Warm-up iterations per size (C(-w)); the program's default when not set.
    type: int
  env:
    description:
      - Environment variables for the test, typically C(NCCL_*) (C(NCCL_IB_HCA), C(NCCL_SOCKET_IFNAME), C(NCCL_ALGO)).
      - Passed with C(-x NAME=value) to every rank of a multi-node run.
    type: dict
    default: {}
  mpirun_args:
    description: Extra C(mpirun) arguments placed before the program (C(--allow-run-as-root), C(--mca ...)).
    type: list
    elements: str
    default: []
seealso:
  - name: nccl-tests performance notes
    description: What algbw and busbw mean and how busbw is computed per collective.
    link: https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md
notes:
  - Set O(timeout) to cover the whole sweep; a multi-node sweep to 8 GiB takes minutes.
"""

EXAMPLES = r"""
- name: All-reduce on this node's 8 GPUs, 8 B to 16 GiB
  zhisuan.ops.nccl_test:
    nccl_tests_path: /opt/nccl-tests/build/all_reduce_perf
    max_bytes: 16G
    timeout: 900
  register: nccl

- name: All-reduce over the play's nodes from the first one
  zhisuan.ops.nccl_test:
    nccl_tests_path: "{{ zhisuan_tools.all_reduce_perf | default('all_reduce_perf') }}"
    mpirun_path: "{{ zhisuan_tools.mpirun | default('mpirun') }}"
    hosts: "{{ ansible_play_hosts }}"
    min_bytes: 1G
    env:
      NCCL_IB_HCA: mlx5
    mpirun_args: [--allow-run-as-root]
    timeout: 1800
  run_once: true
  register: nccl_cluster

- name: Show the bus bandwidth at the largest message
  ansible.builtin.debug:
    msg: "{{ (nccl.nccl.points | last).out_of_place.busbw }} GB/s"
"""

RETURN = r"""
nccl:
  description: What the run measured.
  returned: success
  type: dict
  contains:
    op:
      description: The collective (O(op)).
      type: str
      sample: all_reduce_perf
    nodes:
      description: The nodes of the run (O(hosts), else the host name the test printed).
      type: list
      elements: str
    hosts_printed:
      description: Host names as the test printed them on its device lines.
      type: list
      elements: str
    version:
      description: nccl-tests version when printed (2.13 and later), else V(null).
      type: str
    params:
      description: The run's parameter line (C(threads), C(gpus_per_process), C(min_bytes), C(max_bytes), C(iters), C(validation), ...).
      type: dict
    columns:
      description: The result table's column names as printed.
      type: list
      elements: str
    points:
      description:
        - One record per message size, C(bytes), C(count), C(type), C(redop) and C(root) when printed, C(failed)
          (a C(FAILED) check column), and C(out_of_place) / C(in_place) with C(time_us), C(algbw), C(busbw) (GB/s)
          and C(wrong) (C(#wrong) count) or C(error) (older versions' error column); V(null) for C(N/A).
        - C(redop) is V(null) when older C(alltoall_perf) prints that column blank.
      type: list
      elements: dict
    avg_busbw:
      description: The C(Avg bus bandwidth) line (an average over every size; not judged).
      type: float
    out_of_bounds:
      description: The C(Out of bounds values) count.
      type: int
    out_of_bounds_ok:
      description: Whether that line said C(OK).
      type: bool
    devices:
      description: The device lines (C(rank), C(group), C(pid), C(host), C(device), C(bus_id), C(name)).
      type: list
      elements: dict
    gpus_per_node:
      description: O(gpus_per_node).
      type: int
    command:
      description: The command line that ran.
      type: str
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._base import run_module
from ansible_collections.zhisuan.ops.plugins.module_utils._net.nccl_run import collect_nccl


def main():
    argument_spec = dict(
        op=dict(type="str", default="all_reduce_perf", choices=["all_reduce_perf", "all_gather_perf"]),
        nccl_tests_path=dict(type="str"),
        mpirun_path=dict(type="str", default="mpirun"),
        hosts=dict(type="list", elements="str", default=[]),
        gpus_per_node=dict(type="int", default=8),
        min_bytes=dict(type="str", default="8"),
        max_bytes=dict(type="str", default="8G"),
        step_factor=dict(type="int", default=2),
        check=dict(type="bool", default=True),
        iters=dict(type="int", default=20),
        warmup_iters=dict(type="int"),
        env=dict(type="dict", default={}),
        mpirun_args=dict(type="list", elements="str", default=[]),
    )
    run_module(argument_spec, collect_nccl, supports_check_mode=False)


if __name__ == "__main__":
    main()
