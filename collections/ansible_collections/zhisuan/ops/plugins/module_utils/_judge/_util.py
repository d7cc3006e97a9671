# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Small pure helpers the judgement rules of every family share: numbers from inventory, short value text for
messages and evidence, profile lookups, version and model matching, copying merges."""

from __future__ import annotations

import math
import re


# The largest magnitude a threshold, a count or a reading may have: beyond it the value is not a reading but damage
# (a wrapped counter, 1e308 from a broken tool) and is refused as unreadable. 1e15 keeps every real figure (bytes of
# a whole cluster's memory, microseconds of a day) and stays exact as a float.
MAX_MAGNITUDE = 1e15
_INT_RE = re.compile(r"^[-+]?[0-9]+$", re.ASCII)
_FLOAT_RE = re.compile(r"^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$", re.ASCII)


class ThresholdError(ValueError):
    """A threshold, profile figure or inventory expectation that is not a usable number (a configuration error: the
    judges let it through, unlike a damaged fact)."""


def to_number(value, what):
    """A threshold or expectation from inventory as a number (inventory values may arrive as strings).

    Raises ValueError for anything that is not a plain, finite, sane number: booleans, NaN/Infinity, Unicode digits,
    ``1.2.3``, and values beyond ``MAX_MAGNITUDE``.
    """
    if value is None or isinstance(value, bool):
        raise ThresholdError("%s must be a number, got %r" % (what, value))
    if isinstance(value, (int, float)):
        number = value
    else:
        text = str(value).strip()
        if _INT_RE.match(text) and len(text) <= 20:
            number = int(text)
        elif _FLOAT_RE.match(text) and len(text) <= 40:
            number = float(text)
        else:
            raise ThresholdError("%s must be a number, got %r" % (_short(what), _short(value)))
    if not is_sane(number):
        raise ThresholdError("%s must be a finite number of sane size, got %s" % (_short(what), _short(value)))
    return number


def is_sane(value):
    """True for an int or float (not a bool) that is finite and within ``MAX_MAGNITUDE``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value) and abs(value) <= MAX_MAGNITUDE
    except OverflowError:  # an int too large for a float
        return False


def _short(value, limit=60):
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def fmt(value):
    """Short text for a value in messages and evidence. Never raises: NaN, infinities and huge numbers print as what
    they are, anything else through ``str`` (or ``repr`` when that fails), clipped."""
    if value is None:
        return "N/A"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if abs(value) >= 1e18:
            return "%.3g" % value
        if value == int(value):
            return str(int(value))
        return ("%.2f" % value).rstrip("0").rstrip(".")
    if isinstance(value, int):
        if abs(value) >= 10 ** 18:
            try:
                return "%.3g" % value
            except OverflowError:  # beyond a float; str() of it may itself raise (Python's int digit limit)
                digits = int(value.bit_length() * 0.30103) + 1
                return "%s%d digits" % ("-" if value < 0 else "", digits)
        return str(value)
    try:
        text = str(value)
    except Exception:  # pylint: disable=broad-except  # a value whose __str__ fails must not crash a report
        text = object.__repr__(value)
    return text if len(text) <= 2000 else text[:2000] + "..."


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


# Deeper than this, a facts document is damage (no collector nests so deep): the part below is dropped (None).
MAX_DEPTH = 32


def clean_facts(value, depth=0):
    """A copy of facts the judges can read safely: non-finite or absurd numbers (``is_sane``) become ``None`` (a
    reading the rules already call unreadable), nesting deeper than ``MAX_DEPTH`` is cut, and anything else that is
    not JSON-like becomes its text. Facts of the right shape come back equal."""
    if depth > MAX_DEPTH:
        return None
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, float)):
        return value if is_sane(value) else None
    if isinstance(value, dict):
        return dict((key, clean_facts(item, depth + 1)) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return [clean_facts(item, depth + 1) for item in value]
    return fmt(value)
