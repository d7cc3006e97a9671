#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: dcgm_diag
short_description: Run the NVIDIA DCGM diagnostic (dcgmi diag) at a chosen level and return its per-test results
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Runs C(dcgmi diag -r LEVEL -j) once on the node and returns every test's result per GPU, normalised across the
    DCGM 2.x/3.x (C(DCGM GPU Diagnostic)) and 4.x (C(DCGM Diagnostic)) JSON shapes, ready for the
    C(zhisuan.ops.judge) rules on the controller. It collects facts only; a failed DCGM test does not fail the task.
  - C(dcgmi diag) exits non-zero when a test fails while still printing its JSON; the module reads that JSON and
    returns the exit code in RV(dcgm.rc). Only output without a JSON document fails the task.
  - The diagnostic stresses the GPUs (levels 2 to 4 for minutes to hours); run it on drained nodes.
extends_documentation_fragment:
  - zhisuan.ops._attributes
  - zhisuan.ops._tool.max_output
attributes:
  check_mode:
    support: none
    details:
      - This module runs a stress test; in check mode it does not run and the task is skipped.
  diff_mode:
    support: N/A
    details:
      - This module does not change anything.
  action_group:
    description: Use C(group/zhisuan.ops.dcgm) in C(module_defaults) to set defaults for this module.
    support: full
    membership:
      - zhisuan.ops.dcgm
options:
  level:
    description:
      - The diagnostic level, C(dcgmi diag -r LEVEL).
      - V(1) (seconds) checks the software deployment; V(2) (about 2 minutes) adds PCIe and memory; V(3) (about 15
        minutes) adds the diagnostic, targeted stress, targeted power and memory bandwidth tests; V(4) (an hour or
        more) adds memtest and the pulse test. Non-datacenter GPUs support level 1 only.
      - Inspections use V(1), acceptance V(3).
    type: int
    choices: [1, 2, 3, 4]
    default: 1
  gpus:
    description:
      - DCGM GPU ids to test (C(-i 0,1)); all GPUs when omitted.
    type: list
    elements: int
  dcgmi_path:
    description:
      - The C(dcgmi) program, a name looked up in PATH or an absolute path.
      - The roles pass C(zhisuan_tools.dcgmi) here.
    type: str
    default: dcgmi
  timeout:
    description:
      - Seconds C(dcgmi diag) may run. On expiry its whole process group is killed and the task fails with
        C(error_kind=timed_out); the roles record that as a check with status C(error).
      - Default per level, the nominal duration with margin (C(dcgmi diag) is known to hang) - V(120) for level 1,
        V(600) for level 2, V(1800) for level 3, V(7200) for level 4. An explicit value wins.
    type: int
  src:
    description:
      - Path, on the node, of a saved C(dcgmi diag -j) output (a file a site sent) to read instead of running
        C(dcgmi); the same reader and rules apply, nothing runs, and RV(dcgm.rc) is V(null).
      - O(level) is then the level the saved run was made at.
    type: path
notes:
  - Programs run with C(LANG=C) and C(LC_ALL=C), without a shell.
  - On failure the task returns C(error_kind) (C(not_found), C(timed_out), C(failed) or C(unparsable)), C(tool) and
    C(msg); for a program that ran, also C(cmd), C(rc), C(stdout) and C(stderr).
  - "When C(dcgmi) reaches no host engine and cannot start an embedded one, it prints
    C(Error: Unable to connect to host engine) and the task fails with C(error_kind=failed)."
seealso:
  - module: zhisuan.ops.dcgm_health
  - name: dcgmi diag
    description: NVIDIA DCGM diagnostics documentation.
    link: https://docs.nvidia.com/datacenter/dcgm/latest/user-guide/dcgm-diagnostics.html
"""

EXAMPLES = r"""
- name: Quick software check of every GPU (level 1)
  zhisuan.ops.dcgm_diag:
    dcgmi_path: "{{ zhisuan_tools.dcgmi | default('dcgmi') }}"
  register: dcgm

- name: Acceptance run (level 3) on two GPUs with a longer limit
  zhisuan.ops.dcgm_diag:
    level: 3
    gpus: [0, 1]
    timeout: 3600
  register: dcgm

- name: Show the overall result and the DCGM version
  ansible.builtin.debug:
    msg: "DCGM {{ dcgm.dcgm.version | default('?', true) }} level {{ dcgm.dcgm.level }}: {{ dcgm.dcgm.overall }}"
"""

RETURN = r"""
dcgm:
  description: The diagnostic's results.
  returned: success
  type: dict
  contains:
    level:
      description: The level that ran.
      type: int
      sample: 3
    schema:
      description: The JSON shape read, V(2.x/3.x) or V(4.x).
      type: str
      sample: 4.x
    version:
      description: DCGM version when the output says it (4.x C(metadata.version)), else V(null).
      type: str
      sample: 4.5.2
    driver_version:
      description: NVIDIA driver version DCGM detected (4.x), else V(null).
      type: str
    overall:
      description: >-
        Worst result of all tests - V(Fail), V(Unknown) (a status word DCGM does not define), V(Warn), V(Pass),
        V(Skip) - or V(null) when no test reported.
      type: str
      sample: Pass
    rc:
      description: Exit code of C(dcgmi diag) (non-zero when a test failed).
      type: int
      sample: 0
    tests:
      description: One entry per test, in the order dcgmi printed them.
      type: list
      elements: dict
      contains:
        name:
          description: The test's name as printed (C(GPU Memory) on 2.x/3.x, C(memory) on 4.x).
          type: str
        slug:
          description: The DCGM 4.x plugin name, used in check ids; every Deployment test is C(software).
          type: str
          sample: memory
        category:
          description: DCGM category (C(Deployment), C(Integration), C(Hardware), C(Stress)).
          type: str
        results:
          description: >-
            One per GPU (or one for all GPUs on 2.x/3.x Deployment tests) - C(gpu) (DCGM GPU id or V(null)),
            C(entity) (V(GPU 0) ...), C(status) (V(Pass), V(Fail), V(Warn), V(Skip), V(Not Run)), C(warnings)
            (C(text), C(error_id), C(category), C(severity)) and C(info) (strings).
          type: list
          elements: dict
        summary:
          description: The 4.x C(test_summary) in the same shape as a result, V(null) on 2.x/3.x.
          type: dict
    entities:
      description: GPUs listed in the 4.x C(entity_groups) (C(gpu), C(device_id), C(serial)).
      type: list
      elements: dict
    messages:
      description: Lines dcgmi printed outside the JSON document.
      type: list
      elements: str
    unreadable:
      description:
        - Parts of the document that were not JSON objects (a test category, a test), each named.
        - Not empty means a failed test may be hidden there; the judge makes that an error.
      type: list
      elements: str
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._base import run_module
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu.dcgm_collect import DCGM_DIAG_ARGSPEC, collect_dcgm_diag


def main():
    run_module(DCGM_DIAG_ARGSPEC, collect_dcgm_diag, supports_check_mode=False)


if __name__ == "__main__":
    main()
