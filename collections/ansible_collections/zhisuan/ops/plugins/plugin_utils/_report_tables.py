# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""The report's per-host tables: the facts shown for a host, the skipped checks grouped by check and reason, the
asset list and the firmware / driver baseline with drift marked. Pure functions of the results and the view."""

from __future__ import annotations

import json
import re
from collections import Counter

from ansible_collections.zhisuan.ops.plugins.plugin_utils._assets import ASSET_COLUMNS, asset_rows
from ansible_collections.zhisuan.ops.plugins.plugin_utils._report_i18n import N_
from ansible_collections.zhisuan.ops.plugins.plugin_utils._report_values import NONE_TEXT, format_value, natural_key

# host.facts keys shown in the per-host section, in this order, with their labels.
FACT_LABELS = (
    ("root_cause", N_("Root cause")),
    ("remedies", N_("Remedies, in order")),
    # a node judged offline from the files a site sent (zhisuan_saved_outputs, plugin_utils/_saved_outputs.py)
    ("saved_outputs", N_("Judged from the saved outputs in")),
    ("saved_outputs_read", N_("Saved outputs read")),
    ("saved_outputs_missing", N_("Not in the saved outputs, not judged")),
    ("gpu_model", N_("GPU model")),
    ("gpu_count", N_("GPU count")),
    ("gpu_profile", N_("GPU profile")),
    ("driver_version", N_("Driver")),
    ("cuda_version", N_("CUDA")),
    ("vbios_version", N_("VBIOS")),
    ("system_vendor", N_("System vendor")),
    ("system_model", N_("System model")),
    ("serial", N_("Serial")),
    ("bios_version", N_("BIOS")),
    ("bmc_firmware", N_("BMC firmware")),
    ("os", N_("OS")),
    ("kernel", N_("Kernel")),
)
MAX_EXTRA_FACTS = 12


def _facts_summary(facts):
    """A few (label, text) pairs from host.facts: the known keys first, then a nested ``gpu`` (gpu_info facts),
    then other scalar facts by name."""
    if not isinstance(facts, dict):
        return []
    shown = {}
    gpu = facts.get("gpu") if isinstance(facts.get("gpu"), dict) else {}
    gpus = gpu.get("gpus") if isinstance(gpu.get("gpus"), list) else []
    derived = {}
    if gpus:
        names = sorted(set(str(g.get("name")) for g in gpus if isinstance(g, dict) and g.get("name")))
        if names:
            derived["gpu_model"] = ", ".join(names)
        derived["gpu_count"] = len(gpus)
    elif gpu.get("attached_gpus") is not None:
        derived["gpu_count"] = gpu.get("attached_gpus")
    diagnosis = facts.get("diagnosis") if isinstance(facts.get("diagnosis"), dict) else {}
    if diagnosis.get("root_cause"):
        cause = diagnosis["root_cause"]
        derived["root_cause"] = "%s on %s: %s" % (cause.get("id"), cause.get("component") or "node", cause.get("message"))
        derived["remedies"] = " -> ".join(diagnosis.get("remedies") or [])
    # the judge's summary (docs/results.md): {model, count, driver_version, cuda_version, profile}
    for key, name in (("model", "gpu_model"), ("count", "gpu_count"), ("profile", "gpu_profile")):
        if gpu.get(key) is not None:
            derived.setdefault(name, gpu[key])
    for key in ("driver_version", "cuda_version"):
        if gpu.get(key) is not None:
            derived[key] = gpu.get(key)
    pairs = []
    for key, label in FACT_LABELS:
        value = facts.get(key, derived.get(key))
        if value is not None and not isinstance(value, dict):
            pairs.append((label, format_value(value)))
            shown[key] = True
    extra = 0
    for key in sorted(facts, key=natural_key):
        value = facts[key]
        if key in shown or key in ("gpu", "diagnosis") or isinstance(value, dict) or value is None:
            continue
        if isinstance(value, list) and any(isinstance(item, (dict, list)) for item in value):
            continue
        if extra >= MAX_EXTRA_FACTS:
            break
        pairs.append((key.replace("_", " "), format_value(value)))
        extra += 1
    return pairs


_GPU_NUMBER = re.compile(r"\bGPU \d+\b")


def skip_groups(checks):
    """Skipped checks grouped by check id and reason (the message with GPU numbers taken out), most first:
    [{id, message, count, components}]."""
    groups = {}
    for check in checks:
        key = (check["id"], _GPU_NUMBER.sub("GPU n", check["message"]))
        group = groups.setdefault(key, {"id": key[0], "message": key[1], "count": 0, "components": []})
        group["count"] += 1
        if check["component"]:
            group["components"].append(check["component"])
    return sorted(groups.values(), key=lambda g: (-g["count"], natural_key(g["id"])))


def fleet_skips(hosts, cluster):
    """The run's skipped checks grouped by id and reason: [{id, message, count, hosts, host_names (first 8)}]."""
    groups = {}
    for name, checks in [(h["name"], h["others"]) for h in hosts] + [("cluster", cluster)]:
        for group in skip_groups(c for c in checks if c["status"] == "skip"):
            key = (group["id"], group["message"])
            item = groups.setdefault(key, {"id": key[0], "message": key[1], "count": 0, "hosts": 0, "host_names": []})
            item["count"] += group["count"]
            item["hosts"] += 1
            if len(item["host_names"]) < 8:
                item["host_names"].append(name)
    return sorted(groups.values(), key=lambda g: (-g["count"], natural_key(g["id"])))


def _assets_view(results):
    """The asset list (delivery guide §6.2) when the run read BMCs or versions; else None."""
    hosts = results.get("hosts") or {}
    if not any((record or {}).get("facts", {}).get("bmc") or (record or {}).get("facts", {}).get("baseline")
               for record in hosts.values()):
        return None
    places = {}
    for name, record in hosts.items():
        facts = (record or {}).get("facts") or {}
        location = facts.get("location") or {}
        places[name] = {"zhisuan_rack": location.get("rack"), "zhisuan_u": location.get("u")}
    return {"columns": list(ASSET_COLUMNS), "rows": asset_rows(results, places)}


def _baseline_view(results):
    """Versions per node and component; a cell is marked as drift when the node fails its baseline check for the
    component or differs from what most nodes of its server model run."""
    hosts = results.get("hosts") or {}
    versions = {}
    for name, record in hosts.items():
        facts = (record or {}).get("facts") or {}
        if (facts.get("baseline") or {}).get("versions"):
            versions[name] = facts["baseline"]["versions"]
    if not versions:
        return None
    components = sorted(set(key for values in versions.values() for key, value in values.items() if value is not None))
    models = dict((name, ((hosts[name].get("facts") or {}).get("bmc") or {}).get("model") or "") for name in versions)
    common = {}
    for name, values in versions.items():
        for key in components:
            value = values.get(key)
            if value is not None:
                common.setdefault((models[name], key), Counter())[json.dumps(value, sort_keys=True, default=str)] += 1
    rows = []
    for name in sorted(versions, key=natural_key):
        failing = set(check.get("id") for check in hosts[name].get("checks") or [] if check.get("status") == "fail")
        cells = []
        for key in components:
            value = versions[name].get(key)
            peers = common.get((models[name], key)) or Counter()
            usual = peers.most_common(1)[0][1] if peers else 0
            outvoted = value is not None and usual > peers[json.dumps(value, sort_keys=True, default=str)]
            drift = ("baseline.%s.version" % key) in failing or outvoted
            cells.append({"value": format_value(value), "drift": drift})
        rows.append({"host": name, "model": models[name] or NONE_TEXT, "cells": cells})
    return {"components": components, "rows": rows}
