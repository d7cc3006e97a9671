# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""Another host's variables, read by an action that runs once for the run (the record, the preflight)."""

from __future__ import annotations

from ansible.errors import AnsibleError


def raw_host_vars(hostvars, name):
    """A host's variables untemplated: HostVars.raw_get (a plain mapping, as tests pass, is taken as it is)."""
    return hostvars.raw_get(name) if hasattr(hostvars, "raw_get") else hostvars[name]


class HostView(object):
    """One host's variables: what the run kept (``data``: facts the run's own tasks wrote) as it is, and every other
    variable (the inventory's) templated in the host's own context, on first use.

    ``hostvars[name].get`` templates every value it returns, walking it whole: a node's record of several hundred
    checks cost ~50 ms a host that way, 3 s of a 64-node acceptance run, for data that holds no template."""

    def __init__(self, raw, templar, data=(), errors=None):
        """``errors``: a list to collect ``(variable, message)`` for a value that cannot be templated (it then reads
        as the default); without it the error is raised."""
        self._raw = raw if isinstance(raw, dict) else {}
        self._templar = templar
        self._data = frozenset(data)
        self._errors = errors
        self._host_templar = None

    def __contains__(self, key):
        return key in self._raw

    def get(self, key, default=None):
        if key not in self._raw:
            return default
        value = self._raw[key]
        if key in self._data or value is None or isinstance(value, (bool, int, float)):
            return value
        if self._host_templar is None:
            self._host_templar = self._templar.copy_with_new_env(available_variables=self._raw)
        try:
            return self._host_templar.template(value)
        except AnsibleError as exc:
            if self._errors is None:
                raise
            self._errors.append((key, template_error(exc)))
            return default


def template_error(exc):
    """The first line of a templating error, without the inventory excerpt Ansible appends."""
    text = getattr(exc, "message", None) or str(exc)
    return text.splitlines()[0] if text else type(exc).__name__
