# SPDX-License-Identifier: GPL-3.0-or-later
"""The remedies of issue 24's checks planned by the shipped remediation policy (what remediate.yml --check plans):
a GPU out of the NVLink fabric and Xid 64 alone are automatic GPU resets, a route-unhealthy fabric waits for approval
of a reboot, a row-remap failure and a downed IB link are tickets (the node stays drained), a GPU hotter than its
peers is only a warning and gets no plan entry."""

from __future__ import annotations

import os

import yaml

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.module_utils._remediate.plan import make_plan
from ansible_collections.zhisuan.ops.plugins.module_utils._remediate.policy import normalize
from ansible_collections.zhisuan.ops.plugins.plugin_utils._diagnosis import diagnose

SHIPPED = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "collections", "ansible_collections", "zhisuan",
                       "ops", "data", "remediation", "policy.yml")


def _host(name, check_id, status, remedy):
    records = [make_check(check_id, name, status, component="GPU 5", message=check_id, remedy=remedy)]
    return {"status": status, "checks": records, "facts": {"diagnosis": diagnose(records)}}


def test_issue_24_remedies_are_planned_by_the_shipped_policy():
    with open(SHIPPED, encoding="utf-8") as handle:
        policy = normalize(yaml.safe_load(handle), {"limits": {"max_nodes": 10, "max_percent": 100,
                                                               "breaker_failures": 10}})
    hosts = {
        "fabric01": _host("fabric01", "gpu.fabric.state", "fail", "reset_gpu"),
        "route01": _host("route01", "gpu.fabric.state", "fail", "reboot"),
        "remap01": _host("remap01", "gpu.remap.failure", "fail", "rma"),
        "xid64": _host("xid64", "xid.64.events", "fail", "reset_gpu"),
        "ib01": _host("ib01", "rdma.port.errors", "fail", "check_cable"),
        "hot01": _host("hot01", "gpu.temperature.peers", "warn", "investigate"),
    }
    plan = make_plan(hosts, policy, fleet=20)
    nodes = plan["nodes"]
    assert "hot01" not in nodes
    assert (nodes["fabric01"]["action"], nodes["fabric01"]["mode"]) == ("reset_gpu", "automatic")
    assert (nodes["xid64"]["action"], nodes["xid64"]["mode"]) == ("reset_gpu", "automatic")
    assert nodes["route01"]["mode"] == "approval"
    assert (nodes["remap01"]["action"], nodes["remap01"]["mode"]) == ("ticket", "ticket")
    assert (nodes["ib01"]["action"], nodes["ib01"]["mode"]) == ("ticket", "ticket")
    assert nodes["fabric01"]["why"]["cause"] == "gpu.fabric.state"
