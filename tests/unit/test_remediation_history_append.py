# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The remediation history written as the run goes (issue 25): one record built in Python (history.build), appended
and fsync'd line by line; a short write (the kernel's own, from a file-size limit: what a full disk does to a write)
is an error, and its fragment is never glued to the next record; a torn last line is passed over with a warning;
the ``acted`` record of a run cut off after its action counts for escalation, and a node's final record supersedes
it."""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._remediate import history
from ansible_collections.zhisuan.ops.plugins.module_utils._remediate.escalate import escalate, tries
from ansible_collections.zhisuan.ops.plugins.module_utils._remediate.policy import normalize

NOW = datetime.datetime(2026, 12, 3, 9, 0, tzinfo=datetime.timezone.utc)
CAUSE = "gpu.ecc.volatile_uncorrectable"
ENTRY = {"action": "reset_gpu", "remedy": "reset_gpu", "mode": "automatic",
         "why": {"cause": CAUSE, "component": "GPU 3", "checks": [CAUSE]}}


def _record(run_id, outcome, node="node03", minutes=0, **parts):
    when = NOW - datetime.timedelta(days=1) + datetime.timedelta(minutes=minutes)
    parts.setdefault("started", when.isoformat())
    parts.setdefault("finished", (when + datetime.timedelta(seconds=20)).isoformat())
    return history.build(node, run_id, outcome, entry=ENTRY, now=when + datetime.timedelta(seconds=30), **parts)


def test_build_makes_the_record_from_the_plan_entry_and_what_was_done():
    record = history.build("node03", "r1", "repaired", entry=ENTRY, message="reset_gpu fixed it",
                           source_run_id="d1", detected="2026-12-03T08:00:00+00:00",
                           started="2026-12-03T08:01:00+00:00", finished="2026-12-03T08:01:20+00:00",
                           resumed="2026-12-03T08:03:00+00:00",
                           scheduler={"name": "node03", "drained": False, "reason": "zhisuan:%s run r1" % CAUSE},
                           now=NOW)
    assert record["schema"] == history.SCHEMA and record["time"] == "2026-12-03T09:00:00+00:00"
    assert (record["node"], record["run_id"], record["source_run_id"], record["cause"], record["component"]) == (
        "node03", "r1", "d1", CAUSE, "GPU 3")
    assert (record["action"], record["remedy"], record["mode"], record["outcome"]) == (
        "reset_gpu", "reset_gpu", "automatic", "repaired")
    assert record["durations"] == {"detect_to_action_s": 60.0, "action_s": 20.0, "detect_to_repair_s": 180.0}


def test_build_without_an_entry_is_a_node_left_alone():
    record = history.build("node06", "r1", "skipped", message="drained by someone else", now=NOW)
    assert (record["cause"], record["action"], record["remedy"], record["mode"]) == (
        history.OPERATOR_CAUSE, "none", "none", "none")
    with pytest.raises(history.HistoryError) as err:
        history.build("node06", "r1", "finished", now=NOW)
    assert str(err.value).startswith("history record for node06: unknown outcome 'finished'")
    with pytest.raises(history.HistoryError) as err:
        history.build("node06", "r1", "skipped", entry=["reset_gpu"], now=NOW)
    assert str(err.value) == "history record for node06: the plan entry must be a mapping, got list"


def test_each_append_is_whole_lines_and_read_gives_them_back(tmp_path):
    first, second = _record("r1", "acted"), _record("r1", "repaired", resumed=NOW.isoformat())
    history.append(str(tmp_path), [first])
    history.append(str(tmp_path), [second])
    path = tmp_path / history.FILE_NAME
    data = path.read_bytes()
    assert data.endswith(b"\n") and data.count(b"\n") == 2
    assert [json.loads(line) for line in data.splitlines()] == [first, second]
    # the final record of the run supersedes its acted record: the reset counts once
    assert history.read(str(path)) == [second]
    assert history.read(str(path), raw=True) == [first, second]


def test_a_cut_off_run_leaves_its_acted_record_and_escalation_counts_it(tmp_path):
    policy = normalize({"escalation": {"repeats": 2, "window_days": 30}})
    # run r1: reset, verified, repaired; run r2: reset, then cut off (AWX cancelled the job) - no final record
    for record in (_record("r1", "acted"), _record("r1", "repaired", resumed=NOW.isoformat()),
                   _record("r2", "acted", minutes=60)):
        history.append(str(tmp_path), [record])
    records = history.read(str(tmp_path / history.FILE_NAME))
    assert [(r["run_id"], r["outcome"]) for r in records] == [("r1", "repaired"), ("r2", "acted")]
    assert tries(records, "node03", CAUSE, 30, NOW) == {"reset_gpu": 2}
    remedy, step = escalate(records, "node03", CAUSE, "reset_gpu", policy, NOW)
    assert remedy == "power_cycle" and step["tries"] == {"reset_gpu": 2}
    # without the cut-off run's record the node would get a third reset
    assert escalate(records[:1], "node03", CAUSE, "reset_gpu", policy, NOW)[0] == "reset_gpu"


def test_a_torn_last_line_is_passed_over_with_a_warning_and_never_glued_to_the_next_record(tmp_path):
    good = _record("r1", "ticket")
    history.append(str(tmp_path), [good])
    path = tmp_path / history.FILE_NAME
    line = json.dumps(_record("r2", "acted"), sort_keys=True, separators=(",", ":"))
    with open(path, "ab") as handle:  # a write cut off half way (the process was killed in it)
        handle.write(line[:len(line) // 2].encode())
    warnings = []
    assert history.read(str(path), warn=warnings.append) == [good]
    assert len(warnings) == 1
    assert warnings[0].startswith("%s line 2: a torn last line (%d bytes without a newline: a write cut short), "
                                  "not JSON (" % (path, len(line) // 2))
    assert warnings[0].endswith("; passed over")
    later = _record("r3", "failed")
    history.append(str(tmp_path), [later])
    warnings = []
    assert history.read(str(path), warn=warnings.append) == [good, later]
    assert len(warnings) == 1 and warnings[0].startswith("%s line 2: not JSON (" % path)
    assert path.read_bytes().splitlines()[2] == json.dumps(later, sort_keys=True, separators=(",", ":")).encode()


SHORT_WRITE = r"""
import json, resource, signal, sys
from ansible_collections.zhisuan.ops.plugins.module_utils._remediate import history
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)   # a write over the limit: EFBIG, not a killed process
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[2]), resource.RLIM_INFINITY))
record = json.loads(sys.argv[3])
try:
    history.append(sys.argv[1], [record])
except history.HistoryError as exc:
    print("HistoryError:", exc)
except OSError as exc:
    print("OSError:", exc)
else:
    print("written")
"""


def _append_limited(directory, limit, record):
    """Append ``record`` in a child process whose files may not grow past ``limit`` bytes (RLIMIT_FSIZE): the
    kernel writes up to the limit and returns the short count, as a write onto a nearly full disk does."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, "-c", SHORT_WRITE, directory, str(limit), json.dumps(record)],
                         capture_output=True, text=True, timeout=60, check=True, env=env)
    return out.stdout.strip()


def test_a_short_write_is_an_error_and_its_fragment_is_not_glued_to_the_next_record(tmp_path):
    good = _record("r1", "repaired", resumed=NOW.isoformat())
    history.append(str(tmp_path), [good])
    path = tmp_path / history.FILE_NAME
    size = path.stat().st_size
    cut = _record("r2", "acted")
    said = _append_limited(str(tmp_path), size + 40, cut)
    assert said.startswith("HistoryError: %s: short write, 40 of " % path), said
    assert said.endswith(" bytes of 1 record(s) (node03) written (is the disk full?); the fragment is passed over "
                         "on read")
    assert path.stat().st_size == size + 40  # the fragment is there, without its newline (the limit stopped it)
    # the next append (the disk has room again) starts a line of its own
    later = _record("r3", "failed")
    history.append(str(tmp_path), [later])
    warnings = []
    assert history.read(str(path), warn=warnings.append) == [good, later]
    assert len(warnings) == 1 and warnings[0].startswith("%s line 2: not JSON (" % path)


def test_a_write_the_disk_refuses_entirely_is_an_os_error(tmp_path):
    good = _record("r1", "ticket")
    history.append(str(tmp_path), [good])
    path = tmp_path / history.FILE_NAME
    said = _append_limited(str(tmp_path), path.stat().st_size, _record("r2", "acted"))
    assert said.startswith("OSError: [Errno 27] File too large"), said
    assert history.read(str(path)) == [good]


def test_a_history_that_cannot_be_read_is_empty_with_a_warning(tmp_path):
    path = tmp_path / history.FILE_NAME
    path.mkdir()  # not a file
    warnings = []
    assert history.read(str(path), warn=warnings.append) == []
    assert len(warnings) == 1 and warnings[0].startswith("%s cannot be read ([Errno 21] Is a directory" % path)
    assert warnings[0].endswith("; read as an empty history")
    with pytest.raises(OSError):
        history.append(str(tmp_path), [_record("r1", "acted")])


def test_overlapping_runs_appending_at_once_keep_every_line_whole(tmp_path):
    """Four processes (four overlapping runs) append 100 records each at once, each line larger than a pipe's atomic
    write: the lock keeps every record a line of its own, in each run's order."""
    code = "\n".join([
        "import sys",
        "sys.path[:0] = %r" % [p for p in sys.path if p],
        "from ansible_collections.zhisuan.ops.plugins.module_utils._remediate import history",
        "run = sys.argv[1]",
        "for n in range(100):",
        "    record = history.build('node%%02d' %% n, run, 'acted', entry=%r, message='x' * 8192)" % ENTRY,
        "    history.append(%r, [record])" % str(tmp_path),
    ])
    procs = [subprocess.Popen([sys.executable, "-c", code, "run%d" % i]) for i in range(4)]
    assert [proc.wait(timeout=120) for proc in procs] == [0, 0, 0, 0]
    warnings = []
    records = history.read(str(tmp_path / history.FILE_NAME), warn=warnings.append, raw=True)
    assert warnings == []
    assert len(records) == 400
    for i in range(4):
        assert [r["node"] for r in records if r["run_id"] == "run%d" % i] == ["node%02d" % n for n in range(100)]
