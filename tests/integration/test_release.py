# SPDX-License-Identifier: GPL-3.0-or-later
"""The collection as Galaxy ships it (issue 27 item 5): ``tools/release.py`` builds the tarball with the real
``antsibull-changelog`` and ``ansible-galaxy collection build``; ``ansible-galaxy collection install`` puts it in a
folder of its own; a user's empty project with an ``ansible.cfg`` of two lines (that folder, the summary callback)
then reads the callback's documentation with ``ansible-doc`` and runs the collection's own inspection playbook
(``ansible-playbook zhisuan.ops.inspect``) against the lab - no file of this checkout is on any path: the roles and
playbooks come from the tarball, and the run is written under the project's ``reports/``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile

import pytest

from .conftest import BIN, REPO, start_lab, stop_lab

NODES = "node01,node02,node03"  # node03 carries the default scenario's ECC fault


def _run(argv, cwd, env, timeout=600):
    done = subprocess.run(argv, cwd=str(cwd), env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, (argv, done.stdout[-3000:], done.stderr[-3000:])
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("release")
    out = tmp_path / "dist"
    tarball = _run([sys.executable, os.path.join(REPO, "tools", "release.py"), "--out", str(out)], REPO,
                   dict(os.environ)).strip()
    target = tmp_path / "installed"
    project = tmp_path / "project"
    project.mkdir()
    (project / "ansible.cfg").write_text("[defaults]\ncollections_path = %s\ncallbacks_enabled = zhisuan.ops.run_summary"
                                         "\n" % target)
    # only the user's project: no ANSIBLE_CONFIG, roles_path or collections_path of this checkout
    env = dict((key, value) for key, value in os.environ.items() if not key.startswith("ANSIBLE_"))
    env.update(PATH=BIN + os.pathsep + os.environ.get("PATH", ""), PWD=str(project))
    _run([os.path.join(BIN, "ansible-galaxy"), "collection", "install", tarball, "-p", str(target)], project, env)
    assert (target / "ansible_collections" / "zhisuan" / "ops" / "MANIFEST.json").exists()
    return tarball, target, project, env


def test_the_tarball_carries_roles_playbooks_and_the_changelog(installed):
    tarball, target, _project, _env = installed
    with tarfile.open(tarball) as archive:
        names = set(archive.getnames())
    for name in ("roles/check_gpu/tasks/main.yml", "roles/results/defaults/main.yml", "playbooks/acceptance.yml",
                 "playbooks/site.yml", "playbooks/callback_plugins/zhisuan_run_record.py", "CHANGELOG.rst",
                 "plugins/modules/gpu_info.py", "data/xid_catalog.yml"):
        assert name in names, name
    changelog = (target / "ansible_collections" / "zhisuan" / "ops" / "CHANGELOG.rst").read_text()
    assert changelog.startswith("=========================\nzhisuan.ops Release Notes\n")
    # a fragment of this checkout is in the generated notes
    assert "gpu.nvlink.traffic" in changelog
    manifest = json.loads((target / "ansible_collections" / "zhisuan" / "ops" / "MANIFEST.json").read_text())
    assert manifest["collection_info"]["name"] == "ops"


def test_ansible_doc_renders_the_callback_without_broken_markup(installed):
    _tarball, _target, project, env = installed
    text = _run([os.path.join(BIN, "ansible-doc"), "-t", "callback", "zhisuan.ops.run_summary"], project, env)
    flat = " ".join(text.split())
    assert "ZHISUAN VERDICT: NOT ACCEPTED (fail): 1 host fail, 1 host unreachable; 7 open issues" in flat
    assert "acceptance run: ACCEPTED (pass)" in flat
    roles = _run([os.path.join(BIN, "ansible-doc"), "-t", "role", "-l", "zhisuan.ops"], project, env)
    assert "zhisuan.ops.check_gpu" in roles and "zhisuan.ops.results" in roles


def test_the_installed_collection_runs_an_inspection(installed, tmp_path):
    _tarball, _target, project, env = installed
    inventory = start_lab(tmp_path, "default.yml")
    try:
        stdout = _run([os.path.join(BIN, "ansible-playbook"), "zhisuan.ops.inspect", "-i", inventory, "-l", NODES,
                       "-e", "zhisuan_run_id=rel-1"], project, env, timeout=900)
    finally:
        stop_lab(tmp_path)
    run_dir = project / "reports" / "out" / "rel-1"
    document = json.loads((run_dir / "results.json").read_text())
    assert sorted(document["hosts"]) == NODES.split(",")
    assert (run_dir / "report.html").exists()
    ecc = [c for c in document["hosts"]["node03"]["checks"] if c["id"].startswith("gpu.ecc") and c["status"] == "fail"]
    assert ecc, "node03's ECC fault is found by the installed collection's roles"
    assert "ZHISUAN VERDICT:" in stdout and str(run_dir / "report.html") in stdout
