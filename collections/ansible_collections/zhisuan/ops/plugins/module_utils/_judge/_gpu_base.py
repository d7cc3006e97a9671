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


def mig_gpus(gpu_facts):
    """The ``gpu`` facts records of the GPUs in MIG mode now (``mig_mode.current`` Enabled), in the facts' order.
    dcgmi diag and gpu-burn do not test a GPU in MIG mode as a whole GPU."""
    gpus = (gpu_facts or {}).get("gpus") if isinstance(gpu_facts, dict) else None
    return [gpu for gpu in gpus or [] if isinstance(gpu, dict)
            and ((gpu.get("mig_mode") or {}) if isinstance(gpu.get("mig_mode"), dict) else {}).get("current")
            == "Enabled"]


def mig_labels(gpus):
    """``GPU 0, GPU 3``: the GPUs of ``gpus`` by index (position when it has none)."""
    return ", ".join("GPU %s" % (gpu.get("index") if gpu.get("index") is not None else position)
                     for position, gpu in enumerate(gpus))
