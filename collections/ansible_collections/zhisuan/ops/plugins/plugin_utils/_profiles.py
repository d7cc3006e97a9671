# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""Load the GPU model profiles shipped as data (``data/profiles/*.yml``) on the controller.

A profile is a flat mapping: ``name``, ``match`` (regexes on the nvidia-smi product name) and the model's figures
(memory floor, PCIe, power, NVLink, temperature margin, bandwidth floors), each sourced in a comment in the file.
Selection and site overrides are pure and live with the rules (``module_utils/_judge/gpu.py``).
"""

from __future__ import annotations

import glob
import os
import re

import yaml

from ansible_collections.zhisuan.ops.plugins.plugin_utils._yaml import safe_load

DEFAULT_DIRECTORY = os.path.normpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "profiles"))


def _load_one(path):
    try:
        with open(path, "rb") as handle:
            data = safe_load(handle)
    except (OSError, yaml.YAMLError) as exc:
        raise ValueError("GPU profile %s cannot be read: %s" % (path, exc))
    if not isinstance(data, dict):
        raise ValueError("GPU profile %s is not a mapping" % path)
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ValueError("GPU profile %s has no 'name'" % path)
    match = data.get("match", [])
    if isinstance(match, str):
        match = [match]
    if not isinstance(match, list) or not all(isinstance(item, str) for item in match):
        raise ValueError("GPU profile %s: 'match' must be a list of regular expressions" % path)
    for pattern in match:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError("GPU profile %s: bad 'match' regex %r: %s" % (path, pattern, exc))
    data["match"] = match
    return data


# Profiles read once per process, by directory ("" the shipped ones): a worker judges one host; the controller's main
# process, which forks the workers, reads them once for all (plugin_utils._judging.warm_caches).
_CACHE = {}


def warm_profiles():
    """Read the shipped profiles into this process's cache now (where an action plugin is imported: the strategy
    imports it in the controller's main process before it forks a worker per node, and every worker inherits the
    cache). A profile that cannot be read is left for the task that needs it to report."""
    try:
        cached_profiles()
    except ValueError:
        pass


def cached_profiles(directory=None):
    """``load_profiles(directory)``, read once per process. Raises ValueError naming the file that is wrong."""
    key = directory or ""
    if key not in _CACHE:
        _CACHE[key] = load_profiles(directory)
    return _CACHE[key]


def load_profiles(directory=None):
    """Return ``{name: profile}`` for every ``*.yml``/``*.yaml`` file in ``directory`` (default: the shipped ones).

    Raises ``ValueError`` naming the file when one cannot be read, is not a mapping, has no ``name`` or a bad
    ``match`` regex, or when two files declare the same name.
    """
    directory = directory or DEFAULT_DIRECTORY
    if not os.path.isdir(directory):
        raise ValueError("GPU profile directory %s does not exist" % directory)
    paths = sorted(glob.glob(os.path.join(directory, "*.yml")) + glob.glob(os.path.join(directory, "*.yaml")))
    profiles = {}
    origin = {}
    for path in paths:
        profile = _load_one(path)
        name = profile["name"]
        if name in profiles:
            raise ValueError("GPU profile %s: name %r is already defined in %s" % (path, name, origin[name]))
        profiles[name] = profile
        origin[name] = path
    return profiles


def _folded(name):
    return "_".join(str(name).strip().lower().replace("-", " ").replace("_", " ").split())


def resolve_profile_name(name, profiles):
    """The profile name ``name`` means, as vendors and sites write it: ``H100``, ``h100``, ``H100-NVL``, ``h100 nvl``
    all name a profile regardless of case, ``-``, ``_`` or spaces. Returns ``None`` when no profile has that name."""
    if name in profiles:
        return name
    wanted = _folded(name)
    for known in sorted(profiles):
        if _folded(known) == wanted:
            return known
    return None
