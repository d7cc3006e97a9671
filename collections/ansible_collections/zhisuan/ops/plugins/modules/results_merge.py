#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: results_merge
short_description: Merge the results.json of several runs over disjoint hosts into one
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Runs on the controller. Reads the C(results.json) of runs of the same kind that covered disjoint sets of hosts -
    the slices of an AWX sliced job, or runs limited to different racks - and writes one C(results.json) (and
    C(summary.txt)) for all of them, validated against the collection's JSON Schema; the report role renders it.
  - A host found in two of the runs is an error (slices never overlap). Cluster checks are concatenated and cluster
    data merged; the merged run spans the earliest start to the latest finish and lists its sources in
    C(run.merged_from).
extends_documentation_fragment:
  - zhisuan.ops._attributes
  - zhisuan.ops._attributes.controller
attributes:
  check_mode:
    support: none
    details:
      - The merged file is written in check mode too.
  diff_mode:
    support: none
options:
  src:
    description: The runs to merge - paths of C(results.json) files or of the run directories holding them.
    type: list
    elements: path
    required: true
  dest:
    description: Directory to write the merged C(results.json) into; created when missing.
    type: path
    required: true
  run_id:
    description: Identifier of the merged run (defaults to the name of O(dest)).
    type: str
  latest_link:
    description: A symlink to point at O(dest) once the file is written.
    type: path
"""

EXAMPLES = r"""
- name: Merge the inspection slices of an AWX workflow
  zhisuan.ops.results_merge:
    src: "{{ query('ansible.builtin.fileglob', 'reports/out/inspect-1234-slice*/results.json') }}"
    dest: reports/out/inspect-1234
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
path:
  description: Path of the merged C(results.json).
  returned: success
  type: str
  sample: reports/out/inspect-1234/results.json
summary:
  description: Counts of hosts and checks per status of the merged run.
  returned: success
  type: dict
lines:
  description: A short per-node summary, one line per host and a total.
  returned: success
  type: list
  elements: str
merged_from:
  description: Run ids of the merged runs.
  returned: success
  type: list
  elements: str
"""
