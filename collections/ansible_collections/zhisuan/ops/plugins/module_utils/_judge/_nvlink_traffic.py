# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""``gpu.nvlink.traffic``: whether every NVLink of a GPU carried the device-to-device test's data, from the
``nvidia-smi nvlink -gt d`` counters read before and after nvbandwidth (facts ``bandwidth.nvlink_traffic``,
``gpu_bandwidth``'s ``nvlink_traffic``). Judged only when it was read and a device-to-device testcase ran.

The driver stripes peer traffic over all active links of a GPU, so under load every link's Tx and Rx counters grow,
and by about the same amount (the real H800 pair: each of the 8 links of GPU 0 about 1.39 TiB while training):

* a link whose counters did not grow at all while its siblings carried data -> ``fail``, ``reset_gpu``: the link is
  up in ``nvlink -s`` but moves nothing (a link the driver stopped using after errors); drain, reset the GPU and
  re-run the test; if it stays idle, the link's bridge, baseboard or NVSwitch port is at fault;
* no link of the GPU carried anything -> ``fail``, ``investigate``: peer copies did not use NVLink (the fabric
  manager down, P2P over PCIe), while the device-to-device test ran;
* a link that carried less than ``nvlink_traffic_min_share`` (0.25) of the GPU's median link -> ``warn``,
  ``investigate``;
* a counter that went down between the reads (reset by someone) or a block read in part -> ``warn``;
* else ``pass``.
"""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._gpu_base import gpu_component
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._util import plural

CHECK_ID = "gpu.nvlink.traffic"
DEFAULTS = {"nvlink_traffic_min_share": 0.25}
_GIB = 1024.0 * 1024.0  # KiB in a GiB


def _gib(kib):
    return "%.2f GiB" % (kib / _GIB)


def _component(entry, gpu_facts):
    label = "GPU %s" % entry.get("index")
    for gpu in (gpu_facts or {}).get("gpus") or []:
        if isinstance(gpu, dict) and ((entry.get("uuid") and gpu.get("uuid") == entry.get("uuid"))
                                      or (not entry.get("uuid") and gpu.get("index") == entry.get("index"))):
            return gpu_component(label, gpu)
    return label + (" (%s)" % entry["name"] if entry.get("name") else "")


def traffic_checks(host, facts, limits, gpu_facts=None, ran_p2p=True):
    """The ``gpu.nvlink.traffic`` checks of one host's ``bandwidth`` facts (none when the counters were not read)."""
    failure = facts.get("nvlink_traffic_error")
    if failure:
        return [make_check(CHECK_ID, host, "error", component="GPUs", observed="not read",
                           expected="NVLink data counters read before and after the test",
                           message="nvidia-smi nvlink -gt d could not be read around the bandwidth test, so no link's "
                                   "traffic could be judged: %s" % failure,
                           remedy="investigate", evidence="nvlink_traffic_error: %s" % failure)]
    data = facts.get("nvlink_traffic")
    if not isinstance(data, dict):
        return []
    share = float(limits.get("nvlink_traffic_min_share", DEFAULTS["nvlink_traffic_min_share"]))
    checks = []
    for entry in data.get("gpus") or []:
        component = _component(entry, gpu_facts)
        links = [link for link in entry.get("links") or [] if link.get("tx_kib") is not None
                 or link.get("rx_kib") is not None]
        expected = "every NVLink carries data during the device-to-device test"
        if not links:
            continue  # a GPU without NVLink counters: the NVLink checks of gpu_info say why
        if not ran_p2p:
            checks.append(make_check(CHECK_ID, host, "skip", component=component, expected=expected,
                                     message="%s: no device-to-device testcase ran, so the NVLinks were not loaded"
                                             % component))
            continue
        moved = dict((link["link"], (link.get("tx_kib") or 0) + (link.get("rx_kib") or 0)) for link in links)
        busy = sorted(value for value in moved.values() if value > 0)
        idle = sorted(number for number, value in moved.items() if value == 0)
        evidence = "window %ss; %s" % (data.get("window_s"), ", ".join(
            "link %s %s" % (number, _gib(value)) for number, value in sorted(moved.items())[:18]))
        if not busy:
            checks.append(make_check(
                CHECK_ID, host, "fail", component=component, observed="no link carried data", expected=expected,
                remedy="investigate", evidence=evidence,
                message="%s: none of its %s carried data while the device-to-device test ran: peer copies did not go "
                        "over NVLink (check nvidia-fabricmanager, nvidia-smi topo -m and gpu.nvlink.*)"
                        % (component, plural(len(links), "NVLink"))))
            continue
        median = busy[len(busy) // 2]
        if idle:
            checks.append(make_check(
                CHECK_ID, host, "fail", component=component, observed="%s idle" % plural(len(idle), "link"),
                expected=expected, remedy="reset_gpu", evidence=evidence,
                message="%s: NVLink %s carried no data while its other links carried about %s each: the link is up "
                        "but unused; drain the node, reset the GPU and re-run the test; if it stays idle the link's "
                        "bridge, baseboard or NVSwitch port is at fault" % (
                            component, ", ".join(str(number) for number in idle), _gib(median))))
            continue
        low = sorted(number for number, value in moved.items() if value < share * median)
        reset = [link["link"] for link in links if link.get("reset")]
        if low or reset or entry.get("partial") or data.get("partial"):
            said = []
            if low:
                said.append("link %s carried under %d%% of the median link's %s" % (
                    ", ".join(str(number) for number in low), round(share * 100), _gib(median)))
            if reset:
                said.append("the counters of link %s were reset between the reads" % ", ".join(
                    str(number) for number in reset))
            if entry.get("partial") or data.get("partial"):
                said.append("nvidia-smi nvlink -gt d was read in part")
            checks.append(make_check(
                CHECK_ID, host, "warn", component=component, observed="; ".join(said), expected=expected,
                remedy="investigate", evidence=evidence,
                message="%s: %s; re-run the device-to-device test and read gpu.nvlink.errors" % (
                    component, "; ".join(said))))
            continue
        checks.append(make_check(
            CHECK_ID, host, "pass", component=component, observed="%s busy" % plural(len(links), "link"),
            expected=expected, evidence=evidence,
            message="%s: all %s carried data during the test (median %s)" % (
                component, plural(len(links), "NVLink"), _gib(median))))
    return checks
