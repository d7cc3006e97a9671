# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""``gpu.temperature.peers``: a GPU far hotter than the other GPUs of its node at the same load (issue 24 item 4).

The GPUs of one node share the chassis, the air or coolant inlet and (in a job) the load, so one GPU running much
hotter than the median of its peers points at its own cooling (a failed fan, a blocked heatsink, bad thermal
interface material, a coolant loop problem) before it reaches its slowdown limit (``gpu.temperature.gpu``).

Rule: with at least ``MIN_PEERS`` other GPUs reporting a temperature, a GPU whose temperature is at least
``temperature_peer_delta_c`` above the peers' median warns (``investigate``), unless it also draws clearly more power
than they do (more than ``LOAD_RATIO`` times the peers' median draw: a different load, not a cooling fault). Fewer
peers, or no temperature: ``skip``. Thresholds: ``temperature_peer_delta_c`` (default: the profile's
``temperature.peer_delta_c``, else 15 degC, a project default [U]).

Pure functions, standard library only.
"""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._util import evidence_of, fmt

CHECK_ID = "gpu.temperature.peers"
MIN_PEERS = 2
LOAD_RATIO = 1.2
DEFAULT_DELTA_C = 15
_DEG = u"\u00b0C"


def _median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2.0


def _number(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value


def readings(gpus):
    """``[(gpu temperature, power draw)]`` per GPU dict of the node (None where not reported)."""
    out = []
    for gpu in gpus:
        if not isinstance(gpu, dict):
            out.append((None, None))
            continue
        temp = gpu.get("temperature") if isinstance(gpu.get("temperature"), dict) else {}
        power = gpu.get("power") if isinstance(gpu.get("power"), dict) else {}
        out.append((_number(temp.get("gpu_c")), _number(power.get("draw_w"))))
    return out


def peer_check(ctx, position, node_readings, delta_c):
    """Add ``gpu.temperature.peers`` to ``ctx`` for the GPU at ``position`` of ``node_readings``."""
    mine, my_draw = node_readings[position]
    peers = [reading for index, reading in enumerate(node_readings) if index != position and reading[0] is not None]
    expected = u"< peers' median + %s %s" % (fmt(delta_c), _DEG)
    if mine is None or len(peers) < MIN_PEERS:
        ctx.add(CHECK_ID, "skip", expected=expected,
                message="%s: %s, so it cannot be compared with its peers" % (
                    ctx.label, "no temperature is reported" if mine is None else
                    "fewer than %d other GPUs of the node report a temperature" % MIN_PEERS),
                evidence=evidence_of(("temperature.gpu_c", mine), ("peers with a temperature", len(peers))))
        return
    median = _median([temp for temp, _draw in peers])
    draws = [draw for _temp, draw in peers if draw is not None]
    peer_draw = _median(draws) if draws else None
    above = mine - median
    evidence = evidence_of(("temperature.gpu_c", mine), ("peers' median temperature_c", median),
                           ("power.draw_w", my_draw), ("peers' median power.draw_w", peer_draw),
                           ("peers", len(peers)))
    observed = u"%s %s (peers' median %s %s)" % (fmt(mine), _DEG, fmt(median), _DEG)
    if above < delta_c:
        ctx.add(CHECK_ID, "pass", observed=observed, expected=expected,
                message=u"%s runs at %s %s, %s %s from its peers' median" % (
                    ctx.label, fmt(mine), _DEG, fmt(above), _DEG),
                evidence=evidence)
        return
    if my_draw is not None and peer_draw and my_draw > LOAD_RATIO * peer_draw:
        ctx.add(CHECK_ID, "pass", observed=observed, expected=expected,
                message=u"%s runs %s %s hotter than its peers' median but draws %s W against their %s W: a higher "
                        u"load, not a cooling fault" % (ctx.label, fmt(above), _DEG, fmt(my_draw), fmt(peer_draw)),
                evidence=evidence)
        return
    ctx.add(CHECK_ID, "warn", observed=observed, expected=expected,
            message=u"%s runs at %s %s, %s %s hotter than the median of the node's other GPUs at the same load: check "
                    u"its cooling (fan, heatsink and thermal paste, coolant loop, blocked airflow) before it throttles"
                    % (ctx.label, fmt(mine), _DEG, fmt(above), _DEG),
            remedy="investigate", evidence=evidence)
