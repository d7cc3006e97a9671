# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ``nvidia-smi nvlink -s`` parser (module_utils/_gpu/nvlink.py) on every real capture, edited variants for
the failure forms, and how its result is matched to the GPUs of ``nvidia-smi -q``."""

from __future__ import annotations

import os

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import nvidia_smi, nvlink

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "nvidia-smi")
A100_8GPU_UUIDS = [
    "GPU-5269b708-678a-b1a8-60f0-c90406537486", "GPU-a7605225-d684-1f65-4ad4-ee2ab39338b4",
    "GPU-483e6bb6-bb11-8916-e22f-d1d69abbafaa", "GPU-6e4fbadc-10d9-a63a-8988-9a0d320ff1a0",
    "GPU-82ef2c67-965f-a411-1413-f5e1d756bcdb", "GPU-375df896-019b-a009-42e5-ce9ed21bd8cc",
    "GPU-68d0f80e-e2f6-7717-ce0c-ea5f17b6a180", "GPU-754035b4-4708-efcd-b261-623aea38bcad",
]
MASKED = "GPU-00000000-0000-0000-0000-000000000000"
MIG_MESSAGE = "Nvlink queries are not supported for Devices in MIG mode"
ALL_INACTIVE = "NVML: Unable to retrieve NVLink information as all links are inactive"


def read(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        return handle.read()


def parse(text):
    warnings = []
    return nvlink.parse_status(text, warn=warnings.append), warnings


def summary(status):
    out = []
    for e in status:
        link = e["nvlink"]
        out.append((e["index"], e["uuid"], None if link is None else (link["active"], link["total"], link["message"])))
    return out


# ------------------------------------------------------------------------------------- real captures

@pytest.mark.parametrize("name, expected", [
    ("nvlink-s-a100-sxm4-healthy.txt", [(7, "GPU-c7e253b0-c227-6f10-e860-7482c85e7ce8", (12, 12, None))]),
    ("nvlink-status-a100-sxm4-8gpu.txt", [(i, A100_8GPU_UUIDS[i], (12, 12, None)) for i in range(8)]),
    ("excerpt-h100-80gb-hbm3-nvlink-s.txt", [(0, MASKED, (18, 18, None))]),
    ("excerpt-h100-mig-nvlink-s.txt", [(0, MASKED, (None, None, MIG_MESSAGE))]),
    ("excerpt-l40s-nvlink-s.txt", [(0, MASKED, None)]),
    ("nvlink-s-a100-sxm4-all-links-inactive.txt", [(6, "GPU-9667d95e-6d22-0c22-1f57-c481f13e7c44", (0, None, ALL_INACTIVE))]),
    ("nvlink-s-h100-pcie-x2-bridge-partial.txt", [(0, "GPU-6968dfc2-d444-d92c-c36b-6abe53445cb9", (12, 18, None)),
                                                  (1, "GPU-9b1446e2-8a89-4cf6-b68c-a98d99e958d3", (12, 18, None))]),
    # zhaochenyang20/Awesome-ML-SYS-Tutorial: `nvlink --status -i 0` of one H100 (issue 23), UUID not masked
    ("nvlink-s-h100-80gb-hbm3-gpu0.txt", [(0, "GPU-5a10e6e5-95f7-2785-ed63-6f6147f304f7", (18, 18, None))]),
])
def test_every_real_capture(name, expected):
    status, warnings = parse(read(name))
    assert summary(status) == expected
    assert warnings == []


def test_link_speeds_as_printed():
    (a100,), _ = parse(read("nvlink-s-a100-sxm4-healthy.txt"))
    assert a100["name"] == "NVIDIA A100-SXM4-80GB"
    assert a100["nvlink"]["links"][0] == {"link": 0, "active": True, "speed_gbs": 25.0}
    assert [link["link"] for link in a100["nvlink"]["links"]] == list(range(12))
    (h100,), _ = parse(read("excerpt-h100-80gb-hbm3-nvlink-s.txt"))
    assert set(link["speed_gbs"] for link in h100["nvlink"]["links"]) == {26.562}
    (tutorial,), _ = parse(read("nvlink-s-h100-80gb-hbm3-gpu0.txt"))
    assert tutorial["name"] == "NVIDIA H100 80GB HBM3"
    speeds = [(link["link"], link["speed_gbs"]) for link in tutorial["nvlink"]["links"]]
    assert speeds == [(number, 26.562) for number in range(18)]


def test_inactive_links_of_the_bridged_h100_pcie_pair():
    status, _ = parse(read("nvlink-s-h100-pcie-x2-bridge-partial.txt"))
    for entry in status:
        links = entry["nvlink"]["links"]
        assert [link["link"] for link in links if not link["active"]] == [4, 5, 10, 11, 16, 17]
        assert all(link["speed_gbs"] is None for link in links if not link["active"])
        assert all(link["speed_gbs"] == 26.562 for link in links if link["active"])


def test_inactive_spelled_in_capitals_and_a_down_link_edited_into_the_8gpu_capture():
    text = read("nvlink-status-a100-sxm4-8gpu.txt").replace(
        "GPU 3: NVIDIA A100-SXM4-80GB (UUID: GPU-6e4fbadc-10d9-a63a-8988-9a0d320ff1a0)\n         Link 0: 25 GB/s",
        "GPU 3: NVIDIA A100-SXM4-80GB (UUID: GPU-6e4fbadc-10d9-a63a-8988-9a0d320ff1a0)\n         Link 0: <inactive>")
    status, warnings = parse(text)
    assert (status[3]["nvlink"]["active"], status[3]["nvlink"]["total"]) == (11, 12)
    assert status[3]["nvlink"]["links"][0] == {"link": 0, "active": False, "speed_gbs": None}
    assert [e["nvlink"]["active"] for e in status if e["index"] != 3] == [12] * 7
    assert warnings == []
    capitals = read("nvlink-s-a100-sxm4-all-links-inactive.txt").replace("are inactive", "are inActive")
    (entry,), warnings = parse(capitals)
    assert (entry["nvlink"]["active"], warnings) == (0, [])


def test_empty_output_lists_no_gpu():
    assert parse("") == ([], [])
    assert parse("\n\n") == ([], [])


# ------------------------------------------------------------------------------------- edited variants

def test_unknown_link_state_counts_as_down_and_warns():
    text = read("nvlink-s-a100-sxm4-healthy.txt").replace("Link 4: 25 GB/s", "Link 4: Disabled")
    (entry,), warnings = parse(text)
    assert (entry["nvlink"]["active"], entry["nvlink"]["total"]) == (11, 12)
    assert warnings == ["nvidia-smi nvlink: unknown state 'Disabled' of GPU 7 link 4, counted as not active; please report"]


def test_unknown_message_is_kept_and_warns():
    text = read("excerpt-l40s-nvlink-s.txt").replace("Device does not have or support Nvlink", "Unknown Error")
    (entry,), warnings = parse(text)
    assert entry["nvlink"] == {"links": [], "active": None, "total": None, "message": "Unknown Error"}
    assert warnings == ["nvidia-smi nvlink: unknown message 'Unknown Error' for GPU 0; please report"]


def test_header_with_nothing_after_it():
    text = read("excerpt-l40s-nvlink-s.txt").splitlines()[0] + "\n"
    (entry,), warnings = parse(text)
    assert entry["nvlink"] is None
    assert warnings == ["nvidia-smi nvlink: GPU 0 printed no link; taken as no NVLink"]


def test_old_driver_header_without_uuid():
    text = read("nvlink-s-a100-sxm4-healthy.txt").replace(" (UUID: GPU-c7e253b0-c227-6f10-e860-7482c85e7ce8)", "")
    (entry,), warnings = parse(text)
    assert (entry["index"], entry["name"], entry["uuid"], entry["nvlink"]["active"]) == (7, "NVIDIA A100-SXM4-80GB", None, 12)
    assert warnings == []


@pytest.mark.parametrize("text, message", [
    (read("q-x-tesla-t4-515.xml"),
     "nvidia-smi nvlink: line 1 is not a 'GPU n: <name> (UUID: ...)' header, so this is not nvidia-smi nvlink -s "
     "output: '<?xml version=\"1.0\" ?>'"),
])
def test_not_nvlink_output_is_a_parse_error(text, message):
    with pytest.raises(ParseError) as info:
        nvlink.parse_status(text)
    assert info.value.message == message
    assert info.value.tool == "nvidia-smi nvlink"


# Issue 23: these three were refusals of the whole output; one unreadable line now is a warning naming it, and the
# rest of the output is read (the inactive links of the other lines are still seen).
@pytest.mark.parametrize("text, warning, links", [
    ("\t Link 0: 25 GB/s\n" + read("nvlink-s-a100-sxm4-healthy.txt"),
     "nvidia-smi nvlink: unread line 1 'Link 0: 25 GB/s' before the first GPU header; please report", 12),
    (read("nvlink-s-a100-sxm4-healthy.txt").replace("Link 1: 25 GB/s", "Link 0: 25 GB/s"),
     "nvidia-smi nvlink: GPU 7 lists link 0 twice (line 'Link 0: 25 GB/s'): the repeat is skipped", 11),
    (read("nvlink-s-a100-sxm4-healthy.txt") * 2,
     "nvidia-smi nvlink: GPU 7 appears twice (line 14): the repeated block is skipped", 12),
])
def test_one_unreadable_line_is_a_warning_and_the_rest_is_read(text, warning, links):
    warnings = []
    [entry] = nvlink.parse_status(text, warn=warnings.append)
    assert warning in warnings
    assert (entry["index"], entry["nvlink"]["total"], entry["nvlink"]["active"]) == (7, links, links)


def test_an_elided_or_damaged_line_keeps_the_inactive_links_of_the_rest():
    lines = read("nvlink-status-a100-sxm4-8gpu.txt").splitlines(True)
    gpu1 = next(i for i, line in enumerate(lines) if line.startswith("GPU 1:"))
    lines[2] = "         ...\n"                        # GPU 0's Link 1 line: an elision mark
    lines[gpu1 + 4] = "         Link 3: 2\ufffd GB/\n"   # GPU 1's Link 3 line: damaged
    lines[gpu1 + 6] = "         Link 5: <inactive>\n"   # GPU 1's Link 5 edited down
    warnings = []
    status = nvlink.parse_status("".join(lines), warn=warnings.append)
    assert len(status) == 8
    assert any("skipped an elision line '...' in the block of GPU 0" in w for w in warnings)
    assert status[0]["nvlink"]["partial"] is True and status[0]["nvlink"]["total"] == 11
    assert any("GPU 1 link 3" in w for w in warnings)
    assert [link["link"] for link in status[1]["nvlink"]["links"] if not link["active"]] == [3, 5]
    assert "partial" not in status[2]["nvlink"]


# ------------------------------------------------------------------------------------- matching to GPUs

def gpu_facts(uuids):
    return {"source": "xml", "gpus": [{"index": i, "uuid": uuid, "pci_bus_id": "0000:%02X:00.0" % i}
                                      for i, uuid in enumerate(uuids)]}


def test_attach_by_uuid_whatever_the_order():
    status, _ = parse(read("nvlink-status-a100-sxm4-8gpu.txt"))
    facts = gpu_facts(list(reversed(A100_8GPU_UUIDS)))
    before = repr(facts)
    warnings = []
    result = nvlink.attach(facts, status, warn=warnings.append)
    assert repr(facts) == before  # a copy, the input is left alone
    assert [g["nvlink"]["active"] for g in result["gpus"]] == [12] * 8
    # the GPU listed first in -q has the UUID of nvlink's GPU 7
    assert result["gpus"][0]["nvlink"] is [e for e in status if e["index"] == 7][0]["nvlink"]
    assert warnings == []


def test_attach_by_index_when_uuids_are_masked_or_absent():
    status, _ = parse(read("nvlink-status-a100-sxm4-8gpu.txt").replace("GPU 3: NVIDIA A100-SXM4-80GB (UUID: "
                                                                       "GPU-6e4fbadc-10d9-a63a-8988-9a0d320ff1a0)",
                                                                       "GPU 3: NVIDIA A100-SXM4-80GB"))
    facts = gpu_facts([MASKED] * 8)
    facts["gpus"][3]["uuid"] = None
    result = nvlink.attach(facts, status)
    assert [g["nvlink"] is not None for g in result["gpus"]] == [False, False, False, True, False, False, False, False]
    masked_status, _ = parse(read("nvlink-status-a100-sxm4-8gpu.txt"))
    for entry in masked_status:
        entry["uuid"] = MASKED
    result = nvlink.attach(gpu_facts([MASKED] * 8), masked_status)
    assert [g["nvlink"]["active"] for g in result["gpus"]] == [12] * 8


def test_attach_real_h100_capture_pair():
    facts = nvidia_smi.parse(read("excerpt-h100-80gb-hbm3-q-load.txt"))
    status, _ = parse(read("excerpt-h100-80gb-hbm3-nvlink-s.txt"))
    result = nvlink.attach(facts, status)
    assert (result["gpus"][0]["nvlink"]["active"], result["gpus"][0]["nvlink"]["total"]) == (18, 18)


def test_gpu_not_in_q_output_is_ignored_with_a_warning_and_missing_gpu_is_none():
    status, _ = parse(read("nvlink-s-a100-sxm4-healthy.txt"))
    warnings = []
    result = nvlink.attach(gpu_facts(A100_8GPU_UUIDS[:2]), status, warn=warnings.append)
    assert [g["nvlink"] for g in result["gpus"]] == [None, None]
    assert warnings == ["nvidia-smi nvlink: GPU 7 (GPU-c7e253b0-c227-6f10-e860-7482c85e7ce8) is not among the GPUs of "
                        "nvidia-smi -q; its NVLink state is ignored"]
    status, _ = parse(read("nvlink-status-a100-sxm4-8gpu.txt"))
    result = nvlink.attach(gpu_facts(A100_8GPU_UUIDS), status[:7])  # GPU 7 not printed by nvlink -s
    assert [g["nvlink"] is None for g in result["gpus"]] == [False] * 7 + [True]

