# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""The options of zhisuan.ops.check that its task leaves out, taken from the node's variables.

Each option has the chain of variables the per-family roles read it from (the role's own variable, then the
inventory's ``zhisuan_*`` one), and the roles' default. Resolving them here, in one pass over the task's variables,
replaces some forty Jinja expressions in the task's arguments that every forked worker compiled afresh for every node
(Ansible 2.19 compiles a template on every use: 2.3 of the check task's 33.5 CPU seconds on 32 lab nodes).

A source is a variable name, or a path ``(variable, key, key...)`` into a mapping variable. The first source that is
defined wins, as Jinja's ``default()`` chains do: a variable set to null is defined (and a null option is left out, so
the module's own default applies). A missing key, or a path through something that is not a mapping, is undefined.
"""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.plugin_utils._hostvars import UNDEFINED


def _tool(role_var, tool, default):
    return ((role_var, ("zhisuan_tools", tool)), default)


def _cap(role_var, tool):
    """The output cap (MiB) of a family's programs: the role's variable, else zhisuan_tool_max_output keyed like
    zhisuan_tools; unset leaves the runner's per-tool default."""
    return ((role_var, ("zhisuan_tool_max_output", tool)), None, "int_or_none")


# family -> option -> (sources, default[, conversion])
COLLECT = {
    "gpu": {
        "nvidia_smi_path": _tool("check_gpu_nvidia_smi", "nvidia_smi", "nvidia-smi"),
        "timeout": (("check_gpu_timeout",), 60),
        "max_output": _cap("check_gpu_max_output", "nvidia_smi"),
        "nvlink_errors_window": (("check_gpu_nvlink_errors_window", ("zhisuan_thresholds", "gpu", "nvlink_errors_window_s")),
                                 0, "int"),
    },
    "gpu_bandwidth": {
        "nvbandwidth_path": _tool("check_gpu_nvbandwidth", "nvbandwidth", "nvbandwidth"),
        "timeout": (("check_gpu_bandwidth_timeout",), 900, "int"),
        "max_output": _cap("check_gpu_bandwidth_max_output", "nvbandwidth"),
    },
    "xid": {
        "journalctl_path": _tool("check_xid_journalctl", "journalctl", "journalctl"),
        "dmesg_path": _tool("check_xid_dmesg", "dmesg", "dmesg"),
        "since": (("check_xid_since", "zhisuan_xid_since"), "-24h"),
        "source": (("check_xid_source",), "auto"),
        "timeout": (("check_xid_timeout",), 60),
        "max_output": _cap("check_xid_max_output", "journalctl"),
    },
    "dcgm": {
        # check_node_dcgm_level is the check_node role's (the run's level); the others the check_dcgm role's chain
        "level": (("check_node_dcgm_level", "check_dcgm_level", "zhisuan_dcgm_level"), 1, "int"),
        "dcgmi_path": _tool("check_dcgm_dcgmi", "dcgmi", "dcgmi"),
        # empty: the module's default for the level
        "timeout": (("check_dcgm_timeout",), None, "int_or_none"),
        "max_output": _cap("check_dcgm_max_output", "dcgmi"),
    },
    "dcgm_health": {
        "dcgmi_path": _tool("check_dcgm_dcgmi", "dcgmi", "dcgmi"),
        "timeout": (("check_node_dcgm_health_timeout", "check_dcgm_health_timeout"), 60, "int"),
        "max_output": _cap("check_dcgm_max_output", "dcgmi"),
    },
    "tuning": {
        "nvidia_smi_path": _tool("check_tuning_nvidia_smi", "nvidia_smi", "nvidia-smi"),
        "lspci_path": _tool("check_tuning_lspci", "lspci", "lspci"),
        "ofed_info_path": _tool("check_tuning_ofed_info", "ofed_info", "ofed_info"),
        "nv_fabricmanager_path": _tool("check_tuning_nv_fabricmanager", "nv_fabricmanager", "nv-fabricmanager"),
        "dcgmi_path": _tool("check_tuning_dcgmi", "dcgmi", "dcgmi"),
        "acs": (("check_tuning_acs", "zhisuan_read_acs"), True),
        "root": (("check_tuning_root", "zhisuan_host_root"), "/"),
        # the sysctl keys the expected tuning names (their values are judged on the controller)
        "sysctl_keys": (("check_tuning_sysctl_keys", ("zhisuan_expected", "tuning", "sysctl")), {}, "keys"),
        "timeout": (("check_tuning_timeout",), 60),
        "max_output": _cap("check_tuning_max_output", "lspci"),
    },
}

_PROFILE = (("check_gpu_profile", "zhisuan_gpu_profile"), "", "or_none")
_PROFILE_OVERRIDES = (("check_gpu_profile_overrides", "zhisuan_gpu_profile_overrides"), {})
_GPU_THRESHOLDS = (("check_gpu_thresholds", ("zhisuan_thresholds", "gpu")), {})

JUDGE = {
    "gpu": {
        "profile": _PROFILE,
        "profile_overrides": _PROFILE_OVERRIDES,
        "expected": (("check_gpu_expected", "zhisuan_expected"), {}),
        "thresholds": _GPU_THRESHOLDS,
    },
    "gpu_bandwidth": {
        "profile": _PROFILE,
        "profile_overrides": _PROFILE_OVERRIDES,
        "thresholds": _GPU_THRESHOLDS,
    },
    "xid": {
        "thresholds": (("check_xid_thresholds", ("zhisuan_thresholds", "xid")), {}),
        "xid_catalog_overrides": (("check_xid_catalog_overrides", "zhisuan_xid_catalog_overrides"), None, "or_none"),
    },
    "dcgm": {
        "thresholds": (("check_dcgm_thresholds", ("zhisuan_thresholds", "dcgm")), {}),
    },
    "tuning": {
        "expected": (("check_tuning_expected", "zhisuan_expected"), {}),
        "thresholds": (("check_tuning_thresholds", ("zhisuan_thresholds", "tuning")), {}),
    },
}


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
    bandwidth = "gpu" in selected and _as_bool(value("check_gpu_bandwidth", False))
    families = []
    if set(selected) & set(("gpu", "xid", "dcgm")) or _as_bool(value("check_node_gpu_facts", False)):
        families.append("gpu")
    if bandwidth:
        families.append("gpu_bandwidth")
    if "xid" in selected:
        families.append("xid")
    if "dcgm" in selected and _as_bool(value("check_node_dcgm_diag", True)):
        families.append("dcgm")
    if "dcgm" in selected and _as_bool(value("check_dcgm_health", True)):
        families.append("dcgm_health")
    if "tuning" in selected:
        families.append("tuning")
    wanted = set(selected) | (set(("dcgm_health",)) if "dcgm" in selected else set()) \
        | (set(("gpu_bandwidth",)) if "gpu" in selected else set())
    keep = [name for name in ("gpu", "gpu_bandwidth", "xid", "dcgm", "dcgm_health", "tuning") if name in wanted]
    record = value("check_node_record", "") or None
    return families, keep, record
