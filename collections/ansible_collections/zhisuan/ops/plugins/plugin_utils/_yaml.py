# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""The collection's own data files (profiles, the Xid catalog, the BIOS table) read on the controller: with
libyaml's safe loader where PyYAML has it (about ten times faster; every node's judgement reads them once per worker
process), else PyYAML's pure-Python safe loader. Both build the same plain data; errors are ``yaml.YAMLError``."""

from __future__ import annotations

import yaml

SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def safe_load(stream):
    """``yaml.safe_load`` with the fastest safe loader there is."""
    return yaml.load(stream, Loader=SAFE_LOADER)  # nosec B506 - a safe loader, C or Python
