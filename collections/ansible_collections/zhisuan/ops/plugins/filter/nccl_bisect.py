# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
name: nccl_bisect
short_description: One step of the slow-node bisection of a multi-node NCCL run
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Given the node list of a multi-node run that was slow, returns the first group to test; given the C(state) of
    the previous step and whether that group was slow, returns the next group, or the suspects when done.
  - Halves the slow set and tests both halves, recursing into every half that stays slow; a slow group of fewer
    than O(min_split) nodes is resolved by dropping one node at a time (padded with nodes proven good).
  - Each step is one multi-node run, so a playbook drives it with M(zhisuan.ops.nccl_test) and the C(nccl) judge.
options:
  _input:
    description: The node names of the slow run (to start), or the C(state) of the previous step.
    type: raw
    required: true
  last_slow:
    description: Whether the group of the previous step was slow (required with a C(state)).
    type: bool
  min_split:
    description: Smallest slow group that is halved again (at least 4); smaller groups are resolved by dropping one node.
    type: int
    default: 4
  max_steps:
    description: Most runs before the bisection stops.
    type: int
    default: 50
"""

EXAMPLES = r"""
- name: Start the bisection of the play's nodes
  ansible.builtin.set_fact:
    plan: "{{ ansible_play_hosts | zhisuan.ops.nccl_bisect }}"

- name: Next step once the group plan.run was measured
  ansible.builtin.set_fact:
    plan: "{{ plan.state | zhisuan.ops.nccl_bisect(last_slow=true) }}"
"""

RETURN = r"""
_value:
  description: C(run) (the next group of nodes) or C(done) (the suspects, maybe empty) with C(reason); and C(state).
  type: dict
"""

import copy

from ansible.errors import AnsibleFilterError
from ansible.module_utils.common.collections import is_sequence
from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.zhisuan.ops.plugins.module_utils._net import bisect


def nccl_bisect(data, last_slow=None, min_split=4, max_steps=50):
    try:
        if isinstance(data, dict):
            if last_slow is not None:
                last_slow = boolean(last_slow, strict=True)
            return bisect.next_step(copy.deepcopy(dict(data)), last_slow)
        if is_sequence(data):
            return bisect.start([str(node) for node in data], min_split=int(min_split), max_steps=int(max_steps))
    except (TypeError, ValueError) as exc:
        raise AnsibleFilterError("nccl_bisect: %s" % exc)
    raise AnsibleFilterError("nccl_bisect: the input must be a list of nodes or a bisection state, got %s"
                             % type(data).__name__)


class FilterModule(object):

    def filters(self):
        return {"nccl_bisect": nccl_bisect}
