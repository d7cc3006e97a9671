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

The subnet's view (``ibnetdiscover``, full or ``-p``: ``_net/ibnetdiscover.py``, taken once per fabric from a node
that sees the subnet) gives the same facts with each link's width and speed, and the switch-to-switch links. With
it, per planned IB link also ``cabling.ib.<hca>_<port>.rate``: the link's width and speed against the plan's
(``rate: 4xHDR`` on the link, or ``ib: {rate: 4xHDR}`` for the plan); fail (remedy ``check_cable``) when narrower
or slower. Without a planned rate the fabric's most common HCA-link rate is the reference and a link below it is
``warn``. ``judge_ib_switch_links`` gives the cluster checks of the switch-to-switch links (a spine's view of its
leaves): per planned ``ib_switch_links`` entry (``{switch, switch_port, peer, peer_port}``) ``cabling.ib.isl.neighbor``
(present as planned / missing / miswired, remedy ``check_cable``), and ``cabling.ib.isl.rate``: every switch link the
view shows below the planned (or most common) rate. A planned link absent from a view that was cut short
(``partial``) is ``warn`` (remedy ``investigate``), not a missing cable.
"""

from __future__ import annotations

import re

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._readings import items, mapping, text
from ansible_collections.zhisuan.ops.plugins.module_utils._net.ibnetdiscover import SPEED_ORDER, rate_of, rate_text

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


def _state(observed):
    """The state part of the evidence: iblinkinfo's logical state, or the rate ibnetdiscover prints."""
    if observed.get("state"):
        return observed.get("state")
    return rate_text(*_rate(observed)) or observed.get("phys_state")


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


def _tool(fabric):
    return text(mapping(fabric).get("tool")) or "iblinkinfo"


def _rate(item):
    """``(lanes, speed)`` of a link record or a plan rate text (``4xHDR``, ``4x HDR``, ``HDR``)."""
    if isinstance(item, dict):
        return rate_of(item.get("width"), item.get("speed"))
    value = str(item or "").strip()
    if "x" in value.lower():
        lanes, dummy, speed = value.lower().partition("x")
        return rate_of(lanes, speed.strip().upper())
    return None, rate_of(None, value)[1]


def _below(observed, expected):
    """The ways an observed rate is below the expected one: ``["width", "speed"]`` parts, empty when not below."""
    worse = []
    if expected[0] is not None and observed[0] is not None and observed[0] < expected[0]:
        worse.append("width")
    if expected[1] is not None and observed[1] is not None and \
            SPEED_ORDER.index(observed[1]) < SPEED_ORDER.index(expected[1]):
        worse.append("speed")
    return worse


def _common_rate(records):
    counts = {}
    for record in records:
        rate = _rate(record)
        if rate[0] is not None or rate[1] is not None:
            counts[rate] = counts.get(rate, 0) + 1
    if not counts:
        return None
    return sorted(counts.items(), key=lambda item: (-item[1], str(item[0])))[0][0]


def _planned_rate(plan, link=None):
    value = mapping(link).get("rate") if link is not None else None
    if value is None:
        value = mapping(mapping(plan).get("ib")).get("rate")
    return _rate(value) if value is not None else None


def _rate_check(plan, link, observed, common, tool, node, hca, port):
    """``cabling.ib.<hca>_<port>.rate`` for one live planned link, or None when no rate can be compared."""
    seen = _rate(observed)
    if seen == (None, None):
        return None
    planned = _planned_rate(plan, link)
    expected = planned if planned is not None else common
    if expected is None:
        return None
    component = "%s/%s" % (hca, port)
    check_id = "cabling.ib.%s_%s.rate" % (_port_id(hca), port)
    worse = _below(seen, expected)
    evidence = "%s: %s %s" % (tool, _where(observed), rate_text(*seen))
    if not worse:
        return make_check(check_id, node, "pass", component=component, observed=rate_text(*seen),
                          expected=">= %s" % rate_text(*expected), evidence=evidence,
                          message="%s %s links at %s" % (node, component, rate_text(*seen)))
    basis = "the plan's" if planned is not None else "the fabric's most common"
    return make_check(check_id, node, "fail" if planned is not None else "warn", component=component,
                      observed=rate_text(*seen), expected=">= %s" % rate_text(*expected), remedy="check_cable",
                      evidence=evidence,
                      message="%s %s links at %s, below %s %s (%s degraded): a damaged or wrong cable, a dirty "
                      "connector or a port at a lower speed" % (node, component, rate_text(*seen), basis,
                                                                rate_text(*expected), " and ".join(worse)))


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
                expected=_where(link), message="The fabric's cabling view (%s) could not be read: %s" % (
                    _tool(fabric), reason),
                remedy="investigate", evidence=reason))
        return result
    seen = _fabric_links(fabric)
    tool = _tool(fabric)
    partial = bool(fabric.get("partial"))
    common = _common_rate(seen.values())
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
                               evidence="%s: %s (%s)" % (tool, _where(observed), _state(observed)))
        elif status == "unconfirmed":
            check = make_check(check_id, node, "warn", component=component, observed=_where(observed),
                               expected=_where(link), remedy="investigate",
                               evidence="%s: %s (%s), no switch GUID in the view" % (
                                   tool, _where(observed), _state(observed)),
                               message="%s %s is on port %s of the switch the fabric names %r, but the view gives no "
                               "GUID for it (no Switch section), so it cannot confirm it is the plan's %s: name the "
                               "switch in the plan by that description or take a view that includes the switch" % (
                                   node, component, observed.get("switch_port"), observed.get("switch"),
                                   link.get("switch")))
        elif status == "missing" and partial and not observed:
            check = make_check(check_id, node, "warn", component=component, observed="not in the view",
                               expected=_where(link), remedy="investigate",
                               evidence="%s: the output was cut short, no line for this HCA port" % tool,
                               message="The %s view was cut short and holds no link from %s %s; the plan says %s: "
                               "take the view again before checking the cable" % (tool, node, component, _where(link)))
        elif status == "missing":
            seen_as = ("%s, %s/%s" % (_where(observed), observed.get("state"), observed.get("phys_state"))
                       if observed else "no link from this HCA port in the fabric")
            check = make_check(check_id, node, "fail", component=component, observed="no live link",
                               expected=_where(link), remedy="check_cable", evidence="%s: %s" % (tool, seen_as),
                               message="The fabric shows no live link from %s %s; the plan says %s: cable missing, "
                               "unplugged, port down or the node is off the fabric" % (node, component, _where(link)))
        else:
            check = make_check(check_id, node, "fail", component=component, observed=_where(observed),
                               expected=_where(link), remedy="check_cable",
                               evidence="%s: %s (%s)" % (tool, _where(observed), _state(observed)),
                               message="%s %s is miswired: the fabric sees it on %s, the plan says %s" % (
                                   node, component, _where(observed), _where(link)))
        result.setdefault(node, []).append(check)
        if status == "ok":
            rate = _rate_check(plan, link, observed, common, tool, node, hca, port)
            if rate is not None:
                result[node].append(rate)
    planned_nodes = set(node for node, dummy, dummy2 in wanted)
    for (node, hca, port), observed in sorted(seen.items(), key=lambda item: (item[0][0], item[0][1], item[0][2])):
        if node in planned_nodes and (node, hca, port) not in wanted:
            result.setdefault(node, []).append(make_check(
                "cabling.ib.%s_%s.neighbor" % (_port_id(hca), port), node, "warn", component="%s/%s" % (hca, port),
                observed=_where(observed), expected="not in the plan", remedy="investigate",
                evidence="%s: %s (%s)" % (tool, _where(observed), _state(observed)),
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


def _switch_named(plan, want, name, guid):
    """Is the switch the view names ``name`` (GUID ``guid``) the plan's switch ``want``?"""
    return _switch_matches(plan, {"switch": want}, {"switch": name, "switch_guid": guid})


def _isl_ends(record):
    return ((record.get("switch"), record.get("switch_guid"), _number(record.get("port"))),
            (record.get("peer"), record.get("peer_guid"), _number(record.get("peer_port"))))


def _isl_where(record):
    return "%s port %s <-> %s port %s" % (record.get("switch"), record.get("port"), record.get("peer"),
                                          record.get("peer_port"))


def _find_isl(plan, planned, observed):
    """``(status, record)`` of one planned switch link: ok / miswired / missing."""
    want_a, port_a = str(planned.get("switch")), _number(planned.get("switch_port"))
    want_b, port_b = str(planned.get("peer")), _number(planned.get("peer_port"))
    for record in observed:
        for (name, guid, port), (peer, peer_guid, peer_port) in (_isl_ends(record), _isl_ends(record)[::-1]):
            if _switch_named(plan, want_a, name, guid) and port == port_a:
                if _switch_named(plan, want_b, peer, peer_guid) and peer_port == port_b:
                    return "ok", record
                return "miswired", {"switch": name, "port": port, "peer": peer, "peer_port": peer_port}
    return "missing", None


def judge_ib_switch_links(fabric, plan):
    """Cluster checks of the switch-to-switch links of the subnet view (``switch_links`` of ``ibnetdiscover``
    facts): the plan's ``ib_switch_links`` present as planned, and every switch link at the planned (or the most
    common) rate. ``[]`` without a view that has switch links or planned ones."""
    if not isinstance(fabric, dict) or fabric.get("error") is not None or "switch_links" not in fabric:
        return []
    observed = [record for record in items(fabric.get("switch_links")) if isinstance(record, dict)]
    planned = [link for link in items(mapping(plan).get("ib_switch_links")) if isinstance(link, dict)]
    tool = _tool(fabric)
    checks = []
    for link in planned:
        status, record = _find_isl(plan, link, observed)
        component = "%s port %s" % (link.get("switch"), link.get("switch_port"))
        expected = "%s port %s" % (link.get("peer"), link.get("peer_port"))
        if status == "ok":
            checks.append(make_check("cabling.ib.isl.neighbor", "cluster", "pass", component=component,
                                     observed=expected, expected=expected, evidence="%s: %s" % (tool, _isl_where(record)),
                                     message="%s is cabled to %s as planned" % (component, expected)))
        elif status == "miswired":
            seen = "%s port %s" % (record["peer"], record["peer_port"])
            checks.append(make_check("cabling.ib.isl.neighbor", "cluster", "fail", component=component, observed=seen,
                                     expected=expected, remedy="check_cable", evidence="%s: %s" % (tool, _isl_where(record)),
                                     message="The switch link from %s is miswired: the subnet sees it reach %s, the "
                                     "plan says %s" % (component, seen, expected)))
        elif fabric.get("partial"):
            checks.append(make_check("cabling.ib.isl.neighbor", "cluster", "warn", component=component,
                                     observed="not in the view", expected=expected, remedy="investigate",
                                     evidence="%s: the output was cut short" % tool,
                                     message="The %s view was cut short and holds no link from %s; the plan says %s"
                                     % (tool, component, expected)))
        else:
            checks.append(make_check("cabling.ib.isl.neighbor", "cluster", "fail", component=component,
                                     observed="no live link", expected=expected, remedy="check_cable",
                                     evidence="%s: no link from %s in the subnet view" % (tool, component),
                                     message="The subnet shows no live link from %s; the plan says %s: cable missing, "
                                     "unplugged or the port is down" % (component, expected)))
    if observed:
        planned_rate = _planned_rate(plan)
        expected = planned_rate if planned_rate is not None else _common_rate(observed)
        if expected is not None:
            slow = [record for record in observed if _below(_rate(record), expected)]
            if not slow:
                checks.append(make_check("cabling.ib.isl.rate", "cluster", "pass", component="switch links",
                                         observed="%d link(s) at >= %s" % (len(observed), rate_text(*expected)),
                                         expected=">= %s" % rate_text(*expected),
                                         evidence="%s: %d switch link(s)" % (tool, len(observed)),
                                         message="All %d switch link(s) of the subnet link at %s or better" % (
                                             len(observed), rate_text(*expected))))
            else:
                basis = "the plan's" if planned_rate is not None else "the fabric's most common"
                shown = ["%s at %s" % (_isl_where(record), rate_text(*_rate(record))) for record in slow]
                checks.append(make_check(
                    "cabling.ib.isl.rate", "cluster", "fail" if planned_rate is not None else "warn",
                    component="switch links", observed="%d of %d below" % (len(slow), len(observed)),
                    expected=">= %s" % rate_text(*expected), remedy="check_cable",
                    evidence="%s: %s" % (tool, "; ".join(shown[:20])),
                    message="%d of %d switch link(s) link below %s %s: %s" % (
                        len(slow), len(observed), basis, rate_text(*expected), "; ".join(shown[:5])
                        + ("; ..." if len(shown) > 5 else ""))))
    return checks
