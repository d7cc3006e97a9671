# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import os

import yaml
from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.zhisuan.ops.plugins.module_utils._judge.baseline import bios_names
from ansible_collections.zhisuan.ops.plugins.plugin_utils._judging import FAMILIES, Context, judge_collected
from ansible_collections.zhisuan.ops.plugins.plugin_utils._profiles import load_profiles
from ansible_collections.zhisuan.ops.plugins.plugin_utils._xid_catalog import load_catalog


class ActionModule(ActionBase):
    """Judge collected facts on the controller: pure rules, thresholds from inventory, no connection to the node."""

    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("family", "collected", "profile", "profile_overrides", "profiles_dir", "expected",
                             "thresholds", "gpu_facts", "xid_catalog_overrides", "context"))
    _profile_cache = {}

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
        key = args["profiles_dir"] or ""
        if key not in self._profile_cache:
            try:
                self._profile_cache[key] = load_profiles(args["profiles_dir"])
            except ValueError as exc:
                raise AnsibleActionFail("zhisuan.ops.judge: %s" % exc)
        profiles = self._profile_cache[key]
        if args["profile"] and args["profile"] not in profiles:
            raise AnsibleActionFail("zhisuan.ops.judge: unknown GPU profile %r (known: %s)"
                                    % (args["profile"], ", ".join(sorted(profiles))))
        host = task_vars.get("inventory_hostname", "unknown")
        extra = dict(args["context"])
        if args["family"] == "baseline" and extra.get("bios_expected"):
            extra["bios_names"] = self._bios_names(extra.get("vendor"))
        if args["family"] == "xid":
            try:
                extra["xid_catalog"] = load_catalog(overrides=args["xid_catalog_overrides"] or None)
            except ValueError as exc:
                raise AnsibleActionFail("zhisuan.ops.judge: %s" % exc)
        ctx = Context(profiles=profiles, profile_name=args["profile"], expected=args["expected"],
                      thresholds=args["thresholds"], overrides=args["profile_overrides"], gpu_facts=args["gpu_facts"],
                      extra=extra)
        checks, summary, unreachable = judge_collected(args["family"], host, args["collected"], ctx)
        result.update(changed=False, checks=checks, summary=summary, host_unreachable=unreachable)
        return result

    @staticmethod
    def _bios_names(vendor):
        """Portable BIOS attribute names -> this vendor's names (data/bios_attributes.yml)."""
        path = os.path.join(os.path.dirname(__file__), "..", "..", "data", "bios_attributes.yml")
        try:
            with open(path) as handle:
                table = yaml.safe_load(handle)
        except (IOError, OSError, yaml.YAMLError) as exc:
            raise AnsibleActionFail("zhisuan.ops.judge: cannot read the BIOS attribute table %s: %s" % (path, exc))
        return bios_names(table, vendor)
