# SPDX-License-Identifier: GPL-3.0-or-later
"""Integration fixtures: a lab started from a scenario in a temporary directory, and a playbook runner that runs
playbooks the way AWX does (ansible-runner, extra vars only, an artifacts directory)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
BIN = os.path.dirname(sys.executable)


@pytest.fixture(scope="session", autouse=True)
def _environment():
    os.environ["PATH"] = BIN + os.pathsep + os.environ.get("PATH", "")
    os.environ["ANSIBLE_CONFIG"] = os.path.join(REPO, "ansible.cfg")


def start_lab(tmp_path, scenario, nodes=None, burn_realtime=False):
    lab_dir = tmp_path / "lab"
    inventory = tmp_path / "hosts.yml"
    argv = [sys.executable, os.path.join(REPO, "lab", "labctl.py"), "up", "--scenario",
            os.path.join(REPO, "lab", "scenarios", scenario), "--dir", str(lab_dir), "--inventory", str(inventory)]
    if nodes:
        argv += ["--nodes", str(nodes)]
    if burn_realtime:
        argv.append("--burn-realtime")
    subprocess.run(argv, check=True, capture_output=True, timeout=60)
    return str(inventory)


def run_playbook(tmp_path, playbook, inventory, extravars=None, tags=None, limit=None, forks=None):
    """Run a playbook with ansible-runner; return (runner, results document or None)."""
    import ansible_runner

    out_root = tmp_path / "out"
    (tmp_path / "runner").mkdir(parents=True, exist_ok=True)
    extra = {"results_out_root": str(out_root), "zhisuan_run_id": "test-run"}
    extra.update(extravars or {})
    runner = ansible_runner.run(
        private_data_dir=str(tmp_path / "runner"),
        playbook=playbook if os.path.isabs(playbook) else os.path.join(REPO, "playbooks", playbook),
        inventory=inventory,
        extravars=extra,
        tags=tags,
        limit=limit,
        forks=forks,
        quiet=True,
        envvars={"ANSIBLE_CONFIG": os.path.join(REPO, "ansible.cfg"), "PATH": os.environ["PATH"]},
        timeout=600,
    )
    path = out_root / "test-run" / "results.json"
    document = json.loads(path.read_text()) if path.exists() else None
    return runner, document


def checks_by_status(document, host, statuses=("fail", "error", "warn")):
    return sorted((c["id"], c["status"], c["component"], c["remedy"])
                  for c in document["hosts"][host]["checks"] if c["status"] in statuses)


def stop_lab(tmp_path):
    """Stop the lab ``start_lab`` started under ``tmp_path`` (its BMC servers, namespaces and daemons)."""
    subprocess.run([sys.executable, os.path.join(REPO, "lab", "labctl.py"), "down", "--dir", str(tmp_path / "lab")],
                   capture_output=True, timeout=60)
