#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: alertmanager_silence
short_description: Silence a node's alerts in Alertmanager while it is repaired
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - With O(state=present), creates the node's silences through Alertmanager's API v2 - one matching
    C(Hostname="<node>") (dcgm-exporter's series) and one matching V(instance=~"<node>(:[0-9]+\)?")
    (node_exporter's) - made by C(zhisuan.ops), with the cause and the run id in the comment.
  - With O(state=absent), expires every active or pending silence C(zhisuan.ops) made for the node.
  - An Alertmanager that cannot be reached or refuses is a warning and RV(ok=false) with RV(msg), never a failed
    task.
extends_documentation_fragment:
  - zhisuan.ops._attributes
  - zhisuan.ops._attributes.controller
attributes:
  check_mode:
    support: full
    details:
      - In check mode nothing is sent.
  diff_mode:
    support: none
options:
  url:
    description: Alertmanager's base URL (C(zhisuan_alertmanager_url)).
    type: str
    required: true
  node:
    description: The node (its inventory name, as the monitoring role's series label it).
    type: str
    required: true
  state:
    description: Whether the node's silences should exist.
    type: str
    choices: [present, absent]
    default: present
  cause:
    description: Why the node is drained (the comment).
    type: str
    default: remediation
  run_id:
    description: The remediation run (the comment).
    type: str
    default: unknown
  duration:
    description: Seconds the silences last at most (a repair that fails leaves them to an operator until then).
    type: int
    default: 86400
  timeout:
    description: Seconds each request may take.
    type: int
    default: 10
  validate_certs:
    description: Whether TLS certificates are checked.
    type: bool
    default: true
  ca_path:
    description: A CA bundle to check them with.
    type: path
"""

EXAMPLES = r"""
- name: Silence node07 while it is repaired
  zhisuan.ops.alertmanager_silence:
    url: http://alertmanager.example:9093
    node: node07
    cause: gpu.ecc.volatile_uncorrectable
    run_id: 20260101T100000Z-remediate
  delegate_to: localhost

- name: Expire them on resume
  zhisuan.ops.alertmanager_silence:
    url: http://alertmanager.example:9093
    node: node07
    state: absent
  delegate_to: localhost
"""

RETURN = r"""
ok:
  description: Whether Alertmanager did what was asked.
  returned: always
  type: bool
msg:
  description: Why not, when RV(ok) is false.
  returned: when not ok
  type: str
silences:
  description: The ids of the silences created.
  returned: always
  type: list
  elements: str
expired:
  description: The ids of the silences expired.
  returned: always
  type: list
  elements: str
url:
  description: Alertmanager's URL as it may be shown (no credentials).
  returned: always
  type: str
"""
