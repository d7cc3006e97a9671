# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The other ``nvidia-smi nvlink`` forms (issue 23): ``-R`` remote link info, ``-c`` capabilities and ``-gt``
throughput counters, read line by line from real captures (tests/fixtures/nvidia-smi/nvlink-R-*, nvlink-c-*,
nvlink-gt-*) and from edited copies of them (a damaged line, a cut output, a swapped link); the remote topology
against the node's own GPUs; the throughput rate between two real reads."""

import os
import stat

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import collect, nvidia_smi, nvlink, nvlink_info
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import gpu as rules

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "nvidia-smi")


def _text(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        return handle.read()


HPE_R = "nvlink-R-h100-pcie-x2-bridge.txt"
HGX_R = "nvlink-R-a100-sxm4-nvswitch-gpu0.txt"
# The two H100 PCIe GPUs of the HPE DL380a capture, as the gpu facts name them (pci_bus_id).
HPE_GPUS = [{"index": 0, "pci_bus_id": "0000:C2:00.0"}, {"index": 1, "pci_bus_id": "0000:D5:00.0"}]


# -------------------------------------------------------------------------------------------------------- -R

def test_remote_bridge_capture():
    result = nvlink_info.parse_remote(_text(HPE_R))
    assert result["unparsed"] == [] and result["partial"] is False
    assert [gpu["index"] for gpu in result["gpus"]] == [0, 1]
    gpu0 = result["gpus"][0]
    assert gpu0["uuid"] == "GPU-6968dfc2-d444-d92c-c36b-6abe53445cb9" and gpu0["name"] == "NVIDIA H100 PCIe"
    assert len(gpu0["links"]) == 12
    assert gpu0["links"][4] == {"link": 4, "remote_bus_id": "0000:D5:00.0", "remote_link": 6}
    assert result["gpus"][1]["links"][11] == {"link": 11, "remote_bus_id": "0000:C2:00.0", "remote_link": 15}


def test_remote_nvswitch_capture():
    result = nvlink_info.parse_remote(_text(HGX_R))
    assert result["unparsed"] == [] and result["partial"] is False
    links = result["gpus"][0]["links"]
    assert len(links) == 12
    assert links[0] == {"link": 0, "remote_bus_id": "0008:00:00.0", "remote_link": 29}
    assert links[6]["remote_bus_id"] == "000A:00:00.0"


def test_remote_topology_bridge_pairs_both_ways():
    topology = nvlink_info.remote_topology(nvlink_info.parse_remote(_text(HPE_R)), HPE_GPUS)
    assert [(gpu["index"], gpu["peers"], gpu["switches"], gpu["one_way"], gpu["shared"]) for gpu in topology] == [
        (0, [{"gpu": 1, "bus_id": "0000:D5:00.0", "links": 12}], [], [], []),
        (1, [{"gpu": 0, "bus_id": "0000:C2:00.0", "links": 12}], [], [], [])]


def test_remote_topology_nvswitch_links_are_switches():
    gpus = [{"index": 0, "pci_bus_id": "0000:07:00.0"}]
    topology = nvlink_info.remote_topology(nvlink_info.parse_remote(_text(HGX_R)), gpus)
    assert topology[0]["peers"] == []
    assert topology[0]["switches"] == [{"bus_id": "%04X:00:00.0" % domain, "links": 2} for domain in range(5, 11)]


def test_remote_topology_finds_a_link_lost_on_one_side_and_a_shared_port():
    # Edited copy: GPU 1's link 4 now reports the port GPU 0's link 5 already reaches (D5 link 7 -> C2 link 7),
    # and its link 11 reaches another device: GPU 0 lists 12 links to GPU 1, GPU 1 only 11 back.
    text = _text(HPE_R).replace("Link 4: Remote Device 00000000:C2:00.0: Link 6",
                                "Link 4: Remote Device 00000000:C2:00.0: Link 7")
    text = text.replace("Link 11: Remote Device 00000000:C2:00.0: Link 15",
                        "Link 11: Remote Device 00000000:41:00.0: Link 15")
    assert text.count("00000000:41:00.0") == 1
    topology = nvlink_info.remote_topology(nvlink_info.parse_remote(text), HPE_GPUS)
    assert topology[0]["one_way"] == ["12 link(s) to GPU 1 (0000:D5:00.0), which lists 11 back"]
    assert topology[1]["switches"] == [{"bus_id": "0000:41:00.0", "links": 1}]
    assert topology[1]["shared"] == ["0000:C2:00.0 link 7 is claimed by GPU 1 link 4, GPU 1 link 5"]


def test_remote_damaged_line_is_named_and_the_rest_read():
    lines = _text(HPE_R).splitlines()
    lines[3] = "         Link 2: Remote Devi#e 00000000:D5:00.0: Li"
    result = nvlink_info.parse_remote("\n".join(lines) + "\n")
    assert result["unparsed"] == ["line 4: Link 2: Remote Devi#e 00000000:D5:00.0: Li"]
    assert result["gpus"][0]["partial"] is True and result["gpus"][1]["partial"] is False
    assert [link["link"] for link in result["gpus"][0]["links"]] == [0, 1] + list(range(3, 12))
    assert len(result["gpus"][1]["links"]) == 12
    # a link that is not read is not called one-way on the peer's side
    topology = nvlink_info.remote_topology(result, HPE_GPUS)
    assert topology[1]["one_way"] == []


def test_remote_truncated_output_keeps_what_was_read():
    text = _text(HPE_R)
    cut = text[:text.index("Link 9: Remote Device 00000000:C2") + 20]
    result = nvlink_info.parse_remote(cut)
    assert result["partial"] is True and result["gpus"][1]["partial"] is True
    assert len(result["gpus"][1]["links"]) == 9 and len(result["gpus"][0]["links"]) == 12
    assert result["unparsed"][-1].startswith("line 24: Link 9: Remote Devic")


def test_remote_elision_and_repeat():
    lines = _text(HGX_R).splitlines()
    text = "\n".join(lines[:4] + ["\t ...", lines[3]] + lines[4:]) + "\n"
    result = nvlink_info.parse_remote(text)
    assert result["unparsed"][0] == "line 5: ..."
    assert "listed twice" in result["unparsed"][1]
    assert len(result["gpus"][0]["links"]) == 12 and result["gpus"][0]["partial"] is True


def test_remote_loop_banners_are_named_but_mark_nothing_partial():
    # `for i in 0 1; do echo "=== GPU $i ==="; nvidia-smi nvlink -R -i $i; done` as users paste it, built from the
    # real bridge capture: both blocks whole, so nothing is partial and the topology is the capture's own
    lines = _text(HPE_R).splitlines(True)
    second = [number for number, line in enumerate(lines) if line.startswith("GPU 1:")][0]
    text = "=== GPU 0 ===\n" + "".join(lines[:second]) + "=== GPU 1 ===\n" + "".join(lines[second:])
    result = nvlink_info.parse_remote(text)
    assert result["unparsed"] == ["line 1: === GPU 0 ===", "line 15: === GPU 1 ==="]
    assert result["partial"] is False and [gpu["partial"] for gpu in result["gpus"]] == [False, False]
    assert nvlink_info.remote_topology(result, HPE_GPUS) == nvlink_info.remote_topology(
        nvlink_info.parse_remote(_text(HPE_R)), HPE_GPUS)
    # a GPU without NVLink: the next banner is not its message
    no_nvlink = nvlink_info.parse_remote("GPU 0: NVIDIA L40S (UUID: GPU-x)\nDevice does not have or support Nvlink\n"
                                         "=== GPU 1 ===\n")
    assert no_nvlink["gpus"][0]["messages"] == ["Device does not have or support Nvlink"]
    assert no_nvlink["unparsed"] == ["line 3: === GPU 1 ==="] and no_nvlink["partial"] is False


@pytest.mark.parametrize("text", ["Some random output\n\tLink 0: Remote Device 0000:42:00.0: Link 5\n",
                                  "\x00\x01\x02binary", "Segmentation fault (core dumped)\n"])
def test_remote_without_header_is_refused(text):
    with pytest.raises(ParseError) as info:
        nvlink_info.parse_remote(text)
    assert "nvidia-smi nvlink -R" in str(info.value) and "no 'GPU n" in str(info.value)


def test_remote_empty_and_no_nvlink_message():
    assert nvlink_info.parse_remote("") == {"gpus": [], "unparsed": [], "partial": False}
    result = nvlink_info.parse_remote("GPU 0: NVIDIA L40S (UUID: GPU-x)\nDevice does not have or support Nvlink\n")
    assert result["gpus"][0]["links"] == [] and result["gpus"][0]["messages"] == [
        "Device does not have or support Nvlink"]


# -------------------------------------------------------------------------------------------------------- -c

def test_capabilities_capture():
    result = nvlink_info.parse_capabilities(_text("nvlink-c-h800-8gpu-excerpt.txt"))
    assert [gpu["index"] for gpu in result["gpus"]] == [0, 1, 7]
    assert result["unparsed"] == ["line 99: ..."]  # GPUs 2-6 elided upstream
    gpu7 = result["gpus"][2]
    assert len(gpu7["links"]) == 8
    assert gpu7["links"][0]["capabilities"] == {"p2p": True, "sysmem_access": True, "p2p_atomics": True,
                                                "sysmem_atomics": True, "sli": True, "link": False}
    assert result["gpus"][1]["partial"] is True  # the elision line sits in GPU 1's block


# zhaochenyang20/Awesome-ML-SYS-Tutorial (torch/nccl/readme.md): `nvlink --capabilities -i 0` of one H100 80GB HBM3.
H100_C = "nvlink-c-h100-80gb-hbm3-gpu0.txt"
H100_UUID = "GPU-5a10e6e5-95f7-2785-ed63-6f6147f304f7"


def test_capabilities_h100_capture_all_true():
    result = nvlink_info.parse_capabilities(_text(H100_C))
    assert result["unparsed"] == [] and result["partial"] is False
    [gpu] = result["gpus"]
    assert (gpu["index"], gpu["name"], gpu["uuid"], gpu["messages"]) == (0, "NVIDIA H100 80GB HBM3", H100_UUID, [])
    assert [link["link"] for link in gpu["links"]] == list(range(18))
    # every link prints the same six capabilities, all true (the H800 capture's links say "Link is supported: false")
    every = {"p2p": True, "sysmem_access": True, "p2p_atomics": True, "sysmem_atomics": True, "sli": True,
             "link": True}
    assert all(link["capabilities"] == every for link in gpu["links"])


def test_capabilities_and_status_of_the_same_h100_agree():
    # the page's `nvlink --status -i 0` of the same GPU: the same UUID and the same 18 links
    [status] = nvlink.parse_status(_text("nvlink-s-h100-80gb-hbm3-gpu0.txt"))
    [gpu] = nvlink_info.parse_capabilities(_text(H100_C))["gpus"]
    assert status["uuid"] == gpu["uuid"] == H100_UUID
    assert [link["link"] for link in status["nvlink"]["links"]] == [link["link"] for link in gpu["links"]]


def test_capabilities_h100_false_and_damaged_lines():
    # edited copy: link 9 loses P2P (false), link 12's SLI line is cut mid-word
    text = _text(H100_C).replace("Link 9, P2P is supported: true", "Link 9, P2P is supported: false", 1)
    text = text.replace("Link 12, SLI is supported: true", "Link 12, SLI is supp", 1)
    result = nvlink_info.parse_capabilities(text)
    links = result["gpus"][0]["links"]
    assert links[9]["capabilities"]["p2p"] is False and links[8]["capabilities"]["p2p"] is True
    assert result["unparsed"] == ["line 78: Link 12, SLI is supp"]
    assert "sli" not in links[12]["capabilities"] and len(links[12]["capabilities"]) == 5
    assert result["gpus"][0]["partial"] is True and len(links) == 18


def test_capabilities_damaged_value_is_named():
    text = _text("nvlink-c-h800-8gpu-excerpt.txt").replace("Link 3, P2P atomics supported: true",
                                                           "Link 3, P2P atomics supported: tru", 1)
    result = nvlink_info.parse_capabilities(text)
    assert "line 22: Link 3, P2P atomics supported: tru" in result["unparsed"]
    assert "p2p_atomics" not in result["gpus"][0]["links"][3]["capabilities"]
    assert result["gpus"][0]["links"][3]["capabilities"]["p2p"] is True


# ------------------------------------------------------------------------------------------------------- -gt

def test_throughput_raw_capture():
    result = nvlink_info.parse_throughput(_text("nvlink-gt-r-h800-8gpu-excerpt.txt"))
    assert [gpu["index"] for gpu in result["gpus"]] == [0, 1, 2, 6, 7]
    assert result["unparsed"] == ["line 52: ..."]
    assert result["gpus"][2]["links"][1]["counters"] == {"raw_tx_kib": 591684300, "raw_rx_kib": 625042437}


def test_throughput_rate_between_two_real_reads():
    idle = nvlink_info.parse_throughput(_text("nvlink-gt-d-h800-gpu0-idle.txt"))
    busy = nvlink_info.parse_throughput(_text("nvlink-gt-d-h800-gpu0-training.txt"))
    assert idle["unparsed"] == [] and busy["unparsed"] == []
    rate = nvlink_info.throughput_rate(idle, busy, 1000)
    tx0 = rate[0]["links"][0]["counters"]["data_tx_kib"]
    assert tx0["delta_kib"] == 1390774681 - 5863784 and tx0["reset"] is False
    assert tx0["gbs"] == round((1390774681 - 5863784) * 1024.0 / 1000 / 1e9, 3)
    # the other way round the counters went down: a reset between the reads, the growth is the new value
    back = nvlink_info.throughput_rate(busy, idle, None)
    assert back[0]["links"][0]["counters"]["data_tx_kib"]["reset"] is True
    assert back[0]["links"][0]["counters"]["data_tx_kib"]["delta_kib"] == 5863784
    assert back[0]["links"][0]["counters"]["data_tx_kib"]["gbs"] is None


def test_throughput_dgx2_job_start_and_end_with_elisions():
    start = nvlink_info.parse_throughput(_text("nvlink-gt-d-v100-sxm3-dgx2-job-start-excerpt.txt"))
    end = nvlink_info.parse_throughput(_text("nvlink-gt-d-v100-sxm3-dgx2-job-end-excerpt.txt"))
    # the elision before the first header and the one after the last link are named; the output is partial
    assert start["unparsed"] == ["line 1: ...", "line 5: ..."] and start["partial"] is True
    assert start["gpus"][0]["index"] == 3 and start["gpus"][0]["name"] == "Tesla V100-SXM3-32GB"
    rate = nvlink_info.throughput_rate(start, end, 125)
    counters = rate[0]["links"][0]["counters"]
    assert counters["data_tx_kib"]["delta_kib"] == 20886285 - 19241022
    assert counters["data_rx_kib"]["delta_kib"] == 20904969 - 19255516
    assert counters["data_rx_kib"]["gbs"] == round(1649453 * 1024.0 / 125 / 1e9, 3)


def test_throughput_comma_grouping_and_cut_line():
    text = "GPU 0: NVIDIA GB200 (UUID: GPU-a)\n         Link 0: Data Tx: 1,234 KiB\n         Link 0: Data R"
    result = nvlink_info.parse_throughput(text)
    assert result["gpus"][0]["links"] == [{"link": 0, "counters": {"data_tx_kib": 1234}}]
    assert result["partial"] is True and result["unparsed"] == ["line 3: Link 0: Data R"]


def test_forms_are_not_confused():
    # an -s output given as -R: every link line is named, none is read as a remote
    result = nvlink_info.parse_remote(_text("nvlink-s-a100-sxm4-healthy.txt"))
    assert all(gpu["links"] == [] for gpu in result["gpus"])
    assert len(result["unparsed"]) == 12 and result["partial"] is True


# ---------------------------------------------------------------------------------------- facts and judge

Q_FACTS = nvidia_smi.parse(_text("q-h100x8-535.161.08-hw-power-brake-slowdown.txt"))


def _hpe_facts(remote_text=None, error=None):
    """The first two GPUs of a real 8x H100 -q capture, edited to the HPE DL380a's two (UUIDs and bus ids of the -R
    capture), with ``nvlink_remote`` read from ``remote_text`` as gpu_info's saved-output path reads it."""
    facts = dict(Q_FACTS)
    facts["gpus"] = [dict(gpu) for gpu in Q_FACTS["gpus"][:2]]
    for gpu, uuid, bus in zip(facts["gpus"], ("GPU-6968dfc2-d444-d92c-c36b-6abe53445cb9",
                                              "GPU-9b1446e2-8a89-4cf6-b68c-a98d99e958d3"),
                              ("0000:C2:00.0", "0000:D5:00.0")):
        gpu.update(uuid=uuid, pci_bus_id=bus)
    facts["nvlink_remote"] = None if remote_text is None else nvlink_info.remote_facts(
        nvlink_info.parse_remote(remote_text), facts["gpus"])
    facts["nvlink_remote_error"] = error
    return facts


def _remote_checks(facts):
    return [check for check in rules.judge_gpu("n1", facts, None) if check["id"] == "gpu.nvlink.remote"]


def test_judge_bridge_pair_passes():
    checks = _remote_checks(_hpe_facts(_text(HPE_R)))
    assert [c["status"] for c in checks] == ["pass", "pass"]
    assert "12 NVLinks reach GPU 1 (12 links)" in checks[0]["message"]


def test_judge_link_lost_on_one_side_fails_reseat():
    text = _text(HPE_R).replace("Link 11: Remote Device 00000000:C2:00.0: Link 15",
                                "Link 11: Remote Device 00000000:41:00.0: Link 15")
    checks = _remote_checks(_hpe_facts(text))
    assert (checks[0]["status"], checks[0]["remedy"]) == ("fail", "reseat")
    assert "12 link(s) to GPU 1 (0000:D5:00.0), which lists 11 back" in checks[0]["message"]
    assert "reseat the NVLink bridge" in checks[0]["message"]


def test_judge_shared_nvswitch_port_fails_investigate():
    # Edited copy of the HGX capture: link 1 reports the switch port link 0 reaches (0008 link 29).
    text = _text(HGX_R).replace("Link 1: Remote Device 00000008:00:00.0: Link 28",
                                "Link 1: Remote Device 00000008:00:00.0: Link 29")
    facts = _hpe_facts(text)
    check = _remote_checks(facts)[0]
    assert (check["status"], check["remedy"]) == ("fail", "investigate")
    assert "0008:00:00.0 link 29 is claimed by GPU 0 link 0, GPU 0 link 1" in check["message"]
    assert "NVSwitch trays" in check["message"]


def test_judge_partial_read_warns_and_unread_is_an_error():
    lines = _text(HPE_R).splitlines()
    lines[5] = "               Link 4: Remote Device 00000000:D5:0"
    checks = _remote_checks(_hpe_facts("\n".join(lines) + "\n"))
    assert (checks[0]["status"], checks[0]["remedy"]) == ("warn", "investigate")
    assert "line 6: Link 4: Remote Device 00000000:D5:0" in checks[0]["message"]
    error = _remote_checks(_hpe_facts(error="nvidia-smi nvlink -R: timed out after 60 s"))
    assert [(c["status"], c["remedy"]) for c in error] == [("error", "investigate")] * 2
    assert _remote_checks(_hpe_facts()) == []  # not read: no check


def test_saved_output_and_live_read(tmp_path):
    facts = _hpe_facts()
    saved = tmp_path / "nvidia-smi-nvlink-R.txt"
    saved.write_text(_text(HPE_R))
    read = collect.with_remote(facts, path=str(saved))
    assert read["nvlink_remote_error"] is None
    assert read["nvlink_remote"]["gpus"][0]["peers"] == [{"gpu": 1, "bus_id": "0000:D5:00.0", "links": 12}]
    bad = tmp_path / "not-nvlink.txt"
    bad.write_text("Segmentation fault (core dumped)\n")
    failed = collect.with_remote(facts, path=str(bad))
    assert failed["nvlink_remote"] is None and "nvidia-smi nvlink -R" in failed["nvlink_remote_error"]
    assert failed["nvlink_remote_error"].endswith("(file %s)" % bad)
    # live: a real program behind the runner seam prints the capture for "nvlink -R"
    prog = tmp_path / "nvidia-smi"
    prog.write_text('#!/bin/sh\n[ "$1 $2" = "nvlink -R" ] || exit 3\ncat %s\n' % saved)
    prog.chmod(prog.stat().st_mode | stat.S_IXUSR)
    live = collect.with_remote(facts, str(prog), 30)
    assert live["nvlink_remote"] == read["nvlink_remote"]
    assert collect.with_remote(facts)["nvlink_remote"] is None


def test_saved_outputs_folder_names_the_remote_file(tmp_path):
    """diagnose.yml's folder of saved outputs: nvidia-smi-nvlink-R.txt is gpu_info's nvlink_remote_src, the live
    option nvlink_remote is dropped, and gpu_info's src path fills nvlink_remote from it."""
    import shutil
    import types

    from ansible_collections.zhisuan.ops.plugins.plugin_utils._saved_outputs import saved_options

    q_text = os.path.join(FIXTURES, "excerpt-h100-80gb-hbm3-q-load.txt")
    shutil.copyfile(q_text, str(tmp_path / "nvidia-smi-q.txt"))
    shutil.copyfile(os.path.join(FIXTURES, HGX_R), str(tmp_path / "nvidia-smi-nvlink-R.txt"))
    read, options, used, missing = saved_options(str(tmp_path), ["gpu"], {"gpu": {"nvlink_remote": True}})
    assert read == ["gpu"] and used == ["nvidia-smi-q.txt", "nvidia-smi-nvlink-R.txt"]
    assert options["gpu"] == {"src": str(tmp_path / "nvidia-smi-q.txt"),
                              "nvlink_remote_src": str(tmp_path / "nvidia-smi-nvlink-R.txt")}
    module = types.SimpleNamespace(params=dict(options["gpu"], nvlink_src=None, nvidia_smi_path="/nonexistent",
                                               timeout=5, nvlink=True, nvlink_errors_window=0, source="nvidia-smi"),
                                   warn=lambda msg: None, check_mode=False)
    facts = collect.collect_gpu_facts(module)["gpu"]
    assert facts["nvlink_remote_error"] is None
    assert len(facts["nvlink_remote"]["gpus"][0]["switches"]) == 6
    check = _remote_checks(facts)[0]
    assert check["status"] == "pass" and "6 other devices" in check["message"]
