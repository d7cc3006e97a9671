# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""``rdma.port.errors``: an InfiniBand / RoCE port's error counters as growth over the collection window (family
``rdma``; facts ``net.ib.counters_delta`` from ``_net/ib_counters.py``; issue 24 item 5).

Per port, the worst of:

* ``link_downed``, ``local_link_integrity_errors`` grew: ``fail`` ``check_cable`` (the link retrained or its
  physical errors crossed the port's integrity threshold); ``excessive_buffer_overrun_errors`` grew: ``fail``
  ``investigate`` (the receiver overran its buffers: flow-control credits, the link partner or its configuration);
* ``symbol_error`` grew by more than ``ib_symbol_error_per_hour_max`` (120, the figure the field uses for a BER of
  1e-12 at the port's rate [S] issue 24) scaled to the window and rounded up (1 in a 5 s window, 120 in an hour):
  ``fail`` ``check_cable`` (clean or replace the optic, reseat or replace the cable);
* any lower growth of ``symbol_error``, or any growth of ``link_error_recovery``: ``warn`` ``monitor``;
* else ``pass``. A counter whose growth is unknown (unreadable, reset between the readings) is named in the evidence.

Thresholds (``zhisuan_thresholds.net``): ``ib_symbol_error_per_hour_max`` (120), ``ib_link_error_recovery_max``
(0, growth allowed before the warning). Three warnings within an hour are not escalated yet (that needs the run
history). Pure functions, standard library only.
"""

from __future__ import annotations

import math

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._overrides import overridden
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._readings import mapping
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._util import fmt

CHECK_ID = "rdma.port.errors"
DEFAULT_THRESHOLDS = {"ib_symbol_error_per_hour_max": 120, "ib_link_error_recovery_max": 0}
# counter -> (remedy, what it means): any growth fails.
_FATAL = (
    ("link_downed", "check_cable", "the link went down and retrained"),
    ("local_link_integrity_errors", "check_cable", "physical errors crossed the port's link integrity threshold"),
    ("excessive_buffer_overrun_errors", "investigate",
     "the receiver overran its buffers (flow-control credits, the link partner or its configuration)"),
)
_SHOWN = ("link_downed", "local_link_integrity_errors", "excessive_buffer_overrun_errors", "symbol_error",
          "link_error_recovery", "port_rcv_errors", "port_xmit_discards")


def _growth(value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def _evidence(deltas, window):
    parts = ["window %s s" % fmt(window)]
    parts.extend("%s +%s" % (name, "?" if _growth(deltas.get(name)) is None else deltas.get(name)) for name in _SHOWN)
    return ", ".join(parts)


def _window(entry):
    window = entry.get("window_s")
    if isinstance(window, bool) or not isinstance(window, (int, float)) or window <= 0:
        return None
    return window


def port_error_checks(host, counters_delta, thresholds=None):
    """One ``rdma.port.errors`` check per port in ``counters_delta`` (``{dev: {port: {window_s, deltas}}}``); none
    when the counters were not read twice."""
    limits = overridden(DEFAULT_THRESHOLDS, thresholds, "threshold net.%s")
    checks = []
    for name, ports in sorted(mapping(counters_delta).items()):
        for number, entry in sorted(mapping(ports).items(), key=lambda item: str(item[0])):
            entry = mapping(entry)
            deltas = mapping(entry.get("deltas"))
            window = _window(entry)
            component = "%s port %s" % (name, number)
            if window is None:
                checks.append(make_check(CHECK_ID, host, "error", component=component, observed=None,
                                         expected="a counter window > 0 s",
                                         message="%s: the error counters' window is not readable" % component,
                                         remedy="investigate", evidence="window_s=%s" % entry.get("window_s")))
                continue
            checks.append(_judge_port(host, component, deltas, window, limits))
    return checks


def _judge_port(host, component, deltas, window, limits):
    evidence = _evidence(deltas, window)
    symbol_allowed = int(math.ceil(limits["ib_symbol_error_per_hour_max"] * window / 3600.0))
    expected = "no link_downed / integrity / overrun errors, symbol_error <= %d in %s s" % (symbol_allowed, fmt(window))
    grown = [(name, remedy, meaning, deltas[name]) for name, remedy, meaning in _FATAL if _growth(deltas.get(name))]
    if grown:
        remedy = "check_cable" if any(item[1] == "check_cable" for item in grown) else "investigate"
        observed = ", ".join("%s +%d" % (n, d) for n, _r, _m, d in grown)
        return make_check(
            CHECK_ID, host, "fail", component=component, observed=observed, expected=expected,
            message="%s: %s in %s s (%s): %s" % (
                component, ", ".join("%s grew by %d" % (n, d) for n, _r, _m, d in grown), fmt(window),
                "; ".join(m for _n, _r, m, _d in grown),
                "check the cable and optic at both ends (reseat, clean, replace) and the switch port"
                if remedy == "check_cable" else "check the link partner's flow control and buffer configuration"),
            remedy=remedy, evidence=evidence)
    symbols = _growth(deltas.get("symbol_error"))
    per_hour = symbols * 3600.0 / window if symbols is not None else None
    if symbols is not None and symbols > symbol_allowed:
        return make_check(
            CHECK_ID, host, "fail", component=component, observed="symbol_error +%d" % symbols, expected=expected,
            message="%s: %d symbol errors in %s s (%s an hour, more than %s): the link's bit error rate is too high; "
                    "clean or replace the optic, reseat or replace the cable" % (
                        component, symbols, fmt(window), fmt(round(per_hour, 1)),
                        fmt(limits["ib_symbol_error_per_hour_max"])),
            remedy="check_cable", evidence=evidence)
    recovery = _growth(deltas.get("link_error_recovery"))
    warnings = []
    if symbols:
        warnings.append("%d symbol errors (%s an hour, within %s)" % (
            symbols, fmt(round(per_hour, 1)), fmt(limits["ib_symbol_error_per_hour_max"])))
    if recovery is not None and recovery > limits["ib_link_error_recovery_max"]:
        warnings.append("%d link error recoveries" % recovery)
    if warnings:
        return make_check(
            CHECK_ID, host, "warn", component=component, observed="; ".join(warnings), expected=expected,
            message="%s: %s in %s s: the link corrects errors; watch it, and clean the optic if it grows"
                    % (component, " and ".join(warnings), fmt(window)),
            remedy="monitor", evidence=evidence)
    return make_check(CHECK_ID, host, "pass", component=component, observed="no error growth", expected=expected,
                      message="%s: no error counter grew in %s s" % (component, fmt(window)), evidence=evidence)
