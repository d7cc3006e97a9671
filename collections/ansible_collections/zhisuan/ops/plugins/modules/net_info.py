#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: net_info
short_description: NIC, optics, RDMA port, LLDP neighbour and link-flap facts of a node
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Per interface runs C(ethtool IF) (speed, duplex, link), C(ethtool -i) (driver, firmware), C(ethtool -S) twice
    O(counter_window) seconds apart (error, discard and pause counter increments over the window, not lifetime
    totals) and C(ethtool -m) (module temperature, Tx/Rx power, bias, alarm and warning flags, thresholds), and reads
    C(ip -j link) (MTU, state) and the NIC's NUMA node.
  - Reads the RDMA devices and ports with C(ibstat) or C(/sys/class/infiniband) (O(ib_source)), the LLDP neighbours
    with C(lldpctl -f json) (O(lldpctl_path)), link up/down events from the kernel log (C(journalctl -k), else
    C(dmesg)) and the NUMA node of each NVIDIA GPU.
  - It collects facts only; the C(zhisuan.ops.judge) families C(nic), C(rdma_ports) and C(cabling) and the
    C(zhisuan.ops.fabric_consistency) action judge them.
  - Only C(ip -j link) must work. A port without a module (C(ethtool -m) says C(Operation not supported) or
    C(Cannot get module EEPROM)) has C(optics) V(null) in RV(net.interfaces), with the reason; no RDMA device (C(ibstat)
    prints nothing) is C(no_device) in RV(net.ib), not a failure; other failures are kept in the facts for the judge.
extends_documentation_fragment:
  - zhisuan.ops._tool
  - zhisuan.ops._attributes
  - zhisuan.ops._attributes.info_module
options:
  interfaces:
    description: Interfaces to read. By default every interface C(ip -j link) lists except loopback.
    type: list
    elements: str
    default: []
  counter_window:
    description:
      - Seconds between the two C(ethtool -S) readings. V(0) reads the counters once and returns no increments.
      - The InfiniBand / RoCE port error counters (C(/sys/class/infiniband/*/ports/*/counters), unless
        O(ib_source=none)) are read at the same two moments; their growth is returned in C(net.ib.counters_delta).
    type: int
    default: 5
  optics:
    description: Run C(ethtool -m) on each interface.
    type: bool
    default: true
  ethtool_path:
    description: The C(ethtool) program (C(zhisuan_tools.ethtool)).
    type: str
    default: ethtool
  ip_path:
    description: The C(ip) program (C(zhisuan_tools.ip)).
    type: str
    default: ip
  ib_source:
    description:
      - Where the RDMA ports are read. V(auto) runs C(ibstat) and reads C(/sys/class/infiniband) when it is not
        installed; V(none) skips RDMA.
    type: str
    choices: [auto, ibstat, sysfs, none]
    default: auto
  ibstat_path:
    description: The C(ibstat) program (C(zhisuan_tools.ibstat)).
    type: str
    default: ibstat
  mlnx_qos_path:
    description:
      - The C(mlnx_qos) program (NVIDIA/Mellanox OFED). When set, C(mlnx_qos -i IF) gives each interface's trust
        mode, PFC priorities and DSCP map in C(qos) of RV(net.interfaces); its absence is noted, not a failure.
    type: str
  iblinkinfo_path:
    description:
      - The C(iblinkinfo) program (infiniband-diags). When set, the fabric's own view of the InfiniBand cabling
        (every HCA port with the switch and port it reaches) is in RV(net.ib_fabric). The view is global, so set it on
        one node of a fabric only (M(zhisuan.ops.fabric_consistency) judges it against the cabling plan).
    type: str
  ibnetdiscover_path:
    description:
      - The C(ibnetdiscover) program (infiniband-diags). When set, the subnet's view of every link (each HCA port
        with the switch and port it reaches, and the switch-to-switch links, each with its width and speed) is in
        RV(net.ib_subnet). The view is the subnet's, so set it on one node per fabric that sees the subnet
        (M(zhisuan.ops.fabric_consistency) judges it against the cabling plan, before the C(iblinkinfo) view).
    type: str
  lldpctl_path:
    description:
      - The C(lldpctl) (or C(lldpcli)) program (C(zhisuan_tools.lldpctl)). Empty skips LLDP.
    type: str
  lldp_socket:
    description: The lldpd control socket (C(lldpctl -u)), for an lldpd not on its default socket.
    type: str
  link_flaps:
    description: Read the kernel log for link up/down events.
    type: bool
    default: true
  journalctl_path:
    description: The C(journalctl) program (C(zhisuan_tools.journalctl)); empty skips it.
    type: str
    default: journalctl
  dmesg_path:
    description: The C(dmesg) program (C(zhisuan_tools.dmesg)), used when journalctl fails; empty skips it.
    type: str
    default: dmesg
  since:
    description: Only kernel log entries since this time (C(journalctl --since) syntax, for example V(-1d)).
    type: str
  root:
    description: Where C(/sys) is read from (V(/) on a real node).
    type: path
    default: /
notes:
  - C(journalctl -k) holds the kernel's own link messages (driver C(NIC Link is Down), C(Link down)); systemd-networkd's
    C(lost carrier) lines are read when the kernel log source passed in (a syslog file through the lab) carries them.
seealso:
  - module: zhisuan.ops.judge
  - module: zhisuan.ops.fabric_consistency
"""

EXAMPLES = r"""
- name: NIC and RDMA facts of the compute rails, counters over 10 s
  zhisuan.ops.net_info:
    interfaces: [ens1f0np0, ens2f0np0]
    counter_window: 10
    ethtool_path: "{{ zhisuan_tools.ethtool | default('ethtool') }}"
    ibstat_path: "{{ zhisuan_tools.ibstat | default('ibstat') }}"
    lldpctl_path: "{{ zhisuan_tools.lldpctl | default('lldpctl') }}"
    since: -1d
  register: net

- name: Show the Rx power of every optic
  ansible.builtin.debug:
    msg: "{{ net.net.interfaces | dict2items | rejectattr('value.optics', 'none') | map(attribute='value.optics.rx_power_dbm') | list }}"
"""

RETURN = r"""
net:
  description: Network facts of the node. The full field list is in the collection's C(docs/net-facts.md).
  returned: success
  type: dict
  contains:
    interfaces:
      description:
        - Per interface C(driver), C(firmware), C(speed_mbps), C(duplex), C(link) (carrier detected), C(mtu),
          C(operstate), C(admin_up), C(numa_node), C(counters_delta), C(optics), C(optics_reason), C(qos), C(ecn),
          C(errors).
        - C(ecn) is the RoCE ECN enablement read from C(/sys/class/net/IF/ecn/) (C(np) and C(rp), the enabled
          priorities; C(cnp_dscp); C(errors)), V(null) where the NIC exposes no C(ecn/) directory.
        - C(counters_delta) is C(seconds), C(errors), C(discards), C(pause), C(pause_per_s) and C(counters) (the
          non-zero increments by counter name), V(null) with O(counter_window=0).
        - C(optics) is C(temperature_c), C(voltage_v), C(bias_ma), C(tx_power_mw), C(tx_power_dbm), C(rx_power_mw),
          C(rx_power_dbm), C(flags), C(alarms), C(warnings), C(thresholds), C(implausible) (reasons the readings
          cannot be trusted), or V(null) with the reason in C(optics_reason).
      type: dict
    ib:
      description:
        - C(devices) (C(ca_type), C(fw), C(ports) by number with C(state), C(phys_state), C(rate_gbps),
          C(link_layer)), C(no_device) (why there is none), C(errors), C(source), C(error). V(null) with
          O(ib_source=none).
      type: dict
      sample: {devices: {}, no_device: "ibstat listed no RDMA device (no HCA, or its driver is not loaded)",
               errors: [], source: ibstat, error: null}
    lldp:
      description: First LLDP neighbour per interface (C(switch), C(switch_port), C(switch_descr), C(neighbors)).
        V(null) without O(lldpctl_path).
      type: dict
    lldp_error:
      description: Why lldpctl could not be read, else V(null).
      type: str
    link_flaps:
      description: Link-down events per interface in the kernel log, V(null) when it was not read.
      type: dict
    link_flap_events:
      description: The last 50 link up/down events (C(interface), C(state), C(time), C(line)).
      type: list
      elements: dict
    link_flaps_error:
      description: Why the kernel log could not be read, else V(null).
      type: str
    gpu_numa:
      description: NUMA node of each NVIDIA GPU by PCI address.
      type: dict
    ib_fabric:
      description:
        - The InfiniBand cabling as the fabric sees it (C(iblinkinfo)), V(null) without O(iblinkinfo_path).
        - C(links) (C(host), C(hca), C(port), C(switch), C(switch_guid), C(switch_port), C(state), C(phys_state),
          C(up), C(source)) and C(error) (why iblinkinfo could not be read, else V(null)).
      type: dict
    ib_subnet:
      description:
        - The InfiniBand subnet's view of every link (C(ibnetdiscover)), V(null) without O(ibnetdiscover_path).
        - C(links) as in RV(net.ib_fabric) plus C(width) (lanes) and C(speed) (V(EDR), V(HDR), ...), C(switch_links)
          (C(switch), C(port), C(peer), C(peer_port), C(width), C(speed)), C(partial) (the output was cut short or
          elided), C(warnings) (the lines not read) and C(error) (why ibnetdiscover could not be read, else V(null)).
      type: dict
    counter_window:
      description: Seconds between the two counter readings.
      type: int
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._base import run_module
from ansible_collections.zhisuan.ops.plugins.module_utils._net.collect import collect_net_facts


def main():
    argument_spec = dict(
        interfaces=dict(type="list", elements="str", default=[]),
        counter_window=dict(type="int", default=5),
        optics=dict(type="bool", default=True),
        ethtool_path=dict(type="str", default="ethtool"),
        ip_path=dict(type="str", default="ip"),
        ib_source=dict(type="str", default="auto", choices=["auto", "ibstat", "sysfs", "none"]),
        ibstat_path=dict(type="str", default="ibstat"),
        mlnx_qos_path=dict(type="str"),
        iblinkinfo_path=dict(type="str"),
        ibnetdiscover_path=dict(type="str"),
        lldpctl_path=dict(type="str"),
        lldp_socket=dict(type="str"),
        link_flaps=dict(type="bool", default=True),
        journalctl_path=dict(type="str", default="journalctl"),
        dmesg_path=dict(type="str", default="dmesg"),
        since=dict(type="str"),
        root=dict(type="path", default="/"),
    )
    run_module(argument_spec, collect_net_facts)


if __name__ == "__main__":
    main()
