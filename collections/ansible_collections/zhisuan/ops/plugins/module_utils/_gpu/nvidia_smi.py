# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""``nvidia-smi -q`` / ``nvidia-smi -q -x`` -> the GPU facts of docs/gpu-facts.md.

Each form is first read into the same neutral tree (``_nvsmi_tree``); ONE normaliser then walks it with
the alias tables below, which list the XML tag and the text label of every field side by side, so
the two forms cannot drift apart. Pure functions, stdlib only; ``warn(msg)`` reports what the tables
do not know (a new driver's field) instead of failing.
"""

from __future__ import annotations

import re

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu._nvsmi_tree import (
    TOOL, prepare, text_tree, warn_once, xml_tree,
)

# Values that mean "this GPU/driver has no such reading" -> null.
_NOT_AVAILABLE = frozenset((
    "n/a", "[n/a]", "not supported", "[not supported]", "unknown error",
    "requested functionality has been deprecated",
))
_TRUE = frozenset(("enabled", "yes", "active"))
_FALSE = frozenset(("disabled", "no", "not active"))
_NUMBER_RE = re.compile(r"^([-+]?\d+(?:\.\d+)?)\s*(?:[A-Za-z%/]+(?:\(s\))?)?$")
_BUS_ID_RE = re.compile(r"^([0-9A-Fa-f]{1,8}):([0-9A-Fa-f]{2}):([0-9A-Fa-f]{2})\.([0-7])$")


def _power(*fields):
    """Power fields live in <gpu_power_readings> (v12+ / "GPU Power Readings") or <power_readings> (older)."""
    return tuple("%s/%s" % (section, field) for field in fields for section in ("gpu_power_readings", "power_readings"))


# fact path, kind, tree paths (XML spelling and text spelling, slugged; the first one present wins).
FIELDS = (
    ("name", "str", ("product_name",)),
    ("brand", "str", ("product_brand",)),
    ("architecture", "str", ("product_architecture",)),
    ("uuid", "str", ("uuid", "gpu_uuid")),
    ("serial", "str", ("serial", "serial_number")),
    ("vbios_version", "str", ("vbios_version",)),
    ("persistence_mode", "bool", ("persistence_mode",)),
    ("mig_mode.current", "str", ("mig_mode/current_mig", "mig_mode/current")),
    ("mig_mode.pending", "str", ("mig_mode/pending_mig", "mig_mode/pending")),
    ("memory.total_mib", "num", ("fb_memory_usage/total",)),
    ("memory.used_mib", "num", ("fb_memory_usage/used",)),
    ("memory.reserved_mib", "num", ("fb_memory_usage/reserved",)),
    ("temperature.gpu_c", "num", ("temperature/gpu_temp", "temperature/gpu_current_temp")),
    ("temperature.memory_c", "num", ("temperature/memory_temp", "temperature/memory_current_temp")),
    ("temperature.shutdown_c", "num", ("temperature/gpu_temp_max_threshold", "temperature/gpu_shutdown_temp")),
    ("temperature.slowdown_c", "num", ("temperature/gpu_temp_slow_threshold", "temperature/gpu_slowdown_temp")),
    ("temperature.max_operating_c", "num",
     ("temperature/gpu_temp_max_gpu_threshold", "temperature/gpu_max_operating_temp")),
    ("temperature.memory_max_c", "num",
     ("temperature/gpu_temp_max_mem_threshold", "temperature/memory_max_operating_temp")),
    ("temperature.tlimit_c", "num", ("temperature/gpu_temp_tlimit", "temperature/gpu_t_limit_temp")),
    ("temperature.shutdown_tlimit_c", "num",
     ("temperature/gpu_temp_max_tlimit_threshold", "temperature/gpu_shutdown_t_limit_temp")),
    ("temperature.slowdown_tlimit_c", "num",
     ("temperature/gpu_temp_slow_tlimit_threshold", "temperature/gpu_slowdown_t_limit_temp")),
    ("temperature.max_operating_tlimit_c", "num",
     ("temperature/gpu_temp_max_gpu_tlimit_threshold", "temperature/gpu_max_operating_t_limit_temp")),
    ("temperature.memory_max_tlimit_c", "num",
     ("temperature/gpu_temp_max_mem_tlimit_threshold", "temperature/memory_max_operating_t_limit_temp")),
    # "Power Draw" until ~550; newer drivers print "Average Power Draw" + "Instantaneous Power Draw".
    ("power.draw_w", "float", _power("power_draw", "average_power_draw")),
    ("power.instant_draw_w", "float", _power("instant_power_draw", "instantaneous_power_draw")),
    ("power.limit_w", "float", _power("current_power_limit", "enforced_power_limit", "power_limit")),
    ("power.default_limit_w", "float", _power("default_power_limit")),
    ("power.min_limit_w", "float", _power("min_power_limit")),
    ("power.max_limit_w", "float", _power("max_power_limit")),
    ("clocks.graphics_mhz", "num", ("clocks/graphics_clock", "clocks/graphics")),
    ("clocks.sm_mhz", "num", ("clocks/sm_clock", "clocks/sm")),
    ("clocks.memory_mhz", "num", ("clocks/mem_clock", "clocks/memory")),
    ("clocks.max_graphics_mhz", "num", ("max_clocks/graphics_clock", "max_clocks/graphics")),
    ("clocks.max_sm_mhz", "num", ("max_clocks/sm_clock", "max_clocks/sm")),
    ("clocks.max_memory_mhz", "num", ("max_clocks/mem_clock", "max_clocks/memory")),
    ("pcie.gen_current", "num",
     ("pci/pci_gpu_link_info/pcie_gen/current_link_gen", "pci/gpu_link_info/pcie_generation/current")),
    ("pcie.gen_max", "num", ("pci/pci_gpu_link_info/pcie_gen/max_link_gen", "pci/gpu_link_info/pcie_generation/max")),
    ("pcie.width_current", "num",
     ("pci/pci_gpu_link_info/link_widths/current_link_width", "pci/gpu_link_info/link_width/current")),
    ("pcie.width_max", "num", ("pci/pci_gpu_link_info/link_widths/max_link_width", "pci/gpu_link_info/link_width/max")),
    ("pcie.replays", "num", ("pci/replay_counter", "pci/replays_since_reset")),
    ("fan_speed_pct", "num", ("fan_speed",)),
    # NVSwitch systems: the fabric manager's training of this GPU into the NVLink fabric ("Completed"/"Success").
    ("fabric.state", "str", ("fabric/state",)),
    ("fabric.status", "str", ("fabric/status",)),
    ("performance_state", "str", ("performance_state",)),
    ("ecc.mode_current", "bool", ("ecc_mode/current_ecc", "ecc_mode/current")),
    ("ecc.mode_pending", "bool", ("ecc_mode/pending_ecc", "ecc_mode/pending")),
    ("retired_pages.single_bit", "num",
     ("retired_pages/multiple_single_bit_retirement/retired_count", "retired_pages/single_bit_ecc")),
    ("retired_pages.double_bit", "num",
     ("retired_pages/double_bit_retirement/retired_count", "retired_pages/double_bit_ecc")),
    # XML prints both <pending_blacklist> and <pending_retirement>; text prints "Pending Page Blacklist"
    # (older: "Pending Page Retirement"). True when any of them says Yes.
    ("retired_pages.pending", "any", ("retired_pages/pending_blacklist", "retired_pages/pending_retirement",
                                      "retired_pages/pending_page_blacklist", "retired_pages/pending_page_retirement",
                                      "retired_pages/pending")),
)
REMAPPED_ROWS = (
    ("correctable", "num", ("remapped_row_corr", "correctable_error")),
    ("uncorrectable", "num", ("remapped_row_unc", "uncorrectable_error")),
    ("pending", "bool", ("remapped_row_pending", "pending")),
    ("failure", "bool", ("remapped_row_failure", "remapping_failure_occurred")),
)
THROTTLE_SECTIONS = ("clocks_event_reasons", "clocks_throttle_reasons")
THROTTLE_KEYS = ("gpu_idle", "applications_clocks_setting", "sw_power_cap", "hw_slowdown", "hw_thermal_slowdown",
                 "hw_power_brake_slowdown", "sync_boost", "sw_thermal_slowdown", "display_clocks_setting")
# XML: <clocks_event_reason_gpu_idle> / <clocks_throttle_reason_gpu_idle>; text: "Idle", "Display Clock Setting".
THROTTLE_ALIASES = {"idle": "gpu_idle", "display_clock_setting": "display_clocks_setting"}
THROTTLE_PREFIXES = ("clocks_event_reason_", "clocks_throttle_reason_")

# Fields read elsewhere or deliberately not turned into facts (both spellings). Anything else at GPU
# level, or inside a section the normaliser reads, is reported through warn() as "please report".
IGNORED = {
    "gpu": frozenset((
        "accounted_processes", "accounting_mode", "accounting_mode_buffer_size", "addressing_mode",
        "applications_clocks", "bar1_memory_usage", "board_id", "board_part_number", "c2c_mode", "capabilities",
        "cc_protected_memory_usage", "clock_policy", "clocks_event_reasons_counters", "compute_mode",
        "conf_compute_protected_memory_usage", "default_applications_clocks", "deferred_clocks", "display_active",
        "display_attached", "display_mode", "dram_encryption_mode", "driver_model", "edpp_multiplier",
        "encoder_stats", "fbc_stats", "fru_part_number", "gpu_c2c_mode", "gpu_fru_part_number",
        "gpu_memory_power_readings", "gpu_module_id", "gpu_operation_mode", "gpu_part_number", "gpu_pdi",
        "gpu_recovery_action", "gpu_reset_status", "gpu_virtualization_mode", "gsp_firmware_version", "ibmnpu",
        "inforom_bbx_flush", "inforom_bbx_object_flush", "inforom_version", "max_customer_boost_clocks",
        "mig_device", "mig_devices", "minor_number", "module_id", "module_power_readings", "multigpu_board",
        "platform_info", "power_smoothing", "sparse_operation_mode", "supported_clocks",
        "supported_gpu_target_temp", "utilization", "voltage", "workload_power_profiles",
    ) + THROTTLE_SECTIONS + ("ecc_errors", "remapped_rows", "processes")),
    "temperature": frozenset(("gpu_target_temperature",)),
    "fb_memory_usage": frozenset(("free",)),
    "gpu_power_readings": frozenset(("power_state", "requested_power_limit", "power_management")),
    "power_readings": frozenset(("power_state", "requested_power_limit", "power_management")),
    "clocks": frozenset(("video_clock", "video")),
    "max_clocks": frozenset(("video_clock", "video")),
    "retired_pages": frozenset(),
    "ecc_mode": frozenset(),
    "mig_mode": frozenset(),
    "remapped_rows": frozenset(("row_remapper_histogram", "bank_remap_availability_histogram",
                                "inactive_correctable_error", "inactive_uncorrectable_error")),
    "ecc_errors": frozenset(("volatile", "aggregate", "aggregate_uncorrectable_sram_sources",
                             "channel_repair_pending", "tpc_repair_pending", "unrepairable_memory")),
    "ecc_counters": frozenset(("sram_threshold_exceeded",)),
    "fabric": frozenset(("cliqueid", "clique_id", "clusteruuid", "cluster_uuid", "health")),
}
# Sections whose every child must be known (a renamed field there would silently lose a fact).
CHECKED_SECTIONS = frozenset(("temperature", "fb_memory_usage", "gpu_power_readings", "power_readings", "clocks",
                              "max_clocks", "retired_pages", "ecc_mode", "mig_mode"))
_HEADER_KEYS = ("timestamp", "driver_version", "cuda_version", "attached_gpus", "gpu")
_ATTACHED = {"xml": "<attached_gpus>", "text": '"Attached GPUs"'}
_FORM = {"xml": "XML", "text": "text"}


def _known_keys():
    known = {}
    for _path, _kind, alternatives in FIELDS:
        for alt in alternatives:
            parts = alt.split("/")
            known.setdefault("gpu", set()).add(parts[0])
            if len(parts) > 1:
                known.setdefault(parts[0], set()).add(parts[1])
    for section, keys in IGNORED.items():
        known.setdefault(section, set()).update(keys)
    known["remapped_rows"].update(alt for _f, _k, alts in REMAPPED_ROWS for alt in alts)
    return known


KNOWN = _known_keys()


def _set(target, dotted, value):
    keys = dotted.split(".")
    for key in keys[:-1]:
        target = target.setdefault(key, {})
    target[keys[-1]] = value


def _value(raw, kind, path, gpu, warn):
    """One printed value -> fact value. ERR!/[...] errors are null *and* listed in ``unreadable``."""
    if raw is None:
        return None
    text = raw.strip()
    low = text.lower()
    if not text or low in _NOT_AVAILABLE:
        return None
    if kind == "raw":  # a process name may itself be bracketed; it is not a failed reading
        return text
    if low == "err!" or (low.startswith("[") and low.endswith("]")):
        if path not in gpu["unreadable"]:
            gpu["unreadable"].append(path)
        return None
    if kind == "str":
        return text
    if kind in ("bool", "any"):
        if low in _TRUE or low in _FALSE:
            return low in _TRUE
    else:
        match = _NUMBER_RE.match(text)
        if match:
            number = float(match.group(1))
            return number if kind == "float" or not number.is_integer() else int(number)
    warn("nvidia-smi: unexpected value %r for %s; please report" % (text[:60], path))
    return None


def _first(gpu_node, alternatives):
    for alt in alternatives:
        node = gpu_node.at(alt)
        if node is not None:
            return node
    return None


def _check_section(section, name, where, warn):
    known = KNOWN.get(name, ())
    for node in section.children:
        if node.key not in known and (node.value is not None or node.children):  # odd lines: see text_tree
            warn("nvidia-smi: unknown field %r in %s; please report" % (node.label, where))


def _bus_id(raw):
    match = _BUS_ID_RE.match((raw or "").strip())
    if not match:
        return raw
    domain, bus, device, function = match.groups()
    return "%04X:%s:%s.%s" % (int(domain, 16), bus.upper(), device.upper(), function)


def _ecc_sum(nodes, path, gpu, warn):
    """Sum counters; null when none is readable; null + unreadable when one of them read ERR!."""
    numbers = [value for value in (_value(node.value, "num", path, gpu, warn) for node in nodes) if value is not None]
    if path in gpu["unreadable"] or not numbers:
        return None
    return sum(numbers)


def _ecc(gpu_node, gpu, warn):
    section = gpu_node.child("ecc_errors")
    if section is None:
        return
    _check_section(section, "ecc_errors", "ECC Errors", warn)
    for scope in ("volatile", "aggregate"):
        block = section.child(scope)
        if block is None:
            continue
        corrected, uncorrected = [], []
        single, double = block.child("single_bit"), block.child("double_bit")
        if single is not None or double is not None:  # old form: Single Bit / Double Bit, each with a Total
            for group, bucket in ((single, corrected), (double, uncorrected)):
                if group is None:
                    continue
                total = group.child("total")
                if total is not None and (total.value or "").strip().lower() not in _NOT_AVAILABLE:
                    bucket.append(total)
                else:
                    bucket.extend(node for node in group.children if node.key != "total")
        else:  # sram/dram form (Parity and SEC-DED are separate uncorrectable counters on newer drivers)
            for node in block.children:
                if "uncorrectable" in node.key:
                    uncorrected.append(node)
                elif "correctable" in node.key:
                    corrected.append(node)
                elif node.key not in KNOWN["ecc_counters"]:
                    warn("nvidia-smi: unknown ECC counter %r; please report" % node.label)
        gpu["ecc"][scope + "_corrected"] = _ecc_sum(corrected, "ecc.%s_corrected" % scope, gpu, warn)
        gpu["ecc"][scope + "_uncorrected"] = _ecc_sum(uncorrected, "ecc.%s_uncorrected" % scope, gpu, warn)


def _throttle(gpu_node, gpu, warn):
    section = _first(gpu_node, THROTTLE_SECTIONS)
    if section is None:
        return
    pending = list(section.children)
    while pending:  # text nests "HW Thermal/Power Brake Slowdown" under "HW Slowdown"
        node = pending.pop(0)
        pending.extend(node.children)
        key = node.key
        for prefix in THROTTLE_PREFIXES:
            if key.startswith(prefix):
                key = key[len(prefix):]
        key = THROTTLE_ALIASES.get(key, key)
        if key in THROTTLE_KEYS:
            gpu["throttle"][key] = _value(node.value, "bool", "throttle." + key, gpu, warn)
        elif key != "unknown":  # old drivers list an "Unknown" reason; it carries no fact
            warn("nvidia-smi: unknown clocks event reason %r; please report" % node.label)


def _remapped_rows(gpu_node, gpu, warn):
    section = gpu_node.child("remapped_rows")
    if section is None or not section.children:
        if section is not None:
            _value(section.value, "num", "remapped_rows", gpu, warn)  # only to record ERR!
        return None
    _check_section(section, "remapped_rows", "Remapped Rows", warn)
    rows = {}
    for name, kind, alternatives in REMAPPED_ROWS:
        node = _first(section, alternatives)
        rows[name] = _value(node.value if node else None, kind, "remapped_rows." + name, gpu, warn)
    return rows


def _processes(gpu_node, gpu, warn):
    section = gpu_node.child("processes")
    if section is None:
        return None
    result = []
    for entry in section.children:
        if entry.key == "process_info":  # XML: one element per process
            fields = dict((node.key, node.value) for node in entry.children)
        elif entry.key == "process_id":  # text: "Process ID : 123" with Type/Name/Used GPU Memory below
            fields = dict((node.key, node.value) for node in entry.children)
            fields["pid"] = entry.value
        else:
            if entry.key not in ("gpu_instance_id", "compute_instance_id"):
                warn("nvidia-smi: unknown field %r in Processes; please report" % entry.label)
            continue
        path = "processes.%d." % len(result)
        result.append({
            "pid": _value(fields.get("pid"), "num", path + "pid", gpu, warn),
            "type": _value(fields.get("type"), "str", path + "type", gpu, warn),
            "name": _value(fields.get("process_name", fields.get("name")), "raw", path + "name", gpu, warn),
            "used_memory_mib": _value(fields.get("used_memory", fields.get("used_gpu_memory")), "num",
                                      path + "used_memory_mib", gpu, warn),
        })
    return result


def _gpu(gpu_node, position, warn):
    gpu = {"index": None}
    for path, _kind, _alts in FIELDS[:5]:
        _set(gpu, path, None)
    gpu["pci_bus_id"] = None
    for path, _kind, _alts in FIELDS[5:]:
        _set(gpu, path, None)
    gpu["ecc"].update({"volatile_corrected": None, "volatile_uncorrected": None,
                       "aggregate_corrected": None, "aggregate_uncorrected": None})
    gpu["remapped_rows"] = None
    gpu["throttle"] = dict((key, None) for key in THROTTLE_KEYS)
    gpu["processes"] = None
    gpu["unreadable"] = []

    _check_section(gpu_node, "gpu", "a GPU block", warn)
    for section in gpu_node.children:
        if section.key in CHECKED_SECTIONS and section.children:
            _check_section(section, section.key, repr(section.label), warn)
    for path, kind, alternatives in FIELDS:
        node = _first(gpu_node, alternatives)
        if kind == "any":
            values = [_value(gpu_node.at(alt).value, kind, path, gpu, warn)
                      for alt in alternatives if gpu_node.at(alt) is not None]
            known = [value for value in values if value is not None]
            _set(gpu, path, any(known) if known else None)
        elif node is not None:
            _set(gpu, path, _value(node.value, kind, path, gpu, warn))
    minor = _first(gpu_node, ("minor_number",))
    minor = _value(minor.value, "num", "index", {"unreadable": []}, warn) if minor is not None else None
    gpu["index"] = minor if isinstance(minor, int) else position
    bus = gpu_node.ident or (_first(gpu_node, ("pci/pci_bus_id", "pci/bus_id")) or gpu_node).value
    gpu["pci_bus_id"] = _bus_id(bus)
    _ecc(gpu_node, gpu, warn)
    gpu["remapped_rows"] = _remapped_rows(gpu_node, gpu, warn)
    _throttle(gpu_node, gpu, warn)
    gpu["processes"] = _processes(gpu_node, gpu, warn)
    return gpu


def _first_line(text):
    return text.splitlines()[0].strip()[:60] if text else ""


def _facts(tree, source, raw_text, warn):
    """The one normaliser: neutral tree -> facts dict (see docs/gpu-facts.md)."""
    header = {}
    for node in tree.children:
        if node.key not in _HEADER_KEYS:
            warn("nvidia-smi: unknown top-level field %r; please report" % node.label)
        elif node.key != "gpu" and node.key not in header:
            header[node.key] = node.value
    if "attached_gpus" not in header:
        raise ParseError(TOOL, "%s output has no %s, so it is not nvidia-smi -q output (first line: %r)"
                         % (_FORM[source], _ATTACHED[source], _first_line(raw_text)))
    attached = _value(header["attached_gpus"], "num", "attached_gpus", {"unreadable": []}, warn)
    if not isinstance(attached, int):
        raise ParseError(TOOL, "%s value %r is not a count" % (_ATTACHED[source], header["attached_gpus"]))
    blocks = tree.children_named("gpu")
    if not blocks:
        raise ParseError(TOOL, "no GPU block found (%s says %d)" % (_ATTACHED[source], attached))
    if source == "text":
        _check_text_complete(blocks, attached)
    if len(blocks) > attached:
        raise ParseError(TOOL, "found %d GPU block(s) but %s says %d" % (len(blocks), _ATTACHED[source], attached))
    plain = {"unreadable": []}
    return {
        "source": source,
        "timestamp": _value(header.get("timestamp"), "str", "timestamp", plain, warn),
        "driver_version": _value(header.get("driver_version"), "str", "driver_version", plain, warn),
        "cuda_version": _value(header.get("cuda_version"), "str", "cuda_version", plain, warn),
        "attached_gpus": attached,
        "gpus": [_gpu(block, position, warn) for position, block in enumerate(blocks)],
    }


def _check_text_complete(blocks, attached):
    """A text dump has no end marker (XML has its closing tag): find a GPU block that was cut off."""
    last_key = blocks[0].children[-1].key if blocks[0].children else None
    counts = "found %d GPU block(s), \"Attached GPUs\" says %d" % (len(blocks), attached)
    for number, block in enumerate(blocks, 1):
        keys = [node.key for node in block.children]
        is_last = number == len(blocks) and number > 1
        ends_early = is_last and last_key is not None and last_key not in keys
        if ends_early or ("product_name" in keys and "processes" not in keys):
            raise ParseError(TOOL, "text output is truncated inside GPU block %s: %s" % (block.ident, counts))
    if len(blocks) < attached:
        raise ParseError(TOOL, "text output is truncated: %s" % counts)


def _guarded(tree_text, source, warn):
    emit = warn_once(warn)
    try:
        tree = xml_tree(tree_text) if source == "xml" else text_tree(tree_text, emit)
        return _facts(tree, source, tree_text, emit)
    except ParseError:
        raise
    except (KeyError, IndexError, ValueError, TypeError, AttributeError, RecursionError) as exc:
        raise ParseError(TOOL, "unexpected %s structure (%s: %s); please report"
                         % (_FORM[source], type(exc).__name__, exc))


def parse_xml(text, warn=None):
    """Facts from ``nvidia-smi -q -x`` output. Raises ParseError when it cannot be read."""
    return _guarded(prepare(text), "xml", warn)


def parse_text(text, warn=None):
    """Facts from ``nvidia-smi -q`` text output. Raises ParseError when it cannot be read."""
    return _guarded(prepare(text), "text", warn)


def parse(text, warn=None):
    """Sniff the form (XML starts with ``<?xml`` / ``<nvidia_smi_log``) and parse it."""
    text = prepare(text)
    return _guarded(text, "xml" if text.startswith("<") else "text", warn)
