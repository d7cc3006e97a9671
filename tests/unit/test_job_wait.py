# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The controller side of zhisuan.ops.job_wait (plugin_utils/_job_wait.py): the end of a wait and one progress line
a period for all the workers of a task, shared through a real directory by real processes."""

from __future__ import annotations

import multiprocessing
import os

from ansible_collections.zhisuan.ops.plugins.plugin_utils._job_wait import ProgressBoard, progress_line, verdict


def test_progress_line_names_three_nodes_and_counts_the_rest():
    assert progress_line("gpu burn (900 s)", ["n05", "n01", "n03", "n02", "n04"], 125.4) == (
        "gpu burn (900 s): still waiting on 5 nodes (n01, n02, n03 and 2 more) after 2 min 05 s")
    assert progress_line("x", ["n1"], 7) == "x: still waiting on 1 node (n1) after 7 s"


def test_verdict_waits_finishes_times_out_and_sees_a_vanished_job():
    assert verdict({"started": 1, "finished": 0}, "burn", "n1", "j1", 10, 100) is None
    assert verdict({"started": 1, "finished": 1, "failed": True, "msg": "gpu_burn: rc 3"}, "burn", "n1", "j1", 10,
                   100) == ("done", {})
    kind, fields = verdict({"started": 1, "finished": 0}, "burn", "n1", "j1", 100.04, 100)
    assert kind == "timed_out" and fields["msg"] == "burn on n1 did not finish within 100 s (async job j1)"
    assert (fields["failed"], fields["error_kind"], fields["waited_s"]) == (True, "timed_out", 100.0)
    # what ansible.builtin.async_status returns when the job file is gone (started and finished both 1)
    kind, fields = verdict({"failed": True, "started": 1, "finished": 1, "msg": "could not find job",
                            "ansible_job_id": "j1"}, "burn", "n1", "j1", 65, 100)
    assert kind == "vanished" and fields["error_kind"] == "vanished"
    assert fields["msg"] == ("burn on n1: the node no longer has async job j1 (could not find job) after 1 min 05 s; "
                             "the node may have rebooted or its async directory been cleaned, so the job's result "
                             "is lost")


def test_a_job_that_ended_failed_is_done_not_vanished():
    # async_status hands back the module's own result once the job ended: no 'started' key, finished set by
    # async_status; a gpu_burn that timed out on the node ended this way (the lab's hung gpu-burn)
    ended = {"failed": True, "finished": 1, "ansible_job_id": "j1", "error_kind": "timed_out",
             "msg": "gpu_burn timed out after 1020 s"}
    assert verdict(ended, "gpu burn", "node01", "j1", 1030, 2000) == ("done", {})
    gone = {"failed": True, "finished": 1, "started": 0, "ansible_job_id": "j1", "msg": "could not find job"}
    assert verdict(gone, "gpu burn", "node01", "j1", 5, 2000)[0] == "vanished"


def test_board_lists_waiters_and_cleans_up(tmp_path):
    path = str(tmp_path / "board")
    one, two = ProgressBoard(path, "n1"), ProgressBoard(path, "n/2")
    one.join()
    two.join()
    assert sorted(one.waiting()) == ["n1", "n_2"]
    one.leave()
    assert two.waiting() == ["n_2"]
    two.leave()
    assert not os.path.exists(path)


def test_board_first_line_one_period_after_the_start_then_one_per_period(tmp_path):
    now = [1000.0]
    board = ProgressBoard(str(tmp_path / "b"), "n1", clock=lambda: now[0])
    board.join()
    stamp = os.path.join(board.path, ".printed")
    os.utime(stamp, (1000.0, 1000.0))
    assert board.due(60) is False
    now[0] = 1061.0
    assert board.due(60) is True
    assert board.due(60) is False
    now[0] = 1122.0
    assert board.due(60) is True


def _worker(path, host, queue):
    board = ProgressBoard(path, host)
    queue.put(board.due(60))


def test_one_worker_of_many_prints_a_line(tmp_path):
    path = str(tmp_path / "b")
    ProgressBoard(path, "n0").join()
    os.utime(os.path.join(path, ".printed"), (0, 0))
    queue = multiprocessing.Queue()
    procs = [multiprocessing.Process(target=_worker, args=(path, "n%d" % i, queue)) for i in range(8)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(20)
    results = [queue.get(timeout=5) for _ in procs]
    assert results.count(True) == 1 and results.count(False) == 7
