# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Kubernetes judgement rules: is every GPU node usable by the scheduler, with all its GPUs, and is the GPU platform
on it healthy? Pure functions over the k8s_node_info facts of one node (``{name, node, pods}``).

Per node (host = the inventory host the node is):

``k8s.node.registered``   fail + investigate when the API server does not know the node.
``k8s.node.ready``        Ready=True; NotReady/Unknown fail + investigate (the kubelet's reason and message).
``k8s.node.pressure``     MemoryPressure / DiskPressure / PIDPressure / NetworkUnavailable: fail + investigate.
``k8s.node.schedulable``  cordoned by us (our drain annotation): warn + monitor; by someone else: warn + investigate.
``k8s.taint.<key>``       a NoSchedule/NoExecute taint (one check per key, its effects together): ours (key starting
                          ``zhisuan``) warn + monitor; an operator's warn + investigate; ``nvidia.com/gpu`` (a dedicated
                          GPU pool) and the cordon taint pass; the node lifecycle controller's condition taints
                          (``node.kubernetes.io/not-ready``, ``unreachable``, ``*-pressure``) are left to the ready and
                          pressure checks, which judge the conditions they mirror.
``k8s.gpu.capacity``      ``nvidia.com/gpu`` capacity vs the GPUs installed (gpu_info's count, else
                          zhisuan_expected.gpu_count): fewer fail + restart_app (the device plugin registers them).
``k8s.gpu.allocatable``   allocatable vs capacity: fewer fail + investigate (the device plugin marked GPUs unhealthy:
                          run the gpu and xid checks on the node).
``k8s.labels.product|driver|cuda``  the GPU feature-discovery labels vs the profile (product) and the baseline
                          (``nvidia_driver``/``driver``, ``cuda``): mismatch fail + investigate; no label warn.
``k8s.pod.<component>``   the GPU platform's pods on the node: Running and ready pass (restarts above
                          ``pod_restarts_warn`` warn); CrashLoopBackOff fail + restart_app, Init errors and anything
                          else not running fail + investigate, with the container's last state; no device-plugin pod
                          on a GPU node fail + investigate.
"""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.module_utils._judge.baseline import accepts
from ansible_collections.zhisuan.ops.plugins.module_utils._sched.common import held_text

CORDON_TAINT = "node.kubernetes.io/unschedulable"
NEUTRAL_TAINTS = (CORDON_TAINT, "nvidia.com/gpu")
# The taints the node lifecycle controller sets from the node's conditions: k8s.node.ready and k8s.node.pressure
# already judge those conditions, so these are not a second finding (nor one per effect).
CONDITION_TAINTS = tuple("node.kubernetes.io/%s" % name for name in (
    "not-ready", "unreachable", "memory-pressure", "disk-pressure", "pid-pressure", "network-unavailable"))
DEFAULT_TAG = "zhisuan"
RESTARTS_WARN = 5
REQUIRED_COMPONENTS = ("device_plugin",)


def _norm(text):
    return "".join(ch for ch in str(text).upper() if ch.isalnum())


def _evidence(pairs):
    return "\n".join("%s: %s" % (key, value) for key, value in pairs if value not in (None, "", [], {}))


def cordoned_message(name, tag, reason):
    """The words of k8s.node.schedulable for a node cordoned by our remediation."""
    return "%s is cordoned by %s (%s); %s" % (name, tag, reason, held_text(name, tag, reason))


def _node_checks(host, name, node, tag):
    checks = []
    comp = "node %s" % name
    ready = node.get("ready")
    ev = _evidence([("Ready", ready), ("reason", node.get("ready_reason")), ("message", node.get("ready_message"))])
    if ready is True:
        checks.append(make_check("k8s.node.ready", host, "pass", comp, "Ready", "Ready", "%s is Ready" % name, evidence=ev))
    else:
        checks.append(make_check(
            "k8s.node.ready", host, "fail", comp, "NotReady" if ready is False else "Unknown", "Ready",
            "%s is %s (%s): the scheduler places no pod on it; check the kubelet and the container runtime on the node"
            % (name, "NotReady" if ready is False else "in an unknown state", node.get("ready_reason") or "no reason given"),
            remedy="investigate", evidence=ev))
    bad = sorted(key for key, value in (node.get("conditions") or {}).items() if value)
    checks.append(make_check(
        "k8s.node.pressure", host, "fail" if bad else "pass", comp, ", ".join(bad) or "none", "none",
        ("%s reports %s: the kubelet evicts pods and admits no new ones" % (name, ", ".join(bad))) if bad
        else "%s reports no memory, disk, PID or network pressure" % name,
        remedy="investigate" if bad else None, evidence=_evidence(sorted((node.get("conditions") or {}).items()))))
    if node.get("unschedulable"):
        reason = node.get("drain_reason")
        ours = bool(reason) and reason.startswith(tag + ":")
        checks.append(make_check(
            "k8s.node.schedulable", host, "warn", comp, "cordoned", "schedulable",
            cordoned_message(name, tag, reason) if ours
            else "%s is cordoned by someone else (no %s drain reason); find out why before uncordoning it" % (name, tag),
            remedy="monitor" if ours else "investigate", evidence=_evidence([("drain reason", reason)])))
    else:
        checks.append(make_check("k8s.node.schedulable", host, "pass", comp, "schedulable", "schedulable",
                                 "%s accepts new pods" % name))
    by_key = {}
    for taint in node.get("taints") or []:
        key = taint.get("key") or "unknown"
        if key in NEUTRAL_TAINTS or key in CONDITION_TAINTS or taint.get("effect") not in ("NoSchedule", "NoExecute"):
            continue
        by_key.setdefault(key, []).append("%s=%s:%s" % (key, taint.get("value") or "", taint.get("effect")))
    # one check per taint key, whatever the number of effects it is set with
    for key, texts in sorted(by_key.items()):
        ours = key.startswith(tag)
        text = ", ".join(texts)
        checks.append(make_check(
            "k8s.taint.%s" % "".join(ch if ch.isalnum() else "_" for ch in key), host, "warn", comp, text, "no taint",
            ("%s carries our taint %s" % (name, text)) if ours else
            ("%s carries the taint %s set by someone else: pods without a toleration are not placed on it" % (name, text)),
            remedy="monitor" if ours else "investigate", evidence=text))
    return checks


def _gpu_checks(host, name, node, installed, installed_source):
    checks = []
    comp = "node %s" % name
    cap, alloc = node.get("gpu_capacity"), node.get("gpu_allocatable")
    ev = _evidence([("capacity nvidia.com/gpu", cap), ("allocatable nvidia.com/gpu", alloc),
                    ("installed", "%s (%s)" % (installed, installed_source) if installed is not None else None)])
    if installed is None:
        checks.append(make_check("k8s.gpu.capacity", host, "skip" if cap is None else "pass", comp, cap, "GPUs installed",
                                 "%s advertises %s GPUs; the GPUs installed are not known (no gpu facts, no "
                                 "zhisuan_expected.gpu_count)" % (name, cap if cap is not None else "no"), evidence=ev))
    elif cap is None or cap < installed:
        checks.append(make_check(
            "k8s.gpu.capacity", host, "fail", comp, cap or 0, "== %s" % installed,
            "%s advertises %s of its %s GPUs as nvidia.com/gpu: restart the device plugin pod on it; if the count stays "
            "low, the node's gpu checks say which GPU is missing" % (name, cap or 0, installed),
            remedy="restart_app", evidence=ev))
    else:
        checks.append(make_check("k8s.gpu.capacity", host, "pass", comp, cap, ">= %s" % installed,
                                 "%s advertises all %s GPUs" % (name, installed), evidence=ev))
    if cap is None:
        return checks
    if alloc is None or alloc < cap:
        checks.append(make_check(
            "k8s.gpu.allocatable", host, "fail", comp, alloc or 0, "== %s" % cap,
            "%s: %s of %s GPUs allocatable; the device plugin marked the rest unhealthy (an Xid or a lost GPU): run the "
            "gpu and xid checks on this node" % (name, alloc or 0, cap), remedy="investigate", evidence=ev))
    else:
        checks.append(make_check("k8s.gpu.allocatable", host, "pass", comp, alloc, "== %s" % cap,
                                 "%s: all %s GPUs allocatable" % (name, cap), evidence=ev))
    return checks


def _label_checks(host, name, node, profile_name, baseline):
    gfd = node.get("gfd") or {}
    comp = "node %s" % name
    checks = []
    wanted = [("product", profile_name, lambda want, got: _norm(want) in _norm(got))]
    for key, names in (("driver", ("nvidia_driver", "driver")), ("cuda", ("cuda",))):
        spec = next((baseline[n] for n in names if (baseline or {}).get(n) not in (None, "")), None)
        wanted.append((key, spec, accepts))
    for key, want, same in wanted:
        got = gfd.get(key)
        label = {"product": "nvidia.com/gpu.product", "driver": "nvidia.com/cuda.driver-version.full",
                 "cuda": "nvidia.com/cuda.runtime-version.full"}[key]
        if want in (None, ""):
            continue
        if got is None:
            checks.append(make_check("k8s.labels.%s" % key, host, "warn", comp, None, str(want),
                                     "%s has no %s label: GPU feature discovery does not run or has not labelled it"
                                     % (name, label), remedy="investigate"))
        elif same(want, got):
            checks.append(make_check("k8s.labels.%s" % key, host, "pass", comp, got, str(want),
                                     "%s: %s=%s" % (name, label, got), evidence="%s=%s" % (label, got)))
        else:
            checks.append(make_check("k8s.labels.%s" % key, host, "fail", comp, got, str(want),
                                     "%s: %s=%s, the site expects %s" % (name, label, got, want), remedy="investigate",
                                     evidence="%s=%s" % (label, got)))
    return checks


def _last_state(cont):
    parts = []
    if cont.get("last_reason") or cont.get("last_exit_code") is not None:
        parts.append("last terminated: %s (exit %s) at %s"
                     % (cont.get("last_reason"), cont.get("last_exit_code"), cont.get("last_finished")))
    return "; ".join(parts)


def _pod_checks(host, name, node, pods, thresholds):
    warn_at = (thresholds or {}).get("pod_restarts_warn", RESTARTS_WARN)
    checks = []
    seen = set()
    for pod in sorted(pods or [], key=lambda p: (p.get("component") or "", p.get("name") or "")):
        component = pod.get("component") or "other"
        seen.add(component)
        comp = "pod %s/%s" % (pod.get("namespace"), pod.get("name"))
        conts = pod.get("containers") or []
        ev = "\n".join("%s%s: %s%s, ready=%s, restarts=%s%s" % (
            c.get("name"), " (init)" if c.get("init") else "", c.get("state"), " (%s)" % c["reason"] if c.get("reason") else "",
            c.get("ready"), c.get("restarts"), "; " + _last_state(c) if _last_state(c) else "") for c in conts)
        status = pod.get("status") or "Unknown"
        check_id = "k8s.pod.%s" % component
        if status == "Running" and pod.get("ready"):
            restarts = pod.get("restarts") or 0
            flaky = warn_at is not None and restarts > warn_at
            checks.append(make_check(
                check_id, host, "warn" if flaky else "pass", comp, "Running, %s restarts" % restarts, "Running and ready",
                ("%s on %s runs but restarted %s times (%s)" % (comp, name, restarts, _last_state(max(conts, key=lambda c: c.get("restarts") or 0))))
                if flaky else "%s on %s is Running and ready" % (comp, name),
                remedy="monitor" if flaky else None, evidence=ev))
        elif "CrashLoopBackOff" in status and not status.startswith("Init:"):
            checks.append(make_check(
                check_id, host, "fail", comp, status, "Running and ready",
                "%s on %s is in CrashLoopBackOff after %s restarts; restart it once the cause in its last state is fixed"
                % (comp, name, pod.get("restarts")), remedy="restart_app", evidence=ev))
        else:
            hint = ("an init container failed (the GPU operator's init containers wait for the driver and the toolkit)"
                    if status.startswith("Init:") else "it is not running")
            checks.append(make_check(check_id, host, "fail", comp, status, "Running and ready",
                                     "%s on %s is %s: %s" % (comp, name, status, hint), remedy="investigate", evidence=ev))
    gpu_node = (node.get("gpu_capacity") or 0) > 0 or (node.get("gfd") or {}).get("present")
    for component in REQUIRED_COMPONENTS:
        if gpu_node and component not in seen:
            checks.append(make_check(
                "k8s.pod.%s" % component, host, "fail", "node %s" % name, "absent", "one pod per GPU node",
                "no %s pod runs on %s: the node's GPUs are not offered to the scheduler" % (component.replace("_", " "), name),
                remedy="investigate"))
    return checks


def judge_k8s(host, facts, installed=None, installed_source=None, profile_name=None, baseline=None, thresholds=None,
              tag=DEFAULT_TAG):
    """All the checks of one node. ``facts``: ``{name, node (or None), pods}``."""
    name = facts.get("name") or host
    node = facts.get("node")
    if not isinstance(node, dict):
        return [make_check("k8s.node.registered", host, "fail", "node %s" % name, "absent", "registered",
                           "the API server does not know node %s: the kubelet never joined, or the node name differs "
                           "from the host (set zhisuan_k8s_node_name)" % name, remedy="investigate")]
    checks = [make_check("k8s.node.registered", host, "pass", "node %s" % name, "registered", "registered",
                         "%s is registered with the API server" % name)]
    checks += _node_checks(host, name, node, tag)
    checks += _gpu_checks(host, name, node, installed, installed_source)
    checks += _label_checks(host, name, node, profile_name, baseline)
    checks += _pod_checks(host, name, node, facts.get("pods"), thresholds)
    return checks


def summarize_k8s(facts):
    node = facts.get("node") or {}
    return {"node": facts.get("name"), "ready": node.get("ready"), "unschedulable": node.get("unschedulable"),
            "gpu_capacity": node.get("gpu_capacity"), "gpu_allocatable": node.get("gpu_allocatable"),
            "product": (node.get("gfd") or {}).get("product"),
            "pods": dict((p.get("name"), p.get("status")) for p in facts.get("pods") or [])}


def judge_cluster(nodes, installed_by_node):
    """Cluster checks over every GPU node: nodes per state, and GPUs allocatable vs installed fleet-wide.

    ``nodes``: {name: node} (the k8s_node_info facts); ``installed_by_node``: {node name: GPUs installed or None} for
    the inventory's GPU nodes. Returns ``(checks, data)``."""
    states = {"ready": [], "not_ready": [], "cordoned": [], "missing": []}
    allocatable = installed = 0
    for name in sorted(installed_by_node):
        node = nodes.get(name)
        if not isinstance(node, dict):
            states["missing"].append(name)
        elif node.get("ready") is not True:
            states["not_ready"].append(name)
        elif node.get("unschedulable"):
            states["cordoned"].append(name)
        else:
            states["ready"].append(name)
        if isinstance(node, dict) and node.get("ready") is True and not node.get("unschedulable"):
            allocatable += node.get("gpu_allocatable") or 0
        installed += installed_by_node[name] or (node or {}).get("gpu_capacity") or 0
    total = len(installed_by_node)
    bad = len(states["not_ready"]) + len(states["missing"])
    text = ", ".join("%s %d" % (key, len(value)) for key, value in states.items())
    checks = [make_check(
        "k8s.cluster.nodes", "cluster", "fail" if bad else ("warn" if states["cordoned"] else "pass"), "GPU nodes",
        text, "all %d Ready and schedulable" % total,
        "%d of %d GPU nodes are Ready and schedulable (%s)" % (len(states["ready"]), total, text),
        remedy="investigate" if bad else ("monitor" if states["cordoned"] else None),
        evidence="\n".join("%s: %s" % (key, ", ".join(value)) for key, value in states.items() if value))]
    ratio = round(allocatable / installed, 4) if installed else None
    checks.append(make_check(
        "k8s.cluster.gpus", "cluster", "pass" if installed and allocatable >= installed else ("skip" if not installed else "fail"),
        "GPUs", allocatable, "== %d installed" % installed,
        "%d of %d installed GPUs are allocatable on Ready, schedulable nodes" % (allocatable, installed),
        remedy=None if not installed or allocatable >= installed else "investigate",
        evidence="availability %s" % ratio))
    return checks, {"states": dict((k, len(v)) for k, v in states.items()), "gpus_allocatable": allocatable,
                    "gpus_installed": installed, "availability": ratio}
