# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import json
import multiprocessing
import os

import yaml
from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import worst_status
from ansible_collections.zhisuan.ops.plugins.module_utils._judge.fleet import FleetError, judge_fleet, placement, shared_causes
from ansible_collections.zhisuan.ops.plugins.module_utils._remediate import history as remediation_history
from ansible_collections.zhisuan.ops.plugins.module_utils._remediate.plan import make_plan
from ansible_collections.zhisuan.ops.plugins.module_utils._remediate.policy import PolicyError, normalize
from ansible_collections.zhisuan.ops.plugins.plugin_utils._diagnosis import diagnose
from ansible_collections.zhisuan.ops.plugins.plugin_utils import _lease
from ansible_collections.zhisuan.ops.plugins.plugin_utils._hostvars import HostView, raw_host_vars
from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import host_inputs

SHIPPED_POLICY = os.path.join(os.path.dirname(__file__), "..", "..", "data", "remediation", "policy.yml")
# what a run keeps of a host (the results action reads the same)
_RUN_DATA = ("results_targeted", "results_checks", "results_host_facts", "results_unreachable", "ansible_facts")


class ActionModule(ActionBase):
    """Plan a remediation on the controller: results + policy + scheduler states -> plan. Reads only."""

    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("results", "hosts", "checks", "run_hosts", "run_id", "families", "unreachable",
                             "policy_file", "policy", "scheduler", "fleet", "approved", "batch_size", "only",
                             "history_dir", "cabling_plan", "fleet_thresholds", "lease_run_id"))

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        dummy, args = self.validate_argument_spec(argument_spec=dict(
            results=dict(type="path"),
            hosts=dict(type="dict"),
            checks=dict(type="dict"),
            run_hosts=dict(type="list", elements="str"),
            run_id=dict(type="str"),
            families=dict(type="list", elements="str"),
            unreachable=dict(type="list", elements="str", default=[]),
            policy_file=dict(type="path"),
            policy=dict(type="dict", default={}),
            scheduler=dict(type="dict", default={}),
            fleet=dict(type="int"),
            approved=dict(type="list", elements="str", default=[]),
            batch_size=dict(type="int", default=1),
            only=dict(type="list", elements="str"),
            history_dir=dict(type="path"),
            cabling_plan=dict(type="path"),
            fleet_thresholds=dict(type="dict", default={}),
            lease_run_id=dict(type="str"),
        ), mutually_exclusive=[("results", "hosts", "checks", "run_hosts")],
            required_one_of=[("results", "hosts", "checks", "run_hosts")])
        source = {"path": args["results"], "run_id": None, "kind": None, "started": None, "finished": None}
        if args["results"]:
            document = self._read_results(args["results"])
            hosts = document["hosts"]
            run = document.get("run") or {}
            source.update((key, run.get(key)) for key in ("id", "kind", "started", "finished"))
            source["run_id"] = source.pop("id")
        elif args["hosts"] is not None:
            hosts = args["hosts"]
        elif args["run_hosts"] is not None:
            hosts = self._run_hosts(args["run_hosts"], args["run_id"], task_vars)
        else:
            hosts = dict((name, {"checks": checks or []}) for name, checks in args["checks"].items())
        for name in args["unreachable"]:
            hosts[name] = {"status": "unreachable", "checks": [], "facts": {}}
        scheduler = args["scheduler"]
        if args["families"] is not None:
            hosts, scheduler = self._of_families(hosts, scheduler, args["families"])
        hosts = dict((name, self._with_diagnosis(host)) for name, host in hosts.items())
        policy_file = args["policy_file"] or SHIPPED_POLICY
        try:
            with open(policy_file) as handle:
                doc = yaml.safe_load(handle)
            policy = normalize(doc, args["policy"])
        except (IOError, OSError, yaml.YAMLError) as exc:
            raise AnsibleActionFail("zhisuan.ops.remediation_plan: cannot read the policy file %s: %s" % (policy_file, exc))
        except PolicyError as exc:
            raise AnsibleActionFail("zhisuan.ops.remediation_plan: %s: %s" % (policy_file, exc))
        records = []
        if args["history_dir"]:
            warnings = []
            records = remediation_history.read(os.path.join(args["history_dir"], remediation_history.FILE_NAME),
                                               warn=warnings.append)
            for warning in warnings:
                self._display.warning("zhisuan.ops.remediation_plan: history %s" % warning)
        where = placement(self._host_vars(hosts, task_vars), self._read_plan(args["cabling_plan"]))
        try:
            shared = shared_causes(hosts, where, args["fleet_thresholds"])
            fleet_checks = judge_fleet(hosts, where, args["fleet_thresholds"])
        except FleetError as exc:
            raise AnsibleActionFail("zhisuan.ops.remediation_plan: %s" % exc)

        def planned(leased=None):
            return make_plan(hosts, policy, scheduler=scheduler, fleet=args["fleet"] or len(hosts),
                             approved=args["approved"], batch_size=args["batch_size"], only=args["only"],
                             history=records, shared=shared, leased=leased)

        leases = None
        if args["lease_run_id"] and args["history_dir"] and not self._task.check_mode:
            plan = self._leased_plan(planned, planned(), args["history_dir"], args["lease_run_id"])
            # for the run's record callback, which releases them when the run stops before its record play
            leases = {"history_dir": os.path.abspath(args["history_dir"]), "run_id": args["lease_run_id"],
                      "nodes": list(plan["order"])}
        elif args["history_dir"]:
            # no leases of its own (an inspection, check mode): a node a running remediation holds is not stranded
            plan = planned(dict((name, lease) for name, lease in _lease.live(args["history_dir"]).items()
                                if lease["run_id"] != args["lease_run_id"]))
        else:
            plan = planned()
        result.update(changed=False, plan=plan, order=plan["order"], checks=fleet_checks + plan["checks"],
                      source=source, policy=policy, policy_file=os.path.abspath(policy_file), leases=leases)
        return result

    @staticmethod
    def _leased_plan(planned, plan, history_dir, run_id):
        """The plan once this run holds the lease of every node it acts on: a node another run holds is planned
        again as ``held`` (a slot it freed may let a deferred node in, whose lease is claimed in turn); the leases
        of nodes the final plan does not act on are released."""
        # the run's own process: ansible-playbook, the parent of the worker that runs this action
        pid = os.getppid() if multiprocessing.parent_process() is not None else os.getpid()
        held, claimed = {}, set()
        try:
            for dummy_round in range(len(plan["nodes"]) + 1):
                wanted = [name for name in plan["order"] if name not in claimed]
                if not wanted:
                    break
                got, refused = _lease.claim(history_dir, wanted, run_id, pid)
                claimed.update(got)
                if not refused:
                    break
                held.update(refused)
                plan = planned(held)
            extra = sorted(claimed - set(plan["order"]))
            if extra:
                _lease.release(history_dir, run_id, nodes=extra)
        except remediation_history.HistoryError as exc:
            raise AnsibleActionFail("zhisuan.ops.remediation_plan: %s" % exc)
        return plan

    @staticmethod
    def _of_families(hosts, scheduler, families):
        """Only the checks of ``families``; a host without any (not judged on them) is left out, and so is its
        scheduler state: nothing says whether it passes."""
        out = {}
        for name, host in hosts.items():
            if host.get("status") == "unreachable":
                out[name] = host
                continue
            checks = [c for c in host.get("checks") or [] if str(c.get("id", "")).split(".", 1)[0] in families]
            if checks:
                out[name] = {"checks": checks, "facts": {}}
        return out, dict((name, node) for name, node in scheduler.items() if name in out)

    def _run_hosts(self, names, run_id, task_vars):
        """The host records the current run keeps for ``names`` (as results.json will hold them)."""
        hostvars = (task_vars or {}).get("hostvars") or {}
        hosts = {}
        for name in names:
            if name not in hostvars:
                continue
            view = HostView.of_host(raw_host_vars(hostvars, name), self._templar, _RUN_DATA, errors=[])
            checks, facts, unreachable = host_inputs(view, run_id)
            hosts[name] = {"status": "unreachable", "checks": checks, "facts": {}} if unreachable else \
                {"checks": checks, "facts": dict((k, v) for k, v in facts.items() if k == "diagnosis")}
        return hosts

    @staticmethod
    def _host_vars(hosts, task_vars):
        """Where each node sits, from the inventory: zhisuan_rack and zhisuan_pdu of each host."""
        hostvars = (task_vars or {}).get("hostvars") or {}
        out = {}
        for name in hosts:
            if name in hostvars:
                variables = hostvars[name]
                out[name] = dict((key, variables.get(key)) for key in ("zhisuan_rack", "zhisuan_pdu"))
            else:
                out[name] = {}
        return out

    @staticmethod
    def _read_plan(path):
        if not path:
            return None
        try:
            with open(path) as handle:
                return yaml.safe_load(handle)
        except (IOError, OSError, yaml.YAMLError) as exc:
            raise AnsibleActionFail("zhisuan.ops.remediation_plan: cannot read the cabling plan %s: %s" % (path, exc))

    @staticmethod
    def _read_results(path):
        try:
            with open(path) as handle:
                document = json.load(handle)
        except (IOError, OSError, ValueError) as exc:
            raise AnsibleActionFail("zhisuan.ops.remediation_plan: cannot read results %s: %s" % (path, exc))
        if not isinstance(document, dict) or not isinstance(document.get("hosts"), dict):
            raise AnsibleActionFail("zhisuan.ops.remediation_plan: %s is not a zhisuan.ops results.json (no hosts)" % path)
        return document

    @staticmethod
    def _with_diagnosis(host):
        host = dict(host or {})
        if "status" not in host:
            host["status"] = worst_status(check["status"] for check in host.get("checks") or [])
        facts = dict(host.get("facts") or {})
        if not facts.get("diagnosis") and host.get("status") != "unreachable":
            facts["diagnosis"] = diagnose(host.get("checks") or [])
        host["facts"] = facts
        return host
