#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: fabric_consistency
short_description: Check that the network configuration agrees across nodes and with the site plan, on the controller
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Reads the C(net) facts of M(zhisuan.ops.net_info) that each host of the play keeps in a host variable
    (O(facts_var)) and compares them across nodes, once, on the controller. It never connects to a node.
  - A rail is an interface name or an RDMA device name found on several nodes (or listed in the plan's
    C(fabric.rails)). Per rail, cluster checks C(nic.mtu.consistency), C(rdma.rate.consistency) and, where
    C(mlnx_qos) was read, C(nic.pfc.consistency), C(nic.trust.consistency) and C(nic.dscp.consistency), and where the
    NIC exposes C(/sys/class/net/IF/ecn/), C(nic.ecn.consistency) - every node agrees, and with the plan's C(fabric)
    values (C(mtu), C(rate_gbps), C(pfc_priorities), C(trust), C(dscp2prio), C(ecn_priorities)) when given.
  - With InfiniBand links in the plan (C(port) like V(mlx5_0/1)) and the fabric's own view (C(ib_fabric) of one
    node's M(zhisuan.ops.net_info) with C(iblinkinfo_path), or O(iblinkinfo)), per node C(cabling.ib.HCA_PORT.neighbor)
    checks that each HCA port reaches the planned switch and port.
  - The subnet's view (C(ib_subnet) of one node's M(zhisuan.ops.net_info) with C(ibnetdiscover_path), or
    O(ibnetdiscover)) is taken before the C(iblinkinfo) view. With it, per node also C(cabling.ib.HCA_PORT.rate)
    (the link's width and speed against the plan's C(rate), or the fabric's most common), and cluster checks
    C(cabling.ib.isl.neighbor) (each of the plan's C(ib_switch_links) present as planned) and
    C(cabling.ib.isl.rate) (every switch-to-switch link at the planned rate).
  - Per node, C(nic.numa.alignment) checks that each rail NIC shares a NUMA node with a GPU.
  - With a cabling plan it returns the cluster cabling map (C(fabric.cabling) in RV(cluster_data)).
extends_documentation_fragment:
  - zhisuan.ops._attributes
  - zhisuan.ops._attributes.controller
attributes:
  check_mode:
    support: full
    details:
      - It reads only; it runs the same in check mode.
  diff_mode:
    support: none
options:
  hosts:
    description: The hosts to compare. By default every host of the play (C(ansible_play_hosts_all)).
    type: list
    elements: str
  facts_var:
    description: The host variable that holds each host's C(net) facts.
    type: str
    default: check_net_facts
  plan:
    description:
      - The cabling plan YAML on the controller (C(zhisuan_cabling_plan)) - C(links) (C(node), C(port), C(switch),
        C(switch_port)), C(switches), and optionally C(fabric) (C(mtu), C(rate_gbps), C(pfc_priorities), C(trust),
        C(rails)). Empty or absent - the nodes are compared with each other only, and no cabling map is returned.
    type: path
  iblinkinfo:
    description:
      - An C(iblinkinfo) output file on the controller, judged against the plan's InfiniBand links instead of the
        C(ib_fabric) a node collected.
    type: path
  ibnetdiscover:
    description:
      - An C(ibnetdiscover) output file on the controller (the topology file or the C(-p) ports report, for
        example one a customer sent), judged against the plan's InfiniBand links instead of the view a node
        collected. Taken before O(iblinkinfo) when both are given.
    type: path
  ibdiagnet:
    description:
      - An C(ibdiagnet) (ibdiagnet2) console output file on the controller, the subnet manager's own diagnosis of
        the fabric, judged as two cluster checks beside the per-link view. C(cabling.ibdiagnet.links) (the
        Discovery, Links Check, Speed / Width checks and Port Counters stages) fails with remedy C(check_cable) on an
        error there, with the stage's C(-E-) lines as evidence; C(cabling.ibdiagnet.subnet) judges the other stages.
      - Warnings only are C(warn); an output cut before its Summary table is never a pass; a file that cannot be
        read is the C(error) check C(cabling.ibdiagnet.readout).
    type: path
notes:
  - Run it with C(run_once) after every host has set its facts variable.
seealso:
  - module: zhisuan.ops.net_info
  - module: zhisuan.ops.judge
"""

EXAMPLES = r"""
- name: Compare the fabric configuration of every node once
  zhisuan.ops.fabric_consistency:
    plan: "{{ zhisuan_cabling_plan | default(omit) }}"
  run_once: true
  register: fabric
"""

RETURN = r"""
cluster_checks:
  description: Cluster check records (host C(cluster)), see the collection's C(docs/results.md).
  returned: always
  type: list
  elements: dict
host_checks:
  description: Check records per host (C(nic.numa.alignment), C(cabling.ib.*)).
  returned: always
  type: dict
cluster_data:
  description:
    - C(fabric.cabling.links) - per planned or observed link C(node), C(port), C(switch), C(switch_port), C(status)
      (C(ok), C(missing), C(miswired), C(unexpected), C(unknown)) and C(observed). Empty without a plan.
  returned: always
  type: dict
  sample: {fabric: {cabling: {links: [{node: node01, port: eth0, switch: leaf01, switch_port: swp1, status: ok,
                                       observed: {switch: leaf01, switch_port: swp1}}]}}}
"""
