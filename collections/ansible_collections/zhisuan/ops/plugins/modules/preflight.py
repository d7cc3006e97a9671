#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: preflight
short_description: Check a run's family selection, or a node's inventory inputs, before any test runs
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Runs on the controller; nothing runs on the node.
  - With O(scope=run), once per run, turns C(--tags) / C(--skip-tags) and the family variables (C(zhisuan_families)
    in any run, C(zhisuan_acceptance_families), C(zhisuan_diag_level) and C(zhisuan_diag_families)) into the list of
    families the run checks, from the one table of runs and their families. A selection that matches nothing, or a
    tag that is not a family of the run, fails the task with a message that says what was asked and what the run has.
  - With O(scope=host), per node, checks the node's inventory inputs - the GPU profile name (in any case, C(H100)
    names C(h100)), the keys of C(zhisuan_expected) and C(zhisuan_thresholds), the DCGM level (1 to 4), the
    family names of the family variables, C(bmc_protocol) (C(redfish) or C(ipmi)) and the paths of C(zhisuan_tools)
    (absolute, or a bare program name for a PATH lookup). It never fails - a node with mistakes gets one C(error)
    check C(run.preflight.inventory) naming every bad value (and the known profiles), and the run skips it.
  - With O(scope=hosts), once per run, does what O(scope=host) does for every node of O(hosts) in one task on the
    controller (the C(results) role's run start), reading each node's inventory variables itself, templated in the
    node's context; a variable that cannot be templated is a mistake of that node. One task for the run instead of
    one per node.
extends_documentation_fragment:
  - zhisuan.ops._attributes
  - zhisuan.ops._attributes.controller
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
options:
  scope:
    description:
      - What to check - the run's family selection (V(run)), the current node's inputs (V(host)) or the inputs of
        every node of O(hosts) (V(hosts)).
    type: str
    required: true
    choices: [run, host, hosts]
  kind:
    description: The kind of run.
    type: str
    required: true
    choices: [acceptance, burnin, delivery, diagnose, inspect, remediate]
  variables:
    description:
      - The inventory values to check, by variable name (C(zhisuan_gpu_profile), C(zhisuan_expected),
        C(zhisuan_thresholds), C(zhisuan_dcgm_level), C(zhisuan_families), C(zhisuan_acceptance_families),
        C(zhisuan_diag_level), C(zhisuan_diag_families), C(bmc_protocol), C(zhisuan_tools)). A null value is not set.
    type: dict
    default: {}
  run_tags:
    description: The run's C(ansible_run_tags) (O(scope=run)).
    type: list
    elements: str
    default: []
  skip_tags:
    description: The run's C(ansible_skip_tags) (O(scope=run)).
    type: list
    elements: str
    default: []
  site:
    description:
      - The run is part of C(site.yml) (delivery, burn-in, acceptance in one go) - a tag that is a family of another
        of its runs is not an error; this run is skipped (RV(skip)) when the tags name none of its families.
    type: bool
    default: false
  families:
    description: The families the run selected (O(scope=host); default every family of the run).
    type: list
    elements: str
  profiles_dir:
    description: A directory of profile YAML files to use instead of the ones shipped in the collection.
    type: path
  hosts:
    description: The nodes whose inventory to check (O(scope=hosts)), by inventory name.
    type: list
    elements: str
    default: []
"""

EXAMPLES = r"""
- name: Which families this run checks
  zhisuan.ops.preflight:
    scope: run
    kind: diagnose
    run_tags: "{{ ansible_run_tags }}"
    skip_tags: "{{ ansible_skip_tags }}"
    variables:
      zhisuan_diag_level: "{{ zhisuan_diag_level | default(none) }}"
  run_once: true
  register: selection

- name: Check this node's inventory before testing it
  zhisuan.ops.preflight:
    scope: host
    kind: acceptance
    variables:
      zhisuan_gpu_profile: "{{ zhisuan_gpu_profile | default(none) }}"
      zhisuan_expected: "{{ zhisuan_expected | default(none) }}"
      zhisuan_tools: "{{ zhisuan_tools | default(none) }}"
  register: node_preflight

- name: Check the inventory of every node of the run, in one task
  zhisuan.ops.preflight:
    scope: hosts
    kind: acceptance
    hosts: "{{ ansible_play_hosts_all }}"
  run_once: true
  delegate_to: localhost
  register: nodes_preflight
"""

RETURN = r"""
families:
  description: The families the run checks, in the run's order.
  returned: success
  type: list
  elements: str
  sample: [gpu, xid]
source:
  description: What chose them (O(scope=run)).
  returned: O(scope=run)
  type: str
  sample: "--tags gpu"
dcgm_level:
  description: The dcgmi diag level of the run (the diagnosis level's, else C(zhisuan_dcgm_level)).
  returned: O(scope=run)
  type: raw
  sample: 1
skip:
  description: Inside C(site.yml), true when the tags name none of this run's families.
  returned: O(scope=run)
  type: bool
ok:
  description: Whether the node's inputs are usable (O(scope=host)); whether every node's are (O(scope=hosts)).
  returned: O(scope=host) or O(scope=hosts)
  type: bool
failed_hosts:
  description: The nodes with mistakes in their inputs, each with its C(run.preflight.inventory) error check (a list).
  returned: O(scope=hosts)
  type: dict
hosts_checked:
  description: How many nodes were checked.
  returned: O(scope=hosts)
  type: int
  sample: 64
problems:
  description: Every mistake found in the node's inputs.
  returned: O(scope=host)
  type: list
  elements: str
checks:
  description: The node's C(run.preflight.inventory) error check when it has mistakes, else empty.
  returned: O(scope=host)
  type: list
  elements: dict
profile:
  description: The GPU profile name the inventory's C(zhisuan_gpu_profile) means, or null.
  returned: O(scope=host)
  type: str
"""
