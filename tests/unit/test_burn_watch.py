# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The node-side stability watch (_gpu/burn_watch.py) with real programs behind the seam: a shell nvidia-smi that
prints a real capture, fails, or hangs; and gpu_burn with its watch through the module."""

from __future__ import annotations

import json
import os
import stat
import time

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import burn_collect, burn_watch
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import _stability
from ansible_collections.zhisuan.ops.plugins.modules import gpu_burn

pytestmark = pytest.mark.usefixtures("as_node")

FIXTURES = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, "fixtures"))
XML = os.path.join(FIXTURES, "nvidia-smi", "q-x-tesla-t4-515.xml")
BURN = os.path.join(FIXTURES, "gpu-burn", "gpu-burn-8xA100-80GB-all-OK.log")


def _program(path, body):
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_samples_through_the_seam_every_interval_until_stopped(tmp_path):
    calls = tmp_path / "calls"
    smi = _program(tmp_path / "nvidia-smi", 'echo "$*" >> %s\ncat %s\n' % (calls, XML))
    out = tmp_path / "samples.jsonl"
    sampler = burn_watch.Sampler(burn_collect.watch_reader(smi, 10), 0.2, path=str(out))
    sampler.start()
    time.sleep(1.3)
    sampler.stop(wait=10)
    facts = sampler.facts()
    count = len(facts["samples"])
    assert 4 <= count <= 7, facts["samples"]
    assert calls.read_text().splitlines() == ["-q -x"] * count
    time.sleep(0.5)
    # stopped means stopped: no call after the end
    assert len(calls.read_text().splitlines()) == count
    first = facts["samples"][0]
    assert set(first) == {"t", "at", "gpu"}
    gpu = first["gpu"]["gpus"][0]
    assert set(gpu) <= set(burn_watch.GPU_KEYS) and "uuid" in gpu and "temperature" in gpu
    assert facts["started"] <= facts["samples"][0]["t"] <= facts["samples"][-1]["t"] <= facts["ended"]
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines == facts["samples"]
    assert (facts["stopped"], facts["write_error"], facts["thinned"]) == (None, None, 0)
    cover = burn_watch.coverage(facts)
    assert cover["samples"] == count and cover["max_gap_s"] < 1.0


def test_a_hung_nvidia_smi_is_killed_and_not_called_again(tmp_path):
    calls = tmp_path / "calls"
    smi = _program(tmp_path / "nvidia-smi", 'echo x >> %s\nsleep 30\n' % calls)
    sampler = burn_watch.Sampler(burn_collect.watch_reader(smi, 1), 0.1)
    sampler.start()
    time.sleep(2.5)
    sampler.stop(wait=5)
    facts = sampler.facts()
    assert calls.read_text() == "x\n"
    assert len(facts["samples"]) == 1 and facts["samples"][0]["error_kind"] == "timed_out"
    assert facts["stopped"].startswith("nvidia-smi timed out at sample 1 (nvidia-smi: timed out after 1 s")
    assert facts["stopped"].endswith("it is not called again in this run")
    assert burn_watch.coverage(facts)["samples"] == 0


def test_a_failing_nvidia_smi_is_kept_and_sampling_goes_on(tmp_path):
    smi = _program(tmp_path / "nvidia-smi", "echo 'NVIDIA-SMI has failed because it could not communicate' >&2\n"
                                            "exit 9\n")
    sampler = burn_watch.Sampler(burn_collect.watch_reader(smi, 5), 0.1, path=str(tmp_path / "no" / "dir.jsonl"))
    sampler.start()
    time.sleep(0.8)
    sampler.stop(wait=5)
    facts = sampler.facts()
    assert len(facts["samples"]) >= 3 and facts["stopped"] is None
    assert all(sample["error_kind"] == "failed" and "rc 9" in sample["error"] for sample in facts["samples"])
    assert facts["write_error"].startswith("could not write the samples to %s" % (tmp_path / "no" / "dir.jsonl"))


def test_samples_in_memory_are_bounded_and_still_span_the_burn():
    clock = iter(range(10000))
    sampler = burn_watch.Sampler(lambda: {"gpus": [{"index": 0, "junk": "x" * 100}]}, 30, clock=lambda: next(clock),
                                 max_samples=10)
    sampler.start = lambda: None
    sampler.started = -1
    for _ in range(55):
        assert sampler.sample_once()
    assert len(sampler.samples) <= 10
    assert sampler.thinned == 55 - len(sampler.samples)
    assert sampler.samples[0]["t"] == 0 and sampler.samples[-1]["t"] == 54
    assert sampler.samples[0]["gpu"] == {"gpus": [{"index": 0}]}


def test_a_bug_in_reading_does_not_end_the_watch():
    sampler = burn_watch.Sampler(lambda: {}["missing"], 1)
    sampler.started = 0
    assert sampler.sample_once() is True
    assert sampler.samples[0]["error_kind"] == "failed" and "missing" in sampler.samples[0]["error"]


def test_bad_interval_is_refused():
    with pytest.raises(ValueError, match="positive number of seconds, got 0"):
        burn_watch.Sampler(lambda: {}, 0)


def test_gpu_burn_module_returns_its_watch_covering_the_burn(tmp_path, capsys):
    smi = _program(tmp_path / "nvidia-smi", "cat %s\n" % XML)
    burn = _program(tmp_path / "gpu_burn", "sleep 2.5\ncat %s\n" % BURN)
    path = tmp_path / "s.jsonl"
    with patch_module_args({"gpu_burn_path": burn, "duration": 2, "sample_s": 1, "nvidia_smi_path": smi,
                            "samples_path": str(path)}):
        with pytest.raises(SystemExit) as info:
            gpu_burn.main()
    out = json.loads(capsys.readouterr().out)
    assert info.value.code == 0, out
    watch = out["watch"]
    assert 2 <= len(watch["samples"]) <= 3
    assert watch["started"] < watch["samples"][0]["t"] and watch["samples"][-1]["t"] < watch["ended"]
    assert watch["ended"] - watch["started"] >= 2.5
    assert len(path.read_text().splitlines()) == len(watch["samples"])
    record = _stability.watch_record(watch)
    assert record["sample_times"] == [sample["at"] for sample in watch["samples"]]
    assert record["coverage"]["max_gap_s"] <= 1.6 and record["failed_samples"] == []


def test_gpu_burn_failure_keeps_the_samples_taken(tmp_path, capsys):
    smi = _program(tmp_path / "nvidia-smi", "cat %s\n" % XML)
    burn = _program(tmp_path / "gpu_burn", "sleep 30\n")
    with patch_module_args({"gpu_burn_path": burn, "duration": 1, "timeout": 2, "sample_s": 1,
                            "nvidia_smi_path": smi}):
        with pytest.raises(SystemExit) as info:
            gpu_burn.main()
    out = json.loads(capsys.readouterr().out)
    assert info.value.code == 1 and out["error_kind"] == "timed_out"
    assert len(out["watch"]["samples"]) >= 1 and out["watch"]["ended"] is not None


def test_negative_sample_s_is_an_option_error(tmp_path, capsys):
    burn = _program(tmp_path / "gpu_burn", "cat %s\n" % BURN)
    with patch_module_args({"gpu_burn_path": burn, "duration": 2, "sample_s": -5}):
        with pytest.raises(SystemExit):
            gpu_burn.main()
    out = json.loads(capsys.readouterr().out)
    assert out["failed"] and "sample_s must be 0 (no watch) or a number of seconds, got -5" in out["msg"]


def test_no_sample_is_taken_once_the_watch_has_ended():
    # the interval may run out just as the burn ends (stop() racing the sampler's wait): the sample that would start
    # then is not taken, so every sample lies inside the burn
    calls = []
    sampler = burn_watch.Sampler(lambda: calls.append(1) or {"gpus": []}, 5, clock=lambda: 100.0)
    sampler.started = 90.0
    assert sampler.sample_once() is True and len(calls) == 1
    sampler.stop()
    assert sampler.sample_once() is False
    facts = sampler.facts()
    assert len(calls) == 1 and len(facts["samples"]) == 1 and facts["ended"] == 100.0


def test_iso_rounds_to_the_millisecond_without_losing_the_second():
    assert burn_watch.iso(1796406769.9996) == "2026-12-04T17:52:50.000Z"
    assert burn_watch.iso(1796406769.1484) == "2026-12-04T17:52:49.148Z"
    assert burn_watch.iso(1796406769.0) == "2026-12-04T17:52:49.000Z"
