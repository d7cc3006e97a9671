# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""nvidia-smi ``-q`` / ``-q -x`` parsers against the real captures in tests/fixtures/nvidia-smi (see PROVENANCE.md).

Every expected value below was read from the capture file it is checked against. Only the ERR!/unknown-line
tests edit a capture in memory (and say which line they change), because no real ``-q`` capture here
contains ERR! (only the default-table capture default-table-geforce-24gb-525-fan-ERR.txt does).
"""

from __future__ import annotations

import ast
import os
import re
import sys

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import nvidia_smi
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu.nvidia_smi import parse, parse_text, parse_xml

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "fixtures", "nvidia-smi")


def read_fixture(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        return handle.read()


def _names(pattern):
    regex = re.compile(pattern)
    return sorted(name for name in os.listdir(FIXTURES) if regex.match(name))


XML_FILES = _names(r"^q-x-.*\.xml$")
TEXT_FILES = _names(r"^(q-(?!x-).*\.txt|excerpt-.*-q-load\.txt)$")

NOT_ACTIVE = dict.fromkeys(nvidia_smi.THROTTLE_KEYS, False)
IDLE = dict(NOT_ACTIVE, gpu_idle=True)
NO_TLIMIT = {"tlimit_c": None, "shutdown_tlimit_c": None, "slowdown_tlimit_c": None,
             "max_operating_tlimit_c": None, "memory_max_tlimit_c": None}
NO_ABSOLUTE = {"shutdown_c": None, "slowdown_c": None, "max_operating_c": None, "memory_max_c": None}
ECC_ZERO = {"mode_current": True, "mode_pending": True, "volatile_corrected": 0, "volatile_uncorrected": 0,
            "aggregate_corrected": 0, "aggregate_uncorrected": 0}
ROWS_CLEAN = {"correctable": 0, "uncorrectable": 0, "pending": False, "failure": False}


def rows_clean(banks):
    """No remapped row, every one of the capture's ``banks`` DRAM banks with all its reserved rows (histogram Max)."""
    return dict(ROWS_CLEAN, banks={"max": banks, "high": 0, "partial": 0, "low": 0, "none": 0})


PAGES_NA = {"single_bit": None, "double_bit": None, "pending": None}

# file -> (header facts, [per-GPU expected subsets, in printed (bus) order]); nested dicts compare whole.
EXPECTED = {
    "q-x-a100-sxm4-80gb-mig-535.xml": (
        {"source": "xml", "timestamp": "Fri Aug  4 11:44:30 2023", "driver_version": "535.54.03",
         "cuda_version": "12.2", "attached_gpus": 4},  # 4 attached, one <gpu> printed (see the fewer-blocks test)
        [{"index": 1, "name": "NVIDIA A100-SXM4-80GB", "brand": "NVIDIA", "architecture": "Ampere",
          "uuid": "GPU-513536b6-7d19-9063-b049-1e69664bb298", "serial": "1650522003820",
          "pci_bus_id": "0000:01:00.0", "vbios_version": "92.00.36.00.02", "persistence_mode": False,
          "mig_mode": {"current": "Enabled", "pending": "Enabled"},
          "memory": {"total_mib": 81920, "used_mib": 50, "reserved_mib": 869},
          "temperature": dict(NO_TLIMIT, gpu_c=27, memory_c=44, shutdown_c=92, slowdown_c=89, max_operating_c=85,
                              memory_max_c=95),
          "power": {"draw_w": 67.03, "instant_draw_w": None, "limit_w": 500.0, "default_limit_w": 500.0,
                    "min_limit_w": 100.0, "max_limit_w": 500.0},
          "clocks": {"graphics_mhz": 1275, "sm_mhz": 1275, "memory_mhz": 1593, "max_graphics_mhz": 1410,
                     "max_sm_mhz": 1410, "max_memory_mhz": 1593},
          "pcie": {"gen_current": 4, "gen_max": 4, "width_current": 16, "width_max": 16, "replays": 0},
          "fan_speed_pct": None, "performance_state": "P0", "ecc": ECC_ZERO, "retired_pages": PAGES_NA,
          "remapped_rows": None, "throttle": NOT_ACTIVE, "processes": [], "unreadable": []}],
    ),
    "q-x-a10g-515.xml": (
        {"source": "xml", "timestamp": "Mon Apr 24 16:11:51 2023", "driver_version": "515.105.01",
         "cuda_version": "11.7", "attached_gpus": 1},
        [{"index": 0, "name": "NVIDIA A10G", "architecture": "Ampere",
          "uuid": "GPU-9a9a6c50-2a47-2f51-a902-b82c3b127e94",
          "serial": "0000000000000", "pci_bus_id": "0000:00:1E.0", "vbios_version": "94.02.75.00.01",
          "mig_mode": {"current": None, "pending": None},
          "memory": {"total_mib": 23028, "used_mib": 22, "reserved_mib": 435},
          "temperature": dict(NO_TLIMIT, gpu_c=17, memory_c=None, shutdown_c=98, slowdown_c=95, max_operating_c=88,
                              memory_max_c=None),
          "power": {"draw_w": 25.58, "instant_draw_w": None, "limit_w": 300.0, "default_limit_w": 300.0,
                    "min_limit_w": 100.0, "max_limit_w": 300.0},
          "pcie": {"gen_current": 1, "gen_max": 4, "width_current": 8, "width_max": 16, "replays": 0},
          "fan_speed_pct": 0, "performance_state": "P8", "ecc": ECC_ZERO, "retired_pages": PAGES_NA,
          "remapped_rows": rows_clean(192), "throttle": IDLE,  # older <clocks_throttle_reasons> schema
          "processes": [{"pid": 725, "type": "G", "name": "/usr/lib/xorg/Xorg", "used_memory_mib": 22}]}],
    ),
    "q-x-tesla-t4-515.xml": (
        {"source": "xml", "timestamp": "Mon Apr 24 16:22:39 2023", "driver_version": "515.105.01",
         "cuda_version": "11.7", "attached_gpus": 1},
        [{"index": 0, "name": "Tesla T4", "architecture": "Turing", "uuid": "GPU-d37e67a5-91dd-3774-a5cb-99096249601a",
          "pci_bus_id": "0000:00:1E.0", "vbios_version": "90.04.84.00.06",
          "memory": {"total_mib": 15360, "used_mib": 1032, "reserved_mib": 388},
          # absolute thresholds, no T.Limit element at all in this schema
          "temperature": dict(NO_TLIMIT, gpu_c=40, memory_c=None, shutdown_c=96, slowdown_c=93, max_operating_c=85,
                              memory_max_c=None),
          "power": {"draw_w": 26.78, "instant_draw_w": None, "limit_w": 70.0, "default_limit_w": 70.0,
                    "min_limit_w": 60.0, "max_limit_w": 70.0},
          "clocks": {"graphics_mhz": 585, "sm_mhz": 585, "memory_mhz": 5000, "max_graphics_mhz": 1590,
                     "max_sm_mhz": 1590, "max_memory_mhz": 5001},
          "pcie": {"gen_current": 3, "gen_max": 3, "width_current": 8, "width_max": 16, "replays": 0},
          "ecc": ECC_ZERO, "retired_pages": {"single_bit": 0, "double_bit": 0, "pending": False},
          "remapped_rows": None, "throttle": NOT_ACTIVE,
          "processes": [{"pid": 675, "type": "G", "name": "/usr/lib/xorg/Xorg", "used_memory_mib": 22},
                        {"pid": 5762, "type": "C", "name": "python", "used_memory_mib": 1005}]}],
    ),
    "q-h100x8-535.161.08-hw-power-brake-slowdown.txt": (
        {"source": "text", "timestamp": "Wed Jul 31 11:22:39 2024", "driver_version": "535.161.08",
         "cuda_version": "12.2", "attached_gpus": 8},
        [{"index": 0, "name": "NVIDIA H100 80GB HBM3", "brand": "NVIDIA", "architecture": "Hopper",
          "uuid": "GPU-ee7954ec-da95-fd7a-ddfd-c6b32cc2f8aa", "serial": "1650124031592", "pci_bus_id": "0000:19:00.0",
          "vbios_version": "96.00.74.00.0D", "persistence_mode": True,
          "mig_mode": {"current": "Disabled", "pending": "Disabled"},
          "memory": {"total_mib": 81559, "used_mib": 0, "reserved_mib": 551},
          "temperature": dict(NO_ABSOLUTE, gpu_c=29, memory_c=39, tlimit_c=56, shutdown_tlimit_c=-8,
                              slowdown_tlimit_c=-2, max_operating_tlimit_c=0, memory_max_tlimit_c=0),
          "power": {"draw_w": 67.74, "instant_draw_w": None, "limit_w": 700.0, "default_limit_w": 700.0,
                    "min_limit_w": 200.0, "max_limit_w": 700.0},
          "clocks": {"graphics_mhz": 86, "sm_mhz": 86, "memory_mhz": 2619, "max_graphics_mhz": 1980,
                     "max_sm_mhz": 1980, "max_memory_mhz": 2619},
          "pcie": {"gen_current": 5, "gen_max": 5, "width_current": 16, "width_max": 16, "replays": 67},
          "fan_speed_pct": None, "performance_state": "P0", "ecc": ECC_ZERO, "retired_pages": PAGES_NA,
          "remapped_rows": rows_clean(2560),
          "throttle": dict(NOT_ACTIVE, hw_slowdown=True, hw_power_brake_slowdown=True),
          "processes": [], "unreadable": []}]
        + [{"index": i, "uuid": uuid, "pci_bus_id": bus, "pcie": dict(
            {"gen_current": 5, "gen_max": 5, "width_current": 16, "width_max": 16}, replays=replays)}
           for i, (bus, uuid, replays) in enumerate((
               ("0000:19:00.0", "GPU-ee7954ec-da95-fd7a-ddfd-c6b32cc2f8aa", 67),
               ("0000:3B:00.0", "GPU-47daa2ad-a218-6286-252b-af45f0dfaf00", 63),
               ("0000:4C:00.0", "GPU-167d8376-ee13-fca4-938a-a05167c43cdc", 52),
               ("0000:5D:00.0", "GPU-afe9f2ed-9dd0-572c-3cd8-b42b58b3bc99", 43),
               ("0000:9B:00.0", "GPU-2b6f61f9-8b00-3b57-d912-b62792120662", 49),
               ("0000:BB:00.0", "GPU-980ea11b-91dc-db7b-72ac-0685abc43658", 53),
               ("0000:CB:00.0", "GPU-4ef109e9-e925-4834-2b85-0771b4ef696c", 82),
               ("0000:DB:00.0", "GPU-b0fe4996-1f7c-91f6-0ccd-08ae3b7e23c5", 67),
           ))][1:],
    ),
    "q-rtx4090x8-535.154.05.txt": (
        {"source": "text", "timestamp": "Sat Jul  6 15:09:26 2024", "driver_version": "535.154.05",
         "cuda_version": "12.2", "attached_gpus": 8},
        [{"index": 3, "name": "NVIDIA GeForce RTX 4090", "brand": "GeForce", "architecture": "Ada Lovelace",
          "uuid": "GPU-313bbff0-b0a0-fd26-4820-0578bdef3a12", "serial": None, "pci_bus_id": "0000:01:00.0",
          "vbios_version": "95.02.18.C0.09", "fan_speed_pct": 38, "performance_state": "P2",
          "memory": {"total_mib": 24564, "used_mib": 20328, "reserved_mib": 346},
          "temperature": dict(NO_ABSOLUTE, gpu_c=41, memory_c=None, tlimit_c=42, shutdown_tlimit_c=-7,
                              slowdown_tlimit_c=-2, max_operating_tlimit_c=0, memory_max_tlimit_c=None),
          "ecc": {"mode_current": False, "mode_pending": False, "volatile_corrected": None,
                  "volatile_uncorrected": None, "aggregate_corrected": None, "aggregate_uncorrected": None},
          "remapped_rows": rows_clean(192), "throttle": NOT_ACTIVE,
          "processes": [{"pid": 58130, "type": "C", "name": "/usr/bin/python", "used_memory_mib": 20322}],
          "unreadable": []},
         {"index": 2, "pci_bus_id": "0000:23:00.0", "uuid": "GPU-1a287db8-89a4-4cd7-5933-ae53d0c4d4ad"},
         {"index": 1, "pci_bus_id": "0000:41:00.0", "uuid": "GPU-a4f36154-6f3f-303f-e098-dec1632fd43f"},
         {"index": 0, "pci_bus_id": "0000:61:00.0", "uuid": "GPU-025f6884-1162-3032-9aab-14e0d5622783"},
         {"index": 7, "pci_bus_id": "0000:81:00.0", "pcie": {"gen_current": 1, "gen_max": 4, "width_current": 16,
                                                             "width_max": 16, "replays": 0}},
         {"index": 6, "pci_bus_id": "0000:A1:00.0", "processes": []},
         {"index": 5, "pci_bus_id": "0000:C1:00.0", "fan_speed_pct": 74, "temperature": dict(
             NO_ABSOLUTE, gpu_c=62, memory_c=None, tlimit_c=16, shutdown_tlimit_c=-7, slowdown_tlimit_c=-2,
             max_operating_tlimit_c=0, memory_max_tlimit_c=None)},
         {"index": 4, "pci_bus_id": "0000:E1:00.0", "uuid": "GPU-94f6cd0f-cb66-91a9-a3b0-7253e9f9a0ba",
          "power": {"draw_w": 25.91, "instant_draw_w": None, "limit_w": 450.0, "default_limit_w": 450.0,
                    "min_limit_w": 150.0, "max_limit_w": 450.0},
          "throttle": IDLE,
          "processes": [{"pid": 1102861, "type": "C", "name": "/opt/lepton/venv/bin/python3.10",
                         "used_memory_mib": 6482}]}],
    ),
    "q-titan-v-560.35.03.txt": (
        {"source": "text", "timestamp": "Fri Oct 18 10:13:00 2024", "driver_version": "560.35.03",
         "cuda_version": "12.6", "attached_gpus": 1},
        [{"index": 0, "name": "NVIDIA TITAN V", "brand": "Titan", "architecture": "Volta",
          "uuid": "GPU-f4c353ff-b56c-c1de-bcb9-7dad861b589a", "serial": "0334517001520", "pci_bus_id": "0000:01:00.0",
          "vbios_version": "88.00.36.00.01", "persistence_mode": False,
          "mig_mode": {"current": None, "pending": None},
          "temperature": dict(NO_TLIMIT, gpu_c=44, memory_c=41, shutdown_c=100, slowdown_c=97, max_operating_c=91,
                              memory_max_c=95),
          "power": {"draw_w": 29.02, "instant_draw_w": None, "limit_w": 250.0, "default_limit_w": 250.0,
                    "min_limit_w": 100.0, "max_limit_w": 300.0},
          "pcie": {"gen_current": 1, "gen_max": 3, "width_current": 16, "width_max": 16, "replays": 0},
          "fan_speed_pct": 30, "performance_state": "P8",
          # old Single Bit / Double Bit ECC layout, every counter N/A (consumer Volta, ECC unsupported)
          "ecc": {"mode_current": None, "mode_pending": None, "volatile_corrected": None,
                  "volatile_uncorrected": None, "aggregate_corrected": None, "aggregate_uncorrected": None},
          "retired_pages": PAGES_NA, "remapped_rows": None, "throttle": IDLE,
          "processes": [{"pid": 100607, "type": "G", "name": "/usr/lib/xorg/Xorg", "used_memory_mib": 142},
                        {"pid": 100838, "type": "G", "name": "/usr/bin/gnome-shell", "used_memory_mib": 33},
                        {"pid": 101815, "type": "G", "name": "/opt/test", "used_memory_mib": 111}],
          "unreadable": []}],
    ),
    "q-a10-535.129.03.txt": (
        {"source": "text", "timestamp": "Wed Sep 25 10:40:24 2024", "driver_version": "535.129.03",
         "cuda_version": "12.2", "attached_gpus": 1},
        [{"index": 0, "name": "NVIDIA A10", "architecture": "Ampere",
          "uuid": "GPU-73d12ef7-f589-f867-4259-c7090ab44736",
          "serial": "1324521052681", "pci_bus_id": "0000:07:00.0", "vbios_version": "94.02.5C.00.04",
          "persistence_mode": True, "memory": {"total_mib": 23028, "used_mib": 4, "reserved_mib": 512},
          "temperature": dict(NO_TLIMIT, gpu_c=33, memory_c=None, shutdown_c=101, slowdown_c=98, max_operating_c=91,
                              memory_max_c=None),
          "power": {"draw_w": 43.89, "instant_draw_w": None, "limit_w": 150.0, "default_limit_w": 150.0,
                    "min_limit_w": 100.0, "max_limit_w": 150.0},
          "fan_speed_pct": 0, "ecc": ECC_ZERO, "retired_pages": PAGES_NA,
          # as captured upstream: 4 uncorrectable remapped rows, remap pending
          "remapped_rows": dict(rows_clean(192), uncorrectable=4, pending=True),
          "throttle": IDLE, "processes": [], "unreadable": []}],
    ),
    "q-d-page-retirement-8gpu-clean.txt": (  # nvidia-smi -q -d PAGE_RETIREMENT: only Retired Pages per GPU
        {"source": "text", "timestamp": "Thu Mar 14 20:45:34 2024", "driver_version": "535.86.10",
         "cuda_version": "12.2", "attached_gpus": 8},
        [{"index": i, "pci_bus_id": "000%d:00:00.0" % (i + 1), "name": None, "uuid": None,
          "retired_pages": {"single_bit": 0, "double_bit": 0, "pending": False},
          "remapped_rows": None, "processes": None, "throttle": dict.fromkeys(nvidia_smi.THROTTLE_KEYS)}
         for i in range(8)],
    ),
    "excerpt-h100-80gb-hbm3-q-load.txt": (  # identifiers masked by the upstream collector
        {"source": "text", "timestamp": "Tue Jul 14 08:12:53 2026", "driver_version": "590.48.01",
         "cuda_version": "13.1", "attached_gpus": 1},
        [{"index": 0, "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-00000000-0000-0000-0000-000000000000",
          "serial": "0000000000000", "pci_bus_id": "0000:00:09.0", "vbios_version": "96.00.A5.00.01",
          "mig_mode": {"current": "Disabled", "pending": "Disabled"},
          "memory": {"total_mib": 81559, "used_mib": 19818, "reserved_mib": 479},
          "temperature": dict(NO_ABSOLUTE, gpu_c=59, memory_c=55, tlimit_c=26, shutdown_tlimit_c=-8,
                              slowdown_tlimit_c=-2, max_operating_tlimit_c=0, memory_max_tlimit_c=0),
          "power": {"draw_w": 629.45, "instant_draw_w": 588.39, "limit_w": 700.0, "default_limit_w": 700.0,
                    "min_limit_w": 200.0, "max_limit_w": 700.0},
          "clocks": {"graphics_mhz": 1980, "sm_mhz": 1980, "memory_mhz": 2619, "max_graphics_mhz": 1980,
                     "max_sm_mhz": 1980, "max_memory_mhz": 2619},
          "pcie": {"gen_current": 5, "gen_max": 5, "width_current": 16, "width_max": 16, "replays": 9},
          "ecc": ECC_ZERO, "remapped_rows": rows_clean(2560), "throttle": NOT_ACTIVE,
          "processes": [{"pid": 11327, "type": "C", "name": "/root/tools/memhog", "used_memory_mib": 2566},
                        {"pid": 11328, "type": "C", "name": "/root/tools/memhog", "used_memory_mib": 1542},
                        {"pid": 11345, "type": "C", "name": "./gpu_burn", "used_memory_mib": 15690}],
          "unreadable": []}],
    ),
    "excerpt-h100-mig-q-load.txt": (
        {"source": "text", "timestamp": "Tue Jul 14 09:00:44 2026", "driver_version": "590.48.01",
         "cuda_version": "13.1", "attached_gpus": 1},
        [{"index": 0, "name": "NVIDIA H100 80GB HBM3", "pci_bus_id": "0000:00:09.0",
          "mig_mode": {"current": "Enabled", "pending": "Enabled"},
          "memory": {"total_mib": 81559, "used_mib": 11125, "reserved_mib": 479},
          "temperature": dict(NO_ABSOLUTE, gpu_c=53, memory_c=58, tlimit_c=24, shutdown_tlimit_c=-8,
                              slowdown_tlimit_c=-2, max_operating_tlimit_c=0, memory_max_tlimit_c=0),
          "power": {"draw_w": 432.21, "instant_draw_w": 444.72, "limit_w": 700.0, "default_limit_w": 700.0,
                    "min_limit_w": 200.0, "max_limit_w": 700.0},
          "ecc": ECC_ZERO, "remapped_rows": None,  # "Remapped Rows : N/A" while MIG is enabled
          "processes": [{"pid": 21180, "type": "C", "name": "/root/tools/memhog", "used_memory_mib": 2296},
                        {"pid": 21181, "type": "C", "name": "/root/tools/memhog", "used_memory_mib": 1272},
                        {"pid": 21198, "type": "C", "name": "./gpu_burn", "used_memory_mib": 7484}]}],
    ),
    "excerpt-l40s-q-load.txt": (
        {"source": "text", "timestamp": "Fri Jul  3 08:33:53 2026", "driver_version": "595.80",
         "cuda_version": "13.2", "attached_gpus": 1},
        [{"index": 0, "name": "NVIDIA L40S", "architecture": "Ada Lovelace", "pci_bus_id": "0000:01:00.0",
          "vbios_version": "95.02.66.00.02", "persistence_mode": False,
          "memory": {"total_mib": 46068, "used_mib": 1235, "reserved_mib": 609},
          "temperature": dict(NO_ABSOLUTE, gpu_c=54, memory_c=None, tlimit_c=34, shutdown_tlimit_c=-5,
                              slowdown_tlimit_c=-2, max_operating_tlimit_c=0, memory_max_tlimit_c=None),
          "power": {"draw_w": 110.24, "instant_draw_w": 110.01, "limit_w": 350.0, "default_limit_w": 350.0,
                    "min_limit_w": 100.0, "max_limit_w": 350.0},
          "pcie": {"gen_current": 4, "gen_max": 4, "width_current": 16, "width_max": 16, "replays": 0},
          "ecc": ECC_ZERO, "remapped_rows": rows_clean(192),
          "processes": [{"pid": 20037, "type": "C", "name": "ffmpeg", "used_memory_mib": 538},
                        {"pid": 20038, "type": "C", "name": "ffmpeg", "used_memory_mib": 681}]}],
    ),
}


def _flat_keys(value, prefix=""):
    if isinstance(value, dict):
        keys = set()
        for key, sub in value.items():
            keys.add(prefix + key)
            keys |= _flat_keys(sub, prefix + key + ".")
        return keys
    return set()


def _contract_keys():
    gpu = {"index", "name", "brand", "architecture", "uuid", "serial", "pci_bus_id", "vbios_version",
           "persistence_mode", "mig_mode", "memory", "temperature", "power", "clocks", "pcie", "fan_speed_pct", "fabric",
           "performance_state", "ecc", "retired_pages", "remapped_rows", "throttle", "processes", "mig_devices",
           "throttle_counters_us", "unreadable"}
    nested = {
        "mig_mode": ("current", "pending"), "memory": ("total_mib", "used_mib", "reserved_mib"),
        "temperature": ("gpu_c", "memory_c", "shutdown_c", "slowdown_c", "max_operating_c", "memory_max_c",
                        "tlimit_c", "shutdown_tlimit_c", "slowdown_tlimit_c", "max_operating_tlimit_c",
                        "memory_max_tlimit_c"),
        "power": ("draw_w", "instant_draw_w", "limit_w", "default_limit_w", "min_limit_w", "max_limit_w"),
        "clocks": ("graphics_mhz", "sm_mhz", "memory_mhz", "max_graphics_mhz", "max_sm_mhz", "max_memory_mhz"),
        "pcie": ("gen_current", "gen_max", "width_current", "width_max", "replays"),
        "ecc": ("mode_current", "mode_pending", "volatile_corrected", "volatile_uncorrected", "aggregate_corrected",
                "aggregate_uncorrected"),
        "retired_pages": ("single_bit", "double_bit", "pending"),
        "fabric": ("state", "status", "clique_id", "cluster_uuid", "health"),
        "fabric.health": ("summary", "bandwidth", "route_recovery", "route_unhealthy", "access_timeout_recovery",
                          "incorrect_configuration"),
        "throttle": nvidia_smi.THROTTLE_KEYS,
    }
    return gpu | set("%s.%s" % (section, key) for section, keys in nested.items() for key in keys)


def _gpu_keys(gpu):
    keys = _flat_keys(gpu)
    # the counters are a mapping or null: one contract key either way (their keys: test_gpu_throttle_rate)
    keys = set("throttle_counters_us" if key.startswith("throttle_counters_us.") else key for key in keys)
    return set(key for key in keys if not key.startswith("remapped_rows."))


def test_every_capture_has_expectations():
    assert XML_FILES == ["q-x-a100-sxm4-80gb-mig-535.xml", "q-x-a10g-515.xml", "q-x-tesla-t4-515.xml"]
    assert len(TEXT_FILES) == 8
    assert sorted(EXPECTED) == sorted(XML_FILES + TEXT_FILES)


@pytest.mark.parametrize("name", XML_FILES + TEXT_FILES)
def test_capture_values(name):
    header, gpus = EXPECTED[name]
    warnings = []
    facts = parse(read_fixture(name), warn=warnings.append)
    assert warnings == []
    assert dict((key, facts[key]) for key in header) == header
    assert len(facts["gpus"]) == len(gpus)
    for got, want in zip(facts["gpus"], gpus):
        assert dict((key, got[key]) for key in want) == want


@pytest.mark.parametrize("name", XML_FILES)
def test_xml_entry_point(name):
    assert parse_xml(read_fixture(name)) == parse(read_fixture(name))


@pytest.mark.parametrize("name", TEXT_FILES)
def test_text_entry_point(name):
    assert parse_text(read_fixture(name)) == parse(read_fixture(name))


@pytest.mark.parametrize("name", XML_FILES + TEXT_FILES)
def test_every_gpu_has_the_contract_shape(name):
    facts = parse(read_fixture(name))
    assert set(facts) == {"source", "timestamp", "driver_version", "cuda_version", "attached_gpus", "gpus"}
    for gpu in facts["gpus"]:
        assert _gpu_keys(gpu) == _contract_keys()
        assert gpu["remapped_rows"] is None or set(gpu["remapped_rows"]) == set(ROWS_CLEAN) | {"banks"}


@pytest.mark.parametrize("xml_name, text_name, read_in_both, null_in_both", [
    # sram/dram ECC, remapped rows, <clocks_throttle_reasons> vs "Clocks Event Reasons", absolute thresholds
    ("q-x-a10g-515.xml", "q-a10-535.129.03.txt",
     ["ecc.volatile_corrected", "ecc.aggregate_uncorrected", "remapped_rows.correctable", "remapped_rows.pending",
      "throttle.gpu_idle", "throttle.hw_power_brake_slowdown", "throttle.display_clocks_setting", "pcie.gen_max",
      "pcie.width_current", "pcie.replays", "power.limit_w", "power.min_limit_w", "memory.reserved_mib",
      "clocks.max_memory_mhz", "temperature.shutdown_c", "temperature.max_operating_c", "fan_speed_pct"],
     ["temperature.tlimit_c", "temperature.memory_c", "retired_pages.single_bit", "retired_pages.pending",
      "mig_mode.current"]),
    # old "Single Bit / Double Bit" text ECC vs XML sram/dram; absolute thresholds in both
    ("q-x-tesla-t4-515.xml", "q-titan-v-560.35.03.txt",
     ["temperature.shutdown_c", "temperature.slowdown_c", "temperature.max_operating_c", "power.draw_w",
      "clocks.max_sm_mhz", "processes"],
     ["temperature.tlimit_c", "temperature.shutdown_tlimit_c", "remapped_rows", "mig_mode.pending"]),
    # MIG enabled in both; remapped rows N/A in both
    ("q-x-a100-sxm4-80gb-mig-535.xml", "excerpt-h100-mig-q-load.txt",
     ["mig_mode.current", "mig_mode.pending", "ecc.aggregate_corrected", "temperature.memory_c"],
     ["remapped_rows", "retired_pages.double_bit", "fan_speed_pct"]),
])
def test_xml_and_text_land_in_the_same_keys(xml_name, text_name, read_in_both, null_in_both):
    xml_gpu = parse(read_fixture(xml_name))["gpus"][0]
    text_gpu = parse(read_fixture(text_name))["gpus"][0]
    assert _gpu_keys(xml_gpu) == _gpu_keys(text_gpu) == _contract_keys()

    def get(gpu, dotted):
        section, _dot, field = dotted.partition(".")
        return gpu[section][field] if field else gpu[section]

    assert [key for key in read_in_both if get(xml_gpu, key) is None or get(text_gpu, key) is None] == []
    assert [key for key in null_in_both if get(xml_gpu, key) is not None or get(text_gpu, key) is not None] == []


def test_throttle_reasons_active_on_every_h100_of_the_power_brake_capture():
    facts = parse(read_fixture("q-h100x8-535.161.08-hw-power-brake-slowdown.txt"))
    assert [g["throttle"] for g in facts["gpus"]] == [dict(NOT_ACTIVE, hw_slowdown=True,
                                                           hw_power_brake_slowdown=True)] * 8
    assert [g["power"]["draw_w"] for g in facts["gpus"]] == [67.74, 69.52, 70.55, 71.37, 70.33, 70.21, 71.05, 72.27]


def test_remapped_rows_present_on_h100_and_none_on_titan_v():
    h100 = parse(read_fixture("q-h100x8-535.161.08-hw-power-brake-slowdown.txt"))
    assert [g["remapped_rows"] for g in h100["gpus"]] == [rows_clean(2560)] * 8
    assert parse(read_fixture("q-titan-v-560.35.03.txt"))["gpus"][0]["remapped_rows"] is None


def test_tlimit_form_vs_absolute_thresholds():
    h100 = parse(read_fixture("q-h100x8-535.161.08-hw-power-brake-slowdown.txt"))["gpus"][0]["temperature"]
    assert (h100["tlimit_c"], h100["shutdown_c"], h100["slowdown_c"]) == (56, None, None)
    t4 = parse(read_fixture("q-x-tesla-t4-515.xml"))["gpus"][0]["temperature"]
    assert (t4["tlimit_c"], t4["shutdown_c"], t4["slowdown_c"], t4["max_operating_c"]) == (None, 96, 93, 85)


def test_xml_with_fewer_gpu_blocks_than_attached_is_accepted():
    # the A100 capture says <attached_gpus>4</attached_gpus> and prints one <gpu> (as `-i` does);
    # a well-formed XML document is complete, so the facts keep both numbers for a rule to compare.
    facts = parse(read_fixture("q-x-a100-sxm4-80gb-mig-535.xml"))
    assert (facts["attached_gpus"], len(facts["gpus"]), facts["gpus"][0]["index"]) == (4, 1, 1)


# ---- ERR! / N/A handling ------------------------------------------------------------------------------

def test_text_err_values_are_null_and_listed_unreadable():
    text = read_fixture("q-a10-535.129.03.txt")
    edits = (  # (line as captured, replacement)
        ("    Fan Speed                             : 0 %", "    Fan Speed                             : ERR!"),
        ("        GPU Current Temp                  : 33 C",
         "        GPU Current Temp                  : [Unknown Error]"),
        ("            DRAM Correctable              : 0\n            DRAM Uncorrectable            : 0\n"
         "        Aggregate",
         "            DRAM Correctable              : ERR!\n            DRAM Uncorrectable            : 0\n"
         "        Aggregate"),
        ("        Graphics                          : 225 MHz",
         "        Graphics                          : [GPU is lost]"),
    )
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    gpu = parse(text)["gpus"][0]
    assert (gpu["fan_speed_pct"], gpu["temperature"]["gpu_c"], gpu["clocks"]["graphics_mhz"]) == (None, None, None)
    assert (gpu["ecc"]["volatile_corrected"], gpu["ecc"]["volatile_uncorrected"]) == (None, 0)
    assert gpu["unreadable"] == ["temperature.gpu_c", "clocks.graphics_mhz", "fan_speed_pct", "ecc.volatile_corrected"]


def test_xml_err_values_are_null_and_listed_unreadable():
    xml = read_fixture("q-x-tesla-t4-515.xml")
    for old, new in (("<fan_speed>N/A</fan_speed>", "<fan_speed>ERR!</fan_speed>"),
                     ("<power_draw>26.78 W</power_draw>", "<power_draw>[GPU is lost]</power_draw>")):
        assert xml.count(old) == 1
        xml = xml.replace(old, new)
    gpu = parse(xml)["gpus"][0]
    assert (gpu["fan_speed_pct"], gpu["power"]["draw_w"]) == (None, None)
    assert gpu["unreadable"] == ["power.draw_w", "fan_speed_pct"]


def test_not_available_spellings_are_null_but_not_unreadable():
    text = read_fixture("q-a10-535.129.03.txt")
    for old, new in (("Fan Speed                             : 0 %", "Fan Speed                             : [N/A]"),
                     ("Power Draw                        : 43.89 W",
                      "Power Draw                        : Not Supported"),
                     ("Current Power Limit               : 150.00 W",
                      "Current Power Limit               : [Not Supported]")):
        assert text.count(old) == 1
        text = text.replace(old, new)
    gpu = parse(text)["gpus"][0]
    assert (gpu["fan_speed_pct"], gpu["power"]["draw_w"], gpu["power"]["limit_w"]) == (None, None, None)
    assert gpu["unreadable"] == []
    # "Requested functionality has been deprecated" (590+ drivers) and real N/A fields read as null too
    l40s = parse(read_fixture("excerpt-l40s-q-load.txt"))["gpus"][0]
    assert (l40s["fan_speed_pct"], l40s["unreadable"]) == (None, [])


# ---- warn() instead of exceptions --------------------------------------------------------------------

def test_unknown_lines_call_warn_not_raise():
    text = read_fixture("q-a10-535.129.03.txt")
    anchor = "        GPU Current Temp                  : 33 C\n"
    text = text.replace(anchor, anchor + "        GPU Hotspot Temp                  : 45 C\n")
    anchor = "        Sync Boost                        : Not Active\n"
    text = text.replace(anchor, anchor + "        Cosmic Ray                        : Active\n")
    anchor = "    Performance State                     : P8\n"
    text = text.replace(anchor, anchor + "    Quantum Flux                          : 7\n    ~~~ garbage ~~~\n")
    warnings = []
    facts = parse_text(text, warn=warnings.append)
    assert warnings == [
        "nvidia-smi: unexpected line 83 '~~~ garbage ~~~' (neither 'Label : value' nor a section); please report",
        "nvidia-smi: unknown field 'Quantum Flux' in a GPU block; please report",
        "nvidia-smi: unknown field 'GPU Hotspot Temp' in 'Temperature'; please report",
        "nvidia-smi: unknown clocks event reason 'Cosmic Ray'; please report",
    ]
    assert facts["gpus"][0]["temperature"]["gpu_c"] == 33
    assert parse_text(text)["gpus"][0]["name"] == "NVIDIA A10"  # warn=None: silently tolerated


def test_unknown_xml_tag_and_bad_value_call_warn():
    xml = read_fixture("q-x-tesla-t4-515.xml")
    xml = xml.replace("<fan_speed>N/A</fan_speed>", "<fan_speed>fast</fan_speed><warp_drive>on</warp_drive>")
    warnings = []
    gpu = parse_xml(xml, warn=warnings.append)["gpus"][0]
    assert warnings == ["nvidia-smi: unknown field 'warp_drive' in a GPU block; please report",
                        "nvidia-smi: unexpected value 'fast' for fan_speed_pct; please report"]
    assert (gpu["fan_speed_pct"], gpu["unreadable"]) == (None, [])


# ---- failures -----------------------------------------------------------------------------------------

def _h100_text_lines():
    return read_fixture("q-h100x8-535.161.08-hw-power-brake-slowdown.txt").splitlines(True)


def _failure_cases():
    t4 = read_fixture("q-x-tesla-t4-515.xml")
    h100 = _h100_text_lines()
    a10 = read_fixture("q-a10-535.129.03.txt")
    gpu_start = t4.index("    <gpu id=")
    gpu_end = t4.index("</gpu>") + len("</gpu>\n")
    return [
        ("empty", "", parse, re.escape("nvidia-smi: empty output")),
        ("whitespace", " \n\t\n  ", parse, re.escape("nvidia-smi: empty output")),
        ("xml cut in half", t4[:len(t4) // 2], parse,
         r"nvidia-smi: XML output is malformed or truncated "
         r"\((unclosed token|no element found): line \d+, column \d+\)"),
        ("xml wrong root", '<?xml version="1.0" ?>\n<nvidia_smi_report><gpu/></nvidia_smi_report>\n', parse,
         re.escape("nvidia-smi: XML root element is <nvidia_smi_report>, expected <nvidia_smi_log>")),
        ("xml without gpu", t4[:gpu_start] + t4[gpu_end:], parse,
         re.escape("nvidia-smi: no GPU block found (<attached_gpus> says 1)")),
        ("xml more gpus than attached", t4[:gpu_end] + t4[gpu_start:], parse,
         re.escape("nvidia-smi: found 2 GPU block(s) but <attached_gpus> says 1")),
        ("xml without attached_gpus", t4.replace("<attached_gpus>1</attached_gpus>", ""), parse,
         re.escape("nvidia-smi: XML output has no <attached_gpus>, so it is not nvidia-smi -q output "
                   "(first line: '<?xml version=\"1.0\" ?>')")),
        ("text cut mid-GPU", "".join(h100[:930]), parse,  # line 829 starts GPU 00000000:9B:00.0 (5th)
         re.escape('nvidia-smi: text output is truncated inside GPU block 00000000:9B:00.0: '
                   'found 5 GPU block(s), "Attached GPUs" says 8')),
        ("text cut at a GPU boundary", "".join(h100[:828]), parse,
         re.escape('nvidia-smi: text output is truncated: found 4 GPU block(s), "Attached GPUs" says 8')),
        ("single-GPU text cut", a10[:len(a10) // 2], parse,
         re.escape('nvidia-smi: text output is truncated inside GPU block 00000000:07:00.0: '
                   'found 1 GPU block(s), "Attached GPUs" says 1')),
        ("text header only", a10[:a10.index("GPU 00000000:07:00.0")], parse,
         re.escape('nvidia-smi: no GPU block found ("Attached GPUs" says 1)')),
        ("text bad count", a10.replace("Attached GPUs                             : 1",
                                       "Attached GPUs                             : one"), parse,
         re.escape("nvidia-smi: \"Attached GPUs\" value 'one' is not a count")),
        ("not nvidia-smi", "No devices were found\n", parse,
         re.escape('nvidia-smi: text output has no "Attached GPUs", so it is not nvidia-smi -q output '
                   "(first line: 'No devices were found')")),
        ("binary garbage str", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe", parse,
         re.escape("nvidia-smi: output contains binary data (NUL or control bytes), not nvidia-smi -q text or XML")),
        ("binary garbage bytes", bytes(range(256)) * 4, parse,
         re.escape("nvidia-smi: output contains binary data (NUL or control bytes), not nvidia-smi -q text or XML")),
        ("text given to parse_xml", a10, parse_xml,
         r"nvidia-smi: XML output is malformed or truncated \(not well-formed \(invalid token\): line 1, column 0\)"),
        ("xml given to parse_text", t4, parse_text,
         re.escape('nvidia-smi: text output has no "Attached GPUs", so it is not nvidia-smi -q output '
                   "(first line: '<?xml version=\"1.0\" ?>')")),
    ]


@pytest.mark.parametrize("label, text, func, message", _failure_cases(), ids=[c[0] for c in _failure_cases()])
def test_parse_errors(label, text, func, message):
    with pytest.raises(ParseError) as caught:
        func(text)
    assert re.fullmatch(message, str(caught.value)), str(caught.value)
    assert caught.value.tool == "nvidia-smi"
    assert caught.value.as_dict()["error_kind"] == "unparsable"


@pytest.mark.parametrize("name", ["q-x-a10g-515.xml", "q-titan-v-560.35.03.txt", "excerpt-h100-mig-q-load.txt"])
def test_any_cut_of_a_capture_parses_or_raises_parse_error(name):
    text = read_fixture(name)
    for end in range(1, len(text), 97):
        try:
            result = parse(text[:end])
        except ParseError:
            continue
        assert isinstance(result["gpus"], list)


def test_sniffing_tolerates_bom_and_leading_blank_lines():
    xml = read_fixture("q-x-a10g-515.xml")
    assert parse("\ufeff\n\n" + xml)["source"] == "xml"
    assert parse(xml.encode("utf-8"))["gpus"][0]["name"] == "NVIDIA A10G"
    assert parse("\n\n" + read_fixture("q-a10-535.129.03.txt"))["source"] == "text"


# ---- module_utils constraints (runs on managed nodes) --------------------------------------------------

MODULE_UTILS = os.path.dirname(os.path.abspath(nvidia_smi.__file__))


@pytest.mark.parametrize("filename", ["nvidia_smi.py", "_nvsmi_tree.py"])
def test_module_utils_is_stdlib_only_and_py39_syntax(filename):
    with open(os.path.join(MODULE_UTILS, filename), encoding="utf-8") as handle:
        source = handle.read()
    tree = ast.parse(source, feature_version=(3, 9))
    stdlib = set(getattr(sys, "stdlib_module_names", ())) | {"__future__"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module]
        else:
            assert not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "print")
            continue
        for name in names:
            assert name.startswith("ansible_collections.zhisuan.ops.") or name.split(".")[0] in stdlib, name
    assert "SPDX-License-Identifier: GPL-3.0-or-later" in source
    assert "# PRIVATE: this module_utils file is not part of the collection's public API" in source
