# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""BMC inventory rules (pure): the parts the BMC lists (``bmc`` facts) against the bill of materials in
``zhisuan_expected`` -> ``bmc.gpu.count``, ``bmc.gpu.model``, ``bmc.memory.count``, ``bmc.memory.size``,
``bmc.nic.count``, ``bmc.drive.count``, ``bmc.psu.count`` (in this order; the keys are described in ``bmc``)."""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._util import compile_pattern, fmt, to_number


def count_of(number, singular, many):
    """``1 GPU``, ``8 GPUs``."""
    return "%d %s" % (number, singular if number == 1 else many)


def label(item, default):
    """What to call a listed item: its name, else its id, else ``default``."""
    return str(item.get("name") or item.get("id") or default)


_INVENTORY = (
    # check id, facts list, expected key, (one, many), remedy when fewer, how an item counts as present
    ("bmc.gpu.count", "gpus", "gpu_count", ("GPU", "GPUs"), "reseat", None),
    ("bmc.memory.count", "memory", "dimm_count", ("DIMM", "DIMMs"), "reseat", "memory"),
    ("bmc.nic.count", "nics", "bmc_nic_count", ("network adapter", "network adapters"), "reseat", None),
    ("bmc.drive.count", "drives", "drive_count", ("drive", "drives"), "reseat", None),
    ("bmc.psu.count", "power_supplies", "psu_count", ("power supply", "power supplies"), "replace_part", "state"),
)


def _present(items, rule):
    if rule == "memory":
        return [item for item in items if item.get("state") != "Absent" and (item.get("capacity_mib") or 0) > 0]
    if rule == "state":
        return [item for item in items if item.get("state") != "Absent"]
    return list(items)


def _unreadable(facts, key):
    found = facts.get("unreadable")
    found = found.get(key) if isinstance(found, dict) else None
    return [str(item) for item in found] if isinstance(found, list) else []


def _shown(missing):
    return ", ".join(missing[:10]) + (", ..." if len(missing) > 10 else "")


def _unread_list_check(check_id, host, component, what, missing, want, want_text):
    """The check for a list the BMC links but that could not be read at all (a Memory or Storage collection that
    answers 404, every member of it unreadable): ``error`` when the bill of materials expects a value (it cannot be
    judged), else a ``skip`` that says so; never "does not report"."""
    if want is None:
        return make_check(check_id, host, "skip", component=component,
                          message="The BMC lists %s but they could not be read (%s)" % (what, _shown(missing)),
                          evidence="unreadable: %s" % "; ".join(missing))
    return make_check(check_id, host, "error", component=component, expected=want_text, remedy="investigate",
                      message="The BMC lists %s but they could not be read (%s): the value of the bill of materials "
                              "(%s) cannot be judged until the BMC answers for them" % (what, _shown(missing), want_text),
                      evidence="unreadable: %s" % "; ".join(missing))


def _count_check(host, facts, check_id, key, want_key, words, remedy, rule, expected):
    one, many = words
    items = facts.get(key)
    protocol = facts.get("protocol") or "this protocol"
    component = "%s (BMC view)" % (many[0].upper() + many[1:])
    want = expected.get(want_key)
    if items is None:
        missing = _unreadable(facts, key)
        if missing:
            want_text = None if want is None else "== %d" % int(to_number(want, "zhisuan_expected.%s" % want_key))
            return _unread_list_check(check_id, host, component, many, missing, want, want_text)
        return make_check(check_id, host, "skip", component=component, expected=want,
                          message="The BMC does not report %s over %s" % (many, protocol))
    present = _present(items, rule)
    names = ", ".join(label(item, "?") for item in present[:24]) or "none"
    if want is None:
        return make_check(check_id, host, "skip", component=component, observed=len(present),
                          message="The BMC lists %s; set zhisuan_expected.%s to check the count"
                                  % (count_of(len(present), one, many), want_key), evidence=names)
    want = int(to_number(want, "zhisuan_expected.%s" % want_key))
    if len(present) == want:
        return make_check(check_id, host, "pass", component=component, observed=len(present), expected="== %d" % want,
                          message="The BMC lists the %s expected" % count_of(want, one, many), evidence=names)
    missing = _unreadable(facts, key)
    if len(present) < want and missing:
        shown = _shown(missing)
        return make_check(check_id, host, "error", component=component, observed=len(present), expected="== %d" % want,
                          message="The BMC lists %d of the %d %s of the bill of materials, but it could not read %s "
                                  "(%s): the count cannot be judged until the BMC answers for them"
                                  % (len(present), want, many, count_of(len(missing), "resource", "resources"), shown),
                          remedy="investigate", evidence="unreadable: %s; present: %s" % ("; ".join(missing), names))
    if len(present) < want:
        return make_check(check_id, host, "fail", component=component, observed=len(present), expected="== %d" % want,
                          message="The BMC lists %d of the %d %s of the bill of materials: a part is missing or not "
                                  "detected; reseat it (then replace it)" % (len(present), want, many),
                          remedy=remedy, evidence=names)
    return make_check(check_id, host, "fail", component=component, observed=len(present), expected="== %d" % want,
                      message="The BMC lists %s but the bill of materials has %d: the node is not the one ordered"
                              % (count_of(len(present), one, many), want), remedy="investigate", evidence=names)


def _gpu_model_check(host, facts, expected):
    gpus = facts.get("gpus")
    pattern = expected.get("gpu_model")
    if gpus is None or not pattern:
        return make_check("bmc.gpu.model", host, "skip", component="GPUs (BMC view)", expected=pattern,
                          message="No GPU model to compare (%s)" % ("the BMC does not report GPUs" if gpus is None
                                                                    else "zhisuan_expected.gpu_model not set"))
    models = [gpu.get("model") for gpu in gpus]
    if not any(models):
        return make_check("bmc.gpu.model", host, "skip", component="GPUs (BMC view)", expected=pattern,
                          message="The BMC lists GPUs but not their model")
    rx = compile_pattern(str(pattern))
    wrong = ["%s: %s" % (label(gpu, "GPU"), gpu.get("model")) for gpu in gpus if gpu.get("model") and not rx.search(gpu["model"])]
    evidence = ", ".join(sorted(set(model for model in models if model)))
    if wrong:
        return make_check("bmc.gpu.model", host, "fail", component="GPUs (BMC view)", observed="; ".join(wrong),
                          expected=str(pattern), remedy="replace_part", evidence=evidence,
                          message="%s not the model of the bill of materials (%s): %s"
                                  % (count_of(len(wrong), "GPU is", "GPUs are"), pattern, "; ".join(wrong)))
    return make_check("bmc.gpu.model", host, "pass", component="GPUs (BMC view)", observed=evidence,
                      expected=str(pattern), message="Every GPU the BMC lists is a %s" % evidence, evidence=evidence)


def _memory_size_check(host, facts, expected):
    memory = facts.get("memory")
    want = expected.get("memory_gib")
    missing = _unreadable(facts, "memory")
    if memory is None and missing:
        want_text = None if want is None else "== %s GiB" % fmt(to_number(want, "zhisuan_expected.memory_gib"))
        return _unread_list_check("bmc.memory.size", host, "Memory (BMC view)", "DIMMs", missing, want, want_text)
    if memory is None or want is None:
        return make_check("bmc.memory.size", host, "skip", component="Memory (BMC view)", expected=want,
                          message="No memory size to compare (%s)" % ("the BMC does not report DIMMs" if memory is None
                                                                      else "zhisuan_expected.memory_gib not set"))
    present = _present(memory, "memory")
    total = sum(item.get("capacity_mib") or 0 for item in present) / 1024.0
    want = to_number(want, "zhisuan_expected.memory_gib")
    evidence = "%s present, %s GiB" % (count_of(len(present), "DIMM", "DIMMs"), fmt(round(total, 1)))
    if abs(total - want) < 0.5:
        return make_check("bmc.memory.size", host, "pass", component="Memory (BMC view)", observed=round(total, 1),
                          expected="== %s GiB" % fmt(want), message="%s GiB of memory, as ordered" % fmt(round(total, 1)),
                          evidence=evidence)
    fewer = total < want
    return make_check("bmc.memory.size", host, "fail", component="Memory (BMC view)", observed=round(total, 1),
                      expected="== %s GiB" % fmt(want), remedy="reseat" if fewer else "replace_part", evidence=evidence,
                      message="The BMC sees %s GiB of memory, the bill of materials says %s GiB: %s"
                              % (fmt(round(total, 1)), fmt(want), "a DIMM is missing or not detected; reseat it"
                                 if fewer else "DIMMs of the wrong size are fitted"))


def inventory_checks(host, facts, expected):
    """The inventory checks of one host's ``bmc`` facts against ``expected`` (``zhisuan_expected``)."""
    checks = []
    for check_id, key, want_key, words, remedy, rule in _INVENTORY:
        checks.append(_count_check(host, facts, check_id, key, want_key, words, remedy, rule, expected))
        if check_id == "bmc.gpu.count":
            checks.append(_gpu_model_check(host, facts, expected))
        if check_id == "bmc.memory.count":
            checks.append(_memory_size_check(host, facts, expected))
    return checks
