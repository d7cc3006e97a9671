#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: remediation_history
short_description: Append remediation actions to the history file
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Appends remediation records to C(<dir>/remediation.jsonl) on the controller, one JSON object per line (append
    only, one locked and length-checked write per call, then fsync). The KPIs (time to repair, repairs per cause,
    RMA rate) and the escalation of repeat offenders are computed from it.
  - With O(node), the node's record is built here from its plan entry and what the run did, and appended at once
    (C(remediate.yml) writes each node's record as soon as its action returns, outcome C(acted), and its final
    record when its remediation ends, so a run cut off after an action still has the action in the history).
  - Each record is checked (C(time), C(run_id), C(node), C(cause), C(action), C(outcome) required; ISO times) and
    gets its durations (C(detect_to_action_s), C(action_s), C(detect_to_repair_s)). The shape is in
    C(docs/remediation.md).
  - A short write (a full disk) fails the task, naming the file and the bytes written; the fragment is ended before
    the next record, and readers pass over it with a warning. An append waits at most 60 seconds for another run's
    append (the lock); past that the task fails naming the file, nothing written.
  - With O(release_leases), the node leases that run holds (C(<dir>/leases/), claimed by
    M(zhisuan.ops.remediation_plan) with O(zhisuan.ops.remediation_plan#module:lease_run_id)) are released, so
    another remediation run may act on those nodes.
extends_documentation_fragment:
  - zhisuan.ops._attributes
  - zhisuan.ops._attributes.controller
attributes:
  check_mode:
    support: full
    details:
      - In check mode the records are made and returned, nothing is written.
  diff_mode:
    support: none
options:
  dir:
    description:
      - The history directory, the run's own (C(zhisuan_history_dir), by default its site's C(reports/history/<site key>),
        chosen at the run's start; docs/history.md).
    type: path
    required: true
  records:
    description:
      - Records made already - C(time), C(run_id), C(source_run_id), C(node), C(cause), C(component), C(remedy),
        C(action), C(mode), C(outcome), C(message), C(detected), C(started), C(finished), C(resumed),
        C(verification), C(scheduler), C(evidence), C(ticket).
      - Mutually exclusive with O(node) and O(release_leases); one of the three is required.
    type: list
    elements: dict
  release_leases:
    description:
      - A run id; the node leases it holds in O(dir) are released (nothing is appended). Leases of other runs are left
        alone. Mutually exclusive with O(records) and O(node).
      - Not in check mode (nothing was claimed).
    type: str
  node:
    description: The node whose record is built from the options below and appended.
    type: str
  run_id:
    description: The run's id (required with O(node)).
    type: str
  outcome:
    description:
      - What came of the node's remediation (required with O(node)) - C(acted) (the action returned, the
        verification is not recorded yet), C(repaired), C(resumed), C(failed), C(refused), C(ticket),
        C(awaiting_approval), C(deferred), C(held), C(skipped), C(planned), C(shared_cause).
    type: str
  entry:
    description:
      - The node's entry of the remediation plan (C(action), C(remedy), C(mode), C(why)); omitted for a node the
        plan left alone without one (its action is C(none)).
    type: dict
  message:
    description: The outcome in words.
    type: str
  cause:
    description: The cause when there is no O(entry) (default C(scheduler.drain.operator)).
    type: str
  source_run_id:
    description: The run the plan was made from.
    type: str
  detected:
    description: When the fault was detected (ISO 8601).
    type: str
  started:
    description: When the node's remediation started (ISO 8601).
    type: str
  finished:
    description: When its action returned (ISO 8601).
    type: str
  resumed:
    description: When it was resumed (ISO 8601).
    type: str
  verification:
    description: The five verification steps (C(verify_node_steps)).
    type: raw
  scheduler:
    description: The node in the scheduler - C(name), C(drained), C(reason).
    type: dict
  evidence:
    description: Where the evidence bundle is.
    type: raw
  ticket:
    description: The ticket record.
    type: raw
"""

EXAMPLES = r"""
- name: Record what was done
  zhisuan.ops.remediation_history:
    dir: reports/history
    records:
      - {time: "2026-01-01T10:10:00+00:00", run_id: r2, node: node08, cause: xid.79.events, action: power_cycle,
         outcome: repaired, detected: "2026-01-01T10:00:00+00:00", resumed: "2026-01-01T10:09:00+00:00"}
  run_once: true
  delegate_to: localhost

- name: Record a node's action as soon as it returns
  zhisuan.ops.remediation_history:
    dir: reports/history
    node: node03
    run_id: r2
    outcome: acted
    entry: {action: reset_gpu, remedy: reset_gpu, mode: automatic, why: {cause: gpu.ecc.volatile_uncorrectable}}
    started: "2026-01-01T10:05:00+00:00"
    finished: "2026-01-01T10:05:20+00:00"
  delegate_to: localhost

- name: Release the node leases of this run (its nodes are recorded)
  zhisuan.ops.remediation_history:
    dir: reports/history
    release_leases: 20260101T100000Z-remediate-1234567ab12
  run_once: true
  delegate_to: localhost
"""

RETURN = r"""
path:
  description: The history file appended to (null in check mode, or with O(release_leases)).
  returned: always
  type: str
released:
  description: With O(release_leases), the nodes whose leases were released.
  returned: when O(release_leases) is given
  type: list
  elements: str
records:
  description: The records as written, with C(schema) and C(durations).
  returned: always
  type: list
  elements: dict
"""
