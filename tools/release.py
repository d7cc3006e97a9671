#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Build the zhisuan.ops collection as Galaxy ships it (issue 27 item 5): the collection of this checkout with the
roles and playbooks a user runs, its changelog generated from the fragments, one tarball.

    python tools/release.py [--out build/release]   # writes <out>/zhisuan-ops-<version>.tar.gz

Steps, each a real tool: copy ``collections/ansible_collections/zhisuan/ops`` to ``<out>/stage/ansible_collections/
zhisuan/ops`` with ``roles/`` and ``playbooks/`` of the checkout beside its plugins; ``antsibull-changelog release``
there (the fragments become ``changelogs/changelog.yaml`` and ``CHANGELOG.rst`` of the staged copy; the checkout's
fragments stay); ``ansible-galaxy collection build``. The checkout is never written. Standard library plus the tools
of the project's venv (found beside this Python, else on PATH)."""

from __future__ import annotations

import argparse
import datetime
import os
import shutil
import subprocess
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir))
COLLECTION = os.path.join(REPO, "collections", "ansible_collections", "zhisuan", "ops")
# what the staged copy leaves out: test output and caches of the checkout
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", "output", ".pytest_cache", "*.tar.gz")
TIMEOUT = 600


class ReleaseError(Exception):
    pass


def _tool(name):
    beside = os.path.join(os.path.dirname(sys.executable), name)
    return beside if os.path.exists(beside) else (shutil.which(name) or name)


def _run(argv, cwd, env=None):
    try:
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ReleaseError("%s: %s" % (" ".join(argv), exc))
    if done.returncode != 0:
        raise ReleaseError("%s exited %d: %s" % (" ".join(argv), done.returncode,
                                                 (done.stderr or done.stdout).strip()[-2000:]))
    return done.stdout


def version():
    """The collection's version (galaxy.yml's ``version:``)."""
    with open(os.path.join(COLLECTION, "galaxy.yml"), encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("version:"):
                return line.split(":", 1)[1].strip().strip("'\"")
    raise ReleaseError("galaxy.yml has no version")


def stage(out):
    """The staged collection (``<out>/stage/ansible_collections/zhisuan/ops``) with roles/ and playbooks/."""
    target = os.path.join(out, "stage", "ansible_collections", "zhisuan", "ops")
    if os.path.exists(os.path.join(out, "stage")):
        shutil.rmtree(os.path.join(out, "stage"))
    shutil.copytree(COLLECTION, target, ignore=IGNORE)
    for folder in ("roles", "playbooks"):
        shutil.copytree(os.path.join(REPO, folder), os.path.join(target, folder), ignore=IGNORE)
    return target


def changelog(target, when=None):
    """Release the fragments into the staged copy's changelog (CHANGELOG.rst beside galaxy.yml)."""
    # antsibull-changelog lists the plugins with ansible-doc: the venv's, on the staged copy
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.dirname(os.path.dirname(os.path.dirname(target))),
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    _run([_tool("antsibull-changelog"), "release", "--version", version(), "--date",
          when or datetime.date.today().isoformat()], cwd=target, env=env)
    path = os.path.join(target, "CHANGELOG.rst")
    if not os.path.exists(path):
        raise ReleaseError("antsibull-changelog wrote no CHANGELOG.rst")
    return path


def build(out, when=None):
    """Stage, release the changelog and build; the tarball's path."""
    os.makedirs(out, exist_ok=True)
    target = stage(out)
    changelog(target, when)
    _run([_tool("ansible-galaxy"), "collection", "build", target, "--output-path", out, "--force"], cwd=out)
    tarball = os.path.join(out, "zhisuan-ops-%s.tar.gz" % version())
    if not os.path.exists(tarball):
        raise ReleaseError("ansible-galaxy collection build wrote no %s" % os.path.basename(tarball))
    return tarball


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(REPO, "build", "release"))
    args = parser.parse_args(argv)
    try:
        print(build(os.path.abspath(args.out)))
    except ReleaseError as exc:
        sys.stderr.write("tools/release.py: %s\n" % exc)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
