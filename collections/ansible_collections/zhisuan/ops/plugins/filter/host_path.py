# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
name: host_path
short_description: The path of a host's own file or folder inside a run folder, safe for any inventory host name
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Builds C(<folder>[/<subdir>]/<name><suffix>) from an inventory host name made safe as a file name the way the
    history folder names its runs (letters, digits, C(.), C(_) and C(-) kept, other runs of characters C(_), no
    leading or trailing dot; a name that had to change gets C(-) and 8 hex digits of its hash), so that a host named
    C(../../x) or C(../results.json) cannot write outside the run folder or over its record.
  - The result is checked to resolve (symlinks followed) inside the folder; otherwise the filter fails naming the host,
    and only that host's task fails.
options:
  _input:
    description: The folder the file belongs in (the run folder, its tickets folder, ...).
    type: path
    required: true
  host:
    description: The inventory host name.
    type: str
    required: true
  subdir:
    description: A folder between the run folder and the host's name (for example C(evidence)).
    type: str
  suffix:
    description: Appended to the host's safe name (for example C(.json)).
    type: str
    default: ""
"""

EXAMPLES = r"""
- name: The node's evidence bundle folder
  ansible.builtin.set_fact:
    bundle_dir: "{{ hostvars['localhost'].results_run_dir | zhisuan.ops.host_path(inventory_hostname, 'evidence') }}"
"""

RETURN = r"""
_value:
  description: The path, inside the folder given.
  type: path
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.zhisuan.ops.plugins.plugin_utils._run_dir import RunDirError
from ansible_collections.zhisuan.ops.plugins.plugin_utils._run_dir import host_path as _host_path


def host_path(folder, host, subdir=None, suffix=""):
    if not folder or not isinstance(folder, str):
        raise AnsibleFilterError("host_path: the input must be a folder path, got %r" % (folder,))
    if host is None or str(host) == "":
        raise AnsibleFilterError("host_path: a host name is required")
    try:
        return _host_path(folder, str(host), subdir=subdir, suffix=suffix or "")
    except RunDirError as exc:
        raise AnsibleFilterError("host_path: %s" % exc)


class FilterModule(object):

    def filters(self):
        return {"host_path": host_path}
