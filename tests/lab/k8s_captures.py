# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The real Kubernetes captures the k8s tests and the API stand-in (k8s_standin.py) serve, and the EDITS that make
the lab's nodes, pods and faults out of them. Nothing here writes an object of its own: every function starts from a
deep copy of a captured object and changes named fields, the way lab/sim/* edit their captures.

The captures (byte-exact, tests/fixtures/k8s; provenance in tests/fixtures/PROVENANCE.md):

``kubectl-get-nodes-edgexr-gpuNodesSampleOutput.json``
    ``kubectl get nodes -o json`` of a one-node rke2 v1.31 cluster with the NVIDIA GPU operator v24.9.2 (the
    ``gpuNodesSampleOutput`` string of edgexr/edge-cloud-platform, Apache-2.0): node ``nori``, one A16 vGPU
    (``nvidia.com/gpu`` 1), Ready, every GPU feature discovery label, the operator's images in ``status.images``.
``kubelet-pods-gpud-readonly.json``
    the kubelet's read-only ``/pods`` (a v1 PodList) of node ``mynodehostname`` (leptonai/gpud, Apache-2.0): the
    DaemonSet pod ``vector/vector-jldbs`` (one completed init container ``sleep``, one running container ``vector``)
    and the DaemonSet pod ``kube-system/kube-proxy-hfqwt`` (one privileged container, ``restartCount`` 1).

No real pod of the GPU platform (device plugin, dcgm-exporter, operator validator, network operator) is in the
fixtures: ``gpu_pod`` makes one by RELABELLING one of these two real pods (``GPU_PLATFORM`` says which, and what
changes). Its container statuses are the captured ones; a fault changes them the way the kubelet writes them
(``crash_loop``, ``init_error``, ``finished``).

Node edits: ``rename_node``, ``set_ready``, ``set_gpus``, ``set_gfd``. Pod edits: ``relabel``,
``rename_containers``, ``crash_loop``, ``init_error``, ``finished``. Every edit changes its argument and returns it.
"""

from __future__ import annotations

import copy
import json
import os
import uuid

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "fixtures", "k8s")
NODES = "kubectl-get-nodes-edgexr-gpuNodesSampleOutput.json"
PODS = "kubelet-pods-gpud-readonly.json"
CAPTURED_NODE = "nori"
CAPTURED_POD_NODE = "mynodehostname"
# when an edited condition, taint or container state changed: after the node capture's last heartbeat (23:18:09Z)
EDIT_TIME = "2025-03-19T23:20:00Z"

# component -> the real pod it is made from and what the relabel changes. Images: the operator's own images as the
# captured node lists them in status.images (name:tag and its sha256 digest); the network operator's image is not
# among them, so its pod keeps the captured image.
GPU_PLATFORM = {
    "device_plugin": {"base": "kube-proxy-hfqwt", "namespace": "gpu-operator", "daemonset": "nvidia-device-plugin-daemonset",
                      "containers": {"kube-proxy": "nvidia-device-plugin"},
                      "images": {"nvidia-device-plugin": "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"}},
    "dcgm_exporter": {"base": "vector-jldbs", "namespace": "gpu-operator", "daemonset": "nvidia-dcgm-exporter",
                      "containers": {"sleep": "toolkit-validation", "vector": "nvidia-dcgm-exporter"},
                      "images": {"toolkit-validation": "nvcr.io/nvidia/cloud-native/gpu-operator-validator:v24.9.2",
                                 "nvidia-dcgm-exporter": "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.9-3.6.1-ubuntu22.04"}},
    "validator": {"base": "vector-jldbs", "namespace": "gpu-operator", "daemonset": "nvidia-operator-validator",
                  "containers": {"sleep": "driver-validation", "vector": "nvidia-operator-validator"},
                  "images": {"driver-validation": "nvcr.io/nvidia/cloud-native/gpu-operator-validator:v24.9.2",
                             "nvidia-operator-validator": "nvcr.io/nvidia/cloud-native/gpu-operator-validator:v24.9.2"}},
    "network_operator": {"base": "kube-proxy-hfqwt", "namespace": "nvidia-network-operator", "daemonset": "rdma-shared-dp-ds",
                         "containers": {"kube-proxy": "rdma-shared-dp"}, "images": {}},
}
# a workload pod (a training job's worker, a service's replica) is the one-container kube-proxy pod relabelled
WORKLOAD_BASE = "kube-proxy-hfqwt"
API_VERSIONS = {"DaemonSet": "apps/v1", "ReplicaSet": "apps/v1", "StatefulSet": "apps/v1", "Job": "batch/v1"}


def capture_text(name):
    """A capture's bytes as text, unchanged."""
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        return handle.read()


def _uid(*parts):
    """A fixed UUID for an edited object (so two objects made from one capture do not share the captured uid)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "zhisuan-lab:" + "/".join(parts)))


# --- nodes --------------------------------------------------------------------------------------------------------

def node(name=CAPTURED_NODE):
    """The captured Node ``nori``; any other ``name`` is the captured Node after ``rename_node``."""
    obj = copy.deepcopy(json.loads(capture_text(NODES))["items"][0])
    return obj if name == CAPTURED_NODE else rename_node(obj, name)


def rename_node(obj, name):
    """The node's identity: ``metadata.name``, ``metadata.uid`` (a fixed UUID of the name), the label
    ``kubernetes.io/hostname``, the annotation ``rke2.io/hostname``, ``spec.providerID`` (``rke2://<name>``) and the
    ``Hostname`` address. Everything else (addresses, images, GPU labels) stays as captured."""
    obj["metadata"]["name"] = name
    obj["metadata"]["uid"] = _uid("node", name)
    obj["metadata"]["labels"]["kubernetes.io/hostname"] = name
    obj["metadata"]["annotations"]["rke2.io/hostname"] = name
    obj["spec"]["providerID"] = "rke2://" + name
    for address in obj["status"]["addresses"]:
        if address["type"] == "Hostname":
            address["address"] = name
    return obj


def _condition(obj, kind):
    return next(c for c in obj["status"]["conditions"] if c["type"] == kind)


def _add_taints(obj, key, effects):
    taints = obj["spec"].setdefault("taints", [])
    for effect in effects:
        taint = {"key": key, "effect": effect}
        if effect == "NoExecute":
            taint["timeAdded"] = EDIT_TIME
        taints.append(taint)


def set_ready(obj, status, reason=None, message=None):
    """The node's Ready condition as the API shows it when the node is not ready.

    ``"False"`` (the kubelet reports NotReady): Ready ``status False``, ``reason`` (default ``KubeletNotReady``),
    ``message``, ``lastHeartbeatTime``/``lastTransitionTime`` EDIT_TIME; and the taints the node lifecycle controller
    adds, ``node.kubernetes.io/not-ready`` NoSchedule and NoExecute.
    ``"Unknown"`` (the kubelet stopped posting): like the node lifecycle controller, Ready, MemoryPressure,
    DiskPressure and PIDPressure become ``Unknown``, reason ``NodeStatusUnknown``, message ``Kubelet stopped posting
    node status.``, lastTransitionTime EDIT_TIME (the heartbeat stays the last captured one); taints
    ``node.kubernetes.io/unreachable`` NoSchedule and NoExecute."""
    if status == "False":
        cond = _condition(obj, "Ready")
        cond.update(status="False", reason=reason or "KubeletNotReady", lastHeartbeatTime=EDIT_TIME, lastTransitionTime=EDIT_TIME)
        if message is not None:
            cond["message"] = message
        _add_taints(obj, "node.kubernetes.io/not-ready", ("NoSchedule", "NoExecute"))
    elif status == "Unknown":
        for kind in ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure"):
            _condition(obj, kind).update(status="Unknown", reason=reason or "NodeStatusUnknown",
                                         message=message or "Kubelet stopped posting node status.", lastTransitionTime=EDIT_TIME)
        _add_taints(obj, "node.kubernetes.io/unreachable", ("NoSchedule", "NoExecute"))
    else:
        raise ValueError("set_ready: status must be 'False' or 'Unknown', not %r" % (status,))
    return obj


def set_gpus(obj, capacity=None, allocatable=None, count=None):
    """``status.capacity`` / ``status.allocatable`` ``nvidia.com/gpu`` (the device plugin's numbers, strings as the
    API writes quantities) and the GPU feature discovery label ``nvidia.com/gpu.count`` (the GPUs the node has)."""
    if capacity is not None:
        obj["status"]["capacity"]["nvidia.com/gpu"] = str(capacity)
    if allocatable is not None:
        obj["status"]["allocatable"]["nvidia.com/gpu"] = str(allocatable)
    if count is not None:
        obj["metadata"]["labels"]["nvidia.com/gpu.count"] = str(count)
    return obj


def set_gfd(obj, product=None, driver=None, cuda=None):
    """The GPU feature discovery labels: ``nvidia.com/gpu.product``; the driver version ``X.Y.Z`` into
    ``nvidia.com/cuda.driver-version.{full,major,minor,revision}`` and ``nvidia.com/cuda.driver.{major,minor,rev}``;
    the CUDA version ``X.Y`` into ``nvidia.com/cuda.runtime-version.{full,major,minor}`` and
    ``nvidia.com/cuda.runtime.{major,minor}`` - the same labels the captured node carries, kept consistent."""
    labels = obj["metadata"]["labels"]
    if product is not None:
        labels["nvidia.com/gpu.product"] = product
    if driver is not None:
        major, minor, rev = (driver.split(".") + ["", ""])[:3]
        labels.update({"nvidia.com/cuda.driver-version.full": driver, "nvidia.com/cuda.driver-version.major": major,
                       "nvidia.com/cuda.driver-version.minor": minor, "nvidia.com/cuda.driver-version.revision": rev,
                       "nvidia.com/cuda.driver.major": major, "nvidia.com/cuda.driver.minor": minor,
                       "nvidia.com/cuda.driver.rev": rev})
    if cuda is not None:
        major, minor = (cuda.split(".") + [""])[:2]
        labels.update({"nvidia.com/cuda.runtime-version.full": cuda, "nvidia.com/cuda.runtime-version.major": major,
                       "nvidia.com/cuda.runtime-version.minor": minor, "nvidia.com/cuda.runtime.major": major,
                       "nvidia.com/cuda.runtime.minor": minor})
    return obj


# --- pods ---------------------------------------------------------------------------------------------------------

def captured_pod(name):
    """A deep copy of one pod of the PodList capture (``vector-jldbs`` or ``kube-proxy-hfqwt``), unchanged."""
    for item in json.loads(capture_text(PODS))["items"]:
        if item["metadata"]["name"] == name:
            return copy.deepcopy(item)
    raise KeyError("no pod %r in %s" % (name, PODS))


def relabel(pod, namespace, name, node_name, owner_kind=None, owner_name=None, labels=None):
    """The pod's identity and place: ``metadata.namespace``, ``metadata.name``, ``metadata.generateName`` (the
    owner's name and ``-``), ``metadata.uid`` (a fixed UUID of namespace/name), ``metadata.labels`` (``labels``; for a
    DaemonSet owner also the captured ``controller-revision-hash`` and ``pod-template-generation``), the controller
    ``ownerReferences`` entry (the captured one with ``apiVersion``, ``kind``, ``name`` and ``uid`` changed; removed
    when ``owner_kind`` is None), ``spec.nodeName`` and the node name in the captured node affinity. Containers,
    volumes and status stay as captured."""
    meta = pod["metadata"]
    captured_labels = meta.get("labels", {})
    meta.update(namespace=namespace, name=name, uid=_uid("pod", namespace, name))
    new_labels = dict(labels or {})
    if owner_kind == "DaemonSet":
        for key in ("controller-revision-hash", "pod-template-generation"):
            if key in captured_labels:
                new_labels.setdefault(key, captured_labels[key])
    meta["labels"] = new_labels
    if owner_kind:
        owner_name = owner_name or name.rsplit("-", 1)[0]
        meta["generateName"] = owner_name + "-"
        ref = meta["ownerReferences"][0]
        ref.update(apiVersion=API_VERSIONS.get(owner_kind, "apps/v1"), kind=owner_kind, name=owner_name,
                   uid=_uid(owner_kind, namespace, owner_name))
        meta["ownerReferences"] = [ref]
    else:
        meta.pop("generateName", None)
        meta.pop("ownerReferences", None)
    pod["spec"]["nodeName"] = node_name
    for term in pod["spec"].get("affinity", {}).get("nodeAffinity", {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution", {}).get("nodeSelectorTerms", []):
        for field in term.get("matchFields", []):
            if field.get("key") == "metadata.name":
                field["values"] = [node_name]
    return pod


def node_image(tagged):
    """(``name:tag``, ``name@sha256:...``) of an image the captured node lists in ``status.images``."""
    for image in node()["status"]["images"]:
        if tagged in image["names"]:
            return tagged, next(n for n in image["names"] if "@sha256:" in n)
    raise KeyError("the captured node has no image %r" % tagged)


def rename_containers(pod, names, images=None):
    """Container names (``{captured: new}``) in ``spec.initContainers``/``spec.containers`` and in the matching
    ``status.initContainerStatuses``/``containerStatuses``; ``images`` (``{new name: name:tag}``) sets the spec's
    ``image`` and the status's ``image``/``imageID`` to an image of the captured node (``node_image``)."""
    images = images or {}
    for spec_key, status_key in (("initContainers", "initContainerStatuses"), ("containers", "containerStatuses")):
        for entry in pod["spec"].get(spec_key, []) + pod["status"].get(status_key, []):
            entry["name"] = names.get(entry["name"], entry["name"])
            if entry["name"] in images:
                tagged, digest = node_image(images[entry["name"]])
                entry["image"] = tagged
                if "imageID" in entry:
                    entry["imageID"] = digest
    return pod


def gpu_pod(component, node_name, suffix="x7k2p"):
    """A Running pod of the GPU platform on ``node_name``: the real pod ``GPU_PLATFORM[component]['base']``,
    ``relabel``-ed into the component's namespace as a pod ``<daemonset>-<suffix>`` of its DaemonSet (label ``app``
    = the DaemonSet), its containers renamed to the component's (and its images set to the operator's images on the
    captured node). Its container statuses (states, restart counts, times) are the captured ones."""
    spec = GPU_PLATFORM[component]
    pod = captured_pod(spec["base"])
    relabel(pod, spec["namespace"], "%s-%s" % (spec["daemonset"], suffix), node_name, owner_kind="DaemonSet",
            owner_name=spec["daemonset"], labels={"app": spec["daemonset"]})
    return rename_containers(pod, spec["containers"], spec["images"])


def workload_pod(namespace, name, node_name, owner_kind="ReplicaSet", owner_name=None, labels=None):
    """A Running workload pod on ``node_name``: the one-container real pod ``WORKLOAD_BASE`` after ``relabel``."""
    return relabel(captured_pod(WORKLOAD_BASE), namespace, name, node_name, owner_kind, owner_name, labels)


def _status(pod, name):
    for key in ("initContainerStatuses", "containerStatuses"):
        for entry in pod["status"].get(key, []):
            if entry["name"] == name:
                return entry
    raise KeyError("pod %s has no container %r" % (pod["metadata"]["name"], name))


def _pod_conditions(pod, updates):
    for cond in pod["status"]["conditions"]:
        if cond["type"] in updates:
            cond.update(updates[cond["type"]], lastTransitionTime=EDIT_TIME)


def crash_loop(pod, container=None, restarts=12, exit_code=1, reason="Error"):
    """A container in CrashLoopBackOff, as the kubelet writes it: its captured running state becomes ``lastState``
    ``terminated`` (``exitCode``, ``reason``, the captured ``startedAt`` and ``containerID``, ``finishedAt``
    EDIT_TIME); ``state`` = ``waiting`` ``CrashLoopBackOff`` with the kubelet's ``back-off 5m0s restarting failed
    container=... pod=...`` message; ``ready``/``started`` false; ``restartCount`` = ``restarts``; the pod's Ready and
    ContainersReady conditions False (``ContainersNotReady``). The phase stays Running, as the API shows it.
    ``container``: default the first container."""
    meta = pod["metadata"]
    name = container or pod["status"]["containerStatuses"][0]["name"]
    entry = _status(pod, name)
    running = entry["state"].get("running", {})
    term = {"exitCode": exit_code, "reason": reason, "startedAt": running.get("startedAt", EDIT_TIME), "finishedAt": EDIT_TIME}
    if entry.get("containerID"):
        term["containerID"] = entry["containerID"]
    entry.update(lastState={"terminated": term}, ready=False, started=False, restartCount=restarts, state={"waiting": {
        "reason": "CrashLoopBackOff",
        "message": "back-off 5m0s restarting failed container=%s pod=%s_%s(%s)" % (name, meta["name"], meta["namespace"], meta["uid"])}})
    unready = {"status": "False", "reason": "ContainersNotReady", "message": "containers with unready status: [%s]" % name}
    _pod_conditions(pod, {"Ready": unready, "ContainersReady": unready})
    return pod


def init_error(pod, container=None, restarts=3, exit_code=1):
    """An init container that failed, as the kubelet writes it: its captured ``terminated`` state keeps its times
    and ``containerID`` with ``reason`` Error and ``exitCode``; ``restartCount`` = ``restarts``; ``ready`` false. The
    main containers wait (``waiting`` PodInitializing, never started: no ``containerID``, ``imageID`` empty); phase
    Pending; the pod's Initialized condition False (``ContainersNotInitialized``), Ready/ContainersReady False
    (``ContainersNotReady``).
    ``container``: default the first init container."""
    name = container or pod["status"]["initContainerStatuses"][0]["name"]
    entry = _status(pod, name)
    entry["state"]["terminated"].update(reason="Error", exitCode=exit_code)
    entry.update(ready=False, restartCount=restarts)
    for main in pod["status"]["containerStatuses"]:
        main.update(state={"waiting": {"reason": "PodInitializing"}}, lastState={}, ready=False, started=False, restartCount=0,
                    imageID="")
        main.pop("containerID", None)
    pod["status"]["phase"] = "Pending"
    unready = {"status": "False", "reason": "ContainersNotReady", "message": "containers with unready status: [%s]"
               % " ".join(main["name"] for main in pod["status"]["containerStatuses"])}
    _pod_conditions(pod, {"Initialized": {"status": "False", "reason": "ContainersNotInitialized",
                                          "message": "containers with incomplete status: [%s]" % name},
                          "Ready": unready, "ContainersReady": unready})
    return pod


def finished(pod, phase):
    """A pod that ran to its end (a job's pod): ``phase`` Succeeded or Failed; every main container's captured
    running state becomes ``terminated`` (exit 0 Completed, or exit 1 Error; the captured ``startedAt`` and
    ``containerID``, ``finishedAt`` EDIT_TIME), ``ready``/``started`` false; Ready and ContainersReady False with the
    kubelet's reason ``PodCompleted``."""
    if phase not in ("Succeeded", "Failed"):
        raise ValueError("finished: phase must be Succeeded or Failed, not %r" % (phase,))
    code, reason = (0, "Completed") if phase == "Succeeded" else (1, "Error")
    for entry in pod["status"]["containerStatuses"]:
        running = entry["state"].get("running", {})
        term = {"exitCode": code, "reason": reason, "startedAt": running.get("startedAt", EDIT_TIME), "finishedAt": EDIT_TIME}
        if entry.get("containerID"):
            term["containerID"] = entry["containerID"]
        entry.update(state={"terminated": term}, ready=False, started=False)
    pod["status"]["phase"] = phase
    done = {"status": "False", "reason": "PodCompleted"}
    _pod_conditions(pod, {"Ready": done, "ContainersReady": done})
    return pod


def pod_list(*pods):
    """The pods in the captured PodList's envelope (``kind``, ``apiVersion``, ``metadata`` as captured)."""
    doc = json.loads(capture_text(PODS))
    doc["items"] = list(pods)
    return doc
