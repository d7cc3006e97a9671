# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The quality indicators (plugin_utils/_quality.py), on the job completion log of the lab's real Slurm."""

from __future__ import annotations

import pytest

from ansible_collections.zhisuan.ops.plugins.filter.quality_indicators import quality_indicators
from ansible_collections.zhisuan.ops.plugins.module_utils._sched.slurm_nodes import parse_jobcomp
from ansible_collections.zhisuan.ops.plugins.plugin_utils import _quality as quality
from fuzzing import fixture_text

RECORDS = parse_jobcomp(fixture_text("slurm/jobcomp-filetxt-requeue.txt"))


def test_mfu_from_throughput_flops_and_peak():
    # 8 GPUs at 989 TFLOPS dense; 3.0e4 tokens/s x 6 x 7e9 FLOPs/token = 1.26e15 FLOP/s -> 0.1593
    got = quality.mfu(30000, 6 * 7e9, 8, 989)
    assert got["value"] == pytest.approx(0.1593, abs=1e-4) and got["unit"] == "ratio" and "FLOPs" in got["definition"]


@pytest.mark.parametrize("args, missing", [((None, 4.2e10, 8, 989), ["throughput_per_s"]),
                                           ((30000, 4.2e10, 0, 989), ["gpus"]),
                                           ((3e9, 4.2e10, 8, 989), ["consistent inputs (MFU 15925.18 > 1)"])])
def test_mfu_not_computable(args, missing):
    got = quality.mfu(*args)
    assert got["value"] is None and got["missing"] == missing


def test_training_times_of_the_requeued_lab_job():
    times = quality.training_times(quality.attempts_of(RECORDS, job="2"))
    # attempt 1 22:12:29-22:12:30 (requeued, written PENDING), attempt 2 22:12:34-22:12:34 (cancelled)
    assert times["effective_training_time"]["value"] == 1 and times["effective_training_time"]["wall_s"] == 5
    assert times["effective_training_time"]["interruptions"] == 1 and times["effective_training_time"]["share"] == 0.2
    assert times["long_stable_training_time"]["value"] == 1
    assert times["task_recovery_time"]["value"] == 4 and times["task_recovery_time"]["all_s"] == [4]


def test_a_job_that_ran_once_has_no_recovery_time():
    times = quality.training_times(quality.attempts_of(RECORDS, job="1"))
    assert times["effective_training_time"]["value"] == 2 and times["task_recovery_time"]["value"] is None
    assert times["task_recovery_time"]["missing"] == ["an interruption followed by another attempt"]


def test_attempts_by_name_and_none():
    assert [a["id"] for a in quality.attempts_of(RECORDS, name="train-b")] == ["2", "2"]
    assert quality.training_times([])["effective_training_time"]["value"] is None


def test_availability_and_the_filter():
    assert quality.availability(8, 32, "slurm")["value"] == 0.25
    assert quality.availability(None, 32, "slurm")["value"] is None
    out = quality_indicators([r for r in RECORDS if r["id"] == "2"], throughput=30000, flops_per_unit=4.2e10, gpus=8,
                             peak_tflops=989, usable_gpus=24, installed_gpus=32, source="slurm")
    assert set(out) == {"mfu", "effective_training_time", "long_stable_training_time", "task_recovery_time",
                        "cluster_compute_availability"}
    assert out["task_recovery_time"]["value"] == 4 and out["cluster_compute_availability"]["value"] == 0.75


def test_mfu_takes_the_profiles_dense_peak_when_none_is_given():
    got = quality_indicators([r for r in RECORDS if r["id"] == "2"], throughput=30000, flops_per_unit=4.2e10, gpus=16,
                             profile="H100")["mfu"]
    assert got["value"] == pytest.approx(30000 * 4.2e10 / (16 * 989e12), abs=1e-4)
    assert got["inputs"]["peak_tflops_dense"] == 989 and got["inputs"]["peak_tflops_source"] == "profile h100 peak_tflops.bf16_dense"
    fp8 = quality_indicators([], throughput=30000, flops_per_unit=4.2e10, gpus=16, profile="h100", precision="FP8")["mfu"]
    assert fp8["inputs"]["peak_tflops_dense"] == 1979 and fp8["value"] == pytest.approx(30000 * 4.2e10 / (16 * 1979e12), abs=1e-4)


def test_a_given_peak_wins_over_the_profile():
    got = quality_indicators([], throughput=30000, flops_per_unit=4.2e10, gpus=16, peak_tflops=900, profile="H100")["mfu"]
    assert got["inputs"]["peak_tflops_dense"] == 900 and got["inputs"]["peak_tflops_source"] == "given"


@pytest.mark.parametrize("profile, precision, problem", [
    (None, "bf16", "no GPU profile (zhisuan_gpu_profile) to read the dense peak from"),
    ("Z9000", "bf16", "GPU profile 'Z9000' is not known"),
    ("A100", "fp8", "GPU profile a100 has no peak_tflops.fp8_dense"),
    ("H100", "int4", "precision 'int4' is not one of bf16, fp16, fp8, tf32"),
])
def test_mfu_without_a_known_peak_says_why(profile, precision, problem):
    got = quality.indicators([], throughput=30000, flops_per_unit=4.2e10, gpus=16, profile=profile, precision=precision)["mfu"]
    assert got["value"] is None and got["missing"] == ["peak_tflops_dense"] and got["inputs"]["peak_tflops_problem"] == problem


def test_profile_peak_reads_the_given_profiles():
    profiles = {"x1": {"name": "x1", "match": ["X1"], "peak_tflops": {"bf16_dense": 100, "fp8_dense": None}}}
    assert quality.profile_peak("X1", "bf16", profiles) == (100.0, "profile x1 peak_tflops.bf16_dense", None)
    assert quality.profile_peak("x1", "fp8", profiles)[2] == "GPU profile x1 has no peak_tflops.fp8_dense"

