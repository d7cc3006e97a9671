#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: rdma_pairs
short_description: Plan RDMA pair-test rounds, or judge the pair matrix they produced, on the controller
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - With O(plan), returns the rounds of a pair schedule over the play's nodes, each pair with its own TCP port
    (pair I{i} of a round listens on O(base_port) + I{i}). No node is in two pairs of one round.
  - C(loopback) - one round, every node its own server and client.
  - C(full_mesh) - every unordered pair exactly once by the circle method, N-1 rounds of N/2 pairs (N odd - N rounds).
  - C(random) - one round of random disjoint pairs (an odd node out meets a random partner in a second round).
  - C(repair) - every node of O(suspects) re-paired with a node of O(good), the second pass after C(random).
  - C(topology) - from O(cabling_plan), same-leaf pairs first, then pairs across the spine, then across spines.
  - With O(analyze=true), reads each node's list of M(zhisuan.ops.rdma_pair) results (the host variable named by
    O(results_var)) and tells a slow node (low with most partners that are fine elsewhere) from a slow link (one pair
    low, both nodes fine elsewhere). It returns host checks per node, cluster checks and the pair matrix for
    C(results.json) (C(cluster.fabric.rdma_pairs), see the collection's C(docs/results.md)).
  - It never connects to a node.
extends_documentation_fragment:
  - zhisuan.ops._attributes
  - zhisuan.ops._attributes.controller
attributes:
  check_mode:
    support: full
    details:
      - Planning and judging only read; they run the same in check mode.
  diff_mode:
    support: none
options:
  plan:
    description: The schedule to plan. Mutually exclusive with O(analyze).
    type: str
    choices: [loopback, full_mesh, random, topology, repair]
  analyze:
    description: Judge the pair results instead of planning.
    type: bool
    default: false
  nodes:
    description: The nodes; default the play's hosts (C(ansible_play_hosts)), in inventory order.
    type: list
    elements: str
  seed:
    description: Seed of the C(random) and C(repair) plans (the same seed gives the same pairs).
    type: raw
  cabling_plan:
    description:
      - For C(topology), the cabling plan, a mapping or the path of a YAML file -
        C({links - [{node, port, switch, switch_port}], switches - {leaf01 - {tier - leaf, uplink - spine01}}}).
      - A node's leaf is the switch of its first link in the plan.
    type: raw
  base_port:
    description: TCP port of the first pair of each round.
    type: int
    default: 18515
  suspects:
    description: For C(repair), the nodes to re-pair (RV(suspects) of a first analysis).
    type: list
    elements: str
    default: []
  good:
    description: For C(repair), the known-good nodes (RV(good) of a first analysis).
    type: list
    elements: str
    default: []
  results:
    description: The M(zhisuan.ops.rdma_pair) results to judge, instead of reading O(results_var) of every node.
    type: list
    elements: dict
  results_var:
    description: The host variable holding each node's list of RV(zhisuan.ops.rdma_pair#module:rdma_pair) results.
    type: str
    default: rdma_pair_results
  floor:
    description: Bandwidth floor of a pair in Gb/s (bandwidth tests), from the profile or C(zhisuan_thresholds.rdma).
    type: raw
  ceiling:
    description: Latency ceiling in usec (latency tests), instead of O(floor).
    type: raw
  unit:
    description: Unit of the values, for messages and the matrix.
    type: str
    default: Gb/s
  test:
    description: The perftest program that ran, for messages and the matrix.
    type: str
    default: ib_write_bw
  schedule:
    description: The schedule kind that ran, for the matrix.
    type: str
  rounds:
    description: How many rounds ran (default - the rounds seen in the results).
    type: int
  address_var:
    description:
      - With O(plan), the host variable that holds a node's fabric address; RV(addresses) falls back to
        C(ansible_host), then to C(127.0.0.1) for a node reached with the C(local) connection, then to the name.
    type: str
    default: zhisuan_fabric_address
  profile:
    description: GPU profile whose C(ib_write_bw_floor_gbps) is the floor when O(floor) and O(ceiling) are unset.
    type: str
  profiles_dir:
    description: A directory of profile YAML files instead of the shipped ones.
    type: path
  profile_overrides:
    description: Site overrides merged over the profile.
    type: dict
    default: {}
  thresholds:
    description:
      - C(node_fraction) - share of a node's partners that must be low for the node to be slow (default 0.5).
    type: dict
    default: {}
"""

EXAMPLES = r"""
- name: Plan a full mesh
  zhisuan.ops.rdma_pairs:
    plan: full_mesh
  register: plan
  run_once: true

- name: Judge the pairs every node kept in rdma_pair_results
  zhisuan.ops.rdma_pairs:
    analyze: true
    floor: 360
    schedule: full_mesh
  register: judged
  run_once: true
"""

RETURN = r"""
rounds:
  description: With O(plan), the rounds; each pair has C(server), C(client) and C(port).
  returned: plan
  type: list
  elements: list
  sample: [[{server: node01, client: node04, port: 18515}, {server: node02, client: node03, port: 18516}]]
addresses:
  description: With O(plan), node name to the address its server is reached at (pass it to M(zhisuan.ops.rdma_pair)).
  returned: plan
  type: dict
round_count:
  description: Number of rounds.
  returned: plan
  type: int
pair_count:
  description: Number of pairs over all rounds.
  returned: plan
  type: int
host_checks:
  description: With O(analyze), node name to its check records (C(rdma.node.bandwidth), C(rdma.pair.timeout), C(rdma.pair.error)).
  returned: analyze
  type: dict
cluster_checks:
  description: Cluster check records (C(rdma.pair.<a>.<b>), the node names sorted, for slow links, C(rdma.pairs.summary)).
  returned: analyze
  type: list
  elements: dict
cluster_data:
  description: C({fabric - {rdma_pairs - {test, unit, floor, schedule, rounds, nodes, pairs}}}) for C(results.json).
  returned: analyze
  type: dict
suspects:
  description: Nodes in a low, failed or timed-out pair that are not proven slow (re-pair them with C(plan=repair)).
  returned: analyze
  type: list
  elements: str
good:
  description: Nodes whose every pair was measured at the floor.
  returned: analyze
  type: list
  elements: str
slow_nodes:
  description: Nodes found slow.
  returned: analyze
  type: list
  elements: str
slow_links:
  description: Pairs found slow while both nodes are fine (C(a <-> b)).
  returned: analyze
  type: list
  elements: str
summary:
  description: Counts for the report.
  returned: analyze
  type: dict
pairs:
  description: The merged pair records judged (C(server), C(client), C(round), C(port), C(status), C(value), C(message)).
  returned: analyze
  type: list
  elements: dict
"""
