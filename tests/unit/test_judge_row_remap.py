# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Row remapping as a policy (issue 24 item 3), on real captures and value edits of them: pending -> reset_gpu,
failure or banks with no spare row left -> rma (Xid 63/64 alone never an RMA: test_xid_rules); the lab's remap
faults are tested in test_lab.py.

Captures (tests/fixtures/PROVENANCE.md): the H100 590.48.01 ``-q`` excerpt and the A10 535.129.03 ``-q`` (text, its
"Bank Remap Availability Histogram"), the A10G 515 ``-q -x`` (XML ``<row_remapper_histogram>``).
"""

from __future__ import annotations

import os

from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import nvidia_smi
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import gpu as rules

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "nvidia-smi")
REMAP_IDS = ("gpu.remap.pending", "gpu.remap.failure", "gpu.remap.uncorrectable")


def read(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        return handle.read()


def remap(text, thresholds=None):
    warnings = []
    facts = nvidia_smi.parse(text, warn=warnings.append)
    assert warnings == []
    checks = rules.judge_gpu("node07", facts, None, thresholds=thresholds)
    return [(c["id"], c["status"], c["remedy"]) for c in checks if c["id"] in REMAP_IDS], checks


def test_histogram_is_read_from_text_and_xml():
    rows = nvidia_smi.parse(read("excerpt-h100-80gb-hbm3-q-load.txt"))["gpus"][0]["remapped_rows"]
    assert rows["banks"] == {"max": 2560, "high": 0, "partial": 0, "low": 0, "none": 0}
    rows = nvidia_smi.parse(read("q-x-a10g-515.xml"))["gpus"][0]["remapped_rows"]
    assert rows["banks"] == {"max": 192, "high": 0, "partial": 0, "low": 0, "none": 0}


def test_healthy_capture_passes():
    brief, dummy = remap(read("excerpt-h100-80gb-hbm3-q-load.txt"))
    assert brief == [(check_id, "pass", "none") for check_id in REMAP_IDS]


def test_the_real_a10_with_a_pending_remap_is_a_reset_not_an_rma():
    # the capture as printed: 4 rows remapped for uncorrectable errors, one more pending
    brief, dummy = remap(read("q-a10-535.129.03.txt"))
    assert brief == [("gpu.remap.pending", "fail", "reset_gpu"), ("gpu.remap.failure", "pass", "none"),
                     ("gpu.remap.uncorrectable", "pass", "none")]


def test_banks_with_no_spare_row_are_an_rma_and_a_site_may_allow_some():
    text = read("excerpt-h100-80gb-hbm3-q-load.txt")
    max_line = [line for line in text.splitlines() if line.strip().startswith("Max ")][0]
    none_line = [line for line in text.splitlines() if line.strip().startswith("None ")][0]
    text = text.replace(max_line, max_line.replace("2560 bank(s)", "2558 bank(s)")).replace(
        none_line, none_line.replace("0 bank(s)", "2 bank(s)"))
    brief, checks = remap(text)
    assert brief[2] == ("gpu.remap.uncorrectable", "fail", "rma")
    check = [c for c in checks if c["id"] == "gpu.remap.uncorrectable"][0]
    assert check["observed"] == "2 banks with no spare row"
    assert "remapped_rows.banks.none=2" in check["evidence"]
    brief, dummy = remap(text, thresholds={"remap_banks_exhausted_max": 2})
    assert brief[2] == ("gpu.remap.uncorrectable", "pass", "none")


def test_failure_flag_is_an_rma():
    text = read("q-a10-535.129.03.txt").replace(
        "Remapping Failure Occurred        : No", "Remapping Failure Occurred        : Yes")
    brief, dummy = remap(text)
    assert brief[1] == ("gpu.remap.failure", "fail", "rma")
