#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: results
short_description: Write the run's results.json from every targeted host's check records
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Runs once on the controller at the end of a run. Reads, for every inventory host that the run targeted
    (C(results_targeted)), its check records (C(results_checks)), report facts (C(results_host_facts)) and
    whether it was unreachable (C(results_unreachable)), as the C(results) role keeps them.
  - A host's status is its worst check (fail > error > warn > pass). An unreachable host is C(unreachable); a targeted
    host with no check at all gets an C(error) check C(run.host.tasks). A node that failed its preflight holds its
    C(run.preflight.inventory) check, a task that failed unexpectedly its C(<family>.task.failed) check.
  - When a run stops before this write (interrupted, or every node failed out of it), the C(zhisuan_run_record)
    callback beside the playbooks writes the file from the checks kept so far, with C(run.partial) set.
  - The document is validated against the collection's JSON Schema (C(data/schema/results-v1.json)) and written
    atomically (a temporary file renamed over C(results.json)), with a plain C(summary.txt) beside it.
extends_documentation_fragment:
  - zhisuan.ops._attributes
  - zhisuan.ops._attributes.controller
attributes:
  check_mode:
    support: none
    details:
      - The file is written in check mode too, so that a check-mode run still leaves its record.
  diff_mode:
    support: none
options:
  claim:
    description:
      - Instead of writing the record, claim the run's id and folder at the run's start and return them (C(run_id),
        C(dest)).
      - "Without O(run_id) and O(dest) a new id is made, C(<YYYYmmddTHHMMSS>Z-<kind>-<microseconds><4 hex digits>),
        so that two runs started in the same second get two ids, and its folder under O(out_root) is created with
        one C(mkdir), which only one run can do; a taken folder is retried with a new id."
      - A given O(run_id) or O(dest) is the user's choice and used as it is.
    type: bool
    default: false
  out_root:
    description: With O(claim), the folder the runs' folders are created in.
    type: path
  run_id:
    description:
      - Identifier of the run, also the name of its directory. Required to write the record; with O(claim), a fixed
        id instead of a new one.
    type: str
  kind:
    description: What kind of run this was.
    type: str
    required: true
    choices: [delivery, burnin, acceptance, diagnose, remediate, inspect]
  started:
    description: ISO 8601 time the run started. Required to write the record.
    type: str
  playbook:
    description: The playbook that ran.
    type: str
    default: ""
  dest:
    description:
      - Directory to write C(results.json) and C(summary.txt) into; created when missing. Required to write the
        record; with O(claim), a folder the inventory fixed (C(zhisuan_report_dir)).
    type: path
  latest_link:
    description: A symlink to point at O(dest) once the file is written, replaced atomically.
    type: path
  cluster_checks:
    description: Cluster-wide check records (fleet consistency, pair matrices, multi-node NCCL).
    type: list
    elements: dict
    default: []
  cluster_data:
    description:
      - Cluster-wide data written beside the cluster checks in C(results.json)'s C(cluster) object (the RDMA pair
        matrix, NCCL curves, the cabling map, the storage aggregate); the shapes are in the collection's docs/results.md.
    type: dict
    default: {}
  families:
    description: The check families the run selected, for the report.
    type: list
    elements: str
    default: []
  fleet_baseline:
    description:
      - Add cluster checks C(baseline.<component>.drift) that name every node whose version of a component differs
        from the others of its server model (from each host's C(facts.baseline.versions), written by the
        C(baseline) family, grouped by C(facts.bmc.model)).
    type: bool
    default: false
  assets:
    description:
      - Also write C(assets.csv) beside C(results.json) - the asset list (node, rack and U from C(zhisuan_rack) and
        C(zhisuan_u), serial, model, BMC address, firmware versions, GPU model and count, driver), from the same host
        facts the report and the checks read (the BIOS and BMC firmware the baseline checks compared).
      - And C(assets-components.csv) - one row per part the facts hold (GPUs, CPUs, DIMMs, drives, power supplies,
        NICs, optics, RDMA devices, FRUs; slot, model, part number, serial, firmware and a GPU UUID, MAC address or
        node GUID).
      - And add the cluster check C(assets.serial.duplicate) - a system or part serial number that more than one
        node reports (placeholder serials such as C(N/A) or all zeros are ignored).
    type: bool
    default: false
  diagnose:
    description:
      - Add a per-node diagnosis to each reachable host's C(facts.diagnosis) - the root cause (the most decisive
        failing check - fail before error before warn, then by remedy, RMA and power cycle first) and every remedy to
        apply, in order.
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Write results.json
  zhisuan.ops.results:
    run_id: "{{ results_run_id }}"
    kind: acceptance
    started: "{{ results_run_started }}"
    playbook: acceptance.yml
    dest: "reports/out/{{ results_run_id }}"
    latest_link: reports/out/latest
  register: written
"""

RETURN = r"""
run_id:
  description: With O(claim), the run's id.
  returned: O(claim=true)
  type: str
  sample: 20261203T084512Z-inspect-0412779c1e
dest:
  description: The run's folder (with O(claim), the one claimed).
  returned: success
  type: str
path:
  description: Path of the written C(results.json).
  returned: success
  type: str
  sample: reports/out/20261130T210000Z-acceptance/results.json
summary:
  description: Counts of hosts and checks per status.
  returned: success
  type: dict
lines:
  description: A short per-node summary, one line per host and a total.
  returned: success
  type: list
  elements: str
ansible_stats:
  description:
    - What the task adds to the run's custom stats, as M(ansible.builtin.set_stats) does (not per host, aggregated);
      the path in the list C(zhisuan_run_summary_results), which the C(zhisuan.ops.run_summary) callback prints at
      the end of the run.
  returned: success
  type: dict
"""
