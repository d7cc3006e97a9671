# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Small pure helpers the judgement rules of every family share: numbers from inventory, short value text for
messages and evidence, profile lookups, version and model matching, copying merges."""

from __future__ import annotations

import re


def to_number(value, what):
    """A threshold or expectation from inventory as a number (inventory values may arrive as strings)."""
    if value is None or isinstance(value, bool):
        raise ValueError("%s must be a number, got %r" % (what, value))
    if isinstance(value, (int, float)):
        return value
    try:
        text = str(value).strip()
        return int(text) if re.match(r"^-?\d+$", text) else float(text)
    except ValueError:
        raise ValueError("%s must be a number, got %r" % (what, value))


def fmt(value):
    """Short text for a value in messages and evidence."""
    if value is None:
        return "N/A"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, float):
        if value == int(value):
            return str(int(value))
        return ("%.2f" % value).rstrip("0").rstrip(".")
    return str(value)


def evidence_of(*pairs):
    return ", ".join("%s=%s" % (key, fmt(value)) for key, value in pairs)


def plural(count, word):
    return "%s %s%s" % (fmt(count), word, "" if count == 1 else "s")


def yes_no(value):
    return "yes" if value else "no"


def section_get(section, key):
    if not section:
        return None
    return section.get(key)


def profile_get(profile, section, key=None):
    """A profile figure, ``None`` when the profile, the section or the key is absent."""
    if not profile:
        return None
    value = profile.get(section)
    if key is None:
        return value
    if not isinstance(value, dict):
        return None
    return value.get(key)


def compile_pattern(pattern):
    """A model pattern from inventory: a regex if it compiles, else a literal substring (both case-insensitive)."""
    try:
        return re.compile(pattern, re.IGNORECASE)
    except re.error:
        return re.compile(re.escape(pattern), re.IGNORECASE)


def version_matches(observed, expected):
    """``535.161.08`` matches an expected ``535.161.08`` or the prefix ``535`` / ``535.161``."""
    observed = str(observed).strip()
    expected = str(expected).strip()
    return observed == expected or observed.startswith(expected + ".")


def merged(base, overrides):
    result = {}
    for key, value in base.items():
        result[key] = deep_copy(value)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = merged(result[key], value)
        else:
            result[key] = deep_copy(value)
    return result


def deep_copy(value):
    if isinstance(value, dict):
        return dict((key, deep_copy(item)) for key, item in value.items())
    if isinstance(value, list):
        return [deep_copy(item) for item in value]
    return value
