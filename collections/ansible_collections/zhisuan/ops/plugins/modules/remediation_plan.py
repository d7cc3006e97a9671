#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: remediation_plan
short_description: Plan a remediation from a run's check records, the site policy and the scheduler
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Reads the host records of a C(results.json) (a diagnose, acceptance or inspect run) or of the current run, the
    site remediation policy and the scheduler's view of the nodes, and returns the plan - per node the action
    (C(reset_gpu), C(reboot), C(power_cycle) or C(ticket)), why (the root cause and the failing check ids), the mode
    (C(automatic), C(approval), C(ticket)) and the batch.
  - Applies the blast-radius limit (at most C(max_nodes) and C(max_percent) of the fleet in remediation at once,
    counting nodes already drained) and the circuit breaker (one failing check on too many nodes at once - a
    fleet-wide cause - plans no action at all and returns the failing cluster check C(remediate.breaker.tripped)).
  - It never connects to a node and changes nothing; it is the only step of a remediation that runs in check mode.
extends_documentation_fragment:
  - zhisuan.ops._attributes
  - zhisuan.ops._attributes.controller
attributes:
  check_mode:
    support: full
    details:
      - Planning reads only; it runs the same in check mode.
  diff_mode:
    support: none
options:
  results:
    description: Path of a C(results.json) to plan from. Mutually exclusive with O(hosts), O(checks) and O(run_hosts).
    type: path
  run_hosts:
    description:
      - Plan from the checks the current run keeps for these hosts (their node record and the results role's checks,
        as C(results.json) will hold them; O(run_id) names the run). C(inspect.yml) plans so to find the nodes a
        remediation left drained (C(remediate.stranded.<node>)).
    type: list
    elements: str
  run_id:
    description: The current run's id (with O(run_hosts)).
    type: str
  families:
    description:
      - Plan only from the checks of these families (for example C([gpu, xid]), what C(remediate.yml) diagnoses);
        a host with no check of them is left out (nothing says whether it passes), its scheduler state too.
    type: list
    elements: str
  hosts:
    description:
      - Host records (C(results.json) C(hosts) shape, name to C({status, checks, facts})) to plan from. A missing
        C(status) is the worst check's, a missing C(facts.diagnosis) is computed from the checks.
    type: dict
  checks:
    description:
      - Node name to its check records (the findings of the current run), the short form of O(hosts).
    type: dict
  unreachable:
    description: Nodes that were unreachable (planned as such, never acted on).
    type: list
    elements: str
    default: []
  policy_file:
    description: The site policy (YAML). By default the collection's C(data/remediation/policy.yml).
    type: path
  policy:
    description: Overrides of the policy, the same shape as the file, merged over it key by key.
    type: dict
    default: {}
  scheduler:
    description:
      - Node name to the C(node) returned by M(zhisuan.ops.scheduler_node) with C(state=info) (C(drain),
        C(drained_by_us), C(reason)). Drained nodes count toward the limit; a node drained by someone else is
        never planned.
      - A node drained by us (its reason carries our mark, C(zhisuan:<check id> run <run id>)) with nothing to act
        on is stranded - a run cut off after its action left it so. It is planned with action C(verify) (the
        verification, then the resume), takes no new slot of the limit, and the cluster check
        C(remediate.stranded.<node>) (warn) names it.
    type: dict
    default: {}
  fleet:
    description: Size of the fleet the percentages refer to. By default the number of host records.
    type: int
  approved:
    description: Nodes whose C(approval) actions may run, or C(all).
    type: list
    elements: str
    default: []
  batch_size:
    description: Nodes per batch (the C(serial) of the play that applies the plan).
    type: int
    default: 1
  only:
    description: Plan only these nodes (for example the play's hosts under C(--limit)); the breaker still counts every host.
    type: list
    elements: str
  history_dir:
    description:
      - The run's history folder (C(zhisuan_history_dir), else its site's) whose C(remediation.jsonl) is read. A
        node repaired for the same cause C(escalation.repeats) times within C(escalation.window_days) gets the next
        remedy up the policy's C(escalation.ladder) (C(reset_gpu), C(power_cycle), C(rma) by default).
      - Without it no escalation is planned.
      - Its node leases (C(leases/)) are read too; a node another remediation run holds now is planned C(held), and
        is not stranded (what C(inspect.yml) reports), even without O(lease_run_id).
    type: path
  lease_run_id:
    description:
      - The run id of this remediation run. With O(history_dir) (not in check mode), the run claims the lease of each
        node it plans to act on (C(<history_dir>/leases/<node>.json)); a node another remediation run holds is planned
        C(held) with the message C(held by run <id>), never acted on, and its slot may go to a deferred node. A lease
        whose run is gone (its process no longer lives on this controller, or it was taken on another controller
        more than 24 hours ago) is taken over. M(zhisuan.ops.remediation_history) with
        O(zhisuan.ops.remediation_history#module:release_leases) releases them.
      - Not set means no leases (two overlapping runs may then act on one node).
    type: str
  cabling_plan:
    description:
      - The cabling plan (C(zhisuan_cabling_plan)); with the hosts' C(zhisuan_rack) and C(zhisuan_pdu) it says which
        leaf switch, spine, rack and power feed each node shares with others.
      - Nodes whose failures a shared component explains (C(fleet.shared.<kind>.<name>)) get one ticket for the
        component and no action of their own, and do not count toward the circuit breaker.
    type: path
  fleet_thresholds:
    description: Site values of the shared-component statistic (C(min_nodes), C(min_share), C(ratio); C(docs/fleet.md)).
    type: dict
    default: {}
seealso:
  - name: Remediation
    description: The policy file, the plan, the limits, the breaker and the history record (C(docs/remediation.md)).
    link: https://github.com/zhisuan-ops/zhisuan.ops/blob/main/docs/remediation.md
"""

EXAMPLES = r"""
- name: Plan from the last diagnosis
  zhisuan.ops.remediation_plan:
    results: reports/out/latest/results.json
    policy:
      limits:
        max_nodes: 4
  register: remediation
  run_once: true
  delegate_to: localhost
"""

RETURN = r"""
plan:
  description: The plan (see C(docs/remediation.md)).
  returned: always
  type: dict
  contains:
    nodes:
      description:
        - Node name to C({action, remedy, mode, rule, why, already_drained, batch, status, message}), plus
          C(escalation) (C({from, to, tries, reason})) for a repeat offender and C(shared) for a node whose failure
          a shared component explains (status C(shared_cause)).
      type: dict
    shared:
      description: Nodes held because a shared component explains their failure.
      type: list
    repeat_offenders:
      description: Nodes whose remedy went up the escalation ladder.
      type: list
    order:
      description: The nodes to act on, in order.
      type: list
    deferred:
      description: Nodes beyond the blast-radius limit (for a later run).
      type: list
    held:
      description: Nodes not acted on because the breaker tripped, or another remediation run holds them (RV(plan.leased)).
      type: list
    leased:
      description:
        - Nodes another remediation run holds (O(lease_run_id)); each one's entry in RV(plan.nodes) has C(leased)
          (C(run_id), C(host), C(pid), C(time) of that run's lease) and status C(held).
      type: list
    skipped:
      description: Node name to why it is left alone (drained by an operator, unreachable).
      type: dict
    breaker:
      description: C({tripped, check}).
      type: dict
    limit:
      description: C({allowed, fleet, already_drained, text}).
      type: dict
order:
  description: The nodes to act on, in order (the same as RV(plan.order)).
  returned: always
  type: list
  elements: str
  sample: [node03, node08]
checks:
  description:
    - Cluster check records - the shared-component checks C(fleet.shared.<kind>.<name>), C(remediate.breaker.tripped),
      C(remediate.repeat.<node>) per repeat offender, C(remediate.shared.<component>) per held group and, when nodes
      wait, C(remediate.limit.deferred).
  returned: always
  type: list
  elements: dict
source:
  description: The source run (C(path), C(run_id), C(kind), C(started), C(finished)); all null for O(hosts).
  returned: always
  type: dict
policy:
  description: The policy used, defaults filled in.
  returned: always
  type: dict
policy_file:
  description: The policy file read.
  returned: always
  type: str
leases:
  description:
    - The node leases this run holds once the plan is made (C(history_dir), C(run_id), C(nodes)), V(null) when it
      claimed none (no O(lease_run_id), no O(history_dir), or check mode).
    - The run-record callback releases them when the run stops before its record play.
  returned: always
  type: dict
"""
