# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""The checks of one GPU (``GpuChecks``): identity, memory errors (``_gpu_memory``), PCIe, temperature, power,
throttling, readout.

``gpu.judge_gpu`` runs them once per GPU; that module documents the thresholds and the order of the checks.
"""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._gpu_base import THROTTLE_RULES, gpu_component
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._gpu_memory import MemoryChecks
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._util import (
    evidence_of,
    fmt,
    plural,
    profile_get,
    section_get,
)

__all__ = ("GpuChecks", "gpu_component")

_DEG = u"\u00b0C"


class GpuChecks(MemoryChecks):
    """The checks of one GPU, in the order ``gpu.GPU_CHECK_IDS`` lists them."""

    __slots__ = ()

    # -- identity --------------------------------------------------------------------------------------------

    def model(self, regexes, text):
        name = self.gpu.get("name")
        if regexes is None:
            self.add("gpu.model.name", "skip", observed=name,
                     message="%s is %s; no expected model (zhisuan_expected.gpu_model) and no profile"
                             % (self.label, fmt(name)),
                     evidence=evidence_of(("name", name)))
            return
        if name is None:
            self.missing("gpu.model.name", "name", "product name", expected=text)
            return
        for regex in regexes:
            if regex.search(name):
                self.add("gpu.model.name", "pass", observed=name, expected=text,
                         message="%s is a %s, as expected" % (self.label, name), evidence=evidence_of(("name", name)))
                return
        self.add("gpu.model.name", "fail", observed=name, expected=text,
                 message="%s is a %s, which does not match the expected model %s: wrong part fitted"
                         % (self.label, name, text),
                 remedy="replace_part", evidence=evidence_of(("name", name)))

    def memory(self, profile):
        floor = profile_get(profile, "memory_total_mib_min")
        total = section_get(self.gpu.get("memory"), "total_mib")
        if floor is None:
            self.add("gpu.memory.total", "skip", observed=total,
                     message="%s has %s MiB of memory; no profile minimum to compare with" % (self.label, fmt(total)),
                     evidence=evidence_of(("memory.total_mib", total)))
            return
        expected = ">= %s MiB" % fmt(floor)
        if total is None:
            self.missing("gpu.memory.total", "memory.total_mib", "memory size", expected=expected)
            return
        evidence = evidence_of(("memory.total_mib", total), ("profile.memory_total_mib_min", floor))
        if total < floor:
            self.add("gpu.memory.total", "fail", observed=total, expected=expected,
                     message="%s has %s MiB of memory, below the %s MiB of a %s: not the SKU that was ordered"
                             % (self.label, fmt(total), fmt(floor), profile.get("name")),
                     remedy="replace_part", evidence=evidence)
        else:
            self.add("gpu.memory.total", "pass", observed=total, expected=expected,
                     message="%s has %s MiB of memory" % (self.label, fmt(total)), evidence=evidence)

    # -- PCIe --------------------------------------------------------------------------------------------------

    def pcie(self, profile):
        pcie = self.gpu.get("pcie") or {}
        label = self.label
        width = pcie.get("width_current")
        width_max = pcie.get("width_max")
        model_width = profile_get(profile, "pcie", "width_max")
        want = width_max if width_max is not None else model_width
        evidence = evidence_of(("pcie.width_current", width), ("pcie.width_max", width_max),
                               ("profile.pcie.width_max", model_width))
        if want is None:
            self.add("gpu.pcie.width", "skip", observed=width,
                     message="%s: no maximum PCIe link width to compare with" % label, evidence=evidence)
        elif width is None:
            self.missing("gpu.pcie.width", "pcie.width_current", "PCIe link width", expected=">= %s" % fmt(want))
        elif width < want:
            self.add("gpu.pcie.width", "fail", observed=width, expected=">= %s" % fmt(want),
                     message="%s PCIe link runs at x%s of x%s: a degraded link; reseat the GPU (and its riser or "
                             "cable), then check the slot" % (label, fmt(width), fmt(want)),
                     remedy="reseat", evidence=evidence)
        elif model_width is not None and width_max is not None and width_max < model_width:
            self.add("gpu.pcie.width", "warn", observed=width, expected=">= %s" % fmt(model_width),
                     message="%s PCIe link can only reach x%s but a %s supports x%s: the slot or riser limits it"
                             % (label, fmt(width_max), profile.get("name"), fmt(model_width)),
                     remedy="investigate", evidence=evidence)
        else:
            self.add("gpu.pcie.width", "pass", observed=width, expected=">= %s" % fmt(want),
                     message="%s PCIe link at x%s of x%s" % (label, fmt(width), fmt(want)), evidence=evidence)

        gen = pcie.get("gen_current")
        gen_max = pcie.get("gen_max")
        model_gen = profile_get(profile, "pcie", "gen_max")
        processes = self.gpu.get("processes") or []
        pstate = self.gpu.get("performance_state")
        busy = pstate == "P0" and len(processes) > 0
        evidence = evidence_of(("pcie.gen_current", gen), ("pcie.gen_max", gen_max), ("profile.pcie.gen_max", model_gen),
                               ("performance_state", pstate), ("processes", len(processes)))
        want = gen_max if gen_max is not None else model_gen
        if want is None:
            self.add("gpu.pcie.generation", "skip", observed=gen,
                     message="%s: no maximum PCIe generation to compare with" % label, evidence=evidence)
        elif gen is None:
            self.missing("gpu.pcie.generation", "pcie.gen_current", "PCIe link generation",
                         expected="Gen%s under load" % fmt(want))
        elif model_gen is not None and gen_max is not None and gen_max < model_gen:
            self.add("gpu.pcie.generation", "warn", observed=gen, expected="Gen%s capable" % fmt(model_gen),
                     message="%s PCIe link can only reach Gen%s but a %s supports Gen%s: check the BIOS PCIe speed "
                             "setting and the riser" % (label, fmt(gen_max), profile.get("name"), fmt(model_gen)),
                     remedy="investigate", evidence=evidence)
        elif gen < want and busy:
            in_use = plural(len(processes), "process")
            self.add("gpu.pcie.generation", "warn", observed=gen, expected="Gen%s under load" % fmt(want),
                     message="%s PCIe link runs at Gen%s of Gen%s while the GPU is in use (P0, %s): the link did "
                             "not train up; check the slot, riser and BIOS" % (label, fmt(gen), fmt(want), in_use),
                     remedy="investigate", evidence=evidence)
        elif gen < want:
            self.add("gpu.pcie.generation", "pass", observed=gen, expected="Gen%s under load" % fmt(want),
                     message="%s PCIe link at Gen%s of Gen%s: normal when idle, the driver lowers the link speed to "
                             "save power; only a low generation under load is a fault" % (label, fmt(gen), fmt(want)),
                     evidence=evidence)
        else:
            self.add("gpu.pcie.generation", "pass", observed=gen, expected="Gen%s under load" % fmt(want),
                     message="%s PCIe link at Gen%s of Gen%s" % (label, fmt(gen), fmt(want)), evidence=evidence)

    # -- thermal and power -------------------------------------------------------------------------------------

    def temperature(self, limits):
        temp = self.gpu.get("temperature") or {}
        label = self.label
        margin = limits["temperature_margin_c"]
        gpu_c = temp.get("gpu_c")
        slowdown = temp.get("slowdown_c")
        tlimit = temp.get("tlimit_c")
        if slowdown is not None and gpu_c is not None:
            # Absolute form (older drivers): "GPU Slowdown Temp" is a temperature.
            headroom = slowdown - gpu_c
            observed = u"%s %s" % (fmt(gpu_c), _DEG)
            expected = u"< %s %s" % (fmt(slowdown), _DEG)
            where = u"%s %s, %s %s below its slowdown limit of %s %s" % (
                fmt(gpu_c), _DEG, fmt(headroom), _DEG, fmt(slowdown), _DEG)
            over = u"%s %s, at or above its slowdown limit of %s %s" % (fmt(gpu_c), _DEG, fmt(slowdown), _DEG)
            evidence = evidence_of(("temperature.gpu_c", gpu_c), ("temperature.slowdown_c", slowdown),
                                   ("temperature.shutdown_c", temp.get("shutdown_c")),
                                   ("temperature.max_operating_c", temp.get("max_operating_c")))
        elif tlimit is not None:
            # T.Limit form (newer drivers): "GPU T.Limit Temp" is the headroom below T.Limit and the limits are
            # offsets in the same form (slowdown -2 means "2 degC past T.Limit", i.e. a headroom reading of -2), so
            # the headroom to slowdown is tlimit_c - slowdown_tlimit_c.
            offset = temp.get("slowdown_tlimit_c")
            to_what = "slowdown limit"
            if offset is None:
                offset = temp.get("max_operating_tlimit_c")
                to_what = "maximum operating temperature (T.Limit)"
            if offset is None:
                offset = 0
                to_what = "T.Limit"
            headroom = tlimit - offset
            observed = u"%s %s to slowdown" % (fmt(headroom), _DEG)
            expected = u"> 0 %s to slowdown" % _DEG
            now = u"%s %s, " % (fmt(gpu_c), _DEG) if gpu_c is not None else u""
            where = u"%s%s %s below its %s" % (now, fmt(headroom), _DEG, to_what)
            over = u"%s%s %s past its %s" % (now, fmt(-headroom), _DEG, to_what) if headroom < 0 else \
                u"%sat its %s" % (now, to_what)
            evidence = evidence_of(("temperature.gpu_c", gpu_c), ("temperature.tlimit_c", tlimit),
                                   ("temperature.slowdown_tlimit_c", temp.get("slowdown_tlimit_c")),
                                   ("temperature.shutdown_tlimit_c", temp.get("shutdown_tlimit_c")),
                                   ("temperature.max_operating_tlimit_c", temp.get("max_operating_tlimit_c")))
        elif slowdown is not None:
            self.missing("gpu.temperature.gpu", "temperature.gpu_c", "GPU temperature",
                         expected=u"< %s %s" % (fmt(slowdown), _DEG))
            return
        else:
            for path in ("temperature.gpu_c", "temperature.tlimit_c", "temperature.slowdown_c"):
                if path in self.unreadable:
                    self.missing("gpu.temperature.gpu", path, "GPU temperature")
                    return
            self.add("gpu.temperature.gpu", "skip", observed=gpu_c,
                     message="%s: the driver reports no slowdown limit (neither absolute nor T.Limit form)" % label,
                     evidence=evidence_of(("temperature.gpu_c", gpu_c), ("temperature.slowdown_c", slowdown),
                                          ("temperature.tlimit_c", tlimit)))
            return
        if headroom <= 0:
            self.add("gpu.temperature.gpu", "fail", observed=observed, expected=expected,
                     message=u"%s is at %s: the hardware is slowing it down; check cooling (fans, airflow, "
                             u"heatsink or coolant loop)" % (label, over),
                     remedy="investigate", evidence=evidence)
        elif headroom <= margin:
            self.add("gpu.temperature.gpu", "warn", observed=observed, expected=expected,
                     message=u"%s is at %s (warning margin %s %s): check cooling before it throttles"
                             % (label, where, fmt(margin), _DEG),
                     remedy="investigate", evidence=evidence)
        else:
            self.add("gpu.temperature.gpu", "pass", observed=observed, expected=expected,
                     message=u"%s is at %s" % (label, where), evidence=evidence)

    def power(self, profile, limits):
        power = self.gpu.get("power") or {}
        label = self.label
        draw = power.get("draw_w")
        limit = power.get("limit_w")
        default = power.get("default_limit_w")
        model_limit = profile_get(profile, "power_limit_w")
        evidence = evidence_of(("power.draw_w", draw), ("power.limit_w", limit), ("power.default_limit_w", default),
                               ("power.max_limit_w", power.get("max_limit_w")), ("profile.power_limit_w", model_limit))
        enforced = limit if limit is not None else model_limit
        pct = limits["power_over_limit_pct"]
        if enforced is None:
            self.add("gpu.power.draw", "skip", observed=draw,
                     message="%s: no power limit to compare the draw with" % label, evidence=evidence)
        elif draw is None:
            self.missing("gpu.power.draw", "power.draw_w", "power draw")
        else:
            ceiling = enforced * (1 + pct / 100.0)
            expected = "<= %s W" % fmt(float(ceiling))
            if draw > ceiling:
                self.add("gpu.power.draw", "fail", observed="%s W" % fmt(draw), expected=expected,
                         message="%s draws %s W, above its %s W power limit by more than %s%%: check the power "
                                 "sensor and power delivery" % (label, fmt(draw), fmt(enforced), fmt(pct)),
                         remedy="investigate", evidence=evidence)
            else:
                self.add("gpu.power.draw", "pass", observed="%s W" % fmt(draw), expected=expected,
                         message="%s draws %s W of its %s W power limit" % (label, fmt(draw), fmt(enforced)),
                         evidence=evidence)

        reference = default if default is not None else model_limit
        source = "default limit" if default is not None else "%s rating" % (profile or {}).get("name", "model")
        if reference is None:
            self.add("gpu.power.limit", "skip", observed=limit,
                     message="%s: no default power limit to compare the enforced limit with" % label,
                     evidence=evidence)
        elif limit is None:
            self.missing("gpu.power.limit", "power.limit_w", "enforced power limit",
                         expected=">= %s W" % fmt(reference))
        elif limit < reference - 0.5:
            self.add("gpu.power.limit", "warn", observed="%s W" % fmt(limit), expected=">= %s W" % fmt(reference),
                     message="%s power limit is capped at %s W, below its %s of %s W: bandwidth and burn-in results "
                             "will be low; restore it (nvidia-smi -pl) unless the cap is intended"
                             % (label, fmt(limit), source, fmt(reference)),
                     remedy="tune", evidence=evidence)
        else:
            self.add("gpu.power.limit", "pass", observed="%s W" % fmt(limit), expected=">= %s W" % fmt(reference),
                     message="%s power limit is %s W (%s %s W)" % (label, fmt(limit), source, fmt(reference)),
                     evidence=evidence)

    def throttle(self):
        reasons = self.gpu.get("throttle")
        label = self.label
        for key, name, meaning in THROTTLE_RULES:
            check_id = "gpu.throttle." + key
            if not reasons:
                self.add(check_id, "skip", message="%s: clock event reasons are not reported (N/A)" % label,
                         evidence="throttle=N/A")
                continue
            active = reasons.get(key)
            evidence = evidence_of(("throttle." + key, active))
            if active is None:
                self.missing(check_id, "throttle." + key, "%s reason" % name, expected="not active")
            elif active:
                if key == "hw_slowdown":
                    evidence = evidence_of(("throttle.hw_slowdown", active),
                                           ("throttle.hw_thermal_slowdown", reasons.get("hw_thermal_slowdown")),
                                           ("throttle.hw_power_brake_slowdown",
                                            reasons.get("hw_power_brake_slowdown")))
                self.add(check_id, "fail", observed="active", expected="not active",
                         message="%s: %s is active: %s" % (label, name, meaning),
                         remedy="investigate", evidence=evidence)
            else:
                self.add(check_id, "pass", observed="not active", expected="not active",
                         message="%s: %s is not active" % (label, name), evidence=evidence)

    # -- MIG ------------------------------------------------------------------------------------------------

    def mig(self, expected):
        """``gpu.mig.mode``, only for a GPU in MIG mode or with a MIG mode change pending: the change waits for a
        GPU reset (warn, ``reset_gpu``); MIG on with no MIG device made (warn: no workload can use the GPU); the
        number of MIG devices against ``zhisuan_expected.mig_devices_per_gpu`` when set (fail, ``investigate``)."""
        mode = self.gpu.get("mig_mode") or {}
        current, pending = mode.get("current"), mode.get("pending")
        if current != "Enabled" and (pending is None or pending == current):
            return
        devices = self.gpu.get("mig_devices") or []
        memory = ", ".join("%s MiB" % fmt(device.get("memory_total_mib")) for device in devices)
        evidence = evidence_of(("mig_mode.current", current), ("mig_mode.pending", pending),
                               ("mig_devices", len(devices)), ("memory", memory or None))
        want = (expected or {}).get("mig_devices_per_gpu")
        if pending is not None and pending != current:
            self.add("gpu.mig.mode", "warn", observed="%s, %s pending" % (current, pending), expected=current,
                     message="%s: the MIG mode change from %s to %s is pending: it takes effect only after a GPU "
                             "reset" % (self.label, current, pending),
                     remedy="reset_gpu", evidence=evidence)
        elif not devices:
            self.add("gpu.mig.mode", "warn", observed="MIG on, no MIG device", expected="MIG devices",
                     message="%s is in MIG mode with no MIG device made: no workload can use it until its GPU and "
                             "compute instances are created" % self.label,
                     remedy="investigate", evidence=evidence)
        elif want is not None and len(devices) != want:
            self.add("gpu.mig.mode", "fail", observed=len(devices), expected="== %s" % want,
                     message="%s has %s (%s) where %s per GPU are expected (zhisuan_expected.mig_devices_per_gpu): "
                             "the MIG layout differs" % (self.label, plural(len(devices), "MIG device"), memory,
                                                         want),
                     remedy="investigate", evidence=evidence)
        else:
            expected = "== %s" % want if want is not None else None
            named = plural(len(devices), "MIG device")
            self.add("gpu.mig.mode", "pass", observed=len(devices), expected=expected,
                     message="%s is in MIG mode with %s (%s)" % (self.label, named, memory), evidence=evidence)

    def readout(self):
        unreadable = self.gpu.get("unreadable") or []
        if unreadable:
            fields = ", ".join(str(item) for item in unreadable)
            self.add("gpu.readout.unreadable", "warn", observed=fields, expected="none",
                     message="%s: the driver could not read %s (ERR!): a sensor or the GPU itself may be failing"
                             % (self.label, fields),
                     remedy="investigate", evidence="unreadable: %s" % fields)
        else:
            self.add("gpu.readout.unreadable", "pass", observed="none", expected="none",
                     message="%s: every field the driver reports was readable" % self.label,
                     evidence="unreadable: none")
