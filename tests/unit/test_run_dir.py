# SPDX-License-Identifier: GPL-3.0-or-later
"""A run's folder and the names in it (plugin_utils/_run_dir.py, filter zhisuan.ops.host_path): unique run ids,
the folder claimed with one mkdir, host names that cannot lead outside the run folder."""

from __future__ import annotations

import datetime
import os
import re

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.zhisuan.ops.plugins.filter.host_path import host_path as host_path_filter
from ansible_collections.zhisuan.ops.plugins.plugin_utils._history import entry_name
from ansible_collections.zhisuan.ops.plugins.plugin_utils._run_dir import (
    RunDirError,
    claim_run_dir,
    host_path,
    inside,
    new_run_id,
    safe_name,
)

T = datetime.datetime(2026, 12, 3, 8, 45, 12, 41277, tzinfo=datetime.timezone.utc)


def test_a_run_id_keeps_its_leading_shape_and_adds_sub_second_time_and_a_random_tail():
    run_id = new_run_id("inspect", now=T, token="9c1e")
    assert run_id == "20261203T084512Z-inspect-0412779c1e"
    # what readers of the old id parse still parses: the time to the second, then the kind
    assert re.match(r"^(\d{8}T\d{6}Z)-(inspect)-", run_id)
    later = new_run_id("inspect", now=T + datetime.timedelta(microseconds=1), token="0000")
    assert sorted([later, run_id]) == [run_id, later]  # ids of one kind still sort by time
    assert new_run_id("inspect", now=T) != new_run_id("inspect", now=T)  # same instant, random tails


def test_two_runs_in_the_same_second_claim_two_folders(tmp_path):
    # both runs' clocks and random tails collide once: the second run's mkdir finds the folder and takes a new id
    ids = iter(["20261203T084512Z-inspect-041277aaaa", "20261203T084512Z-inspect-041277aaaa",
                "20261203T084512Z-inspect-041277bbbb"])
    first = claim_run_dir(str(tmp_path), "inspect", make_id=lambda kind: next(ids))
    second = claim_run_dir(str(tmp_path), "inspect", make_id=lambda kind: next(ids))
    assert first == ("20261203T084512Z-inspect-041277aaaa", str(tmp_path / "20261203T084512Z-inspect-041277aaaa"))
    assert second == ("20261203T084512Z-inspect-041277bbbb", str(tmp_path / "20261203T084512Z-inspect-041277bbbb"))
    assert sorted(os.listdir(tmp_path)) == ["20261203T084512Z-inspect-041277aaaa", "20261203T084512Z-inspect-041277bbbb"]


def test_a_claim_gives_up_with_a_clear_error_when_every_id_is_taken(tmp_path):
    (tmp_path / "taken").mkdir()
    with pytest.raises(RunDirError, match="8 new ids were all taken"):
        claim_run_dir(str(tmp_path), "inspect", make_id=lambda kind: "taken")


def test_a_given_id_or_folder_is_used_as_it_is(tmp_path):
    assert claim_run_dir(str(tmp_path), "inspect", run_id="insp-1") == ("insp-1", str(tmp_path / "insp-1"))
    assert claim_run_dir(str(tmp_path), "inspect", run_id="insp-1") == ("insp-1", str(tmp_path / "insp-1"))  # again
    fixed = tmp_path / "site" / "run"
    run_id, dest = claim_run_dir(str(tmp_path), "inspect", dest=str(fixed))
    assert dest == str(fixed) and fixed.is_dir()
    assert re.fullmatch(r"\d{8}T\d{6}Z-inspect-\d{6}[0-9a-f]{4}", run_id)
    with pytest.raises(RunDirError, match=r"run id '\.\./x'.*outside the run folder"):
        claim_run_dir(str(tmp_path / "out"), "inspect", run_id="../x")


def test_a_folder_that_cannot_be_made_is_named(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(RunDirError, match="cannot create the run folder under %s" % re.escape(str(blocker))):
        claim_run_dir(str(blocker), "inspect")


@pytest.mark.parametrize("name", ["../../../../tmp/x", "../results.json", "..", ".", "a/b", ".hidden", "x\x00y",
                                  "/etc/passwd", "node 01"])
def test_no_host_name_leaves_the_run_folder(tmp_path, name):
    path = host_path(str(tmp_path), name, subdir="evidence")
    assert os.path.dirname(path) == str(tmp_path / "evidence")
    base = os.path.basename(path)
    assert base not in ("", ".", "..", "results.json") and not base.startswith(".") and "/" not in base


def test_names_that_had_to_change_do_not_share_a_file():
    assert safe_name("node01") == "node01"
    assert safe_name("a/b") != safe_name("a_b") == "a_b"
    assert safe_name("a/b") == safe_name("a/b")  # stable: the same host gets the same folder every run
    assert re.fullmatch(r"unnamed-[0-9a-f]{8}", safe_name(".."))


def test_the_history_entry_follows_the_same_rule():
    assert entry_name({"run": {"id": "20261203T084512Z-inspect-0412779c1e"}}) == "20261203T084512Z-inspect-0412779c1e.json"
    assert entry_name({"run": {"id": "a/b"}}) == safe_name("a/b") + ".json"


def test_a_path_through_a_symlink_out_of_the_folder_is_refused_naming_the_host(tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    run = tmp_path / "run"
    run.mkdir()
    (run / "evidence").symlink_to(outside)
    with pytest.raises(RunDirError, match=r"host 'node01': .* outside the run folder .*refused"):
        host_path(str(run), "node01", subdir="evidence")
    assert inside(str(run), "tickets", "node01.json") == str(run / "tickets" / "node01.json")


def test_the_filter_builds_the_path_and_names_the_host_it_refuses(tmp_path):
    assert host_path_filter(str(tmp_path), "node01", "evidence") == str(tmp_path / "evidence" / "node01")
    assert host_path_filter(str(tmp_path), "n1", suffix=".json") == str(tmp_path / "n1.json")
    assert host_path_filter(str(tmp_path), "../x", suffix=".json").startswith(str(tmp_path) + os.sep)
    (tmp_path / "evidence").symlink_to("/")
    with pytest.raises(AnsibleFilterError, match=r"host_path: host 'node01'"):
        host_path_filter(str(tmp_path), "node01", "evidence")
    with pytest.raises(AnsibleFilterError, match="a host name is required"):
        host_path_filter(str(tmp_path), "")
