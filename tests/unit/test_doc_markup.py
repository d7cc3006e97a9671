# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every plugin's and role's documentation renders without broken markup (issue 27 item 5): Ansible's markup ends
``C(...)`` (and ``I``, ``B``, ``M``, ``R``, ``U``, ``L``) at the first ``)``, and ``O(...)``, ``V(...)``, ``E(...)``,
``P(...)`` at the first ``)`` not escaped by a backslash, so a ``(`` inside cuts the markup short and
``ansible-doc`` prints the rest as stray text (the run_summary callback printed ``NOT ACCEPTED (fail': 1 host ...``).
The check reads each file's DOCUMENTATION / RETURN (the roles' argument_specs) as YAML, as ansible-doc does, and looks
at every markup its strings hold."""

from __future__ import annotations

import ast
import glob
import os
import re

import pytest
import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
PLUGINS = os.path.join(REPO, "collections", "ansible_collections", "zhisuan", "ops", "plugins")
_MARKUP_RE = re.compile(r"(?<![A-Za-z0-9_])([CIBMRULOVEP])\(")
_ESCAPING = "OVEP"


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            for text in _strings(item):
                yield text
    elif isinstance(value, list):
        for item in value:
            for text in _strings(item):
                yield text


def broken(text):
    """The markups of ``text`` whose content holds an unclosed ``(``: ``[(markup, content)]``."""
    found = []
    for match in _MARKUP_RE.finditer(text):
        kind, start = match.group(1), match.end()
        end = start
        while end < len(text):
            if text[end] == "\\" and kind in _ESCAPING:
                end += 2
                continue
            if text[end] == ")":
                break
            end += 1
        content = text[start:end]
        # O/V/E/P: an escaped ``\)`` or ``\\`` is a literal character of the text
        unescaped = re.sub(r"\\(.)", r"\1", content) if kind in _ESCAPING else content
        if unescaped.count("(") > unescaped.count(")"):
            found.append((kind, content))
    return found


def _plugin_docs():
    for path in sorted(glob.glob(os.path.join(PLUGINS, "*", "*.py"))):
        if os.path.basename(os.path.dirname(path)) in ("module_utils", "plugin_utils"):
            continue
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                    and node.targets[0].id in ("DOCUMENTATION", "RETURN") and isinstance(node.value, ast.Constant):
                yield os.path.relpath(path, REPO), node.targets[0].id, yaml.safe_load(node.value.value)
    for path in sorted(glob.glob(os.path.join(REPO, "roles", "*", "meta", "argument_specs.yml"))):
        with open(path, encoding="utf-8") as handle:
            yield os.path.relpath(path, REPO), "argument_specs", yaml.safe_load(handle)


DOCS = list(_plugin_docs())


def test_the_check_finds_the_class_of_fault():
    assert broken("one verdict line (for example C(ZHISUAN VERDICT: NOT ACCEPTED (fail): 1 host fail))") == [
        ("C", "ZHISUAN VERDICT: NOT ACCEPTED (fail")]
    assert broken("V(NOT ACCEPTED (fail\\): 1 host fail) and C(a) (b)") == []
    assert broken("V(NOT ACCEPTED (fail): 1 host fail)") == [("V", "NOT ACCEPTED (fail")]
    assert broken("O(nvlink_remote) and V(true)") == []
    assert len(DOCS) > 60  # every module, action, filter, callback and role is read


@pytest.mark.parametrize("path,section,doc", DOCS, ids=["%s:%s" % (path, section) for path, section, _doc in DOCS])
def test_no_markup_is_cut_short(path, section, doc):
    bad = [(kind, content) for text in _strings(doc) for kind, content in broken(text)]
    assert bad == [], "%s %s: %s" % (path, section, "; ".join("%s(%s)" % item for item in bad))
