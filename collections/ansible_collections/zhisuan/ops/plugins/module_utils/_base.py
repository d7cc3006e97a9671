# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""The module edge: shared argspecs, and the one place where typed errors become ``fail_json``."""

from __future__ import annotations

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ZhisuanError
from ansible_collections.zhisuan.ops.plugins.module_utils._runner import DEFAULT_TIMEOUT

# Mirrored 1:1 by plugins/doc_fragments/_tool.py.
TOOL_ARGSPEC = {
    "timeout": {"type": "int", "default": DEFAULT_TIMEOUT},
}


def run_module(argument_spec, runner, supports_check_mode=True, shared=(TOOL_ARGSPEC,)):
    """Build the AnsibleModule, call ``runner(module) -> dict`` and exit.

    A ``ZhisuanError`` from anywhere below becomes ``fail_json`` with ``msg``, ``error_kind``, ``tool`` and, for
    commands, ``cmd``/``rc``/``stdout``/``stderr``. Anything else is a bug and keeps its traceback.
    """
    spec = {}
    for part in shared:
        spec.update(part)
    spec.update(argument_spec)
    module = AnsibleModule(argument_spec=spec, supports_check_mode=supports_check_mode)
    if module.params.get("timeout") is not None and module.params["timeout"] <= 0:
        module.fail_json(msg="timeout must be a positive number of seconds, got %s" % module.params["timeout"])
    try:
        result = runner(module)
    except ZhisuanError as exc:
        module.fail_json(**exc.as_dict())
    result.setdefault("changed", False)
    module.exit_json(**result)
