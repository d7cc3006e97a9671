# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Kubernetes through kubectl: parsers of ``kubectl get node NAME -o json`` and ``kubectl get pods -o json``, and the
backend that cordons (and drains) and uncordons.

Kubernetes has no drain reason, so ours is kept as the node annotation ``zhisuan.ops/drain-reason``; a node
cordoned without it was cordoned by someone else. A node read becomes the same dict as for Slurm::

    {name, raw_state, state, drain, down, responding, reason, reason_user, reason_time, ready}

``state``: ``drained`` (cordoned, no workload pod left), ``draining`` (cordoned, workload pods still there),
``ready`` or ``not_ready`` (schedulable). Workload pods are those ``kubectl drain`` would evict: not owned by a
DaemonSet, not mirror (static) pods, not finished.
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._runner import run, tool_failed
from ansible_collections.zhisuan.ops.plugins.module_utils._safe_parse import load_json, text_or_none

ANNOTATION = "zhisuan.ops/drain-reason"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
# kubectl drain's own --timeout is the wait; the process gets this much longer before the seam kills it
DRAIN_GRACE = 30


def _mapping(value):
    return value if isinstance(value, dict) else {}


def _list(value):
    return value if isinstance(value, list) else []


def _load(text, what):
    doc = load_json(text, "kubectl", "'" + what.replace("%", "%%") + "' output is not JSON: %s")
    if not isinstance(doc, dict):
        raise ParseError("kubectl", "'%s' output is not a JSON object" % what)
    return doc


def parse_node(text):
    """``kubectl get node NAME -o json`` -> the node dict (without ``jobs_running``/``state``, see ``finish``)."""
    doc = _load(text, "kubectl get node -o json")
    if doc.get("kind") != "Node":
        raise ParseError("kubectl", "'kubectl get node -o json' returned kind %r, not Node" % doc.get("kind"))
    meta = _mapping(doc.get("metadata"))
    if not text_or_none(meta.get("name")):
        raise ParseError("kubectl", "a Node without metadata.name")
    annotations = _mapping(meta.get("annotations"))
    spec = _mapping(doc.get("spec"))
    ready = None
    for cond in _list(_mapping(doc.get("status")).get("conditions")):
        if isinstance(cond, dict) and cond.get("type") == "Ready":
            ready = cond.get("status") == "True"
    cordoned = spec.get("unschedulable") is True
    reason = text_or_none(annotations.get(ANNOTATION))
    return {"name": meta["name"], "drain": cordoned, "down": False, "ready": ready, "responding": ready is not False,
            "reason": reason if cordoned else None, "reason_user": None, "reason_time": None,
            "annotation": reason, "taints": [t.get("key") for t in _list(spec.get("taints")) if isinstance(t, dict)]}


def workload_pods(text):
    """``kubectl get pods --all-namespaces --field-selector spec.nodeName=NAME -o json`` -> names of the pods
    ``kubectl drain`` would evict (``namespace/name``)."""
    doc = _load(text, "kubectl get pods -o json")
    items = doc.get("items")
    if not isinstance(items, list):
        raise ParseError("kubectl", "'kubectl get pods -o json' output has no 'items' list")
    out = []
    for pod in items:
        if not isinstance(pod, dict):
            raise ParseError("kubectl", "an item of 'kubectl get pods -o json' is not an object: %s" % repr(pod)[:120])
        meta = _mapping(pod.get("metadata"))
        phase = _mapping(pod.get("status")).get("phase")
        if phase in ("Succeeded", "Failed"):
            continue
        if MIRROR_ANNOTATION in _mapping(meta.get("annotations")):
            continue
        if any(ref.get("kind") == "DaemonSet" for ref in _list(meta.get("ownerReferences")) if isinstance(ref, dict)):
            continue
        out.append("%s/%s" % (text_or_none(meta.get("namespace")) or "default", meta.get("name")))
    return out


def finish(node, pods):
    """Add ``jobs_running``, ``state`` and ``raw_state`` to a parsed node."""
    node = dict(node, jobs_running=len(pods), pods=pods, scheduler="kubernetes")
    if node["drain"]:
        node["state"] = "draining" if pods else "drained"
    else:
        node["state"] = "not_ready" if node["ready"] is False else "ready"
    node["raw_state"] = ("SchedulingDisabled" if node["drain"] else "Schedulable") + (",NotReady" if node["ready"] is False else "")
    return node


class Kubernetes(object):
    """cordon/drain/uncordon through kubectl, our reason in the node annotation. Every call with a timeout."""

    tool = "kubectl"
    scheduler = "kubernetes"

    def __init__(self, kubectl="kubectl", kubeconfig=None, timeout=60):
        self.base = [kubectl] + (["--kubeconfig", kubeconfig] if kubeconfig else [])
        self.timeout = timeout

    def _run(self, *args, **kwargs):
        return run(self.base + list(args), timeout=kwargs.pop("timeout", self.timeout), tool="kubectl", **kwargs)

    def read(self, name):
        res = self._run("get", "node", name, "-o", "json", ok_rcs=(0, 1))
        if res.rc != 0:
            text = (res.stderr + res.stdout).strip()
            raise tool_failed(res, "kubectl", "node %s is not known to the API server (%s)" % (name, text) if "NotFound" in text
                              else None)
        node = parse_node(res.stdout)
        pods = self._run("get", "pods", "--all-namespaces", "--field-selector", "spec.nodeName=" + name, "-o", "json")
        return finish(node, workload_pods(pods.stdout))

    def drain(self, name, reason):
        # cordon first: a failure between the two leaves a node cordoned without our annotation, which we then
        # refuse to uncordon (safe), never an annotation on a schedulable node
        self._run("cordon", name)
        self._run("annotate", "--overwrite", "node", name, "%s=%s" % (ANNOTATION, reason))

    def evict(self, name, timeout):
        """Evict the workload pods (``kubectl drain``, which respects PodDisruptionBudgets); True: it ran."""
        self._run("drain", name, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=%ds" % timeout,
                  timeout=timeout + DRAIN_GRACE)
        return True

    def resume(self, name):
        self._run("uncordon", name)
        self._run("annotate", "node", name, ANNOTATION + "-")

    @staticmethod
    def settled(node):
        return not node["drain"]

    @staticmethod
    def undrained_state(node):
        """The state once uncordoned (for a check-mode diff)."""
        return "not_ready" if node.get("ready") is False else "ready"
