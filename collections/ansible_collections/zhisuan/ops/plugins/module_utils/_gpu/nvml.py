# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""The ``gpu`` facts (docs/gpu-facts.md) read through NVML with NVIDIA's Python binding ``pynvml`` (package
``nvidia-ml-py``) instead of ``nvidia-smi``: gpu_info ``source: nvml``.

The same fields as the nvidia-smi parser, with the same units (MiB, W, degC, MHz) and the same meaning of ``None``: a
query NVML does not support on this GPU (``NVML_ERROR_NOT_SUPPORTED``) is ``None``; any other NVML error on one
query is ``None`` with the field path in ``unreadable`` (as ``ERR!`` in nvidia-smi). NVML reports the absolute
slowdown/shutdown temperatures (never the T.Limit form). No NVLink state is read here (``nvlink: None``).

``pynvml`` is imported when called: a node without the package, or without the driver's ``libnvidia-ml.so``
(``NVMLError_LibraryNotFound``), gives a typed ToolNotFound naming ``nvml``; a driver that is not loaded a ToolFailed.
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ToolFailed, ToolNotFound
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu._nvsmi_fields import REMAP_HISTOGRAM_KEYS

TOOL = "nvml"
_MIB = 1024 * 1024
# NVML return codes (nvml.h) that mean "no such reading on this GPU", not a failing read.
_NOT_SUPPORTED = (3, 13)  # NVML_ERROR_NOT_SUPPORTED, NVML_ERROR_FUNCTION_NOT_FOUND
_LIBRARY_NOT_FOUND = 12
_DRIVER_NOT_LOADED = 9
# nvmlDeviceGetArchitecture (nvml.h NVML_DEVICE_ARCH_*) -> the name nvidia-smi prints as Product Architecture.
_ARCHITECTURES = {2: "Kepler", 3: "Maxwell", 4: "Pascal", 5: "Volta", 6: "Turing", 7: "Ampere", 8: "Ada Lovelace",
                  9: "Hopper", 10: "Blackwell"}
# nvmlClocksEventReason* bits (nvml.h) -> the throttle keys of the nvidia-smi facts.
_REASONS = (
    (0x1, "gpu_idle"), (0x2, "applications_clocks_setting"), (0x4, "sw_power_cap"), (0x8, "hw_slowdown"),
    (0x10, "sync_boost"), (0x20, "sw_thermal_slowdown"), (0x40, "hw_thermal_slowdown"),
    (0x80, "hw_power_brake_slowdown"), (0x100, "display_clocks_setting"),
)


def _text(value):
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return value.strip() if isinstance(value, str) else None


class _Reader(object):
    """Calls into pynvml for one GPU, turning each failing query into ``None`` (+ ``unreadable``)."""

    def __init__(self, nvml, handle):
        self.nvml = nvml
        self.handle = handle
        self.unreadable = []

    def get(self, path, name, *args):
        function = getattr(self.nvml, name, None)
        if function is None:  # an older binding without this query
            return None
        try:
            return function(self.handle, *args)
        except self.nvml.NVMLError as exc:
            if getattr(exc, "value", None) not in _NOT_SUPPORTED:
                self.unreadable.append(path)
            return None

    def const(self, name, default):
        value = getattr(self.nvml, name, default)
        return value if isinstance(value, int) else default


def _scaled(value, divisor, digits=2):
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return round(value / float(divisor), digits)


def _pair(value):
    if isinstance(value, (list, tuple)) and len(value) >= 2:
        return value[0], value[1]
    return None, None


def _gpu(nvml, handle, position):
    read = _Reader(nvml, handle)
    gpu = {"index": read.get("index", "nvmlDeviceGetMinorNumber")}
    if gpu["index"] is None:
        gpu["index"] = position
    gpu["name"] = _text(read.get("name", "nvmlDeviceGetName"))
    gpu["brand"] = None
    arch = read.get("architecture", "nvmlDeviceGetArchitecture")
    gpu["architecture"] = _ARCHITECTURES.get(arch) if isinstance(arch, int) else None
    gpu["uuid"] = _text(read.get("uuid", "nvmlDeviceGetUUID"))
    gpu["serial"] = _text(read.get("serial", "nvmlDeviceGetSerial"))
    pci = read.get("pci_bus_id", "nvmlDeviceGetPciInfo")
    bus = _text(getattr(pci, "busId", None))
    gpu["pci_bus_id"] = bus[-12:].upper() if bus and len(bus) >= 12 else bus
    gpu["vbios_version"] = _text(read.get("vbios_version", "nvmlDeviceGetVbiosVersion"))
    persistence = read.get("persistence_mode", "nvmlDeviceGetPersistenceMode")
    gpu["persistence_mode"] = bool(persistence) if persistence is not None else None
    mig_current, mig_pending = _pair(read.get("mig_mode", "nvmlDeviceGetMigMode"))
    gpu["mig_mode"] = None if mig_current is None else {
        "current": "Enabled" if mig_current else "Disabled", "pending": "Enabled" if mig_pending else "Disabled"}
    memory = read.get("memory.total_mib", "nvmlDeviceGetMemoryInfo")
    gpu["memory"] = {"total_mib": _scaled(getattr(memory, "total", None), _MIB, 0),
                     "used_mib": _scaled(getattr(memory, "used", None), _MIB, 0),
                     "reserved_mib": _scaled(getattr(memory, "reserved", None), _MIB, 0)}
    for key in ("total_mib", "used_mib", "reserved_mib"):
        if gpu["memory"][key] is not None:
            gpu["memory"][key] = int(gpu["memory"][key])
    gpu["temperature"] = {
        "gpu_c": read.get("temperature.gpu_c", "nvmlDeviceGetTemperature", read.const("NVML_TEMPERATURE_GPU", 0)),
        "memory_c": None,
        "shutdown_c": read.get("temperature.shutdown_c", "nvmlDeviceGetTemperatureThreshold",
                               read.const("NVML_TEMPERATURE_THRESHOLD_SHUTDOWN", 0)),
        "slowdown_c": read.get("temperature.slowdown_c", "nvmlDeviceGetTemperatureThreshold",
                               read.const("NVML_TEMPERATURE_THRESHOLD_SLOWDOWN", 1)),
        "max_operating_c": None, "memory_max_c": None, "tlimit_c": None, "shutdown_tlimit_c": None,
        "slowdown_tlimit_c": None, "max_operating_tlimit_c": None, "memory_max_tlimit_c": None,
    }
    low, high = _pair(read.get("power.min_limit_w", "nvmlDeviceGetPowerManagementLimitConstraints"))
    gpu["power"] = {
        "draw_w": _scaled(read.get("power.draw_w", "nvmlDeviceGetPowerUsage"), 1000),
        "instant_draw_w": None,
        "limit_w": _scaled(read.get("power.limit_w", "nvmlDeviceGetEnforcedPowerLimit"), 1000),
        "default_limit_w": _scaled(read.get("power.default_limit_w", "nvmlDeviceGetPowerManagementDefaultLimit"), 1000),
        "min_limit_w": _scaled(low, 1000), "max_limit_w": _scaled(high, 1000),
    }
    clock = dict((name, read.const("NVML_CLOCK_" + name.upper(), number))
                 for name, number in (("graphics", 0), ("sm", 1), ("mem", 2)))
    gpu["clocks"] = {
        "graphics_mhz": read.get("clocks.graphics_mhz", "nvmlDeviceGetClockInfo", clock["graphics"]),
        "sm_mhz": read.get("clocks.sm_mhz", "nvmlDeviceGetClockInfo", clock["sm"]),
        "memory_mhz": read.get("clocks.memory_mhz", "nvmlDeviceGetClockInfo", clock["mem"]),
        "max_graphics_mhz": read.get("clocks.max_graphics_mhz", "nvmlDeviceGetMaxClockInfo", clock["graphics"]),
        "max_sm_mhz": read.get("clocks.max_sm_mhz", "nvmlDeviceGetMaxClockInfo", clock["sm"]),
        "max_memory_mhz": read.get("clocks.max_memory_mhz", "nvmlDeviceGetMaxClockInfo", clock["mem"]),
    }
    gpu["pcie"] = {
        "gen_current": read.get("pcie.gen_current", "nvmlDeviceGetCurrPcieLinkGeneration"),
        "gen_max": read.get("pcie.gen_max", "nvmlDeviceGetMaxPcieLinkGeneration"),
        "width_current": read.get("pcie.width_current", "nvmlDeviceGetCurrPcieLinkWidth"),
        "width_max": read.get("pcie.width_max", "nvmlDeviceGetMaxPcieLinkWidth"),
        "replays": read.get("pcie.replays", "nvmlDeviceGetPcieReplayCounter"),
    }
    gpu["fan_speed_pct"] = read.get("fan_speed_pct", "nvmlDeviceGetFanSpeed")
    gpu["fabric"] = None
    pstate = read.get("performance_state", "nvmlDeviceGetPerformanceState")
    gpu["performance_state"] = "P%d" % pstate if isinstance(pstate, int) and 0 <= pstate <= 15 else None
    gpu["ecc"] = _ecc(read)
    gpu["retired_pages"] = _retired(read)
    rows = read.get("remapped_rows", "nvmlDeviceGetRemappedRows")
    gpu["remapped_rows"] = None if not isinstance(rows, (list, tuple)) or len(rows) < 4 else {
        "correctable": rows[0], "uncorrectable": rows[1], "pending": bool(rows[2]), "failure": bool(rows[3]),
        "banks": _remap_banks(read)}
    gpu["throttle"] = _throttle(read)
    processes = read.get("processes", "nvmlDeviceGetComputeRunningProcesses") or []
    gpu["processes"] = [{"pid": getattr(item, "pid", None), "type": "C", "name": None,
                         "used_memory_mib": _scaled(getattr(item, "usedGpuMemory", None), _MIB, 0)}
                        for item in processes]
    # MIG devices are not walked through NVML (nvmlDeviceGetMigDeviceHandleByIndex per instance); the MIG mode is
    gpu["mig_devices"] = None
    gpu["throttle_counters_us"] = None  # NVML's field values (NVML_FI_DEV_CLOCKS_EVENT_REASON_*) are not read
    gpu["unreadable"] = read.unreadable
    return gpu


def _remap_banks(read):
    """The row remapper's bank availability histogram (what nvidia-smi -q prints under Bank Remap Availability
    Histogram), or None where the binding or the GPU has none."""
    histogram = read.get("remapped_rows.banks", "nvmlDeviceGetRowRemapperHistogram")
    if histogram is None:
        return None
    banks = dict((key, getattr(histogram, key, None)) for key in REMAP_HISTOGRAM_KEYS)
    if not all(isinstance(value, int) and not isinstance(value, bool) for value in banks.values()):
        read.unreadable.append("remapped_rows.banks")
        return None
    return banks


def _ecc(read):
    current, pending = _pair(read.get("ecc.mode_current", "nvmlDeviceGetEccMode"))
    if current is None:
        return None
    uncorrected = read.const("NVML_MEMORY_ERROR_TYPE_UNCORRECTED", 1)
    corrected = read.const("NVML_MEMORY_ERROR_TYPE_CORRECTED", 0)
    volatile = read.const("NVML_VOLATILE_ECC", 0)
    aggregate = read.const("NVML_AGGREGATE_ECC", 1)
    return {
        "mode_current": bool(current), "mode_pending": bool(pending),
        "volatile_corrected": read.get("ecc.volatile_corrected", "nvmlDeviceGetTotalEccErrors", corrected, volatile),
        "volatile_uncorrected": read.get("ecc.volatile_uncorrected", "nvmlDeviceGetTotalEccErrors", uncorrected,
                                         volatile),
        "aggregate_corrected": read.get("ecc.aggregate_corrected", "nvmlDeviceGetTotalEccErrors", corrected,
                                        aggregate),
        "aggregate_uncorrected": read.get("ecc.aggregate_uncorrected", "nvmlDeviceGetTotalEccErrors", uncorrected,
                                          aggregate),
    }


def _retired(read):
    pending = read.get("retired_pages.pending", "nvmlDeviceGetRetiredPagesPendingStatus")
    single = read.get("retired_pages.single_bit", "nvmlDeviceGetRetiredPages",
                      read.const("NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS", 0))
    double = read.get("retired_pages.double_bit", "nvmlDeviceGetRetiredPages",
                      read.const("NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR", 1))
    return {"single_bit": len(single) if isinstance(single, (list, tuple)) else None,
            "double_bit": len(double) if isinstance(double, (list, tuple)) else None,
            "pending": bool(pending) if pending is not None else None}


def _throttle(read):
    mask = read.get("throttle", "nvmlDeviceGetCurrentClocksEventReasons")
    if mask is None and "throttle" not in read.unreadable:
        mask = read.get("throttle", "nvmlDeviceGetCurrentClocksThrottleReasons")
    if not isinstance(mask, int) or isinstance(mask, bool):
        return None
    return dict((key, bool(mask & bit)) for bit, key in _REASONS)


def _import():
    try:
        import pynvml  # pylint: disable=import-outside-toplevel  # only on nodes that read through NVML
    except ImportError:
        raise ToolNotFound(TOOL, "the nvidia-ml-py package (module pynvml) is not installed for the node's Python")
    return pynvml


def read_facts(nvml=None):
    """The ``gpu`` facts through NVML. ``nvml`` is the pynvml module (imported when None). Raises ToolNotFound (no
    pynvml, no libnvidia-ml: no driver installed) or ToolFailed (driver not loaded, or NVML failing to start)."""
    nvml = nvml or _import()
    try:
        nvml.nvmlInit()
    except nvml.NVMLError as exc:
        code = getattr(exc, "value", None)
        detail = "%s (NVML error %s)" % (exc, code)
        if code == _LIBRARY_NOT_FOUND:
            raise ToolNotFound(TOOL, "%s: the NVIDIA driver's libnvidia-ml.so is not installed" % detail)
        if code == _DRIVER_NOT_LOADED:
            raise ToolFailed(TOOL, "%s: the NVIDIA kernel driver is not loaded" % detail)
        raise ToolFailed(TOOL, "nvmlInit failed: %s" % detail)
    try:
        facts = {"source": "nvml", "timestamp": None}
        facts["driver_version"] = _text(_system(nvml, "nvmlSystemGetDriverVersion"))
        cuda = _system(nvml, "nvmlSystemGetCudaDriverVersion")
        facts["cuda_version"] = ("%d.%d" % (cuda // 1000, (cuda % 1000) // 10)
                                 if isinstance(cuda, int) and cuda > 0 else None)
        count = nvml.nvmlDeviceGetCount()
        facts["attached_gpus"] = count
        gpus = []
        for position in range(count):
            gpus.append(_gpu(nvml, nvml.nvmlDeviceGetHandleByIndex(position), position))
        facts["gpus"] = gpus
        return facts
    except nvml.NVMLError as exc:
        raise ToolFailed(TOOL, "listing the GPUs failed: %s (NVML error %s)" % (exc, getattr(exc, "value", None)))
    finally:
        try:
            nvml.nvmlShutdown()
        except nvml.NVMLError:
            pass


def _system(nvml, name):
    function = getattr(nvml, name, None)
    if function is None:
        return None
    try:
        return function()
    except nvml.NVMLError:
        return None
