#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: dcgm_health
short_description: Read the NVIDIA DCGM health watches (dcgmi health -c) of a node's GPUs
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Runs C(dcgmi health -c -j) once and returns the overall health and every incident the DCGM health watches
    recorded (PCIe, memory, NVLink, thermal, power, InfoROM, driver ...), for the C(zhisuan.ops.judge) rules on the
    controller. It collects facts only; a C(Warning) or C(Failure) health does not fail the task.
  - A quick check (seconds) that does not load the GPUs, unlike M(zhisuan.ops.dcgm_diag).
extends_documentation_fragment:
  - zhisuan.ops._tool
  - zhisuan.ops._attributes
  - zhisuan.ops._attributes.info_module
attributes:
  action_group:
    description: Use C(group/zhisuan.ops.dcgm) in C(module_defaults) to set defaults for this module.
    support: full
    membership:
      - zhisuan.ops.dcgm
options:
  dcgmi_path:
    description:
      - The C(dcgmi) program, a name looked up in PATH or an absolute path.
      - The roles pass C(zhisuan_tools.dcgmi) here.
    type: str
    default: dcgmi
  src:
    description:
      - Path, on the node, of a saved C(dcgmi health -c -j) output to read instead of running C(dcgmi); the same
        reader and rules apply and RV(dcgm_health.rc) is V(null).
    type: path
notes:
  - "The health watches must be enabled on the host engine (C(dcgmi health -s a)); otherwise dcgmi prints
    C(Error: Health watches not enabled) and the task fails with C(error_kind=failed)."
seealso:
  - module: zhisuan.ops.dcgm_diag
  - name: DCGM health monitoring
    description: NVIDIA DCGM user guide, health and diagnostics.
    link: https://docs.nvidia.com/datacenter/dcgm/latest/user-guide/feature-overview.html
"""

EXAMPLES = r"""
- name: Read the DCGM health watches
  zhisuan.ops.dcgm_health:
    dcgmi_path: "{{ zhisuan_tools.dcgmi | default('dcgmi') }}"
  register: health

- name: Show what DCGM reports
  ansible.builtin.debug:
    msg: "{{ health.dcgm_health.overall }}: {{ health.dcgm_health.incidents | map(attribute='message') | list }}"
"""

RETURN = r"""
dcgm_health:
  description: The health watches' report.
  returned: success
  type: dict
  contains:
    overall:
      description: Overall health, V(Healthy), V(Warning), V(Failure) or V(Internal error).
      type: str
      sample: Healthy
    entities:
      description: Entities with an incident (C(entity) such as V(GPU 0), C(gpu) id or V(null), C(health)).
      type: list
      elements: dict
    incidents:
      description: >-
        One per entity and health system - C(entity), C(gpu), C(system) (V(pcie), V(memory), V(nvlink),
        V(thermal), V(power), V(inforom), V(driver), V(sm) ...), C(system_name) as printed, C(health) and C(message).
      type: list
      elements: dict
    rc:
      description: Exit code of C(dcgmi health).
      type: int
      sample: 0
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._base import run_module
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu.dcgm_collect import DCGM_HEALTH_ARGSPEC, collect_dcgm_health


def main():
    run_module(DCGM_HEALTH_ARGSPEC, collect_dcgm_health)


if __name__ == "__main__":
    main()
