# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import shlex
import time

from ansible import __version__ as ansible_version
from ansible.errors import AnsibleActionFail, AnsibleConnectionFailure
from ansible.plugins.action import ActionBase

from ansible_collections.zhisuan.ops.plugins.module_utils._family import table
from ansible_collections.zhisuan.ops.plugins.plugin_utils._check_vars import COLLECT, JUDGE, family_options, node_selection
from ansible_collections.zhisuan.ops.plugins.plugin_utils._hostvars import UNDEFINED, HostView
from ansible_collections.zhisuan.ops.plugins.plugin_utils._judging import FAMILIES, judge_family, warm_caches
from ansible_collections.zhisuan.ops.plugins.plugin_utils._preflight import NODE_PYTHON_PROBE, node_python_problem
from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import (
    NODE_RECORD_FACT,
    encode_node_record,
    failed_task_check,
    node_record,
)
from ansible_collections.zhisuan.ops.plugins.plugin_utils._saved_outputs import node_folder, saved_options

# part -> what its judgement is called: the names the per-family roles gave their tasks, so that a failure reads as
# it did there (the family table's judge steps)
NODE_FAMILIES = dict((part.name, part.judge_step) for part in table.NODE_PARTS)
# the GPU facts name GPUs for the others, so gpu is collected (zhisuan.ops.node_collect) and judged first
ORDER = table.NODE_ORDER
JUDGE_OPTIONS = table.JUDGE_OPTIONS

# the profiles and the Xid catalog, read once in the main process and inherited by every forked worker
warm_caches()

ARGUMENT_SPEC = dict(
    families=dict(type="list", elements="str", choices=list(ORDER)),
    collect=dict(type="dict", default={}),
    judge=dict(type="dict", default={}),
    keep=dict(type="list", elements="str"),
    gpu_facts=dict(type="dict"),
    record=dict(type="str"),
    variables=dict(type="bool", default=True),
    saved_outputs=dict(type="path"),
)


class _Offline(object):
    """What the node parts' collect functions use of a module, for a node judged from its saved outputs on the
    controller: the options, the warnings, no check mode (nothing runs; a saved file is only read)."""

    check_mode = False

    def __init__(self, families, options):
        self.params = {"families": families, "options": options}
        self.warnings = []

    def warn(self, message):
        self.warnings.append(message)


def collect_saved(families, options):
    """The node_collect answer for parts read from saved files on the controller, by the node's own readers."""
    from ansible_collections.zhisuan.ops.plugins.module_utils._node_collect import collect_families
    module = _Offline(families, options)
    answer = collect_families(module)
    answer["warnings"] = module.warnings
    return answer


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
        view = HostView(task_vars, self._templar.template)
        if args["families"] is None:
            if not args["variables"]:
                raise AnsibleActionFail("zhisuan.ops.check: families is required when variables is false")
            # the check_node role's selection, from its variables
            try:
                selected, kept, record = node_selection(view)
            except ValueError as exc:
                raise AnsibleActionFail("zhisuan.ops.check: %s" % exc)
            args["families"] = selected
            args["keep"] = kept if args["keep"] is None else args["keep"]
            args["record"] = args["record"] or record
        families = [name for name in ORDER if name in args["families"]]
        keep = set(families if args["keep"] is None else args["keep"])
        checks, summary, unreachable = [], {}, False
        gpu_facts = args["gpu_facts"] or None
        facts = {}
        timing = {}  # seconds each family took on this node (collect + judge): the JUnit testcases' time
        collected_all, node_timing = {}, {}
        if args["variables"]:
            # the options the task left out, from the node's variables: one pass in Python, not a Jinja expression per
            # option compiled in every worker
            collect = family_options(COLLECT, families, args["collect"], view)
            judge = family_options(JUDGE, families, args["judge"], view)
        else:
            collect = dict((name, dict((key, value) for key, value in (args["collect"].get(name) or {}).items()
                                       if value is not None)) for name in families)
            judge = args["judge"]
        saved = args["saved_outputs"]
        if saved is None and args["variables"]:
            found = view.lookup("zhisuan_saved_outputs")
            saved = found if found is not UNDEFINED and found else None
        saved_facts = None
        if saved:
            # judged offline: the files a site sent, read on the controller by the node's readers (no connection)
            try:
                folder = node_folder(saved, host)
            except ValueError as exc:
                raise AnsibleActionFail("zhisuan.ops.check: %s" % exc)
            read, collect, used, missing = saved_options(folder, families, collect)
            saved_facts = {"saved_outputs": folder, "saved_outputs_read": used}
            if missing:
                saved_facts["saved_outputs_missing"] = missing
            families = [name for name in ORDER if name in read]
            answer = collect_saved(families, collect) if families else {"collected": {}, "timing": {}}
            for message in answer.get("warnings") or []:
                result.setdefault("warnings", []).append(message)
            collected_all = answer["collected"]
            node_timing = answer.get("timing") or {}
        elif families:
            try:
                # one round trip: every family's collect function runs in one module process on the node
                answer = self._execute_module(module_name="zhisuan.ops.node_collect",
                                              module_args=dict(families=families, options=collect),
                                              task_vars=task_vars)
            except AnsibleConnectionFailure as exc:
                answer = {"unreachable": True, "msg": "%s: %s" % (host, exc)}
            for key in ("warnings", "deprecations"):
                if answer.get(key):
                    result.setdefault(key, []).extend(answer[key])
            if answer.get("unreachable"):
                # the connection's own words (Connection refused, the port, the timeout) kept in the record
                unreachable = str(answer.get("msg") or "") or True
                result["msg"] = answer.get("msg")
            elif answer.get("failed") or not isinstance(answer.get("collected"), dict):
                # the module itself did not run (no Python on the node, a bug): every family's error check
                kept = ("msg", "rc", "stdout", "stderr", "module_stderr", "module_stdout", "exception")
                failure = dict((key, answer[key]) for key in kept if key in answer)
                failure["failed"] = True
                too_old = self._node_python_too_old(task_vars, answer)
                if too_old:
                    failure.update(msg=too_old, error_kind="unsupported python")
                collected_all = dict((name, dict(failure)) for name in families)
            else:
                collected_all = answer["collected"]
                node_timing = answer.get("timing") or {}
        for name in families if not unreachable else ():
            started = time.monotonic()
            judge_step = NODE_FAMILIES[name]
            nothing = {"failed": True, "msg": "zhisuan.ops.node_collect returned nothing for %s" % name}
            collected = dict(collected_all.get(name) or nothing)
            collected.pop("invocation", None)
            part = table.PART_BY_NAME[name]
            if part.gpu_facts:
                gpu_facts = collected.get(part.facts_key) or None
            if part.host_fact:
                facts[part.host_fact] = collected.get(part.facts_key) or {}
            if name not in keep:
                continue
            options = dict((key, value) for key, value in (judge.get(name) or {}).items()
                           if key in JUDGE_OPTIONS and value is not None)
            try:
                family_checks, family_summary, family_unreachable = judge_family(
                    name, host, collected, gpu_facts=gpu_facts, **options)
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
            seconds = float(node_timing.get(name) or 0.0) + time.monotonic() - started
            timing[family] = round(timing.get(family, 0.0) + seconds, 3)
        if saved_facts is not None:
            summary.update(saved_facts)
        result.update(changed=False, summary=summary, host_unreachable=bool(unreachable), ansible_facts=facts)
        if args["record"]:
            # kept in the record only: every result crosses from the worker to the controller's one main process,
            # so a node's hundreds of checks travel once, not twice
            facts[NODE_RECORD_FACT] = encode_node_record(
                self._record(task_vars, args["record"], checks, summary, unreachable, timing))
            result["checks_kept"] = len(checks)
        else:
            result["checks"] = checks
        return result

    def _node_python_too_old(self, task_vars, answer):
        """When the module could not run: the node's Python asked its version (one command, only then); the
        message when it is older than this ansible-core runs modules with, else None."""
        facts = answer.get("ansible_facts") or {}
        interpreter = (task_vars.get("ansible_python_interpreter")
                       or facts.get("discovered_interpreter_python")
                       or (task_vars.get("ansible_facts") or {}).get("discovered_interpreter_python") or "python3")
        try:
            interpreter = str(self._templar.template(interpreter))
            probe = self._low_level_execute_command("%s -c %s" % (shlex.quote(interpreter), shlex.quote(NODE_PYTHON_PROBE)))
        except Exception:  # pylint: disable=broad-except
            # the probe is only a better message: the module's own failure stands when it cannot run
            return None
        if probe.get("rc") != 0:
            return None
        return node_python_problem(probe.get("stdout"), ansible_version, interpreter)

    @staticmethod
    def _record(task_vars, run, checks, summary, unreachable, timing):
        """The node's record of this run: what an earlier check task of the same run kept, and this task's."""
        kept = node_record((task_vars.get("ansible_facts") or {}).get(NODE_RECORD_FACT))
        if kept is None or kept.get("run") != run:
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
            "unreachable": kept.get("unreachable") or unreachable,
        }
