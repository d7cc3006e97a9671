# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""``nvidia-smi -q`` / ``nvidia-smi -q -x`` -> the GPU facts of docs/gpu-facts.md.

Each form is first read into the same neutral tree (``_nvsmi_tree``); ONE normaliser then walks it with
the alias tables of ``_nvsmi_fields``, which list the XML tag and the text label of every field side by side, so
the two forms cannot drift apart. Pure functions, stdlib only; ``warn(msg)`` reports what the tables
do not know (a new driver's field) instead of failing.
"""

import re

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu._nvsmi_fields import (
    CHECKED_SECTIONS, FIELDS, KNOWN, REMAP_HISTOGRAM_KEYS, REMAP_HISTOGRAM_SECTIONS, REMAPPED_ROWS, THROTTLE_ALIASES,
    THROTTLE_COUNTER_ALIASES, THROTTLE_COUNTER_KEYS, THROTTLE_COUNTER_PREFIX, THROTTLE_KEYS, THROTTLE_PREFIXES,
    THROTTLE_SECTIONS,
)
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
# ASCII digits only (re.ASCII: no Unicode digit is a number here), at most 15 before the point, one point at most.
_NUMBER_RE = re.compile(r"^([-+]?[0-9]{1,15}(?:\.[0-9]{1,9})?)\s*(?:[A-Za-z%/]+(?:\(s\))?)?$", re.ASCII)
# What a reading can physically be, by fact path prefix (first match wins); a value outside is damage, not a
# reading: null, listed in ``unreadable``. The T.Limit temperatures are margins to the slowdown point (negative when
# the GPU runs past it); every other reading and counter is >= 0.
_PLAUSIBLE = (
    ("temperature.", (-300, 300), ("tlimit",)),
    ("temperature.", (-60, 300), ()),
    ("power.", (0, 20000), ()),
    ("clocks.", (0, 100000), ()),
    ("memory.", (0, 10 ** 8), ()),
    ("pcie.gen", (1, 16), ()),
    ("pcie.width", (0, 64), ()),
    ("fan_speed_pct", (0, 1000), ()),
    ("", (0, 10 ** 15), ()),
)
_BUS_ID_RE = re.compile(r"^([0-9A-Fa-f]{1,8}):([0-9A-Fa-f]{2}):([0-9A-Fa-f]{2})\.([0-7])$")


_HEADER_KEYS = ("timestamp", "driver_version", "cuda_version", "attached_gpus", "gpu")
_ATTACHED = {"xml": "<attached_gpus>", "text": '"Attached GPUs"'}
_FORM = {"xml": "XML", "text": "text"}


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
            if not _plausible(path, number):
                return _unreadable(gpu, path, "nvidia-smi: implausible value %r for %s, taken as unreadable"
                                   % (text[:60], path), warn)
            return number if kind == "float" or not number.is_integer() else int(number)
        if _ODD_NUMBER_RE.match(text):
            return _unreadable(gpu, path, "nvidia-smi: unreadable number %r for %s" % (text[:60], path), warn)
    warn("nvidia-smi: unexpected value %r for %s; please report" % (text[:60], path))
    return None


# Something that tries to be a number but is not one we can trust: too many digits, 1.2.3, NaN, inf, Unicode digits.
# (A word where a number belongs, "fast", stays a plain "unexpected value" warning with a null reading.)
_ODD_NUMBER_RE = re.compile(
    r"^[-+]?(?:[0-9.,]*[0-9][0-9.,]*(?:e[-+]?[0-9]+)?|nan|inf|infinity|\d+)\s*(?:[A-Za-z%/]+(?:\(s\))?)?$", re.IGNORECASE)


def _plausible(path, number):
    for prefix, (low, high), needs in _PLAUSIBLE:
        if path.startswith(prefix) and all(word in path for word in needs):
            return low <= number <= high
    return True


def _unreadable(gpu, path, msg, warn):
    if path not in gpu["unreadable"]:
        gpu["unreadable"].append(path)
    warn(msg)
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


def _throttle_counters(gpu_node, gpu, warn):
    """Microseconds each cause held the clocks down since the driver loaded, or None when not printed."""
    section = gpu_node.child("clocks_event_reasons_counters")
    if section is None or not section.children:
        return None
    counters = dict((key, None) for key in THROTTLE_COUNTER_KEYS)
    for node in section.children:
        key = node.key[len(THROTTLE_COUNTER_PREFIX):] if node.key.startswith(THROTTLE_COUNTER_PREFIX) else node.key
        key = THROTTLE_COUNTER_ALIASES.get(key, key)
        if key in counters:
            counters[key] = _value(node.value, "num", "throttle_counters_us." + key, gpu, warn)
        else:
            warn("nvidia-smi: unknown clocks event reasons counter %r; please report" % node.label)
    return counters


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
    rows["banks"] = _remap_histogram(_first(section, REMAP_HISTOGRAM_SECTIONS), gpu, warn)
    return rows


def _remap_histogram(section, gpu, warn):
    """``{max, high, partial, low, none}`` banks by remap availability, or ``None`` when not printed."""
    if section is None or not section.children:
        return None
    banks = {}
    for node in section.children:
        key = node.key
        for prefix in REMAP_HISTOGRAM_SECTIONS:
            if key.startswith(prefix + "_"):
                key = key[len(prefix) + 1:]
        if key in REMAP_HISTOGRAM_KEYS:
            banks[key] = _value(node.value, "num", "remapped_rows.banks." + key, gpu, warn)
        else:
            warn("nvidia-smi: unknown field %r in the bank remap availability histogram; please report" % node.label)
    return dict((key, banks.get(key)) for key in REMAP_HISTOGRAM_KEYS)


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


# One MIG device (GPU instance / compute instance) of a GPU in MIG mode: XML nests <mig_device> in <mig_devices>,
# text prints "MIG Device" blocks straight under the GPU; memory is "FB Memory Usage" (XML) or "Shared FB Memory
# Usage" (text), the SMs "Device Attributes / Shared / Multiprocessor count".
MIG_DEVICE_FIELDS = (
    ("index", ("index",)),
    ("gpu_instance_id", ("gpu_instance_id",)),
    ("compute_instance_id", ("compute_instance_id",)),
    ("memory_total_mib", ("fb_memory_usage/total", "shared_fb_memory_usage/total")),
    ("multiprocessors", ("device_attributes/shared/multiprocessor_count",)),
)


def _mig_devices(gpu_node, gpu, warn):
    """The GPU's MIG devices (a list, in the order printed), or None when the output lists none."""
    section = gpu_node.child("mig_devices")
    nodes = section.children_named("mig_device") if section is not None else []
    nodes = nodes or gpu_node.children_named("mig_device")
    if not nodes:
        return None
    devices = []
    for position, node in enumerate(nodes):
        device = {}
        for name, alternatives in MIG_DEVICE_FIELDS:
            found = _first(node, alternatives)
            device[name] = _value(found.value if found is not None else None, "num",
                                  "mig_devices.%d.%s" % (position, name), gpu, warn)
        devices.append(device)
    return devices


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
    gpu["mig_devices"] = None
    gpu["throttle_counters_us"] = None
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
    gpu["throttle_counters_us"] = _throttle_counters(gpu_node, gpu, warn)
    gpu["processes"] = _processes(gpu_node, gpu, warn)
    gpu["mig_devices"] = _mig_devices(gpu_node, gpu, warn)
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
    # ``nvidia-smi -q -i <id>`` prints ONE complete GPU block while "Attached GPUs" still counts every GPU (the XML
    # form does the same, and is accepted below): a single complete block is that selection. Several blocks but
    # fewer than attached stay a cut at a GPU boundary (a selection of several GPUs cannot be told from one).
    if len(blocks) < attached and not (len(blocks) == 1 and _complete(blocks[0])):
        raise ParseError(TOOL, "text output is truncated: %s" % counts)


def _complete(block):
    """A full ``-q`` GPU block ends with its Processes field; a ``-d`` display block has no Product Name."""
    keys = [node.key for node in block.children]
    return "processes" in keys or "product_name" not in keys


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


def throttle_growth(first, second, window_s):
    """The clocks event reasons counters' growth between two parsed reads ``window_s`` seconds apart, per GPU of the
    second read (matched by bus id): ``{"window_s", "gpus": [{"index", "pci_bus_id", "held_us": {reason: us},
    "share_pct": {reason: % of the window}, "reset": bool}]}``. A GPU without counters in either read is left out;
    a counter that went down (the driver reloaded in between) marks the GPU ``reset`` with no share."""
    before = dict((gpu.get("pci_bus_id"), gpu.get("throttle_counters_us")) for gpu in first.get("gpus") or [])
    window_us = float(window_s) * 1e6
    gpus = []
    for gpu in second.get("gpus") or []:
        now, then = gpu.get("throttle_counters_us"), before.get(gpu.get("pci_bus_id"))
        if not now or not then:
            continue
        held, share, reset = {}, {}, False
        for key in THROTTLE_COUNTER_KEYS:
            if now.get(key) is None or then.get(key) is None:
                continue
            grown = now[key] - then[key]
            if grown < 0:
                reset = True
                continue
            held[key] = grown
            share[key] = round(min(grown / window_us * 100.0, 100.0), 2) if window_us > 0 else None
        gpus.append({"index": gpu.get("index"), "pci_bus_id": gpu.get("pci_bus_id"), "held_us": held,
                     "share_pct": {} if reset else share, "reset": reset})
    return {"window_s": window_s, "gpus": gpus}
