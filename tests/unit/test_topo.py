# SPDX-License-Identifier: GPL-3.0-or-later
"""nvidia-smi topo -m parser on real captures: the driver's tab-separated single-GPU output with the header
underlined by terminal escape codes (three drivers/models), and two multi-GPU/NIC tables (HGX H100 with 8 NICs;
a PCIe server whose NICs are not under the GPUs' switches). Faults are edits of those captures."""

from __future__ import annotations

import os

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._host.topo import parse_topo

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "nvidia-smi")


def _read(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        return handle.read()


H100X8 = _read("topo-m-h100x8-8nic.txt")
ASUS = _read("topo-m-asus-esc8000a-e12-4gpu-4nic.txt")


@pytest.mark.parametrize("name, cpus", [
    ("excerpt-h100-80gb-hbm3-topo-m.txt", "0-19"),
    ("excerpt-h100-mig-topo-m.txt", "0-19"),
    ("excerpt-l40s-topo-m.txt", "0-7"),
])
def test_single_gpu_captures_with_escape_codes(name, cpus):
    text = _read(name)
    assert "\x1b[4m" in text and "\t\t" in text  # the underline codes and the driver's empty field are there
    assert parse_topo(text) == {
        "devices": ["GPU0"],
        "gpus": [{"name": "GPU0", "index": 0, "cpu_affinity": cpus, "numa_affinity": 0, "gpu_numa_id": None}],
        "nics": [],
        "matrix": {"GPU0": {"GPU0": "X"}},
    }


def test_hgx_h100_eight_gpus_eight_nics_exact_matrix():
    topo = parse_topo(H100X8)
    gpus = ["GPU%d" % index for index in range(8)]
    nics = ["NIC%d" % index for index in range(8)]
    assert topo["devices"] == gpus + nics
    assert topo["nics"] == [{"name": "NIC%d" % index, "device": "mlx5_%d" % index} for index in range(8)]
    assert [(gpu["name"], gpu["cpu_affinity"], gpu["numa_affinity"], gpu["gpu_numa_id"]) for gpu in topo["gpus"]] == [
        ("GPU%d" % index, "0-47,96-143" if index < 4 else "48-95,144-191", 0 if index < 4 else 1, None)
        for index in range(8)]
    for row in range(8):
        for column in range(8):
            assert topo["matrix"]["GPU%d" % row]["GPU%d" % column] == ("X" if row == column else "NV18")
    # each GPU has its own NIC on its PCIe switch; the other NICs of its socket are NODE, the far socket's SYS
    for row in range(16):
        name = topo["devices"][row]
        for column in range(16):
            other = topo["devices"][column]
            a, b = row % 8, column % 8
            if name == other:
                want = "X"
            elif name.startswith("GPU") and other.startswith("GPU"):
                want = "NV18"
            elif name[:3] != other[:3] and a == b:
                want = "PIX"
            else:
                want = "NODE" if (a < 4) == (b < 4) else "SYS"
            assert topo["matrix"][name][other] == want, (name, other)


def test_pcie_server_nics_not_under_the_gpu_switches():
    topo = parse_topo(ASUS)
    assert topo["matrix"] == {
        "GPU0": {"GPU0": "X", "GPU1": "NODE", "GPU2": "SYS", "GPU3": "SYS", "NIC0": "NODE", "NIC1": "NODE", "NIC2": "SYS", "NIC3": "SYS"},
        "GPU1": {"GPU0": "NODE", "GPU1": "X", "GPU2": "SYS", "GPU3": "SYS", "NIC0": "NODE", "NIC1": "NODE", "NIC2": "SYS", "NIC3": "SYS"},
        "GPU2": {"GPU0": "SYS", "GPU1": "SYS", "GPU2": "X", "GPU3": "NODE", "NIC0": "SYS", "NIC1": "SYS", "NIC2": "NODE", "NIC3": "NODE"},
        "GPU3": {"GPU0": "SYS", "GPU1": "SYS", "GPU2": "NODE", "GPU3": "X", "NIC0": "SYS", "NIC1": "SYS", "NIC2": "NODE", "NIC3": "NODE"},
        "NIC0": {"GPU0": "NODE", "GPU1": "NODE", "GPU2": "SYS", "GPU3": "SYS", "NIC0": "X", "NIC1": "PIX", "NIC2": "SYS", "NIC3": "SYS"},
        "NIC1": {"GPU0": "NODE", "GPU1": "NODE", "GPU2": "SYS", "GPU3": "SYS", "NIC0": "PIX", "NIC1": "X", "NIC2": "SYS", "NIC3": "SYS"},
        "NIC2": {"GPU0": "SYS", "GPU1": "SYS", "GPU2": "NODE", "GPU3": "NODE", "NIC0": "SYS", "NIC1": "SYS", "NIC2": "X", "NIC3": "PIX"},
        "NIC3": {"GPU0": "SYS", "GPU1": "SYS", "GPU2": "NODE", "GPU3": "NODE", "NIC0": "SYS", "NIC1": "SYS", "NIC2": "PIX", "NIC3": "X"},
    }
    assert [(gpu["cpu_affinity"], gpu["numa_affinity"]) for gpu in topo["gpus"]] == [
        ("0-31", 0), ("0-31", 0), ("32-63", 1), ("32-63", 1)]


def test_older_driver_columns_named_after_the_device():
    # the pre-legend layout: edit the capture's NIC column/row names to the device names, legend dropped
    text = ASUS.split("\n\nLegend:")[0]
    for index in range(4):
        text = text.replace("NIC%d" % index, "mlx5_%d" % index)
    topo = parse_topo(text)
    assert topo["nics"] == [{"name": "mlx5_%d" % index, "device": "mlx5_%d" % index} for index in range(4)]
    assert topo["matrix"]["GPU2"]["mlx5_3"] == "NODE"


def test_unknown_link_word_is_kept_and_reported():
    warnings = []
    text = H100X8.replace("GPU0     X      NV18", "GPU0     X      NV?8", 1)
    topo = parse_topo(text, warn=warnings.append)
    assert topo["matrix"]["GPU0"]["GPU1"] == "NV?8"
    assert warnings == ["nvidia-smi topo: unknown link 'NV?8' between GPU0 and GPU1; kept as printed, please report"]


@pytest.mark.parametrize("text, message", [
    ("", "nvidia-smi topo: empty output"),
    ("Failed to initialize NVML: Driver/library version mismatch\n",
     "nvidia-smi topo: no matrix header (a line naming GPU0 as a column) in the output"),
    (ASUS.replace("NIC3    SYS     SYS     NODE    NODE    SYS     SYS     PIX      X\n", ""), "nvidia-smi topo: no row for NIC3"),
    (ASUS.replace("GPU1    NODE     X      SYS     SYS     NODE    NODE    SYS     SYS     0-31    0               N/A",
                  "GPU1    NODE     X      SYS"),
     "nvidia-smi topo: line 3: row GPU1 has 3 link cells, the header has 8 columns"),
    (ASUS.replace("NIC0    NODE", "NIC9    NODE"),
     "nvidia-smi topo: line 6: row 'NIC9' is not a column of the header (GPU0 GPU1 GPU2 GPU3 NIC0 NIC1 NIC2 NIC3)"),
    (ASUS.replace("GPU0     X ", "GPU0    SYS", 1), "nvidia-smi topo: line 2: row GPU0 does not have X on the diagonal ('SYS')"),
])
def test_unreadable_output_raises_parse_error(text, message):
    with pytest.raises(ParseError) as info:
        parse_topo(text)
    assert info.value.message == message
