# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Slurm judgement rules: is every GPU node usable by slurmctld, with all its GPUs? Pure functions over the
slurm_node_info facts of one node (``{name, node}``) and, for the cluster, of all of them.

Per node:

``slurm.node.registered``  fail + investigate when slurmctld does not know the node.
``slurm.node.state``       idle/mixed/allocated/completing pass; drained or draining with our reason (``zhisuan:``)
                           warn + monitor (a remediation of ours holds it until it verifies and resumes it; one cut
                           off leaves it to the next run: ``remediate.stranded.<node>``); drained by someone else warn + investigate
                           (their reason, user and time); DOWN/FAIL/INVAL fail + investigate; not responding (``*``)
                           fail + restart_app (slurmd does not answer).
``slurm.gres.gpu``         ``Gres=gpu:N`` vs the GPUs installed (gpu_info's count, else zhisuan_expected.gpu_count):
                           more configured than installed fail + investigate (jobs get GPUs that are not there);
                           fewer warn + tune (GPUs the scheduler never hands out); no gpu gres on a GPU node fail.

Cluster (host ``cluster``): ``slurm.cluster.nodes`` (nodes per state), ``slurm.partition.<name>.gpus`` (the GPUs of
its usable nodes; a partition that is not UP fails), ``slurm.cluster.gpus`` (usable vs installed fleet-wide).
"""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.module_utils._sched.common import held_text

DEFAULT_TAG = "zhisuan"
USABLE = ("idle", "mixed", "allocated", "completing")


def _who(node):
    text = "reason '%s'" % (node.get("reason") or "none")
    if node.get("reason_user"):
        text += " set by %s" % node["reason_user"]
    if node.get("reason_time"):
        text += " at %s" % node["reason_time"]
    return text


def usable(node):
    return isinstance(node, dict) and node.get("state") in USABLE


def _state_check(host, name, node, tag):
    comp = "node %s" % name
    state = node.get("state") or "unknown"
    ev = "State=%s%s" % (node.get("raw_state"), (" Reason=%s" % node["reason"]) if node.get("reason") else "")
    if state in USABLE:
        return make_check("slurm.node.state", host, "pass", comp, state, "idle, mixed or allocated",
                          "%s is %s" % (name, state), evidence=ev)
    if not node.get("responding", True):
        return make_check("slurm.node.state", host, "fail", comp, state, "responding",
                          "%s is %s: slurmctld gets no answer from its slurmd; restart slurmd on the node" % (name, state),
                          remedy="restart_app", evidence=ev)
    if node.get("drain"):
        ours = bool(node.get("reason")) and node["reason"].startswith(tag + ":")
        if ours:
            return make_check("slurm.node.state", host, "warn", comp, state, "idle, mixed or allocated",
                              "%s is %s by %s (%s); %s" % (name, state, tag, _who(node), held_text(name, tag, node["reason"])),
                              remedy="monitor", evidence=ev)
        return make_check("slurm.node.state", host, "warn", comp, state, "idle, mixed or allocated",
                          "%s is %s by someone else (%s); it runs no new jobs until they resume it" % (name, state, _who(node)),
                          remedy="investigate", evidence=ev)
    return make_check("slurm.node.state", host, "fail", comp, state, "idle, mixed or allocated",
                      "%s is %s (%s): it runs no jobs" % (name, state, _who(node)), remedy="investigate", evidence=ev)


def _gres_check(host, name, node, installed, source):
    comp = "node %s" % name
    gpus = node.get("gpus")
    ev = "Gres=%s; installed: %s (%s)" % (node.get("gres"), installed, source)
    if installed is None:
        return make_check("slurm.gres.gpu", host, "pass" if gpus else "skip", comp, gpus, "GPUs installed",
                          "%s has Gres gpu:%s; the GPUs installed are not known (no gpu facts, no zhisuan_expected.gpu_count)"
                          % (name, gpus), evidence=ev)
    if not gpus:
        return make_check("slurm.gres.gpu", host, "fail", comp, 0, "gpu:%s" % installed,
                          "%s has no gpu gres: its %s GPUs cannot be requested (--gres=gpu:N / --gpus)" % (name, installed),
                          remedy="investigate", evidence=ev)
    if gpus > installed:
        return make_check("slurm.gres.gpu", host, "fail", comp, gpus, "gpu:%s" % installed,
                          "%s is configured with %s GPUs but has %s: jobs are given GPUs that are not there (a lost GPU, "
                          "or slurm.conf/gres.conf out of date); see the node's gpu checks" % (name, gpus, installed),
                          remedy="investigate", evidence=ev)
    if gpus < installed:
        return make_check("slurm.gres.gpu", host, "warn", comp, gpus, "gpu:%s" % installed,
                          "%s is configured with %s of its %s GPUs: the rest are never scheduled" % (name, gpus, installed),
                          remedy="tune", evidence=ev)
    return make_check("slurm.gres.gpu", host, "pass", comp, gpus, "gpu:%s" % installed,
                      "%s offers all %s GPUs (Gres=%s)" % (name, gpus, node.get("gres")), evidence=ev)


def judge_slurm(host, facts, installed=None, installed_source=None, tag=DEFAULT_TAG):
    """The checks of one node. ``facts``: ``{name, node (or None)}``."""
    name = facts.get("name") or host
    node = facts.get("node")
    if not isinstance(node, dict):
        return [make_check("slurm.node.registered", host, "fail", "node %s" % name, "absent", "registered",
                           "slurmctld does not know node %s (not in slurm.conf, or the node name differs from the host: "
                           "set zhisuan_slurm_node_name)" % name, remedy="investigate")]
    return [make_check("slurm.node.registered", host, "pass", "node %s" % name, "registered", "registered",
                       "%s is a node of slurmctld (partitions %s)" % (name, ", ".join(node.get("partitions") or []) or "none")),
            _state_check(host, name, node, tag), _gres_check(host, name, node, installed, installed_source)]


def summarize_slurm(facts):
    node = facts.get("node") or {}
    return {"node": facts.get("name"), "state": node.get("state"), "reason": node.get("reason"), "gpus": node.get("gpus"),
            "partitions": node.get("partitions")}


def judge_cluster(nodes, partitions, installed_by_node):
    """``nodes`` {name: node}, ``partitions`` {name: {state, nodes}}, ``installed_by_node`` {inventory GPU node name:
    installed GPUs or None}. Returns ``(checks, data)``."""
    states = {}
    usable_gpus = installed = 0
    for name in sorted(installed_by_node):
        node = nodes.get(name)
        state = node.get("state") if isinstance(node, dict) else "missing"
        states.setdefault(state or "unknown", []).append(name)
        if usable(node):
            usable_gpus += node.get("gpus") or 0
        installed += installed_by_node[name] or (node or {}).get("gpus") or 0
    total = len(installed_by_node)
    good = sum(len(v) for k, v in states.items() if k in USABLE)
    bad = sum(len(v) for k, v in states.items() if k not in USABLE and k not in ("drained", "draining"))
    text = ", ".join("%s %d" % (key, len(value)) for key, value in sorted(states.items()))
    checks = [make_check(
        "slurm.cluster.nodes", "cluster", "fail" if bad else ("warn" if good < total else "pass"), "GPU nodes", text,
        "all %d usable" % total, "%d of %d GPU nodes can run jobs (%s)" % (good, total, text),
        remedy="investigate" if bad else ("monitor" if good < total else None),
        evidence="\n".join("%s: %s" % (k, ", ".join(v)) for k, v in sorted(states.items())))]
    for pname in sorted(partitions):
        part = partitions[pname]
        members = [nodes[n] for n in part.get("nodes") or [] if n in nodes]
        configured = sum(n.get("gpus") or 0 for n in members)
        ready = sum(n.get("gpus") or 0 for n in members if usable(n))
        up = part.get("state") == "UP"
        status = "fail" if not up or (configured and not ready) else ("warn" if ready < configured else "pass")
        checks.append(make_check(
            "slurm.partition.%s.gpus" % pname, "cluster", status, "partition %s" % pname, ready, "== %d" % configured,
            "partition %s is %s: %d of %d GPUs on usable nodes" % (pname, part.get("state"), ready, configured),
            remedy=None if status == "pass" else "investigate",
            evidence="nodes: %s" % ", ".join("%s=%s" % (n["name"], n.get("state")) for n in members)))
    ratio = round(usable_gpus / installed, 4) if installed else None
    checks.append(make_check(
        "slurm.cluster.gpus", "cluster", "skip" if not installed else ("pass" if usable_gpus >= installed else "fail"),
        "GPUs", usable_gpus, "== %d installed" % installed,
        "%d of %d installed GPUs are on nodes that can run jobs" % (usable_gpus, installed),
        remedy=None if not installed or usable_gpus >= installed else "investigate", evidence="availability %s" % ratio))
    return checks, {"states": dict((k, len(v)) for k, v in states.items()), "gpus_usable": usable_gpus,
                    "gpus_installed": installed, "availability": ratio}
