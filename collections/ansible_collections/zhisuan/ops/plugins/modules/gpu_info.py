#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: gpu_info
short_description: Normalised facts of every NVIDIA GPU of a node and its NVLinks, in one nvidia-smi round trip
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Runs C(nvidia-smi -q -x) once on the node and returns one normalised record per GPU, ready for the
    C(zhisuan.ops.judge) rules on the controller. It collects facts only; it never decides pass or fail.
  - In the same run it reads C(nvidia-smi nvlink -s) (see O(nvlink)) and adds each GPU's NVLink link states.
    When only that call fails, the facts are still returned and RV(gpu.nvlink_error) says why.
  - With O(src) it reads a saved C(nvidia-smi -q) text dump (as carried by C(nvidia-bug-report.sh) and field reports)
    or a saved C(nvidia-smi -q -x) XML file instead of running anything.
  - Values the driver reports as C(N/A) or C(Not Supported) are V(null). Values that read C(ERR!) are V(null) and
    their field path is listed in the GPU's RV(gpu.gpus[].unreadable).
extends_documentation_fragment:
  - zhisuan.ops._tool
  - zhisuan.ops._attributes
  - zhisuan.ops._attributes.info_module
  - zhisuan.ops._attributes.actiongroup_gpu
options:
  nvidia_smi_path:
    description:
      - The C(nvidia-smi) program, a name looked up in PATH or an absolute path.
      - The acceptance roles pass C(zhisuan_tools.nvidia_smi) here.
    type: str
    default: nvidia-smi
  src:
    description:
      - Path, on the node, of a saved C(nvidia-smi -q) text dump or C(nvidia-smi -q -x) XML file to read instead
        of running O(nvidia_smi_path). The form is detected from the content.
      - NVLink states are read from a saved dump only with O(nvlink_src); without it every RV(gpu.gpus[].nvlink) is
        then V(null).
    type: path
  nvlink_src:
    description:
      - With O(src), path on the node of a saved C(nvidia-smi nvlink -s) output whose link states fill
        RV(gpu.gpus[].nvlink), read with the same line-by-line reader as the live call.
      - A file that cannot be read or holds no GPU block is reported in RV(gpu.nvlink_error), as a failing call is.
    type: path
  nvlink:
    description:
      - Also run C(nvidia-smi nvlink -s) and return each GPU's NVLink link states in RV(gpu.gpus[].nvlink).
      - Its failure is not fatal; it is reported in RV(gpu.nvlink_error).
    type: bool
    default: true
  nvlink_remote:
    description:
      - Also run C(nvidia-smi nvlink -R) (remote link info) and return where each GPU's NVLinks lead in
        RV(gpu.nvlink_remote) - the node's other GPUs (an NVLink bridge) or other devices (NVSwitches), links listed
        on one side only, and remote ports two links claim. The judge's C(gpu.nvlink.remote) check rates it.
      - In the same run it also reads C(nvidia-smi nvlink -c) (each link's capabilities) into
        RV(gpu.nvlink_capabilities), rated by the judge's C(gpu.nvlink.capabilities) check.
      - Their failure is not fatal; it is reported in RV(gpu.nvlink_remote_error) and
        RV(gpu.nvlink_capabilities_error). Not run with O(src) or O(source=nvml).
    type: bool
    default: false
  nvlink_remote_src:
    description:
      - With O(src), path on the node of a saved C(nvidia-smi nvlink -R) output, read into RV(gpu.nvlink_remote)
        with the same line-by-line reader as the live call.
      - A file that cannot be read or holds no GPU block is reported in RV(gpu.nvlink_remote_error).
    type: path
  nvlink_capabilities_src:
    description:
      - With O(src), path on the node of a saved C(nvidia-smi nvlink -c) output, read into
        RV(gpu.nvlink_capabilities) with the same line-by-line reader as the live call.
      - A file that cannot be read or holds no GPU block is reported in RV(gpu.nvlink_capabilities_error).
    type: path
  source:
    description:
      - Where the facts come from. V(nvidia-smi) runs O(nvidia_smi_path) (C(-q -x), and C(nvlink -s) with O(nvlink)).
      - V(nvml) reads them through NVML with NVIDIA's Python binding (package C(nvidia-ml-py), module C(pynvml)) on
        the node, without running nvidia-smi; RV(gpu.source) is then V(nvml). NVLink states and error counters are not
        read this way, and the temperatures are NVML's absolute slowdown and shutdown limits.
      - A node without the binding or without the driver's C(libnvidia-ml.so) fails with C(error_kind=not_found).
    type: str
    choices: [nvidia-smi, nvml]
    default: nvidia-smi
  nvlink_errors_window:
    description:
      - Seconds between two reads of C(nvidia-smi nvlink -e) (the NVLink replay, recovery and CRC error counters);
        their growth over the window is returned in RV(gpu.nvlink_errors). V(0) does not read them.
      - The module waits this long; the judge rates the growth as DCGM's NVLink health watch does.
      - Its failure is not fatal; it is reported in RV(gpu.nvlink_errors_error). Not read with O(src).
    type: int
    default: 0
  throttle_window:
    description:
      - Seconds between the C(nvidia-smi -q -x) read and a second one, whose clocks event reasons counters (how long
        power capping, thermal slowdown and power braking held the clocks down, drivers 535 and later) give the share
        of the window each cause held them down, per GPU, in RV(gpu.throttle_window). V(0) does not read it.
      - The module waits this long; with O(nvlink_errors_window) also set, the two windows run at the same time (the
        module waits the longer one). Its failure is not fatal; it is reported in RV(gpu.throttle_window_error). Not
        read with O(src) or O(source=nvml).
    type: int
    default: 0
seealso:
  - name: nvidia-smi documentation
    description: The NVIDIA System Management Interface and its C(-q) output.
    link: https://docs.nvidia.com/deploy/nvidia-smi/index.html
notes:
  - The PCIe link generation drops at idle to save power; C(gpu_info) reports it as read, and the judge does not
    treat a lower current generation as a fault. A narrower link width is one.
"""

EXAMPLES = r"""
- name: Collect GPU facts with nvidia-smi from PATH
  zhisuan.ops.gpu_info:
  register: gpu

- name: Collect GPU facts with the site's nvidia-smi and a short timeout
  zhisuan.ops.gpu_info:
    nvidia_smi_path: "{{ zhisuan_tools.nvidia_smi | default('nvidia-smi') }}"
    timeout: 30
  register: gpu

- name: GPU facts without the NVLink states
  zhisuan.ops.gpu_info:
    nvlink: false
  register: gpu

- name: GPU facts with the NVLink error counters' growth over 30 seconds
  zhisuan.ops.gpu_info:
    nvlink_errors_window: 30
  register: gpu

- name: GPU facts through NVML (nvidia-ml-py on the node) instead of nvidia-smi
  zhisuan.ops.gpu_info:
    source: nvml
  register: gpu

- name: Read a saved nvidia-smi -q dump from a field report
  zhisuan.ops.gpu_info:
    src: /var/tmp/nvidia-bug-report/nvidia-smi-q.txt
  register: gpu

- name: Show the bus ids of GPUs whose link is narrower than its maximum
  ansible.builtin.debug:
    msg: "{{ gpu.gpu.gpus | selectattr('pcie.width_current', 'lt', 16) | map(attribute='pci_bus_id') | list }}"

- name: Show how many NVLinks are up on each GPU that has NVLink
  ansible.builtin.debug:
    msg: "{{ gpu.gpu.gpus | rejectattr('nvlink', 'none') | map(attribute='nvlink.active') | list }}"
"""

RETURN = r"""
gpu:
  description: Facts of the node's GPUs. The full field list is in the collection's C(docs/gpu-facts.md).
  returned: success
  type: dict
  contains:
    source:
      description: What was read, V(xml) or V(text) (nvidia-smi), or V(nvml).
      type: str
      sample: xml
    driver_version:
      description: Driver version.
      type: str
      sample: 535.54.03
    cuda_version:
      description: CUDA version the driver supports, V(null) when not printed.
      type: str
      sample: "12.2"
    attached_gpus:
      description: Number of GPUs the driver reports as attached.
      type: int
      sample: 8
    nvlink_error:
      description:
        - Why C(nvidia-smi nvlink -s) could not be read (not found, timed out, failed, unparsable), else V(null).
        - V(null) too when NVLink was not collected (O(nvlink=false) or O(src)).
      type: str
      sample: "nvidia-smi nvlink: timed out after 60 s (process group killed)"
    nvlink_errors:
      description:
        - The NVLink error counters' growth over O(nvlink_errors_window) seconds, V(null) when not read.
        - C(window_s), C(unparsed) and C(gpus), one per GPU of C(nvidia-smi nvlink -e) (C(index), C(name), C(uuid),
          C(messages), C(links)), each link with its C(counters) (C(replay), C(recovery), C(crc) or C(crc_flit) and
          C(crc_data)), each counter with C(before), C(after), C(delta), C(per_s), C(saturated), C(cleared).
      type: dict
    nvlink_errors_error:
      description: Why C(nvidia-smi nvlink -e) could not be read, else V(null).
      type: str
    nvlink_remote:
      description:
        - Where each GPU's NVLinks lead, from C(nvidia-smi nvlink -R) (O(nvlink_remote) or O(nvlink_remote_src)),
          V(null) when not read.
        - C(unparsed) (the lines that could not be read, each as C(line N) and its text), C(partial) and C(gpus),
          one per GPU of the output (C(index), C(name), C(uuid), C(links), C(messages), C(peers) - C(gpu),
          C(bus_id), C(links) per GPU of this node reached -, C(switches) - C(bus_id), C(links) per other device -,
          C(one_way), C(shared), C(partial)).
      type: dict
    nvlink_remote_error:
      description: Why C(nvidia-smi nvlink -R) could not be read, else V(null).
      type: str
    nvlink_capabilities:
      description:
        - What each GPU's NVLinks can do, from C(nvidia-smi nvlink -c) (O(nvlink_remote) or
          O(nvlink_capabilities_src)), V(null) when not read.
        - C(common) (the capability set most links of the node report, e.g. C(p2p) V(true)), C(unparsed),
          C(partial) and C(gpus), one per GPU of the output (C(index), C(name), C(uuid), C(links) - how many -,
          C(odd) - each C(link) whose capabilities differ from C(common) and C(differs) -, C(messages), C(partial)).
      type: dict
    nvlink_capabilities_error:
      description: Why C(nvidia-smi nvlink -c) could not be read, else V(null).
      type: str
    throttle_window:
      description:
        - The clocks event reasons counters' growth over O(throttle_window) seconds, V(null) when not read.
        - C(window_s) and C(gpus), one per GPU with counters in both reads (C(index), C(pci_bus_id), C(held_us) and
          C(share_pct) per cause - C(sw_power_cap), C(sync_boost), C(sw_thermal_slowdown), C(hw_thermal_slowdown),
          C(hw_power_brake_slowdown) - and C(reset), true when a counter went down because the driver reloaded).
      type: dict
    throttle_window_error:
      description: Why the second C(nvidia-smi -q -x) could not be read, else V(null).
      type: str
    gpus:
      description: One record per GPU, in the order nvidia-smi printed them.
      type: list
      elements: dict
      contains:
        index:
          description: Minor number (position when absent).
          type: int
        name:
          description: Product name.
          type: str
          sample: NVIDIA A100-SXM4-80GB
        uuid:
          description: GPU UUID.
          type: str
        serial:
          description: Board serial number.
          type: str
        pci_bus_id:
          description: PCI bus id with a 4-digit domain, upper case.
          type: str
          sample: "0000:07:00.0"
        vbios_version:
          description: VBIOS version.
          type: str
        memory:
          description: Frame buffer memory C(total_mib), C(used_mib), C(reserved_mib).
          type: dict
        temperature:
          description: >-
            C(gpu_c), C(memory_c) and the limits the driver reports: absolute C(shutdown_c), C(slowdown_c),
            C(max_operating_c), C(memory_max_c), or the T.Limit form C(tlimit_c) (headroom) with
            C(shutdown_tlimit_c), C(slowdown_tlimit_c), C(max_operating_tlimit_c).
          type: dict
        power:
          description: C(draw_w), C(limit_w), C(default_limit_w), C(min_limit_w), C(max_limit_w).
          type: dict
        clocks:
          description: Current and maximum graphics, SM and memory clocks in MHz.
          type: dict
        pcie:
          description: C(gen_current), C(gen_max), C(width_current), C(width_max), C(replays).
          type: dict
        ecc:
          description: >-
            C(mode_current), C(mode_pending), and C(volatile_corrected), C(volatile_uncorrected),
            C(aggregate_corrected), C(aggregate_uncorrected) summed over the counters the driver prints.
          type: dict
        retired_pages:
          description: C(single_bit), C(double_bit), C(pending).
          type: dict
        remapped_rows:
          description: C(correctable), C(uncorrectable), C(pending), C(failure); V(null) where not supported.
          type: dict
        throttle:
          description: Clock event (throttle) reasons, V(true) when active.
          type: dict
        mig_mode:
          description: C(current) and C(pending) MIG mode as printed.
          type: dict
        processes:
          description: Processes using the GPU (C(pid), C(type), C(name), C(used_memory_mib)).
          type: list
          elements: dict
        mig_devices:
          description:
            - The GPU's MIG devices (C(index), C(gpu_instance_id), C(compute_instance_id), C(memory_total_mib),
              C(multiprocessors)), V(null) when none is printed.
          type: list
          elements: dict
        throttle_counters_us:
          description:
            - Microseconds each cause held the clocks down since the driver loaded (C(sw_power_cap), C(sync_boost),
              C(sw_thermal_slowdown), C(hw_thermal_slowdown), C(hw_power_brake_slowdown)), V(null) when not printed.
          type: dict
        unreadable:
          description: Field paths whose value read C(ERR!).
          type: list
          elements: str
        nvlink:
          description:
            - NVLink state from C(nvidia-smi nvlink -s), V(null) when the GPU has no NVLink or it was not collected.
            - C(links) (C(link), C(active), C(speed_gbs) in GB/s as printed, V(null) when inactive), C(active) and
              C(total) link counts, and C(message), the driver's line printed instead of the links.
            - When every link is down the driver prints only a message; C(active) is then V(0) and C(total) V(null).
              In MIG mode the links cannot be queried; C(active) and C(total) are then V(null).
          type: dict
          sample: {links: [{link: 0, active: true, speed_gbs: 25.0}], active: 1, total: 1, message: null}
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._base import run_module
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu.collect import GPU_INFO_ARGSPEC, collect_gpu_facts


def main():
    run_module(GPU_INFO_ARGSPEC, collect_gpu_facts)


if __name__ == "__main__":
    main()
