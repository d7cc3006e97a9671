#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: remediation_history
short_description: Append remediation actions to the history file
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Appends one JSON object per remediation action to C(<dir>/remediation.jsonl) on the controller (append only,
    one write per call, then fsync). The KPIs (time to repair, repairs per cause, RMA rate) are computed from it.
  - Each record is checked (C(time), C(run_id), C(node), C(cause), C(action), C(outcome) required; ISO times) and
    gets its durations (C(detect_to_action_s), C(action_s), C(detect_to_repair_s)). The shape is in
    C(docs/remediation.md).
extends_documentation_fragment:
  - zhisuan.ops._attributes
  - zhisuan.ops._attributes.controller
attributes:
  check_mode:
    support: full
    details:
      - In check mode the records are made and returned, nothing is written.
  diff_mode:
    support: none
options:
  dir:
    description: The history directory (C(zhisuan_history_dir), by default C(reports/history)).
    type: path
    required: true
  records:
    description:
      - The records - C(time), C(run_id), C(source_run_id), C(node), C(cause), C(component), C(remedy), C(action),
        C(mode), C(outcome), C(message), C(detected), C(started), C(finished), C(resumed), C(verification),
        C(scheduler), C(evidence), C(ticket).
    type: list
    elements: dict
    required: true
"""

EXAMPLES = r"""
- name: Record what was done
  zhisuan.ops.remediation_history:
    dir: reports/history
    records:
      - {time: "2026-01-01T10:10:00+00:00", run_id: r2, node: node08, cause: xid.79.events, action: power_cycle,
         outcome: repaired, detected: "2026-01-01T10:00:00+00:00", resumed: "2026-01-01T10:09:00+00:00"}
  run_once: true
  delegate_to: localhost
"""

RETURN = r"""
path:
  description: The history file appended to (null in check mode).
  returned: always
  type: str
records:
  description: The records as written, with C(schema) and C(durations).
  returned: always
  type: list
  elements: dict
"""
