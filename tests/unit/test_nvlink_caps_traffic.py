# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``nvidia-smi nvlink -c`` and ``-gt d`` judged (issue 23): ``gpu.nvlink.capabilities`` (a link whose capabilities
differ from the node's other links) and ``gpu.nvlink.traffic`` (a link that carried none of the device-to-device
test's data), on the real H800 captures (tests/fixtures/nvidia-smi/nvlink-c-h800-8gpu-excerpt.txt, the idle and
training ``-gt d`` pair of GPU 0) and edited copies of them; the collectors read them through the runner seam from a
real program."""

import os
import stat
import types

from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import bandwidth_collect, collect, nvidia_smi
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import nvbandwidth, nvlink_info
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import bandwidth as bandwidth_rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import gpu as rules

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures")


def _text(name):
    with open(os.path.join(FIXTURES, "nvidia-smi", name), encoding="utf-8") as handle:
        return handle.read()


CAPS = "nvlink-c-h800-8gpu-excerpt.txt"
IDLE = "nvlink-gt-d-h800-gpu0-idle.txt"
BUSY = "nvlink-gt-d-h800-gpu0-training.txt"
Q_FACTS = nvidia_smi.parse(_text("q-h100x8-535.161.08-hw-power-brake-slowdown.txt"))


def _odd_link(text, gpu, link, capability="P2P is supported", value="false"):
    """``text`` with ``Link <link>, <capability>: ...`` of GPU ``gpu``'s block set to ``value``."""
    out, current = [], None
    for line in text.splitlines(True):
        if line.startswith("GPU "):
            current = int(line.split(":")[0].split()[1])
        if current == gpu and line.strip().startswith("Link %d, %s:" % (link, capability)):
            line = line[:line.index(":") + 1] + " " + value + "\n"
        out.append(line)
    return "".join(out)


def _cap_checks(text=None, error=None):
    facts = dict(Q_FACTS)
    facts["nvlink_capabilities"] = None if text is None else nvlink_info.capability_facts(
        nvlink_info.parse_capabilities(text))
    facts["nvlink_capabilities_error"] = error
    return dict((check["component"].split(" (")[0], check) for check in rules.judge_gpu("n1", facts, None)
                if check["id"] == "gpu.nvlink.capabilities")


def test_the_real_capture_has_one_common_set():
    facts = nvlink_info.capability_facts(nvlink_info.parse_capabilities(_text(CAPS)))
    # the H800 board reports "Link is supported: false" on every link: that is its normal, not a fault
    assert facts["common"] == {"p2p": True, "sysmem_access": True, "p2p_atomics": True, "sysmem_atomics": True,
                               "sli": True, "link": False}
    assert [(gpu["index"], gpu["links"], gpu["odd"]) for gpu in facts["gpus"]] == [(0, 8, []), (1, 8, []), (7, 8, [])]


def test_healthy_capture_passes_and_the_elided_block_warns():
    checks = _cap_checks(_text(CAPS))
    assert (checks["GPU 0"]["status"], checks["GPU 7"]["status"]) == ("pass", "pass")
    assert "8 NVLinks report the node's common capabilities" in checks["GPU 0"]["message"]
    assert checks["GPU 1"]["status"] == "warn"  # the upstream "..." elision sits in GPU 1's block
    # elided upstream: not listed, so skipped (gpu.nvlink.links judges the link count from nvlink -s)
    assert checks["GPU 3"]["status"] == "skip" and "not listed" in checks["GPU 3"]["message"]


def test_a_link_without_p2p_fails_reset_gpu():
    checks = _cap_checks(_odd_link(_text(CAPS), 7, 5))
    check = checks["GPU 7"]
    assert (check["status"], check["remedy"]) == ("fail", "reset_gpu")
    assert "link 5: p2p=false" in check["message"] and "reset the GPU" in check["message"]
    assert checks["GPU 0"]["status"] == "pass"


def test_unread_capabilities_are_an_error_and_not_read_is_no_check():
    checks = _cap_checks(error="nvidia-smi nvlink -c: timed out after 60 s")
    assert {(c["status"], c["remedy"]) for c in checks.values()} == {("error", "investigate")}
    assert _cap_checks() == {}


def test_capabilities_read_live_and_from_a_saved_file(tmp_path):
    saved = tmp_path / "nvidia-smi-nvlink-c.txt"
    saved.write_text(_text(CAPS))
    read = collect.with_remote(dict(Q_FACTS), capabilities_path=str(saved))
    assert read["nvlink_capabilities"]["common"]["p2p"] is True and read["nvlink_remote"] is None
    prog = tmp_path / "nvidia-smi"
    prog.write_text('#!/bin/sh\n[ "$1 $2" = "nvlink -c" ] || exit 3\ncat %s\n' % saved)
    prog.chmod(prog.stat().st_mode | stat.S_IXUSR)
    live = collect.with_remote(dict(Q_FACTS), str(prog), 30)
    assert live["nvlink_capabilities"] == read["nvlink_capabilities"]
    assert live["nvlink_remote"] is None and "nvidia-smi nvlink -R" in live["nvlink_remote_error"]


# --------------------------------------------------------------------------------------------------- traffic

def _edited_busy(links):
    """The training read with the given links' counters left at their idle values (the link moved nothing)."""
    idle = nvlink_info.parse_throughput(_text(IDLE))["gpus"][0]["links"]
    text = _text(BUSY)
    for link in links:
        for name, key in (("Tx", "data_tx_kib"), ("Rx", "data_rx_kib")):
            busy_value = nvlink_info.parse_throughput(_text(BUSY))["gpus"][0]["links"][link]["counters"][key]
            text = text.replace("Link %d: Data %s: %d KiB" % (link, name, busy_value),
                                "Link %d: Data %s: %d KiB" % (link, name, idle[link]["counters"][key]))
    return text


def _traffic(after_text, before_text=None, p2p=True):
    facts = {"devices": [], "testcases": {}, "verification_failures": []}
    if p2p:
        facts["testcases"][bandwidth_rules.P2P] = {"columns": [0, 1], "matrix": [
            {"row": 0, "values": [None, 180.0]}, {"row": 1, "values": [180.0, None]}]}
    facts["nvlink_traffic"] = nvlink_info.traffic_facts(nvlink_info.parse_throughput(before_text or _text(IDLE)),
                                                        nvlink_info.parse_throughput(after_text), 60.0)
    facts["nvlink_traffic_error"] = None
    return [c for c in bandwidth_rules.judge_bandwidth("n1", facts, None) if c["id"] == "gpu.nvlink.traffic"]


def test_every_link_busy_passes():
    [check] = _traffic(_text(BUSY))
    assert check["status"] == "pass" and "all 8 NVLinks carried data" in check["message"]
    assert "link 0 2.64 TiB" not in check["evidence"] and "link 0 " in check["evidence"]


def test_an_idle_link_fails_reset_gpu_and_no_traffic_at_all_fails_investigate():
    [check] = _traffic(_edited_busy([5]))
    assert (check["status"], check["remedy"]) == ("fail", "reset_gpu")
    assert "NVLink 5 carried no data" in check["message"]
    [none] = _traffic(_text(IDLE))
    assert (none["status"], none["remedy"]) == ("fail", "investigate")
    assert "did not go over NVLink" in none["message"]


def test_no_device_to_device_testcase_is_a_skip_and_an_unread_counter_an_error():
    [skip] = _traffic(_text(BUSY), p2p=False)
    assert skip["status"] == "skip"
    facts = {"devices": [], "testcases": {}, "nvlink_traffic": None,
             "nvlink_traffic_error": "before the test: nvidia-smi nvlink -gt: not found"}
    [error] = [c for c in bandwidth_rules.judge_bandwidth("n1", facts, None) if c["id"] == "gpu.nvlink.traffic"]
    assert error["status"] == "error" and "not found" in error["message"]
    plain = {"devices": [], "testcases": {}}
    assert [c for c in bandwidth_rules.judge_bandwidth("n1", plain, None) if c["id"] == "gpu.nvlink.traffic"] == []


def test_the_collector_reads_the_counters_around_the_run(tmp_path):
    """A real program behind the runner seam: nvidia-smi prints the idle read the first time and the training read
    after, nvbandwidth prints a real capture; the bandwidth facts carry the links' growth."""
    state = tmp_path / "reads"
    (tmp_path / "idle.txt").write_text(_text(IDLE))
    (tmp_path / "busy.txt").write_text(_text(BUSY))
    smi = tmp_path / "nvidia-smi"
    smi.write_text('#!/bin/sh\n[ "$1 $2 $3" = "nvlink -gt d" ] || exit 3\n'
                   'if [ -e %s ]; then cat %s; else touch %s; cat %s; fi\n'
                   % (state, tmp_path / "busy.txt", state, tmp_path / "idle.txt"))
    nvbw = tmp_path / "nvbandwidth"
    capture = os.path.join(FIXTURES, "nvbandwidth", "nvbandwidth-v0.2-h800x8-525.105.17-ce.txt")
    nvbw.write_text("#!/bin/sh\ncat %s\n" % capture)
    for prog in (smi, nvbw):
        prog.chmod(prog.stat().st_mode | stat.S_IXUSR)
    params = dict(tool="nvbandwidth", src=None, testcases=None, nvbandwidth_path=str(nvbw), timeout=60,
                  nvlink_traffic=True, nvidia_smi_path=str(smi))
    facts = bandwidth_collect.collect_bandwidth(types.SimpleNamespace(params=params))["bandwidth"]
    assert facts["nvlink_traffic_error"] is None
    link0 = facts["nvlink_traffic"]["gpus"][0]["links"][0]
    assert link0 == {"link": 0, "tx_kib": 1390774681 - 5863784, "rx_kib": 1387831436 - 5863677, "reset": False}
    assert nvbandwidth.TOOL and facts["testcases"]
    params["nvidia_smi_path"] = str(tmp_path / "missing-nvidia-smi")
    failed = bandwidth_collect.collect_bandwidth(types.SimpleNamespace(params=params))["bandwidth"]
    assert failed["nvlink_traffic"] is None and failed["nvlink_traffic_error"].startswith("before the test:")
    assert failed["testcases"] == facts["testcases"]  # the measurement stands
