#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: rdma_pair
short_description: Run this node's side of one round of perftest RDMA pair tests
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Runs this node's side of one round of C(ib_write_bw), C(ib_write_lat) or C(ib_read_bw) pair tests. A round is a
    list of pairs that run at the same time (see M(zhisuan.ops.rdma_pairs) with C(plan)); run one task per round
    over all nodes so every pair of the round runs at once.
  - A server starts C(<test> -p PORT ...) and waits for its client. A client connects to its server's fabric address,
    retrying while the server is not listening yet, until O(timeout). A loopback pair (server and client the same
    node) runs both sides here. A node that is not in the round does nothing.
  - The outcome of the pair is returned as data (RV(rdma_pair.status) C(ok), C(timeout) or C(error)); a failed pair
    does not fail the task, so the next rounds still run. The judgement is done on the controller by
    M(zhisuan.ops.rdma_pairs) with C(analyze).
extends_documentation_fragment:
  - zhisuan.ops._tool
  - zhisuan.ops._attributes
attributes:
  check_mode:
    support: none
    details:
      - A pair test is a load test on the fabric, not a change that can be predicted; in check mode it does not run.
  diff_mode:
    support: N/A
    details:
      - The module does not change the node's configuration.
  action_group:
    description: Use C(group/zhisuan.ops.rdma) in C(module_defaults) to set defaults for this module.
    support: full
    membership:
      - zhisuan.ops.rdma
options:
  round:
    description:
      - The pairs of this round, each C(server), C(client) (inventory names) and C(port) (the TCP port the server
        listens on, unique within the round).
    type: list
    elements: dict
    required: true
  round_number:
    description: The round's number, returned for the pair matrix.
    type: int
  host:
    description: This node's inventory name, as the round names it (usually C(inventory_hostname)).
    type: str
    required: true
  addresses:
    description:
      - Node name to the address its server is reached at on the fabric (usually each node's
        C(zhisuan_fabric_address)). A server missing from the map is reached by its name.
    type: dict
    default: {}
  test:
    description: The perftest program to run.
    type: str
    choices: [ib_write_bw, ib_write_lat, ib_read_bw, ib_read_lat, ib_send_bw, ib_send_lat]
    default: ib_write_bw
  path:
    description: The program, a name looked up in PATH or an absolute path; default the O(test) name.
    type: str
  device:
    description: The RDMA device (C(-d)), for example C(mlx5_0); perftest picks the first one when unset.
    type: str
  ib_port:
    description: The port of the RDMA device (C(-i)).
    type: int
  gid_index:
    description: The GID index (C(-x)), needed on RoCE (commonly 3 for RoCEv2).
    type: int
  size:
    description: Message size in bytes (C(-s)). Line rate needs large messages (8 MiB, C(8388608)).
    type: int
  qps:
    description: Number of queue pairs (C(-q)) of a bandwidth test.
    type: int
  iterations:
    description: Iterations (C(-n)); ignored when O(duration) is set.
    type: int
  duration:
    description: Seconds each test runs (C(-D)); the per-pair time of a schedule.
    type: int
  gpudirect:
    description: Run GPUDirect RDMA from this CUDA device index (C(--use_cuda=N)); unset for host memory.
    type: int
  extra_args:
    description: More perftest options, the same on both sides (for example C(--report_gbits) is not needed).
    type: list
    elements: str
    default: []
  retry_delay:
    description: Seconds a client waits between connection attempts while its server is not listening yet.
    type: float
    default: 0.5
notes:
  - O(timeout) is the per-pair timeout, for the server (waiting for its client included) and for all the client's
    connection attempts together.
  - Bandwidth is returned in Gb/s (10^9 bit/s) whatever unit perftest printed (its C(MB/sec) is 2^20 bytes/s).
seealso:
  - module: zhisuan.ops.rdma_pairs
  - name: perftest
    description: The RDMA performance tests.
    link: https://github.com/linux-rdma/perftest
"""

EXAMPLES = r"""
- name: Plan a full mesh over the play's nodes
  zhisuan.ops.rdma_pairs:
    plan: full_mesh
  register: pairs_plan
  run_once: true

- name: Run round 1 (every pair of the round at once)
  zhisuan.ops.rdma_pair:
    round: "{{ pairs_plan.rounds[0] }}"
    round_number: 1
    host: "{{ inventory_hostname }}"
    addresses: "{{ dict(ansible_play_hosts | zip(ansible_play_hosts | map('extract', hostvars, 'zhisuan_fabric_address'))) }}"
    device: mlx5_0
    size: 8388608
    duration: 10
    timeout: 40
  register: round_result
"""

RETURN = r"""
rdma_pair:
  description: This node's side of the round.
  returned: success
  type: dict
  contains:
    host:
      description: This node.
      type: str
    role:
      description: V(server), V(client), V(loopback) or V(idle) (not in the round).
      type: str
    peer:
      description: The other node of the pair (this node for a loopback).
      type: str
    server:
      description: The pair's server.
      type: str
    client:
      description: The pair's client.
      type: str
    port:
      description: The TCP port of the pair.
      type: int
    address:
      description: The server's address the client connected to.
      type: str
    round:
      description: O(round_number).
      type: int
    status:
      description: V(ok), V(timeout), V(error) or V(idle).
      type: str
    error_kind:
      description: Why it failed (V(no_device), V(connect), V(listen), V(completion), V(timed_out), V(not_found), ...).
      type: str
    message:
      description: A readable message when it failed.
      type: str
    value:
      description: Average bandwidth in Gb/s (bandwidth tests) or typical latency in usec (latency tests).
      type: float
      sample: 391.2
    unit:
      description: V(Gb/s) or V(usec).
      type: str
    attempts:
      description: Connection attempts of a client.
      type: int
    result:
      description: The judged row of perftest's table (largest message for bandwidth, smallest for latency).
      type: dict
      sample: {bytes: 8388608, iterations: 20000, bw_peak: 24056.74, bw_average: 24056.72, bw_average_gbps: 201.802}
    device:
      description: The RDMA device perftest used.
      type: str
    local:
      description: Local QP addresses (C(lid), C(qpn), C(psn), C(rkey), C(vaddr), C(gid)).
      type: list
      elements: dict
    remote:
      description: Remote QP addresses.
      type: list
      elements: dict
    server_side:
      description: For a loopback, the server side's outcome.
      type: dict
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._base import run_module
from ansible_collections.zhisuan.ops.plugins.module_utils._net.pair_run import TESTS, rdma_pair


def main():
    argument_spec = dict(
        round=dict(type="list", elements="dict", required=True),
        round_number=dict(type="int"),
        host=dict(type="str", required=True),
        addresses=dict(type="dict", default={}),
        test=dict(type="str", choices=list(TESTS), default="ib_write_bw"),
        path=dict(type="str"),
        device=dict(type="str"),
        ib_port=dict(type="int"),
        gid_index=dict(type="int"),
        size=dict(type="int"),
        qps=dict(type="int"),
        iterations=dict(type="int"),
        duration=dict(type="int"),
        gpudirect=dict(type="int"),
        extra_args=dict(type="list", elements="str", default=[]),
        retry_delay=dict(type="float", default=0.5),
    )
    run_module(argument_spec, rdma_pair, supports_check_mode=False)


if __name__ == "__main__":
    main()
