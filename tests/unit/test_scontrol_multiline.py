# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``scontrol show node`` without ``-o`` (issue 23): the multi-line form of Slurm 17.11 (irush-cs/slurm-scripts'
test data) and of the lab's real Slurm 22.05.8 (a drained node), read by _sched/scontrol_text.py and
slurm_nodes.parse_nodes line-tolerantly; the saved-output entry point ``src`` of slurm_node_info."""

from __future__ import annotations

import os

from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.zhisuan.ops.plugins.module_utils._sched import scontrol_text, slurm_nodes
from fuzzing import FIXTURES, FUZZ, CollectModule, assert_total, fixture_text, text_mutations

OLD = "slurm/scontrol-show-node-multiline-17.11-slurm-scripts.txt"
LAB = "slurm/scontrol-show-node-multiline-22.05-lab-drained.txt"
ONE_LINE = "slurm/scontrol-o-show-node-4-mixed-states.txt"


def test_the_1711_multiline_form_reads_every_node_with_its_gpus_and_drain():
    nodes = slurm_nodes.parse_nodes(fixture_text(OLD))
    assert [(n["name"], n["state"], n["gpus"]) for n in nodes.values()] == [
        ("cortex-01", "allocated", 8), ("dumfries-002", "allocated", 4), ("oxygen-04", "drained", None),
        ("cricket", "idle", 1)]
    assert (nodes["oxygen-04"]["reason"], nodes["oxygen-04"]["reason_user"], nodes["oxygen-04"]["reason_time"]) == (
        "memory issues?", "root", "2019-01-29T10:42:12")
    assert nodes["dumfries-002"]["partitions"] == ["short", "medium", "killable"]


def test_the_lab_2205_multiline_form_equals_what_the_one_line_parser_reads():
    nodes = slurm_nodes.parse_nodes(fixture_text(LAB))
    assert [(n["name"], n["state"], n["drain"], n["gpus"]) for n in nodes.values()] == [
        ("node01", "idle", False, 8), ("node02", "drained", True, 8)]
    assert nodes["node02"]["reason"] == "zhisuan: xid 79 on GPU 3" and nodes["node02"]["reason_user"] == "root"
    # the same records joined by hand are what `scontrol -o` would have printed: one parser, both forms
    joined = scontrol_text.one_line(fixture_text(LAB))
    assert len(joined.splitlines()) == 2 and slurm_nodes.parse_nodes(joined) == nodes


def test_the_one_line_form_passes_through():
    text = fixture_text(ONE_LINE)
    assert scontrol_text.one_line(text) == "\n".join(line.strip() for line in text.splitlines() if line.strip())


def test_a_damaged_record_is_a_warning_naming_its_line_and_the_others_are_read():
    lines = fixture_text(OLD).splitlines()
    # the dumfries-002 record loses its State= line (a paste cut in the middle), and a shell prompt slips in
    lines = [line for line in lines if not line.strip().startswith("State=ALLOCATED ThreadsPerCore=2")]
    lines.insert(0, "[root@login ~]# scontrol show node")
    warnings = []
    nodes = slurm_nodes.parse_nodes("\n".join(lines), warnings)
    assert sorted(nodes) == ["cortex-01", "cricket", "oxygen-04"]
    assert warnings[0].startswith("line 1: no NodeName=") and warnings[1].startswith("line 23: no NodeName= or State=")


def test_a_truncated_paste_keeps_the_nodes_before_the_cut():
    text = fixture_text(OLD)
    cut = text[:text.index("NodeName=cricket") + len("NodeName=cricket Arch=x86_64 CoresPerSocket=4 \n   CPUAlloc=0")]
    warnings = []
    nodes = slurm_nodes.parse_nodes(cut, warnings)
    assert list(nodes) == ["cortex-01", "dumfries-002", "oxygen-04"] and "no NodeName= or State=" in warnings[0]


def test_slurm_node_info_reads_a_saved_output():
    module = CollectModule({"scontrol_path": "/nonexistent/scontrol", "timeout": 10,
                            "src": os.path.join(FIXTURES, LAB), "partition_src": None})
    facts = slurm_nodes.collect_slurm_facts(module)["slurm"]
    assert sorted(facts["nodes"]) == ["node01", "node02"] and facts["partitions"] == {} and facts["warnings"] == []


@FUZZ
@given(st.sampled_from([OLD, LAB]).flatmap(lambda path: text_mutations(fixture_text(path))))
def test_multiline_node_parser_is_total(text):
    assert_total("slurm_nodes.parse_nodes multi-line", slurm_nodes.parse_nodes, text)
