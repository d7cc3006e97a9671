# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""gpu_info ``source: nvml`` (issue 14): the NVML reader over the real pynvml binding.

pynvml is a binding to the driver's C library and this machine has no GPU, so the per-GPU answers are recorded ones:
a module object built from the REAL pynvml (its constants and its NVMLError classes) whose query functions return
the values of GPU 0 of the real 8x H100 capture (q-h100x8-535.161.08-hw-power-brake-slowdown.txt), in NVML's units
(mW, bytes). The facts must equal what the nvidia-smi parser reads from that capture for every judged field. The "no
driver" path runs the real binding: nvmlInit raises NVMLError_LibraryNotFound here, which must become a typed error.
"""

from __future__ import annotations

import os
import types

import pynvml
import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ToolFailed, ToolNotFound
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import nvidia_smi, nvml
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu.collect import collect_gpu_facts
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import gpu as rules

CAPTURE = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "nvidia-smi",
                       "q-h100x8-535.161.08-hw-power-brake-slowdown.txt")
with open(CAPTURE, encoding="utf-8") as _handle:
    SMI = nvidia_smi.parse(_handle.read())
GPU0 = SMI["gpus"][0]
MIB = 1024 * 1024


class Fails(object):
    """A recorded answer that is an NVML error (its return code)."""

    def __init__(self, code):
        self.code = code


def recorded_pynvml(answers=None, init_error=None):
    """A pynvml module: the real one's constants and error classes, query functions answering GPU 0's values."""
    fake = types.ModuleType("pynvml")
    for name, value in vars(pynvml).items():
        if name.startswith(("NVML_", "NVMLError", "nvmlClocks")):
            setattr(fake, name, value)
    calls = []

    def init():
        calls.append("init")
        if init_error is not None:
            raise pynvml.NVMLError(init_error)

    recorded = {
        "nvmlDeviceGetMinorNumber": 0,
        "nvmlDeviceGetName": GPU0["name"],
        "nvmlDeviceGetArchitecture": pynvml.NVML_DEVICE_ARCH_HOPPER,
        "nvmlDeviceGetUUID": GPU0["uuid"],
        "nvmlDeviceGetSerial": GPU0["serial"],
        "nvmlDeviceGetPciInfo": types.SimpleNamespace(busId="00000000:19:00.0"),
        "nvmlDeviceGetVbiosVersion": GPU0["vbios_version"],
        "nvmlDeviceGetPersistenceMode": 1,
        "nvmlDeviceGetMigMode": [0, 0],
        "nvmlDeviceGetMemoryInfo": types.SimpleNamespace(total=81559 * MIB, used=0, reserved=551 * MIB),
        "nvmlDeviceGetTemperature": 29,
        "nvmlDeviceGetTemperatureThreshold": Fails(pynvml.NVML_ERROR_NOT_SUPPORTED),  # H100 reports the T.Limit form
        "nvmlDeviceGetPowerUsage": 67740,
        "nvmlDeviceGetEnforcedPowerLimit": 700000,
        "nvmlDeviceGetPowerManagementDefaultLimit": 700000,
        "nvmlDeviceGetPowerManagementLimitConstraints": [200000, 700000],
        "nvmlDeviceGetClockInfo": 86,
        "nvmlDeviceGetMaxClockInfo": 1980,
        "nvmlDeviceGetCurrPcieLinkGeneration": 5,
        "nvmlDeviceGetMaxPcieLinkGeneration": 5,
        "nvmlDeviceGetCurrPcieLinkWidth": 16,
        "nvmlDeviceGetMaxPcieLinkWidth": 16,
        "nvmlDeviceGetPcieReplayCounter": 67,
        "nvmlDeviceGetFanSpeed": Fails(pynvml.NVML_ERROR_NOT_SUPPORTED),
        "nvmlDeviceGetPerformanceState": 0,
        "nvmlDeviceGetEccMode": [1, 1],
        "nvmlDeviceGetTotalEccErrors": 0,
        "nvmlDeviceGetRetiredPagesPendingStatus": Fails(pynvml.NVML_ERROR_NOT_SUPPORTED),
        "nvmlDeviceGetRetiredPages": Fails(pynvml.NVML_ERROR_NOT_SUPPORTED),
        "nvmlDeviceGetRemappedRows": [0, 0, 0, 0],
        # the capture's Bank Remap Availability Histogram, as NVML's c_nvmlRowRemapperHistogramValues gives it
        "nvmlDeviceGetRowRemapperHistogram": types.SimpleNamespace(max=2560, high=0, partial=0, low=0, none=0),
        # HW Slowdown + HW Power Brake Slowdown active, as the capture says
        "nvmlDeviceGetCurrentClocksEventReasons": pynvml.nvmlClocksEventReasonHwSlowdown
        | pynvml.nvmlClocksEventReasonHwPowerBrakeSlowdown,
        "nvmlDeviceGetComputeRunningProcesses": [],
    }
    recorded.update(answers or {})

    def query(name, value):
        def answer(handle, *args):
            assert handle == "handle-0"
            calls.append(name)
            if isinstance(value, Fails):
                raise pynvml.NVMLError(value.code)
            return value
        return answer

    for name, value in recorded.items():
        setattr(fake, name, query(name, value))
    fake.nvmlInit = init
    fake.nvmlShutdown = lambda: calls.append("shutdown")
    fake.nvmlSystemGetDriverVersion = lambda: SMI["driver_version"]
    fake.nvmlSystemGetCudaDriverVersion = lambda: 12020
    fake.nvmlDeviceGetCount = lambda: 1
    fake.nvmlDeviceGetHandleByIndex = lambda index: "handle-%d" % index
    fake.calls = calls
    return fake




def test_recorded_answers_give_the_facts_nvidia_smi_gives():
    fake = recorded_pynvml()
    facts = nvml.read_facts(fake)
    assert fake.calls[0] == "init" and fake.calls[-1] == "shutdown"
    assert (facts["source"], facts["driver_version"], facts["cuda_version"], facts["attached_gpus"]) == (
        "nvml", "535.161.08", "12.2", 1)
    gpu = facts["gpus"][0]
    for key in ("index", "name", "architecture", "uuid", "serial", "pci_bus_id", "vbios_version", "persistence_mode",
                "mig_mode", "memory", "power", "pcie", "performance_state", "ecc", "remapped_rows", "throttle",
                "processes"):
        assert gpu[key] == GPU0[key], key
    assert gpu["clocks"]["max_sm_mhz"] == GPU0["clocks"]["max_sm_mhz"]
    assert gpu["retired_pages"] == {"single_bit": None, "double_bit": None, "pending": None}
    assert gpu["temperature"]["gpu_c"] == 29 and gpu["temperature"]["slowdown_c"] is None
    assert gpu["unreadable"] == []  # NOT_SUPPORTED is "no such reading", not a failing read


def test_the_judge_finds_the_same_faults_in_nvml_facts():
    facts = nvml.read_facts(recorded_pynvml())
    failing = sorted((c["id"], c["remedy"]) for c in rules.judge_gpu("n", facts, None) if c["status"] == "fail")
    assert failing == [("gpu.throttle.hw_power_brake_slowdown", "investigate"), ("gpu.throttle.hw_slowdown", "investigate")]


def test_a_failing_query_is_unreadable_not_a_crash():
    fake = recorded_pynvml({"nvmlDeviceGetRemappedRows": Fails(pynvml.NVML_ERROR_GPU_IS_LOST)})
    gpu = nvml.read_facts(fake)["gpus"][0]
    assert gpu["remapped_rows"] is None and gpu["unreadable"] == ["remapped_rows"]
    checks = [c for c in rules.judge_gpu("n", {"gpus": [gpu]}, None) if c["id"] == "gpu.readout.unreadable"]
    assert (checks[0]["status"], checks[0]["observed"]) == ("warn", "remapped_rows")


def test_no_driver_on_this_machine_is_a_typed_not_found():
    # the real binding: this machine has no libnvidia-ml.so
    with pytest.raises(pynvml.NVMLError_LibraryNotFound):
        pynvml.nvmlInit()
    with pytest.raises(ToolNotFound) as info:
        nvml.read_facts()
    assert info.value.tool == "nvml" and info.value.kind == "not_found"
    assert "NVML Shared Library Not Found" in info.value.message and "libnvidia-ml.so" in info.value.message
    module = types.SimpleNamespace(params={"src": None, "source": "nvml", "nvidia_smi_path": "nvidia-smi",
                                           "timeout": 5, "nvlink": True, "nvlink_errors_window": 0}, warn=print)
    with pytest.raises(ToolNotFound):
        collect_gpu_facts(module)


def test_driver_not_loaded_is_tool_failed():
    with pytest.raises(ToolFailed) as info:
        nvml.read_facts(recorded_pynvml(init_error=pynvml.NVML_ERROR_DRIVER_NOT_LOADED))
    assert "the NVIDIA kernel driver is not loaded" in info.value.message
