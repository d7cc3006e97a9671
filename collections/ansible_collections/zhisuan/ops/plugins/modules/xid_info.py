#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: xid_info
short_description: NVIDIA Xid events of a node's kernel log, for a time window
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Reads the node's kernel log once and returns every C(NVRM) Xid event in it with its time, PCI bus id, code,
    process and text, ready for the C(zhisuan.ops.judge) Xid rules on the controller, which classify each code with
    the collection's versioned Xid catalog. It collects facts only; it never decides pass or fail.
  - By default it asks C(journalctl) for the kernel messages of the window
    (C(journalctl _TRANSPORT=kernel -o short-iso --no-pager --since=<since>)) and falls back to
    C(dmesg --decode --time-format=iso) when C(journalctl) is missing, fails, times out, or says the node keeps no
    journal.
  - With O(src) it reads a saved kernel log instead (C(journalctl) short or short-iso output, C(dmesg) with ISO,
    C(--ctime) or plain time stamps, C(/var/log/syslog), raw C(/dev/kmsg) records).
extends_documentation_fragment:
  - zhisuan.ops._tool
  - zhisuan.ops._attributes
  - zhisuan.ops._attributes.info_module
options:
  source:
    description:
      - Where to read the kernel log. V(auto) tries C(journalctl) and falls back to C(dmesg); V(journalctl) and
        V(dmesg) use only that program and fail if it fails.
      - Ignored when O(src) is set.
    type: str
    choices: [auto, journalctl, dmesg]
    default: auto
  since:
    description:
      - Start of the time window. Accepted forms (a subset of C(journalctl --since)) are C(-<N><unit>) with units
        C(s), C(min), C(h), C(d), C(w) (for example V(-24h) or V(-1h 30min)), C(YYYY-MM-DD [HH:MM[:SS]]) in the node's
        local time, V(today) and V(yesterday). An empty string reads everything the source holds.
      - When omitted, V(-24h) for C(journalctl) and C(dmesg); no window for O(src).
      - C(journalctl) applies the window itself; for C(dmesg) and O(src) events with a wall-clock time before the
        window are dropped and counted in RV(xid.outside_window).
    type: str
  journalctl_path:
    description:
      - The C(journalctl) program, a name looked up in PATH or an absolute path.
      - The roles pass C(zhisuan_tools.journalctl) here.
    type: str
    default: journalctl
  dmesg_path:
    description:
      - The C(dmesg) program, a name looked up in PATH or an absolute path. It must support
        C(--time-format=iso) (util-linux).
      - The roles pass C(zhisuan_tools.dmesg) here.
    type: str
    default: dmesg
  src:
    description:
      - Path, on the node, of a saved kernel log to read instead of running a program.
    type: path
seealso:
  - name: NVIDIA Xid catalog
    description: NVIDIA's Xid codes and the action bucket for each, the source of the collection's catalog.
    link: https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html
notes:
  - C(journalctl) is asked for the kernel transport, not C(-k), because C(-k) implies C(-b) (this boot only) and the
    Xid that made someone reboot or power-cycle the node is in an earlier boot.
  - The C(dmesg) ring buffer holds this boot only, and only as much as fits in it.
  - Reading the kernel log needs root on most distributions (C(kernel.dmesg_restrict), journal access); use
    C(become).
"""

EXAMPLES = r"""
- name: Xid events of the last 24 hours
  zhisuan.ops.xid_info:
  become: true
  register: xid

- name: Xid events since yesterday, with the site's tool paths
  zhisuan.ops.xid_info:
    since: yesterday
    journalctl_path: "{{ zhisuan_tools.journalctl | default('journalctl') }}"
    dmesg_path: "{{ zhisuan_tools.dmesg | default('dmesg') }}"
  become: true
  register: xid

- name: Read a kernel log saved from a failed node
  zhisuan.ops.xid_info:
    src: /var/tmp/node07-journal-k.txt
  register: xid

- name: Show the codes seen per GPU
  ansible.builtin.debug:
    msg: "{{ xid.xid.events | map(attribute='pci_bus_id') | zip(xid.xid.events | map(attribute='code')) | list }}"
"""

RETURN = r"""
xid:
  description: The Xid events of the window.
  returned: success
  type: dict
  contains:
    source:
      description: What was read, V(journalctl), V(dmesg) or V(file).
      type: str
      sample: journalctl
    since:
      description: The window's start as given (V(null) when the whole log was read).
      type: str
      sample: -24h
    lines:
      description: Number of log lines read.
      type: int
      sample: 1832
    events:
      description: One record per Xid line, in log order.
      type: list
      elements: dict
      contains:
        time:
          description: >-
            Wall-clock time as ISO 8601 (with the zone when the log gives one; C(dmesg --ctime) has none);
            V(null) for logs with only seconds since boot or no year.
          type: str
          sample: "2025-01-21T02:21:33.498559+00:00"
        uptime_s:
          description: Seconds since boot when the log gives that instead of a wall-clock time.
          type: float
        pci_bus_id:
          description: PCI bus id as gpu_info prints it (4-digit domain, upper case, function added).
          type: str
          sample: "0000:9B:00.0"
        code:
          description: The Xid code.
          type: int
          sample: 79
        pid:
          description: Process id the driver named, V(null) when it printed none or C(<unknown>).
          type: int
        process:
          description: Process name the driver named, V(null) when none or C(<unknown>).
          type: str
        text:
          description: The message after the code (and after C(pid=…, name=…)).
          type: str
        recovery_action:
          description: >-
            Xid 154 only, else V(null): C(from_code), C(from), C(to_code), C(to) of
            "GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)".
          type: dict
        nvlink5:
          description: >-
            Xid 144-150 only, else V(null): C(unit), C(severity), C(xc), C(instance), C(link), C(intr_info),
            C(error_status) and all C(words) of the line, for decoding against NVIDIA's catalog.
          type: dict
        nvlink_error:
          description: >-
            Xid 74 only (the key is absent for other codes): C(link) and C(registers), the seven register values of
            "NVLink: fatal error detected on link 14(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)" as numbers (V(null)
            where the line prints the link alone), decoded bit by bit by the xid rules; V(null) when no link is named.
          type: dict
        line:
          description: The raw log line.
          type: str
    unparsed:
      description: Lines that mention C(NVRM) C(Xid) but could not be read (also reported as warnings).
      type: list
      elements: str
    outside_window:
      description: Events dropped because their time is before O(since) (C(dmesg) and O(src) only).
      type: int
    xid_lines_dropped:
      description:
        - Xid lines read but not kept. The log is read as a stream and at most 4000 Xid lines are kept (the first
          2000 and the last 2000), so an Xid storm costs the node bounded memory. V(0) when all were kept.
      type: int
    command:
      description: The command that ran, V(null) for O(src).
      type: list
      elements: str
    fallback:
      description: Why C(journalctl) was not used when O(source=auto) fell back to C(dmesg), else V(null).
      type: str
    kernel_lines:
      description:
        - Lines with a kernel log time stamp (dmesg, journalctl or syslog form).
        - V(0) with lines read means the output was not a kernel log; the judge makes that an error, never a pass.
      type: int
    no_entries:
      description: V(true) when C(journalctl) printed C(-- No entries --) (an empty window, not an empty log).
      type: bool
    log_end:
      description:
        - The time stamp of the log's newest line that has one (C(time) as ISO text, or C(uptime_s) for a boot-relative
          stamp), V(null) when none has. The judge measures from it how long an Xid has been quiet (its clearing rule).
      type: dict
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._base import run_module
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu.xid_collect import XID_INFO_ARGSPEC, collect_xid_facts


def main():
    run_module(XID_INFO_ARGSPEC, collect_xid_facts)


if __name__ == "__main__":
    main()
