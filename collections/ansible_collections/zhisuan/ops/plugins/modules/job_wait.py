#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later


DOCUMENTATION = r"""
---
module: job_wait
short_description: Wait for a node's async job with one progress line a minute for all the nodes waiting
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Runs on the controller. Polls the async job O(jid) of the node (the way C(ansible.builtin.async_status) does)
    every O(poll) seconds until it has finished, then returns the job's own result (a failed job fails the task
    with the job's C(msg) and C(error_kind)) and removes the job's file from the node.
  - 'Instead of a C(FAILED - RETRYING) line per node per poll (C(async_status) with C(until)), it prints one line
    every O(progress_s) seconds for all the nodes of the task still waiting, for example
    V(gpu burn: still waiting on 16 nodes (node01, node02, node03 and 13 more\) after 2 min 00 s).'
  - The burn-in role uses it for the burn; every node's burn and its watch run on the node meanwhile, so no
    sampling waits for a fork.
extends_documentation_fragment:
  - zhisuan.ops._attributes
  - zhisuan.ops._attributes.controller
attributes:
  check_mode:
    support: none
  diff_mode:
    support: none
options:
  jid:
    description: The job id an async task returned (C(ansible_job_id)).
    type: str
    required: true
  timeout:
    description:
      - Seconds to wait in all. Past it the task fails with C(error_kind=timed_out); the job itself ends at its own
        C(async) limit.
    type: int
    required: true
  poll:
    description: Seconds between two looks at the job.
    type: int
    default: 10
  progress_s:
    description: Seconds between two progress lines.
    type: int
    default: 60
  what:
    description: What the progress lines and the timeout message call the job.
    type: str
    default: the job
"""

EXAMPLES = r"""
- name: Start the burn
  zhisuan.ops.gpu_burn:
    duration: 900
    sample_s: 30
  async: 1100
  poll: 0
  register: job

- name: Wait for the burn, a line a minute for all nodes
  zhisuan.ops.job_wait:
    jid: "{{ job.ansible_job_id }}"
    timeout: 1100
    what: gpu burn
  register: burn
"""

RETURN = r"""
finished:
  description: Whether the job finished (false only when the wait timed out).
  returned: always
  type: bool
waited_s:
  description: Seconds this task waited.
  returned: always
  type: float
"""
