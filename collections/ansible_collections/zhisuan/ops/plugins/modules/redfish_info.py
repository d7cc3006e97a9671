#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: redfish_info
short_description: Normalised facts of a server as its BMC sees it, over Redfish
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Reads the BMC's Redfish service and returns one normalised record, RV(bmc), ready for the C(bmc) and
    C(baseline) rules of the judge on the controller. It collects facts only; it never decides pass or fail.
  - The record has the host's system, its manager (the BMC), the chassis, processors (the GPUs among them, also in
    RV(bmc.gpus)), memory, PCIe devices, network adapters, drives, power supplies, fans and sensors (temperatures,
    voltages, power, fan speeds with their thresholds).
  - Thermal and power data are read from the older C(Thermal) and C(Power) resources where a chassis has them, and
    from C(ThermalSubsystem), C(PowerSubsystem) and C(Sensors) where it has only those; fans and power supplies come
    from the newer resources where the older ones do not list them.
  - A resource that cannot be read (HTTP 404, 500, ...) does not fail the task; it is listed in RV(bmc.errors) and
    the facts it would have filled are V(null). A list is V(null) when nothing could be looked at, and empty when the
    BMC lists nothing.
  - The same record comes from C(zhisuan.ops.ipmi_info) for BMCs without Redfish; the full field list is in the
    collection's C(docs/bmc-facts.md).
extends_documentation_fragment:
  - zhisuan.ops._redfish
  - zhisuan.ops._attributes
  - zhisuan.ops._attributes.info_module
  - zhisuan.ops._redfish.actiongroup_redfish
seealso:
  - module: zhisuan.ops.redfish_firmware_info
  - module: zhisuan.ops.redfish_log_info
  - name: DMTF Redfish
    description: The Redfish specification (DSP0266) and schema guide (DSP2046).
    link: https://www.dmtf.org/standards/redfish
"""

EXAMPLES = r"""
- name: Read the BMC facts of each GPU node
  zhisuan.ops.redfish_info:
    bmc_address: "{{ bmc_address }}"
    bmc_username: "{{ bmc_username }}"
    bmc_password: "{{ bmc_password }}"
    ca_path: "{{ bmc_ca_path | default(omit) }}"
  delegate_to: localhost
  register: oob

- name: Show the GPUs the BMC sees
  ansible.builtin.debug:
    msg: "{{ oob.bmc.gpus | map(attribute='model') | list }}"

- name: Use one set of BMC options for every Redfish task of a play
  module_defaults:
    group/zhisuan.ops.redfish:
      bmc_address: "{{ bmc_address }}"
      bmc_username: "{{ bmc_username }}"
      bmc_password: "{{ bmc_password }}"
  block:
    - name: Facts
      zhisuan.ops.redfish_info:
      delegate_to: localhost
      register: oob
"""

RETURN = r"""
bmc:
  description: The server as its BMC sees it. The full field list is in the collection's C(docs/bmc-facts.md).
  returned: success
  type: dict
  contains:
    protocol:
      description: Always V(redfish) here.
      type: str
      sample: redfish
    address:
      description: The BMC contacted, C(host[:port]), without credentials.
      type: str
      sample: "10.20.1.11"
    vendor:
      description: The adapter that matched the service.
      type: str
      sample: nvidia
    manager:
      description: The BMC managing the host, C(id), C(model), C(firmware_version), C(health).
      type: dict
      sample: {id: BMC, model: "77171220", firmware_version: "23.11.20", health: OK}
    system:
      description: >-
        The host's ComputerSystem, C(id), C(manufacturer), C(model), C(serial), C(sku), C(uuid), C(bios_version),
        C(power_state) (V(On), V(Off), V(PoweringOn), V(PoweringOff) or V(null)) and C(health).
      type: dict
    chassis:
      description: Each chassis, C(id), C(name), C(manufacturer), C(model), C(serial), C(part_number), C(health).
      type: list
      elements: dict
    processors:
      description: >-
        Each processor of the host (and, on NVIDIA HGX systems, of the GPU baseboard), C(id), C(type) (V(CPU),
        V(GPU), V(Accelerator), V(FPGA) or V(other)), C(manufacturer), C(model), C(serial), C(health), C(state).
      type: list
      elements: dict
    gpus:
      description: >-
        The GPUs the BMC sees, C(id), C(model), C(serial), C(uuid), C(firmware_version), C(health) and C(source)
        (V(processor), or V(pcie_device) when no processor is a GPU).
      type: list
      elements: dict
    memory:
      description: Each DIMM, C(id), C(capacity_mib), C(type), C(manufacturer), C(part_number), C(serial), C(health), C(state).
      type: list
      elements: dict
    pcie_devices:
      description: Each PCIe device, C(id), C(name), C(manufacturer), C(model), C(device_class), C(health), C(firmware_version).
      type: list
      elements: dict
    nics:
      description: Each network adapter, C(id), C(name), C(manufacturer), C(model), C(ports), C(firmware_version), C(health).
      type: list
      elements: dict
    drives:
      description: Each drive, C(id), C(name), C(model), C(serial), C(capacity_bytes), C(media), C(health).
      type: list
      elements: dict
    power_supplies:
      description: >-
        Each power supply, C(id), C(name), C(model), C(serial), C(firmware_version), C(capacity_watts),
        C(input_watts), C(output_watts), C(health), C(state).
      type: list
      elements: dict
    fans:
      description: Each fan, C(id), C(name), C(reading), C(units) (V(RPM) or V(Percent)), C(health), C(state).
      type: list
      elements: dict
    sensors:
      description: >-
        Temperature, voltage, power and fan sensors, C(id), C(name), C(kind), C(reading), C(units), C(health) and
        C(thresholds) (C(lower_fatal), C(lower_critical), C(lower_caution), C(upper_caution), C(upper_critical),
        C(upper_fatal)). Absent sensors are left out.
      type: list
      elements: dict
      sample:
        - {id: CPU1_Temp, name: CPU1 Temp, kind: temperature, reading: 37.0, units: Cel, health: OK,
           thresholds: {lower_fatal: null, lower_critical: 3.0, lower_caution: null, upper_caution: null,
                        upper_critical: 99.0, upper_fatal: null}}
    fru:
      description: Always V(null) over Redfish (FRU data is an IPMI notion).
      type: raw
      sample: null
    errors:
      description: The resources that could not be read, C(resource) and C(error) (V(HTTP 404), ...).
      type: list
      elements: dict
      sample: [{resource: /redfish/v1/Systems/DGX/Memory, error: HTTP 404}]
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._base import run_module
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.argspec import REDFISH_ARGSPEC
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.inventory import run_info


def main():
    run_module({}, run_info, shared=(REDFISH_ARGSPEC,))


if __name__ == "__main__":
    main()
