# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""zhisuan.ops.fio_run and its collect step with the REAL fio (apt fio; small files, 1 s jobs, in tmp_path), plus
programs behind the seam for the failures real fio cannot be made to show here (a hang)."""

from __future__ import annotations

import json
import os
import shutil
import stat

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ToolFailed, ToolTimeout
from ansible_collections.zhisuan.ops.plugins.module_utils._storage import collect
from ansible_collections.zhisuan.ops.plugins.modules import fio_run

pytestmark = pytest.mark.usefixtures("as_node")

FIO = shutil.which("fio")
needs_fio = pytest.mark.skipif(FIO is None, reason="fio is not installed (apt install fio)")
SMALL = [
    {"name": "seq_read", "rw": "read", "bs": "1M", "size": "8M", "runtime": 1, "iodepth": 4},
    {"name": "rand_write", "rw": "randwrite", "bs": "4k", "size": "8M", "runtime": 1, "iodepth": 8, "numjobs": 2},
]


def _run(args, capsys):
    with patch_module_args(args):
        with pytest.raises(SystemExit) as info:
            fio_run.main()
    return info.value.code, json.loads(capsys.readouterr().out)


def test_default_jobs_are_the_acceptance_profile():
    jobs = collect.normalize_jobs(None)
    assert [(job["name"], job["rw"], job["bs"], job["iodepth"], job["size"], job["runtime"]) for job in jobs] == [
        ("seq_read", "read", "1M", 16, "1G", 30), ("seq_write", "write", "1M", 16, "1G", 30),
        ("rand_read", "randread", "4k", 32, "1G", 30), ("rand_write", "randwrite", "4k", 32, "1G", 30)]
    assert collect.default_timeout(jobs) == 4 * (30 + 30) + 60


def test_build_argv_one_section_per_job_stonewalled():
    jobs = collect.normalize_jobs(SMALL + [{"name": "dev", "rw": "randread", "bs": "4k", "filename": "/dev/nvme0n1",
                                            "direct": False, "options": {"rwmixread": 70}}])
    assert collect.build_argv("fio", jobs, directory="/data") == [
        "fio", "--output-format=json", "--group_reporting",
        "--name=seq_read", "--rw=read", "--bs=1M", "--size=8M", "--iodepth=4", "--numjobs=1", "--runtime=1",
        "--time_based", "--ioengine=libaio", "--direct=1", "--directory=/data", "--unlink=1",
        "--name=rand_write", "--stonewall", "--rw=randwrite", "--bs=4k", "--size=8M", "--iodepth=8", "--numjobs=2",
        "--runtime=1", "--time_based", "--ioengine=libaio", "--direct=1", "--directory=/data", "--unlink=1",
        "--name=dev", "--stonewall", "--rw=randread", "--bs=4k", "--size=1G", "--iodepth=16", "--numjobs=1",
        "--runtime=30", "--time_based", "--ioengine=libaio", "--direct=0", "--filename=/dev/nvme0n1",
        "--rwmixread=70"]
    assert collect.build_argv("fio", jobs[:1], cleanup=False)[-1] == "--direct=1"


@pytest.mark.parametrize("jobs, message", [
    ([], "jobs: at least one fio job is needed"),
    (["seq"], "jobs[0] must be a dict, got 'seq'"),
    ([{"name": "a", "rw": "read", "bs": "4k", "blocksize": "4k"}],
     "jobs[0]: unknown key(s) blocksize (known: name, rw, bs, size, iodepth, numjobs, runtime, ioengine, direct, "
     "directory, filename, options)"),
    ([{"name": "a b", "rw": "read", "bs": "4k"}], "jobs[0]: name 'a b' must be letters, digits, '_', '.' or '-'"),
    ([{"name": "a", "rw": "read", "bs": "4k"}, {"name": "a", "rw": "write", "bs": "4k"}],
     "jobs[1]: job name 'a' is used twice"),
    ([{"name": "a", "rw": "sequential", "bs": "4k"}],
     "job a: rw 'sequential' is not one of read, write, randread, randwrite, rw, readwrite, randrw, trim, randtrim, "
     "trimwrite"),
    ([{"name": "a", "rw": "read"}], "job a: bs (block size, e.g. 4k or 1M) is required"),
    ([{"name": "a", "rw": "read", "bs": "4k", "runtime": 0}], "job a: runtime must be a positive integer, got 0"),
    ([{"name": "a", "rw": "read", "bs": "4k", "filename": "--exec=x"}],
     "job a: filename '--exec=x' must be one word that does not start with '-'"),
    ([{"name": "a", "rw": "read", "bs": "4k", "options": {"exec_prerun": "rm -rf /"}}],
     "job a: option exec_prerun=rm -rf / is not a plain fio option"),
])
def test_bad_job_specs(jobs, message):
    with pytest.raises(ValueError) as info:
        collect.normalize_jobs(jobs)
    assert str(info.value) == message


@needs_fio
def test_real_fio_two_jobs_and_cleanup(tmp_path):
    warnings = []
    facts = collect.run_fio(FIO, SMALL, directory=str(tmp_path), warn=warnings.append)
    assert warnings == []
    assert facts["rc"] == 0
    assert facts["job_order"] == ["seq_read", "rand_write"]
    assert facts["fio_version"].startswith("fio-3.")
    for name, direction in (("seq_read", "read"), ("rand_write", "write")):
        job = facts["jobs"][name]
        assert job["errors"] == []
        assert job["active"] == [direction]
        assert job["bw_mib"] > 0 and job["iops"] > 0
        assert job["lat_us"]["p50"] > 0 and job["lat_us"]["p99"] >= job["lat_us"]["p50"]
    assert facts["jobs"]["rand_write"]["numjobs"] == 2
    assert os.listdir(str(tmp_path)) == []


@needs_fio
def test_real_fio_io_error_is_kept_in_the_jobs_errors(tmp_path):
    facts = collect.run_fio(FIO, [{"name": "full", "rw": "write", "bs": "4k", "size": "1M", "runtime": 1,
                                   "filename": "/dev/full", "direct": False, "ioengine": "psync"}],
                            directory=str(tmp_path))
    assert facts["rc"] == 1
    job = facts["jobs"]["full"]
    assert job["error"] == 28
    assert job["errors"] == ["fio job error 28 (No space left on device in io_u error)"]
    assert "io_u error on file /dev/full: No space left on device: write offset=0, buflen=4096" in facts["messages"]
    assert os.listdir(str(tmp_path)) == []


@needs_fio
def test_real_fio_refusing_an_option_is_tool_failed(tmp_path):
    with pytest.raises(ToolFailed) as info:
        collect.run_fio(FIO, SMALL[:1], directory=str(tmp_path / "missing"))
    assert info.value.message == "fio: exited with rc 1: %s is not a directory" % (tmp_path / "missing")
    assert info.value.rc == 1


def test_a_hanging_fio_times_out_and_leftovers_are_removed(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    prog = tmp_path / "fio"
    prog.write_text("#!/bin/sh\ntouch %s/seq_read.0.0\nexec sleep 30\n" % work)
    prog.chmod(prog.stat().st_mode | stat.S_IXUSR)
    (work / "keep.txt").write_text("not fio's")
    with pytest.raises(ToolTimeout) as info:
        collect.run_fio(str(prog), SMALL[:1], directory=str(work), timeout=1)
    assert info.value.message == "fio: timed out after 1 s (process group killed)"
    assert os.listdir(str(work)) == ["keep.txt"]


@needs_fio
def test_module_runs_real_fio(tmp_path, capsys):
    code, out = _run({"fio_path": FIO, "directory": str(tmp_path), "jobs": SMALL[:1]}, capsys)
    assert code == 0, out
    assert out["changed"] is False
    job = out["storage"]["jobs"]["seq_read"]
    assert (job["rw"], job["bs"], job["errors"]) == ("read", "1M", [])
    assert job["bw_mib"] > 0
    assert out["storage"]["directory"] == str(tmp_path)
    assert out["storage"]["cmd"][:3] == [FIO, "--output-format=json", "--group_reporting"]


def test_module_rejects_a_missing_directory(tmp_path, capsys):
    code, out = _run({"directory": str(tmp_path / "nope")}, capsys)
    assert code == 1
    assert out["msg"] == ("directory %s does not exist on the node (create it, or point fio at the storage under "
                          "test)" % (tmp_path / "nope"))


def test_module_rejects_a_bad_job(tmp_path, capsys):
    code, out = _run({"directory": str(tmp_path), "jobs": [{"name": "x", "rw": "read"}]}, capsys)
    assert code == 1
    assert out["msg"] == "job x: bs (block size, e.g. 4k or 1M) is required"


def test_module_fio_not_found(tmp_path, capsys):
    code, out = _run({"directory": str(tmp_path), "fio_path": str(tmp_path / "fio"), "jobs": SMALL[:1]}, capsys)
    assert code == 1
    assert (out["error_kind"], out["msg"]) == ("not_found", "fio: not found at %s" % (tmp_path / "fio"))


def test_module_is_skipped_in_check_mode(tmp_path, capsys):
    code, out = _run({"directory": str(tmp_path), "_ansible_check_mode": True}, capsys)
    assert code == 0
    assert out["skipped"] is True
    assert os.listdir(str(tmp_path)) == []
