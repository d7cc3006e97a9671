# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Host tuning conformance rules (delivery guide §4.4, §5.2): ``host`` facts (host_info) + ``gpu`` facts + the
site's values (``zhisuan_expected.tuning``) -> ``tuning.<subject>.<metric>`` checks. Pure, stdlib only.

Targets come from the site (``zhisuan_expected.tuning``) or from the defaults below. A site value that is not met
is a ``fail`` (remedy ``tune``); a default that is not met has the severity listed (a site sets a key to ``null``
to drop a default). Sources: [S] sourced, [U] our judgement, unsourced.

==========================  ===========================  ========  =============================================
key                         default                      severity  source
==========================  ===========================  ========  =============================================
gpu_nic_max_distance        PXB (NODE on Grace: GB200,   fail      [S] delivery guide §4.4 "GPU and NIC under the
                            GB300, GH200)                          same NUMA node / PCIe switch"; NCCL uses
                                                                   GPUDirect RDMA up to NCCL_NET_GDR_LEVEL, PXB by
                                                                   default (NCCL environment variables doc).
                                                                   Grace: the NIC hangs off the CPU, NODE is the
                                                                   nearest there is [U]
gpu_nics                    every NIC of topo -m         -         regex (or list) of RDMA devices meant for GPUs
iommu                       [off, passthrough]           fail      [S] NCCL troubleshooting, "PCI Access Control
                                                                   Services": IOMMU translation redirects
                                                                   peer-to-peer traffic to the root complex (slow
                                                                   or hangs); bare-metal training runs without it
acs                         disabled                     fail      [S] same page: "SrcValid+" in ACSCtl means ACS
                                                                   redirects P2P; disable it on bare metal
ulimits.memlock             unlimited                    fail      [S] RDMA registers (pins) the job's buffers:
                                                                   NVIDIA MLNX_OFED user manual and the Open MPI
                                                                   FAQ ask for an unlimited memlock
ulimits.nofile              ">= 1048576"                 warn      [U] delivery guide §5.2 asks for raised file
                                                                   handles without a number; 1048576 is the common
                                                                   fs.nr_open default ceiling
cpu_governor                performance                  warn      [S] delivery guide §5.2 "performance power
                                                                   policy, no needless power saving"
persistence_mode            true                         warn      [S] NVIDIA Driver Persistence doc: keep the
                                                                   driver loaded on compute nodes (persistence
                                                                   daemon / mode)
sysctl                      none (site values only)      -         {name: value or ">= N"}
hugepages                   none (site values only)      -         {total, size_kib, transparent}
==========================  ===========================  ========  =============================================

The value syntax (values, ``unlimited``, inequalities, lists) is in ``_tuning_targets``; the typed view of the
host facts in ``_tuning_facts``.
"""

from __future__ import annotations

import re

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._readings import mapping
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._tuning_facts import clean_host
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._tuning_targets import Targets, matches, want_text
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._util import fmt

LINK_RANK = {"X": 0, "PIX": 1, "PXB": 2, "PHB": 3, "NODE": 4, "SYS": 5, "SOC": 5}
_LINK_WHY = {
    "PHB": "through the CPU's PCIe host bridge",
    "NODE": "across PCIe host bridges of the NUMA node",
    "SYS": "across the CPU interconnect to the other NUMA node",
    "SOC": "across the CPU interconnect to the other NUMA node",
}
_GRACE = re.compile(r"\bG[BH]\d{3}\b", re.IGNORECASE)
DEFAULTS = {
    "gpu_nic_max_distance": ("PXB", "fail"),
    "iommu": (["off", "passthrough"], "fail"),
    "acs": ("disabled", "fail"),
    "cpu_governor": ("performance", "warn"),
    "persistence_mode": (True, "warn"),
}
DEFAULT_ULIMITS = {"memlock": ("unlimited", "fail"), "nofile": (">= 1048576", "warn")}


def _slug(text):
    return re.sub(r"[^a-z0-9_]+", "_", str(text).lower()).strip("_")


def _verdict(check_id, host, component, observed, target, good, message_ok, message_bad, evidence="", remedy="tune"):
    value, severity, origin = target
    expected = "%s (%s)" % (want_text(value), origin)
    if good:
        return make_check(check_id, host, "pass", component=component, observed=observed, expected=expected,
                          message=message_ok, evidence=evidence)
    return make_check(check_id, host, severity, component=component, observed=observed, expected=expected,
                      message=message_bad, remedy=remedy, evidence=evidence)


def _nic_filter(spec):
    if spec is None:
        return lambda name: True
    if isinstance(spec, (list, tuple)):
        wanted = set(str(item) for item in spec)
        return lambda name: name in wanted
    rx = re.compile(str(spec))
    return lambda name: rx.search(name) is not None


def _affinity_checks(host, topo, targets, gpu_facts, topo_error):
    if topo is None:
        if topo_error:
            return [make_check("tuning.affinity.gpu_nic", host, "error", component="GPU/NIC topology",
                               observed=topo_error, expected="nvidia-smi topo -m", remedy="investigate",
                               message="The GPU/NIC topology could not be read: %s" % topo_error)]
        return [make_check("tuning.affinity.gpu_nic", host, "skip", component="GPU/NIC topology",
                           message="The GPU/NIC topology was not collected")]
    names = [gpu.get("name") or "" for gpu in (gpu_facts or {}).get("gpus") or []]
    default = ("NODE", "fail") if any(_GRACE.search(name) for name in names) else DEFAULTS["gpu_nic_max_distance"]
    target = targets.get("gpu_nic_max_distance", default)
    if target is None:
        return []
    limit = str(target[0]).upper()
    if limit not in LINK_RANK:
        raise ValueError("zhisuan_expected.tuning.gpu_nic_max_distance must be one of PIX, PXB, PHB, NODE, SYS; got %r"
                         % (target[0],))
    wanted = _nic_filter((targets.tuning or {}).get("gpu_nics"))
    nics = [nic for nic in topo.get("nics") or [] if wanted(nic.get("device") or nic.get("name"))]
    if not nics:
        return [make_check("tuning.affinity.gpu_nic", host, "skip", component="GPU/NIC topology",
                           message="nvidia-smi topo -m shows no NIC for the GPUs (none, or none matches gpu_nics)")]
    checks = []
    for gpu in topo.get("gpus") or []:
        row = topo["matrix"].get(gpu["name"]) or {}
        links = sorted(((LINK_RANK[row[nic["name"]]], row[nic["name"]], nic["device"]) for nic in nics
                        if row.get(nic["name"]) in LINK_RANK), key=lambda item: (item[0], item[2]))
        numa = gpu.get("numa_affinity")
        component = "%s (NUMA %s)" % (gpu["name"], fmt(numa))
        evidence = ", ".join("%s=%s" % (nic["device"], row.get(nic["name"])) for nic in nics)
        if not links:
            checks.append(make_check("tuning.affinity.gpu_nic", host, "error", component=component, observed=None,
                                     expected="<= %s" % limit, remedy="investigate", evidence=evidence,
                                     message="%s has no readable link to any NIC in nvidia-smi topo -m" % gpu["name"]))
            continue
        rank, link, device = links[0]
        near = [item[2] for item in links if item[0] == rank]
        nearest = "nearest NIC%s (%s) %s" % ("s" if len(near) > 1 else "", ", ".join(near), "are" if len(near) > 1 else "is")
        observed = "%s %s" % (", ".join(near), link)
        checks.append(_verdict(
            "tuning.affinity.gpu_nic", host, component, observed, (limit, target[1], target[2]),
            rank <= LINK_RANK[limit],
            "%s reaches %s at %s (within %s)" % (gpu["name"], ", ".join(near), link, limit),
            "%s's %s reached %s (%s), farther than %s: GPUDirect RDMA is not used past %s by "
            "default and traffic crosses the host; fit the NIC under the GPU's PCIe switch (or pin jobs to the "
            "nearest GPU/NIC pairs), or set zhisuan_expected.tuning.gpu_nic_max_distance for a platform built "
            "this way" % (gpu["name"], nearest, _LINK_WHY.get(link, "through more bridges"), link, limit, limit),
            evidence=evidence))
    return checks


def _iommu_check(host, iommu, targets):
    target = targets.get("iommu", DEFAULTS["iommu"])
    if target is None:
        return []
    if not iommu:
        return [make_check("tuning.iommu.mode", host, "skip", component="IOMMU", message="The IOMMU state was not collected")]
    mode = iommu.get("mode")
    evidence = "units=%s, group_types=%s, cmdline=%s" % (
        ",".join(iommu.get("units") or []) or "none",
        ",".join("%s:%s" % item for item in sorted((iommu.get("group_types") or {}).items())) or "none",
        " ".join("%s=%s" % item for item in sorted((iommu.get("cmdline_flags") or {}).items())) or "none")
    accepted = target[0] if isinstance(target[0], (list, tuple)) else [target[0]]
    if mode == "enabled" and "enabled" not in accepted:
        return [make_check("tuning.iommu.mode", host, "warn", component="IOMMU", observed=mode,
                           expected=want_text(accepted), remedy="investigate", evidence=evidence,
                           message="An IOMMU is active but this kernel does not say whether it translates DMA; "
                                   "check for iommu=pt (passthrough) on the kernel command line")]
    return [_verdict("tuning.iommu.mode", host, "IOMMU", mode, target, mode in accepted,
                     "IOMMU is %s" % mode,
                     "IOMMU is %s: DMA translation sends GPU peer-to-peer and GPUDirect RDMA traffic through the "
                     "root complex (slow, or hangs); boot with iommu=pt or turn VT-d/IOMMU off for bare-metal "
                     "training" % mode, evidence=evidence)]


def _acs_check(host, acs, targets, acs_error):
    target = targets.get("acs", DEFAULTS["acs"])
    if target is None or str(target[0]) == "any":
        return []
    if acs is None:
        if acs_error:
            return [make_check("tuning.acs.redirect", host, "error", component="PCIe ACS", observed=acs_error,
                               expected="disabled", remedy="investigate",
                               message="The PCIe ACS state could not be read: %s" % acs_error)]
        return [make_check("tuning.acs.redirect", host, "skip", component="PCIe ACS", message="The ACS state was not collected")]
    if acs.get("access_denied") and not acs.get("controls"):
        return [make_check("tuning.acs.redirect", host, "error", component="PCIe ACS", observed="access denied",
                           expected="disabled", remedy="investigate",
                           message="lspci could not read PCIe capabilities (not root): run host_info with become")]
    enabled = acs.get("enabled") or []
    evidence = "; ".join("%s: %s" % (item.get("device") or "port", item.get("flags")) for item in enabled[:12])
    observed = "enabled on %d of %d ports" % (len(enabled), acs.get("controls") or 0) if enabled else "disabled"
    want_enabled = str(target[0]) == "enabled"
    return [_verdict("tuning.acs.redirect", host, "PCIe ACS", observed, target, bool(enabled) == want_enabled,
                     "ACS control is %s on the %d ports that implement it"
                     % ("on" if enabled else "off", acs.get("controls") or 0),
                     ("ACS redirect is on for %d PCIe ports: peer-to-peer and GPUDirect traffic is sent up to the "
                      "root complex; disable ACS (BIOS setting, or setpci at boot) on bare-metal training nodes"
                      % len(enabled)) if enabled else "ACS is off but the site wants it on",
                     evidence=evidence or "%d ACSCtl lines, no control bit set" % (acs.get("controls") or 0))]


_HINTS = {
    "memlock": ": RDMA registers (pins) the job's buffers and fails or falls back without it; set memlock unlimited "
               "(limits.conf, and LimitMEMLOCK=infinity for services such as slurmd)",
    "nofile": ": raise nofile in limits.conf (and LimitNOFILE for services)",
}


def _value_checks(host, section, observed_of, id_prefix, what):
    checks = []
    for name in sorted(section):
        target = section[name]
        observed, evidence = observed_of(name)
        check_id = "%s.%s" % (id_prefix, _slug(name))
        if observed is None:
            checks.append(make_check(check_id, host, "error", component="%s %s" % (what, name), observed=None,
                                     expected="%s (%s)" % (want_text(target[0]), target[2]), remedy="investigate",
                                     evidence=evidence, message="%s %s was not read from the node" % (what, name)))
            continue
        checks.append(_verdict(check_id, host, "%s %s" % (what, name), observed, target, matches(observed, target[0]),
                               "%s %s is %s" % (what, name, fmt(observed)),
                               "%s %s is %s, the target is %s (%s)%s" % (what, name, fmt(observed), want_text(target[0]),
                                                                         target[2], _HINTS.get(name, "")),
                               evidence=evidence))
    return checks


def _ulimit_checks(host, ulimits, targets):
    section = targets.section("ulimits", DEFAULT_ULIMITS)

    def observed_of(name):
        item = (ulimits or {}).get(name)
        if not item:
            return None, "limits not read" if ulimits is None else "no %s row in /proc/self/limits" % name
        units = " " + item["units"] if item.get("units") else ""
        return item.get("soft"), "soft=%s, hard=%s%s" % (fmt(item.get("soft")), fmt(item.get("hard")), units)
    return _value_checks(host, section, observed_of, "tuning.ulimit", "ulimit")


def _sysctl_checks(host, sysctl, targets):
    section = targets.section("sysctl")

    def observed_of(name):
        if sysctl is None or name not in sysctl:
            return None, "not read: add %s to host_info's sysctl_keys" % name
        value = sysctl[name]
        return value, "%s = %s" % (name, value if value is not None else "(not on this kernel)")
    return _value_checks(host, section, observed_of, "tuning.sysctl", "sysctl")


def _hugepage_checks(host, hugepages, targets):
    section = targets.section("hugepages")
    fields = {"total": "total", "size_kib": "size_kib", "transparent": "transparent"}
    for name in section:
        if name not in fields:
            raise ValueError("zhisuan_expected.tuning.hugepages.%s: known keys are total, size_kib, transparent" % name)

    def observed_of(name):
        if hugepages is None:
            return None, "/proc/meminfo not read"
        return hugepages.get(fields[name]), "HugePages_Total=%s, Hugepagesize=%s kB, transparent=%s" % (
            fmt(hugepages.get("total")), fmt(hugepages.get("size_kib")), fmt(hugepages.get("transparent")))
    return _value_checks(host, section, observed_of, "tuning.hugepages", "hugepages")


def _governor_check(host, governor, targets):
    target = targets.get("cpu_governor", DEFAULTS["cpu_governor"])
    if target is None:
        return []
    if governor is None:
        return [make_check("tuning.cpu.governor", host, "skip", component="CPU frequency governor",
                           expected=want_text(target[0]),
                           message="No cpufreq governor on this node (frequency left to the firmware/BIOS power "
                                   "policy); check the BIOS power profile instead")]
    counts = governor.get("counts") or {}
    value = governor.get("value")
    evidence = ", ".join("%s: %d CPUs" % item for item in sorted(counts.items()))
    return [_verdict("tuning.cpu.governor", host, "CPU frequency governor", value, target, matches(value, target[0]),
                     "Every CPU uses the %s governor" % value,
                     "CPU frequency governor is %s (%s), the target is %s: set it (cpupower frequency-set -g %s, "
                     "tuned profile) so CPUs do not clock down while feeding GPUs"
                     % (value, evidence, want_text(target[0]), want_text(target[0])), evidence=evidence)]


def _persistence_check(host, gpu_facts, targets):
    target = targets.get("persistence_mode", DEFAULTS["persistence_mode"])
    if target is None:
        return []
    gpus = (gpu_facts or {}).get("gpus")
    if not gpus:
        return [make_check("tuning.gpu.persistence_mode", host, "skip", component="GPUs",
                           expected=want_text(target[0]), message="No GPU facts to read persistence mode from")]
    off = ["GPU %s" % gpu.get("index", position) for position, gpu in enumerate(gpus)
           if not matches(gpu.get("persistence_mode"), target[0])]
    evidence = ", ".join("GPU %s=%s" % (gpu.get("index", position), fmt(gpu.get("persistence_mode")))
                         for position, gpu in enumerate(gpus))
    return [_verdict("tuning.gpu.persistence_mode", host, "GPUs", "%d of %d off target" % (len(off), len(gpus)) if off
                     else want_text(target[0]), target, not off,
                     "Persistence mode is %s on all %d GPUs" % (want_text(target[0]), len(gpus)),
                     ("Persistence mode is off on %s: the driver unloads between jobs, so each job pays the GPU "
                      "initialisation and loses state; enable nvidia-persistenced" % ", ".join(off)) if target[0] is True
                     else "Persistence mode is not %s on %s" % (want_text(target[0]), ", ".join(off)),
                     evidence=evidence)]


_OWNED_ERRORS = ("nvidia-smi topo", "lspci")


def judge_tuning(host, host_facts, gpu_facts=None, expected=None, thresholds=None):
    """Judge one host's ``host`` facts (host_info) and its ``gpu`` facts against ``zhisuan_expected.tuning``
    (``expected`` is the whole ``zhisuan_expected``). ``thresholds`` is accepted for symmetry. Check order:
    collect errors, affinity per GPU, IOMMU, ACS, sysctl, ulimits, hugepages, CPU governor, persistence mode."""
    facts, errors = clean_host(host_facts)
    targets = Targets((expected or {}).get("tuning"))
    checks = []
    for source in sorted(errors):
        if source in _OWNED_ERRORS:
            continue
        checks.append(make_check("tuning.collect.%s" % (_slug(source) or "source"), host, "error", component=source,
                                 observed=errors[source], expected="readable", remedy="investigate",
                                 message="host_info could not read %s: %s" % (source, errors[source])))
    checks.extend(_affinity_checks(host, facts.get("topo"), targets, gpu_facts, errors.get("nvidia-smi topo")))
    checks.extend(_iommu_check(host, facts.get("iommu"), targets))
    checks.extend(_acs_check(host, facts.get("acs"), targets, errors.get("lspci")))
    checks.extend(_sysctl_checks(host, facts.get("sysctl"), targets))
    checks.extend(_ulimit_checks(host, facts.get("ulimits"), targets))
    checks.extend(_hugepage_checks(host, facts.get("hugepages"), targets))
    checks.extend(_governor_check(host, facts.get("cpu_governor"), targets))
    checks.extend(_persistence_check(host, gpu_facts, targets))
    return checks


def summarize_tuning(host_facts):
    """The report's facts for the host's tuning: IOMMU mode, CPU governor, hugepages, software versions."""
    facts, _errors = clean_host(host_facts)
    return {
        "iommu": (facts.get("iommu") or {}).get("mode"),
        "cpu_governor": (facts.get("cpu_governor") or {}).get("value"),
        "hugepages": (facts.get("hugepages") or {}).get("total"),
        "software": dict(mapping(mapping(host_facts).get("software"))),
    }
