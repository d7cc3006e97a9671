# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The collection stands alone (issue 14 item 4): built with ansible-galaxy, installed into an empty collections path,
it renders a saved run with zhisuan.ops.report from a folder that holds nothing of this repository (its templates,
schema and catalogs travel inside the collection), in English and in Chinese, and ansible-doc reads its docs."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

import pytest

from report_samples import rich_results

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
COLLECTION = os.path.join(REPO, "collections", "ansible_collections", "zhisuan", "ops")
BIN = os.path.dirname(sys.executable)

PLAYBOOK = """- name: Render a saved run with the installed collection
  hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: Render
      zhisuan.ops.report:
        src: "{{ playbook_dir }}/run/results.json"
        language: "{{ lang }}"
      register: rendered
    - name: Show
      ansible.builtin.debug:
        msg: "{{ rendered.verdict }} {{ rendered.paths.html }}"
"""


def _env(tmp_path, collections_path):
    env = dict((key, value) for key, value in os.environ.items() if not key.startswith("ANSIBLE_") and key != "PYTHONPATH")
    env.update(ANSIBLE_COLLECTIONS_PATH=str(collections_path), ANSIBLE_COLLECTIONS_SCAN_SYS_PATH="false",
               ANSIBLE_LOCAL_TEMP=str(tmp_path / "ansible-tmp"), ANSIBLE_HOME=str(tmp_path / "ansible-home"),
               PATH=BIN + os.pathsep + os.environ.get("PATH", ""))
    return env


def _run(argv, cwd, env, timeout=300):
    proc = subprocess.run(argv, cwd=str(cwd), env=env, capture_output=True, text=True, timeout=timeout, check=False)
    assert proc.returncode == 0, (argv, proc.stdout[-3000:], proc.stderr[-3000:])
    return proc.stdout


@pytest.fixture(name="installed", scope="module")
def fixture_installed(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("installed")
    env = _env(tmp_path, tmp_path / "collections")
    _run([os.path.join(BIN, "ansible-galaxy"), "collection", "build", COLLECTION, "--output-path", str(tmp_path / "dist")],
         tmp_path, env)
    tarball = glob.glob(str(tmp_path / "dist" / "zhisuan-ops-*.tar.gz"))
    assert len(tarball) == 1
    _run([os.path.join(BIN, "ansible-galaxy"), "collection", "install", tarball[0], "-p", str(tmp_path / "collections")],
         tmp_path, env)
    root = tmp_path / "collections" / "ansible_collections" / "zhisuan" / "ops"
    return tmp_path, env, root


def test_the_built_collection_carries_templates_schema_and_catalogs(installed):
    dummy_tmp, dummy_env, root = installed
    for rel in ("data/templates/report.html.j2", "data/templates/report.md.j2", "data/schema/results-v1.json",
                "data/locale/zh_CN/LC_MESSAGES/report.mo", "data/locale/zh_CN/LC_MESSAGES/report.po",
                "plugins/callback/run_summary.py"):
        assert (root / rel).is_file(), rel


@pytest.mark.parametrize("lang, verdict_words", [("en", "NOT ACCEPTED"), ("zh_CN", "\u4e0d\u4e88\u9a8c\u6536")])
def test_the_installed_collection_renders_a_saved_run(installed, tmp_path, lang, verdict_words):
    dummy_base, env, dummy_root = installed
    work = tmp_path / "site"
    (work / "run").mkdir(parents=True)
    (work / "run" / "results.json").write_text(json.dumps(rich_results()), encoding="utf-8")
    (work / "render.yml").write_text(PLAYBOOK, encoding="utf-8")
    out = _run([os.path.join(BIN, "ansible-playbook"), "-i", "localhost,", "-e",
                "ansible_python_interpreter=%s" % sys.executable, "-e", "lang=%s" % lang, "render.yml", "-v"], work, env)
    assert "not_accepted %s" % (work / "run" / "report.html") in out
    html = (work / "run" / "report.html").read_text(encoding="utf-8")
    assert verdict_words in html and '<section id="signoff"' in html
    assert sorted(os.listdir(str(work / "run"))) == ["junit.xml", "report.html", "report.json", "report.md", "results.json",
                                                    "stages.csv"]


def test_ansible_doc_reads_the_installed_report_docs(installed):
    dummy_tmp, env, dummy_root = installed
    out = _run([os.path.join(BIN, "ansible-doc"), "zhisuan.ops.report"], installed[0], env)
    assert "template_dir" in out and "language" in out and "zh_CN" in out
    out = _run([os.path.join(BIN, "ansible-doc"), "-t", "callback", "zhisuan.ops.run_summary"], installed[0], env)
    assert "verdict" in out
