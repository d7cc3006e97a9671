# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import time

from ansible.errors import AnsibleConnectionFailure
from ansible.plugins.action import ActionBase

from ansible_collections.zhisuan.ops.plugins.action.judge import ActionModule as JudgeAction
from ansible_collections.zhisuan.ops.plugins.plugin_utils._judging import FAMILIES, judge_family
from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import NODE_RECORD_FACT, failed_task_check

# family -> (collect module, what the step is called, what its judgement is called): the names the per-family roles
# gave their tasks, so that a failure reads as it did there.
NODE_FAMILIES = {
    "gpu": ("zhisuan.ops.gpu_info", "Collect GPU facts (one nvidia-smi round trip)", "Judge GPU facts on the controller"),
    "gpu_bandwidth": ("zhisuan.ops.gpu_bandwidth", "Measure host and peer bandwidth with nvbandwidth (check_gpu_bandwidth)",
                      "Judge the bandwidth against the profile's floors"),
    "xid": ("zhisuan.ops.xid_info", "Read XID events from the kernel log", "Judge the XID events"),
    "dcgm": ("zhisuan.ops.dcgm_diag", "Run dcgmi diag", "Judge the diagnostics"),
    "dcgm_health": ("zhisuan.ops.dcgm_health", "Run dcgmi health", "Judge the health watches"),
    "tuning": ("zhisuan.ops.host_info", "Read the host's tuning and software versions", "Judge the tuning"),
}
# the GPU facts name GPUs for the others, so gpu is collected first
ORDER = ("gpu", "gpu_bandwidth", "xid", "dcgm", "dcgm_health", "tuning")
JUDGE_OPTIONS = ("profile", "profile_overrides", "profiles_dir", "expected", "thresholds", "xid_catalog_overrides")

ARGUMENT_SPEC = dict(
    families=dict(type="list", elements="str", required=True, choices=list(ORDER)),
    collect=dict(type="dict", default={}),
    judge=dict(type="dict", default={}),
    keep=dict(type="list", elements="str"),
    gpu_facts=dict(type="dict"),
    record=dict(type="str"),
)


class ActionModule(ActionBase):
    """Collect the node-side families on the node and judge them here, in one task per node."""

    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(ARGUMENT_SPEC)
    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        dummy, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        host = task_vars.get("inventory_hostname", "unknown")
        families = [name for name in ORDER if name in args["families"]]
        keep = set(families if args["keep"] is None else args["keep"])
        checks, summary, unreachable = [], {}, False
        gpu_facts = args["gpu_facts"] or None
        facts = {}
        timing = {}  # seconds each family took on this node (collect + judge): the JUnit testcases' time
        for name in families:
            started = time.monotonic()
            module, step, judge_step = NODE_FAMILIES[name]
            module_args = dict((key, value) for key, value in (args["collect"].get(name) or {}).items()
                               if value is not None)
            try:
                collected = self._execute_module(module_name=module, module_args=module_args, task_vars=task_vars)
            except AnsibleConnectionFailure as exc:
                # the rest of this node's families cannot run either; the node is recorded as unreachable
                unreachable = True
                result["msg"] = "%s: %s" % (host, exc)
                break
            collected.pop("invocation", None)
            for key in ("warnings", "deprecations"):
                if collected.get(key):
                    result.setdefault(key, []).extend(collected[key])
            if name == "gpu":
                gpu_facts = collected.get("gpu") or None
                facts["check_gpu_facts"] = collected.get("gpu") or {}
            elif name == "tuning":
                facts["check_tuning_host"] = collected.get("host") or {}
            if collected.get("unreachable"):
                unreachable = True
                break
            if name not in keep:
                continue
            options = dict((key, value) for key, value in (args["judge"].get(name) or {}).items()
                           if key in JUDGE_OPTIONS and value is not None)
            try:
                family_checks, family_summary, family_unreachable = judge_family(
                    name, host, collected, gpu_facts=gpu_facts, bios_names=JudgeAction._bios_names, **options)
            except ValueError as exc:
                # what the per-family block's rescue made of a judge that failed: the family's error check
                family_checks, family_summary, family_unreachable = [failed_task_check(
                    host, judge_step, "zhisuan.ops.judge", {"msg": "zhisuan.ops.judge: %s" % exc},
                    family=FAMILIES[name].name)], {}, False
            checks.extend(family_checks)
            if family_summary:
                summary[name] = family_summary
            unreachable = unreachable or family_unreachable
            family = FAMILIES[name].name
            timing[family] = round(timing.get(family, 0.0) + time.monotonic() - started, 3)
        if args["record"]:
            facts[NODE_RECORD_FACT] = self._record(task_vars, args["record"], checks, summary, unreachable, timing)
        result.update(changed=False, checks=checks, summary=summary, host_unreachable=unreachable, ansible_facts=facts)
        return result

    @staticmethod
    def _record(task_vars, run, checks, summary, unreachable, timing):
        """The node's record of this run: what an earlier check task of the same run kept, and this task's."""
        kept = (task_vars.get("ansible_facts") or {}).get(NODE_RECORD_FACT)
        if not isinstance(kept, dict) or kept.get("run") != run:
            kept = {"run": run, "checks": [], "facts": {}, "unreachable": False}
        facts = dict(kept.get("facts") or {}, **summary)
        total = dict(facts.get("timing") or {})
        for family, seconds in timing.items():
            total[family] = round(total.get(family, 0.0) + seconds, 3)
        facts["timing"] = total
        return {
            "run": run,
            "checks": list(kept.get("checks") or []) + checks,
            "facts": facts,
            "unreachable": bool(kept.get("unreachable")) or unreachable,
        }
