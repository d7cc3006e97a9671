# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""The options of zhisuan.ops.check that its task leaves out, taken from the node's variables.

Each option has the chain of variables the per-family roles read it from (the role's own variable, then the
inventory's ``zhisuan_*`` one), and the roles' default: written once, in the family table
(``module_utils/_family/table.py``). Resolving them here, in one pass over the task's variables,
replaces some forty Jinja expressions in the task's arguments that every forked worker compiled afresh for every node
(Ansible 2.19 compiles a template on every use: 2.3 of the check task's 33.5 CPU seconds on 32 lab nodes).

A source is a variable name, or a path ``(variable, key, key...)`` into a mapping variable. The first source that is
defined wins, as Jinja's ``default()`` chains do: a variable set to null is defined (and a null option is left out, so
the module's own default applies). A missing key, or a path through something that is not a mapping, is undefined.
"""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._family import table
from ansible_collections.zhisuan.ops.plugins.plugin_utils._hostvars import UNDEFINED


# part -> option -> (sources, default[, conversion]): the node parts' options, from the family table
COLLECT = table.node_options("collect")
JUDGE = table.node_options("judge")


def _convert(value, how):
    if how == "int":
        # what Jinja's int filter does with a number or a numeric string; anything else goes to the module as it
        # is, whose argument check names the option
        try:
            return int(value) if not isinstance(value, bool) else value
        except (TypeError, ValueError):
            return value
    if how == "int_or_none":
        return None if value is None or str(value) == "" else _convert(value, "int")
    if how == "or_none":
        return value or None
    if how == "keys":
        return list(value) if isinstance(value, dict) else value
    return value


def resolve(spec, view):
    """One option: the first defined source of its chain, else its default, converted as the role's filter did."""
    sources, default = spec[0], spec[1]
    how = spec[2] if len(spec) > 2 else None
    value = default
    for source in sources:
        found = view.lookup(source)
        if found is not UNDEFINED:
            value = found
            break
    return _convert(value, how)


def family_options(table, families, given, view):
    """Per family, the options given to the task, and each left out taken from the variables (null ones dropped)."""
    out = {}
    for name in families:
        options = dict((table.get(name) or {}))
        given_family = dict(given.get(name) or {})
        resolved = {}
        for option, spec in options.items():
            resolved[option] = given_family.pop(option) if option in given_family else resolve(spec, view)
        resolved.update(given_family)
        out[name] = dict((key, value) for key, value in resolved.items() if value is not None)
    return out


def _as_bool(value):
    """Jinja's bool filter on the values a variable holds (true/yes/on/1, any case)."""
    if isinstance(value, str):
        return value.strip().lower() in ("true", "yes", "on", "1", "y", "t")
    return bool(value)


def node_selection(view):
    """What the check_node role asks for, from its variables: ``(families to collect, families to keep, record)``.

    ``check_node_families`` (gpu, xid, dcgm, tuning); the GPU facts are collected whenever gpu, xid or dcgm is
    selected or ``check_node_gpu_facts`` is set; gpu_bandwidth with gpu when ``check_gpu_bandwidth``; dcgm (the
    diagnostic) when ``check_node_dcgm_diag`` and dcgm_health when ``check_dcgm_health`` (default true), both with
    dcgm. Only the selected families' checks are kept (dcgm_health with dcgm, gpu_bandwidth with gpu)."""
    def value(name, default):
        found = view.lookup(name)
        return default if found is UNDEFINED else found

    selected = list(value("check_node_families", ["gpu", "xid", "dcgm"]) or [])
    if not all(isinstance(name, str) for name in selected):
        raise ValueError("check_node_families must be a list of family names, got %r" % (selected,))
    families = []
    for part in table.NODE_PARTS:
        wanted = part.family in selected or bool(set(part.wanted_by) & set(selected)) \
            or (part.forced_by is not None and _as_bool(value(part.forced_by, False)))
        if part.switch is not None and part.family in selected:
            wanted = wanted and _as_bool(value(part.switch[0], part.switch[1]))
        if wanted:
            families.append(part.name)
    keep = [part.name for part in table.NODE_PARTS if part.name in selected or part.family in selected]
    record = value("check_node_record", "") or None
    return families, keep, record
