#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: ipmi_info
short_description: BMC facts over IPMI with ipmitool - power, sensors, power supplies, fans, FRU, firmware, SEL
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Reads one BMC over IPMI LAN with C(ipmitool) (C(mc info), C(chassis status), C(fru print), C(sensor),
    C(sdr elist), C(sel elist)) and returns the same normalised BMC facts as the Redfish modules, for BMCs
    without Redfish (host var C(bmc_protocol=ipmi)). It collects facts only; the C(zhisuan.ops.judge) rules decide.
  - Values the BMC does not report are V(null). IPMI has no processor, memory, PCIe, NIC or drive inventory, so
    those lists are V(null).
  - Sensor status words are normalised to V(OK), V(Warning), V(Critical) or V(null) (C(ok) -> OK, C(nc) ->
    Warning, C(cr) and C(nr) -> Critical, C(na) and C(ns) -> null).
  - C(mc info) must work (it is the first contact with the BMC). When one of the other commands fails or prints
    something unreadable, the rest is still returned and RV(bmc.errors) names the command and why.
extends_documentation_fragment:
  - zhisuan.ops._ipmi
  - zhisuan.ops._ipmi.actiongroup
  - zhisuan.ops._attributes
  - zhisuan.ops._attributes.info_module
options: {}
seealso:
  - module: zhisuan.ops.ipmi_power
  - name: ipmitool
    description: The ipmitool manual page.
    link: https://github.com/ipmitool/ipmitool
notes:
  - O(timeout) applies to each of the six ipmitool calls.
  - SEL times are read in UTC (ipmitool runs with C(TZ=UTC)); entries logged before the BMC's clock was set
    (C(Pre-Init)) have RV(log[].created=null).
"""

EXAMPLES = r"""
- name: Read the BMC of each node over IPMI
  zhisuan.ops.ipmi_info:
    bmc_address: "{{ bmc_address }}"
    bmc_username: "{{ bmc_username }}"
    bmc_password: "{{ bmc_password }}"
    ipmitool_path: "{{ zhisuan_tools.ipmitool | default('ipmitool') }}"
  delegate_to: localhost
  register: ipmi

- name: Set the connection once for every IPMI module of the play
  module_defaults:
    group/zhisuan.ops.ipmi:
      bmc_address: "{{ bmc_address }}"
      bmc_username: "{{ bmc_username }}"
      bmc_password: "{{ bmc_password }}"
      timeout: 30
  block:
    - name: Read the BMC
      zhisuan.ops.ipmi_info:
      delegate_to: localhost
      register: ipmi

- name: Show the sensors that are not OK
  ansible.builtin.debug:
    msg: "{{ ipmi.bmc.sensors | rejectattr('health', 'in', ['OK', none]) | map(attribute='name') | list }}"

- name: Show the critical SEL entries
  ansible.builtin.debug:
    msg: "{{ ipmi.log | selectattr('severity', 'equalto', 'Critical') | map(attribute='message') | list }}"
"""

RETURN = r"""
bmc:
  description: The BMC facts; the full field list is in the collection's C(docs/bmc-facts.md).
  returned: success
  type: dict
  contains:
    protocol:
      description: Always V(ipmi).
      type: str
      sample: ipmi
    address:
      description: The BMC address contacted (O(bmc_address)).
      type: str
    vendor:
      description: Vendor from the IANA number of C(mc info) (V(supermicro), V(dell), V(hpe), V(lenovo), V(nvidia),
        V(inspur)), else V(generic).
      type: str
      sample: supermicro
    manager:
      description: C(id) (V(BMC)), C(model) (ipmitool's product name, V(null) when unknown), C(firmware_version),
        C(health).
      type: dict
    system:
      description:
        - C(manufacturer), C(model), C(serial) from FRU 0 (product area, else board area); C(power_state) V(On) or
          V(Off) from C(chassis status); C(health) from its fault flags. C(id), C(sku), C(uuid) and
          C(bios_version) are V(null) over IPMI.
      type: dict
    chassis:
      description: One entry from FRU 0's chassis area and C(chassis status) (C(health) V(Warning) on intrusion).
      type: list
      elements: dict
    power_supplies:
      description: One entry per power-supply entity of the SDR (C(10.n)), health from its status sensor's states,
        printed alone or after its reading (C(Failure detected), C(Power Supply AC lost) -> V(Critical);
        C(Predictive failure) -> V(Warning)); the supplies' redundancy sensor is one entry (C(Non-Redundant) or
        C(Redundancy Lost) -> V(Warning), C(Insufficient Resources) -> V(Critical)); an entity with only temperature
        sensors is no supply.
      type: list
      elements: dict
    fans:
      description: Fan sensors (C(id), C(name), C(reading), C(units) V(RPM) or V(Percent), C(health), C(state)).
      type: list
      elements: dict
    sensors:
      description: Every threshold sensor of C(ipmitool sensor) with C(kind), C(part) (V(cpu), V(dimm), V(gpu),
        V(psu), V(fan), V(drive) or V(null), from the vendor's sensor name), C(reading), C(units) (C(Cel), C(V),
        C(A), C(W), C(RPM), C(%)), C(health) and C(thresholds) (C(lower_fatal) ... C(upper_fatal)).
      type: list
      elements: dict
    fru:
      description: One entry per FRU device (C(id), C(product), C(manufacturer), C(serial), C(part_number)).
      type: list
      elements: dict
    errors:
      description:
        - Commands that failed or printed something unreadable (C(resource), C(error)).
        - Lines of an output that no reader understood (C(Unable to send command) between the rows, a row cut off)
          are one entry for the command, counted and the first five named; the rows around them are read.
      type: list
      elements: dict
    processors:
      description: Always V(null) (IPMI has no such inventory); so are C(gpus), C(memory), C(pcie_devices), C(nics),
        C(drives).
      type: list
firmware:
  description: The BMC firmware (C(mc info) Firmware Revision), the only firmware IPMI reports.
  returned: success
  type: list
  elements: dict
  sample: [{id: BMC, name: BMC Firmware, version: "1.02", component: bmc, updateable: null}]
log:
  description:
    - The SEL (C(ipmitool sel elist)), oldest first; V(null) when it could not be read.
    - Reads the row forms of ipmitool 1.8.18 and 1.8.19 and of other vendors' BMCs (C(Pre-Init) times, sensor
      numbers instead of names, OEM timestamped and non-timestamped records; see docs/bmc-facts.md).
  returned: success
  type: list
  elements: dict
  contains:
    id:
      description: The SEL record id as ipmitool prints it (hexadecimal).
      type: str
      sample: "4"
    created:
      description: When the BMC logged it (ISO 8601, UTC); V(null) for entries logged before its clock was set.
      type: str
      sample: "2026-11-30T21:47:26+00:00"
    severity:
      description:
        - V(Critical) for failures, critical and non-recoverable threshold crossings, uncorrectable errors and AC
          loss; V(Warning) for non-critical crossings, predictive failures, correctable errors, lost redundancy and
          intrusion; V(OK) for other and for deasserted events; V(null) for OEM records (never decoded) and for
          events ipmitool prints no event text for.
      type: str
      sample: Critical
    class:
      description:
        - V(audit) for Session Audit records; V(informational) for records of the OS, boot progress, buttons, power
          states and the log itself, and for OEM records written under an OS vendor's IANA number (Microsoft);
          V(hardware) for every other record. The V(bmc) rules count Critical V(hardware) entries only.
      type: str
      sample: hardware
    oem:
      description: Whether the record is an OEM record (types C0h-FFh; its data is the vendor's and is not decoded).
      type: bool
      sample: false
    manufacturer:
      description: An OEM record's manufacturer, named from its IANA number where the collection knows it, else
        V(null).
      type: str
      sample: Quanta
    part:
      description: The part the record is about (V(cpu), V(dimm), V(gpu), V(psu), V(fan), V(drive)), from its sensor
        type, else its sensor's name; V(null) when neither names one and for OEM records.
      type: str
      sample: dimm
    message:
      description: The record's columns after its time, as ipmitool prints them.
      type: str
      sample: "Temperature GPU1 Temp | Upper Critical going high | Asserted | Reading 89 > Threshold 87 degrees C"
    message_id:
      description: Always V(null) over IPMI.
      type: str
    source:
      description: Always V(SEL).
      type: str
      sample: SEL
    sensor:
      description: The sensor's name (V(null) when the record names none).
      type: str
      sample: GPU1 Temp
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._base import run_module
from ansible_collections.zhisuan.ops.plugins.module_utils._ipmi.argv import IPMI_ARGSPEC
from ansible_collections.zhisuan.ops.plugins.module_utils._ipmi.collect import collect_ipmi_facts


def main():
    run_module({}, collect_ipmi_facts, shared=(IPMI_ARGSPEC,))


if __name__ == "__main__":
    main()
