# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""Load the Xid catalog shipped as data (``data/xid_catalog.yml``) and merge a site override over it.

The override has the shape of the catalog, partially: ``codes.<code>`` rows are merged key by key (a new code must
bring every required key), ``recovery_actions.<n>`` and ``buckets.<name>`` likewise. The result is validated as a
whole, so a typo in an override fails at load time, naming the file. The rules that read it are pure and live in
``module_utils/_judge/xid.py``.

The NVSwitch SXid catalog (``data/sxid_catalog.yml``) is loaded with it as ``catalog["sxid"]``; the override's
``sxid:`` section (``version``, ``classes``, ``codes``) is merged over it the same way (``load_sxid_catalog``).
"""

from __future__ import annotations

import os
import re

import yaml

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import REMEDIES
from ansible_collections.zhisuan.ops.plugins.plugin_utils._yaml import safe_load

DEFAULT_PATH = os.path.normpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "xid_catalog.yml"))

CLASSES = ("application", "hardware", "informational", "decode_required")
SEVERITIES = ("fail", "warn", "info")
ROW_REQUIRED = ("meaning", "nvidia_action", "class", "severity", "remedy", "source")
ROW_OPTIONAL = ("mnemonic", "investigatory", "notes", "companions", "clears")
ACTION_REQUIRED = ("name", "severity", "remedy", "meaning")
TOP_KEYS = ("version", "nvidia_catalog_as_of", "source", "buckets", "codes", "recovery_actions", "nvlink_error_registers",
            "clearing")
NLE_GROUP_REQUIRED = ("register", "bits", "severity", "remedy", "meaning")
NLE_GROUP_OPTIONAL = ("repeat_over", "secondary")
SXID_PATH = os.path.normpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "sxid_catalog.yml"))
SXID_TOP_KEYS = ("version", "fm_guide_as_of", "source", "classes", "codes")
SXID_CLASS_KEYS = ("severity", "remedy", "pairs_with", "meaning")
SXID_ROW_REQUIRED = ("name", "class", "source")
SXID_ROW_OPTIONAL = ("severity", "remedy", "pairs_with", "notes")


class CatalogError(ValueError):
    """A catalog or override file that cannot be used; the message names the file."""


def _read(path):
    try:
        with open(path, "rb") as handle:
            data = safe_load(handle)
    except (IOError, OSError) as exc:
        raise CatalogError("Xid catalog %s cannot be read: %s" % (path, exc.strerror or exc))
    except yaml.YAMLError as exc:
        raise CatalogError("Xid catalog %s is not valid YAML: %s" % (path, exc))
    if not isinstance(data, dict):
        raise CatalogError("Xid catalog %s is not a mapping" % path)
    return data


def _int_keys(mapping, what, where):
    if mapping is None:
        return {}
    if not isinstance(mapping, dict):
        raise CatalogError("%s: '%s' must be a mapping" % (where, what))
    out = {}
    for key, value in mapping.items():
        try:
            number = int(str(key).strip())
        except ValueError:
            raise CatalogError("%s: %s key %r is not a number" % (where, what, key))
        out[number] = value
    return out


def _merge_rows(base, extra, what, where):
    merged = dict((key, dict(value) if isinstance(value, dict) else value) for key, value in base.items())
    for key, value in extra.items():
        if not isinstance(value, dict):
            raise CatalogError("%s: %s %s must be a mapping" % (where, what, key))
        row = dict(merged.get(key) or {})
        row.update(value)
        merged[key] = row
    return merged


def _check_choice(value, choices, what, where):
    if value not in choices:
        raise CatalogError("%s: %s is %r; allowed: %s" % (where, what, value, ", ".join(choices)))


def _check_row(code, row, buckets, tags, where):
    at = "%s: code %s" % (where, code)
    if not isinstance(row, dict):
        raise CatalogError("%s must be a mapping" % at)
    missing = [key for key in ROW_REQUIRED if key not in row]
    if missing:
        raise CatalogError("%s is missing %s" % (at, ", ".join(missing)))
    unknown = sorted(key for key in row if key not in ROW_REQUIRED + ROW_OPTIONAL)
    if unknown:
        raise CatalogError("%s has unknown key(s) %s; allowed: %s" % (at, ", ".join(unknown), ", ".join(ROW_REQUIRED + ROW_OPTIONAL)))
    if not isinstance(row["meaning"], str) or not row["meaning"].strip():
        raise CatalogError("%s: meaning must be a non-empty string" % at)
    action = row["nvidia_action"] or ""
    if action and action not in buckets:
        raise CatalogError("%s: nvidia_action %r is not a bucket of the catalog (%s)" % (at, action, ", ".join(sorted(buckets))))
    _check_choice(row["class"], CLASSES, "class", at)
    _check_choice(row["severity"], SEVERITIES, "severity", at)
    _check_choice(row["remedy"], REMEDIES, "remedy", at)
    source = row["source"]
    if not isinstance(source, list) or not source:
        raise CatalogError("%s: source must be a non-empty list of source tags" % at)
    strange = [tag for tag in source if tag not in tags]
    if strange:
        raise CatalogError("%s: unknown source tag(s) %s; defined: %s" % (at, ", ".join(map(str, strange)), ", ".join(sorted(tags))))
    companions = row.get("companions", [])
    if not isinstance(companions, list) or not all(isinstance(item, int) and not isinstance(item, bool) for item in companions):
        raise CatalogError("%s: companions must be a list of Xid codes" % at)
    out = dict(row)
    out["nvidia_action"] = action
    out["companions"] = list(companions)
    out["clears"] = _clearing_rule(row.get("clears"), "%s: clears" % at) if row.get("clears") is not None else None
    for key in ("mnemonic", "investigatory", "notes"):
        out[key] = "" if out.get(key) is None else str(out.get(key))
    return out


def _clearing_rule(value, at):
    """``sticky`` or a number of quiet seconds (an int >= 0): how long a finding of the code stays."""
    if value == "sticky":
        return value
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    raise CatalogError("%s must be 'sticky' or a number of quiet seconds (an integer >= 0), got %r" % (at, value))


def _clearing(value, where):
    """The ``clearing`` table: per class its rule (``_clearing_rule``), ``sticky`` where it does not say."""
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise CatalogError("%s: 'clearing' must be a mapping of class to 'sticky' or quiet seconds" % where)
    odd = sorted(str(key) for key in value if key not in CLASSES)
    if odd:
        raise CatalogError("%s: clearing names unknown class(es) %s; classes: %s"
                           % (where, ", ".join(odd), ", ".join(CLASSES)))
    return dict((name, _clearing_rule(value.get(name, "sticky"), "%s: clearing %s" % (where, name)))
                for name in CLASSES)


def _header_tags(data, where, top_keys):
    """Check a catalog's top-level keys, its version and its sources; return ``(version, sources, source tags)``."""
    unknown = sorted(key for key in data if key not in top_keys)
    if unknown:
        raise CatalogError("%s: unknown top-level key(s) %s; allowed: %s" % (where, ", ".join(unknown), ", ".join(top_keys)))
    version = data.get("version")
    if version is None or not str(version).strip():
        raise CatalogError("%s has no 'version'" % where)
    sources = data.get("source")
    if not isinstance(sources, list) or not all(isinstance(item, dict) and item.get("tag") for item in sources):
        raise CatalogError("%s: 'source' must be a list of {tag, what, where}" % where)
    return version, sources, set(str(item["tag"]) for item in sources)


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _nvlink_error_registers(table, where):
    """The Xid 74 register table (``nvlink_error_registers``), checked: ``{applies_to, registers, groups}``."""
    at = "%s: nvlink_error_registers" % where
    if table is None:
        return {"applies_to": [], "registers": [], "groups": []}
    if not isinstance(table, dict) or sorted(table) != ["applies_to", "groups", "registers"]:
        raise CatalogError("%s must be a mapping of applies_to, registers and groups" % at)
    patterns = table["applies_to"]
    if not isinstance(patterns, list) or not all(isinstance(item, str) for item in patterns):
        raise CatalogError("%s: applies_to must be a list of regular expressions" % at)
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise CatalogError("%s: applies_to %r is not a regular expression: %s" % (at, pattern, exc))
    registers = table["registers"]
    if not isinstance(registers, list) or not all(_is_int(item) and 1 <= item <= 7 for item in registers):
        raise CatalogError("%s: registers must be a list of places 1-7 in the line" % at)
    groups = []
    for number, group in enumerate(table["groups"] or [], 1):
        place = "%s: group %d" % (at, number)
        if not isinstance(group, dict):
            raise CatalogError("%s must be a mapping" % place)
        missing = [key for key in NLE_GROUP_REQUIRED if key not in group]
        unknown = sorted(key for key in group if key not in NLE_GROUP_REQUIRED + NLE_GROUP_OPTIONAL)
        if missing or unknown:
            raise CatalogError("%s: missing %s, unknown %s"
                               % (place, ", ".join(missing) or "none", ", ".join(unknown) or "none"))
        if group["register"] not in registers:
            raise CatalogError("%s: register %r is not one of registers %s" % (place, group["register"], registers))
        if not isinstance(group["bits"], list) or not all(_is_int(bit) and 0 <= bit <= 63 for bit in group["bits"]):
            raise CatalogError("%s: bits must be a list of bit numbers 0-63" % place)
        _check_choice(group["severity"], SEVERITIES, "severity", place)
        _check_choice(group["remedy"], REMEDIES, "remedy", place)
        repeat = group.get("repeat_over")
        if repeat is not None and not (_is_int(repeat) and repeat >= 0):
            raise CatalogError("%s: repeat_over must be a whole number" % place)
        groups.append(dict(group, meaning=str(group["meaning"]), secondary=bool(group.get("secondary")),
                           repeat_over=repeat))
    return {"applies_to": list(patterns), "registers": list(registers), "groups": groups}


def _validate(data, where):
    version, sources, tags = _header_tags(data, where, TOP_KEYS)
    buckets = data.get("buckets")
    if not isinstance(buckets, dict) or not buckets:
        raise CatalogError("%s: 'buckets' must be a non-empty mapping" % where)
    for name, bucket in buckets.items():
        if not isinstance(bucket, dict):
            raise CatalogError("%s: bucket %s must be a mapping" % (where, name))
        _check_choice(bucket.get("remedy"), REMEDIES, "remedy", "%s: bucket %s" % (where, name))
    codes = data["codes"]
    if not codes:
        raise CatalogError("%s: 'codes' is empty" % where)
    rows = dict((code, _check_row(code, row, buckets, tags, where)) for code, row in sorted(codes.items()))
    actions = {}
    for number, action in sorted(data["recovery_actions"].items()):
        at = "%s: recovery_actions %s" % (where, number)
        if not isinstance(action, dict):
            raise CatalogError("%s must be a mapping" % at)
        missing = [key for key in ACTION_REQUIRED if key not in action]
        if missing:
            raise CatalogError("%s is missing %s" % (at, ", ".join(missing)))
        _check_choice(action["severity"], SEVERITIES, "severity", at)
        _check_choice(action["remedy"], REMEDIES, "remedy", at)
        actions[number] = dict(action, name=str(action["name"]))
    return {
        "version": str(version).strip(),
        "nvidia_catalog_as_of": str(data.get("nvidia_catalog_as_of") or ""),
        "source": sources,
        "buckets": buckets,
        "codes": rows,
        "recovery_actions": actions,
        "nvlink_error_registers": _nvlink_error_registers(data.get("nvlink_error_registers"), where),
        "clearing": _clearing(data.get("clearing"), where),
    }


def load_catalog(path=None, overrides=None):
    """Return the validated catalog: ``{version, nvidia_catalog_as_of, source, buckets, codes: {int: row},
    recovery_actions: {int: action}, nvlink_error_registers: {applies_to, registers, groups}, clearing: {class:
    rule}, files}``.

    ``path`` defaults to the shipped ``data/xid_catalog.yml``. ``overrides`` is a site override file (a path) or an
    already-loaded mapping (e.g. an inventory variable). With an override the version reads ``<base>+<override's
    version or 'site'>``. Raises ``CatalogError`` (a ValueError) naming the file that is wrong.
    """
    path = path or DEFAULT_PATH
    data = _read(path)
    files = [path]
    where = "Xid catalog %s" % path
    data["codes"] = _int_keys(data.get("codes"), "codes", where)
    data["recovery_actions"] = _int_keys(data.get("recovery_actions"), "recovery_actions", where)
    if overrides is not None:
        if isinstance(overrides, dict):
            extra, label = overrides, "site overrides (mapping)"
        else:
            extra, label = _read(overrides), str(overrides)
            files.append(label)
        where = "Xid catalog %s with overrides %s" % (path, label)
        odd = sorted(key for key in extra if key not in ("version", "codes", "recovery_actions", "buckets", "source",
                                                         "sxid", "nvlink_error_registers", "clearing"))
        if odd:
            raise CatalogError("Xid catalog overrides %s: unknown key(s) %s; allowed: buckets, clearing, codes, "
                               "nvlink_error_registers, recovery_actions, source, sxid, version"
                               % (label, ", ".join(map(str, odd))))
        if isinstance(extra.get("clearing"), dict):  # per class, over the shipped table
            data["clearing"] = dict(data.get("clearing") or {}, **extra["clearing"])
        elif extra.get("clearing") is not None:
            data["clearing"] = extra["clearing"]  # refused by the validation, naming the override
        if extra.get("nvlink_error_registers") is not None:  # the whole table, replaced
            data["nvlink_error_registers"] = extra["nvlink_error_registers"]
        data["codes"] = _merge_rows(data["codes"], _int_keys(extra.get("codes"), "codes", label), "code", label)
        data["recovery_actions"] = _merge_rows(data["recovery_actions"],
                                               _int_keys(extra.get("recovery_actions"), "recovery_actions", label),
                                               "recovery action", label)
        if extra.get("buckets"):
            data["buckets"] = _merge_rows(data.get("buckets") or {}, extra["buckets"], "bucket", label)
        if extra.get("source"):
            data["source"] = list(data.get("source") or []) + list(extra["source"])
        data["version"] = "%s+%s" % (data.get("version"), extra.get("version") or "site")
    catalog = _validate(data, where)
    catalog["files"] = files
    sxid = None
    if overrides is not None and extra.get("sxid") is not None:
        sxid = (extra["sxid"], "%s (sxid)" % label)
    catalog["sxid"] = load_sxid_catalog(overrides=sxid)
    return catalog


def _sxid_list(value, at):
    if not isinstance(value, list) or not all(isinstance(item, int) and not isinstance(item, bool) for item in value):
        raise CatalogError("%s: pairs_with must be a list of Xid codes" % at)
    return list(value)


def _validate_sxid(data, where):
    version, sources, tags = _header_tags(data, where, SXID_TOP_KEYS)
    classes = data.get("classes")
    if not isinstance(classes, dict) or not classes:
        raise CatalogError("%s: 'classes' must be a non-empty mapping" % where)
    for name, row in classes.items():
        at = "%s: class %s" % (where, name)
        if not isinstance(row, dict) or sorted(row) != sorted(SXID_CLASS_KEYS):
            raise CatalogError("%s must be a mapping with exactly %s" % (at, ", ".join(SXID_CLASS_KEYS)))
        _check_choice(row["severity"], SEVERITIES, "severity", at)
        _check_choice(row["remedy"], REMEDIES, "remedy", at)
        _sxid_list(row["pairs_with"], at)
    codes = data.get("codes")
    if not codes:
        raise CatalogError("%s: 'codes' is empty" % where)
    rows = {}
    for code, row in sorted(codes.items()):
        at = "%s: SXid %s" % (where, code)
        if not isinstance(row, dict):
            raise CatalogError("%s must be a mapping" % at)
        missing = [key for key in SXID_ROW_REQUIRED if key not in row]
        if missing:
            raise CatalogError("%s is missing %s" % (at, ", ".join(missing)))
        odd = sorted(key for key in row if key not in SXID_ROW_REQUIRED + SXID_ROW_OPTIONAL)
        if odd:
            raise CatalogError("%s has unknown key(s) %s; allowed: %s" % (
                at, ", ".join(odd), ", ".join(SXID_ROW_REQUIRED + SXID_ROW_OPTIONAL)))
        if row["class"] not in classes:
            raise CatalogError("%s: class is %r; allowed: %s" % (at, row["class"], ", ".join(sorted(classes))))
        base = classes[row["class"]]
        out = {"name": str(row["name"]), "class": row["class"], "severity": row.get("severity", base["severity"]),
               "remedy": row.get("remedy", base["remedy"]), "notes": str(row.get("notes") or ""),
               "pairs_with": _sxid_list(row.get("pairs_with", base["pairs_with"]), at), "source": row["source"]}
        _check_choice(out["severity"], SEVERITIES, "severity", at)
        _check_choice(out["remedy"], REMEDIES, "remedy", at)
        if not isinstance(out["source"], list) or not out["source"]:
            raise CatalogError("%s: source must be a non-empty list of source tags" % at)
        strange = [tag for tag in out["source"] if tag not in tags]
        if strange:
            raise CatalogError("%s: unknown source tag(s) %s; defined: %s" % (at, ", ".join(map(str, strange)), ", ".join(sorted(tags))))
        rows[code] = out
    return {"version": str(version).strip(), "fm_guide_as_of": str(data.get("fm_guide_as_of") or ""),
            "source": sources, "classes": classes, "codes": rows}


def load_sxid_catalog(path=None, overrides=None):
    """Return the validated SXid catalog: ``{version, fm_guide_as_of, source, classes, codes: {int: row}, files}``,
    each row with its class's severity, remedy and pairs_with filled in.

    ``overrides`` is a path, a mapping, or ``(mapping, label)``; rows and classes merge key by key, ``source``
    entries are added, and the version reads ``<base>+<override's version or 'site'>``. Raises ``CatalogError``.
    """
    path = path or SXID_PATH
    data = _read(path)
    files = [path]
    where = "SXid catalog %s" % path
    data["codes"] = _int_keys(data.get("codes"), "codes", where)
    if overrides is not None:
        if isinstance(overrides, tuple):
            extra, label = overrides
        elif isinstance(overrides, dict):
            extra, label = overrides, "site overrides (mapping)"
        else:
            extra, label = _read(overrides), str(overrides)
            files.append(label)
        if not isinstance(extra, dict):
            raise CatalogError("SXid catalog overrides %s: must be a mapping" % label)
        where = "SXid catalog %s with overrides %s" % (path, label)
        odd = sorted(key for key in extra if key not in ("version", "codes", "classes", "source"))
        if odd:
            raise CatalogError("SXid catalog overrides %s: unknown key(s) %s; allowed: classes, codes, source, version"
                               % (label, ", ".join(map(str, odd))))
        data["codes"] = _merge_rows(data["codes"], _int_keys(extra.get("codes"), "codes", label), "SXid", label)
        if extra.get("classes"):
            data["classes"] = _merge_rows(data.get("classes") or {}, extra["classes"], "class", label)
        if extra.get("source"):
            data["source"] = list(data.get("source") or []) + list(extra["source"])
        data["version"] = "%s+%s" % (data.get("version"), extra.get("version") or "site")
    catalog = _validate_sxid(data, where)
    catalog["files"] = files
    return catalog
