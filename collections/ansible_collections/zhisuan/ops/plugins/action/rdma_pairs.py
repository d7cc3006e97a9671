# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import yaml
from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.zhisuan.ops.plugins.module_utils._judge import rdma_pairs as rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._util import merged
from ansible_collections.zhisuan.ops.plugins.module_utils._net import schedule
from ansible_collections.zhisuan.ops.plugins.plugin_utils._profiles import load_profiles

PLANS = ("loopback", "full_mesh", "random", "topology", "repair")


def _side_key(result):
    return (result.get("round"), result.get("server"), result.get("client"))


def merge_sides(results_by_host):
    """Each host's rdma_pair results (both sides of every pair) -> one record per pair.

    The client's measurement is the pair's value (the server's when the client has none). A pair is ``ok`` when the
    side used is; otherwise ``timeout`` if a side timed out, else ``error``, with the failing sides' messages.
    """
    sides = {}
    order = []
    for host, results in results_by_host.items():
        for result in results or []:
            if not isinstance(result, dict) or result.get("status") in (None, "idle") or not result.get("server"):
                continue
            key = _side_key(result)
            if key not in sides:
                sides[key] = {}
                order.append(key)
            role = "client" if result.get("role") in ("client", "loopback") else "server"
            sides[key][role] = result
            if result.get("role") == "loopback" and isinstance(result.get("server_side"), dict):
                sides[key]["server"] = dict(result["server_side"], server=result["server"], client=result["client"])
    pairs = []
    for key in order:
        found = sides[key]
        chosen = found.get("client") if (found.get("client") or {}).get("status") == "ok" else None
        if chosen is None and (found.get("server") or {}).get("status") == "ok" and (found.get("server") or {}).get("value") is not None:
            chosen = found["server"]
        any_side = found.get("client") or found.get("server")
        record = {"server": key[1], "client": key[2], "round": key[0], "port": any_side.get("port")}
        if chosen is not None and chosen.get("value") is not None:
            record.update(status="ok", value=chosen["value"], message=None)
        else:
            failing = [side for side in (found.get("client"), found.get("server")) if side and side.get("status") != "ok"]
            status = "timeout" if any(side.get("status") == "timeout" for side in failing) else "error"
            messages = ["%s: %s" % ("client" if side is found.get("client") else "server", side.get("message") or side.get("status"))
                        for side in failing]
            record.update(status=status, value=None, message="; ".join(messages) or "no measurement")
        pairs.append(record)
    # round by round; within a round, in the order the sides were first seen
    pairs.sort(key=lambda pair: (pair["round"] is None, pair["round"] or 0))
    return pairs


class ActionModule(ActionBase):
    """RDMA pair tests on the controller: plan the rounds, or judge the pair matrix the rounds produced."""

    TRANSFERS_FILES = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        dummy, args = self.validate_argument_spec(argument_spec=dict(
            plan=dict(type="str", choices=list(PLANS)),
            analyze=dict(type="bool", default=False),
            nodes=dict(type="list", elements="str"),
            seed=dict(type="raw"),
            cabling_plan=dict(type="raw"),
            base_port=dict(type="int", default=schedule.DEFAULT_BASE_PORT),
            suspects=dict(type="list", elements="str", default=[]),
            good=dict(type="list", elements="str", default=[]),
            results=dict(type="list", elements="dict"),
            results_var=dict(type="str", default="rdma_pair_results"),
            floor=dict(type="raw"),
            ceiling=dict(type="raw"),
            unit=dict(type="str", default="Gb/s"),
            test=dict(type="str", default="ib_write_bw"),
            schedule=dict(type="str"),
            rounds=dict(type="int"),
            thresholds=dict(type="dict", default={}),
            address_var=dict(type="str", default="zhisuan_fabric_address"),
            profile=dict(type="str"),
            profiles_dir=dict(type="path"),
            profile_overrides=dict(type="dict", default={}),
        ), mutually_exclusive=[("plan", "analyze")], required_one_of=[("plan", "analyze")])
        nodes = args["nodes"] if args["nodes"] is not None else list(task_vars.get("ansible_play_hosts") or [])
        try:
            if args["plan"]:
                result.update(self._plan(args, nodes))
                result["addresses"] = self._addresses(nodes, args["address_var"], task_vars)
            else:
                result.update(self._analyze(args, nodes, task_vars))
        except ValueError as exc:
            raise AnsibleActionFail("zhisuan.ops.rdma_pairs: %s" % exc)
        result["changed"] = False
        return result

    def _cabling(self, value):
        if isinstance(value, str):
            try:
                with open(value) as handle:
                    return yaml.safe_load(handle) or {}
            except (IOError, OSError, yaml.YAMLError) as exc:
                raise ValueError("cannot read the cabling plan %s: %s" % (value, exc))
        return value or {}

    @staticmethod
    def _addresses(nodes, address_var, task_vars):
        """Where each node's server is reached: its ``zhisuan_fabric_address``, else ``ansible_host``, else
        127.0.0.1 for a node reached with the local connection (the local lab), else its name."""
        hostvars = task_vars.get("hostvars") or {}
        out = {}
        for node in nodes:
            hv = hostvars.get(node) or {}
            address = hv.get(address_var) or hv.get("ansible_host")
            if not address and hv.get("ansible_connection") == "local":
                address = "127.0.0.1"
            out[node] = str(address or node)
        return out

    @staticmethod
    def _floor(args):
        """The bandwidth floor: given, else the profile's ``ib_write_bw_floor_gbps`` (site overrides merged)."""
        if args["floor"] is not None or args["ceiling"] is not None:
            return args["floor"]
        if (args.get("test") or "").endswith("_lat"):
            raise ValueError("a latency test needs a ceiling: set zhisuan_thresholds.rdma.ceiling_us")
        if not args["profile"]:
            raise ValueError("no floor: set zhisuan_thresholds.rdma.floor_gbps (or ceiling_us for a latency test) "
                             "or name the GPU profile")
        profiles = load_profiles(args["profiles_dir"])
        if args["profile"] not in profiles:
            raise ValueError("unknown GPU profile %r (known: %s)" % (args["profile"], ", ".join(sorted(profiles))))
        profile = merged(profiles[args["profile"]], args["profile_overrides"])
        if profile.get("ib_write_bw_floor_gbps") is None:
            raise ValueError("profile %s has no ib_write_bw_floor_gbps; set zhisuan_thresholds.rdma.floor_gbps"
                             % args["profile"])
        return profile["ib_write_bw_floor_gbps"]

    @staticmethod
    def _unjudged(args, nodes, pairs, reason):
        check = make_check("rdma.pairs.floor", "cluster", "error", component=args["test"] or "perftest",
                           observed="no floor", expected="a bandwidth floor or latency ceiling",
                           message="The %d measured pairs were not judged: %s" % (len(pairs), reason), remedy="investigate")
        data_pairs = [{"a": pair.get("server"), "b": pair.get("client"), "round": pair.get("round"),
                       "value": pair.get("value"), "status": "skip"} for pair in pairs]
        return {"host_checks": {}, "cluster_checks": [check], "suspects": [], "good": [], "slow_nodes": [],
                "slow_links": [], "pairs": pairs, "summary": {},
                "cluster_data": {"fabric": {"rdma_pairs": {
                    "test": args["test"], "unit": args["unit"], "floor": None, "schedule": args["schedule"],
                    "rounds": args["rounds"], "nodes": list(nodes), "pairs": data_pairs}}}}

    def _plan(self, args, nodes):
        if args["plan"] == "repair":
            rounds = schedule.repair_round(args["suspects"], args["good"], seed=args["seed"])
        else:
            rounds = schedule.plan_rounds(args["plan"], nodes, seed=args["seed"], cabling_plan=self._cabling(args["cabling_plan"]))
        rounds = schedule.assign_ports(rounds, args["base_port"])
        return {"rounds": rounds, "round_count": len(rounds), "pair_count": sum(len(pairs) for pairs in rounds),
                "nodes": nodes, "schedule": args["plan"]}

    def _analyze(self, args, nodes, task_vars):
        if args["results"] is not None:
            by_host = {"given": args["results"]}
        else:
            hostvars = task_vars.get("hostvars") or {}
            by_host = dict((node, (hostvars.get(node) or {}).get(args["results_var"]) or []) for node in nodes)
        pairs = merge_sides(by_host)
        try:
            floor = self._floor(args)
        except ValueError as exc:
            # the pairs ran: keep the matrix, say what is missing, and let the run go on for every other family
            return self._unjudged(args, nodes, pairs, str(exc))
        analysis = rules.analyze(pairs, floor=floor, ceiling=args["ceiling"], unit=args["unit"], test=args["test"],
                                 schedule=args["schedule"], rounds=args["rounds"], thresholds=args["thresholds"], nodes=nodes)
        analysis["summary"] = rules.summarize(analysis)
        analysis["pairs"] = pairs
        return analysis
