# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Make ``ansible_collections.zhisuan.ops`` importable from the repo checkout (collections/ next to tests/)."""

from __future__ import annotations

import os
import sys

COLLECTIONS_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, "collections"))
if COLLECTIONS_ROOT not in sys.path:
    sys.path.insert(0, COLLECTIONS_ROOT)

import pytest  # noqa: E402  (after the sys.path set-up above)
from ansible.module_utils.common import warnings as ansible_warnings  # noqa: E402

try:  # ansible-core 2.19+; the controller-side unit tests also run on 2.16-2.18 (make compat), which lack it
    from ansible.module_utils import _internal as ansible_internal  # noqa: E402
except ImportError:
    ansible_internal = None


@pytest.fixture
def as_node(monkeypatch):
    """Run a module in-process as it runs on a node.

    Once any test of the session has imported controller code (an action plugin), Ansible believes it is the
    controller and module.warn() goes to the controller's display instead of the result's ``warnings``; the
    process-wide warning registry is also emptied around each test. Module test files use it with
    ``pytestmark = pytest.mark.usefixtures("as_node")``.
    """
    if ansible_internal is not None:
        monkeypatch.setattr(ansible_internal, "is_controller", False)
    ansible_warnings._global_warnings.clear()  # pylint: disable=protected-access
    yield
    ansible_warnings._global_warnings.clear()  # pylint: disable=protected-access


def pytest_terminal_summary(terminalreporter):
    """Print how many damaged inputs the fuzz suite fed to parsers (tests/unit/fuzzing.py counts them)."""
    fuzzing = sys.modules.get("fuzzing")
    if fuzzing is not None and fuzzing.CASES["run"]:
        terminalreporter.write_line(
            "fuzz: %d damaged inputs run through parsers and collect paths (%d examples per test)"
            % (fuzzing.CASES["run"], fuzzing.EXAMPLES))
