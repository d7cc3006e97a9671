#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: redfish_log_info
short_description: Entries of the System Event Log and the vendor event logs of a BMC over Redfish
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Reads the log entries of the BMC's log services and returns them as RV(log), for the C(bmc) rules (critical
    entries since a time).
  - Which services hold the SEL and the vendor's event logs differs by vendor; the adapter knows (on DGX H100 the
    SEL is under the manager, on GB200 the GPU and CPU events are in the HGX baseboard's C(EventLog), on Dell the
    Lifecycle log C(Lclog) sits beside the C(Sel)).
  - Besides the services the adapter names, V(events) and V(all) read every other event log of every System,
    Manager and Chassis (a blade BMC keeps its event log under the Manager); dumps, diagnostics, the BMC journal,
    host console and POST code logs are not read. Pages (C(Members@odata.nextLink), C(@odata.nextLink)) are followed
    up to 200; a page that cannot be read keeps the entries read before it and is named in RV(log_errors).
  - Times are returned in UTC (C(YYYY-MM-DDTHH:MM:SS+00:00)) when they parse.
extends_documentation_fragment:
  - zhisuan.ops._redfish
  - zhisuan.ops._attributes
  - zhisuan.ops._attributes.info_module
  - zhisuan.ops._redfish.actiongroup_redfish
options:
  log_services:
    description:
      - V(sel), the System Event Log only (without a service of type SEL, the system's own logs).
      - V(events), the SEL and the vendor's event logs.
      - V(all), every log service of every manager and system, except diagnostic dump services.
    type: str
    choices: [sel, events, all]
    default: events
  since:
    description:
      - Leave out entries created before this time, an ISO 8601 time (V(2024-05-01T10:00:00Z); no offset means UTC)
        or a duration back from now (V(90m), V(24h), V(7d), V(2w)).
      - Entries whose time cannot be read are kept.
    type: str
seealso:
  - module: zhisuan.ops.redfish_info
"""

EXAMPLES = r"""
- name: SEL and vendor event log entries of the last day
  zhisuan.ops.redfish_log_info:
    bmc_address: "{{ bmc_address }}"
    bmc_username: "{{ bmc_username }}"
    bmc_password: "{{ bmc_password }}"
    since: 24h
  delegate_to: localhost
  register: sel

- name: Show the critical ones
  ansible.builtin.debug:
    msg: "{{ sel.log | selectattr('severity', 'equalto', 'Critical') | map(attribute='message') | list }}"
"""

RETURN = r"""
log:
  description: The entries, per log service in the order the BMC lists them.
  returned: success
  type: list
  elements: dict
  contains:
    id:
      description: The entry's C(Id).
      type: str
    created:
      description: When the entry was created, in UTC when it parses.
      type: str
      sample: "2024-06-11T05:13:00+00:00"
    severity:
      description: V(OK), V(Warning) or V(Critical), as the BMC rates it.
      type: str
    message:
      description: The message text.
      type: str
    message_id:
      description: The C(MessageId) (a registry id, or an IPMI event code on some BMCs).
      type: str
    source:
      description: V(SEL) for the System Event Log, else C(<owner>/<log service>) (V(HGX_Baseboard_0/EventLog)).
      type: str
    sensor:
      description: The C(SensorType) of an IPMI-style entry, else V(null).
      type: str
    class:
      description:
        - V(hardware), V(audit) (security, access, session, account and maintenance records - an entry of an audit,
          security or maintenance log, a C(Security.) or access-denied MessageId, a failed login) or
          V(informational) (Severity OK, task and update registries). Only V(hardware) entries count as Critical
          hardware events for the C(bmc) rules; an entry nothing says otherwise of is V(hardware).
      type: str
      choices: [hardware, audit, informational]
log_errors:
  description:
    - The logs that could not be read whole, each C(log) (the LogService), C(source), C(resource) (the page that
      failed), C(error) and C(entries_read) (the entries of the pages read before it, which are kept in RV(log)).
    - One entry with C(log) V(null) when no log service could be read at all.
    - The C(bmc) rules make each a C(bmc.readout.log) error, and C(bmc.sel.critical) is not a pass over an unread log.
  returned: success
  type: list
  elements: dict
vendor:
  description: The adapter that matched the service.
  returned: success
  type: str
errors:
  description: The resources that could not be read, C(resource) and C(error).
  returned: success
  type: list
  elements: dict
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._base import run_module
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.argspec import REDFISH_ARGSPEC
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.logs import CHOICES, run


def main():
    argument_spec = dict(
        log_services=dict(type="str", choices=list(CHOICES), default="events"),
        since=dict(type="str"),
    )
    run_module(argument_spec, run, shared=(REDFISH_ARGSPEC,))


if __name__ == "__main__":
    main()
