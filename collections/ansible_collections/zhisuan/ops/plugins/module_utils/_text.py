# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Small text helpers shared by module_utils and plugin_utils (pure, stdlib only)."""

import re

_DIGITS = re.compile(r"([0-9]+)")


def natural_key(text):
    """A sort key that orders the numbers inside names by value: ``node2`` before ``node10``, ``GPU 9`` before
    ``GPU 10``. Only ASCII digits count as numbers (``str.isdigit`` also takes ``²``); parts compare in order, a
    number part before a text part where the two differ in kind."""
    parts = _DIGITS.split(str(text))
    return [(0, int(part), "") if index % 2 else (1, 0, part) for index, part in enumerate(parts)]
