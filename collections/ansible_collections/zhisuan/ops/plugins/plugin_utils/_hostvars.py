# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""A host's variables as an action reads them: each templated once, on first use, in that host's own context.

The check action reads its node's options through it (the task's variables, the task's templar); the record and the
preflight, which run once for the run, read every node's (hostvars untemplated, templated in each node's context).
"""

from __future__ import annotations

from collections.abc import Mapping

from ansible.errors import AnsibleError

# what HostView.lookup returns for an undefined variable or key (null is a value)
UNDEFINED = object()


def raw_host_vars(hostvars, name):
    """A host's variables untemplated: HostVars.raw_get (a plain mapping, as tests pass, is taken as it is)."""
    return hostvars.raw_get(name) if hasattr(hostvars, "raw_get") else hostvars[name]


class HostView(object):
    """One host's variables: what the run kept (``data``: facts the run's own tasks wrote) as it is, and every other
    variable (the inventory's) templated by ``template`` on first use, once.

    ``hostvars[name].get`` templates every value it returns, walking it whole: a node's record of several hundred
    checks cost ~50 ms a host that way, 3 s of a 64-node acceptance run, for data that holds no template."""

    def __init__(self, raw, template, data=(), errors=None):
        """``template``: a function templating one value in the host's context (see ``of_host`` for another host's).
        ``errors``: a list to collect ``(variable, message)`` for a value that cannot be templated (it then reads as
        undefined); without it the error is raised."""
        self._raw = raw if isinstance(raw, Mapping) else {}
        self._template = template
        self._data = frozenset(data)
        self._errors = errors
        self._done = {}

    @classmethod
    def of_host(cls, raw, templar, data=(), errors=None):
        """Another host's variables, templated with a copy of ``templar`` whose variables are that host's own."""
        copies = []

        def template(value):
            if not copies:
                copies.append(templar.copy_with_new_env(available_variables=raw))
            return copies[0].template(value)
        return cls(raw, template, data, errors)

    def __contains__(self, key):
        return key in self._raw

    def get(self, key, default=None):
        """The variable's value, or ``default`` when it is undefined (or cannot be templated and errors collects)."""
        value = self.lookup(key)
        return default if value is UNDEFINED else value

    def lookup(self, path):
        """A variable, or a path ``(variable, key, key...)`` into a mapping variable: its value, else UNDEFINED."""
        path = (path,) if isinstance(path, str) else tuple(path)
        value = self._value(path[0])
        for key in path[1:]:
            if not isinstance(value, dict) or key not in value:
                return UNDEFINED
            value = value[key]
        return value

    def _value(self, name):
        if name in self._done:
            return self._done[name]
        if name not in self._raw:
            return UNDEFINED
        value = self._raw[name]
        if not (name in self._data or value is None or isinstance(value, (bool, int, float))):
            try:
                value = self._template(value)
            except AnsibleError as exc:
                if self._errors is None:
                    raise
                self._errors.append((name, template_error(exc)))
                value = UNDEFINED
        self._done[name] = value
        return value


def template_error(exc):
    """The first line of a templating error, without the inventory excerpt Ansible appends."""
    text = getattr(exc, "message", None) or str(exc)
    return text.splitlines()[0] if text else type(exc).__name__
