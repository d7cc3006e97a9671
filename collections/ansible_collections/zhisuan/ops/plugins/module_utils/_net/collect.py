# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""net_info's work: per interface ethtool (settings, -i, -S twice, -m) and ip -j link, RDMA ports (ibstat or
sysfs), LLDP neighbours, link flaps from the kernel log, and NUMA nodes of NICs and GPUs -> ``net`` facts.

``ip -j link`` is the one call that must work (it says which interfaces exist). Every other failure is kept in the
facts (``errors`` per interface, ``ib.error``, ``lldp_error``, ``link_flaps_error``) so the judge turns it into an
``error`` check for that part alone. ``ethtool -m`` on a port without a module is not a failure: ``optics`` is
``null`` with ``optics_reason``.
"""

import os
import time

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import OptionError, ZhisuanError
from ansible_collections.zhisuan.ops.plugins.module_utils._net import (ecn, ethtool, ib, ib_counters, iblinkinfo,
                                                                       ibnetdiscover, iplink, linkflap, lldp, qos)
from ansible_collections.zhisuan.ops.plugins.module_utils._runner import first_line, run
from ansible_collections.zhisuan.ops.plugins.module_utils._safe_parse import to_int

# PCI class codes of NVIDIA GPUs (3D controller, VGA) and the vendor id.
_NVIDIA_VENDOR = "0x10de"
_GPU_CLASSES = ("0x0302", "0x0300")


def numa_node(root, ifname):
    """NUMA node of a NIC (``/sys/class/net/IF/device/numa_node``); ``None`` when absent or -1 (no NUMA info)."""
    value = ib.read_text(os.path.join(root, "sys", "class", "net", ifname, "device", "numa_node"))
    number = to_int(value)
    return number if number is not None and number >= 0 else None


def gpu_numa_nodes(root):
    """``{PCI address: NUMA node or None}`` of the NVIDIA GPUs under ``<root>/sys/bus/pci/devices``."""
    base = os.path.join(root, "sys", "bus", "pci", "devices")
    try:
        names = sorted(os.listdir(base))
    except (IOError, OSError):
        return {}
    result = {}
    for name in names:
        if ib.read_text(os.path.join(base, name, "vendor")) != _NVIDIA_VENDOR:
            continue
        klass = ib.read_text(os.path.join(base, name, "class")) or ""
        if not klass.startswith(_GPU_CLASSES):
            continue
        value = ib.read_text(os.path.join(base, name, "numa_node"))
        number = to_int(value)
        result[name] = number if number is not None and number >= 0 else None
    return result


class _Ethtool(object):
    def __init__(self, path, timeout, warn):
        self.path = path
        self.timeout = timeout
        self.warn = warn

    def run(self, args, ok_rcs=(0,)):
        return run([self.path] + args, timeout=self.timeout, tool="ethtool", ok_rcs=ok_rcs)

    def stats(self, ifname):
        return ethtool.parse_stats(self.run(["-S", ifname]).stdout, warn=self.warn)

    def module(self, ifname, link):
        """``(optics or None, reason or None)``."""
        result = self.run(["-m", ifname], ok_rcs=None)
        if result.rc != 0:
            if ethtool.is_no_module(result.stderr):
                return None, "no module EEPROM: %s" % first_line(result.stderr, result.stdout)
            return None, "ethtool -m failed (rc %s): %s" % (result.rc, first_line(result.stderr, result.stdout))
        optics = ethtool.parse_module(result.stdout, warn=self.warn)
        optics["implausible"] = ethtool.implausible(optics, link=link)
        return optics, None


def _interface(tool, ifname, link, root, optics_wanted):
    entry = {"present": link is not None, "driver": None, "driver_version": None, "firmware": None, "bus_info": None,
             "speed_mbps": None, "duplex": None, "link": None, "port": None,
             "mtu": None, "operstate": None, "admin_up": None, "carrier": None, "address": None,
             "numa_node": numa_node(root, ifname), "counters_delta": None, "optics": None, "optics_reason": None,
             "qos": None, "ecn": ecn.read_ecn(root, ifname), "errors": {}}
    if link is None:
        entry["errors"]["ip"] = "interface %s does not exist on this node" % ifname
        return entry, None
    for key in ("mtu", "operstate", "admin_up", "carrier", "address"):
        entry[key] = link.get(key)
    try:
        settings = ethtool.parse_settings(tool.run([ifname]).stdout, warn=tool.warn)
        for key in ("speed_mbps", "duplex", "link", "port"):
            entry[key] = settings[key]
    except ZhisuanError as exc:
        entry["errors"]["settings"] = exc.message
    try:
        driver = ethtool.parse_driver(tool.run(["-i", ifname]).stdout, warn=tool.warn)
        entry.update(driver=driver["driver"], driver_version=driver["version"], firmware=driver["firmware_version"],
                     bus_info=driver["bus_info"])
    except ZhisuanError as exc:
        entry["errors"]["driver"] = exc.message
    before = None
    try:
        before = tool.stats(ifname)
    except ZhisuanError as exc:
        entry["errors"]["counters"] = exc.message
    if optics_wanted:
        try:
            entry["optics"], entry["optics_reason"] = tool.module(ifname, entry["link"])
        except ZhisuanError as exc:
            entry["optics_reason"] = exc.message
    else:
        entry["optics_reason"] = "not collected (optics: false)"
    return entry, before


def _qos(path, ifname, timeout, warn):
    """``(qos facts or None, reason or None)``; mlnx_qos missing is a reason, not a failure."""
    try:
        result = run([path, "-i", ifname], timeout=timeout, tool="mlnx_qos")
        return qos.parse_mlnx_qos(result.stdout, warn=warn), None
    except ZhisuanError as exc:
        return None, exc.message


def _ib_result(facts, source, error=None):
    facts["source"] = source
    facts["error"] = error
    return facts


def collect_ib(params, warn=None):
    """RDMA devices from ibstat (``ib_source`` ``ibstat``/``auto``) or sysfs (``sysfs``, or ``auto`` without ibstat).

    ibstat's empty output (rc 0) is the "no device" answer, not an error; rc 255 after listing devices (an
    ``ibpanic`` about one device) keeps the devices it printed and the panic line in ``errors``.
    """
    source = params["ib_source"]
    if source == "none":
        return None
    if source == "sysfs":
        return _ib_result(ib.read_sysfs(params["root"]), "sysfs")
    try:
        result = run([params["ibstat_path"]], timeout=params["timeout"], tool="ibstat", ok_rcs=None)
    except ZhisuanError as exc:
        if source == "auto" and exc.kind == "not_found":
            return _ib_result(ib.read_sysfs(params["root"]), "sysfs")
        return _ib_result({"devices": {}, "no_device": None, "errors": []}, "ibstat", exc.message)
    if result.rc != 0 and "CA '" not in result.stdout:
        return _ib_result({"devices": {}, "no_device": None, "errors": []}, "ibstat",
                          "ibstat: exited with rc %s: %s" % (result.rc, first_line(result.stderr, result.stdout)))
    try:
        facts = ib.parse_ibstat(result.stdout, warn=warn)
    except ZhisuanError as exc:
        return _ib_result({"devices": {}, "no_device": None, "errors": []}, "ibstat", exc.message)
    if result.rc != 0 and not facts["errors"]:
        facts["errors"].append("ibstat exited with rc %s: %s" % (result.rc, first_line(result.stderr, "")))
    return _ib_result(facts, "ibstat")


def collect_lldp(params, warn=None):
    """``(first neighbour per interface, error or None)``; not run without ``lldpctl_path``."""
    path = params["lldpctl_path"]
    if not path:
        return None, None
    argv = [path]
    if params["lldp_socket"]:
        argv += ["-u", params["lldp_socket"]]
    argv += ["-f", "json"]
    if os.path.basename(path).startswith("lldpcli"):
        argv += ["show", "neighbors"]
    try:
        result = run(argv, timeout=params["timeout"], tool="lldpctl")
        return lldp.first_neighbors(lldp.parse_neighbors(result.stdout, warn=warn)), None
    except ZhisuanError as exc:
        return {}, exc.message


def collect_ib_fabric(params, warn=None):
    """The fabric's own cabling view (``iblinkinfo``), or None without ``iblinkinfo_path``; errors are kept."""
    path = params.get("iblinkinfo_path")
    if not path:
        return None
    try:
        result = run([path], timeout=params["timeout"], tool="iblinkinfo")
        facts = iblinkinfo.fabric_facts(result.stdout, warn=warn)
        facts["error"] = None
        return facts
    except ZhisuanError as exc:
        return {"links": [], "error": exc.message}


def collect_ib_subnet(params, warn=None):
    """The subnet's view of every link (``ibnetdiscover``), or None without ``ibnetdiscover_path``; errors are
    kept, an output read in part keeps what was read (``partial``, ``warnings``)."""
    path = params.get("ibnetdiscover_path")
    if not path:
        return None
    try:
        # -p: the ports report, one line per port, the idle ports too (a pulled cable shows as its idle port)
        result = run([path, "-p"], timeout=params["timeout"], tool="ibnetdiscover")
        facts = ibnetdiscover.fabric_facts(result.stdout, warn=warn)
        facts["error"] = None
        return facts
    except ZhisuanError as exc:
        return {"tool": "ibnetdiscover", "links": [], "switch_links": [], "error": exc.message}


def collect_kernel_log(params):
    """``(kernel log text or None, error or None)``: journalctl -k, falling back to dmesg."""
    errors = []
    if params["journalctl_path"]:
        argv = [params["journalctl_path"], "-k", "--no-pager", "-o", "short-iso"]
        if params["since"]:
            argv += ["--since", params["since"]]
        try:
            return run(argv, timeout=params["timeout"], tool="journalctl").stdout, None
        except ZhisuanError as exc:
            errors.append(exc.message)
    if params["dmesg_path"]:
        try:
            return run([params["dmesg_path"], "--time-format=iso"], timeout=params["timeout"], tool="dmesg").stdout, None
        except ZhisuanError as exc:
            errors.append(exc.message)
    return None, "; ".join(errors) or "no kernel log source (journalctl_path and dmesg_path are empty)"


def collect_net_facts(module):
    params = module.params
    warn = module.warn
    if params["counter_window"] < 0:
        raise OptionError("counter_window", "counter_window must be 0 or more seconds, got %s" % params["counter_window"])
    links = iplink.parse_links(run([params["ip_path"], "-j", "link"], timeout=params["timeout"], tool="ip").stdout,
                               warn=warn)
    names = params["interfaces"] or [name for name, link in links.items() if not iplink.is_loopback(link)]
    tool = _Ethtool(params["ethtool_path"], params["timeout"], warn)
    interfaces = {}
    before = {}
    for name in names:
        interfaces[name], before[name] = _interface(tool, name, links.get(name), params["root"], params["optics"])
        if params["mlnx_qos_path"] and links.get(name) is not None:
            interfaces[name]["qos"], reason = _qos(params["mlnx_qos_path"], name, params["timeout"], warn)
            if reason:
                interfaces[name]["errors"]["qos"] = reason
    window = params["counter_window"]
    ib_before = ib_counters.read_counters(params["root"]) if window > 0 and params["ib_source"] != "none" else {}
    if window > 0 and (ib_before or any(value is not None for value in before.values())):
        time.sleep(window)
    ib_delta = ib_counters.counter_deltas(ib_before, ib_counters.read_counters(params["root"]), window,
                                          warn=warn) if ib_before else None
    for name, first in before.items():
        if first is None or window <= 0:
            continue
        try:
            interfaces[name]["counters_delta"] = ethtool.counter_deltas(first, tool.stats(name), window, warn=warn)
        except ZhisuanError as exc:
            interfaces[name]["errors"]["counters"] = exc.message
    neighbors, lldp_error = collect_lldp(params, warn=warn)
    log_text, log_error = collect_kernel_log(params) if params["link_flaps"] else (None, None)
    flaps = None
    events = []
    if log_text is not None:
        events = linkflap.parse_events(log_text)
        flaps = linkflap.count_flaps(events)
    ib_facts = collect_ib(params, warn=warn)
    if isinstance(ib_facts, dict) and ib_delta is not None:
        ib_facts["counters_delta"] = ib_delta
    return {"net": {
        "interfaces": interfaces,
        "ib": ib_facts,
        "lldp": neighbors,
        "lldp_error": lldp_error,
        "link_flaps": flaps,
        "link_flap_events": events[-50:],
        "link_flaps_error": log_error,
        "gpu_numa": gpu_numa_nodes(params["root"]),
        "ib_fabric": collect_ib_fabric(params, warn=warn),
        "ib_subnet": collect_ib_subnet(params, warn=warn),
        "counter_window": window,
    }}
