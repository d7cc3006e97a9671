# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The NVLink rules (gpu.nvlink.links, gpu.nvlink.speed) on facts made from real captures: nvidia-smi -q of a node
plus nvidia-smi nvlink -s of the same node, and edited variants for the faults."""

from __future__ import annotations

import json
import os
import stat
import sys

from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import nvidia_smi, nvlink
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu.collect import collect_facts
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import gpu as rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import REMEDIES
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._nvlink_checks import NVLINK_CHECK_IDS, nvlink_summary
from ansible_collections.zhisuan.ops.plugins.plugin_utils._profiles import load_profiles

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "nvidia-smi")
PROFILES = load_profiles()
H100_COMPONENT = "GPU 0 (GPU-00000000\u2026, 0000:00:09.0)"


def read(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        return handle.read()


def facts_of(q_name, nvlink_text, nvlink_error=None):
    """``gpu`` facts as gpu_info returns them, from a real -q capture and an nvlink -s text."""
    facts = nvlink.attach(nvidia_smi.parse(read(q_name)), nvlink.parse_status(nvlink_text))
    facts["nvlink_error"] = nvlink_error
    return facts


def h100(nvlink_text=None, nvlink_error=None):
    return facts_of("excerpt-h100-80gb-hbm3-q-load.txt",
                    read("excerpt-h100-80gb-hbm3-nvlink-s.txt") if nvlink_text is None else nvlink_text,
                    nvlink_error)


def nvlink_checks(facts, profile="h100"):
    checks = rules.judge_gpu("node07", facts, PROFILES[profile] if isinstance(profile, str) else profile)
    return [check for check in checks if check["id"] in NVLINK_CHECK_IDS]


def brief(checks):
    return [(c["id"], c["status"], c["observed"], c["expected"], c["remedy"]) for c in checks]


def test_ids_follow_the_pcie_checks():
    ids = list(rules.GPU_CHECK_IDS)
    assert ids[ids.index("gpu.pcie.generation") + 1: ids.index("gpu.pcie.generation") + 3] == list(NVLINK_CHECK_IDS)


def test_healthy_h100_sxm_passes():
    checks = nvlink_checks(h100())
    assert brief(checks) == [
        ("gpu.nvlink.links", "pass", 18, ">= 18", "none"),
        ("gpu.nvlink.speed", "pass", "26.562 GB/s", ">= 26.562 GB/s", "none"),
    ]
    assert checks[0]["component"] == H100_COMPONENT
    assert checks[0]["message"] == "GPU 0 has 18 of 18 NVLinks active"
    assert checks[0]["evidence"] == "nvlink.active=18, nvlink.total=18, profile.nvlink.links=18"
    assert checks[1]["message"] == "GPU 0: all 18 active NVLinks run at 26.562 GB/s or more"


def test_a_down_link_fails_with_reset_and_rma_advice():
    text = read("excerpt-h100-80gb-hbm3-nvlink-s.txt").replace("Link 7: 26.562 GB/s", "Link 7: <inactive>")
    links, speed = nvlink_checks(h100(text))
    assert brief([links]) == [("gpu.nvlink.links", "fail", 17, ">= 18", "reset_gpu")]
    assert links["message"] == (
        "GPU 0 has 17 of 18 NVLinks active (link 7 inactive): GPU-to-GPU traffic is slower and collectives may hang; "
        "drain the node and reset the GPU to retrain the links; if the link does not come back, or goes down again, "
        "read its error counters (nvidia-smi nvlink -e) and RMA the GPU or baseboard")
    assert links["evidence"] == "nvlink.active=17, nvlink.total=18, profile.nvlink.links=18; inactive links: 7"
    assert speed["status"] == "pass"  # the 17 links that are up run at full speed


def test_all_links_down_message_from_the_driver():
    (entry,) = nvlink.parse_status(read("nvlink-s-a100-sxm4-all-links-inactive.txt"))
    facts = h100()
    facts["gpus"][0]["nvlink"] = entry["nvlink"]
    links, speed = nvlink_checks(facts)
    assert brief([links, speed]) == [("gpu.nvlink.links", "fail", 0, ">= 18", "reset_gpu"),
                                     ("gpu.nvlink.speed", "skip", None, ">= 26.562 GB/s", "none")]
    assert links["message"].startswith("GPU 0 has 0 of 18 NVLinks active (NVML: Unable to retrieve NVLink information "
                                       "as all links are inactive): ")
    assert speed["message"] == "GPU 0 has no active NVLink whose speed could be checked"


def test_a_slow_link_fails_speed():
    text = read("excerpt-h100-80gb-hbm3-nvlink-s.txt").replace("Link 2: 26.562 GB/s", "Link 2: 13.281 GB/s")
    links, speed = nvlink_checks(h100(text))
    assert links["status"] == "pass"
    assert brief([speed]) == [("gpu.nvlink.speed", "fail", "13.281 GB/s", ">= 26.562 GB/s", "reset_gpu")]
    assert speed["message"].startswith("GPU 0 has 1 NVLink running below 26.562 GB/s (link 2, slowest 13.281 GB/s): "
                                       "the link trained at a lower rate; drain the node and reset the GPU")
    assert speed["evidence"] == ("profile.nvlink.speed_gbs_per_link=26.562; active link speeds (GB/s): 13.281, 26.562")


def test_a100_profile_speed_25_matches_the_printed_25():
    facts = facts_of("excerpt-h100-80gb-hbm3-q-load.txt",
                     read("nvlink-s-a100-sxm4-healthy.txt").replace("GPU 7: NVIDIA A100-SXM4-80GB (UUID: "
                                                                    "GPU-c7e253b0-c227-6f10-e860-7482c85e7ce8)",
                                                                    "GPU 0: NVIDIA A100-SXM4-80GB"))
    assert brief(nvlink_checks(facts, "a100")) == [("gpu.nvlink.links", "pass", 12, ">= 12", "none"),
                                                   ("gpu.nvlink.speed", "pass", "25 GB/s", ">= 25 GB/s", "none")]


def test_pcie_profile_skips_even_when_the_nvlink_call_failed():
    facts = facts_of("excerpt-l40s-q-load.txt", read("excerpt-l40s-nvlink-s.txt"), nvlink_error="nvidia-smi nvlink: x")
    checks = nvlink_checks(facts, "l40s")
    assert [(c["status"], c["remedy"]) for c in checks] == [("skip", "none")] * 2
    assert checks[0]["message"] == "GPU 0: a l40s has no NVLink (PCIe card); not judged"


def test_gpu_without_nvlink_facts_skips():
    facts = facts_of("excerpt-l40s-q-load.txt", read("excerpt-l40s-nvlink-s.txt"))
    checks = nvlink_checks(facts, "h100")  # a profile with NVLink, but the driver says this GPU has none
    assert [c["status"] for c in checks] == ["skip", "skip"]
    assert checks[0]["message"] == ("GPU 0: no NVLink is reported for this GPU (not collected, or the driver says the "
                                    "device has no NVLink)")


def test_nvlink_error_is_an_error_check_for_nvlink_only():
    error = "nvidia-smi nvlink: timed out after 60 s (process group killed)"
    facts = h100("", nvlink_error=error)
    checks = rules.judge_gpu("node07", facts, PROFILES["h100"])
    nv = [c for c in checks if c["id"] in NVLINK_CHECK_IDS]
    assert brief(nv) == [("gpu.nvlink.links", "error", None, None, "investigate"),
                         ("gpu.nvlink.speed", "error", None, None, "investigate")]
    assert nv[0]["message"] == "GPU 0: the NVLink state could not be read, so this check could not run: " + error
    assert [c["id"] for c in checks if c["status"] == "error"] == list(NVLINK_CHECK_IDS)


def test_mig_mode_skips():
    facts = facts_of("excerpt-h100-mig-q-load.txt", read("excerpt-h100-mig-nvlink-s.txt"))
    checks = nvlink_checks(facts)
    assert [c["status"] for c in checks] == ["skip", "skip"]
    assert checks[0]["message"] == "GPU 0 is in MIG mode, where the driver does not report NVLink state"
    assert checks[0]["evidence"] == "nvlink.message: Nvlink queries are not supported for Devices in MIG mode"


def test_unknown_driver_message_is_an_error():
    text = read("excerpt-h100-80gb-hbm3-nvlink-s.txt").splitlines()[0] + "\nUnknown Error\n"
    checks = nvlink_checks(h100(text))
    assert [(c["status"], c["remedy"]) for c in checks] == [("error", "investigate")] * 2
    assert checks[0]["message"] == ("GPU 0: the driver printed 'Unknown Error' instead of the NVLink states, so this "
                                    "check could not run")


def test_no_profile_figures_skip_with_the_observed_count():
    checks = nvlink_checks(h100(), profile=None)
    assert brief(checks) == [("gpu.nvlink.links", "skip", 18, None, "none"),
                             ("gpu.nvlink.speed", "skip", "26.562 GB/s", None, "none")]
    override = rules.merge_profile(PROFILES["h100"], {"nvlink": {"links": 16}})
    assert nvlink_checks(h100(), override)[0]["status"] == "pass"


def test_bridged_h100_pcie_pair_against_a_site_link_count():
    status = nvlink.parse_status(read("nvlink-s-h100-pcie-x2-bridge-partial.txt"))
    facts = h100()
    facts["gpus"][0]["nvlink"] = status[0]["nvlink"]
    site = rules.merge_profile(PROFILES["h100"], {"nvlink": {"links": 12}})
    links, speed = nvlink_checks(facts, site)
    assert (links["status"], links["observed"], speed["status"]) == ("pass", 12, "pass")
    links, _ = nvlink_checks(facts)  # the SXM profile wants 18
    assert links["status"] == "fail"
    assert links["message"].startswith("GPU 0 has 12 of 18 NVLinks active (link 4-5, 10-11, 16-17 inactive)")


def test_every_non_pass_names_a_remedy_from_the_vocabulary():
    text = read("excerpt-h100-80gb-hbm3-nvlink-s.txt").replace("Link 7: 26.562 GB/s", "Link 7: <inactive>")
    for facts in (h100(), h100(text), h100("", nvlink_error="x")):
        for check in nvlink_checks(facts):
            assert check["remedy"] in REMEDIES
            assert (check["remedy"] == "none") == (check["status"] in ("pass", "skip"))


def test_summary_for_the_report():
    assert nvlink_summary(h100()) == {"nvlink_active": 18, "nvlink_total": 18, "nvlink_error": None}
    l40s = facts_of("excerpt-l40s-q-load.txt", read("excerpt-l40s-nvlink-s.txt"))
    assert nvlink_summary(l40s) == {"nvlink_active": None, "nvlink_total": None, "nvlink_error": None}
    assert nvlink_summary(h100("", nvlink_error="e"))["nvlink_error"] == "e"


def test_lab_node_with_a_down_link(tmp_path):
    """End to end on the lab's simulator: nvidia-smi -q -x + nvlink -s collected, then judged."""
    repo = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"schema": 1, "node": "unit01", "index": 1, "model": "a100", "gpus": 8,
                                 "capture": os.path.join(FIXTURES, "q-x-a100-sxm4-80gb-mig-535.xml"),
                                 "faults": [{"kind": "nvlink_down", "gpu": 3, "link": 5}]}))
    prog = tmp_path / "nvidia-smi"
    prog.write_text('#!/bin/sh\nexec %s -I -S %s --state %s "$@"\n'
                    % (sys.executable, os.path.join(repo, "lab", "sim", "nvidia_smi.py"), state))
    prog.chmod(prog.stat().st_mode | stat.S_IXUSR)
    checks = nvlink_checks(collect_facts(str(prog), 30), "a100")
    failing = [(c["id"], c["component"].split(" (")[0], c["observed"], c["remedy"]) for c in checks if c["status"] != "pass"]
    assert failing == [("gpu.nvlink.links", "GPU 3", 11, "reset_gpu")]
    assert len(checks) == 16


# ------------------------------------------------------------------------------------------ fabric state

def fabric_checks(facts, profile="h100"):
    checks = rules.judge_gpu("node07", facts, PROFILES[profile])
    return [(c["component"].split(" (")[0], c["status"], c["observed"], c["remedy"]) for c in checks
            if c["id"] == "gpu.fabric.state"]


def test_fabric_completed_on_a_real_h100_capture_passes():
    facts = h100()
    fabric = facts["gpus"][0]["fabric"]
    assert (fabric["state"], fabric["status"], fabric["clique_id"]) == ("Completed", "Success", "0")
    assert fabric["cluster_uuid"] == "00000000-0000-0000-0000-000000000000"
    assert set(fabric["health"].values()) == {None}  # the 590 capture prints every health flag as N/A
    assert fabric_checks(facts) == [("GPU 0", "pass", "Completed / Success", "none")]


def test_fabric_not_reported_skips_on_the_real_a100_capture():
    facts = nvidia_smi.parse(read("q-x-a100-sxm4-80gb-mig-535.xml"))
    fabric = facts["gpus"][0]["fabric"]
    assert (fabric["state"], fabric["status"], fabric["clique_id"], fabric["cluster_uuid"]) == (None,) * 4
    assert [c[1] for c in fabric_checks(facts, "a100")] == ["skip"]


def test_fabric_training_warns_and_failure_fails():
    # edited values of the real H100 capture: the states the driver prints while the fabric manager works
    training = read("excerpt-h100-80gb-hbm3-q-load.txt").replace(
        "        State                                          : Completed",
        "        State                                          : In Progress", 1)
    facts = nvlink.attach(nvidia_smi.parse(training), nvlink.parse_status(read("excerpt-h100-80gb-hbm3-nvlink-s.txt")))
    assert fabric_checks(facts) == [("GPU 0", "warn", "In Progress / Success", "investigate")]
    failed = training.replace("In Progress", "Completed").replace(
        "        Status                                         : Success",
        "        Status                                         : Failure", 1)
    facts = nvlink.attach(nvidia_smi.parse(failed), nvlink.parse_status(read("excerpt-h100-80gb-hbm3-nvlink-s.txt")))
    assert fabric_checks(facts) == [("GPU 0", "fail", "Completed / Failure", "investigate")]


def test_a_block_read_in_part_warns_and_a_link_seen_down_still_fails():
    # issue 23: the real H100 excerpt with one link line elided - 17 links seen up, none seen down
    text = read("excerpt-h100-80gb-hbm3-nvlink-s.txt").replace("\t Link 7: 26.562 GB/s", "\t ...")
    links, dummy = nvlink_checks(h100(text))
    assert brief([links]) == [("gpu.nvlink.links", "warn", 17, ">= 18", "investigate")]
    assert "could not be read" in links["message"]
    # the same with another link down: the inactive link is seen, a fail
    text = text.replace("Link 9: 26.562 GB/s", "Link 9: <inactive>")
    links, dummy = nvlink_checks(h100(text))
    assert brief([links]) == [("gpu.nvlink.links", "fail", 16, ">= 18", "reset_gpu")]
