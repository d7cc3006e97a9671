#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: k8s_node_info
short_description: The GPU platform of a Kubernetes cluster - nodes, GPU resources, labels, taints and GPU pods
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Reads the cluster once with C(kubectl get nodes -o json) and C(kubectl get pods --all-namespaces -o json) and
    returns, per node, Ready and the pressure conditions, C(nvidia.com/gpu) capacity and allocatable, the GPU
    feature-discovery labels (product, driver, CUDA), the taints and our drain annotation; and the pods of the GPU
    platform (GPU operator, device plugin, dcgm-exporter, feature discovery, driver, toolkit, validator, the network
    operator) with their status as C(kubectl get pods) prints it, readiness, restarts and each container's last state.
  - It collects facts only; the C(k8s) rules (filter P(zhisuan.ops.platform_checks#filter)) judge them.
  - Runs where C(kubectl) and the kubeconfig are, usually the controller (C(delegate_to) and C(run_once)).
extends_documentation_fragment:
  - zhisuan.ops._tool
  - zhisuan.ops._attributes
  - zhisuan.ops._attributes.info_module
options:
  kubectl_path:
    description:
      - The C(kubectl) program, a name looked up in PATH or an absolute path (the roles pass C(zhisuan_tools.kubectl)).
    type: str
    default: kubectl
  kubeconfig:
    description:
      - The kubeconfig file (C(--kubeconfig)); kubectl's default when omitted.
    type: path
  context:
    description:
      - The kubeconfig context (C(--context)); the current context when omitted.
    type: str
  src:
    description:
      - A saved C(kubectl get nodes) output to read instead of running O(kubectl_path) (a file a site sent) - C(-o json)
        or C(-o yaml) (C(kubectl), or C(oc) of OpenShift), detected from the content. A damaged YAML document is read
        item by item; an item it cannot read is a warning naming its line.
      - The pods are then read from O(pods_src), else not at all (RV(k8s.pods) is empty).
    type: path
  pods_src:
    description: A saved C(kubectl get pods --all-namespaces) output (C(-o json) or C(-o yaml)), with O(src).
    type: path
"""

EXAMPLES = r"""
- name: Read the GPU platform of the cluster
  zhisuan.ops.k8s_node_info:
    kubeconfig: /etc/zhisuan/kubeconfig
    context: gpu-prod
  delegate_to: localhost
  run_once: true
  register: k8s

- name: Read the nodes and pods a site sent as 'kubectl get ... -o yaml'
  zhisuan.ops.k8s_node_info:
    src: /var/tmp/case-1234/nodes.yaml
    pods_src: /var/tmp/case-1234/pods.yaml
  delegate_to: localhost
  run_once: true
  register: k8s
"""

RETURN = r"""
k8s:
  description: The cluster as read.
  returned: success
  type: dict
  contains:
    nodes:
      description: Node name -> C(name), C(ready), C(ready_reason), C(ready_message), C(conditions) (pressure type ->
        bool), C(unschedulable), C(drain_reason), C(taints), C(gpu_capacity), C(gpu_allocatable), C(gfd) (C(product),
        C(driver), C(cuda), C(count), C(present)), C(kubelet_version).
      type: dict
    pods:
      description: The GPU platform's pods - C(namespace), C(name), C(node), C(component), C(owner), C(phase),
        C(status), C(ready), C(restarts), C(containers) (C(name), C(init), C(ready), C(restarts), C(state), C(reason),
        C(exit_code), C(last_reason), C(last_exit_code), C(last_finished)).
      type: list
      elements: dict
    context:
      description: The context asked for (V(null) for the current one).
      type: str
    warnings:
      description: What could not be read of a damaged YAML output, each naming its line.
      type: list
      elements: str
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._base import run_module
from ansible_collections.zhisuan.ops.plugins.module_utils._sched.k8s_nodes import collect_k8s_facts


def main():
    run_module(dict(
        kubectl_path=dict(type="str", default="kubectl"),
        kubeconfig=dict(type="path"),
        context=dict(type="str"),
        src=dict(type="path"),
        pods_src=dict(type="path"),
    ), collect_k8s_facts)


if __name__ == "__main__":
    main()
