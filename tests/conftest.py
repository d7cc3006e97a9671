# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Make ``ansible_collections.zhisuan.ops`` importable from the repo checkout (collections/ next to tests/)."""

from __future__ import annotations

import os
import sys

COLLECTIONS_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, "collections"))
if COLLECTIONS_ROOT not in sys.path:
    sys.path.insert(0, COLLECTIONS_ROOT)
