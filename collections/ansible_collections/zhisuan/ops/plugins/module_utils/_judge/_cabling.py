# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Cabling judgement (family ``cabling``): LLDP neighbours vs the cabling plan.

The plan (``zhisuan_cabling_plan``, a YAML file)::

    links: [{node: node01, port: eth0, switch: leaf01, switch_port: swp1}, ...]
    switches: {leaf01: {tier: leaf, uplink: spine01}}

Per planned link of the node, ``cabling.<port>.neighbor``: pass when LLDP sees the planned switch and port, fail
``missing`` (no neighbour: cable out, port down) or ``miswired`` (another switch or port), both with remedy
``check_cable``; a neighbour on a port the plan does not list is ``unexpected`` (warn). ``cabling_map`` gives the
cluster view (``fabric.cabling.links`` in results.json). InfiniBand links of the plan (``port: mlx5_0/1`` or
``fabric: ib``) are left to ``_ib_cabling`` (the fabric's own view, not LLDP). Pure functions, standard library only.
"""

from __future__ import annotations

import re

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._ib_cabling import is_ib_link
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._readings import items, mapping


def _port_id(port):
    """A port name as an id part (dots would split the id)."""
    return re.sub(r"[^A-Za-z0-9_-]+", "_", str(port))


def _neighbors(facts):
    """The node's LLDP neighbours as ``{port: {switch, switch_port}}`` (None: not read); odd entries dropped."""
    neighbors = facts.get("lldp")
    if not isinstance(neighbors, dict):
        return None
    return dict((str(port), {"switch": item.get("switch"), "switch_port": item.get("switch_port")})
                for port, item in neighbors.items() if isinstance(item, dict))


def plan_links(plan, node=None):
    links = [link for link in items(mapping(plan).get("links")) if isinstance(link, dict) and not is_ib_link(link)]
    if node is not None:
        links = [link for link in links if str(link.get("node")) == str(node)]
    return links


def _compare(link, neighbor):
    """``(status, observed)``: ok / missing / miswired."""
    if not neighbor:
        return "missing", None
    observed = {"switch": neighbor.get("switch"), "switch_port": neighbor.get("switch_port")}
    if str(observed["switch"]) == str(link.get("switch")) and str(observed["switch_port"]) == str(link.get("switch_port")):
        return "ok", observed
    return "miswired", observed


def _where(item):
    return "%s %s" % (item.get("switch"), item.get("switch_port"))


def judge_cabling(host, facts, plan):
    """Check records of one node: its planned links against its LLDP neighbours (``net.lldp``)."""
    facts = mapping(facts)
    if not isinstance(plan, dict) or not plan.get("links"):
        return [make_check("cabling.plan.loaded", host, "skip", component="cabling plan",
                           message="No cabling plan (zhisuan_cabling_plan), so the cabling was not checked")]
    links = plan_links(plan, host)
    if not links:
        return [make_check("cabling.plan.node", host, "skip", component="cabling plan",
                           message="The cabling plan lists no LLDP-checked (Ethernet) link of %s" % host)]
    neighbors = _neighbors(facts)
    error = facts.get("lldp_error")
    if error is not None and not isinstance(error, str):
        error = "unreadable lldp_error: %r" % (error,)
    if neighbors is None and facts.get("lldp") is not None and not error:
        error = "the LLDP neighbours in the facts are not readable"
    if neighbors is None or error:
        reason = error or "LLDP was not collected (no lldpctl_path)"
        return [make_check("cabling.%s.neighbor" % _port_id(link.get("port")), host, "error", component=str(link.get("port")),
                           expected=_where(link), message="The LLDP neighbours could not be read: %s" % reason,
                           remedy="investigate", evidence=reason) for link in links]
    checks = []
    planned = set()
    for link in links:
        port = str(link.get("port"))
        planned.add(port)
        status, observed = _compare(link, neighbors.get(port))
        check_id = "cabling.%s.neighbor" % _port_id(port)
        if status == "ok":
            checks.append(make_check(check_id, host, "pass", component=port, observed=_where(observed), expected=_where(link),
                                     message="%s is cabled to %s as planned" % (port, _where(link)),
                                     evidence="LLDP: %s" % _where(observed)))
        elif status == "missing":
            checks.append(make_check(check_id, host, "fail", component=port, observed="no neighbour", expected=_where(link),
                                     message="%s sees no LLDP neighbour; the plan says %s: cable missing, unplugged or the "
                                     "port is down" % (port, _where(link)), remedy="check_cable", evidence="LLDP: none"))
        else:
            checks.append(make_check(check_id, host, "fail", component=port, observed=_where(observed), expected=_where(link),
                                     message="%s is miswired: it reaches %s, the plan says %s" % (port, _where(observed), _where(link)),
                                     remedy="check_cable", evidence="LLDP: %s" % _where(observed)))
    for port in sorted(set(neighbors) - planned):
        observed = neighbors[port]
        checks.append(make_check("cabling.%s.neighbor" % _port_id(port), host, "warn", component=port,
                                 observed=_where(observed), expected="not in the plan",
                                 message="%s reaches %s but the cabling plan lists no link on this port" % (port, _where(observed)),
                                 remedy="investigate", evidence="LLDP: %s" % _where(observed)))
    return checks


def cabling_map(hosts_net_facts, plan):
    """``{links: [{node, port, switch, switch_port, status: ok|missing|miswired|unexpected|unknown, observed}]}``.

    ``unknown``: the node's LLDP neighbours were not read (unreachable, lldpctl failed).
    """
    hosts_net_facts = dict((str(node), mapping(facts)) for node, facts in mapping(hosts_net_facts).items())
    result = []
    planned = set()
    for link in plan_links(plan):
        node, port = str(link.get("node")), str(link.get("port"))
        planned.add((node, port))
        facts = hosts_net_facts.get(node) or {}
        neighbors = _neighbors(facts)
        if neighbors is None or facts.get("lldp_error"):
            status, observed = "unknown", None
        else:
            status, observed = _compare(link, neighbors.get(port))
        result.append({"node": node, "port": port, "switch": link.get("switch"), "switch_port": link.get("switch_port"),
                       "status": status, "observed": observed})
    for node in sorted(hosts_net_facts):
        for port, neighbor in sorted((_neighbors(hosts_net_facts[node]) or {}).items()):
            if (node, port) not in planned:
                result.append({"node": node, "port": port, "switch": None, "switch_port": None, "status": "unexpected",
                               "observed": {"switch": neighbor.get("switch"), "switch_port": neighbor.get("switch_port")}})
    return {"links": result}
