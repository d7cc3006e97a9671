#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: gpu_bandwidth
short_description: Measure host-to-device and device-to-device bandwidth of a node's GPUs with NVIDIA nvbandwidth
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Runs NVIDIA C(nvbandwidth) once with the testcases of O(testcases) and returns every bandwidth matrix it prints
    (GB/s), for the C(zhisuan.ops.judge) rules on the controller (checks C(gpu.bandwidth.h2d), C(gpu.bandwidth.d2h),
    C(gpu.bandwidth.p2p) against the model profile's C(h2d_bw_floor_gbs) and C(p2p_bw_floor_gbs)). It collects facts
    only; it never decides pass or fail.
  - With O(src) it reads a saved nvbandwidth output instead of running anything.
  - With O(tool=bandwidthTest) it runs the CUDA samples' C(bandwidthTest) once per GPU of O(devices)
    (C(--device=N --htod --dtoh --memory=pinned --mode=quick)) and returns the figures in the same shape, so the same
    checks judge them; with O(src) it reads a saved bandwidthTest output (quick, range or shmoo, text or C(--csv),
    several runs one after the other). A copy whose data did not verify (nvbandwidth's
    C(ASSERT in expression h_errorFlag == 0), bandwidthTest's C(Result = FAIL)) is returned in
    C(verification_failures), not as a failed task.
  - The copies load the PCIe links and NVLinks for seconds to minutes; run it on a node without jobs.
extends_documentation_fragment:
  - zhisuan.ops._attributes
  - zhisuan.ops._tool.max_output
  - zhisuan.ops._attributes.info_module
  - zhisuan.ops._attributes.actiongroup_gpu
options:
  nvbandwidth_path:
    description:
      - The C(nvbandwidth) program, a name looked up in PATH or an absolute path.
      - The roles pass C(zhisuan_tools.nvbandwidth) here.
    type: str
    default: nvbandwidth
  testcases:
    description:
      - nvbandwidth testcases to run (its C(-t) option, once per testcase).
      - Defaults to C(host_to_device_memcpy_ce), C(device_to_host_memcpy_ce) and C(device_to_device_memcpy_read_ce),
        the three the rules judge (as AzNHC's C(check_gpu_bw) does).
    type: list
    elements: str
  src:
    description:
      - Path, on the node, of a saved nvbandwidth text output to read instead of running O(nvbandwidth_path).
    type: path
  timeout:
    description:
      - Seconds nvbandwidth may run. On expiry its whole process group is killed and the task fails with
        C(error_kind=timed_out); the roles record that as a check with status C(error).
    type: int
    default: 900
  tool:
    description:
      - The program that measures, V(nvbandwidth) or the CUDA samples' V(bandwidthTest).
    type: str
    choices: [nvbandwidth, bandwidthTest]
    default: nvbandwidth
  bandwidthtest_path:
    description:
      - The C(bandwidthTest) program (C(zhisuan_tools.bandwidthTest)), used with O(tool=bandwidthTest).
    type: str
    default: bandwidthTest
  devices:
    description:
      - The CUDA device indexes bandwidthTest measures, one run each; required with O(tool=bandwidthTest) without
        O(src).
    type: list
    elements: int
  nvlink_traffic:
    description:
      - Also read the NVLink data counters (C(nvidia-smi nvlink -gt d)) before and after the nvbandwidth run and return
        each link's growth in RV(bandwidth.nvlink_traffic); the judge's C(gpu.nvlink.traffic) check fails a link that
        carried none of the device-to-device test's data while its siblings did.
      - A failing read is not fatal; it is reported in RV(bandwidth.nvlink_traffic_error). Not read with O(src) or
        O(tool=bandwidthTest).
    type: bool
    default: false
  nvidia_smi_path:
    description: The nvidia-smi program read with O(nvlink_traffic) (C(zhisuan_tools.nvidia_smi)).
    type: str
    default: nvidia-smi
notes:
  - Programs run with C(LANG=C) and C(LC_ALL=C), without a shell.
  - On failure the task returns C(error_kind) (C(not_found), C(timed_out), C(failed) or C(unparsable)), C(tool) and
    C(msg); for a program that ran, also C(cmd), C(rc), C(stdout) and C(stderr).
seealso:
  - name: nvbandwidth
    description: NVIDIA's bandwidth measurement tool for GPUs.
    link: https://github.com/NVIDIA/nvbandwidth
"""

EXAMPLES = r"""
- name: Measure host<->device and device<->device bandwidth
  zhisuan.ops.gpu_bandwidth:
    nvbandwidth_path: "{{ zhisuan_tools.nvbandwidth | default('nvbandwidth') }}"
  register: bandwidth

- name: Judge it against the model profile
  zhisuan.ops.judge:
    family: gpu_bandwidth
    collected: "{{ bandwidth }}"

- name: Read a saved nvbandwidth output
  zhisuan.ops.gpu_bandwidth:
    src: /var/tmp/nvbandwidth.txt
  register: bandwidth
"""

RETURN = r"""
bandwidth:
  description: What nvbandwidth printed. The field list is in the collection's C(docs/gpu-facts.md).
  returned: success
  type: dict
  contains:
    version:
      description: nvbandwidth version as printed.
      type: str
      sample: v0.2
    driver_version:
      description: NVIDIA driver version as printed.
      type: str
      sample: 525.105.17
    devices:
      description: The CUDA devices (C(index), C(name), C(bus_id) when printed).
      type: list
      elements: dict
    testcases:
      description: >-
        Per testcase name: C(description) (the matrix title), C(columns) (GPU indices), C(matrix) (C(row), C(values)
        in GB/s, V(null) for N/A) and C(sum).
      type: dict
    waived:
      description: Number of testcases nvbandwidth waived (not runnable on this system).
      type: int
    unparsed:
      description: Lines that are no part of a known block (at most 50).
      type: list
      elements: str
    waived_testcases:
      description: The testcases nvbandwidth waived (C(Waiving NAME.) of v0.1-v0.4, C(Waived:) after C(Running NAME.)).
      type: list
      elements: str
    verification_failures:
      description:
        - Copies whose data did not verify, each C(testcase) and C(evidence) (the tool's lines); judged C(fail)
          (C(gpu.bandwidth.verification)), never a skip.
      type: list
      elements: dict
    cmd:
      description: The command run, V(null) with O(src).
      type: list
      elements: str
    nvlink_traffic:
      description:
        - With O(nvlink_traffic), per GPU (C(index), C(name), C(uuid), C(partial)) its C(links), each C(link),
          C(tx_kib) and C(rx_kib) (the data counters' growth over the run) and C(reset) (a counter went down), plus
          C(window_s), C(unparsed) and C(partial); else absent.
      type: dict
      returned: with O(nvlink_traffic)
    nvlink_traffic_error:
      description: Why the NVLink data counters could not be read, or V(null).
      type: str
      returned: with O(nvlink_traffic)
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._base import run_module
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu.bandwidth_collect import GPU_BANDWIDTH_ARGSPEC, collect_bandwidth


def main():
    run_module(GPU_BANDWIDTH_ARGSPEC, collect_bandwidth)


if __name__ == "__main__":
    main()
