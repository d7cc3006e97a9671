# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.zhisuan.ops.plugins.plugin_utils._judging import FAMILIES, judge_family, warm_caches

# the profiles and the Xid catalog, read once in the main process and inherited by every forked worker
warm_caches()


class ActionModule(ActionBase):
    """Judge collected facts on the controller: pure rules, thresholds from inventory, no connection to the node."""

    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("family", "collected", "profile", "profile_overrides", "profiles_dir", "expected",
                             "thresholds", "gpu_facts", "xid_catalog_overrides", "context"))

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        dummy, args = self.validate_argument_spec(argument_spec=dict(
            family=dict(type="str", required=True, choices=sorted(FAMILIES)),
            collected=dict(type="dict", required=True),
            profile=dict(type="str"),
            profile_overrides=dict(type="dict", default={}),
            profiles_dir=dict(type="path"),
            expected=dict(type="dict", default={}),
            thresholds=dict(type="dict", default={}),
            gpu_facts=dict(type="dict"),
            xid_catalog_overrides=dict(type="raw"),
            context=dict(type="dict", default={}),
        ))
        host = task_vars.get("inventory_hostname", "unknown")
        try:
            checks, summary, unreachable = judge_family(
                args["family"], host, args["collected"], profile=args["profile"],
                profile_overrides=args["profile_overrides"], profiles_dir=args["profiles_dir"],
                expected=args["expected"], thresholds=args["thresholds"], gpu_facts=args["gpu_facts"],
                xid_catalog_overrides=args["xid_catalog_overrides"], context=args["context"])
        except ValueError as exc:
            raise AnsibleActionFail("zhisuan.ops.judge: %s" % exc)
        result.update(changed=False, checks=checks, summary=summary, host_unreachable=unreachable)
        return result
