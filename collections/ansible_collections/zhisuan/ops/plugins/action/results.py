# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import datetime
import os

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase
from ansible.release import __version__ as ansible_version

import yaml

from ansible_collections.zhisuan.ops.plugins.module_utils._judge.baseline import judge_fleet_baseline
from ansible_collections.zhisuan.ops.plugins.module_utils._judge.fleet import FleetError, judge_fleet, placement
from ansible_collections.zhisuan.ops.plugins.plugin_utils._assets import (
    COMPONENT_COLUMNS,
    asset_rows,
    component_rows,
    serial_duplicate_check,
    to_csv,
)
from ansible_collections.zhisuan.ops.plugins.plugin_utils._diagnosis import diagnose
from ansible_collections.zhisuan.ops.plugins.plugin_utils._hostvars import HostView, raw_host_vars
from ansible_collections.zhisuan.ops.plugins.plugin_utils._run_dir import RunDirError, claim_run_dir
from ansible_collections.zhisuan.ops.plugins.plugin_utils._run_summary import results_stats
from ansible_collections.zhisuan.ops.plugins.plugin_utils._site_history import (
    default_root,
    legacy_warning,
    run_history_dir,
    site_key,
)
from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import (
    atomic_write,
    build_results,
    collection_version,
    host_inputs,
    host_record,
    site_of,
    summary_lines,
    validate,
    write_results,
)


def _fleet_baseline(hosts):
    """Drift checks per server model: nodes of one model must agree; different models may not (a Dell BMC and a
    DGX BMC never run one firmware)."""
    groups = {}
    for name, record in hosts.items():
        if record["status"] == "unreachable":
            continue
        model = ((record["facts"].get("bmc") or {}).get("model")) or "unknown model"
        groups.setdefault(model, {})[name] = (record["facts"].get("baseline") or {}).get("versions") or {}
    checks = []
    for model in sorted(groups):
        for check in judge_fleet_baseline(groups[model]):
            if len(groups) > 1:
                check["component"] = "%s: %s" % (model, check["component"])
                check["message"] = "%s nodes: %s" % (model, check["message"])
            checks.append(check)
    return checks


def _shared_components(hosts, host_vars, plan_path, thresholds, display):
    """The fleet.shared.<kind>.<name> fail checks of the run (docs/fleet.md): only the components found, so a run
    with nothing to localise keeps its cluster checks as they were."""
    plan = None
    if plan_path:
        try:
            with open(plan_path) as handle:
                plan = yaml.safe_load(handle)
        except (IOError, OSError, yaml.YAMLError) as exc:
            display.warning("zhisuan.ops.results: cannot read the cabling plan %s for the shared-component checks: %s"
                            % (plan_path, exc))
    try:
        checks = judge_fleet(hosts, placement(host_vars, plan), thresholds)
    except FleetError as exc:
        display.warning("zhisuan.ops.results: %s" % exc)
        return []
    return [check for check in checks if check["status"] == "fail"]


# what the run kept for each host (facts its own tasks wrote, no template in them): read as it is
_RUN_DATA = ("results_targeted", "results_checks", "results_host_facts", "results_unreachable", "ansible_facts")


class ActionModule(ActionBase):
    """Gather every targeted host's checks from hostvars and write results.json (run once, on the controller)."""

    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("run_id", "kind", "started", "playbook", "dest", "latest_link", "cluster_checks",
                             "families", "diagnose", "fleet_baseline", "assets", "cluster_data", "claim", "out_root",
                             "site_name", "inventory_dir", "project_dir", "history_dir"))

    def _claim(self, result):
        """claim=true: the run's id and folder, created at the run's start (plugin_utils/_run_dir.py), and its history
        folder: history_dir (zhisuan_history_dir) when given, else its site's under <out_root>/../history
        (plugin_utils/_site_history.py)."""
        dummy, args = self.validate_argument_spec(argument_spec=dict(
            claim=dict(type="bool", required=True),
            kind=dict(type="str", required=True,
                      choices=["delivery", "burnin", "acceptance", "diagnose", "remediate", "inspect"]),
            run_id=dict(type="str"),
            dest=dict(type="path"),
            out_root=dict(type="path", required=True),
            # zhisuan_site_name as the inventory gives it (run.site's rule: text, else not a name)
            site_name=dict(type="raw"),
            inventory_dir=dict(type="str"),
            project_dir=dict(type="path"),
            history_dir=dict(type="path"),
        ))
        try:
            run_id, dest = claim_run_dir(args["out_root"], args["kind"], run_id=args["run_id"] or None,
                                         dest=args["dest"] or None)
        except RunDirError as exc:
            raise AnsibleActionFail("zhisuan.ops.results: %s" % exc)
        key = site_key(args["site_name"], args["inventory_dir"], args["project_dir"])
        root = default_root(args["out_root"])
        history_dir = run_history_dir(root, key, override=args["history_dir"])
        warning = None if args["history_dir"] else legacy_warning(root, history_dir)
        if warning:
            result["warnings"] = result.get("warnings", []) + [warning]
        result.update(changed=True, run_id=run_id, dest=os.path.abspath(dest), site_key=key, history_dir=history_dir)
        return result

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        if self._task.args.get("claim"):
            return self._claim(result)
        dummy, args = self.validate_argument_spec(argument_spec=dict(
            run_id=dict(type="str", required=True),
            kind=dict(type="str", required=True,
                      choices=["delivery", "burnin", "acceptance", "diagnose", "remediate", "inspect"]),
            started=dict(type="str", required=True),
            playbook=dict(type="str", default=""),
            dest=dict(type="path", required=True),
            latest_link=dict(type="path"),
            cluster_checks=dict(type="list", elements="dict", default=[]),
            families=dict(type="list", elements="str", default=[]),
            diagnose=dict(type="bool", default=False),
            fleet_baseline=dict(type="bool", default=False),
            assets=dict(type="bool", default=False),
            cluster_data=dict(type="dict", default={}),
            claim=dict(type="bool", default=False),
            out_root=dict(type="path"),
        ))
        hostvars = task_vars["hostvars"]
        hosts = {}
        asset_vars = {}
        cabling_plan = fleet_thresholds = None
        for name in sorted(hostvars.keys()):
            unreadable = []
            host_vars = HostView.of_host(raw_host_vars(hostvars, name), self._templar, _RUN_DATA, errors=unreadable)
            if not host_vars.get("results_targeted"):
                continue
            asset_vars[name] = dict((key, host_vars.get(key)) for key in ("zhisuan_rack", "zhisuan_u", "bmc_address",
                                                                          "zhisuan_pdu"))
            cabling_plan = cabling_plan or host_vars.get("zhisuan_cabling_plan")
            fleet_thresholds = fleet_thresholds or (host_vars.get("zhisuan_thresholds") or {}).get("fleet")
            checks, facts, unreachable = host_inputs(host_vars, args["run_id"])
            hosts[name] = host_record(name, checks, facts=facts, unreachable=unreachable)
            location = dict((key, host_vars.get("zhisuan_" + key)) for key in ("rack", "u")
                            if host_vars.get("zhisuan_" + key) is not None)
            if location:
                hosts[name]["facts"]["location"] = location
            if args["diagnose"] and hosts[name]["status"] != "unreachable":
                hosts[name]["facts"]["diagnosis"] = diagnose(hosts[name]["checks"])
            for key, message in unreadable:
                # the node's preflight already made it an error check; the record goes on without the value
                self._display.warning("zhisuan.ops.results: %s: %s cannot be read, left out of the record: %s"
                                      % (name, key, message))
        finished = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()
        run = {
            "id": args["run_id"],
            "kind": args["kind"],
            "started": args["started"],
            "finished": finished,
            "playbook": args["playbook"],
            "collection_version": collection_version(),
            "ansible_version": ansible_version,
            "hosts_total": len(hosts),
            "families": args["families"],
        }
        # run.site: the site's name, service level and contacts the results role's start kept (inventory)
        site, problems = site_of((hostvars["localhost"] if "localhost" in hostvars else {}).get("results_run_site"))
        for problem in problems:
            self._display.warning("zhisuan.ops.results: run.site: %s" % problem)
        if site:
            run["site"] = site
        # run.site_key: whose history the run is kept in and compared with (the results role's start chose it)
        key = (hostvars["localhost"] if "localhost" in hostvars else {}).get("results_run_site_key")
        if key:
            run["site_key"] = str(key)
        cluster_checks = list(args["cluster_checks"])
        if args["fleet_baseline"]:
            cluster_checks += _fleet_baseline(hosts)
        cluster_checks += _shared_components(hosts, asset_vars, cabling_plan, fleet_thresholds, self._display)
        if args["assets"]:
            # the asset list's own check: a serial number more than one node reports (docs/results.md)
            cluster_checks.append(serial_duplicate_check(hosts))
        document = build_results(run, hosts, cluster_checks, cluster_data=args["cluster_data"])
        problems = validate(document)
        if problems:
            raise AnsibleActionFail("zhisuan.ops.results: the results document does not match its schema: %s"
                                    % "; ".join(problems[:5]))
        try:
            path = write_results(document, args["dest"], args["latest_link"])
            if args["assets"]:
                rows = asset_rows(document, asset_vars)
                atomic_write(os.path.join(args["dest"], "assets.csv"), to_csv(rows))
                atomic_write(os.path.join(args["dest"], "assets-components.csv"),
                             to_csv(component_rows(document, [row["node"] for row in rows]), COMPONENT_COLUMNS))
        except OSError as exc:
            # a full disk or a read-only folder: one line naming the file, no traceback
            raise AnsibleActionFail("zhisuan.ops.results: cannot write %s: %s"
                                    % (exc.filename or args["dest"], exc.strerror or exc))
        # for the zhisuan.ops.run_summary callback (plugin_utils/_run_summary.py)
        result["ansible_stats"] = results_stats(path)
        result.update(changed=True, path=path, dest=args["dest"], summary=document["summary"],
                      lines=summary_lines(document))
        return result
