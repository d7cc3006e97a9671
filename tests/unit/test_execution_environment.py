# SPDX-License-Identifier: GPL-3.0-or-later
"""The AWX side: the execution environment definition is accepted by ansible-builder and carries the project's
pinned dependencies; every survey question sets a variable the playbooks or roles read."""

from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import sys
import tomllib

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
BUILDER = os.path.join(os.path.dirname(sys.executable), "ansible-builder")
RUNS = ("acceptance", "burnin", "delivery", "diagnose", "inspect", "remediate")


def _pyproject_deps(extra=None):
    with open(os.path.join(REPO, "pyproject.toml"), "rb") as handle:
        project = tomllib.load(handle)["project"]
    return project["optional-dependencies"][extra] if extra else project["dependencies"]


def _requirements(path):
    with open(path) as handle:
        return [line.strip() for line in handle if line.strip() and not line.startswith("#")]


def test_ansible_builder_creates_the_build_context(tmp_path):
    context = tmp_path / "ee"
    proc = subprocess.run([BUILDER, "create", "-f", os.path.join(REPO, "execution-environment.yml"), "-c", str(context)],
                          capture_output=True, text=True, timeout=120, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    dockerfile = (context / "Dockerfile").read_text()
    # ansible-runner runs the playbooks in the image (AWX) and in the integration tests: a dev extra of the project
    pins = dict(dep.split("==") for dep in _pyproject_deps() + _pyproject_deps("dev"))
    assert 'ANSIBLE_INSTALL_REFS="ansible-core==%s ansible-runner==%s"' % (pins["ansible-core"], pins["ansible-runner"]) \
        in dockerfile
    assert 'PYCMD="/usr/bin/python3.11"' in dockerfile
    assert _requirements(context / "_build" / "requirements.txt") == _requirements(os.path.join(REPO, "ee", "requirements.txt"))
    assert "ipmitool" in (context / "_build" / "bindep.txt").read_text()


def test_the_image_gets_every_runtime_dependency_of_the_project():
    wanted = sorted(dep for dep in _pyproject_deps() if not dep.startswith(("ansible-core==", "ansible-runner==")))
    assert sorted(_requirements(os.path.join(REPO, "ee", "requirements.txt"))) == wanted


def _variables_read():
    """The inventory variables the playbooks and roles read (``zhisuan_*``), and the roles' own variables (the keys
    of their defaults: an extra var of that name sets it, e.g. ``report_language``)."""
    import yaml
    text = ""
    names = set()
    for path in glob.glob(os.path.join(REPO, "playbooks", "**", "*.yml"), recursive=True) + \
            glob.glob(os.path.join(REPO, "roles", "**", "*.yml"), recursive=True):
        with open(path) as handle:
            text += handle.read()
        if os.sep + "defaults" + os.sep in path:
            with open(path) as handle:
                names |= set(yaml.safe_load(handle) or {})
    return set(re.findall(r"\b(zhisuan_[a-z0-9_]+)\b", text)) | names


@pytest.mark.parametrize("run", RUNS)
def test_each_run_has_a_survey_whose_variables_are_read(run):
    with open(os.path.join(REPO, "awx", "surveys", "%s.json" % run)) as handle:
        survey = json.load(handle)
    assert os.path.exists(os.path.join(REPO, "playbooks", "%s.yml" % run))
    read = _variables_read()
    variables = [question["variable"] for question in survey["spec"]]
    assert "zhisuan_target" in variables
    unread = [name for name in variables if name not in read]
    assert unread == [], "survey %s asks for variables no playbook or role reads: %s" % (run, unread)
    for question in survey["spec"]:
        assert question["type"] in ("text", "integer", "float", "multiplechoice", "multiselect", "password")
        if question["type"] == "multiplechoice":
            assert str(question["default"]) in question["choices"]


def test_the_image_can_be_built_per_ansible_core_line_and_from_a_mirror(tmp_path):
    """One definition serves every supported ansible-core line and a mirrored base image (docs/awx.md): the build
    context ansible-builder writes takes both as build arguments."""
    context = tmp_path / "ee"
    proc = subprocess.run([BUILDER, "create", "-f", os.path.join(REPO, "execution-environment.yml"), "-c", str(context)],
                          capture_output=True, text=True, timeout=120, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    dockerfile = (context / "Dockerfile").read_text()
    assert re.search(r'^ARG EE_BASE_IMAGE="quay.io/centos/centos:stream9"$', dockerfile, re.MULTILINE)
    assert re.search(r"^FROM \$EE_BASE_IMAGE AS base$", dockerfile, re.MULTILINE)
    assert re.search(r'^ARG ANSIBLE_INSTALL_REFS="ansible-core==', dockerfile, re.MULTILINE)
    with open(os.path.join(REPO, "docs", "awx.md")) as handle:
        doc = handle.read()
    for line in ("2.16", "2.17", "2.18", "2.19"):
        assert "ANSIBLE_INSTALL_REFS=\"ansible-core==%s." % line in doc, line
    assert "--build-arg EE_BASE_IMAGE=" in doc


def test_the_bmc_credential_type_injects_what_the_roles_read():
    import yaml
    with open(os.path.join(REPO, "awx", "credential_types", "zhisuan-bmc.yml")) as handle:
        kind = yaml.safe_load(handle)
    fields = dict((field["id"], field) for field in kind["inputs"]["fields"])
    assert fields["bmc_password"].get("secret") is True and not fields["bmc_username"].get("secret")
    assert sorted(kind["injectors"]["extra_vars"]) == sorted(kind["inputs"]["required"]) == ["bmc_password",
                                                                                           "bmc_username"]
    for name in kind["injectors"]["extra_vars"]:
        assert kind["injectors"]["extra_vars"][name] == "{{ %s }}" % name
    with open(os.path.join(REPO, "roles", "check_bmc", "defaults", "main.yml")) as handle:
        defaults = handle.read()
    assert "bmc_password | default(omit)" in defaults and "bmc_username | default(omit)" in defaults
