# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""``dcgmi health -c -j`` -> the ``dcgm_health`` facts: overall health, entities and incidents.

dcgmi prints its output boxes as JSON (``{"value": ..., "overflow": [...], "children": {...}}``); the health report
is ``body -> "Overall Health"`` plus one section per entity group (``GPU``) with each entity's health and its
``Errors`` per health system. Pure functions, stdlib only; the JSON helpers are ``dcgm``'s.
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu.dcgm import (
    TOOL, _document, _guarded, _ignore, _is_id, _text, slugify,
)

_HEALTH_WORDS = {"healthy": "Healthy", "warning": "Warning", "failure": "Failure", "internal error": "Internal error"}
# dcgmi Health.cpp HelperSystemToString -> the check's subject.
_HEALTH_SYSTEMS = {
    "pcie system": "pcie", "nvlink system": "nvlink", "pmu system": "pmu", "mcu system": "mcu",
    "memory system": "memory", "sm system": "sm", "inforom system": "inforom", "thermal system": "thermal",
    "power system": "power", "driver": "driver",
}


def parse_health(text, warn=None):
    """``dcgmi health -c -j`` output -> ``dcgm_health`` facts: overall health, entities and incidents."""
    return _guarded("health -c", _parse_health, text, warn=warn)


def _value(node):
    """A dcgmi output box: ``{"value": ..., "overflow": [...], "children": {...}}``."""
    return _text(node.get("value")) if isinstance(node, dict) else None


def _health(raw, where, warn):
    word = _HEALTH_WORDS.get((raw or "").strip().lower())
    if word is None:
        warn("dcgmi health: unknown health value %r in %s; please report" % (raw, where))
        return raw or "Unknown"
    return word


def _children(node):
    children = node.get("children") if isinstance(node, dict) else None
    return children if isinstance(children, dict) else {}


def _parse_health(text, warn=None):
    warn = warn or _ignore
    doc, messages = _document(text, "health -c", warn)
    body = doc.get("body")
    if not isinstance(body, dict):
        raise ParseError(TOOL, "the JSON of `dcgmi health -c -j` has no 'body' object")
    overall_raw = _value(body.get("Overall Health"))
    if overall_raw is None:
        raise ParseError(TOOL, "the JSON of `dcgmi health -c -j` has no 'Overall Health' value")
    entities, incidents = [], []
    for group, section in body.items():
        if group == "Overall Health":
            continue
        if not _children(section):
            warn("dcgmi health: unexpected section %r; please report" % group)
            continue
        for entity_id, node in _children(section).items():
            gpu = int(entity_id) if group.upper() == "GPU" and _is_id(str(entity_id)) else None
            label = "%s %s" % (group, entity_id)
            entities.append({"entity": label, "gpu": gpu, "health": _health(_value(node), label, warn)})
            for system, detail in _children(_children(node).get("Errors")).items():
                overflow = detail.get("overflow") if isinstance(detail, dict) else None
                parts = [part.strip() for part in (overflow if isinstance(overflow, list) else []) if isinstance(part, str)]
                incidents.append({
                    "entity": label,
                    "gpu": gpu,
                    "system": _HEALTH_SYSTEMS.get(system.strip().lower(), slugify(system)),
                    "system_name": system,
                    "health": _health(_value(detail), "%s %s" % (label, system), warn),
                    "message": " ".join(part for part in parts if part),
                })
    header = doc.get("header")
    return {
        "overall": _health(overall_raw, "Overall Health", warn),
        "entities": entities,
        "incidents": incidents,
        "header": [item for item in header if isinstance(item, str)] if isinstance(header, list) else [],
        "messages": messages,
    }
