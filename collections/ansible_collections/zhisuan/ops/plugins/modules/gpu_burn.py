#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: gpu_burn
short_description: Burn every GPU of a node with gpu-burn and return each GPU's throughput, errors and verdict
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Runs L(gpu-burn,https://github.com/wilicc/gpu-burn) once for O(duration) seconds on all GPUs of the node and
    returns, per GPU, the Gflop/s it reported over time (samples, median, final), the compare errors it counted and
    its final C(OK)/C(FAULTY) verdict. It collects facts only; the C(zhisuan.ops.judge) rules on the controller
    decide pass or fail.
  - gpu-burn prints C(OK) for a GPU that did no work at all (0 Gflop/s); the numbers are returned so the rules catch it.
  - The program's progress output is read after it exits, never shown, so the module runs unchanged under C(async).
    Drive long burns with C(async) and C(poll) (or C(async_status)) so the SSH connection does not stay open.
extends_documentation_fragment:
  - zhisuan.ops._attributes
  - zhisuan.ops._tool.max_output
attributes:
  check_mode:
    support: none
    details:
      - A burn is a load test, not a change that can be predicted; in check mode the module does not run and Ansible
        reports it as skipped because the module does not support check mode.
  diff_mode:
    support: N/A
    details:
      - The module does not change the node's configuration.
  action_group:
    description: Use C(group/zhisuan.ops.burn) in C(module_defaults) to set defaults for this module.
    support: full
    membership:
      - zhisuan.ops.burn
options:
  duration:
    description:
      - Seconds to burn, passed to gpu-burn as its last argument.
      - 60 to 120 s is a smoke test, 900 s an acceptance burn (the SuperBench H100 default), hours a first-delivery burn-in.
    type: int
    required: true
  gpu_burn_path:
    description:
      - The C(gpu_burn) program, a name looked up in PATH or an absolute path.
      - The burn-in roles pass C(zhisuan_tools.gpu_burn) here.
    type: str
    default: gpu_burn
  doubles:
    description:
      - Burn in double precision (gpu-burn C(-d)); otherwise single precision.
    type: bool
    default: false
  tensor_cores:
    description:
      - Let cuBLAS use tensor cores (gpu-burn C(-tc)).
    type: bool
    default: false
  workdir:
    description:
      - Directory gpu-burn runs in. It loads its compare kernel (C(compare.ptx), C(compare.fatbin) in newer builds)
        from its current directory.
      - Defaults to the directory that holds O(gpu_burn_path).
    type: path
  timeout:
    description:
      - Seconds gpu-burn may run in all. On expiry its whole process group is killed and the task fails with
        C(error_kind=timed_out); the burn-in roles record that as a check with status C(error).
      - Defaults to O(duration) + 120 s (CUDA start-up on every GPU and the 30 s gpu-burn waits for its workers
        to stop).
    type: int
  sample_s:
    description:
      - The stability watch. With a positive value the module samples the GPUs with C(nvidia-smi -q -x) every
        O(sample_s) seconds for as long as the burn runs, on the node, and returns the samples in RV(watch). It runs
        under C(async) like the burn, so every node is sampled throughout its own burn whatever the controller's
        C(forks) is.
      - A sample that times out ends the watch; nvidia-smi is not called again by this module and RV(watch.stopped)
        says why.
      - V(0) (the default) takes no sample.
    type: int
    default: 0
  nvidia_smi_path:
    description:
      - The C(nvidia-smi) program the watch runs, a name looked up in PATH or an absolute path.
    type: str
    default: nvidia-smi
  sample_timeout:
    description:
      - Seconds one C(nvidia-smi -q -x) of the watch may take; past it its process group is killed and the watch
        ends.
    type: int
    default: 60
  samples_path:
    description:
      - A file on the node to which each sample is appended as it is taken, one JSON object a line (the same
        objects as RV(watch.samples)), so that a burn cut off still leaves its samples behind.
    type: path
notes:
  - Programs run with C(LANG=C) and C(LC_ALL=C), without a shell.
  - On failure the task returns C(error_kind) (C(not_found), C(timed_out), C(failed) or C(unparsable)), C(tool) and
    C(msg); for a program that ran, also C(cmd), C(rc), C(stdout) (its last 2000 characters) and C(stderr).
  - gpu-burn's own error messages (no CUDA device, compare kernel not found, every worker died) become
    C(error_kind=failed) with that message.
seealso:
  - name: gpu-burn
    description: Multi-GPU CUDA stress test.
    link: https://github.com/wilicc/gpu-burn
"""

EXAMPLES = r"""
- name: Acceptance burn, 15 minutes in double precision with tensor cores, polled every 60 s
  zhisuan.ops.gpu_burn:
    gpu_burn_path: "{{ zhisuan_tools.gpu_burn | default('gpu_burn') }}"
    duration: 900
    doubles: true
    tensor_cores: true
  async: 1200
  poll: 60
  register: burn

- name: Short smoke burn with the program's compare kernel in another directory
  zhisuan.ops.gpu_burn:
    gpu_burn_path: /opt/gpu-burn/gpu_burn
    workdir: /opt/gpu-burn/share
    duration: 60
  register: burn

- name: Show each GPU's median Gflop/s
  ansible.builtin.debug:
    msg: "{{ burn.burn.gpus | map(attribute='gflops_median') | list }}"
"""

RETURN = r"""
burn:
  description: What gpu-burn reported.
  returned: success
  type: dict
  contains:
    duration_s:
      description: The requested burn duration in seconds.
      type: int
      sample: 900
    elapsed_s:
      description: Seconds the program ran, measured by the module.
      type: float
      sample: 931.4
    cmd:
      description: The command line that ran.
      type: list
      elements: str
      sample: [/opt/gpu-burn/gpu_burn, -d, -tc, "900"]
    workdir:
      description: The directory gpu-burn ran in.
      type: str
    doubles:
      description: Whether the burn ran in double precision (as the workers printed it, else as requested).
      type: bool
    tensor_cores:
      description: Whether tensor cores were used (as the workers printed it, else as requested).
      type: bool
    tested_gpus:
      description: The count in gpu-burn's C(Tested N GPUs) line.
      type: int
      sample: 8
    burn_seconds:
      description: The run length gpu-burn printed (C(Burning for N seconds.)); V(null) for builds that do not print it.
      type: int
    compare_file:
      description: The compare kernel gpu-burn printed it used; V(null) for builds that do not print it.
      type: str
    progress_pct:
      description: The last progress percentage printed.
      type: float
      sample: 100.0
    progress_records:
      description: Number of progress records printed.
      type: int
    summaries:
      description: The dates of gpu-burn's periodic C(Summary at) lines.
      type: list
      elements: str
    failures:
      description: gpu-burn's own error lines on stderr (e.g. a worker that died) in a run that still completed.
      type: list
      elements: str
    gpus:
      description: One record per GPU, by gpu-burn's device index.
      type: list
      elements: dict
      contains:
        index:
          description: gpu-burn's device index.
          type: int
        name:
          description: Product name from the C(nvidia-smi -L) lines gpu-burn prints first; V(null) when absent.
          type: str
        uuid:
          description: GPU UUID from the same lines; V(null) when absent.
          type: str
        verdict:
          description: gpu-burn's final verdict, C(OK) or C(FAULTY). C(OK) only means no compare error was seen.
          type: str
        died:
          description: Whether the GPU's worker died (gpu-burn printed C(DIED!)).
          type: bool
        errors:
          description: Compare errors over the whole run (gpu-burn zeroes its counters at each summary; they are summed).
          type: int
        processed:
          description: Matrix multiplications the GPU completed.
          type: int
        reports:
          description: Number of throughput reports the GPU made (new samples).
          type: int
        gflops_final:
          description: The Gflop/s of the GPU's last report.
          type: float
        gflops_median:
          description: >-
            Median Gflop/s of the GPU's reports after its first (the first report's interval includes the GPU's
            start-up); the only report when there is one; 0 when the GPU never reported.
          type: float
        gflops_min:
          description: Lowest Gflop/s after the first report.
          type: float
        gflops_max:
          description: Highest Gflop/s after the first report.
          type: float
        gflops_samples:
          description: Gflop/s of each report in order (at most 120, evenly spaced, first and last kept).
          type: list
          elements: float
        temperature_c_final:
          description: Last temperature gpu-burn printed for the GPU; V(null) when never printed.
          type: int
        temperature_c_max:
          description: Highest temperature gpu-burn printed for the GPU.
          type: int
        power_w_max:
          description: Highest power draw printed (newer builds only); V(null) otherwise.
          type: int
        memory_used_mb:
          description: Memory the worker used, from its start-up line; V(null) when not printed.
          type: int
watch:
  description:
    - The stability watch of O(sample_s), also returned with a failure of the burn (the samples taken until then).
  returned: when O(sample_s) is positive
  type: dict
  contains:
    sample_s:
      description: Seconds between samples.
      type: int
    started:
      description: When the watch (and the burn) started, seconds since the epoch.
      type: float
    started_at:
      description: The same as ISO 8601 UTC.
      type: str
      sample: "2026-12-03T17:40:01.250Z"
    ended:
      description: When the burn ended and the watch with it, seconds since the epoch.
      type: float
    ended_at:
      description: The same as ISO 8601 UTC.
      type: str
    samples:
      description:
        - One record per sample in order, C(t) (seconds since the epoch) and C(at) (ISO 8601 UTC), and either C(gpu)
          (the gpu facts of C(zhisuan.ops.gpu_info) cut down to index, name, uuid, pci_bus_id, ecc, remapped_rows,
          retired_pages, temperature, throttle and clocks) or C(error) and C(error_kind).
      type: list
      elements: dict
    stopped:
      description: Why the watch ended before the burn (nvidia-smi timed out); V(null) when it ran to the end.
      type: str
    samples_path:
      description: The file the samples were appended to (O(samples_path)); V(null) when none.
      type: str
    write_error:
      description: Why the samples could not be written to O(samples_path); V(null) when they were.
      type: str
    thinned:
      description:
        - How many samples were dropped from RV(watch.samples) to keep it at most 2000 long (every second one, the
          first and the newest kept); O(samples_path) keeps them all.
      type: int
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._base import run_module
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu.burn_collect import collect_burn


def main():
    argument_spec = dict(
        duration=dict(type="int", required=True),
        gpu_burn_path=dict(type="str", default="gpu_burn"),
        doubles=dict(type="bool", default=False),
        tensor_cores=dict(type="bool", default=False),
        workdir=dict(type="path"),
        timeout=dict(type="int"),
        sample_s=dict(type="int", default=0),
        nvidia_smi_path=dict(type="str", default="nvidia-smi"),
        sample_timeout=dict(type="int", default=60),
        samples_path=dict(type="path"),
    )
    run_module(argument_spec, collect_burn, supports_check_mode=False)


if __name__ == "__main__":
    main()
