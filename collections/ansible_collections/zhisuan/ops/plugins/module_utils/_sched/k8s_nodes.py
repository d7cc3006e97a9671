# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""The GPU platform of a Kubernetes cluster, read: pure parsers of ``kubectl get nodes -o json`` and
``kubectl get pods --all-namespaces -o json`` - and of their ``-o yaml`` form (``kubectl`` and ``oc``), item by item:
an item the YAML reader cannot read is a warning naming its line, the others are read - and the collector
(k8s_node_info) that runs the two through the seam or reads saved outputs (``src``, ``pods_src``).

A node becomes::

    {name, ready (True/False/None), ready_reason, ready_message, conditions: {MemoryPressure: bool, ...},
     unschedulable, drain_reason (our annotation), taints: [{key, value, effect}], gpu_capacity, gpu_allocatable,
     gfd: {product, driver, cuda, count, present}, kubelet_version}

and a pod of the GPU platform (the GPU operator, device plugin, dcgm-exporter, feature discovery, the network
operator)::

    {namespace, name, node, component, phase, status (what ``kubectl get pods`` prints: Running, CrashLoopBackOff,
     Init:Error, Init:CrashLoopBackOff, Pending...), ready, restarts, containers: [{name, init, ready, restarts, state,
     reason, exit_code, last_reason, last_exit_code, last_finished}]}
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError, ToolFailed
from ansible_collections.zhisuan.ops.plugins.module_utils._runner import read_saved, run
from ansible_collections.zhisuan.ops.plugins.module_utils._safe_parse import load_json, text_or_none, to_int
from ansible_collections.zhisuan.ops.plugins.module_utils._sched.k8s import ANNOTATION

GPU_RESOURCE = "nvidia.com/gpu"
PRESSURES = ("MemoryPressure", "DiskPressure", "PIDPressure", "NetworkUnavailable")
# component <- the DaemonSet (or pod) name it starts with; first match wins (longest prefixes first)
COMPONENTS = (
    ("nvidia-device-plugin", "device_plugin"), ("nvidia-dcgm-exporter", "dcgm_exporter"),
    ("dcgm-exporter", "dcgm_exporter"), ("gpu-feature-discovery", "feature_discovery"),
    ("nvidia-driver-daemonset", "driver"), ("nvidia-container-toolkit", "container_toolkit"),
    ("nvidia-operator-validator", "validator"), ("nvidia-mig-manager", "mig_manager"), ("nvidia-dcgm", "dcgm"),
    ("gpu-operator", "gpu_operator"), ("mofed", "network_operator"), ("network-operator", "network_operator"),
    ("rdma-shared-dp", "network_operator"), ("sriov-device-plugin", "network_operator"),
    ("nv-ipam", "network_operator"), ("nic-feature-discovery", "network_operator"),
)


def _map(value):
    return value if isinstance(value, dict) else {}


def _list(value):
    return value if isinstance(value, list) else []


def _yaml_loader():
    """PyYAML's safe loader that keeps times as text (as the JSON form gives them); None without PyYAML."""
    try:
        import yaml
    except ImportError:
        return None, None

    class Loader(yaml.SafeLoader):
        pass

    Loader.yaml_implicit_resolvers = dict(
        (key, [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"])
        for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items())
    return yaml, Loader


def _yaml_items(text, what, warnings):
    """The ``items`` of a ``-o yaml`` list; a document YAML cannot read whole is read item by item (each ``- `` at
    the start of a line under ``items:``), an unreadable item a warning naming its first line."""
    yaml, loader = _yaml_loader()
    if yaml is None:
        raise ParseError("kubectl", "'%s' output is YAML and PyYAML (which Ansible itself needs) is not importable"
                         % what)
    first_error = None
    try:
        doc = yaml.load(text, Loader=loader)  # noqa: S506 - a SafeLoader subclass
        if isinstance(doc, dict) and isinstance(doc.get("items"), list):
            return doc["items"]
        if isinstance(doc, dict) and doc.get("kind") and doc.get("metadata"):
            return [doc]  # one object (kubectl get node NAME -o yaml)
        if not isinstance(doc, dict):
            raise ParseError("kubectl", "'%s' output is not JSON, nor a YAML document (it reads as a %s)"
                             % (what, type(doc).__name__))
        raise ParseError("kubectl", "'%s' output has no 'items' list" % what)
    except (yaml.YAMLError, RecursionError, ValueError, TypeError) as exc:
        first_error = str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.rstrip() == "items:"), None)
    if start is None:
        raise ParseError("kubectl", "'%s' output is neither JSON nor readable YAML: %s" % (what, first_error))
    chunks, current = [], None
    for number in range(start + 1, len(lines)):
        line = lines[number]
        if line.startswith("- "):
            current = [number + 1, [line[2:]]]
            chunks.append(current)
        elif line.startswith("  ") and current is not None:
            current[1].append(line[2:])
        elif line.strip() and not line.startswith(" "):
            current = None  # the list's end (kind: List, metadata:)
    items = []
    for number, body in chunks:
        try:
            item = yaml.load("\n".join(body), Loader=loader)  # noqa: S506 - a SafeLoader subclass
        except (yaml.YAMLError, RecursionError, ValueError, TypeError) as exc:
            warnings.append("line %d: an item YAML cannot read (%s): left out"
                            % (number, str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__))
            continue
        if isinstance(item, dict):
            items.append(item)
        else:
            warnings.append("line %d: an item that is not a mapping: left out" % number)
    if not items:
        raise ParseError("kubectl", "'%s' output: no item of its YAML could be read: %s" % (what, first_error))
    warnings.insert(0, "the YAML document is damaged (%s): read item by item, %d read" % (first_error, len(items)))
    return items


def _load_list(text, what, warnings=None):
    warnings = [] if warnings is None else warnings
    stripped = text.lstrip() if isinstance(text, str) else ""
    if stripped and not stripped.startswith(("{", "[")):
        return _yaml_items(text, what.replace("-o json", "-o yaml"), warnings)
    doc = load_json(text, "kubectl", "'" + what + "' output is not JSON: %s")
    if not isinstance(doc, dict) or not isinstance(doc.get("items"), list):
        raise ParseError("kubectl", "'%s' output has no 'items' list" % what)
    return doc["items"]


def quantity(value):
    """A resource quantity as the API writes an extended resource (``"8"``) -> int; None when absent or not a
    whole non-negative number."""
    if value is None:
        return None
    number = to_int(str(value)) if isinstance(value, (str, int)) and not isinstance(value, bool) else None
    return number if number is not None and number >= 0 else None


def _gfd(labels):
    def label(*keys):
        for key in keys:
            if text_or_none(labels.get(key)):
                return labels[key]
        return None
    driver = label("nvidia.com/cuda.driver-version.full")
    if driver is None and label("nvidia.com/cuda.driver.major"):
        driver = ".".join(part for part in (labels.get("nvidia.com/cuda.driver.major"), labels.get("nvidia.com/cuda.driver.minor"),
                                            labels.get("nvidia.com/cuda.driver.rev")) if text_or_none(part))
    cuda = label("nvidia.com/cuda.runtime-version.full")
    if cuda is None and label("nvidia.com/cuda.runtime.major"):
        cuda = ".".join(part for part in (labels.get("nvidia.com/cuda.runtime.major"), labels.get("nvidia.com/cuda.runtime.minor"))
                        if text_or_none(part))
    return {"product": label("nvidia.com/gpu.product"), "driver": driver, "cuda": cuda,
            "count": quantity(labels.get("nvidia.com/gpu.count")), "present": labels.get("nvidia.com/gpu.present") == "true"}


def node_of(item):
    """One item of a NodeList -> the node dict (see the module doc)."""
    if not isinstance(item, dict):
        raise ParseError("kubectl", "an item of 'kubectl get nodes -o json' is not an object: %s" % repr(item)[:120])
    meta, spec, status = _map(item.get("metadata")), _map(item.get("spec")), _map(item.get("status"))
    name = text_or_none(meta.get("name"))
    if not name:
        raise ParseError("kubectl", "a Node without metadata.name in 'kubectl get nodes -o json'")
    ready, reason, message = None, None, None
    conditions = {}
    for cond in _list(status.get("conditions")):
        if not isinstance(cond, dict):
            continue
        if cond.get("type") == "Ready":
            ready = {"True": True, "False": False}.get(cond.get("status"))
            reason, message = text_or_none(cond.get("reason")), text_or_none(cond.get("message"))
        elif cond.get("type") in PRESSURES:
            conditions[cond["type"]] = cond.get("status") == "True"
    taints = [{"key": text_or_none(t.get("key")), "value": text_or_none(t.get("value")), "effect": text_or_none(t.get("effect"))}
              for t in _list(spec.get("taints")) if isinstance(t, dict)]
    labels = dict((k, v) for k, v in _map(meta.get("labels")).items() if isinstance(v, str))
    annotations = _map(meta.get("annotations"))
    return {"name": name, "ready": ready, "ready_reason": reason, "ready_message": message, "conditions": conditions,
            "unschedulable": spec.get("unschedulable") is True, "drain_reason": text_or_none(annotations.get(ANNOTATION)),
            "taints": taints, "gpu_capacity": quantity(_map(status.get("capacity")).get(GPU_RESOURCE)),
            "gpu_allocatable": quantity(_map(status.get("allocatable")).get(GPU_RESOURCE)), "gfd": _gfd(labels),
            "kubelet_version": text_or_none(_map(status.get("nodeInfo")).get("kubeletVersion"))}


def parse_nodes(text, warnings=None):
    """``kubectl get nodes -o json`` or ``-o yaml`` -> {name: node} (YAML items it cannot read: ``warnings``)."""
    nodes = {}
    problems = []
    for index, item in enumerate(_load_list(text, "kubectl get nodes -o json", warnings)):
        try:
            node = node_of(item)
        except ParseError as exc:
            # one unreadable item (a truncated output's last one) costs only itself
            problems.append(exc)
            if warnings is not None:
                warnings.append("items[%d]: %s: left out" % (index, exc.detail))
            continue
        nodes[node["name"]] = node
    if problems and not nodes:
        raise problems[0]
    return nodes


def component_of(name, owner=None):
    """The GPU platform component a pod belongs to (by its DaemonSet's, else its own name), or None."""
    for candidate in (owner, name):
        if not isinstance(candidate, str):
            continue
        for prefix, component in COMPONENTS:
            if candidate.startswith(prefix):
                return component
    return None


def _container(status, init):
    state = _map(status.get("state"))
    last = _map(status.get("lastState"))
    kind = next((key for key in ("running", "waiting", "terminated") if key in state), None)
    now = _map(state.get(kind)) if kind else {}
    term = _map(last.get("terminated"))
    return {"name": text_or_none(status.get("name")), "init": init, "ready": status.get("ready") is True,
            "restarts": quantity(status.get("restartCount")) or 0, "state": kind,
            "reason": text_or_none(now.get("reason")), "exit_code": now.get("exitCode") if isinstance(now.get("exitCode"), int) else None,
            "last_reason": text_or_none(term.get("reason")),
            "last_exit_code": term.get("exitCode") if isinstance(term.get("exitCode"), int) else None,
            "last_finished": text_or_none(term.get("finishedAt"))}


def _status_text(phase, inits, mains):
    """What ``kubectl get pods`` prints in STATUS for the pod (the init containers first)."""
    for index, cont in enumerate(inits):
        if cont["state"] == "terminated" and cont["exit_code"] == 0:
            continue
        if cont["state"] == "terminated":
            return "Init:" + (cont["reason"] or "ExitCode:%s" % cont["exit_code"])
        if cont["state"] == "waiting" and cont["reason"] and cont["reason"] != "PodInitializing":
            return "Init:" + cont["reason"]
        return "Init:%d/%d" % (index, len(inits))
    for cont in mains:
        if cont["state"] == "waiting" and cont["reason"]:
            return cont["reason"]
        if cont["state"] == "terminated" and cont["reason"]:
            return cont["reason"]
    return phase or "Unknown"


def pod_of(item):
    """One item of a PodList -> the pod dict, or None when it is not part of the GPU platform."""
    if not isinstance(item, dict):
        raise ParseError("kubectl", "an item of 'kubectl get pods -o json' is not an object: %s" % repr(item)[:120])
    meta, spec, status = _map(item.get("metadata")), _map(item.get("spec")), _map(item.get("status"))
    owner = next((ref.get("name") for ref in _list(meta.get("ownerReferences")) if isinstance(ref, dict)), None)
    component = component_of(text_or_none(meta.get("name")), owner)
    if component is None:
        return None
    inits = [_container(s, True) for s in _list(status.get("initContainerStatuses")) if isinstance(s, dict)]
    mains = [_container(s, False) for s in _list(status.get("containerStatuses")) if isinstance(s, dict)]
    phase = text_or_none(status.get("phase"))
    return {"namespace": text_or_none(meta.get("namespace")) or "default", "name": text_or_none(meta.get("name")),
            "node": text_or_none(spec.get("nodeName")), "component": component, "owner": owner, "phase": phase,
            "status": _status_text(phase, inits, mains), "ready": bool(mains) and all(c["ready"] for c in mains),
            "restarts": sum(c["restarts"] for c in inits + mains), "containers": inits + mains}


def parse_pods(text, warnings=None):
    """``kubectl get pods --all-namespaces -o json`` or ``-o yaml`` -> the GPU platform's pods (others are left
    out)."""
    return [pod for pod in (pod_of(item) for item in _load_list(text, "kubectl get pods -o json", warnings)) if pod]


def collect(kubectl="kubectl", kubeconfig=None, context=None, timeout=60, src=None, pods_src=None):
    """Run the two reads through the seam, or read saved outputs (``src``: ``get nodes``; ``pods_src``: ``get pods``,
    JSON or YAML); return ``{nodes, pods, context, warnings}``."""
    base = [kubectl] + (["--kubeconfig", kubeconfig] if kubeconfig else []) + (["--context", context] if context else [])
    warnings = []
    nodes = parse_nodes(read_saved(src, "kubectl", "the saved output", ToolFailed) if src else
                        run(base + ["get", "nodes", "-o", "json"], timeout=timeout, tool="kubectl").stdout, warnings)
    if pods_src:
        pods = parse_pods(read_saved(pods_src, "kubectl", "the saved output", ToolFailed), warnings)
    elif src:
        pods = []
    else:
        pods = parse_pods(run(base + ["get", "pods", "--all-namespaces", "-o", "json"], timeout=timeout,
                              tool="kubectl").stdout, warnings)
    return {"nodes": nodes, "pods": pods, "context": context, "warnings": warnings}


def collect_k8s_facts(module):
    """The runner of zhisuan.ops.k8s_node_info."""
    params = module.params
    facts = collect(params["kubectl_path"], params.get("kubeconfig"), params.get("context"), params["timeout"],
                    params.get("src"), params.get("pods_src"))
    for warning in facts["warnings"][:10]:
        module.warn("kubectl: %s" % warning)
    return {"k8s": facts}
