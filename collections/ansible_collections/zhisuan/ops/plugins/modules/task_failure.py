#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: task_failure
short_description: Turn a task that failed unexpectedly into the node's error check
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Runs on the controller, in the C(rescue) of a family's block. Builds one C(error) check
    C(<family>.task.failed) from the failed task and its result (C(ansible_failed_task), C(ansible_failed_result))
    - the task's name and module, its message, return code and the tail of its stderr and stdout - so that the
    node's record says what went wrong instead of pointing at the Ansible log.
  - The module arguments of the failed task are never copied (they may hold secrets).
extends_documentation_fragment:
  - zhisuan.ops._attributes
  - zhisuan.ops._attributes.controller
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
options:
  task:
    description: The failed task's name.
    type: str
    default: ""
  action:
    description: The failed task's module or action (C(ansible_failed_task.action)).
    type: str
    default: ""
  result:
    description: The failed task's result (C(ansible_failed_result)).
    type: dict
    default: {}
  family:
    description: The check family the failed task belonged to (the check is C(<family>.task.failed)).
    type: str
    default: run
"""

EXAMPLES = r"""
- name: Keep what failed as the node's error check
  zhisuan.ops.task_failure:
    task: "{{ ansible_failed_task.name }}"
    action: "{{ ansible_failed_task.action }}"
    result: "{{ ansible_failed_result }}"
    family: gpu
  register: failure
"""

RETURN = r"""
checks:
  description: One C(error) check naming the task, its module, message, return code and output tails.
  returned: success
  type: list
  elements: dict
"""
