# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""InfiniBand cabling from the fabric's own view (family ``cabling``): ``iblinkinfo`` links vs the cabling plan.

LLDP says nothing on an InfiniBand fabric; the subnet's own discovery does. A plan link is an InfiniBand link when
it says ``fabric: ib`` or its ``port`` names an HCA port (``mlx5_0/1``; ``mlx5_0`` alone with ``fabric: ib`` is port
1)::

    links: [{node: n01, port: mlx5_0/1, switch: leaf01, switch_port: 18}]
    switches: {leaf01: {guid: "0x506b4b0300820910"}}

The plan's switch matches the switch the fabric names when it is that switch's NodeDescription, its GUID, or the
plan's ``switches.<name>.guid``. A CA is matched by its NodeDescription ``"<node> <hca>"``. Per planned IB link of a
node, ``cabling.ib.<hca>_<port>.neighbor`` (host: the node; the HCA name lower-cased with ``-`` as ``_``: ``mlx5_0_1``,
``hca_1_1``): pass when the fabric shows the HCA port up on the planned
switch and port; fail ``missing`` (the fabric has no live link from that HCA port: cable out, port down, node off
the fabric) or ``miswired`` (another switch or port), both remedy ``check_cable``; a planned node's HCA port the
fabric shows but the plan does not list is ``warn`` (remedy ``investigate``). A view that names the switch only by
the NodeDescription a CA line prints (no ``Switch:`` section, so no GUID: the LegoOS README's real excerpt is such a
view) cannot tell a plan switch of another name or a GUID from another switch: on the planned port number that is
``warn`` ``unconfirmed`` (remedy ``investigate``, map status ``unknown``), never a confirmed pass nor a miswire; on
another port it is ``miswired``. The view is global, so it is taken once
(``net_info`` with ``iblinkinfo_path`` on one node, or an ``iblinkinfo`` output file on the controller). Without a
view no check is made; a view that could not be read is an ``error`` per planned IB link. Pure functions, standard
library only.
"""

from __future__ import annotations

import re

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._readings import items, mapping, text

_HCA_PORT_RE = re.compile(r"^([^/\s]+)/([0-9]{1,3})$")


def _port_id(value):
    """An HCA name as an id part: lower case, anything but [a-z0-9_] as ``_`` (``HCA-1`` -> ``hca_1``)."""
    return re.sub(r"[^a-z0-9_]+", "_", str(value).lower())


def ib_port(link):
    """``(hca, port)`` of a plan link when it is an InfiniBand link, else None."""
    port = str(mapping(link).get("port"))
    match = _HCA_PORT_RE.match(port)
    if match:
        return match.group(1), int(match.group(2))
    if str(mapping(link).get("fabric") or "").lower() == "ib":
        return port, 1
    return None


def is_ib_link(link):
    return ib_port(link) is not None


def _number(value):
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None


def _fabric_links(fabric):
    """``{(host, hca, port): record}`` from ``ib_fabric`` facts (odd entries dropped)."""
    result = {}
    for link in items(mapping(fabric).get("links")):
        if not isinstance(link, dict):
            continue
        host, hca, port = text(link.get("host")), text(link.get("hca")), _number(link.get("port"))
        if host is None or hca is None or port is None:
            continue
        result[(host, hca, port)] = link
    return result


def _switch_matches(plan, planned, observed):
    want = str(planned.get("switch"))
    guid = text(mapping(mapping(mapping(plan).get("switches")).get(want)).get("guid"))
    names = set([text(observed.get("switch")), text(observed.get("switch_guid"))]) - set([None])
    lowered = set(name.lower() for name in names)
    return want in names or want.lower() in lowered or (guid is not None and guid.lower() in lowered)


def _where(item, switch_key="switch"):
    return "%s port %s" % (item.get(switch_key), item.get("switch_port"))


def compare(plan, planned, observed):
    """``ok`` / ``missing`` / ``miswired`` / ``unconfirmed`` for one planned IB link and the fabric's record of its HCA
    port (``unconfirmed``: the planned port number on a switch the view names only by a description that is not the
    plan's, with no GUID to compare)."""
    if not observed or not observed.get("up"):
        return "missing"
    same_port = _number(observed.get("switch_port")) == _number(planned.get("switch_port"))
    if not same_port:
        return "miswired"
    if _switch_matches(plan, planned, observed):
        return "ok"
    if text(observed.get("switch_guid")) is None:
        return "unconfirmed"
    return "miswired"


def judge_ib_cabling(fabric, plan):
    """``{node: [checks]}`` for the plan's InfiniBand links against one fabric view (``ib_fabric`` facts)."""
    if fabric is None or not isinstance(plan, dict):
        return {}
    planned = [link for link in items(plan.get("links")) if isinstance(link, dict) and is_ib_link(link)]
    if not planned:
        return {}
    result = {}
    error = mapping(fabric).get("error")
    if error is not None or not isinstance(fabric, dict):
        reason = str(error) if error is not None else "the fabric view in the facts is not readable"
        for link in planned:
            hca, port = ib_port(link)
            node = str(link.get("node"))
            result.setdefault(node, []).append(make_check(
                "cabling.ib.%s_%s.neighbor" % (_port_id(hca), port), node, "error", component="%s/%s" % (hca, port),
                expected=_where(link), message="The fabric's cabling view (iblinkinfo) could not be read: %s" % reason,
                remedy="investigate", evidence=reason))
        return result
    seen = _fabric_links(fabric)
    wanted = set()
    for link in planned:
        hca, port = ib_port(link)
        node = str(link.get("node"))
        wanted.add((node, hca, port))
        observed = seen.get((node, hca, port))
        status = compare(plan, link, observed)
        check_id = "cabling.ib.%s_%s.neighbor" % (_port_id(hca), port)
        component = "%s/%s" % (hca, port)
        if status == "ok":
            check = make_check(check_id, node, "pass", component=component, observed=_where(observed),
                               expected=_where(link),
                               message="%s %s is cabled to %s as planned" % (node, component, _where(link)),
                               evidence="iblinkinfo: %s (%s)" % (_where(observed), observed.get("state")))
        elif status == "unconfirmed":
            check = make_check(check_id, node, "warn", component=component, observed=_where(observed),
                               expected=_where(link), remedy="investigate",
                               evidence="iblinkinfo: %s (%s), no switch GUID in the view" % (
                                   _where(observed), observed.get("state")),
                               message="%s %s is on port %s of the switch the fabric names %r, but the view gives no "
                               "GUID for it (no Switch section), so it cannot confirm it is the plan's %s: name the "
                               "switch in the plan by that description or take a view that includes the switch" % (
                                   node, component, observed.get("switch_port"), observed.get("switch"),
                                   link.get("switch")))
        elif status == "missing":
            seen_as = ("%s, %s/%s" % (_where(observed), observed.get("state"), observed.get("phys_state"))
                       if observed else "no link from this HCA port in the fabric")
            check = make_check(check_id, node, "fail", component=component, observed="no live link",
                               expected=_where(link), remedy="check_cable", evidence="iblinkinfo: %s" % seen_as,
                               message="The fabric shows no live link from %s %s; the plan says %s: cable missing, "
                               "unplugged, port down or the node is off the fabric" % (node, component, _where(link)))
        else:
            check = make_check(check_id, node, "fail", component=component, observed=_where(observed),
                               expected=_where(link), remedy="check_cable",
                               evidence="iblinkinfo: %s (%s)" % (_where(observed), observed.get("state")),
                               message="%s %s is miswired: the fabric sees it on %s, the plan says %s" % (
                                   node, component, _where(observed), _where(link)))
        result.setdefault(node, []).append(check)
    planned_nodes = set(node for node, dummy, dummy2 in wanted)
    for (node, hca, port), observed in sorted(seen.items(), key=lambda item: (item[0][0], item[0][1], item[0][2])):
        if node in planned_nodes and (node, hca, port) not in wanted:
            result.setdefault(node, []).append(make_check(
                "cabling.ib.%s_%s.neighbor" % (_port_id(hca), port), node, "warn", component="%s/%s" % (hca, port),
                observed=_where(observed), expected="not in the plan", remedy="investigate",
                evidence="iblinkinfo: %s (%s)" % (_where(observed), observed.get("state")),
                message="The fabric sees %s %s/%s on %s but the cabling plan lists no link on this HCA port" % (
                    node, hca, port, _where(observed))))
    return result


def ib_cabling_map(fabric, plan):
    """``[{node, port, switch, switch_port, status, observed}]`` for the plan's IB links (``unknown``: no view)."""
    rows = []
    seen = _fabric_links(fabric) if isinstance(fabric, dict) and fabric.get("error") is None else None
    for link in items(mapping(plan).get("links")):
        if not isinstance(link, dict) or not is_ib_link(link):
            continue
        hca, port = ib_port(link)
        observed = seen.get((str(link.get("node")), hca, port)) if seen is not None else None
        status = compare(plan, link, observed) if seen is not None else "unknown"
        status = "unknown" if status == "unconfirmed" else status
        rows.append({"node": str(link.get("node")), "port": "%s/%s" % (hca, port), "switch": link.get("switch"),
                     "switch_port": link.get("switch_port"), "status": status,
                     "observed": {"switch": observed.get("switch"), "switch_port": observed.get("switch_port")}
                     if observed else None})
    return rows
