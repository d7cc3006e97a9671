# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""The module edge: shared argspecs, and the one place where typed errors become ``fail_json``."""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import OptionError, ZhisuanError
from ansible_collections.zhisuan.ops.plugins.module_utils._runner import DEFAULT_TIMEOUT, set_output_limit

# AnsibleModule's keywords for combinations of options, passed on by run_module.
CHECK_KEYWORDS = ("mutually_exclusive", "required_together", "required_one_of", "required_if", "required_by")

# Mirrored 1:1 by plugins/doc_fragments/_tool.py.
TOOL_ARGSPEC = {
    "timeout": {"type": "int", "default": DEFAULT_TIMEOUT},
    # MiB; unset: the per-tool caps of _runner.MAX_OUTPUT_MIB
    "max_output": {"type": "int"},
}


def run_module(argument_spec, runner, supports_check_mode=True, shared=(TOOL_ARGSPEC,), **checks):
    """Build the AnsibleModule, call ``runner(module) -> dict`` and exit.

    ``checks`` are AnsibleModule's own keywords for combinations of options (``required_if``,
    ``mutually_exclusive``, ``required_one_of``, ``required_together``, ``required_by``): declare them here rather
    than re-checking them in the runner.

    A ``ZhisuanError`` from anywhere below becomes ``fail_json`` with ``msg``, ``error_kind``, ``tool`` and, for
    commands, ``cmd``/``rc``/``stdout``/``stderr``, over what the error carries in ``result`` (changed, diff, ...).
    Anything else is a bug and keeps its traceback.
    """
    unknown = sorted(set(checks) - set(CHECK_KEYWORDS))
    if unknown:
        raise TypeError("run_module() got unknown keyword(s) %s; known: %s" % (", ".join(unknown), ", ".join(CHECK_KEYWORDS)))
    spec = {}
    for part in shared:
        spec.update(part)
    spec.update(argument_spec)
    module = AnsibleModule(argument_spec=spec, supports_check_mode=supports_check_mode, **checks)
    try:
        check_timeout(module.params)
        apply_output_limit(module.params)
        result = runner(module)
    except ZhisuanError as exc:
        module.fail_json(**failure_fields(exc))
    result.setdefault("changed", False)
    module.exit_json(**result)


def check_timeout(params):
    """Raise OptionError when the ``timeout`` option is set and not a positive number of seconds."""
    if params.get("timeout") is not None and params["timeout"] <= 0:
        raise OptionError("timeout", "timeout must be a positive number of seconds, got %s" % params["timeout"])


def apply_output_limit(params):
    """Set the ``max_output`` option (MiB) as the output cap of every program run from now on (``None``: the
    per-tool defaults). Raises OptionError when it is not a positive number."""
    value = params.get("max_output")
    if value is not None and value <= 0:
        raise OptionError("max_output", "max_output must be a positive number of MiB, got %s" % value)
    set_output_limit(value)


def failure_fields(exc):
    """What a task that failed with ``exc`` returns (without ``failed``): ``msg``, ``error_kind``, ``tool`` and, for
    commands, ``cmd``/``rc``/``stdout``/``stderr``, over what the error carries in ``result``."""
    failure = dict(exc.result or {})
    failure.update(exc.as_dict())
    return failure


def positive(params, key):
    """``params[key]`` when it is a positive number (or None); raises OptionError naming the option otherwise."""
    value = params.get(key)
    if value is not None and value <= 0:
        raise OptionError(key, "%s must be a positive number of seconds, got %s" % (key, value))
    return value
