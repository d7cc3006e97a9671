# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
name: quality_indicators
short_description: The O&M quality report's key indicators of a job and the cluster
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - MFU (from the logged throughput, the model's FLOPs per token or sample, the GPU count and the GPUs' dense peak),
    effective training time, long stable training time, task recovery time (from the job's attempts in the
    scheduler's accounting) and cluster compute availability (GPUs usable / installed), each with its definition and
    inputs (docs/quality.md). A figure whose inputs are not known has C(value=null) and lists them in C(missing).
options:
  _input:
    description: The job's completion records (C(job.attempts) of M(zhisuan.ops.job_log)); may be empty.
    type: list
    elements: dict
    required: true
  throughput:
    description: Tokens (or samples) per second of the whole job.
    type: float
  flops_per_unit:
    description: The model's training FLOPs per token (or sample), given by the user (for a dense transformer about 6 x parameters).
    type: float
  gpus:
    description: GPUs the job ran on.
    type: int
  peak_tflops:
    description:
      - Dense (non-sparse) peak TFLOPS of one GPU in the job's precision.
      - When not given, the dense peak of the GPU profile O(profile) in O(precision) is used (its C(peak_tflops.<precision>_dense)).
    type: float
  profile:
    description: The GPU profile (C(zhisuan_gpu_profile), for example C(H100)) whose dense peak is used when O(peak_tflops) is not given.
    type: str
  precision:
    description: The job's training precision, which of the profile's dense peaks to use.
    type: str
    choices: [bf16, fp16, fp8, tf32]
    default: bf16
  usable_gpus:
    description: GPUs the scheduler can hand out (the C(data.gpus_usable) or C(data.gpus_allocatable) of the cluster checks).
    type: int
  installed_gpus:
    description: GPUs installed.
    type: int
  source:
    description: Which scheduler the availability was read from.
    type: str
"""

EXAMPLES = r"""
- name: Quality indicators of a job
  ansible.builtin.set_fact:
    quality: "{{ job.job.attempts | zhisuan.ops.quality_indicators(throughput=52000, flops_per_unit=4.2e10, gpus=64, peak_tflops=989) }}"

- name: The same, with the dense BF16 peak of the H100 profile (989 TFLOPS)
  ansible.builtin.set_fact:
    quality: "{{ job.job.attempts | zhisuan.ops.quality_indicators(throughput=52000, flops_per_unit=4.2e10, gpus=64, profile='H100') }}"
"""

RETURN = r"""
_value:
  description: C(mfu), C(effective_training_time), C(long_stable_training_time), C(task_recovery_time),
    C(cluster_compute_availability), each C({value, unit, definition, inputs}) (and C(missing) when not computable).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.zhisuan.ops.plugins.plugin_utils._quality import indicators


def quality_indicators(attempts, throughput=None, flops_per_unit=None, gpus=None, peak_tflops=None, usable_gpus=None,
                       installed_gpus=None, source=None, profile=None, precision="bf16"):
    if not isinstance(attempts, list):
        raise AnsibleFilterError("quality_indicators: the input must be a list of completion records, got %s"
                                 % type(attempts).__name__)
    job = attempts[0].get("id") if attempts and isinstance(attempts[0], dict) else None
    return indicators(attempts, job=job, throughput=throughput, flops_per_unit=flops_per_unit, gpus=gpus,
                      peak_tflops=peak_tflops, usable_gpus=usable_gpus, installed_gpus=installed_gpus, source=source,
                      profile=profile, precision=precision)


class FilterModule(object):

    def filters(self):
        return {"quality_indicators": quality_indicators}
