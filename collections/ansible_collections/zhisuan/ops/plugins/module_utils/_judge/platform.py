# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""The cluster platform's parts as the judge takes them (issue 29 item 3): one node of Kubernetes or Slurm, the
GPU nodes of the inventory together, and a job - the ``k8s``, ``slurm`` and ``job`` rules over the facts of
``k8s_node_info``, ``slurm_node_info`` and ``job_log``, with what the inventory says in the judge's ``context``:

``node``            the node's name in the scheduler (node parts; default the inventory host);
``installed``       GPUs installed on the node (node parts), or a mapping of scheduler node name to GPUs installed
                    (cluster parts): a number, or null when unknown;
``installed_source`` where ``installed`` comes from (shown in the evidence);
``profile``         the model profile name the GPU product label must match (k8s node);
``baseline``        ``zhisuan_baseline`` (its driver and CUDA entries against the labels; k8s node);
``hostmap``         address or scheduler name -> inventory host, to name the hosts of a job's lines (job).

Each function returns ``(checks, summary)``; the cluster parts' summary is the availability data (nodes per state,
GPUs usable vs installed), the job's its classification (``suspects``, the hosts to diagnose). Pure functions.
"""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge import job as job_rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import k8s as k8s_rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import slurm as slurm_rules


def count(value, what):
    """A number of GPUs from the inventory (None when unknown). Raises ValueError naming ``what``."""
    if value in (None, ""):
        return None
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ValueError("%s must be a number of GPUs, got %r" % (what, value))
    if number < 0:
        raise ValueError("%s must not be negative, got %r" % (what, value))
    return number


def _counts(installed, part):
    if not isinstance(installed, dict):
        raise ValueError("%s needs context.installed, a mapping of node name to GPUs installed, got %r"
                         % (part, installed))
    return dict((name, count(value, "installed[%s]" % name)) for name, value in installed.items())


def k8s_node(host, facts, context):
    name = context.get("node") or host
    node_facts = {"name": name, "node": (facts.get("nodes") or {}).get(name),
                  "pods": [pod for pod in facts.get("pods") or [] if pod.get("node") == name]}
    checks = k8s_rules.judge_k8s(host, node_facts, count(context.get("installed"), "installed"),
                                 context.get("installed_source"), context.get("profile") or None,
                                 context.get("baseline"), context.get("thresholds"))
    return checks, k8s_rules.summarize_k8s(node_facts)


def k8s_cluster(host, facts, context):
    return k8s_rules.judge_cluster(facts.get("nodes") or {}, _counts(context.get("installed"), "k8s_cluster"))


def slurm_node(host, facts, context):
    name = context.get("node") or host
    node_facts = {"name": name, "node": (facts.get("nodes") or {}).get(name)}
    checks = slurm_rules.judge_slurm(host, node_facts, count(context.get("installed"), "installed"),
                                     context.get("installed_source"))
    return checks, slurm_rules.summarize_slurm(node_facts)


def slurm_cluster(host, facts, context):
    return slurm_rules.judge_cluster(facts.get("nodes") or {}, facts.get("partitions") or {},
                                     _counts(context.get("installed"), "slurm_cluster"))


def job(host, facts, context):
    return job_rules.judge_job(facts, context.get("thresholds") or {}, context.get("hostmap") or {})
