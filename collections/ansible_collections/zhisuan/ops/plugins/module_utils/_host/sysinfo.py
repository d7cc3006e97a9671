# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Pure parsers of the host files and program outputs ``host_info`` reads (text in, facts out).

``/proc/meminfo`` (hugepages), ``/proc/<pid>/limits`` (ulimits), ``/proc/cmdline``, transparent hugepage mode,
``lspci -vvv`` ACS control lines, ``/proc/driver/nvidia/version``, ``ofed_info -s``, ``nv-fabricmanager --version``,
``dcgmi --version`` and NCCL library file names. Each raises ParseError naming its source when the text is not what
that source prints.
"""

import re

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError

# /proc/<pid>/limits row names -> the ulimit names a site writes in limits.conf.
LIMIT_NAMES = {
    "Max cpu time": "cpu",
    "Max file size": "fsize",
    "Max data size": "data",
    "Max stack size": "stack",
    "Max core file size": "core",
    "Max resident set": "rss",
    "Max processes": "nproc",
    "Max open files": "nofile",
    "Max locked memory": "memlock",
    "Max address space": "as",
    "Max file locks": "locks",
    "Max pending signals": "sigpending",
    "Max msgqueue size": "msgqueue",
    "Max nice priority": "nice",
    "Max realtime priority": "rtprio",
    "Max realtime timeout": "rttime",
}
_LIMIT_ROW = re.compile(r"^(Max [a-z ]+?)\s{2,}(\S+)\s+(\S+)(?:\s+(\S+))?\s*$")
_MEMINFO_ROW = re.compile(r"^([A-Za-z0-9_()]+):\s+([0-9]{1,24})(?:\s+kB)?\s*$")
_ACS_CTL = re.compile(r"^\s*ACSCtl:\s*(.*)$")
_ACS_FLAG = re.compile(r"([A-Za-z]+)([+-])")
_PCI_HEADER = re.compile(r"^((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+\S")
_NVRM = re.compile(r"^NVRM version:.*?Kernel Module(?: for \S+)?\s+([0-9]+(?:\.[0-9]+)+)\b")
_OFED = re.compile(r"^\s*((?:MLNX_OFED_LINUX|OFED-internal|OFED|DOCA[A-Za-z_-]*?))-(\d[\w.\-]*?):?\s*$")
_FM = re.compile(r"Fabric Manager version is\s*:\s*(\d[\w.\-]*)")
_DCGMI = re.compile(r"^\s*dcgmi\s+version:\s*(\d[\w.\-]*)\s*$", re.MULTILINE)
_NCCL_LIB = re.compile(r"^libnccl\.so\.([0-9]{1,6}\.[0-9]{1,6}\.[0-9]{1,6})$")


def _int_or_unlimited(text, source):
    if text == "unlimited":
        return "unlimited"
    if re.match(r"^[0-9]{1,24}$", text):
        return int(text)
    raise ParseError(source, "limit value %r is neither a number nor 'unlimited'" % text)


def parse_limits(text):
    """``/proc/<pid>/limits`` -> ``{nofile: {soft, hard, units}, memlock: {...}, ...}``.

    Values are integers in the file's units (bytes for memlock and stack) or the string ``unlimited``.
    """
    source = "/proc/self/limits"
    lines = [line for line in (text or "").splitlines() if line.strip()]
    if not lines or not lines[0].startswith("Limit"):
        raise ParseError(source, "no 'Limit  Soft Limit  Hard Limit  Units' header")
    limits = {}
    for line in lines[1:]:
        match = _LIMIT_ROW.match(line)
        if not match:
            raise ParseError(source, "unreadable limits row %r" % line)
        name = LIMIT_NAMES.get(match.group(1).strip())
        if name is None:
            continue  # a limit this kernel added later: not one the rules know
        limits[name] = {
            "soft": _int_or_unlimited(match.group(2), source),
            "hard": _int_or_unlimited(match.group(3), source),
            "units": match.group(4),
        }
    if "nofile" not in limits:
        raise ParseError(source, "no 'Max open files' row")
    return limits


def parse_meminfo(text):
    """``/proc/meminfo`` -> hugepage facts: ``{total, free, reserved, surplus, size_kib, mem_total_kib}``."""
    source = "/proc/meminfo"
    values = {}
    for line in (text or "").splitlines():
        match = _MEMINFO_ROW.match(line)
        if match:
            values[match.group(1)] = int(match.group(2))
    if "MemTotal" not in values:
        raise ParseError(source, "no MemTotal line")
    return {
        "total": values.get("HugePages_Total"),
        "free": values.get("HugePages_Free"),
        "reserved": values.get("HugePages_Rsvd"),
        "surplus": values.get("HugePages_Surp"),
        "size_kib": values.get("Hugepagesize"),
        "mem_total_kib": values["MemTotal"],
    }


def parse_thp(text):
    """``/sys/kernel/mm/transparent_hugepage/enabled`` (``always [madvise] never``) -> the bracketed mode."""
    match = re.search(r"\[(\w+)\]", text or "")
    if not match:
        raise ParseError("transparent_hugepage", "no [selected] mode in %r" % (text or "").strip())
    return match.group(1)


def parse_cmdline(text):
    """``/proc/cmdline`` -> ``(the line, {parameter: value or True})`` (the last occurrence of a parameter wins,
    as in the kernel)."""
    line = (text or "").strip()
    params = {}
    for token in line.split():
        if "=" in token:
            key, value = token.split("=", 1)
            params[key] = value
        else:
            params[token] = True
    return line, params


def parse_acs(text):
    """``lspci -vvv`` -> ``{"controls": n, "enabled": [{"device", "flags"}], "access_denied": bool}``.

    ``controls`` counts the ``ACSCtl:`` lines (ports that implement ACS); ``enabled`` lists those with any control
    bit set (``SrcValid+``, ``ReqRedir+``, ``CmpltRedir+`` ...), each with the device header it belongs to (``None``
    when the text holds the ACSCtl lines alone, as ``lspci -vvv | grep ACSCtl`` prints them). ``access_denied`` is
    true when lspci could not read capabilities (not run as root). Empty output, or output with neither a device
    header nor an ``ACSCtl`` line, is a ParseError:
    a node always has PCI devices, so nothing read is not "ACS off".
    """
    if not (text or "").strip():
        raise ParseError("lspci", "lspci -vvv printed nothing (read 0 lines): every node has PCI devices")
    device = None
    devices = 0
    controls = 0
    enabled = []
    denied = False
    for line in (text or "").splitlines():
        header = _PCI_HEADER.match(line)
        if header:
            device = header.group(1)
            devices += 1
            continue
        if "Capabilities: <access denied>" in line:
            denied = True
            continue
        match = _ACS_CTL.match(line)
        if not match:
            continue
        flags = _ACS_FLAG.findall(match.group(1))
        if not flags:
            raise ParseError("lspci", "unreadable ACSCtl line %r" % line.strip())
        controls += 1
        on = [name for name, sign in flags if sign == "+"]
        if on:
            enabled.append({"device": device, "flags": " ".join(on)})
    if not devices and not controls and not denied:
        raise ParseError("lspci", "no PCI device and no ACSCtl line in the lspci -vvv output (read %d lines): %r"
                         % (len(text.splitlines()), text.strip()[:80]))
    return {"controls": controls, "enabled": enabled, "access_denied": denied}


def parse_nvidia_version(text):
    """``/proc/driver/nvidia/version`` -> the kernel module version (``535.129.03``)."""
    for line in (text or "").splitlines():
        match = _NVRM.match(line.strip())
        if match:
            return match.group(1)
    raise ParseError("/proc/driver/nvidia/version", "no 'NVRM version: ... Kernel Module <version>' line")


def parse_ofed_info(text):
    """``ofed_info -s`` -> ``{"package": "MLNX_OFED_LINUX" | "OFED-internal" (DOCA-OFED) | ..., "version"}``."""
    for line in (text or "").splitlines():
        if not line.strip():
            continue
        match = _OFED.match(line)
        if match:
            return {"package": match.group(1), "version": match.group(2)}
        break
    raise ParseError("ofed_info", "no '<package>-<version>:' line in %r" % (text or "").strip()[:80])


def parse_fabricmanager_version(text):
    """``nv-fabricmanager --version`` -> ``535.161.08``."""
    match = _FM.search(text or "")
    if not match:
        raise ParseError("nv-fabricmanager", "no 'Fabric Manager version is : <version>' line")
    return match.group(1)


def parse_dcgmi_version(text):
    """``dcgmi --version`` -> ``3.3.9``."""
    match = _DCGMI.search(text or "")
    if not match:
        raise ParseError("dcgmi", "no 'dcgmi  version: <version>' line")
    return match.group(1)


def nccl_version(file_names):
    """The highest ``libnccl.so.X.Y.Z`` version among library file names (``None`` when there is none)."""
    found = []
    for name in file_names:
        match = _NCCL_LIB.match(name)
        if match:
            found.append(tuple(int(part) for part in match.group(1).split(".")))
    if not found:
        return None
    return ".".join(str(part) for part in max(found))


def parse_cpulist(text):
    """A kernel cpulist (``0-3,8,10-11``) -> the CPU count (``None`` for an empty list)."""
    text = (text or "").strip()
    if not text:
        return None
    count = 0
    for part in text.split(","):
        bounds = part.split("-")
        if not all(re.match(r"^[0-9]{1,7}$", bound) for bound in bounds) or len(bounds) > 2 \
                or int(bounds[-1]) < int(bounds[0]):
            raise ParseError("cpulist", "unreadable cpulist %r" % text[:80])
        count += int(bounds[-1]) - int(bounds[0]) + 1
    return count


def iommu_mode(units, group_types, params):
    """``off`` | ``passthrough`` | ``translated`` | ``enabled`` from what sysfs and the command line say.

    ``units``: entries of /sys/class/iommu (dmar0, ivhd0 ...); ``group_types``: {type: count} from
    /sys/kernel/iommu_groups/*/type (``identity`` is passthrough, ``DMA``/``DMA-FQ`` translate); ``params``: parsed
    kernel command line. ``enabled``: an IOMMU is active but its default domain type is not exposed (old kernel)
    and the command line does not say ``iommu=pt``.
    """
    groups = sum(group_types.values()) if group_types else 0
    if not units and not groups:
        return "off"
    typed = dict((key, value) for key, value in (group_types or {}).items() if key != "unknown")
    if typed:
        if any(key.startswith("DMA") for key in typed):
            return "translated"
        return "passthrough"
    if params.get("iommu") == "pt" or params.get("iommu.passthrough") in ("1", "on", "y"):
        return "passthrough"
    return "enabled"
