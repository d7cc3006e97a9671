#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: scheduler_node
short_description: Drain or resume a node in Slurm or Kubernetes, never touching a drain someone else set
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Takes a GPU node out of its scheduler before a repair (O(state=drained)) and puts it back after the repair was
    verified (O(state=resumed)), or only reads it (O(state) omitted). This is the C(drain) step of remediation.
  - "Slurm: C(scontrol update NodeName=... State=DRAIN Reason=...) and C(State=RESUME); the node is read with
    C(scontrol -o show node NAME) and its running jobs with C(squeue -h -w NAME -t RUNNING,COMPLETING)."
  - "Kubernetes: C(kubectl cordon) (and with O(wait_drained), C(kubectl drain --ignore-daemonsets
    --delete-emptydir-data --timeout)), C(kubectl uncordon). Kubernetes has no drain reason, so ours is kept in
    the node annotation C(zhisuan.ops/drain-reason)."
  - "Guards: our drain reason starts with O(tag) and a colon. A node already drained (cordoned) by someone else
    keeps its reason and is left alone (RV(action=refused), RV(node.drained_by_other=true)). A resume happens only
    when the current reason is ours; otherwise it is refused with the reason, who set it and when. A refusal does
    not fail the task unless O(strict=true)."
  - The node is always read first, so a resume of a node that is not drained, or a drain of a node we drained, is a
    no-op. After a resume the module reads the node until it has settled (Slurm shows C(idle*) for about a second).
extends_documentation_fragment:
  - zhisuan.ops._tool
  - zhisuan.ops._attributes
attributes:
  check_mode:
    support: full
    details:
      - Reads the node and applies the guards, changes nothing, and returns the RV(action) it would take and
        C(changed) accordingly.
  diff_mode:
    support: full
    details:
      - Returns the node as read before and after.
options:
  name:
    description:
      - The node's name in the scheduler (Slurm NodeName, Kubernetes node name).
    type: str
    required: true
  scheduler:
    description:
      - Which scheduler runs the node.
    type: str
    choices: [slurm, kubernetes]
    default: slurm
  state:
    description:
      - V(drained) stops new work on the node (Slurm DRAIN, Kubernetes cordon); running jobs go on unless
        O(wait_drained) (Kubernetes then evicts its pods).
      - V(resumed) returns a node we drained to service.
      - Omitted, the module only reads the node and returns it (RV(action=none)).
    type: str
    choices: [drained, resumed]
  reason:
    description:
      - "Why the node is drained; stored as C(<tag>: <reason>) (as given when it already starts with C(<tag>:)). Name
        the check and the run, so an operator who reads C(sinfo -R) knows who drained it and why."
      - "Without it the reason is C(<tag>: remediation by zhisuan.ops)."
    type: str
  tag:
    description:
      - The prefix that marks a drain as ours. A drain whose reason does not start with C(<tag>:) is someone
        else's and is never overwritten or resumed.
    type: str
    default: zhisuan
  wait_drained:
    description:
      - With O(state=drained), wait (up to O(timeout) seconds) until no job runs on the node (Slurm C(drained),
        not C(draining)). On Kubernetes, evict the workload pods with C(kubectl drain) first.
      - If jobs still run after O(timeout), the task fails; the node stays drained.
    type: bool
    default: false
  strict:
    description:
      - Fail the task when a guard refuses (a node drained by someone else). By default a refusal is reported with
        RV(action=refused) and C(changed=false) and the task does not fail.
    type: bool
    default: false
  scontrol_path:
    description:
      - The C(scontrol) program, a name looked up in PATH or an absolute path. Roles pass C(zhisuan_tools.scontrol).
    type: str
    default: scontrol
  squeue_path:
    description:
      - The C(squeue) program. By default the C(squeue) next to O(scontrol_path) when that is a path, else
        C(squeue) in PATH.
    type: str
  sinfo_path:
    description:
      - The C(sinfo) program. Accepted so that plays pass all of C(zhisuan_tools) alike; this module reads the node
        with C(scontrol), which gives the drain reason with its user and time for one node.
    type: str
    default: sinfo
  kubectl_path:
    description:
      - The C(kubectl) program. Roles pass C(zhisuan_tools.kubectl).
    type: str
    default: kubectl
  kubeconfig:
    description:
      - The kubeconfig file for C(kubectl --kubeconfig); by default kubectl's own (C(KUBECONFIG), C(~/.kube/config)).
    type: path
notes:
  - O(timeout) bounds each scheduler command and each wait (for the node to settle after a resume, for its jobs
    to end with O(wait_drained)).
  - Run it where the scheduler's clients work (a Slurm login or controller node, a host with a kubeconfig), for
    example with C(delegate_to).
  - The Slurm path is tested against a real slurmctld and slurmd (slurm-wlm 22.05). The Kubernetes path was not run
    against a real API server while this collection was built.
seealso:
  - name: scontrol
    description: C(scontrol update) node states and reasons.
    link: https://slurm.schedmd.com/scontrol.html
  - name: Safely drain a node
    description: kubectl cordon, drain and uncordon.
    link: https://kubernetes.io/docs/tasks/administer-cluster/safely-drain-node/
"""

EXAMPLES = r"""
- name: Drain the node before the GPU reset, naming the check and the run
  zhisuan.ops.scheduler_node:
    name: "{{ inventory_hostname }}"
    state: drained
    reason: "gpu.ecc.volatile_uncorrectable (run {{ zhisuan_run_id }})"
    wait_drained: true
    timeout: 1800
    scontrol_path: "{{ zhisuan_tools.scontrol | default('scontrol') }}"
  delegate_to: "{{ groups['slurm_controller'][0] }}"
  register: drain

- name: Put it back after the re-check passed (refused if someone else drained it meanwhile)
  zhisuan.ops.scheduler_node:
    name: "{{ inventory_hostname }}"
    state: resumed
    scontrol_path: "{{ zhisuan_tools.scontrol | default('scontrol') }}"
  delegate_to: "{{ groups['slurm_controller'][0] }}"

- name: Cordon a Kubernetes GPU node and evict its pods
  zhisuan.ops.scheduler_node:
    name: gpu-node-07
    scheduler: kubernetes
    state: drained
    reason: "xid.79 (run 2026-11-30T23:00Z)"
    wait_drained: true
    kubeconfig: /etc/zhisuan/kubeconfig
  delegate_to: localhost
"""

RETURN = r"""
action:
  description: What was done (in check mode, what would be done).
  returned: always
  type: str
  choices: [drained, resumed, none, refused]
msg:
  description: What was done or why not, with the reason, its user and time for a refusal.
  returned: always
  type: str
  sample: >-
    refused to resume node03: it was drained by someone else (reason 'fan replacement' set by root at
    2026-11-30T23:00:38), not by zhisuan; resume it by hand once that work is done
node:
  description: The node as read after the change (before it, for a refusal, a no-op or check mode).
  returned: always
  type: dict
  contains:
    name:
      description: The node's name.
      type: str
    scheduler:
      description: V(slurm) or V(kubernetes).
      type: str
    state:
      description:
        - Slurm, as C(sinfo -o %T) prints it (lower case) - V(drained), V(draining) (drained with jobs still
          running), V(idle), V(mixed), V(allocated), V(down), ... - with a trailing C(*) while slurmctld gets no
          answer from the node (NOT_RESPONDING).
        - Kubernetes - V(drained), V(draining) (cordoned with workload pods left), V(ready) or V(not_ready).
      type: str
      sample: draining
    raw_state:
      description: The scheduler's own state (Slurm C(MIXED+DRAIN); Kubernetes C(SchedulingDisabled)).
      type: str
    drain:
      description: Whether the node takes no new work (Slurm DRAIN flag, Kubernetes cordoned).
      type: bool
    drained_by_us:
      description: Drained with a reason that starts with O(tag).
      type: bool
    drained_by_other:
      description: Drained with someone else's reason (or, on Kubernetes, cordoned without our annotation).
      type: bool
    reason:
      description: The drain reason (Kubernetes - our annotation), or V(null).
      type: str
      sample: "zhisuan: gpu.ecc.volatile_uncorrectable (run 20261130T2300Z)"
    reason_user:
      description: Who set the reason (Slurm), or V(null).
      type: str
    reason_time:
      description: When the reason was set, as slurmctld prints it (its local time), or V(null).
      type: str
    jobs_running:
      description: Jobs running or completing on the node (Kubernetes - workload pods, those C(kubectl drain) evicts).
      type: int
    responding:
      description: Slurm - false while slurmctld gets no answer from the node's slurmd; Kubernetes - false when NotReady.
      type: bool
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._base import run_module
from ansible_collections.zhisuan.ops.plugins.module_utils._sched.node import scheduler_node


def main():
    argument_spec = dict(
        name=dict(type="str", required=True),
        scheduler=dict(type="str", choices=["slurm", "kubernetes"], default="slurm"),
        state=dict(type="str", choices=["drained", "resumed"]),
        reason=dict(type="str"),
        tag=dict(type="str", default="zhisuan"),
        wait_drained=dict(type="bool", default=False),
        strict=dict(type="bool", default=False),
        scontrol_path=dict(type="str", default="scontrol"),
        squeue_path=dict(type="str"),
        sinfo_path=dict(type="str", default="sinfo"),
        kubectl_path=dict(type="str", default="kubectl"),
        kubeconfig=dict(type="path"),
    )
    run_module(argument_spec, scheduler_node)


if __name__ == "__main__":
    main()
