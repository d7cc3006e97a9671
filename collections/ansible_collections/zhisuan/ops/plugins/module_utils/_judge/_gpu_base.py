# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""What every per-GPU rule shares: the GPU's component text (``gpu_component``), the throttle reasons that mean a
fault (``THROTTLE_RULES``, used by the gpu and the burn stability rules) and ``GpuCheckBase``, which adds a GPU's
check records (``add``) and says why a value is missing (``missing``)."""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check

# Throttle ("clocks event") reasons that mean a fault. sw_power_cap, gpu_idle, sync_boost and the clock settings
# are normal operation and are not judged.
THROTTLE_RULES = (
    ("hw_slowdown", "HW Slowdown",
     "clocks are cut by half or more (over-temperature, an external power brake or fast-trigger power protection)"),
    ("hw_thermal_slowdown", "HW Thermal Slowdown",
     "the GPU is too hot and the hardware cut its clocks; check cooling (fans, airflow, heatsink or coolant loop)"),
    ("hw_power_brake_slowdown", "HW Power Brake Slowdown",
     "the system asserted the external power brake; check the PSUs and power delivery to the GPU baseboard"),
    ("sw_thermal_slowdown", "SW Thermal Slowdown",
     "the driver lowered clocks because the GPU is above its maximum operating temperature; check cooling"),
)

_ELLIPSIS = u"\u2026"


def _short_uuid(uuid):
    if len(uuid) <= 13:
        return uuid
    return uuid[:13].rstrip("-") + _ELLIPSIS


def gpu_component(label, gpu):
    """``GPU 3 (GPU-513536b6…, 0000:4E:00.0)``: the label with the short UUID and the bus id the GPU reports."""
    parts = []
    uuid = gpu.get("uuid")
    if uuid:
        parts.append(_short_uuid(str(uuid)))
    bus_id = gpu.get("pci_bus_id")
    if bus_id:
        parts.append(str(bus_id))
    if parts:
        return "%s (%s)" % (label, ", ".join(parts))
    return label


class GpuCheckBase(object):
    """The checks of one GPU: each rule reads its fields once and shares the label and component."""

    __slots__ = ("host", "gpu", "label", "component", "unreadable", "checks")

    def __init__(self, host, gpu, label):
        self.host = host
        self.gpu = gpu
        self.label = label
        self.component = gpu_component(label, gpu)
        self.unreadable = set(gpu.get("unreadable") or ())
        self.checks = []

    def add(self, check_id, status, observed=None, expected=None, message="", remedy=None, evidence=""):
        self.checks.append(make_check(check_id, self.host, status, component=self.component, observed=observed,
                                      expected=expected, message=message, remedy=remedy, evidence=evidence))

    def missing(self, check_id, path, what, expected=None):
        """A value the rule needs is null: ``error`` when the driver could not read it (ERR!), else ``skip``."""
        if path in self.unreadable:
            self.add(check_id, "error", observed="ERR!", expected=expected,
                     message="%s: the driver could not read the %s (ERR!), so this check could not run"
                             % (self.label, what),
                     remedy="investigate", evidence="unreadable: %s" % path)
        else:
            self.add(check_id, "skip", expected=expected,
                     message="%s: the %s is not reported for this GPU (N/A)" % (self.label, what),
                     evidence="%s=N/A" % path)


def _mig_current(gpu):
    mode = gpu.get("mig_mode")
    return mode.get("current") if isinstance(mode, dict) else None


def mig_gpus(gpu_facts):
    """The ``gpu`` facts records of the GPUs in MIG mode now (``mig_mode.current`` Enabled), in the facts' order.
    dcgmi diag and gpu-burn do not test a GPU in MIG mode as a whole GPU."""
    gpus = gpu_facts.get("gpus") if isinstance(gpu_facts, dict) else None
    return [gpu for gpu in gpus or [] if isinstance(gpu, dict) and _mig_current(gpu) == "Enabled"]


def mig_labels(gpus):
    """``GPU 0, GPU 3``: the GPUs of ``gpus`` by index (by bus id when the facts give no index)."""
    return ", ".join("GPU %s" % gpu["index"] if gpu.get("index") is not None else gpu.get("pci_bus_id") or "a GPU"
                     for gpu in gpus)


def window_entry(ctx, facts, fact, check_id, unread, key):
    """The entry of the GPU of ``ctx`` (a ``GpuChecks``) in the window facts ``facts[fact]`` (two reads of a counter
    ``window_s`` apart, ``gpu_info``'s windows). Returns ``(data, entry)``; ``entry`` is ``None`` when the facts do
    not name this GPU (matched by ``key`` when unique, else by index). Returns ``None`` when no check is due: the window
    was not collected, or its second read failed (then an ``error`` check, ``unread`` saying what could not be read,
    was added)."""
    failure = facts.get(fact + "_error")
    if failure:
        ctx.add(check_id, "error", message="%s: %s, so this check could not run: %s" % (ctx.label, unread, failure),
                remedy="investigate", evidence="%s_error: %s" % (fact, failure))
        return None
    data = facts.get(fact)
    if not isinstance(data, dict):
        return None  # not collected (window 0): no check, not a skip per GPU
    entries = data.get("gpus") or []
    wanted = ctx.gpu.get(key)
    same = [entry for entry in entries if wanted and entry.get(key) == wanted]
    if len(same) != 1:
        same = [entry for entry in entries if entry.get("index") == ctx.gpu.get("index")]
    return data, same[0] if len(same) == 1 else None


def skipped_without_links(ctx, check_id, fact, tool, entry, expected):
    """Add the ``skip`` of a GPU an NVLink read (``tool``, its fact ``fact``) lists without links - or does not list -
    and return True; False (nothing added) when the GPU's entry has links to judge."""
    if entry is not None and entry.get("links"):
        return False
    said = "; ".join((entry or {}).get("messages") or []) or ("not listed" if entry is None else "no link")
    ctx.add(check_id, "skip", expected=expected,
            message="%s: %s lists no NVLink of this GPU (%s)" % (ctx.label, tool, said),
            evidence="%s: %s" % (fact, said))
    return True
