#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: publish
short_description: Publish a run's verdicts as Prometheus metrics and its findings as CloudEvents
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Reads a C(results.json) on the controller and renders its verdicts in the Prometheus text exposition format
    (C(zhisuan_check_status), C(zhisuan_node_status), C(zhisuan_checks), C(zhisuan_run_*); the series are in
    C(docs/metrics.md)). Returns each node's text for node_exporter's textfile collector (the results role writes
    it on the nodes when C(zhisuan_metrics_textfile_dir) is set).
  - With O(pushgateway_url), PUTs every node's series to the Pushgateway group C(/metrics/job/<job>/kind/<kind>).
  - With O(webhook_url), POSTs one CloudEvent 1.0 (structured mode, C(application/cloudevents+json)) per finding.
  - Every request has a timeout; a push or post that fails is a warning (RV(publish_warnings)), never a failed
    task.
extends_documentation_fragment:
  - zhisuan.ops._attributes
  - zhisuan.ops._attributes.controller
attributes:
  check_mode:
    support: full
    details:
      - In check mode the texts are rendered, nothing is sent.
  diff_mode:
    support: none
options:
  results:
    description: The run's C(results.json).
    type: path
    required: true
  pushgateway_url:
    description: The Pushgateway's base URL (C(zhisuan_metrics_pushgateway_url)); unset, nothing is pushed.
    type: str
  pushgateway_job:
    description: The job label of the Pushgateway group.
    type: str
    default: zhisuan
  webhook_url:
    description: The URL each finding is posted to (C(zhisuan_findings_webhook_url)); unset, nothing is posted.
    type: str
  webhook_statuses:
    description: The check statuses that are findings.
    type: list
    elements: str
    choices: [pass, warn, fail, error, skip]
    default: [warn, fail, error]
  max_findings:
    description: At most this many findings are posted (a warning says how many were left out).
    type: int
    default: 1000
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
- name: Publish the run's verdicts
  zhisuan.ops.publish:
    results: reports/out/latest/results.json
    pushgateway_url: http://pushgateway.example:9091
    webhook_url: https://tickets.example/hooks/zhisuan
  run_once: true
  delegate_to: localhost
"""

RETURN = r"""
textfile_name:
  description: The textfile collector file of the run's kind, C(zhisuan_<kind>.prom).
  returned: always
  type: str
textfiles:
  description: Each node's exposition text.
  returned: always
  type: dict
pushed:
  description: The Pushgateway group URL pushed to (null when nothing was pushed).
  returned: always
  type: str
findings_sent:
  description: How many findings the webhook took.
  returned: always
  type: int
findings_failed:
  description: How many findings could not be posted.
  returned: always
  type: int
publish_warnings:
  description: What could not be published, in words.
  returned: always
  type: list
  elements: str
"""
