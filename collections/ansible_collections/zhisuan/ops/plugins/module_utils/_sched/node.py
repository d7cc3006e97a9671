# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""The runner of zhisuan.ops.scheduler_node: pick the backend, run common.manage, report."""

import os

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ZhisuanError
from ansible_collections.zhisuan.ops.plugins.module_utils._sched.common import Request, manage
from ansible_collections.zhisuan.ops.plugins.module_utils._sched.k8s import Kubernetes
from ansible_collections.zhisuan.ops.plugins.module_utils._sched.slurm import Slurm

# what the module returns in ``node`` (the backends read more; the rest stays out of the result)
NODE_KEYS = ("name", "scheduler", "state", "drain", "drained_by_us", "drained_by_other", "reason", "reason_user",
             "reason_time", "jobs_running", "raw_state", "responding")


def squeue_path(params):
    """squeue: the option, else the squeue next to an scontrol given as a path, else squeue in PATH."""
    if params.get("squeue_path"):
        return params["squeue_path"]
    scontrol = params.get("scontrol_path") or "scontrol"
    if os.sep in scontrol:
        return os.path.join(os.path.dirname(scontrol), "squeue")
    return "squeue"


def backend_for(params):
    if params["scheduler"] == "kubernetes":
        return Kubernetes(params["kubectl_path"], kubeconfig=params.get("kubeconfig"), timeout=params["timeout"])
    return Slurm(params["scontrol_path"], squeue_path(params), timeout=params["timeout"])


def _public(node):
    return dict((key, node.get(key)) for key in NODE_KEYS)


def scheduler_node(module):
    params = module.params
    req = Request(params["name"], params["state"] or "info", reason=params.get("reason"), tag=params["tag"],
                  wait_drained=params["wait_drained"], timeout=params["timeout"], strict=params["strict"],
                  check_mode=module.check_mode)
    try:
        result = manage(backend_for(params), req, warn=module.warn)
    except ZhisuanError as exc:
        if exc.result is not None:
            exc.result = _shown(exc.result)
        raise
    return _shown(result)


def _shown(result):
    """``result`` with only the public keys of its node and diff."""
    result = dict(result)
    result["node"] = _public(result["node"])
    if "diff" in result:
        result["diff"] = {"before": _public(result["diff"]["before"]), "after": _public(result["diff"]["after"])}
    return result
