# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""``gpu.nvlink.errors``: the growth of one GPU's NVLink error counters over the collect window (``nvidia-smi nvlink
-e`` read twice; facts ``nvlink_errors``, docs/gpu-facts.md). Only judged when the counters were collected
(``gpu_info``'s ``nvlink_errors_window`` > 0).

The rule is DCGM's NVLink health watch (DcgmHealthWatch::MonitorNvLinkErrorCounts, DCGM_LIMIT_MAX_NVLINK_ERROR 1 and
DCGM_LIMIT_MAX_NVLINK_CRC_ERROR 100 in dcgm_gpu_hardware_limits.h):

* a replay or recovery error grew over the window -> ``fail``, ``reset_gpu`` (DCGM_FR_NVLINK_ERROR_CRITICAL; the
  NVIDIA workflow for NVLink errors, WORKFLOW_NVLINK_ERR: drain, reset, RMA on recurrence, shared/REFERENCE.md 2);
* CRC errors (``crc``, ``crc_flit``, ``crc_data``) grew at ``nvlink_crc_per_s_max`` (100) per second or more ->
  ``fail``, ``reset_gpu`` (DCGM_FR_NVLINK_CRC_ERROR_THRESHOLD);
* CRC errors grew, slower -> ``warn``, ``monitor`` (DCGM_FR_NVLINK_ERROR_THRESHOLD);
* a counter at its maximum (65535 on older GPUs) cannot show growth -> ``warn``, ``investigate`` (clear the counters
  with ``nvidia-smi nvlink -re`` and read again);
* no counter grew -> ``pass``.

Site overrides (``thresholds``): ``nvlink_replay_max`` (0) and ``nvlink_recovery_max`` (0) allowed growth over the
window, ``nvlink_crc_per_s_max`` (100).
"""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._gpu_base import window_entry
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._util import evidence_of, fmt, plural

CHECK_ID = "gpu.nvlink.errors"
DEFAULTS = {"nvlink_replay_max": 0, "nvlink_recovery_max": 0, "nvlink_crc_per_s_max": 100}
_CRC = ("crc", "crc_flit", "crc_data")
_NAMES = {"replay": "replay", "recovery": "recovery", "crc": "CRC", "crc_flit": "CRC flit", "crc_data": "CRC data",
          "ecc": "ECC", "data_tx": "data Tx", "data_rx": "data Rx"}


def _growth(entry):
    """Per counter kind: the links that grew (``[(link, counter, numbers)]``), the saturated ones and the cleared."""
    grew, saturated, cleared = [], [], []
    for link in entry.get("links") or []:
        for name, numbers in sorted((link.get("counters") or {}).items()):
            if numbers.get("delta"):
                grew.append((link["link"], name, numbers))
            if numbers.get("saturated"):
                saturated.append((link["link"], name, numbers))
            if numbers.get("cleared"):
                cleared.append((link["link"], name, numbers))
    return grew, saturated, cleared


def _describe(items):
    return "; ".join("link %s %s +%s (%s -> %s)" % (link, _NAMES.get(name, name), fmt(numbers["delta"]),
                                                    fmt(numbers["before"]), fmt(numbers["after"]))
                     for link, name, numbers in items[:8]) + ("; ..." if len(items) > 8 else "")


def nvlink_error_checks(ctx, facts, limits):
    """Add ``gpu.nvlink.errors`` for the GPU of ``ctx`` (a ``GpuChecks``) when the counters were collected."""
    found = window_entry(ctx, facts, "nvlink_errors", CHECK_ID, "the NVLink error counters could not be read", "uuid")
    if found is None:
        return
    data, entry = found
    label = ctx.label
    window = data.get("window_s")
    expected = "no replay/recovery growth, CRC < %s/s over %s s" % (fmt(limits["nvlink_crc_per_s_max"]), fmt(window))
    if entry is None or not entry.get("links"):
        said = "; ".join((entry or {}).get("messages") or []) or "no link counters"
        ctx.add(CHECK_ID, "skip", expected=expected,
                message="%s: nvidia-smi nvlink -e reports no NVLink error counters for this GPU (%s)" % (label, said),
                evidence="nvlink_errors: %s" % said)
        return
    grew, saturated, cleared = _growth(entry)
    links = len(entry["links"])
    evidence = evidence_of(("window_s", window), ("links", links)) + ("; " + _describe(grew) if grew else "")
    critical = [item for item in grew if item[1] == "replay" and item[2]["delta"] > limits["nvlink_replay_max"]
                or item[1] == "recovery" and item[2]["delta"] > limits["nvlink_recovery_max"]]
    crc = [item for item in grew if item[1] in _CRC]
    fast = [item for item in crc if item[2].get("per_s") is not None
            and item[2]["per_s"] >= limits["nvlink_crc_per_s_max"]]
    if critical or fast:
        what = []
        if critical:
            what.append("%s grew (%s)" % ("replay/recovery errors", _describe(critical)))
        if fast:
            what.append("CRC errors grew at %s/s or more (%s)" % (fmt(limits["nvlink_crc_per_s_max"]), _describe(fast)))
        ctx.add(CHECK_ID, "fail", observed=plural(len(critical) + len(fast), "counter") + " grew", expected=expected,
                message="%s: over %s s %s: the link is retraining or corrupting data; drain the node and reset the "
                        "GPU, then read the counters again; if they grow again check the NVLink bridge or baseboard "
                        "connection (reseat) and RMA the GPU or baseboard" % (label, fmt(window), "; ".join(what)),
                remedy="reset_gpu", evidence=evidence)
    elif crc:
        ctx.add(CHECK_ID, "warn", observed="CRC +%s" % fmt(sum(item[2]["delta"] for item in crc)), expected=expected,
                message="%s: CRC errors grew over %s s, below %s/s (%s): the link corrects them; watch the counters"
                        % (label, fmt(window), fmt(limits["nvlink_crc_per_s_max"]), _describe(crc)),
                remedy="monitor", evidence=evidence)
    elif saturated:
        ctx.add(CHECK_ID, "warn", observed="saturated", expected=expected,
                message="%s: %s at the counter maximum, so growth cannot be seen (%s): clear the counters "
                        "(nvidia-smi nvlink -re) and read them again; a link that filled its counter has a history of "
                        "errors" % (label, plural(len(saturated), "error counter"), _describe(saturated)),
                remedy="investigate", evidence=evidence)
    else:
        note = " (counters were cleared during the window)" if cleared else ""
        ctx.add(CHECK_ID, "pass", observed="no growth", expected=expected,
                message="%s: no NVLink error counter of its %s grew over %s s%s"
                        % (label, plural(links, "link"), fmt(window), note),
                evidence=evidence)
