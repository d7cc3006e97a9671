# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""NVLink checks of one GPU: ``gpu.nvlink.links`` (links up vs the profile's count) and ``gpu.nvlink.speed``
(each active link at the profile's per-link speed), then ``gpu.fabric.state`` (``_fabric_health``). ``gpu.judge_gpu``
runs them after the PCIe checks.

Profile keys: ``nvlink.links`` and ``nvlink.speed_gbs_per_link`` (GB/s as ``nvidia-smi nvlink -s`` prints it);
``nvlink: null`` marks a PCIe model without NVLink. Facts: each GPU's ``nvlink`` and the host's ``nvlink_error``
(docs/gpu-facts.md).
"""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._fabric_health import fabric_check
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._util import evidence_of, fmt, plural, profile_get

NVLINK_CHECK_IDS = ("gpu.nvlink.links", "gpu.nvlink.speed")

# Printed speeds have three decimals (26.562); a link is slow only when it is below the figure by more than that.
_SPEED_TOLERANCE_GBS = 0.001

_RECURRENCE = ("if the link does not come back, or goes down again, read its error counters (nvidia-smi nvlink -e) "
               "and RMA the GPU or baseboard")


def _gbs(value):
    """A link speed with the three decimals nvidia-smi prints (26.562, 25)."""
    return ("%.3f" % value).rstrip("0").rstrip(".")


def _ranges(numbers):
    """``[4, 5, 10, 11, 16]`` -> ``"4-5, 10-11, 16"``."""
    parts = []
    for number in sorted(numbers):
        if parts and number == parts[-1][1] + 1:
            parts[-1][1] = number
        else:
            parts.append([number, number])
    return ", ".join(str(a) if a == b else "%d-%d" % (a, b) for a, b in parts)


def _not_applicable(ctx, profile, nvlink_error):
    """Add the two checks and return True when NVLink cannot be judged on this GPU; else return False."""
    label = ctx.label
    status = ctx.gpu.get("nvlink")
    if profile is not None and "nvlink" in profile and profile.get("nvlink") is None:
        for check_id in NVLINK_CHECK_IDS:
            ctx.add(check_id, "skip", message="%s: a %s has no NVLink (PCIe card); not judged"
                                              % (label, profile.get("name") or "GPU of this model"),
                    evidence="profile.nvlink=null")
        return True
    if nvlink_error:
        for check_id in NVLINK_CHECK_IDS:
            ctx.add(check_id, "error", observed=None,
                    message="%s: the NVLink state could not be read, so this check could not run: %s"
                            % (label, nvlink_error),
                    remedy="investigate", evidence="nvlink_error: %s" % nvlink_error)
        return True
    if status is None:
        for check_id in NVLINK_CHECK_IDS:
            ctx.add(check_id, "skip",
                    message="%s: no NVLink is reported for this GPU (not collected, or the driver says the device "
                            "has no NVLink)" % label,
                    evidence="nvlink=null")
        return True
    if status.get("active") is None:
        message = status.get("message") or "no link state printed"
        mig = (ctx.gpu.get("mig_mode") or {}).get("current") == "Enabled" or "mig mode" in message.lower()
        for check_id in NVLINK_CHECK_IDS:
            if mig:
                ctx.add(check_id, "skip", message="%s is in MIG mode, where the driver does not report NVLink state"
                                                  % label,
                        evidence="nvlink.message: %s" % message)
            else:
                ctx.add(check_id, "error",
                        message="%s: the driver printed %r instead of the NVLink states, so this check could not run"
                                % (label, message),
                        remedy="investigate", evidence="nvlink.message: %s" % message)
        return True
    return False


def nvlink_checks(ctx, profile, nvlink_error=None, fabric_peers=(0, 0)):
    """Add ``gpu.nvlink.links``, ``gpu.nvlink.speed`` and ``gpu.fabric.state`` to ``ctx`` (a
    ``_gpu_checks.GpuChecks``). ``fabric_peers``: (registered, reporting) counts of the node's other GPUs
    (``_fabric_health.fabric_check``)."""
    if not _not_applicable(ctx, profile, nvlink_error):
        _links(ctx, profile)
        _speed(ctx, profile)
    fabric_check(ctx, profile, fabric_peers[0], fabric_peers[1])


def _links(ctx, profile):
    label = ctx.label
    status = ctx.gpu["nvlink"]
    active = status["active"]
    links = status.get("links") or []
    down = [link["link"] for link in links if not link.get("active")]
    want = profile_get(profile, "nvlink", "links")
    evidence = evidence_of(("nvlink.active", active), ("nvlink.total", status.get("total")),
                           ("profile.nvlink.links", want))
    if down:
        evidence += "; inactive links: %s" % _ranges(down)
    if status.get("message"):
        evidence += "; driver: %s" % status["message"]
    if want is None:
        ctx.add("gpu.nvlink.links", "skip", observed=active,
                message="%s has %s active; no profile link count (nvlink.links) to compare with"
                        % (label, plural(active, "NVLink")),
                evidence=evidence)
        return
    expected = ">= %s" % fmt(want)
    if active < want and status.get("partial") and not down:
        # lines of this GPU's block could not be read (elided or damaged output): the links not seen are unknown
        ctx.add("gpu.nvlink.links", "warn", observed=active, expected=expected,
                message="%s: %s of %s NVLinks seen active, the rest of its nvlink -s block could not be read "
                        "(elided or damaged lines); read nvidia-smi nvlink -s again" % (label, fmt(active), fmt(want)),
                remedy="investigate", evidence=evidence + "; nvlink -s block read in part")
        return
    if active < want:
        which = (" (link %s inactive)" % _ranges(down)) if down else (" (%s)" % status["message"] if status.get("message") else "")
        ctx.add("gpu.nvlink.links", "fail", observed=active, expected=expected,
                message="%s has %s of %s NVLinks active%s: GPU-to-GPU traffic is slower and collectives may hang; "
                        "drain the node and reset the GPU to retrain the links; %s"
                        % (label, fmt(active), fmt(want), which, _RECURRENCE),
                remedy="reset_gpu", evidence=evidence)
        return
    ctx.add("gpu.nvlink.links", "pass", observed=active, expected=expected,
            message="%s has %s of %s NVLinks active" % (label, fmt(active), fmt(want)), evidence=evidence)


def _speed(ctx, profile):
    label = ctx.label
    links = [link for link in ctx.gpu["nvlink"].get("links") or [] if link.get("active")]
    want = profile_get(profile, "nvlink", "speed_gbs_per_link")
    speeds = sorted(set(link["speed_gbs"] for link in links if link.get("speed_gbs") is not None))
    evidence = "profile.nvlink.speed_gbs_per_link=%s" % ("N/A" if want is None else _gbs(want))
    evidence += "; active link speeds (GB/s): %s" % (", ".join(_gbs(speed) for speed in speeds) or "none")
    if not links:
        ctx.add("gpu.nvlink.speed", "skip", expected=None if want is None else ">= %s GB/s" % _gbs(want),
                message="%s has no active NVLink whose speed could be checked" % label, evidence=evidence)
        return
    if want is None:
        ctx.add("gpu.nvlink.speed", "skip", observed="%s GB/s" % _gbs(min(speeds)) if speeds else None,
                message="%s: no profile per-link speed (nvlink.speed_gbs_per_link) to compare with" % label,
                evidence=evidence)
        return
    expected = ">= %s GB/s" % _gbs(want)
    slow = [link for link in links if link.get("speed_gbs") is not None and link["speed_gbs"] < want - _SPEED_TOLERANCE_GBS]
    if slow:
        slowest = min(link["speed_gbs"] for link in slow)
        ctx.add("gpu.nvlink.speed", "fail", observed="%s GB/s" % _gbs(slowest), expected=expected,
                message="%s has %s running below %s GB/s (link %s, slowest %s GB/s): the link trained at a lower "
                        "rate; drain the node and reset the GPU to retrain it; %s"
                        % (label, plural(len(slow), "NVLink"), _gbs(want), _ranges(link["link"] for link in slow),
                           _gbs(slowest), _RECURRENCE),
                remedy="reset_gpu", evidence=evidence)
        return
    ctx.add("gpu.nvlink.speed", "pass", observed="%s GB/s" % _gbs(min(speeds)), expected=expected,
            message="%s: all %s active NVLinks run at %s GB/s or more" % (label, fmt(len(links)), _gbs(want)),
            evidence=evidence)


def nvlink_summary(facts):
    """Host report facts for NVLink: ``{nvlink_active, nvlink_total}`` summed over the GPUs that report NVLink
    (``None`` when none does), and ``nvlink_error``."""
    active = total = None
    for gpu in (facts or {}).get("gpus") or []:
        status = gpu.get("nvlink") if isinstance(gpu, dict) else None
        if not status:
            continue
        if status.get("active") is not None:
            active = (active or 0) + status["active"]
        if status.get("total") is not None:
            total = (total or 0) + status["total"]
    return {"nvlink_active": active, "nvlink_total": total, "nvlink_error": (facts or {}).get("nvlink_error")}
