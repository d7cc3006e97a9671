#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: bmc_discover
short_description: Find the BMCs of a fresh rack - which addresses answer Redfish and IPMI, and what they are
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Probes every address of the given ranges on the Redfish and IPMI ports - an HTTPS C(GET /redfish/v1) (the service
    root needs no credentials) and the IPMI RMCP presence ping (ASF, UDP) - in parallel, each probe with a timeout.
  - With credentials, reads the first Redfish system's manufacturer, model and serial number, and reports whether
    the credentials work. It only reads; it never changes a BMC.
  - Run it on the controller (delegated to localhost, or in a play on localhost) with the management network in reach.
extends_documentation_fragment:
  - zhisuan.ops._attributes
  - zhisuan.ops._attributes.info_module
options:
  cidr:
    description: Address ranges to probe (C(10.20.1.0/24), a single address, or a list of both).
    type: list
    elements: str
    required: true
  redfish_ports:
    description: TCP ports to probe for Redfish (HTTPS). Empty skips Redfish.
    type: list
    elements: int
    default: [443]
  ipmi_ports:
    description: UDP ports to probe with the RMCP presence ping. Empty skips IPMI.
    type: list
    elements: int
    default: [623]
  bmc_username:
    description: Redfish user, to read the system's vendor, model and serial (optional).
    type: str
  bmc_password:
    description: Redfish password (never returned or logged).
    type: str
  validate_certs:
    description: Validate the BMCs' TLS certificates. Fresh BMCs usually have self-signed ones - give O(ca_path).
    type: bool
    default: true
  ca_path:
    description: CA bundle that signed the BMCs' certificates.
    type: path
  timeout:
    description: Seconds each probe may take.
    type: float
    default: 2.0
  workers:
    description: Probes in flight at once.
    type: int
    default: 32
  max_addresses:
    description: Refuse ranges larger than this (a C(/16) by mistake is 65536 addresses).
    type: int
    default: 4096
requirements:
  - netaddr (on the controller)
"""

EXAMPLES = r"""
- name: Find the BMCs of rack 7
  zhisuan.ops.bmc_discover:
    cidr: 10.20.7.0/24
    bmc_username: admin
    bmc_password: "{{ vault_bmc_password }}"
    ca_path: /etc/pki/bmc-ca.pem
  delegate_to: localhost
  run_once: true
  register: rack7

- name: Show what answered
  ansible.builtin.debug:
    msg: "{{ rack7.bmcs | map(attribute='address') | list }}"
"""

RETURN = r"""
bmcs:
  description: One entry per address, port and protocol that answered, sorted by address.
  returned: success
  type: list
  elements: dict
  contains:
    address:
      description: The address that answered.
      type: str
    port:
      description: The port.
      type: int
    protocol:
      description: C(redfish) or C(ipmi).
      type: str
    vendor:
      description: The Redfish service's vendor (or the system's manufacturer with credentials); null over IPMI.
      type: str
    model:
      description: The Redfish product (or the system's model with credentials).
      type: str
    serial:
      description: The system's serial number (Redfish, with credentials).
      type: str
    auth:
      description: C(ok), C(failed), C(unreadable), or null when no credentials were given (or IPMI).
      type: str
    tls_error:
      description: Present when a service answered with a TLS certificate that is not trusted (give O(ca_path)).
      type: str
probed:
  description: How many addresses were probed.
  returned: success
  type: int
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._base import run_module
from ansible_collections.zhisuan.ops.plugins.module_utils._discover import run_discovery


def main():
    argument_spec = dict(
        cidr=dict(type="list", elements="str", required=True),
        redfish_ports=dict(type="list", elements="int", default=[443]),
        ipmi_ports=dict(type="list", elements="int", default=[623]),
        bmc_username=dict(type="str"),
        bmc_password=dict(type="str", no_log=True),
        validate_certs=dict(type="bool", default=True),
        ca_path=dict(type="path"),
        timeout=dict(type="float", default=2.0),
        workers=dict(type="int", default=32),
        max_addresses=dict(type="int", default=4096),
    )
    run_module(argument_spec, run_discovery, shared=())


if __name__ == "__main__":
    main()
