# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""Preflight: a node's inventory inputs checked on the controller before any test runs on it (pure, no I/O).

A node whose inputs are wrong (a GPU profile that does not exist, a key of ``zhisuan_expected`` or
``zhisuan_thresholds`` that nothing reads, a DCGM level out of range, a family that is not the run's, a
``bmc_protocol`` we do not speak, a tool path that is not absolute) is not tested: it gets one ``error`` check that
names every bad value, and the other nodes run as usual. Keeping the known keys here, beside the run families,
is what lets a typo (``gpu_cout``) be an error instead of a check that silently never runs.
"""

from __future__ import annotations

import difflib
import posixpath

from ansible_collections.zhisuan.ops.plugins.module_utils._family import table as family_table
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import bandwidth as _bandwidth_rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import burn as _burn_rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import dcgm as _dcgm_rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import gpu as _gpu_rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import xid as _xid_rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._stability import DEFAULT_THRESHOLDS as _STABILITY
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.plugin_utils._families import RUN_FAMILIES, RUN_VARIABLES, unknown_families
from ansible_collections.zhisuan.ops.plugins.plugin_utils._profiles import resolve_profile_name

# Top-level keys of zhisuan_expected the rules read (README: the bill of materials and baseline of a node).
EXPECTED_KEYS = frozenset((
    "gpu_count", "gpu_model", "driver_version", "cuda_version", "mig_devices_per_gpu",  # gpu family
    "dimm_count", "memory_gib", "bmc_nic_count", "drive_count", "psu_count",  # bmc family (the BMC's inventory)
    "bios", "tuning", "net",                                          # baseline, tuning, nic/rdma/cabling
))
# Top-level keys of zhisuan_thresholds: one mapping per family (fleet: the cluster-wide comparisons).
THRESHOLD_KEYS = family_table.threshold_keys()
# The keys each section of zhisuan_thresholds may hold, where the rules read a fixed set (the rules' own defaults):
# a typo there (gpu.temprature_margin_c) is a mistake, not a threshold that silently keeps its default. The sections
# with free-form content (storage jobs, nccl per test, ...) are not listed and not checked key by key.
NESTED_THRESHOLD_KEYS = {
    # judge_gpu and the nvbandwidth rules read zhisuan_thresholds.gpu; gpu_info its windows (from the family table)
    "gpu": frozenset(_gpu_rules.DEFAULT_THRESHOLDS) | frozenset(_bandwidth_rules.DEFAULT_THRESHOLDS)
    | family_table.collect_threshold_keys().get("gpu", frozenset()),
    "xid": frozenset(_xid_rules.DEFAULT_THRESHOLDS),
    "dcgm": frozenset(_dcgm_rules.DEFAULT_THRESHOLDS),
    # the burn rules and the stability watch around the burn
    "burn": frozenset(_burn_rules.DEFAULT_THRESHOLDS) | frozenset(_STABILITY),
}
BMC_PROTOCOLS = ("redfish", "ipmi")
# The runs and families that log in to the BMC: their nodes need bmc_password (the BMC is never tried without it).
BMC_FAMILIES = ("bmc", "baseline")
DCGM_LEVELS = (1, 2, 3, 4)
# The programs the roles read from zhisuan_tools (keyed by the program name with - -> _); a site may add its own.
KNOWN_TOOLS = frozenset((
    "nvidia_smi", "dcgmi", "gpu_burn", "journalctl", "dmesg", "lspci", "ofed_info", "nv_fabricmanager", "ipmitool",
    "ethtool", "ip", "ibstat", "ibv_devinfo", "ib_write_bw", "ib_write_lat", "mlnx_qos", "lldpctl", "lldpcli",
    "all_reduce_perf", "all_gather_perf", "mpirun", "fio", "scontrol", "sinfo", "squeue", "kubectl", "nvbandwidth",
    "iblinkinfo", "ibnetdiscover", "bandwidthTest",
)) | family_table.tool_keys()
# Tools an empty path turns off rather than misconfigures: the kernel log is read from whichever source is left.
OFF_WHEN_EMPTY = ("journalctl", "dmesg")
CHECK_ID = "run.preflight.inventory"
# The inventory variables a node's preflight reads.
HOST_VARIABLES = ("zhisuan_gpu_profile", "zhisuan_expected", "zhisuan_thresholds", "zhisuan_dcgm_level",
                  "zhisuan_families", "zhisuan_acceptance_families", "zhisuan_diag_families", "bmc_protocol",
                  "zhisuan_tools")


def _suggest(value, choices):
    close = difflib.get_close_matches(str(value).lower(), [str(choice) for choice in choices], n=1, cutoff=0.5)
    return " (did you mean %s?)" % close[0] if close else ""


def _check_profile(value, profiles, problems):
    if value in (None, ""):
        return None
    if not isinstance(value, str):
        problems.append("zhisuan_gpu_profile must be a profile name, got %r" % (value,))
        return None
    name = resolve_profile_name(value, profiles)
    if name is None:
        problems.append("zhisuan_gpu_profile %r is not a known GPU profile%s; known profiles: %s"
                        % (value, _suggest(value, profiles), ", ".join(sorted(profiles))))
    return name


def _check_keys(variable, value, known, problems):
    if value in (None, ""):
        return
    if not isinstance(value, dict):
        problems.append("%s must be a mapping, got %s" % (variable, type(value).__name__))
        return
    for key in sorted(value, key=str):
        if key not in known:
            problems.append("%s has an unknown key %r%s; known keys: %s"
                            % (variable, key, _suggest(key, known), ", ".join(sorted(known))))


def _check_thresholds(value, problems):
    _check_keys("zhisuan_thresholds", value, THRESHOLD_KEYS, problems)
    if isinstance(value, dict):
        for key in sorted(value, key=str):
            if key in THRESHOLD_KEYS and value[key] is not None and not isinstance(value[key], dict):
                problems.append("zhisuan_thresholds.%s must be a mapping, got %r" % (key, value[key]))
            elif key in NESTED_THRESHOLD_KEYS and isinstance(value[key], dict):
                _check_keys("zhisuan_thresholds.%s" % key, value[key], NESTED_THRESHOLD_KEYS[key], problems)


def _check_dcgm_level(value, problems):
    if value in (None, ""):
        return
    try:
        level = int(str(value).strip())
    except ValueError:
        level = None
    if isinstance(value, bool) or level not in DCGM_LEVELS:
        problems.append("zhisuan_dcgm_level %r is out of range: dcgmi diag levels are 1 to 4" % (value,))


def _check_families(kind, variables, problems):
    names = ["zhisuan_families"] + ([RUN_VARIABLES[kind]] if kind in RUN_VARIABLES else [])
    for name in names:
        value = variables.get(name)
        if value in (None, "", []):
            continue
        items = [item.strip() for item in value.split(",")] if isinstance(value, str) else value
        if not isinstance(items, (list, tuple)) or not all(isinstance(item, str) for item in items):
            problems.append("%s must be a list of family names, got %r" % (name, value))
            continue
        for item in unknown_families(kind, [item for item in items if item]):
            problems.append("%s names %r, not a family of the %s run%s; its families: %s"
                            % (name, item, kind, _suggest(item, RUN_FAMILIES[kind]), ", ".join(RUN_FAMILIES[kind])))


def _check_bmc_protocol(value, problems):
    if value in (None, ""):
        return
    if not isinstance(value, str) or value.strip().lower() not in BMC_PROTOCOLS:
        problems.append("bmc_protocol %r is not one of %s" % (value, ", ".join(BMC_PROTOCOLS)))


def _check_bmc_password(kind, families, variables, unreadable, problems):
    """A run that logs in to the BMC needs the node's bmc_password: missing, empty or undefined (a vault variable that
    is not there) is a mistake named by the variable, never the value."""
    if kind != "delivery" or not set(families or ()) & set(BMC_FAMILIES):
        return
    if "bmc_password" in unreadable:
        return  # already named as unreadable (the template's own words)
    value = variables.get("bmc_password")
    if value is None or (isinstance(value, str) and not value):
        problems.append("bmc_password is %s: the BMC is not tried without it (set it for this node, from a vault)"
                        % ("missing" if value is None else "empty"))


def _check_tools(value, known_tools, problems):
    if value in (None, ""):
        return
    if not isinstance(value, dict):
        problems.append("zhisuan_tools must be a mapping of tool name to path, got %s" % type(value).__name__)
        return
    for key in sorted(value, key=str):
        path = value[key]
        if isinstance(key, str) and "-" in key and key.replace("-", "_") in known_tools:
            problems.append("zhisuan_tools key %r is never read: tool keys use '_' for '-' (%s)"
                            % (key, key.replace("-", "_")))
        if key in OFF_WHEN_EMPTY and path == "":
            continue  # an empty kernel-log source is turned off (net_info reads the other one)
        if not isinstance(path, str) or not path.strip():
            problems.append("zhisuan_tools.%s must be a path, got %r" % (key, path))
        elif "/" in path and not posixpath.isabs(path):
            # a bare name is a PATH lookup (the default); a relative path depends on where Ansible happens to run
            problems.append("zhisuan_tools.%s %r is a relative path: give the absolute path on the node "
                            "(or the bare program name for a PATH lookup)" % (key, path))


def preflight(kind, variables, profiles, known_tools=KNOWN_TOOLS, families=None, unreadable=()):
    """Check one node's inputs. ``variables``: the node's inventory values (missing = not set); ``families``: the
    run's families (the BMC ones need ``bmc_password``); ``unreadable``: the variables that could not be templated.

    Returns ``{"problems": [text, ...], "profile": canonical profile name or None}``.
    """
    problems = []
    profile = _check_profile(variables.get("zhisuan_gpu_profile"), profiles, problems)
    _check_keys("zhisuan_expected", variables.get("zhisuan_expected"), EXPECTED_KEYS, problems)
    _check_thresholds(variables.get("zhisuan_thresholds"), problems)
    _check_dcgm_level(variables.get("zhisuan_dcgm_level"), problems)
    _check_families(kind, variables, problems)
    _check_bmc_protocol(variables.get("bmc_protocol"), problems)
    _check_tools(variables.get("zhisuan_tools"), frozenset(known_tools), problems)
    _check_bmc_password(kind, families, variables, unreadable, problems)
    return {"problems": problems, "profile": profile}


def preflight_check(host, problems):
    """The one ``error`` check of a node whose inputs are wrong (it names every bad value)."""
    return make_check(
        CHECK_ID, host, "error", component="inventory", observed="%d mistake%s" % (len(problems), "" if len(problems) == 1 else "s"),
        expected="inventory inputs the run can use",
        message="Not tested: the inventory of this node has %s: %s" % (
            "a mistake" if len(problems) == 1 else "mistakes", "; ".join(problems)),
        remedy="investigate", evidence="\n".join(problems))


# ---------------------------------------------------------------------------------------------------------------
# the node's Python (issue 27 item 2): ansible-core runs a module with the node's interpreter, and each line supports
# target Pythons from a minimum on (the ansible-core support matrix); the collection's node-side files keep to 3.6.
# A module that could not run on a node whose Python is older says so, never a bare MODULE FAILURE.
NODE_PYTHON_MINIMUM = {(2, 16): (3, 6), (2, 17): (3, 7), (2, 18): (3, 8), (2, 19): (3, 8)}
COLLECTION_NODE_MINIMUM = (3, 6)
# what the interpreter prints when asked for its version (the probe's command: python -c ... ; 2.x prints it too)
NODE_PYTHON_PROBE = "import sys; print('%d.%d.%d' % tuple(sys.version_info[:3]))"


def node_python_minimum(ansible_version):
    """The oldest node Python ``ansible_version`` (``2.19.4``) runs modules with: its line's, the newest known
    line's for a newer one, and never older than the collection's own node-side minimum."""
    try:
        line = tuple(int(part) for part in str(ansible_version).split(".")[:2])
    except ValueError:
        line = max(NODE_PYTHON_MINIMUM)
    known = [key for key in sorted(NODE_PYTHON_MINIMUM) if key <= line]
    minimum = NODE_PYTHON_MINIMUM[known[-1]] if known else NODE_PYTHON_MINIMUM[min(NODE_PYTHON_MINIMUM)]
    return max(minimum, COLLECTION_NODE_MINIMUM)


def parse_python_version(text):
    """``(3, 6, 8)`` from the probe's output (its last line that is a version), or None."""
    for line in reversed(str(text or "").strip().splitlines()):
        parts = line.strip().split(".")
        if len(parts) == 3 and all(part.isdigit() for part in parts):
            return tuple(int(part) for part in parts)
    return None


def node_python_problem(probe_output, ansible_version, interpreter):
    """The message for a node whose Python (the probe's output) is older than ``ansible_version`` runs modules
    with, naming the interpreter, its version and the fix; None when it is new enough or could not be read."""
    found = parse_python_version(probe_output)
    if found is None:
        return None
    minimum = node_python_minimum(ansible_version)
    if found[:2] >= minimum:
        return None
    return ("the node's Python %s (%s) is older than ansible-core %s runs modules with (Python %d.%d or newer on the "
            "node): set ansible_python_interpreter for this node to a Python %d.%d+ (RHEL/Rocky 8: dnf install "
            "python39, then /usr/bin/python3.9), or run the controller with an ansible-core line that supports it "
            "(2.16: 3.6+, 2.17: 3.7+)" % (".".join(map(str, found)), interpreter, ansible_version, minimum[0],
                                          minimum[1], minimum[0], minimum[1]))
