# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
name: platform_checks
short_description: Judge the cluster platform (Kubernetes, Slurm) and a job on it
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Runs the pure rules of the C(k8s), C(slurm) and C(job) families on the controller over the registered result of
    M(zhisuan.ops.k8s_node_info), M(zhisuan.ops.slurm_node_info) or M(zhisuan.ops.job_log). A collect task that
    failed becomes one check with status C(error); an unreachable one none.
  - O(kind=k8s_node) / O(kind=slurm_node) judge one node (the host of the task); O(kind=k8s_cluster) /
    O(kind=slurm_cluster) the GPU nodes of the inventory together (host C(cluster)); O(kind=job) a job (host
    C(cluster)) and names the inventory hosts to hand to the node diagnosis (C(summary.suspects)).
options:
  _input:
    description: The registered result of the collect task.
    type: dict
    required: true
  kind:
    description: What to judge.
    type: str
    required: true
    choices: [k8s_node, k8s_cluster, slurm_node, slurm_cluster, job]
  host:
    description: The inventory host (node kinds).
    type: str
  node:
    description: The node's name in the scheduler (node kinds; default O(host)).
    type: str
  installed:
    description: GPUs installed on the node (node kinds), or a mapping of scheduler node name to GPUs installed (cluster kinds).
    type: raw
  installed_source:
    description: Where O(installed) comes from (shown in the evidence).
    type: str
  profile:
    description: The model profile name the GPU product label must match (k8s_node).
    type: str
  baseline:
    description: C(zhisuan_baseline); its C(nvidia_driver)/C(driver) and C(cuda) entries are compared with the labels (k8s_node).
    type: dict
  thresholds:
    description: C(zhisuan_thresholds.k8s) (C(pod_restarts_warn)) or C(zhisuan_thresholds.job) (C(hang_after_s)).
    type: dict
  hostmap:
    description: Address or scheduler name -> inventory host, to name the hosts of a job's log lines (job).
    type: dict
"""

EXAMPLES = r"""
- name: Judge this node in Kubernetes
  ansible.builtin.set_fact:
    k8s_judged: "{{ k8s_cluster | zhisuan.ops.platform_checks('k8s_node', host=inventory_hostname, installed=8) }}"
"""

RETURN = r"""
_value:
  description: C(checks) (check records), C(summary) (the family's report facts) and C(unreachable) (bool); the
    cluster kinds add C(data) (nodes per state, GPUs usable vs installed, availability).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.zhisuan.ops.plugins.plugin_utils._judging import judge_family

_KINDS = ("k8s_node", "k8s_cluster", "slurm_node", "slurm_cluster", "job")


def platform_checks(collected, kind, host=None, node=None, installed=None, installed_source=None, profile=None,
                    baseline=None, thresholds=None, hostmap=None):
    """The judge's platform parts (``zhisuan.ops.judge`` ``family=<kind>``, module_utils/_judge/platform.py) as a
    filter, for sites' own playbooks; the collection's roles call the judge."""
    if kind not in _KINDS:
        raise AnsibleFilterError("platform_checks: kind must be one of %s, got %r" % (", ".join(sorted(_KINDS)), kind))
    if not isinstance(collected, dict):
        raise AnsibleFilterError("platform_checks: the input must be a registered task result, got %s" % type(collected).__name__)
    context = {"node": node, "installed": installed, "installed_source": installed_source, "profile": profile,
               "baseline": baseline, "hostmap": hostmap}
    try:
        checks, summary, unreachable = judge_family(kind, host or "cluster", collected, thresholds=thresholds or {},
                                                    context=context)
    except ValueError as exc:
        raise AnsibleFilterError("platform_checks: %s" % exc)
    if kind.endswith("_cluster"):
        return {"checks": checks, "summary": {}, "data": summary, "unreachable": unreachable}
    return {"checks": checks, "summary": summary, "unreachable": unreachable}


class FilterModule(object):

    def filters(self):
        return {"platform_checks": platform_checks}
