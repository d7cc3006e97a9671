# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""The host facts (host_info) in the types the tuning rules read (pure): every section checked, an unreadable one
reported as an error of ``<section> facts`` rather than judged."""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._readings import items, mapping, reading, text


def _clean_topo(topo):
    if not isinstance(topo, dict) or not isinstance(topo.get("matrix"), dict):
        return None
    gpus = [gpu for gpu in items(topo.get("gpus")) if isinstance(gpu, dict) and text(gpu.get("name"))]
    gpus = [dict(gpu, numa_affinity=reading(gpu.get("numa_affinity"), 0, 4096)) for gpu in gpus]
    nics = [dict(nic, name=str(nic.get("name")), device=text(nic.get("device")) or str(nic.get("name")))
            for nic in items(topo.get("nics")) if isinstance(nic, dict) and text(nic.get("name"))]
    matrix = dict((str(name), dict((str(key), cell) for key, cell in row.items() if isinstance(cell, str)))
                  for name, row in topo["matrix"].items() if isinstance(row, dict))
    return {"gpus": gpus, "nics": nics, "matrix": matrix}


def _clean_acs(acs):
    if not isinstance(acs, dict) or reading(acs.get("controls")) is None:
        return None
    enabled = [{"device": text(item.get("device")), "flags": text(item.get("flags")) or "?"}
               for item in items(acs.get("enabled")) if isinstance(item, dict)]
    return {"controls": int(acs["controls"]), "enabled": enabled, "access_denied": acs.get("access_denied") is True}


def _limit(value):
    return value if value == "unlimited" or reading(value, 0, None) is not None else None


def _clean_ulimits(ulimits):
    if not isinstance(ulimits, dict):
        return None
    return dict((name, {"soft": _limit(item.get("soft")), "hard": _limit(item.get("hard")), "units": text(item.get("units"))})
                for name, item in ulimits.items() if isinstance(item, dict))


def _clean_hugepages(hugepages):
    if not isinstance(hugepages, dict):
        return None
    keys = ("total", "free", "reserved", "surplus", "size_kib", "mem_total_kib")
    clean = dict((key, reading(hugepages.get(key))) for key in keys)
    clean["transparent"] = text(hugepages.get("transparent"))
    return clean


def _clean_governor(governor):
    if not isinstance(governor, dict) or not text(governor.get("value")):
        return None
    counts = dict((str(key), int(value)) for key, value in mapping(governor.get("counts")).items()
                  if reading(value) is not None)
    return {"value": governor["value"], "counts": counts}


def _clean_iommu(iommu):
    if not isinstance(iommu, dict) or not text(iommu.get("mode")):
        return None
    return {"mode": iommu["mode"], "units": [str(item) for item in items(iommu.get("units"))],
            "group_types": dict((str(key), value) for key, value in mapping(iommu.get("group_types")).items()
                                if reading(value) is not None),
            "cmdline_flags": dict((str(key), str(value)) for key, value in mapping(iommu.get("cmdline_flags")).items())}


def _clean_sysctl(sysctl):
    if not isinstance(sysctl, dict):
        return None
    return dict((str(key), value if isinstance(value, str) else None) for key, value in sysctl.items())


# host fact -> its typed view; a section present but unreadable is reported as an error of "<section> facts".
_SECTIONS = (("topo", _clean_topo), ("acs", _clean_acs), ("ulimits", _clean_ulimits), ("hugepages", _clean_hugepages),
             ("cpu_governor", _clean_governor), ("iommu", _clean_iommu), ("sysctl", _clean_sysctl))


def clean_host(raw):
    """``(facts, errors)``: the host facts in the types the rules read, and the collect errors (``{source: error}``)
    including one per section that is there but not readable (wrong type, odd values)."""
    raw = mapping(raw)
    errors = {}
    for item in items(raw.get("errors")):
        if isinstance(item, dict) and item.get("source") is not None:
            errors[str(item.get("source"))] = str(item.get("error"))
    facts = {}
    for key, clean in _SECTIONS:
        facts[key] = clean(raw.get(key)) if raw.get(key) is not None else None
        if raw.get(key) is not None and facts[key] is None:
            errors["%s facts" % key] = "the %s facts are not readable: %s" % (key, repr(raw.get(key))[:60])
    return facts, errors
