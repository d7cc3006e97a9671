#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: gpu_reset
short_description: Reset NVIDIA GPUs with nvidia-smi, refusing while a process or an NVLink job uses them
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Resets the GPUs named in O(gpus) with C(nvidia-smi --gpu-reset -i N), one at a time, then reads the GPU
    facts again (as M(zhisuan.ops.gpu_info) does) and returns them, so the play can re-judge the GPUs.
  - A reset clears volatile state such as volatile uncorrectable ECC counts and completes pending row remaps; it
    is the C(reset_gpu) remedy of the judge.
  - "Guards: the module refuses, and resets nothing, when a GPU named is not on the node, when any process uses a
    GPU named (the refusal lists pid and name), or when a GPU named has NVLink and a process runs on another NVLink
    GPU: on NVSwitch systems all NVLink GPUs share the fabric, so that process may be an NVLink job the reset would
    break. When the NVLink state cannot be read, any process on another GPU refuses the reset."
  - It reads C(nvidia-smi -q -x) and C(nvidia-smi nvlink -s) first, in check mode too; in check mode it resets
    nothing and predicts C(changed).
extends_documentation_fragment:
  - zhisuan.ops._tool
  - zhisuan.ops._attributes
  - zhisuan.ops._attributes.actiongroup_gpu
attributes:
  check_mode:
    support: full
    details:
      - Reads the GPU facts and applies the guards, resets nothing, and returns C(changed=true) for the GPUs it
        would reset.
  diff_mode:
    support: full
    details:
      - Shows, per GPU reset, the volatile uncorrectable ECC count, pending row remap and retired pages, active
        NVLinks and process count before and after.
options:
  gpus:
    description:
      - The GPUs to reset, each by index (the minor number C(gpu_info) reports as C(index)) or PCI bus id
        (C(0000:4E:00.0), C(00000000:4E:00.0) or C(4e:00.0)).
    type: list
    elements: str
    required: true
  nvidia_smi_path:
    description:
      - The C(nvidia-smi) program, a name looked up in PATH or an absolute path.
      - The remediation roles pass C(zhisuan_tools.nvidia_smi) here.
    type: str
    default: nvidia-smi
notes:
  - Needs root on the node (C(become)). Drain the node in its scheduler before a reset.
  - O(timeout) applies to each C(nvidia-smi) call, the resets included.
  - On a refusal the task fails with C(error_kind=refused), a RV(msg) naming each GPU and why, and RV(refusals).
    When a reset fails part way, C(changed) is V(true) and RV(reset) lists the GPUs already reset.
  - If a GPU reset is not listed by C(nvidia-smi) afterwards, it fell off the bus; the task fails and the node needs
    a power cycle.
seealso:
  - module: zhisuan.ops.gpu_info
  - name: nvidia-smi documentation
    description: The C(-r, --gpu-reset) option and its requirements.
    link: https://docs.nvidia.com/deploy/nvidia-smi/index.html
"""

EXAMPLES = r"""
- name: Reset GPU 3 after volatile uncorrectable ECC errors (the node is drained)
  zhisuan.ops.gpu_reset:
    gpus: [3]
    nvidia_smi_path: "{{ zhisuan_tools.nvidia_smi | default('nvidia-smi') }}"
  become: true
  register: reset

- name: Reset two GPUs by PCI bus id, with a longer timeout
  zhisuan.ops.gpu_reset:
    gpus:
      - "0000:4E:00.0"
      - "0000:87:00.0"
    timeout: 180
  become: true

- name: See what would be reset, and whether a guard refuses it
  zhisuan.ops.gpu_reset:
    gpus: [3]
  check_mode: true
  register: plan
"""

RETURN = r"""
reset:
  description: The GPUs reset (in check mode, those that would be), in bus order.
  returned: success, and on a reset that failed part way
  type: list
  elements: dict
  contains:
    index:
      description: The GPU's index (minor number) as C(gpu_info) reports it.
      type: int
    nvidia_smi_index:
      description: The index passed to C(nvidia-smi --gpu-reset -i), the GPU's position in C(nvidia-smi -q -x).
      type: int
    pci_bus_id:
      description: PCI bus id.
      type: str
      sample: "0000:4E:00.0"
    uuid:
      description: GPU UUID.
      type: str
gpu:
  description:
    - The GPU facts read after the reset (in check mode, those read before), as M(zhisuan.ops.gpu_info) returns
      them; see the collection's C(docs/gpu-facts.md).
  returned: success
  type: dict
msg:
  description: What was reset, or why nothing was.
  returned: always
  type: str
  sample: reset GPU 3 (0000:4E:00.0)
refusals:
  description: Each guard that refused the reset.
  returned: when a guard refused
  type: list
  elements: dict
  contains:
    gpu:
      description: The GPU, as V(GPU <index> (<bus id>\)), or the name given when it is not on the node.
      type: str
    reason:
      description: V(unknown_gpu), V(in_use), V(processes_unknown) or V(nvlink_job).
      type: str
    processes:
      description: The processes that block the reset (C(gpu), C(pid), C(name)).
      type: list
      elements: dict
    message:
      description: The refusal in words.
      type: str
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._base import run_module
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu.reset import reset_gpus


def main():
    argument_spec = dict(
        gpus=dict(type="list", elements="str", required=True),
        nvidia_smi_path=dict(type="str", default="nvidia-smi"),
    )
    run_module(argument_spec, reset_gpus)


if __name__ == "__main__":
    main()
