# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""What a firmware inventory item is, by the shipped table ``data/firmware_classes.yml`` (and a site's rules in
front of it): pure functions, stdlib only. ``compile_table`` checks a loaded table and raises ValueError naming
what is wrong; ``classify`` gives the component of one ``firmware`` fact, or None when the item gives no version
(not the running image, or a version that says "none here")."""

from __future__ import annotations

import re

SCHEMA = "zhisuan.ops/firmware-classes/v1"
COMPONENTS = ("bios", "bmc", "cpld", "gpu", "gpu_baseboard", "pcie_switch", "nic", "psu", "drive", "other")
FIELDS = ("any", "id", "name", "description", "software_id", "related")
_SPACES = re.compile(r"[^A-Za-z0-9]+")


def _normal(value):
    return _SPACES.sub(" ", str(value or "")).strip()


def _pattern(value, where):
    if not isinstance(value, str) or not value:
        raise ValueError("%s: pattern must be a non-empty string, got %r" % (where, value))
    try:
        return re.compile(value, re.IGNORECASE)
    except re.error as exc:
        raise ValueError("%s: pattern %r does not compile: %s" % (where, value, exc))


def _rule(rule, where, component_needed=True):
    if isinstance(rule, str):
        rule = {"pattern": rule}
    if not isinstance(rule, dict):
        raise ValueError("%s: a rule is a mapping with pattern (and component, field), got %r" % (where, rule))
    unknown = sorted(set(rule) - {"component", "pattern", "field", "why"})
    if unknown:
        raise ValueError("%s: unknown keys %s (known: component, pattern, field, why)" % (where, ", ".join(unknown)))
    component = rule.get("component")
    if component_needed and component not in COMPONENTS:
        raise ValueError("%s: component must be one of %s, got %r" % (where, ", ".join(COMPONENTS), component))
    field = rule.get("field", "any")
    if field not in FIELDS:
        raise ValueError("%s: field must be one of %s, got %r" % (where, ", ".join(FIELDS), field))
    return (component, field, _pattern(rule.get("pattern"), where))


def _rules(value, where, component_needed=True):
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError("%s must be a list of rules, got %r" % (where, type(value).__name__))
    return [_rule(item, "%s[%d]" % (where, position), component_needed) for position, item in enumerate(value)]


def compile_table(table, site=None, name="data/firmware_classes.yml"):
    """The shipped ``table`` (loaded YAML) with a site's rules (``zhisuan_firmware_classes``, same keys) in front,
    ready for ``classify``. Raises ValueError naming the file or variable and the entry that is wrong."""
    compiled = {"no_version": [], "inactive": [], "vendors": {}, "rules": []}
    for source, where in ((site, "zhisuan_firmware_classes"), (table, name)):
        if source is None:
            continue
        if not isinstance(source, dict):
            raise ValueError("%s must be a mapping, got %r" % (where, type(source).__name__))
        unknown = sorted(set(source) - {"schema", "version", "no_version", "inactive", "vendors", "rules"})
        if unknown:
            raise ValueError("%s: unknown keys %s" % (where, ", ".join(unknown)))
        if where == name and source.get("schema") != SCHEMA:
            raise ValueError("%s: schema must be %s, got %r" % (where, SCHEMA, source.get("schema")))
        compiled["no_version"] += [_pattern(item, "%s no_version[%d]" % (where, position))
                                   for position, item in enumerate(source.get("no_version") or [])]
        compiled["inactive"] += _rules(source.get("inactive"), "%s inactive" % where, component_needed=False)
        vendors = source.get("vendors") or {}
        if not isinstance(vendors, dict):
            raise ValueError("%s: vendors must map a vendor name to rules" % where)
        for vendor, rules in vendors.items():
            compiled["vendors"].setdefault(str(vendor), []).extend(_rules(rules, "%s vendors.%s" % (where, vendor)))
        compiled["rules"] += _rules(source.get("rules"), "%s rules" % where)
    return compiled


def _texts(item, related=()):
    texts = dict((field, _normal(item.get(field))) for field in ("id", "name", "description", "software_id"))
    texts["any"] = " ".join(value for value in texts.values() if value)
    # the related parts' names are read by rules that name the field only (a RAID kit's name says NVMe)
    texts["related"] = " ".join(_normal(name) for name in related if name)
    return texts


def _first(rules, texts):
    for component, field, pattern in rules:
        if pattern.search(texts[field]):
            return component or "ignore"
    return None


def classify(item, compiled, vendor=None, related=()):
    """The component of a firmware item (``{id, name, description, software_id, version}``), or None when it gives
    no version. ``related``: the names of the parts its ``RelatedItem`` links to (a PCIe device's name)."""
    version = item.get("version")
    if version is None or any(pattern.search(str(version).strip()) for pattern in compiled["no_version"]):
        return None
    texts = _texts(item, related)
    if _first(compiled["inactive"], texts):
        return None
    return (_first(compiled["vendors"].get(vendor or "", []), texts) or _first(compiled["rules"], texts)
            or "other")
