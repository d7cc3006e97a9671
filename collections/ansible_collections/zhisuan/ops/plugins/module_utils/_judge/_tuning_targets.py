# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""The target language of the tuning rules (pure): what a site writes in ``zhisuan_expected.tuning`` and how an
observed value is held against it.

Value syntax: a value (``0``, ``"never"``), ``"unlimited"`` (a limit of 2**63 or more counts as unlimited: container
runtimes print 18446744073708503040 for "no limit"), an inequality (``">= 16777216"``; for a sysctl that
holds several numbers, such as ``net.ipv4.tcp_rmem``, it applies to the last one), or a list of accepted values.
"""

from __future__ import annotations

import re

_OP = re.compile(r"^\s*(>=|<=|==|!=|>|<)\s*(\S+)\s*$")
_INF = float("inf")
# A limit of 2**63 or more is unlimited in practice: kernels and container runtimes print near-RLIM_INFINITY values
# such as 18446744073708503040 (2**64 - 2**20) for "no limit".
_NEAR_INFINITE = 2 ** 63


def number(text):
    text = str(text).strip()
    if text == "unlimited":
        return _INF
    if re.match(r"^\d+$", text) and int(text) >= _NEAR_INFINITE:
        return _INF
    if re.match(r"^-?\d+(\.\d+)?$", text):
        return float(text)
    numbers = text.split()
    if numbers and all(re.match(r"^-?\d+$", part) for part in numbers):
        return float(numbers[-1])
    return None


def matches(observed, want):
    """Whether an observed value meets a target (see the module docstring for the syntax)."""
    if observed is None:
        return False
    if isinstance(want, (list, tuple)):
        return any(matches(observed, item) for item in want)
    if isinstance(want, bool):
        return observed is want or str(observed).strip().lower() in (("1", "true", "on", "yes") if want
                                                                     else ("0", "false", "off", "no"))
    op = _OP.match(str(want)) if isinstance(want, str) else None
    if op:
        have, limit = number(observed), number(op.group(2))
        if limit is None:
            raise ValueError("tuning target %r: %r is not a number" % (want, op.group(2)))
        if have is None:
            return False
        return {">=": have >= limit, "<=": have <= limit, ">": have > limit, "<": have < limit,
                "==": have == limit, "!=": have != limit}[op.group(1)]
    if isinstance(want, (int, float)):
        return number(observed) == float(want)
    if str(want).strip() == "unlimited":
        return number(observed) == _INF
    return " ".join(str(observed).split()).lower() == " ".join(str(want).split()).lower()


def want_text(want):
    if isinstance(want, (list, tuple)):
        return " or ".join(want_text(item) for item in want)
    if isinstance(want, bool):
        return "on" if want else "off"
    return str(want)


class Targets(object):
    """Site targets over the defaults; ``get`` -> (value, severity, origin) or None when dropped/absent."""

    def __init__(self, tuning):
        self.tuning = tuning or {}

    def get(self, key, default=None):
        if key in self.tuning:
            value = self.tuning[key]
            return None if value is None else (value, "fail", "zhisuan_expected.tuning.%s" % key)
        if default is None:
            return None
        return (default[0], default[1], "default")

    def section(self, key, defaults=None):
        merged = {}
        for name, (value, severity) in (defaults or {}).items():
            merged[name] = (value, severity, "default")
        for name, value in (self.tuning.get(key) or {}).items():
            if value is None:
                merged.pop(name, None)
            else:
                merged[name] = (value, "fail", "zhisuan_expected.tuning.%s.%s" % (key, name))
        return merged
