# SPDX-License-Identifier: GPL-3.0-or-later
"""Every run playbook parses (ansible-playbook --syntax-check) and follows the three-play shape: the run starts once,
the nodes' play takes the site's strategy and batch size, the record is written once."""

from __future__ import annotations

import glob
import os
import subprocess
import sys

import pytest
import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
PLAYBOOKS = sorted(os.path.basename(path) for path in glob.glob(os.path.join(REPO, "playbooks", "*.yml")))
RUNS = ("acceptance.yml", "burnin.yml", "delivery.yml", "diagnose.yml", "inspect.yml", "remediate.yml")


def test_every_playbook_parses():
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"))
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "--syntax-check"]
                          + [os.path.join("playbooks", playbook) for playbook in PLAYBOOKS], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("playbook", [name for name in RUNS if name in PLAYBOOKS])
def test_run_playbooks_start_once_check_nodes_then_record_once(playbook):
    with open(os.path.join(REPO, "playbooks", playbook)) as handle:
        plays = yaml.safe_load(handle)
    text = yaml.safe_dump(plays)
    assert "tasks_from: start" in text and "tasks_from: record" in text
    nodes = [play for play in plays if "strategy" in play]
    if playbook == "remediate.yml":
        # its batches are the blast-radius limit's (zhisuan_remediate_batch), never the free strategy's
        assert [play.get("serial") for play in plays if play.get("serial")] == ["{{ zhisuan_remediate_batch | default(1) }}"]
        return
    assert nodes, "%s has no play that takes zhisuan_strategy" % playbook
    for play in nodes:
        assert play["strategy"] == "{{ zhisuan_strategy | default('linear') }}" or "linear" in play["strategy"]
        assert "tasks_from: start" not in yaml.safe_dump(play) and "tasks_from: record" not in yaml.safe_dump(play)


def _tasks(play):
    for section in ("pre_tasks", "tasks", "post_tasks"):
        for task in play.get(section) or []:
            yield task
            for inner in ("block", "rescue", "always"):
                for sub in task.get(inner) or []:
                    yield sub


@pytest.mark.parametrize("playbook", RUNS)
def test_runs_choose_families_by_tag_and_never_lose_a_nodes_failure(playbook):
    """Start and record always run (any --tags); every family's block is tagged with its family and rescued into
    the node's error check; the plays that touch nodes record an unreachable node instead of dropping it."""
    with open(os.path.join(REPO, "playbooks", playbook)) as handle:
        plays = yaml.safe_load(handle)
    text = yaml.safe_dump(plays)
    assert "tasks_from: start" in text and "tasks_from: host" in text
    family_blocks = 0
    for play in plays:
        for task in _tasks(play):
            if "block" in task and play.get("tags") != ["always"] and task.get("tags") != ["always"]:
                family_blocks += 1
                assert task.get("tags"), (playbook, task["name"])
                rescue = yaml.safe_dump(task.get("rescue"))
                assert "tasks_from: failed" in rescue, (playbook, task["name"])
        names = yaml.safe_dump(play)
        if "tasks_from: record" in names and playbook != "remediate.yml":
            assert play.get("tags") == ["always"], playbook
        if "tasks_from: host" in names:
            assert play.get("ignore_unreachable") is True, playbook
    assert family_blocks >= 2, playbook
