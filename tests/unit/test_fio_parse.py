# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fio parsers on real captures (tests/fixtures/fio, see PROVENANCE.md) and on edited copies of them."""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._storage import fio

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "fio")


def _read(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return handle.read()


def _parse(text):
    warnings = []
    return fio.parse_json(text, warn=warnings.append), warnings


def test_fio_333_two_jobs_captured_here():
    facts, warnings = _parse(_read("fio-3.33-tmp-libaio-seqread-randwrite.json"))
    assert warnings == []
    assert facts["fio_version"] == "fio-3.33"
    assert facts["job_order"] == ["seq_read", "rand_write"]
    assert facts["messages"] == []
    assert facts["disk_util"] == [{"name": "vda", "util_pct": 59.81}]
    seq = facts["jobs"]["seq_read"]
    assert (seq["rw"], seq["bs"], seq["iodepth"], seq["numjobs"]) == ("read", "1M", 8, 1)
    assert (seq["bw_mib"], seq["iops"], seq["active"], seq["error"], seq["errors"]) == (1008.928, 1008.929, ["read"], 0, [])
    assert seq["lat_us"] == {"p50": 8028.16, "p99": 11862.016, "p999": 14221.312}
    assert seq["directions"]["read"]["lat_source"] == "clat_ns"
    assert sorted(seq["directions"]) == ["read"]
    rand = facts["jobs"]["rand_write"]
    assert (rand["rw"], rand["bs"], rand["iodepth"], rand["numjobs"]) == ("randwrite", "4k", 16, 2)
    assert (rand["bw_mib"], rand["iops"], rand["active"]) == (209.729, 53690.619, ["write"])
    assert rand["lat_us"] == {"p50": 280.576, "p99": 4751.36, "p999": 7307.264}


def test_fio_316_randrw_takes_global_options_and_the_worse_direction():
    facts, warnings = _parse(_read("fio-3.16-nvme-randrw-libaio.json"))
    assert warnings == []
    job = facts["jobs"]["rand_read_write"]
    assert (job["rw"], job["bs"], job["iodepth"], job["numjobs"]) == ("randrw", "4096", 64, 4)
    assert (job["bw_mib"], job["iops"], job["active"]) == (664.896, 170205.02, ["read", "write"])
    assert job["lat_us"] == {"p50": 1531.904, "p99": 2244.608, "p999": 3620.864}
    worst = max(job["directions"][key]["lat_us"]["p99"] for key in ("read", "write"))
    assert job["lat_us"]["p99"] == worst
    assert facts["disk_util"] == [{"name": "nvme0n1", "util_pct": 99.84}]


def test_fio_326_readwrite_with_duplicate_filename_keys():
    facts, _warnings = _parse(_read("fio-readwrite.json"))
    job = facts["jobs"]["disk_fill"]
    assert (job["rw"], job["bs"], job["bw_mib"], job["iops"]) == ("readwrite", "256k", 206.576, 826.306)
    assert job["directions"]["read"]["bw_mib"] == round(145843 / 1024.0, 3)
    assert job["lat_us"]["p99"] == 151864.912


def test_io_error_line_before_the_report_becomes_the_jobs_error():
    facts, warnings = _parse(_read("fio-3.33-dev-full-enospc.stdout"))
    assert warnings == []
    job = facts["jobs"]["full"]
    assert (job["error"], job["bw_mib"], job["iops"]) == (28, 0.0, 0.0)
    assert job["errors"] == ["fio job error 28 (No space left on device in io_u error)"]
    assert job["lat_us"] == {"p50": None, "p99": None, "p999": None}
    assert facts["messages"] == ["err=28 (No space left on device) in io_u error"]


def test_error_field_edited_into_a_clean_capture():
    data = json.loads(_read("fio-3.33-tmp-libaio-seqread-randwrite.json"))
    data["jobs"][1]["error"] = 5
    facts, _warnings = _parse(json.dumps(data))
    assert facts["jobs"]["rand_write"]["errors"] == ["fio job error 5"]
    assert facts["jobs"]["seq_read"]["errors"] == []


def test_error_line_edited_before_a_single_job_report():
    line = _read("fio-io_u-error-84.txt").rstrip("\n") + "\n"  # the capture has no final newline
    text = line + _read("fio-3.33-tmp-libaio-seqread-randwrite.json")
    data = json.loads(_read("fio-3.33-tmp-libaio-seqread-randwrite.json"))
    data["jobs"] = data["jobs"][:1]
    data["jobs"][0]["error"] = 84
    facts, _warnings = _parse(line + json.dumps(data))
    assert facts["jobs"]["seq_read"]["errors"] == ["fio job error 84 (Invalid or incomplete multibyte or wide character "
                                                   "in io_u_queued_complete)"]
    facts, warnings = _parse(text)
    assert warnings == ["fio printed errors not tied to a job: err=84 (Invalid or incomplete multibyte or wide "
                        "character) in io_u_queued_complete"]


def test_parse_errors_on_the_text_capture():
    errors, messages = fio.parse_errors(_read("fio-io_u-error-84.txt"))
    assert errors == [{"pid": 8281, "errno": 84, "where": "file:io_u.c:2141", "func": "io_u_queued_complete",
                       "error": "Invalid or incomplete multibyte or wide character"}]
    assert messages == []
    errors, messages = fio.parse_errors(_read("fio-3.33-no-directory.stderr"))
    assert errors == []
    assert messages == ["fio: /nonexistent is not a directory", "fio: failed parsing directory=/nonexistent"]


@pytest.mark.parametrize("name, message", [
    ("fio-io_u-error-84.txt", "fio: no JSON document in the output; fio said: err=84 (Invalid or incomplete multibyte "
                              "or wide character) in io_u_queued_complete"),
    ("fio-3.33-no-directory.stdout", "fio: no JSON document in the output; fio said: No such file or directory in lstat"),
])
def test_text_error_output_is_a_parse_error(name, message):
    with pytest.raises(ParseError) as info:
        fio.parse_json(_read(name))
    assert info.value.message == message


def _edited(change):
    data = json.loads(_read("fio-3.33-tmp-libaio-seqread-randwrite.json"))
    change(data)
    return json.dumps(data)


@pytest.mark.parametrize("text, message", [
    ("", "fio: empty output (expected a JSON document from --output-format=json)"),
    ("seq_read: (g=0): rw=read\n", "fio: no JSON document in the output (expected --output-format=json); it starts with "
                                   "'seq_read: (g=0): rw=read'"),
    ('{\n  "fio version" : "fio-3.33",\n  "jobs" : [',
     "fio: the JSON document cannot be read: Expecting value: line 3 column 13 (char 44)"),
    (_edited(lambda d: d.pop("jobs")),
     "fio: the JSON document has no jobs list (keys: disk_util, fio version, global options, time, timestamp, timestamp_ms)"),
    (_edited(lambda d: d.update(jobs=[])), "fio: the JSON document lists no jobs"),
    (_edited(lambda d: d["jobs"][0].pop("jobname")), "fio: jobs[0] has no jobname"),
    (_edited(lambda d: d["jobs"][0]["read"].update(bw="fast")), "fio: jobs[0].read.bw is not a number: 'fast'"),
    (_edited(lambda d: d["jobs"][1].update(error="EIO")), "fio: jobs[1].error is not an errno: 'EIO'"),
    (_edited(lambda d: [d["jobs"][0].pop(key) for key in ("read", "write", "trim")]),
     "fio: jobs[0] (seq_read) has no read, write or trim section"),
])
def test_bad_output_is_a_parse_error(text, message):
    with pytest.raises(ParseError) as info:
        fio.parse_json(text)
    assert info.value.message == message


def test_unexpected_line_before_the_report_warns():
    facts, warnings = _parse("note: something\n" + _read("fio-3.33-tmp-libaio-seqread-randwrite.json"))
    assert sorted(facts["jobs"]) == ["rand_write", "seq_read"]
    assert warnings == ["fio printed an unexpected line before its JSON output: 'note: something' (please report)"]


def test_duplicate_job_names_warn_and_keep_the_later():
    text = _edited(lambda d: d["jobs"][1].update(jobname="seq_read"))
    facts, warnings = _parse(text)
    assert facts["job_order"] == ["seq_read"]
    assert facts["jobs"]["seq_read"]["rw"] == "randwrite"
    assert warnings == ["fio reported job 'seq_read' more than once; the later entry (jobs[1]) is kept; use distinct "
                        "job names or group_reporting"]


def test_fio_2_1_without_total_ios_reads_io_and_percentiles():
    """Issue 12: fio 2.1.11 JSON (opnfv/storperf's test data) has no ``total_ios`` and its latencies in microseconds
    under ``clat``: the job is active on read (it moved bytes) and its percentiles are read, not null. Four jobs
    share the name ``random-read``: the later entry is kept, with a warning. Values are read from the file."""
    text = _read("fio-2.1.11-storperf-random-read-4jobs.json")
    raw = json.loads(text)
    assert raw["fio version"] == "fio-2.1.11" and all("total_ios" not in job["read"] for job in raw["jobs"])
    last = raw["jobs"][-1]
    facts, warnings = _parse(text)
    assert facts["fio_version"] == "fio-2.1.11" and facts["job_order"] == ["random-read"]
    assert len(warnings) == 3 and all("reported job 'random-read' more than once" in item for item in warnings)
    job = facts["jobs"]["random-read"]
    assert job["active"] == ["read"] and list(job["directions"]) == ["read"]
    percentile = last["read"]["clat"]["percentile"]
    assert job["lat_us"] == {"p50": float(percentile["50.000000"]), "p99": float(percentile["99.000000"]),
                             "p999": float(percentile["99.900000"])} == {"p50": 243.0, "p99": 510.0, "p999": 844.0}
    read = job["directions"]["read"]
    assert (read["io_bytes"], read["total_ios"], read["runtime_ms"]) == (last["read"]["io_bytes"], None,
                                                                         last["read"]["runtime"]) == (44820, None, 2126510)
    assert read["lat_source"] == "clat" and read["lat_mean_us"] == last["read"]["clat"]["mean"] == 255.2
    assert job["iops"] == float(last["read"]["iops"]) == 5.0
    assert job["bw_mib"] == round(last["read"]["bw"] / 1024.0, 3)
    assert facts["disk_util"] == [{"name": "sda", "util_pct": raw["disk_util"][0]["util"]}]


@pytest.mark.parametrize("edit,message", [
    # edits of the fio 3.33 capture: numbers no fio prints
    (lambda doc: doc["jobs"][0]["read"].update(bw=-1), "fio: jobs[0].read.bw is -1, not a possible reading"),
    (lambda doc: doc["jobs"][0]["read"].update(iops=1e300), "fio: jobs[0].read.iops is 1e+300, not a possible reading"),
    (lambda doc: doc["jobs"][0]["read"].update(io_bytes=float("inf")),
     "fio: the JSON document cannot be read: Infinity is not a number JSON allows"),
    (lambda doc: doc["jobs"][0]["read"].update(runtime=True), "fio: jobs[0].read.runtime is not a number: True"),
])
def test_absurd_numbers_are_parse_errors(edit, message):
    doc = json.loads(_read("fio-3.33-tmp-libaio-seqread-randwrite.json"))
    edit(doc)
    with pytest.raises(ParseError) as info:
        fio.parse_json(json.dumps(doc))
    assert info.value.message == message


def test_odd_latency_values_are_unreadable_not_crashes():
    """A percentile that is NaN-free but negative or absurd (1e30 ns) reads None; the other percentiles stay."""
    doc = json.loads(_read("fio-3.33-tmp-libaio-seqread-randwrite.json"))
    section = doc["jobs"][0]["read"]["clat_ns"]["percentile"]
    section["50.000000"], section["99.000000"] = -5, 1e30
    job = fio.parse_json(json.dumps(doc))["jobs"]["seq_read"]
    assert job["lat_us"]["p50"] is None and job["lat_us"]["p99"] is None
    assert job["lat_us"]["p999"] == round(section["99.900000"] / 1000.0, 3)
