#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: job_log
short_description: A training job's state, nodes and log, read into failure events
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - "Slurm: C(scontrol -o show job <id>) gives the state, the nodes and the output file (C(StdOut=)); the end of that
    file is read where the task runs (it must see the job's file system) and its modification time is the time of
    the last log line. With O(jobcomp_path) the job's attempts are read from the C(jobcomp/filetxt) completion log."
  - "Kubernetes: the pods labelled C(job-name=<id>) in O(namespace) and their logs (C(kubectl logs --all-containers
    --timestamps))."
  - The log is read into events - NCCL watchdog timeouts (ranks, operation, timeout), C(NCCL WARN) lines and NCCL
    errors with their class (system, internal, remote, cuda, usage), InfiniBand work completion errors with their
    status and peer, CUDA errors, uncorrectable ECC errors, CUDA out of memory - with the ranks and hosts they name,
    and the seconds since the last line (a running job silent for long hangs).
  - It collects facts only; the C(job) rules (filter P(zhisuan.ops.platform_checks#filter)) judge them.
extends_documentation_fragment:
  - zhisuan.ops._tool
  - zhisuan.ops._attributes
  - zhisuan.ops._attributes.info_module
options:
  job:
    description: The job id (Slurm) or the Job's name (Kubernetes, label C(job-name)).
    type: str
    required: true
  scheduler:
    description: Which scheduler runs the job.
    type: str
    choices: [slurm, kubernetes]
    default: slurm
  scontrol_path:
    description: The C(scontrol) program (Slurm).
    type: str
    default: scontrol
  jobcomp_path:
    description: The C(JobCompLoc) file of C(JobCompType=jobcomp/filetxt) (Slurm), for the job's attempts.
    type: path
  log_path:
    description:
      - The job's output file, read instead of the C(StdOut=) slurmctld gives (Slurm). Needed for a job slurmctld has
        forgotten (its record is purged C(MinJobAge) seconds after the end, 300 by default); the job's state and
        nodes then come from the completion log (O(jobcomp_path)) or the accounting (O(sacct_path), O(sacct_src)).
      - Where there is no O(scontrol_path) at all (the files a site sent, judged on another machine), the job is read
        from O(sacct_src) or O(jobcomp_path) and this file alone.
    type: path
  sacct_path:
    description:
      - The C(sacct) program (Slurm with C(slurmdbd)). When given, C(sacct --json -a -D -X -S <sacct_since>) (C(-P)
        when that C(sacct) has no C(--json)) is read into RV(job.accounting) - every attempt of every job in the
        window, for the per-node counts of the job family - and this job's attempts into RV(job.attempts).
      - Its failure is a warning and RV(job.accounting_error); the job and its log are still read.
    type: str
  sacct_since:
    description: The start of the accounting window, as C(sacct -S) takes it (C(now-7days), C(2025-01-10T00:00)).
    type: str
    default: now-7days
  sacct_src:
    description:
      - A saved C(sacct) output to read instead of running O(sacct_path) (a file a site sent) - C(sacct --json) of
        Slurm 21.08 to 25.05, or C(sacct -p)/C(-P) with its header line; the form is detected from the content.
      - A C(--noheader) output needs its C(--format) list as O(sacct_fields).
    type: path
  sacct_fields:
    description: The C(--format) fields of a C(--noheader) O(sacct_src), comma-separated (C(JobID,State,NodeList,...)).
    type: str
  sacct_delimiter:
    description: The C(--delimiter) of a C(-p)/C(-P) O(sacct_src) (default C(|)).
    type: str
  kubectl_path:
    description: The C(kubectl) program (Kubernetes).
    type: str
    default: kubectl
  kubeconfig:
    description: The kubeconfig file (Kubernetes).
    type: path
  context:
    description: The kubeconfig context (Kubernetes).
    type: str
  namespace:
    description: The Job's namespace (Kubernetes).
    type: str
    default: default
  max_bytes:
    description: How much of the end of the log to read (Slurm).
    type: int
    default: 16777216
"""

EXAMPLES = r"""
- name: Read job 4127's log
  zhisuan.ops.job_log:
    job: "4127"
    scontrol_path: "{{ zhisuan_tools.scontrol | default('scontrol') }}"
  delegate_to: localhost
  run_once: true
  register: job

- name: Read job 4127 and a week of Slurm's accounting (the nodes that keep taking jobs down)
  zhisuan.ops.job_log:
    job: "4127"
    sacct_path: sacct
    sacct_since: now-7days
  delegate_to: localhost
  run_once: true
  register: job

- name: Read a job from what a site sent - its output file and a saved 'sacct -P' of the week
  zhisuan.ops.job_log:
    job: "4127"
    log_path: /var/tmp/case-1234/slurm-4127.out
    sacct_src: /var/tmp/case-1234/sacct-P-week.txt
  delegate_to: localhost
  run_once: true
  register: job
"""

RETURN = r"""
job:
  description: The job and its log's events.
  returned: success
  type: dict
  contains:
    id:
      description: The job id.
      type: str
    state:
      description: The scheduler's state (RUNNING, FAILED, PENDING...).
      type: str
    nodes:
      description: The job's nodes as the scheduler names them.
      type: list
      elements: str
    events:
      description: One record per failure line - C(kind) (nccl_timeout, nccl_warn, nccl_error, ib_completion, cuda_error,
        ecc, xid, oom), C(line), C(text), and what the line names (C(rank), C(host), C(peer), C(status),
        C(status_name), C(error_class), C(op), C(timeout_ms), C(ran_ms)).
      type: list
      elements: dict
    ranks:
      description: Ranks the events name.
      type: list
      elements: int
    hosts:
      description: Hosts the NCCL lines name.
      type: list
      elements: str
    peers:
      description: Peer addresses the NCCL lines name.
      type: list
      elements: str
    silent_s:
      description: Seconds since the last log line.
      type: float
    running:
      description: Whether the job runs now.
      type: bool
    attempts:
      description: The job's attempts - from the accounting (O(sacct_path), O(sacct_src)) when read, else its
        completion records (O(jobcomp_path)).
      type: list
      elements: dict
    accounting:
      description: Slurm's accounting over the window (O(sacct_path), O(sacct_src)) - C(form) (json, parsable),
        C(version), C(jobs) (C(id), C(state), C(nodes), C(start), C(end), C(elapsed_s), C(exit_code),
        C(failed_node)...), C(warnings) (the records it could not read, by line or index), C(truncated), C(window).
      type: dict
      returned: when O(sacct_path) or O(sacct_src) is given
    accounting_error:
      description: Why the accounting could not be read (the job is still read).
      type: str
      returned: when sacct failed
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._base import run_module
from ansible_collections.zhisuan.ops.plugins.module_utils._sched.job_collect import MAX_BYTES, collect_job_facts


def main():
    run_module(dict(
        job=dict(type="str", required=True),
        scheduler=dict(type="str", default="slurm", choices=["slurm", "kubernetes"]),
        scontrol_path=dict(type="str", default="scontrol"),
        jobcomp_path=dict(type="path"),
        log_path=dict(type="path"),
        sacct_path=dict(type="str"),
        sacct_since=dict(type="str", default="now-7days"),
        sacct_src=dict(type="path"),
        sacct_fields=dict(type="str"),
        sacct_delimiter=dict(type="str"),
        kubectl_path=dict(type="str", default="kubectl"),
        kubeconfig=dict(type="path"),
        context=dict(type="str"),
        namespace=dict(type="str", default="default"),
        max_bytes=dict(type="int", default=MAX_BYTES),
    ), collect_job_facts)


if __name__ == "__main__":
    main()
