# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
name: storage_aggregate
short_description: Cluster storage throughput of a concurrent fio run, and its checks against the site's floors
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Sums, per fio job, each direction's bandwidth and IOPS over the nodes that ran it at the same time (the C(storage)
    facts of M(zhisuan.ops.fio_run)); the cluster figures are the best job's sums. Nodes whose job failed are listed
    and not counted.
  - Returns the C(cluster.storage.aggregate) data of C(results.json) and the cluster checks
    C(storage.aggregate.<metric>) (host C(cluster)).
options:
  _input:
    description: A mapping of host name to that host's C(storage) facts (hosts without facts may map to C({})).
    type: dict
    required: true
  thresholds:
    description:
      - C(zhisuan_thresholds.storage); its C(aggregate) section may set C(read_bw_mib_min), C(write_bw_mib_min),
        C(read_iops_min), C(write_iops_min). Without a floor a metric is a pass that records the value.
    type: dict
    default: {}
"""

EXAMPLES = r"""
- name: Aggregate the concurrent fio run of every host of the play
  ansible.builtin.set_fact:
    storage_cluster: >-
      {{ dict(ansible_play_hosts_all | zip(ansible_play_hosts_all | map('extract', hostvars)
         | map(attribute='check_storage_facts', default={})))
         | zhisuan.ops.storage_aggregate(zhisuan_thresholds.storage | default({})) }}
  run_once: true
"""

RETURN = r"""
_value:
  description: C(aggregate) (C(read_bw_mib), C(write_bw_mib), C(read_iops), C(write_iops), C(nodes), C(hosts),
    C(failed_nodes), the job behind each figure and per-job sums under C(jobs)) and C(checks) (check records).
  type: dict
"""

from ansible.errors import AnsibleFilterError
from ansible.module_utils.common.collections import is_string

from ansible_collections.zhisuan.ops.plugins.module_utils._judge import storage as storage_rules


def storage_aggregate(hosts_storage, thresholds=None):
    if not isinstance(hosts_storage, dict) or is_string(hosts_storage):
        raise AnsibleFilterError("storage_aggregate: the input must be a mapping of host to storage facts, got %s"
                                 % type(hosts_storage).__name__)
    if thresholds is not None and not isinstance(thresholds, dict):
        raise AnsibleFilterError("storage_aggregate: thresholds must be a mapping, got %s" % type(thresholds).__name__)
    data = storage_rules.aggregate(dict(hosts_storage))
    try:
        checks = storage_rules.judge_aggregate(data, thresholds or {})
    except ValueError as exc:
        raise AnsibleFilterError("storage_aggregate: %s" % exc)
    return {"aggregate": data, "checks": checks}


class FilterModule(object):

    def filters(self):
        return {"storage_aggregate": storage_aggregate}
