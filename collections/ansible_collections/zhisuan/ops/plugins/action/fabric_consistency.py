# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import yaml
from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._cabling import cabling_map
from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ZhisuanError
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._fabric import judge_fabric_consistency
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._ibdiagnet import judge_ibdiagnet
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._ib_cabling import (ib_cabling_map, judge_ib_cabling,
                                                                                     judge_ib_switch_links)
from ansible_collections.zhisuan.ops.plugins.module_utils._net import ibdiagnet, ibnetdiscover
from ansible_collections.zhisuan.ops.plugins.module_utils._net.iblinkinfo import fabric_facts


def load_plan(path):
    """The cabling plan YAML (``{}`` for an empty path). Raises AnsibleActionFail naming the file."""
    if not path:
        return {}
    try:
        with open(path) as handle:
            plan = yaml.safe_load(handle) or {}
    except (IOError, OSError, yaml.YAMLError) as exc:
        raise AnsibleActionFail("zhisuan.ops.fabric_consistency: cannot read the cabling plan %s: %s" % (path, exc))
    if not isinstance(plan, dict) or not isinstance(plan.get("links", []), list):
        raise AnsibleActionFail("zhisuan.ops.fabric_consistency: the cabling plan %s must be a mapping with a 'links' list"
                                % path)
    return plan


def load_fabric_view(path, tool="iblinkinfo"):
    """The ``ib_fabric`` facts from an ``iblinkinfo`` (or, with ``tool="ibnetdiscover"``, an ``ibnetdiscover``,
    full or ``-p``) output file on the controller (a file a customer sent); read errors are kept."""
    reader = ibnetdiscover.fabric_facts if tool == "ibnetdiscover" else fabric_facts
    try:
        with open(path) as handle:
            text = handle.read()
    except (IOError, OSError) as exc:
        return {"tool": tool, "links": [], "error": "%s: cannot read %s: %s" % (tool, path, exc)}
    try:
        facts = reader(text)
    except ZhisuanError as exc:
        return {"links": [], "error": "%s (file %s)" % (exc.message, path)}
    facts["error"] = None
    return facts


def load_ibdiagnet(path):
    """``(summary, error)`` of an ``ibdiagnet`` console output file on the controller (a file a customer sent)."""
    try:
        with open(path, "rb") as handle:
            text = handle.read().decode("utf-8", "replace")
    except (IOError, OSError) as exc:
        return None, "cannot read %s: %s" % (path, exc.strerror or exc)
    try:
        return ibdiagnet.parse_ibdiagnet(text), None
    except ZhisuanError as exc:
        return None, "%s (file %s)" % (exc.message, path)


def fabric_view(facts):
    """The first subnet view (``ib_subnet``, ibnetdiscover) found in the hosts' net facts, else the first
    ``ib_fabric`` (iblinkinfo) (the view is global: one node collects it), or None."""
    for key in ("ib_subnet", "ib_fabric"):
        for host in sorted(facts):
            view = facts[host].get(key)
            if isinstance(view, dict):
                return view
    return None


class ActionModule(ActionBase):
    """Fabric consistency across the play's hosts, on the controller: reads each host's net facts from hostvars."""

    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("hosts", "facts_var", "plan", "iblinkinfo", "ibnetdiscover", "ibdiagnet"))

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        dummy, args = self.validate_argument_spec(argument_spec=dict(
            hosts=dict(type="list", elements="str"),
            facts_var=dict(type="str", default="check_net_facts"),
            plan=dict(type="path"),
            iblinkinfo=dict(type="path"),
            ibnetdiscover=dict(type="path"),
            ibdiagnet=dict(type="path"),
        ))
        task_vars = task_vars or {}
        hosts = args["hosts"] if args["hosts"] is not None else task_vars.get("ansible_play_hosts_all") or []
        hostvars = task_vars.get("hostvars") or {}
        facts = {}
        for host in hosts:
            host_vars = hostvars.get(host) or {}
            value = host_vars.get(args["facts_var"]) if hasattr(host_vars, "get") else None
            facts[host] = dict(value) if isinstance(value, dict) else {}
        plan = load_plan(args["plan"])
        cluster_checks, host_checks = judge_fabric_consistency(facts, plan)
        data = {"fabric": {"cabling": cabling_map(facts, plan)}} if plan.get("links") else {}
        if args["ibnetdiscover"]:
            view = load_fabric_view(args["ibnetdiscover"], tool="ibnetdiscover")
        elif args["iblinkinfo"]:
            view = load_fabric_view(args["iblinkinfo"])
        else:
            view = fabric_view(facts)
        for host, checks in sorted(judge_ib_cabling(view, plan).items()):
            host_checks.setdefault(host, []).extend(checks)
        cluster_checks.extend(judge_ib_switch_links(view, plan))
        if args["ibdiagnet"]:
            summary, error = load_ibdiagnet(args["ibdiagnet"])
            cluster_checks.extend(judge_ibdiagnet(summary, error, source=args["ibdiagnet"]))
            for warning in (summary or {}).get("warnings") or []:
                result.setdefault("warnings", []).append("ibdiagnet %s: %s" % (args["ibdiagnet"], warning))
        if view is not None and plan.get("links"):
            data["fabric"]["cabling"]["links"].extend(ib_cabling_map(view, plan))
        result.update(changed=False, cluster_checks=cluster_checks, host_checks=host_checks, cluster_data=data)
        return result
