# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this doc fragment is not part of the collection's public API and may change without notice.

from __future__ import annotations


class ModuleDocFragment(object):

    DOCUMENTATION = r"""
options: {}
attributes:
  check_mode:
    description: Can run in C(check_mode) and return changed status prediction without modifying target.
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in C(check_mode)), when in diff mode.
"""

    # Modules that only read.
    INFO_MODULE = r"""
options: {}
attributes:
  check_mode:
    support: full
    details:
      - This module only reads; it runs the same in check mode.
  diff_mode:
    support: N/A
    details:
      - This module does not change anything.
"""

    ACTIONGROUP_GPU = r"""
options: {}
attributes:
  action_group:
    description: Use C(group/zhisuan.ops.gpu) in C(module_defaults) to set defaults for this module.
    support: full
    membership:
      - zhisuan.ops.gpu
"""

    # Controller-side action plugins.
    CONTROLLER = r"""
options: {}
attributes:
  action:
    description: Indicates this has a corresponding action plugin so some parts of the options can be executed on the controller.
    support: full
  async:
    description: Supports being used with the C(async) keyword.
    support: none
  platform:
    description: Target OS/families that can be operated against.
    support: N/A
    platforms: all
"""
