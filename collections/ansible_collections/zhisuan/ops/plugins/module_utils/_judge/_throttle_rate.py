# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""``gpu.throttle.rate``: how much of the collect window thermal slowdown and power braking held one GPU's clocks
down (the clocks event reasons counters of two ``nvidia-smi -q -x`` reads, facts ``throttle_window``,
docs/gpu-facts.md). Only judged when they were collected (``gpu_info``'s ``throttle_window`` > 0).

The instantaneous reasons (``gpu.throttle.*``) see a slowdown only if it is active at the moment of the read; the
counters see every microsecond of it in the window. Causes judged: HW thermal slowdown (the GPU at its thermal limit:
cooling, airflow, fans), HW power brake (the board's power brake signal: PSU, power delivery), SW thermal slowdown
(the driver's own thermal cap). The worst share of the window decides:

* at or above ``throttle_rate_fail_pct`` (10 %) -> ``fail``, ``investigate``;
* at or above ``throttle_rate_warn_pct`` (1 %) -> ``warn``, ``investigate``;
* below -> ``pass``. SW power capping (the GPU at its power limit, normal under load) is only shown in the evidence.

A counter that went down in the window (the driver reloaded) is a ``skip``. Both limits are site thresholds
(``zhisuan_thresholds.gpu``); they are this project's choice, not a vendor's: a healthy GPU under load shows none of
these causes at all.
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._util import evidence_of, fmt

CHECK_ID = "gpu.throttle.rate"
DEFAULTS = {"throttle_rate_warn_pct": 1, "throttle_rate_fail_pct": 10}
JUDGED = (("hw_thermal_slowdown", "HW thermal slowdown", "cooling, airflow and fans"),
          ("hw_power_brake_slowdown", "HW power brake", "the PSUs and the power delivery"),
          ("sw_thermal_slowdown", "SW thermal slowdown", "cooling, airflow and fans"))


def _entry(gpu, entries):
    """The window entry of one GPU of the facts: by bus id, else by index (when unique)."""
    bus = gpu.get("pci_bus_id")
    same = [entry for entry in entries if bus and entry.get("pci_bus_id") == bus]
    if len(same) == 1:
        return same[0]
    indexed = [entry for entry in entries if entry.get("index") == gpu.get("index")]
    return indexed[0] if len(indexed) == 1 else None


def throttle_rate_checks(ctx, facts, limits):
    """Add ``gpu.throttle.rate`` for the GPU of ``ctx`` (a ``GpuChecks``) when the counters were collected."""
    data = facts.get("throttle_window")
    failure = facts.get("throttle_window_error")
    label = ctx.label
    if failure:
        ctx.add(CHECK_ID, "error", message="%s: the clocks event reasons counters could not be read a second time, so "
                                           "this check could not run: %s" % (label, failure),
                remedy="investigate", evidence="throttle_window_error: %s" % failure)
        return
    if not isinstance(data, dict):
        return  # not collected (throttle_window 0): no check, not a skip per GPU
    window = data.get("window_s")
    warn_at, fail_at = limits["throttle_rate_warn_pct"], limits["throttle_rate_fail_pct"]
    expected = "< %s %% of %s s held down by thermal slowdown or power braking" % (fmt(warn_at), fmt(window))
    entry = _entry(ctx.gpu, data.get("gpus") or [])
    if entry is None:
        ctx.add(CHECK_ID, "skip", expected=expected,
                message="%s: nvidia-smi printed no clocks event reasons counters for this GPU (drivers 535 and later "
                        "do)" % label, evidence=evidence_of(("window_s", window)))
        return
    share = entry.get("share_pct") or {}
    evidence = evidence_of(("window_s", window), *[("%s_pct" % key, share.get(key))
                                                   for key in ("sw_power_cap", "hw_thermal_slowdown",
                                                               "hw_power_brake_slowdown", "sw_thermal_slowdown")])
    if entry.get("reset"):
        ctx.add(CHECK_ID, "skip", expected=expected,
                message="%s: the clocks event reasons counters went down during the %s s window (the driver "
                        "reloaded), so no share could be measured" % (label, fmt(window)), evidence=evidence)
        return
    held = [(share[key], name, where) for key, name, where in JUDGED if share.get(key)]
    worst = max([item[0] for item in held] or [0])
    if worst >= warn_at:
        status = "fail" if worst >= fail_at else "warn"
        causes = ", ".join("%s %s %%" % (name, fmt(pct)) for pct, name, dummy in sorted(held, reverse=True))
        checks = sorted(set(where for pct, name, where in held if pct >= warn_at))
        ctx.add(CHECK_ID, status, observed="%s %%" % fmt(worst), expected=expected, remedy="investigate",
                message="%s: its clocks were held down for %s of the %s s window (%s): check %s"
                        % (label, "%s %%" % fmt(worst), fmt(window), causes, " and ".join(checks)),
                evidence=evidence)
        return
    ctx.add(CHECK_ID, "pass", observed="%s %%" % fmt(worst), expected=expected,
            message="%s: no thermal slowdown or power braking above %s %% of the %s s window"
                    % (label, fmt(warn_at), fmt(window)), evidence=evidence)
