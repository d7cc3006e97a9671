# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""gpu.temperature.peers (issue 24 item 4): a GPU far hotter than its node's other GPUs at the same load, on the
real 8x H100 535.161.08 ``-q`` of leptonai/gpud (29-32 degC idle, 67-72 W; tests/fixtures/PROVENANCE.md) and value
edits of it."""

from __future__ import annotations

import os

from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import nvidia_smi
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import gpu as rules
from ansible_collections.zhisuan.ops.plugins.plugin_utils._profiles import load_profiles

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "nvidia-smi")
CAPTURE = "q-h100x8-535.161.08-hw-power-brake-slowdown.txt"
PROFILES = load_profiles()


def read(name=CAPTURE):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        return handle.read()


def edit_nth(text, old, new, nth):
    """Replace the ``nth`` (0-based) occurrence of ``old``: one GPU's value of the 8-GPU capture."""
    parts = text.split(old)
    assert len(parts) > nth + 1
    return old.join(parts[:nth + 1]) + new + old.join(parts[nth + 1:])


def peers(text, thresholds=None, profile=None):
    checks = rules.judge_gpu("node07", nvidia_smi.parse(text), profile, thresholds=thresholds)
    return [c for c in checks if c["id"] == "gpu.temperature.peers"]


def test_the_real_capture_passes_on_every_gpu():
    checks = peers(read())
    assert [c["status"] for c in checks] == ["pass"] * 8
    assert checks[3]["observed"] == u"30 \u00b0C (peers' median 31 \u00b0C)"


def test_one_gpu_20_degrees_hotter_at_the_same_load_warns():
    text = edit_nth(read(), "GPU Current Temp                  : 30 C", "GPU Current Temp                  : 51 C", 1)
    checks = peers(text)
    assert [(c["component"].split(" (")[0], c["status"], c["remedy"]) for c in checks if c["status"] != "pass"] == [
        ("GPU 3", "warn", "investigate")]
    assert "20 \u00b0C hotter than the median" in checks[3]["message"]
    # a site that tolerates more, or a profile's own figure
    assert peers(text, thresholds={"temperature_peer_delta_c": 25})[3]["status"] == "pass"
    profile = dict(PROFILES["h100"], temperature={"gpu_warn_margin_c": 5, "peer_delta_c": 25})
    assert peers(text, profile=profile)[3]["status"] == "pass"


def test_a_hotter_gpu_that_draws_more_power_is_a_load_difference():
    text = edit_nth(read(), "GPU Current Temp                  : 30 C", "GPU Current Temp                  : 51 C", 1)
    text = text.replace("Power Draw                        : 71.37 W", "Power Draw                        : 410.00 W", 1)
    check = peers(text)[3]
    assert check["status"] == "pass" and "a higher load" in check["message"]


def test_a_single_gpu_node_is_not_compared():
    assert [c["status"] for c in peers(read("excerpt-h100-80gb-hbm3-q-load.txt"))] == ["skip"]
