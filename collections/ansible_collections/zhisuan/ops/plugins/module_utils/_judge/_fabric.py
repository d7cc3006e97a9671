# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Fabric configuration consistency across nodes (a cluster function over every node's ``net`` facts).

A rail is an interface name (Ethernet/RoCE) or an RDMA device name (InfiniBand) that recurs across nodes; the
plan's ``fabric.rails`` lists them explicitly. Per rail, cluster checks (host ``cluster``):
``nic.mtu.consistency``, ``rdma.rate.consistency``, ``nic.pfc.consistency``, ``nic.trust.consistency``,
``nic.dscp.consistency`` (the DSCP->priority map; these three where ``mlnx_qos`` was read) and ``nic.ecn.consistency``
(RoCE ECN enablement per priority, notification and reaction point, where the NIC exposes ``/sys/class/net/IF/ecn/``):
every node agrees, and with the site plan's ``fabric: {mtu, rate_gbps, pfc_priorities, trust, ecn_priorities,
dscp2prio}`` when given; without a plan value the majority is the reference (for a rate, the best node's) and the
others are named. A node that does not expose a setting is left out of that comparison; where no node exposes it
there is no check. QoS and ECN differences have remedy ``tune``.
Per node, host checks ``nic.numa.alignment``: each rail NIC shares a NUMA node with at least one GPU (GPUDirect RDMA
and NCCL lose bandwidth crossing the CPU interconnect). Pure functions, standard library only.
"""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._net_facts import clean_nic
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._rdma import _clean_ib
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._readings import items, mapping, reading, text
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._util import fmt


def _ranges(values):
    """``[24, 25, 26, 30]`` -> ``"24-26,30"``."""
    parts = []
    for value in sorted(set(values)):
        if parts and parts[-1][1] == value - 1:
            parts[-1][1] = value
        else:
            parts.append([value, value])
    return ",".join(str(low) if low == high else "%d-%d" % (low, high) for low, high in parts)


def dscp_map_text(raw):
    """A DSCP->priority map (``{prio: [dscp, ...]}``) as ``"p0:0-7 p1:8-15 ..."``; None when empty or unreadable."""
    parts = []
    for prio, values in sorted(mapping(raw).items(), key=lambda item: str(item[0])):
        number = reading(prio if not isinstance(prio, str) else (int(prio) if prio.isascii() and prio.isdigit() else None),
                         0, 7)
        dscps = [int(value) for value in items(values) if reading(value, 0, 63) is not None]
        if number is None or not dscps:
            continue
        parts.append((int(number), _ranges(dscps)))
    return " ".join("p%d:%s" % part for part in sorted(parts)) or None


def _prios(value):
    if not isinstance(value, list):
        return None
    return sorted(set(int(item) for item in value if reading(item, 0, 7) is not None))


def ecn_text(np_prios, rp_prios):
    """ECN enablement as ``"np [3] rp [3]"``; None when neither point was read."""
    if np_prios is None and rp_prios is None:
        return None
    return "np %s rp %s" % (np_prios if np_prios is not None else "?", rp_prios if rp_prios is not None else "?")


def _clean_qos(raw):
    if not isinstance(raw, dict):
        return None
    pfc = raw.get("pfc_enabled")
    return {"pfc_enabled": [item for item in items(pfc) if reading(item, 0, 7) is not None] if isinstance(pfc, list)
            else None, "trust": text(raw.get("trust")), "dscp2prio": dscp_map_text(raw.get("dscp2prio"))}


def _clean_ecn(raw):
    if not isinstance(raw, dict):
        return None
    return ecn_text(_prios(raw.get("np")), _prios(raw.get("rp")))


def _clean_host(facts):
    """One node's ``net`` facts with the types these rules read (wrong types and odd numbers dropped: None)."""
    interfaces = {}
    for name, raw in mapping(facts.get("interfaces")).items():
        nic = clean_nic(raw)
        nic["numa_node"] = reading(mapping(raw).get("numa_node"), 0, 4096)
        nic["qos"] = _clean_qos(mapping(raw).get("qos"))
        nic["ecn"] = _clean_ecn(mapping(raw).get("ecn"))
        interfaces[name] = nic
    gpu_numa = dict((str(key), reading(value, 0, 4096)) for key, value in mapping(facts.get("gpu_numa")).items())
    return {"interfaces": interfaces, "ib": _clean_ib(facts.get("ib")) or {}, "gpu_numa": gpu_numa}


def _site(plan):
    return mapping(mapping(plan).get("fabric"))


def _eth_rails(hosts, site):
    if site.get("rails"):
        return [str(rail) for rail in items(site["rails"])]
    counts = {}
    for facts in hosts.values():
        for name in (facts.get("interfaces") or {}):
            counts[name] = counts.get(name, 0) + 1
    return sorted(name for name, count in counts.items() if count > 1 or len(hosts) == 1)


def _ib_rails(hosts):
    counts = {}
    for facts in hosts.values():
        for name in ((facts.get("ib") or {}).get("devices") or {}):
            counts[name] = counts.get(name, 0) + 1
    return sorted(name for name, count in counts.items() if count > 1 or len(hosts) == 1)


def _majority(values):
    tally = {}
    for value in values.values():
        key = repr(value)
        tally.setdefault(key, [0, value])[0] += 1
    best = sorted(tally.values(), key=lambda item: (-item[0], repr(item[1])))
    return best[0][1] if best else None


def _consistency(check_id, rail, values, want, what, remedy, low_is_bad=False):
    """One cluster check: ``values`` (host -> value, None dropped) against ``want`` or the majority."""
    values = dict((host, value) for host, value in values.items() if value is not None)
    if not values:
        return None
    if want is not None:
        reference, source = want, "the site plan"
    elif low_is_bad:
        # a rate: the best the rail reaches is the reference (a 2-node tie must not blame the healthy node)
        reference, source = max(values.values()), "the best node"
    else:
        reference, source = _majority(values), "most nodes"
    if low_is_bad:
        off = dict((host, value) for host, value in values.items() if value < reference)
    else:
        off = dict((host, value) for host, value in values.items() if value != reference)
    evidence = ", ".join("%s=%s" % (host, fmt(value) if not isinstance(value, list) else value) for host, value in sorted(values.items()))
    if off:
        return make_check(check_id, "cluster", "fail", component="rail %s" % rail, observed=len(off),
                          expected="%s (%s) on every node" % (reference, source), remedy=remedy, evidence=evidence,
                          message="%s on rail %s differs from %s (%s) on %d node(s): %s" % (
                              what, rail, source, reference, len(off),
                              ", ".join("%s has %s" % (host, value) for host, value in sorted(off.items()))))
    return make_check(check_id, "cluster", "pass", component="rail %s" % rail, observed=reference,
                      expected="%s (%s)" % (reference, source), evidence=evidence,
                      message="%s on rail %s is %s on all %d node(s)" % (what, rail, reference, len(values)))


def _first_port(device):
    ports = mapping(mapping(device).get("ports"))
    for number in sorted(ports, key=lambda item: (0, int(item)) if item.isascii() and item.isdigit() else (1, 0)):
        return ports[number]
    return {}


def numa_checks(host, facts, rails):
    """``nic.numa.alignment`` per rail NIC of one node."""
    gpu_nodes = set(node for node in ((facts or {}).get("gpu_numa") or {}).values() if node is not None)
    interfaces = (facts or {}).get("interfaces") or {}
    if not gpu_nodes:
        return [make_check("nic.numa.alignment", host, "skip", component="GPU-NIC NUMA",
                           message="No GPU NUMA node known on this node (no NVIDIA GPU in sysfs, or no NUMA)")]
    checks = []
    for rail in rails:
        nic = interfaces.get(rail)
        if not nic or nic.get("numa_node") is None:
            continue
        node = nic["numa_node"]
        evidence = "NIC %s on NUMA %s; GPUs on NUMA %s" % (rail, node, ", ".join(str(item) for item in sorted(gpu_nodes)))
        if node in gpu_nodes:
            checks.append(make_check("nic.numa.alignment", host, "pass", component=rail, observed=node,
                                     expected="a GPU's NUMA node", message="%s shares NUMA node %s with a GPU" % (rail, node),
                                     evidence=evidence))
        else:
            checks.append(make_check("nic.numa.alignment", host, "warn", component=rail, observed=node,
                                     expected="one of %s" % sorted(gpu_nodes), remedy="tune", evidence=evidence,
                                     message="%s sits on NUMA node %s where no GPU is: GPUDirect RDMA traffic crosses the "
                                     "CPU interconnect (move the card, or pin NCCL to the local NIC)" % (rail, node)))
    if not checks:
        checks.append(make_check("nic.numa.alignment", host, "skip", component="GPU-NIC NUMA",
                                 message="No rail NIC with a known NUMA node on this node"))
    return checks


def judge_fabric_consistency(hosts_net_facts, plan=None):
    """``(cluster_checks, host_checks)`` for the ``net`` facts of every node (``{host: net facts}``)."""
    hosts = dict((host, _clean_host(facts)) for host, facts in mapping(hosts_net_facts).items()
                 if isinstance(facts, dict) and facts)
    site = _site(plan)
    cluster = []
    eth_rails = _eth_rails(hosts, site)
    for rail in eth_rails:
        mtus = dict((host, ((facts.get("interfaces") or {}).get(rail) or {}).get("mtu")) for host, facts in hosts.items())
        check = _consistency("nic.mtu.consistency", rail, mtus, site.get("mtu"), "MTU", "tune")
        if check:
            cluster.append(check)
        qos = dict((host, ((facts.get("interfaces") or {}).get(rail) or {}).get("qos")) for host, facts in hosts.items())
        pfc = dict((host, value.get("pfc_enabled") if value else None) for host, value in qos.items())
        check = _consistency("nic.pfc.consistency", rail, pfc, site.get("pfc_priorities"), "PFC priorities", "tune")
        if check:
            cluster.append(check)
        trust = dict((host, value.get("trust") if value else None) for host, value in qos.items())
        check = _consistency("nic.trust.consistency", rail, trust, site.get("trust"), "QoS trust mode", "tune")
        if check:
            cluster.append(check)
        dscp = dict((host, value.get("dscp2prio") if value else None) for host, value in qos.items())
        want = dscp_map_text(site.get("dscp2prio")) if site.get("dscp2prio") is not None else None
        check = _consistency("nic.dscp.consistency", rail, dscp, want, "DSCP->priority map", "tune")
        if check:
            cluster.append(check)
        ecn = dict((host, ((facts.get("interfaces") or {}).get(rail) or {}).get("ecn")) for host, facts in hosts.items())
        want = _prios(site.get("ecn_priorities"))
        check = _consistency("nic.ecn.consistency", rail, ecn, ecn_text(want, want) if want is not None else None,
                             "RoCE ECN enablement", "tune")
        if check:
            cluster.append(check)
    for rail in _ib_rails(hosts):
        rates = dict((host, _first_port(((facts.get("ib") or {}).get("devices") or {}).get(rail)).get("rate_gbps"))
                     for host, facts in hosts.items())
        check = _consistency("rdma.rate.consistency", rail, rates, site.get("rate_gbps"), "Link rate (Gb/s)",
                             "check_cable", low_is_bad=True)
        if check:
            cluster.append(check)
    host_checks = dict((host, numa_checks(host, facts, eth_rails)) for host, facts in sorted(hosts.items()))
    return cluster, host_checks
