# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A STAND-IN for the Kubernetes API server, for testing the Kubernetes path of scheduler_node with the real kubectl.

No real API server can run on the machines this collection is built on (no kube-apiserver, k3s, kind or kwok can be
installed there), so this small standard-library HTTP server answers the requests kubectl makes for ``get node``,
``get nodes``, ``get pods`` (all, by node, by label), ``logs``, ``cordon``, ``uncordon``, ``annotate`` and ``drain``: legacy discovery
(/api, /apis, /api/v1, /apis/apps/v1, /apis/policy/v1), nodes (GET, PATCH with a JSON merge or strategic merge
patch of maps), pods (list with a spec.nodeName field selector, GET, eviction), DaemonSets (GET). A pod labelled
``zhisuan.test/pdb: block`` refuses eviction with 429, as a PodDisruptionBudget does.

It is NOT Kubernetes: no admission, no watch, no resourceVersion conflicts, no controllers except one: like the node
lifecycle controller it keeps the ``node.kubernetes.io/unschedulable`` taint in step with ``spec.unschedulable``. The
Nodes and Pods it serves are REAL captures (tests/fixtures/k8s, byte-exact) edited by k8s_captures.py: ``node()`` is
the captured rke2 GPU node renamed, ``pod()`` a captured kubelet pod relabelled; the discovery documents and the
Status errors are written here per the v1 API reference. A list returns its items as stored (a real API server
leaves ``kind``/``apiVersion`` out of list items, as the kubelet's pod capture does); a single object is returned
with them.

    serve(nodes, pods, daemonsets) -> StandIn (.url, .nodes, .pods, .requests, .close())
    write_kubeconfig(path, url)
"""

from __future__ import annotations

import copy
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlparse

import k8s_captures as captures

VERSION = {"major": "1", "minor": "32", "gitVersion": "v1.32.0-zhisuan-standin", "platform": "linux/amd64"}
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
PDB_LABEL = "zhisuan.test/pdb"


def _resource(name, kind, namespaced, verbs, group=None, version=None):
    res = {"name": name, "singularName": "", "namespaced": namespaced, "kind": kind, "verbs": verbs}
    if group is not None:
        res.update({"group": group, "version": version})
    return res


DISCOVERY = {
    "/api": {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}]},
    "/apis": {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
        {"name": grp, "versions": [{"groupVersion": grp + "/v1", "version": "v1"}],
         "preferredVersion": {"groupVersion": grp + "/v1", "version": "v1"}} for grp in ("apps", "policy")]},
    "/api/v1": {"kind": "APIResourceList", "groupVersion": "v1", "resources": [
        _resource("nodes", "Node", False, ["get", "list", "patch", "update"]),
        _resource("pods", "Pod", True, ["delete", "get", "list"]),
        _resource("pods/eviction", "Eviction", True, ["create"], group="policy", version="v1"),
        _resource("namespaces", "Namespace", False, ["get", "list"]),
    ]},
    "/apis/apps/v1": {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "apps/v1", "resources": [
        _resource("daemonsets", "DaemonSet", True, ["get", "list"])]},
    "/apis/policy/v1": {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "policy/v1", "resources": [
        _resource("poddisruptionbudgets", "PodDisruptionBudget", True, ["get", "list"])]},
}


def node(name, ready=True, unschedulable=False, annotations=None):
    """The captured GPU Node renamed to ``name`` (k8s_captures.node); ``ready`` False: k8s_captures.set_ready
    "False"; ``unschedulable``: ``spec.unschedulable`` and its taint; ``annotations`` added to the captured ones."""
    obj = captures.node(name)
    if not ready:
        captures.set_ready(obj, "False")
    obj["metadata"]["annotations"].update(annotations or {})
    if unschedulable:
        obj["spec"]["unschedulable"] = True
    _sync_taint(obj)
    return obj


def pod(namespace, name, node_name, owner_kind="ReplicaSet", owner_name=None, phase="Running", labels=None):
    """A pod bound to ``node_name``: the captured one-container kubelet pod relabelled (k8s_captures.workload_pod);
    ``owner_kind`` None for a bare pod; ``phase`` Succeeded/Failed: k8s_captures.finished."""
    obj = captures.workload_pod(namespace, name, node_name, owner_kind, owner_name, labels)
    if phase != "Running":
        captures.finished(obj, phase)
    return obj


def _typed(obj, kind):
    """A single object as the API server returns it: with ``kind`` and ``apiVersion``."""
    return dict({"kind": kind, "apiVersion": "v1"}, **obj)


def _sync_taint(obj):
    taints = [t for t in obj["spec"].get("taints", []) if t.get("key") != UNSCHEDULABLE_TAINT]
    if obj["spec"].get("unschedulable"):
        taints.append({"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule", "timeAdded": "2026-11-30T23:00:00Z"})
    if taints:
        obj["spec"]["taints"] = taints
    else:
        obj["spec"].pop("taints", None)


def _merge(target, patch):
    """JSON merge patch (RFC 7386); strategic merge patches of maps behave the same."""
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        else:
            target[key] = copy.deepcopy(value)


def _status(code, reason, message):
    return code, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
                  "reason": reason, "code": code}


class StandIn(object):
    def __init__(self, nodes=(), pods=(), daemonsets=(), logs=None):
        self.lock = threading.Lock()
        self.logs = dict(logs or {})  # (namespace, pod name) -> the log text (lines "RFC3339 text")
        self.nodes = dict((n["metadata"]["name"], n) for n in nodes)
        self.pods = dict(((p["metadata"]["namespace"], p["metadata"]["name"]), p) for p in pods)
        self.daemonsets = set(daemonsets)  # (namespace, name)
        self.requests = []  # (method, path) in order
        self.rv = 1
        standin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def _answer(self, code, body):
                text = isinstance(body, str)
                data = body.encode() if text else json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "text/plain" if text else "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _body(self):
                length = int(self.headers.get("Content-Length") or 0)
                return json.loads(self.rfile.read(length) or b"{}")

            def _handle(self, method):
                url = urlparse(self.path)
                standin.requests.append((method, url.path))
                with standin.lock:
                    code, body = standin.route(method, url.path, parse_qs(url.query), self._body() if method in ("PATCH", "POST") else None)
                self._answer(code, body)

            def do_GET(self):  # noqa: N802
                self._handle("GET")

            def do_PATCH(self):  # noqa: N802
                self._handle("PATCH")

            def do_POST(self):  # noqa: N802
                self._handle("POST")

            def do_DELETE(self):  # noqa: N802
                self._handle("DELETE")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)

    def _bump(self, obj):
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)

    def route(self, method, path, query, body):  # pylint: disable=too-many-return-statements
        parts = [unquote(p) for p in path.strip("/").split("/")]
        if method == "GET" and path == "/version":
            return 200, VERSION
        if method == "GET" and path.rstrip("/") in DISCOVERY:
            return 200, DISCOVERY[path.rstrip("/")]
        if parts[:3] == ["api", "v1", "nodes"] and len(parts) == 4:
            obj = self.nodes.get(parts[3])
            if obj is None:
                return _status(404, "NotFound", 'nodes "%s" not found' % parts[3])
            if method == "PATCH":
                _merge(obj, body)
                _sync_taint(obj)
                self._bump(obj)
            elif method != "GET":
                return _status(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
            return 200, _typed(obj, "Node")
        if parts == ["api", "v1", "nodes"] and method == "GET":
            return 200, {"kind": "NodeList", "apiVersion": "v1", "metadata": {"resourceVersion": str(self.rv)},
                         "items": [obj for _, obj in sorted(self.nodes.items())]}
        if parts[:3] == ["api", "v1", "namespaces"] and len(parts) == 5 and parts[4] == "pods" and method == "GET":
            # namespaced list with a label selector (key=value), as kubectl get pods -n NS -l key=value asks
            selector = (query.get("labelSelector") or [""])[0]
            key, _, value = selector.partition("=")
            items = [p for (ns, _), p in sorted(self.pods.items()) if ns == parts[3]
                     and (not key or p["metadata"].get("labels", {}).get(key) == value)]
            return 200, {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": str(self.rv)}, "items": items}
        if (parts[:3] == ["api", "v1", "namespaces"] and len(parts) == 7 and parts[4] == "pods" and parts[6] == "log"
                and method == "GET"):
            text = self.logs.get((parts[3], parts[5]))
            if text is None:
                return _status(404, "NotFound", 'pods "%s" not found' % parts[5])
            return 200, text
        if parts == ["api", "v1", "pods"] and method == "GET":
            selector = (query.get("fieldSelector") or [""])[0]
            want = selector.split("=", 1)[1] if selector.startswith("spec.nodeName=") else None
            items = [p for _, p in sorted(self.pods.items()) if want is None or p["spec"]["nodeName"] == want]
            return 200, {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": str(self.rv)}, "items": items}
        if parts[:3] == ["api", "v1", "namespaces"] and len(parts) >= 6 and parts[4] == "pods":
            key = (parts[3], parts[5])
            obj = self.pods.get(key)
            if obj is None:
                return _status(404, "NotFound", 'pods "%s" not found' % parts[5])
            if len(parts) == 7 and parts[6] == "eviction" and method == "POST":
                if obj["metadata"]["labels"].get(PDB_LABEL) == "block":
                    return _status(429, "TooManyRequests", "Cannot evict pod as it would violate the pod's disruption budget.")
                del self.pods[key]
                return 201, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
            if len(parts) == 6 and method == "GET":
                return 200, _typed(obj, "Pod")
            if len(parts) == 6 and method == "DELETE":
                del self.pods[key]
                return 200, _typed(obj, "Pod")
        if parts[:3] == ["apis", "apps", "v1"] and len(parts) == 7 and parts[3] == "namespaces" and parts[5] == "daemonsets":
            if (parts[4], parts[6]) in self.daemonsets:
                return 200, {"kind": "DaemonSet", "apiVersion": "apps/v1", "metadata": {"name": parts[6], "namespace": parts[4]},
                             "spec": {}, "status": {}}
            return _status(404, "NotFound", 'daemonsets.apps "%s" not found' % parts[6])
        return _status(404, "NotFound", "the server could not find the requested resource")


def serve(nodes=(), pods=(), daemonsets=(), logs=None):
    return StandIn(nodes, pods, daemonsets, logs)


def write_kubeconfig(path, url):
    text = ("apiVersion: v1\nkind: Config\n"
            "clusters:\n- name: standin\n  cluster:\n    server: %s\n"
            "users:\n- name: standin\n  user: {}\n"
            "contexts:\n- name: standin\n  context:\n    cluster: standin\n    user: standin\n"
            "current-context: standin\n") % url
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path
