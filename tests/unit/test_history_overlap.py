# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Overlapping runs and bounded history reads (issue 25, what-to-build 4 and 5): the slim history index written by
two processes at once stays whole; the remediation history's lock gives up with an error naming the file; node
leases keep two remediation runs off one node (real processes claiming at once); a cut-off run's lease is taken
over; retention bounds what the report reads of the history (N runs, D days), and a big run without its index entry
or a big remediation log is not read whole."""

from __future__ import annotations

import datetime
import fcntl
import json
import os
import socket
import subprocess
import sys
import time

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._remediate import history as remediation_history
from ansible_collections.zhisuan.ops.plugins.module_utils._remediate.plan import make_plan
from ansible_collections.zhisuan.ops.plugins.module_utils._remediate.policy import normalize
from ansible_collections.zhisuan.ops.plugins.plugin_utils import _history as history
from ansible_collections.zhisuan.ops.plugins.plugin_utils import _lease
from ansible_collections.zhisuan.ops.plugins.plugin_utils._diagnosis import diagnose

from report_samples import check

HERE = os.path.dirname(os.path.abspath(__file__))
POLICY = os.path.join(HERE, os.pardir, os.pardir, "collections", "ansible_collections", "zhisuan", "ops", "data",
                      "remediation", "policy.yml")
NOW = datetime.datetime(2026, 12, 3, 9, 0, tzinfo=datetime.timezone.utc)
PATH = [p for p in sys.path if p]


def _run(run_id, started, nodes=3, failing=None):
    hosts = {}
    for n in range(1, nodes + 1):
        name = "node%02d" % n
        checks = [check("gpu.count.present", name, "pass", "node", 8, "== 8", "8 GPUs")]
        if name == failing:
            checks.append(check("gpu.ecc.volatile_uncorrectable", name, "fail", "GPU 3", 2, "== 0",
                                "GPU 3 has 2 uncorrectable ECC errors", "reset_gpu"))
        hosts[name] = {"status": "fail" if name == failing else "pass", "checks": checks,
                       "facts": {"gpu": {"count": 8}}}
    return {"schema": "zhisuan.ops/results/v1",
            "run": {"id": run_id, "kind": "inspect", "started": started, "finished": started, "playbook": "p",
                    "collection_version": "0.1.0", "ansible_version": "2.19.14", "hosts_total": nodes},
            "hosts": hosts, "cluster": {"checks": []}, "summary": {"hosts": {}, "checks": {}}}


def _run_id(when, tail):
    return "%s-inspect-%s" % (when.strftime("%Y%m%dT%H%M%SZ"), tail)


# ---------------------------------------------------------------------------------------------------------------
# the slim history index under two overlapping runs


def test_two_processes_keeping_runs_at_once_lose_no_run_and_leave_no_temp_file(tmp_path):
    """Two processes (two overlapping report renders) keep 40 runs each in one history folder at the same time,
    and both keep one run they share (the same id: a re-render racing the first render): every run and its slim
    index entry are there, each entry whole, and the history reads all 81 without a warning."""
    folder = tmp_path / "history"
    docs = tmp_path / "docs"
    docs.mkdir()
    shared = _run(_run_id(NOW, "shared"), NOW.isoformat(), nodes=40, failing="node07")
    for writer in ("a", "b"):
        batch = [shared] + [_run(_run_id(NOW - datetime.timedelta(minutes=n), "%s%02d" % (writer, n)),
                                 (NOW - datetime.timedelta(minutes=n)).isoformat(), nodes=40, failing="node02")
                            for n in range(1, 41)]
        (docs / (writer + ".json")).write_text(json.dumps(batch), encoding="utf-8")
    code = "\n".join([
        "import json, sys",
        "sys.path[:0] = %r" % PATH,
        "from ansible_collections.zhisuan.ops.plugins.plugin_utils import _history as history",
        "for doc in json.load(open(sys.argv[1])):",
        "    for dummy in range(3):",
        "        history.store_run(%r, doc)" % str(folder),
    ])
    procs = [subprocess.Popen([sys.executable, "-c", code, str(docs / (w + ".json"))]) for w in ("a", "b")]
    assert [proc.wait(timeout=300) for proc in procs] == [0, 0]
    names = sorted(os.listdir(str(folder)))
    assert not [name for name in names + os.listdir(str(folder / "index")) if name.endswith(".tmp")]
    assert len([name for name in names if name.endswith(".json")]) == 81
    for name in os.listdir(str(folder / "index")):
        json.loads((folder / "index" / name).read_text(encoding="utf-8"))  # whole: raises if torn
    warnings = []
    loaded = history.load_history(str(folder), warn=warnings.append, now=NOW)
    assert warnings == [] and len(loaded) == 81
    assert loaded[-1] == history.slim(shared)


# ---------------------------------------------------------------------------------------------------------------
# the remediation history's lock


def test_an_append_gives_up_on_a_lock_held_too_long_naming_the_file(tmp_path):
    path = str(tmp_path / remediation_history.FILE_NAME)
    record = remediation_history.build("node03", "r1", "acted", entry={"action": "reset_gpu", "why": {"cause": "x"}},
                                       now=NOW)
    remediation_history.append(str(tmp_path), [record])
    before = open(path, "rb").read()
    # another open file description of the file, locked: what a hung run's append holds
    holder = os.open(path, os.O_RDWR)
    fcntl.flock(holder, fcntl.LOCK_EX)
    try:
        with pytest.raises(remediation_history.HistoryError) as caught:
            remediation_history.append(str(tmp_path), [record], timeout=0.3)
    finally:
        os.close(holder)
    assert str(caught.value) == (
        "%s: cannot append to it: another process held its lock for more than 0.3 s (a hung run, or a network file "
        "system without working locks); nothing was written" % path)
    assert open(path, "rb").read() == before
    remediation_history.append(str(tmp_path), [record], timeout=0.3)  # the lock is free again
    assert len(remediation_history.read(path, raw=True)) == 2


def test_a_remediation_log_over_the_read_cap_is_read_from_its_newest_whole_line(tmp_path):
    records = [remediation_history.build("node%02d" % (n % 8), "r%d" % n, "repaired",
                                         entry={"action": "reset_gpu", "why": {"cause": "gpu.ecc.x"}},
                                         now=NOW + datetime.timedelta(minutes=n)) for n in range(200)]
    path = remediation_history.append(str(tmp_path), records)
    size = os.path.getsize(path)
    warnings = []
    tail = remediation_history.read(path, warn=warnings.append, max_bytes=size // 4)
    assert 0 < len(tail) < 60
    # the newest records, in order, none cut: the window starts on a whole line
    assert [r["run_id"] for r in tail] == ["r%d" % n for n in range(200 - len(tail), 200)]
    assert len(warnings) == 1 and warnings[0].startswith("%s is 0." % path)
    assert "bytes of older records passed over (rotate the file to keep them)" in warnings[0]
    assert remediation_history.read(path, max_bytes=size) == remediation_history.read(path)
    assert len(remediation_history.read(path)) == 200


# ---------------------------------------------------------------------------------------------------------------
# node leases


def test_two_runs_claiming_at_once_never_share_a_node(tmp_path):
    """Two processes claim the same 60 nodes at once, in opposite orders, for two runs whose process lives (the
    test's): every node is claimed by exactly one run, and the other run was told which run holds it."""
    code = "\n".join([
        "import json, os, sys, time",
        "sys.path[:0] = %r" % PATH,
        "from ansible_collections.zhisuan.ops.plugins.plugin_utils import _lease",
        "nodes = ['node%02d' % n for n in range(60)]",
        "if sys.argv[1] == 'run-b':",
        "    nodes.reverse()",
        "got, held = [], {}",
        "open(sys.argv[2] + '.ready', 'w').close()",
        "while not os.path.exists(%r):" % str(tmp_path / "go"),
        "    time.sleep(0.001)",
        "for node in nodes:",
        "    time.sleep(0.005)  # paced, as a plan claims node after node: both runs claim while the other does",
        "    a, b = _lease.claim(%r, [node], sys.argv[1], os.getppid())" % str(tmp_path),
        "    got += a",
        "    held.update(b)",
        "json.dump({'got': got, 'held': held}, open(sys.argv[2], 'w'))",
    ])
    outs = dict((run, str(tmp_path / (run + ".out"))) for run in ("run-a", "run-b"))
    procs = [subprocess.Popen([sys.executable, "-c", code, run, out]) for run, out in outs.items()]
    deadline = time.monotonic() + 60
    while not all(os.path.exists(out + ".ready") for out in outs.values()) and time.monotonic() < deadline:
        time.sleep(0.01)
    (tmp_path / "go").write_text("")  # both start claiming at once
    assert [proc.wait(timeout=120) for proc in procs] == [0, 0]
    result = dict((run, json.load(open(out))) for run, out in outs.items())
    a, b = set(result["run-a"]["got"]), set(result["run-b"]["got"])
    assert not a & b and a | b == set("node%02d" % n for n in range(60))
    assert a and b  # opposite orders: each got some
    assert set(result["run-a"]["held"]) == b and set(result["run-b"]["held"]) == a
    assert set(lease["run_id"] for lease in result["run-a"]["held"].values()) == {"run-b"}
    assert all(lease["pid"] == os.getpid() and lease["host"] == socket.gethostname()
               for lease in result["run-b"]["held"].values())
    # each run releases its own, never the other's
    assert sorted(_lease.release(str(tmp_path), "run-a")) == sorted(a)
    assert sorted(os.listdir(str(tmp_path / "leases"))) == sorted(
        [".lock"] + [_lease.lease_path(str(tmp_path), n).rsplit(os.sep, 1)[1] for n in b])
    assert sorted(_lease.release(str(tmp_path), "run-b")) == sorted(b)


def _dead_pid():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait(timeout=30)
    return proc.pid


def test_the_lease_of_a_cut_off_run_is_taken_over(tmp_path):
    folder = str(tmp_path)
    assert _lease.claim(folder, ["node03"], "run-a", _dead_pid(), now=NOW) == (["node03"], {})
    got, held = _lease.claim(folder, ["node03"], "run-b", os.getpid(), now=NOW)
    assert (got, held) == (["node03"], {})
    lease = _lease.holder(folder, "node03")
    assert lease["run_id"] == "run-b" and lease["took_over"]["run_id"] == "run-a"
    assert lease["took_over"]["why"].startswith("its run (pid ") and lease["took_over"]["why"].endswith(" is gone")
    # a run claiming its own node again keeps it
    assert _lease.claim(folder, ["node03"], "run-b", os.getpid(), now=NOW) == (["node03"], {})


def test_a_lease_from_another_controller_holds_until_it_is_a_day_old(tmp_path):
    folder = str(tmp_path)
    _lease.claim(folder, ["node05"], "run-awx", 7, host="awx-job-1234", now=NOW)
    later = NOW + datetime.timedelta(hours=23)
    got, held = _lease.claim(folder, ["node05"], "run-b", os.getpid(), now=later)
    assert got == [] and held == {"node05": {"run_id": "run-awx", "host": "awx-job-1234", "pid": 7,
                                             "time": NOW.isoformat()}}
    got, held = _lease.claim(folder, ["node05"], "run-b", os.getpid(), now=NOW + datetime.timedelta(hours=25))
    assert got == ["node05"] and held == {}
    assert "over the 24 h a lease holds" in _lease.holder(folder, "node05")["took_over"]["why"]


def test_a_damaged_lease_is_taken_over_and_names_the_file(tmp_path):
    folder = str(tmp_path)
    _lease.claim(folder, ["node01"], "run-a", os.getpid(), now=NOW)
    path = _lease.lease_path(folder, "node01")
    with open(path, "w") as handle:
        handle.write("{")
    got, held = _lease.claim(folder, ["node01"], "run-b", os.getpid(), now=NOW)
    assert got == ["node01"] and held == {}
    assert _lease.holder(folder, "node01")["took_over"]["why"].startswith("damaged (%s: " % path)


def test_a_node_name_cannot_put_its_lease_outside_the_folder(tmp_path):
    path = _lease.lease_path(str(tmp_path), "../../etc/x")
    assert os.path.dirname(path) == os.path.join(str(tmp_path), "leases")


def test_leases_that_cannot_be_written_are_an_error_naming_the_folder(tmp_path):
    blocker = tmp_path / "history"
    blocker.write_text("a file where the history folder should be")
    with pytest.raises(remediation_history.HistoryError, match="cannot open the node leases in %s" % blocker):
        _lease.claim(str(blocker), ["node01"], "run-a", os.getpid())


# ---------------------------------------------------------------------------------------------------------------
# the plan: a node another run holds


def _hosts():
    hosts = {}
    for name in ("node01", "node02", "node03"):
        checks = [check("gpu.ecc.volatile_uncorrectable", name, "fail", "GPU 3", 2, "== 0",
                        "GPU 3 has 2 uncorrectable ECC errors", "reset_gpu")]
        hosts[name] = {"status": "fail", "checks": checks, "facts": {"diagnosis": diagnose(checks)}}
    return hosts


def _policy(**limits):
    import yaml
    with open(POLICY) as handle:
        return normalize(yaml.safe_load(handle), {"limits": limits} if limits else {})


def test_a_node_another_run_holds_is_planned_held_by_that_run_and_its_slot_goes_to_the_next(tmp_path):
    lease = {"run_id": "20261203T085959Z-remediate-123456abcd", "host": "ctl1", "pid": 4242,
             "time": "2026-12-03T08:59:59+00:00"}
    # node02 is drained by the other run (our mark), with nothing to act on in this run's view: not stranded
    scheduler = {"node02": {"state": "drained", "drain": True, "drained_by_us": True,
                            "reason": "zhisuan:gpu.ecc.volatile_uncorrectable run %s" % lease["run_id"]}}
    policy = _policy(max_nodes=1, max_percent=100)
    alone = make_plan(_hosts(), policy, scheduler=scheduler, fleet=3, now=NOW)
    assert alone["order"] == ["node02"] and alone["deferred"] == ["node01", "node03"]
    plan = make_plan(_hosts(), policy, scheduler=scheduler, fleet=3, now=NOW, leased={"node02": lease})
    assert plan["leased"] == ["node02"] and plan["held"] == ["node02"] and "node02" not in plan["order"]
    entry = plan["nodes"]["node02"]
    assert entry["status"] == "held" and entry["leased"] == lease
    assert entry["message"] == ("held by run 20261203T085959Z-remediate-123456abcd: another remediation run (pid "
                                "4242 on ctl1, since 2026-12-03T08:59:59+00:00) acts on this node; left to it")
    # node02 still counts as drained (the limit is 1): nothing else acts, nothing reported stranded
    assert plan["order"] == [] and plan["deferred"] == ["node01", "node03"]
    assert not [c for c in plan["checks"] if c["id"].startswith("remediate.stranded.")]
    stranded = {"node02": dict(scheduler["node02"])}
    healthy = dict((name, {"status": "pass", "checks": [], "facts": {}}) for name in ("node01", "node02", "node03"))
    assert make_plan(healthy, policy, scheduler=stranded, fleet=3, now=NOW)["stranded"] == ["node02"]
    assert make_plan(healthy, policy, scheduler=stranded, fleet=3, now=NOW, leased={"node02": lease})["stranded"] == []


# ---------------------------------------------------------------------------------------------------------------
# retention


def _keep(folder, ages_h):
    for age in ages_h:
        when = NOW - datetime.timedelta(hours=age)
        history.store_run(str(folder), _run(_run_id(when, "%06x" % age), when.isoformat()))


def test_retention_reads_the_newest_runs_and_none_older_than_the_days(tmp_path):
    folder = tmp_path / "history"
    _keep(folder, [1, 2, 3, 30, 24 * 10, 24 * 400])
    ids = lambda runs: [doc["run"]["id"][-6:] for doc in runs]  # noqa: E731
    # the run 400 days old is past the default 365 days
    assert ids(history.load_history(str(folder), now=NOW)) == ["0000f0", "00001e", "000003", "000002", "000001"]
    assert ids(history.load_history(str(folder), now=NOW, keep_runs=3)) == ["000003", "000002", "000001"]
    assert ids(history.load_history(str(folder), now=NOW, keep_days=1)) == ["000003", "000002", "000001"]
    assert ids(history.load_history(str(folder), now=NOW, keep_days=2)) == ["00001e", "000003", "000002",
                                                                            "000001"]
    # the current run counts as one of the runs kept
    current = _run(_run_id(NOW, "cur000"), NOW.isoformat())
    assert ids(history.load_history(str(folder), now=NOW, keep_runs=2, current=current)) == ["000001", "cur000"]
    assert history.retained(str(folder), keep_runs=2, now=NOW) == (
        [_run_id(NOW - datetime.timedelta(hours=h), "%06x" % h) + ".json" for h in (1, 2)], 4)
    with pytest.raises(history.HistoryError, match="retention must keep at least one run"):
        history.load_history(str(folder), keep_runs=0)


def test_a_run_named_without_a_time_is_dated_by_its_file(tmp_path):
    folder = tmp_path / "history"
    history.store_run(str(folder), _run("by-hand", NOW.isoformat()))
    old = (NOW - datetime.timedelta(days=30)).timestamp()
    os.utime(str(folder / "by-hand.json"), (old, old))
    os.utime(str(folder / "index" / "by-hand.json"), (old, old))
    assert [d["run"]["id"] for d in history.load_history(str(folder), now=NOW, keep_days=31)] == ["by-hand"]
    assert history.load_history(str(folder), now=NOW, keep_days=29) == []


def test_a_big_run_without_an_index_entry_is_skipped_not_read(tmp_path):
    folder = tmp_path / "history"
    big = _run(_run_id(NOW, "big000"), NOW.isoformat(), nodes=300)
    history.store_run(str(folder), big)
    history.store_run(str(folder), _run(_run_id(NOW, "small0"), NOW.isoformat()))
    (folder / "index" / (big["run"]["id"] + ".json")).unlink()
    size = os.path.getsize(str(folder / (big["run"]["id"] + ".json")))
    warnings = []
    loaded = history.load_history(str(folder), warn=warnings.append, now=NOW, max_bytes=size - 1)
    assert [d["run"]["id"] for d in loaded] == [_run_id(NOW, "small0")]
    assert len(warnings) == 1 and warnings[0].startswith(
        "zhisuan.ops.report: history file %s skipped: 0." % (folder / (big["run"]["id"] + ".json")))
    assert "over the 0." in warnings[0] and "it has no index entry" in warnings[0]
    assert len(history.load_history(str(folder), now=NOW, max_bytes=size)) == 2


def test_an_inspection_sees_only_the_leases_of_runs_still_going(tmp_path):
    folder = str(tmp_path)
    _lease.claim(folder, ["node01"], "run-live", os.getpid())
    _lease.claim(folder, ["node02"], "run-cut", _dead_pid())
    live = _lease.live(folder)
    assert list(live) == ["node01"] and live["node01"]["run_id"] == "run-live"
    assert _lease.live(str(tmp_path / "none")) == {}


def test_a_killed_run_not_yet_reaped_or_a_reused_pid_does_not_hold_a_lease(tmp_path):
    folder = str(tmp_path)
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 30
    while _lease._proc_stat(proc.pid)[0] != "Z" and time.monotonic() < deadline:  # exited, not reaped: a zombie
        time.sleep(0.01)
    try:
        _lease.claim(folder, ["node01"], "run-zombie", proc.pid)
        assert _lease.live(folder) == {}
    finally:
        proc.wait(timeout=30)
    # a live process whose start time is not the lease's: the number was given to another process
    _lease.claim(folder, ["node02"], "run-a", os.getpid())
    assert _lease.holder(folder, "node02")["start"] == _lease.process_start(os.getpid())
    path = _lease.lease_path(folder, "node02")
    lease = json.load(open(path))
    lease["start"] = "1"
    with open(path, "w") as handle:
        json.dump(lease, handle)
    assert _lease.claim(folder, ["node02"], "run-b", os.getpid())[0] == ["node02"]
