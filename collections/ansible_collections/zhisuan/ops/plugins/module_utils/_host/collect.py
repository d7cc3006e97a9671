# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""host_info's work: read the node's tuning state in one task (files under ``root``, a few programs).

Every part is optional: a file that is not there is ``null``; a program that is not installed is ``null``; a part
that could not be read (a program that failed or timed out, a file in an unknown format) is ``null`` and named in
``errors`` ([{source, error}]) so the judge can tell "not there" from "could not read". Nothing here is fatal.
"""

import os
import re

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import OptionError, ToolNotFound, ZhisuanError
from ansible_collections.zhisuan.ops.plugins.module_utils._host import sysinfo
from ansible_collections.zhisuan.ops.plugins.module_utils._host.topo import parse_topo
from ansible_collections.zhisuan.ops.plugins.module_utils._runner import run

# What the report shows by default; the judge checks only the keys a site sets (zhisuan_expected.tuning.sysctl).
DEFAULT_SYSCTL_KEYS = (
    "kernel.numa_balancing",
    "kernel.pid_max",
    "kernel.threads-max",
    "vm.zone_reclaim_mode",
    "vm.swappiness",
    "vm.max_map_count",
    "fs.file-max",
    "fs.nr_open",
    "net.core.rmem_max",
    "net.core.wmem_max",
    "net.core.somaxconn",
    "net.core.netdev_max_backlog",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
    "net.ipv4.tcp_mtu_probing",
    "net.ipv4.conf.all.arp_ignore",
    "net.ipv4.conf.all.arp_announce",
)
DEFAULT_NCCL_LIB_DIRS = (
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib64",
    "/usr/local/lib",
    "/usr/local/nccl/lib",
    "/usr/local/cuda/lib64",
)
_SYSCTL_KEY = re.compile(r"^[A-Za-z0-9_.\-]+$")

# The options of zhisuan.ops.host_info (besides the shared timeout); zhisuan.ops.node_collect takes the same for tuning.
HOST_INFO_ARGSPEC = dict(
    root=dict(type="path", default="/"),
    nvidia_smi_path=dict(type="str", default="nvidia-smi"),
    lspci_path=dict(type="str", default="lspci"),
    ofed_info_path=dict(type="str", default="ofed_info"),
    nv_fabricmanager_path=dict(type="str", default="nv-fabricmanager"),
    dcgmi_path=dict(type="str", default="dcgmi"),
    topo=dict(type="bool", default=True),
    acs=dict(type="bool", default=True),
    software=dict(type="bool", default=True),
    sysctl_keys=dict(type="list", elements="str", default=list(DEFAULT_SYSCTL_KEYS), no_log=False),
    nccl_lib_dirs=dict(type="list", elements="path", default=list(DEFAULT_NCCL_LIB_DIRS)),
)


class HostReader(object):
    """Reads files below ``root`` ("/" on a node; a prepared tree in tests) and runs programs; collects errors."""

    def __init__(self, root, timeout, warn=None):
        self.root = root or "/"
        self.timeout = timeout
        self.warn = warn
        self.errors = []

    def path(self, *parts):
        return os.path.join(self.root, *[part.lstrip("/") for part in parts])

    def read(self, *parts):
        """Text of a file below root, or None when it does not exist or cannot be read."""
        try:
            with open(self.path(*parts), "rb") as handle:
                return handle.read().decode("utf-8", "replace")
        except (IOError, OSError):
            return None

    def listdir(self, *parts):
        try:
            return sorted(os.listdir(self.path(*parts)))
        except (IOError, OSError):
            return []

    def error(self, source, exc):
        self.errors.append({"source": source, "error": exc.message if isinstance(exc, ZhisuanError) else str(exc)})

    def parsed(self, source, parser, text):
        """parser(text), or None with the ParseError recorded; None text stays None."""
        if text is None:
            return None
        try:
            return parser(text)
        except ZhisuanError as exc:
            self.error(source, exc)
            return None

    def program(self, source, argv, parser, optional=True):
        """parser(stdout of argv); None when the program is not installed (optional) or failed (error recorded)."""
        try:
            result = run(argv, timeout=self.timeout, tool=source)
            return parser(result.stdout)
        except ToolNotFound as exc:
            if not optional:
                self.error(source, exc)
            return None
        except ZhisuanError as exc:
            self.error(source, exc)
            return None


def read_sysctl(reader, keys):
    values = {}
    for key in keys:
        text = reader.read("proc/sys", key.replace(".", "/"))
        values[key] = " ".join(text.split()) if text is not None else None
    return values


def read_governor(reader):
    counts = {}
    for cpu in reader.listdir("sys/devices/system/cpu"):
        if not re.match(r"^cpu[0-9]+$", cpu):
            continue
        text = reader.read("sys/devices/system/cpu", cpu, "cpufreq/scaling_governor")
        if text is not None and text.strip():
            counts[text.strip()] = counts.get(text.strip(), 0) + 1
    if not counts:
        return None
    return {"value": list(counts)[0] if len(counts) == 1 else "mixed", "counts": counts}


def read_iommu(reader, params):
    units = reader.listdir("sys/class/iommu")
    types = {}
    for group in reader.listdir("sys/kernel/iommu_groups"):
        text = reader.read("sys/kernel/iommu_groups", group, "type")
        kind = text.strip() if text and text.strip() else "unknown"
        types[kind] = types.get(kind, 0) + 1
    flags = dict((key, value) for key, value in params.items()
                 if key in ("iommu", "intel_iommu", "amd_iommu", "iommu.passthrough", "iommu.strict"))
    return {"mode": sysinfo.iommu_mode(units, types, params), "units": units, "group_types": types,
            "cmdline_flags": flags}


def _uevent_value(text, key):
    for line in (text or "").splitlines():
        if line.startswith(key + "="):
            return line.split("=", 1)[1].strip()
    return None


def read_numa(reader):
    nodes = []
    for name in reader.listdir("sys/devices/system/node"):
        match = re.match(r"^node([0-9]{1,6})$", name)
        if match:
            cpulist = (reader.read("sys/devices/system/node", name, "cpulist") or "").strip()
            nodes.append({"id": int(match.group(1)), "cpulist": cpulist or None})
    nics = []
    for dev in reader.listdir("sys/class/infiniband"):
        numa = (reader.read("sys/class/infiniband", dev, "device/numa_node") or "").strip()
        nics.append({
            "device": dev,
            "pci": _uevent_value(reader.read("sys/class/infiniband", dev, "device/uevent"), "PCI_SLOT_NAME"),
            "numa_node": int(numa) if re.match(r"^[0-9]{1,6}$", numa) else None,
            "netdevs": reader.listdir("sys/class/infiniband", dev, "device/net"),
        })
    return {"nodes": sorted(nodes, key=lambda node: node["id"]), "nics": nics}


def read_software(reader, params):
    software = {
        "nvidia_driver": reader.parsed("/proc/driver/nvidia/version", sysinfo.parse_nvidia_version,
                                       reader.read("proc/driver/nvidia/version")),
        "kernel": (reader.read("proc/sys/kernel/osrelease") or "").strip() or None,
    }
    names = []
    for directory in params["nccl_lib_dirs"]:
        names.extend(reader.listdir(directory))
    software["nccl"] = sysinfo.nccl_version(names)
    ofed = reader.program("ofed_info", [params["ofed_info_path"], "-s"], sysinfo.parse_ofed_info)
    software["ofed"] = ofed["version"] if ofed else None
    software["ofed_package"] = ofed["package"] if ofed else None
    software["fabric_manager"] = reader.program(
        "nv-fabricmanager", [params["nv_fabricmanager_path"], "--version"], sysinfo.parse_fabricmanager_version)
    software["dcgm"] = reader.program("dcgmi", [params["dcgmi_path"], "--version"], sysinfo.parse_dcgmi_version)
    return software


def collect_host(params, warn=None):
    """The ``host`` facts (see the module's RETURN and docs): one pass over files and programs."""
    reader = HostReader(params["root"], params["timeout"], warn=warn)
    cmdline_text = reader.read("proc/cmdline")
    cmdline, cmd_params = sysinfo.parse_cmdline(cmdline_text) if cmdline_text is not None else (None, {})
    limits = reader.parsed("/proc/self/limits", sysinfo.parse_limits, reader.read("proc/self/limits"))
    hugepages = reader.parsed("/proc/meminfo", sysinfo.parse_meminfo, reader.read("proc/meminfo"))
    if hugepages is not None:
        hugepages["transparent"] = reader.parsed(
            "transparent_hugepage", sysinfo.parse_thp, reader.read("sys/kernel/mm/transparent_hugepage/enabled"))
    host = {
        "topo": None,
        "acs": None,
        "numa": read_numa(reader),
        "sysctl": read_sysctl(reader, params["sysctl_keys"]),
        "ulimits": limits,
        "hugepages": hugepages,
        "cpu_governor": read_governor(reader),
        "iommu": read_iommu(reader, cmd_params),
        "kernel_cmdline": cmdline,
        "software": read_software(reader, params) if params["software"] else None,
    }
    if params["topo"]:
        host["topo"] = reader.program("nvidia-smi topo", [params["nvidia_smi_path"], "topo", "-m"],
                                      lambda text: parse_topo(text, warn=warn), optional=False)
    if params["acs"]:
        host["acs"] = reader.program("lspci", [params["lspci_path"], "-vvv"], sysinfo.parse_acs, optional=False)
    host["errors"] = reader.errors
    return host


def collect_host_facts(module):
    bad = [key for key in module.params["sysctl_keys"] if not _SYSCTL_KEY.match(key)]
    if bad:
        raise OptionError("sysctl_keys", "sysctl_keys: %s is not a sysctl name (letters, digits, '.', '_', '-')" % ", ".join(bad))
    return {"host": collect_host(module.params, warn=module.warn)}
