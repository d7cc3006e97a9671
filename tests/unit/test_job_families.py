# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The opt-in families of issue 15 in the runs' family selection (plugin_utils/_families.py): k8s and slurm in
acceptance and inspect, job in diagnose - never selected by default, selected when named."""

from __future__ import annotations

import pytest

from ansible_collections.zhisuan.ops.plugins.plugin_utils._families import SelectionError, select_families


@pytest.mark.parametrize("kind, tags, variables, expected", [
    ("acceptance", [], {}, ["gpu", "xid", "dcgm", "nic", "rdma", "cabling", "nccl", "storage"]),
    ("inspect", [], {}, ["gpu", "xid", "dcgm", "tuning"]),
    ("diagnose", [], {}, ["gpu", "xid", "dcgm"]),
    ("acceptance", ["slurm"], {}, ["slurm"]),
    ("acceptance", ["k8s", "gpu"], {}, ["gpu", "k8s"]),
    # the lab's variable lists gpu, xid, dcgm: a tag still reaches an opt-in family
    ("acceptance", ["slurm"], {"zhisuan_acceptance_families": ["gpu", "xid", "dcgm"]}, ["slurm"]),
    ("inspect", [], {"zhisuan_families": ["gpu", "k8s"]}, ["gpu", "k8s"]),
    ("diagnose", [], {"zhisuan_job": "4127"}, ["gpu", "xid", "dcgm", "job"]),
    ("diagnose", ["job"], {"zhisuan_job": "4127"}, ["job"]),
    ("diagnose", [], {"zhisuan_job": "4127", "zhisuan_diag_level": "custom", "zhisuan_diag_families": ["gpu"]}, ["gpu", "job"]),
])
def test_opt_in_families(kind, tags, variables, expected):
    assert select_families(kind, tags, [], variables)["families"] == expected


def test_skip_tags_leave_the_job_out():
    assert select_families("diagnose", [], ["job"], {"zhisuan_job": "4127"})["families"] == ["gpu", "xid", "dcgm"]


def test_job_tag_without_a_job_is_an_error():
    with pytest.raises(SelectionError) as info:
        select_families("diagnose", ["job"], [], {})
    assert "the job family of the diagnose run needs -e zhisuan_job=<job id>" in str(info.value)
