# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""gpu.fabric.state beyond State/Status (issue 24 item 1): the NVLink fabric's clique id, cluster UUID and health
flags, and a GPU that failed registration beside GPUs that did not.

Healthy inputs are real captures (tests/fixtures/PROVENANCE.md): the H100 590.48.01 ``-q`` excerpt, which prints the
whole Fabric section (health flags N/A), and gpud's 8x H100 535.161.08 ``-q``. Faults are value edits of them; the
values written are those real nodes printed in public reports: ``Status : Insufficient Resources`` with ``CliqueId : 0``
(Azure/azhpc-images#506), ``Summary : Unhealthy`` beside ``Bandwidth : Full`` (kubernetes-sigs/dra-driver-nvidia-gpu
#626), the True/False and Full/Degraded spellings of the health rows (NVIDIA/k8s-test-infra#677, a real GB300 tray on
driver 580.173.02), ``CliqueId`` 4026 with a cluster UUID on a real GB200 (leptonai/gpud#1106).
"""

from __future__ import annotations

import os

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import nvidia_smi
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import gpu as rules
from ansible_collections.zhisuan.ops.plugins.plugin_utils._profiles import load_profiles

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "nvidia-smi")
PROFILES = load_profiles()
H100_590 = "excerpt-h100-80gb-hbm3-q-load.txt"
H100X8_535 = "q-h100x8-535.161.08-hw-power-brake-slowdown.txt"


def read(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        return handle.read()


def edit_health(text, **rows):
    for name, value in rows.items():
        label = name.replace("_", " ")
        label = {"Route Recovery": "Route Recovery in progress"}.get(label, label)
        lines = [line for line in text.splitlines() if line.strip().startswith(label + " ") and ": N/A" in line]
        assert len(lines) == 1, label
        text = text.replace(lines[0], lines[0].replace(": N/A", ": %s" % value), 1)
    return text


def fabric(text, profile="h100"):
    warnings = []
    facts = nvidia_smi.parse(text, warn=warnings.append)
    assert warnings == []
    checks = rules.judge_gpu("node07", facts, PROFILES[profile])
    fabric_checks = [c for c in checks if c["id"] == "gpu.fabric.state"]
    return [(c["component"].split(" (")[0], c["status"], c["remedy"]) for c in fabric_checks], fabric_checks


def test_healthy_captures_pass_and_no_other_capture_changes():
    assert fabric(read(H100_590))[0] == [("GPU 0", "pass", "none")]
    assert fabric(read(H100X8_535))[0] == [("GPU %d" % i, "pass", "none") for i in range(8)]
    # a zero clique and UUID is what a healthy HGX board prints: no fail without the multi-node profile flag
    assert PROFILES["h100"]["nvlink"].get("multi_node") is None


def test_health_flags_parse_from_the_edited_capture():
    text = edit_health(read(H100_590), Summary="Unhealthy", Bandwidth="Degraded", Route_Unhealthy="True")
    health = nvidia_smi.parse(text)["gpus"][0]["fabric"]["health"]
    assert health["summary"] == "Unhealthy"
    assert health["bandwidth"] == "Degraded"
    assert health["route_unhealthy"] == "True"
    assert health["access_timeout_recovery"] is None


@pytest.mark.parametrize("rows, remedy, words", [
    ({"Route_Unhealthy": "True", "Summary": "Unhealthy"}, "reboot", "Route Unhealthy"),
    ({"Bandwidth": "Degraded", "Summary": "Unhealthy"}, "reset_gpu", "Bandwidth Degraded"),
    ({"Access_Timeout_Recovery": "True"}, "reset_gpu", "Access Timeout Recovery"),
    ({"Incorrect_Configuration": "Incompatible GPU firmware"}, "investigate", "Incorrect Configuration"),
    ({"Summary": "Unhealthy", "Bandwidth": "Full"}, "investigate", "Summary Unhealthy"),
    # two flags: the stronger remedy wins
    ({"Bandwidth": "Degraded", "Route_Unhealthy": "True"}, "reboot", "Bandwidth Degraded"),
])
def test_a_health_flag_fails_with_its_remedy(rows, remedy, words):
    brief, checks = fabric(edit_health(read(H100_590), **rows))
    assert brief == [("GPU 0", "fail", remedy)]
    assert words in checks[0]["message"]
    assert "fabric.health" in checks[0]["evidence"]


def test_healthy_flags_spelled_out_still_pass():
    text = edit_health(read(H100_590), Summary="Healthy", Bandwidth="Full", Route_Recovery="False",
                       Route_Unhealthy="False", Access_Timeout_Recovery="False", Incorrect_Configuration="None")
    assert fabric(text)[0] == [("GPU 0", "pass", "none")]


def test_route_recovery_alone_warns():
    brief, checks = fabric(edit_health(read(H100_590), Route_Recovery="True"))
    assert brief == [("GPU 0", "warn", "investigate")]
    assert "Route Recovery in progress" in checks[0]["message"]


def test_one_gpu_failing_registration_beside_registered_peers_is_a_reset():
    text = read(H100X8_535)
    status = "        Status                            : Success"
    assert text.count(status) == 8
    head, tail = text.split(status, 3)[:3], text.split(status, 3)[3]
    edited = status.join(head) + "        Status                            : Insufficient Resources" + tail
    brief, checks = fabric(edited)
    assert brief == [("GPU %d" % i, "fail" if i == 2 else "pass", "reset_gpu" if i == 2 else "none")
                     for i in range(8)]
    assert "7 of the node's other 7 GPUs did" in checks[2]["message"]


def test_every_gpu_failing_registration_points_at_the_fabric_manager():
    text = read(H100X8_535).replace("Status                            : Success",
                                    "Status                            : Insufficient Resources")
    brief = fabric(text)[0]
    assert brief == [("GPU %d" % i, "fail", "investigate") for i in range(8)]


def test_not_started_on_an_idle_node_is_never_a_fail():
    text = read(H100_590).replace("State                                          : Completed",
                                  "State                                          : Not Started", 1)
    brief, checks = fabric(text, "gb200")
    assert brief == [("GPU 0", "warn", "investigate")]
    assert "bandwidth test passes" in checks[0]["message"]


def test_zero_clique_on_a_multi_node_nvlink_model_fails_and_a_domain_passes():
    # the real capture's clique 0 / zero UUID judged as a GB200 (profile nvlink.multi_node: true)
    brief, checks = fabric(read(H100_590), "gb200")
    assert brief == [("GPU 0", "fail", "investigate")]
    assert "no NVLink domain" in checks[0]["message"]
    # the clique and cluster UUID a real GB200 reported (leptonai/gpud#1106)
    text = read(H100_590).replace("CliqueId                                       : 0",
                                  "CliqueId                                       : 4026").replace(
        "00000000-0000-0000-0000-000000000000", "9c6f5af3-53bf-49b5-a436-b66766c413c3")
    assert fabric(text, "gb200")[0] == [("GPU 0", "pass", "none")]
