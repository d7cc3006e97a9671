# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Typed views of facts for the network, RDMA and storage judges: a judge reads a value through these, so a fact of
the wrong type, NaN, infinite, negative or absurd never reaches a comparison (where it would raise, or pass).

``reading`` returns a number a judge may compare, or ``None``; ``unreadable`` says whether a value was there but
could not be used (the judge then says "unreadable", an ``error`` check, instead of "not reported"). Pure functions.
"""

from __future__ import annotations

import math

# Larger than any reading these judges compare (link speeds in Mb/s, counters, IOPS, MiB/s, microseconds).
ABSURD = 1e15


def reading(value, low=0.0, high=ABSURD):
    """A finite int/float (not a bool) within ``[low, high]`` (``low``/``high`` None: unbounded), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if (low is not None and value < low) or (high is not None and value > high):
        return None
    return value


def unreadable(value, low=0.0, high=ABSURD):
    """True when ``value`` is present (not None) but is not a ``reading``."""
    return value is not None and reading(value, low, high) is None


def mapping(value):
    return value if isinstance(value, dict) else {}


def items(value):
    return value if isinstance(value, list) else []


def text(value):
    return value if isinstance(value, str) and value else None


def flag(value):
    """True/False as the facts hold them, None for anything else."""
    return value if isinstance(value, bool) else None


def shown(value):
    """A short, safe rendering of an odd value for a message (``repr``, clipped)."""
    return repr(value)[:60]
