# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""A family's limits: its defaults with a site's ``zhisuan_thresholds.<family>`` over them (pure, stdlib only)."""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._util import to_number


def overridden(defaults, overrides, where="threshold %s"):
    """``defaults`` (a mapping) with each number of ``overrides`` over it. Only the keys of ``defaults`` count (a
    site's other keys belong to other rules); a ``None`` keeps the default. A value that is not a number raises
    ValueError naming it as ``where % key``."""
    limits = dict(defaults)
    for key, value in (overrides or {}).items():
        if key in limits and value is not None:
            limits[key] = to_number(value, where % key)
    return limits
