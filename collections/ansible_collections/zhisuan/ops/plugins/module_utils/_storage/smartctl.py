# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Pure parser of ``smartctl -j -a <nvme device>`` (smartmontools 7.x, JSON format 1): one NVMe drive's health.

What is read (smartmontools' own key names): ``device`` (``name``, ``protocol``), ``model_name``,
``firmware_version``, ``smart_status`` (``passed``; ``nvme.value`` the critical warning byte and, when it is not 0,
one boolean per bit: ``spare_below_threshold``, ``temperature_above_or_below_threshold``, ``reliability_degraded``,
``media_read_only``, ``volatile_memory_backup_failed``, ``persistent_memory_region_unreliable``),
``nvme_smart_health_information_log`` (the NVMe SMART / Health log page 02h: ``critical_warning``, ``temperature``
in Celsius, ``available_spare`` and ``available_spare_threshold`` in %, ``percentage_used``, ``media_errors``,
``num_err_log_entries``, ``power_on_hours``, ``unsafe_shutdowns``) and ``smartctl.exit_status``.

smartctl's exit status is a bit mask (``man smartctl``, "RETURN VALUES"): bits 0-2 say the command could not read
the device (bad command line, device open failed, a SMART command failed); bits 3-7 say what it read is bad (the
drive reports failing, attributes at or past their thresholds, errors in the error or self-test log). A report with
bit 3 set is a reading, not a tool failure.
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._safe_parse import finite, load_json, text_or_none

TOOL = "smartctl"
# The critical warning bits of the NVMe SMART / Health log, as smartctl names them (bit 0 first).
CRITICAL_BITS = ("spare_below_threshold", "temperature_above_or_below_threshold", "reliability_degraded",
                 "media_read_only", "volatile_memory_backup_failed", "persistent_memory_region_unreliable")
# smartctl exit status bits 0-2: no reading of the device
READ_FAILED_BITS = 0x07
_LOG_FIELDS = ("critical_warning", "temperature", "available_spare", "available_spare_threshold", "percentage_used",
               "media_errors", "num_err_log_entries", "power_on_hours", "unsafe_shutdowns")


def _count(value):
    """A counter or percentage as smartctl prints it: a non-negative integer, else None."""
    number = finite(value)
    if number is None or number < 0 or number != int(number):
        return None
    return int(number)


def _messages(data):
    """smartctl's own messages (``smartctl.messages[].string``), in order."""
    messages = (data.get("smartctl") or {}).get("messages") if isinstance(data.get("smartctl"), dict) else None
    if not isinstance(messages, list):
        return []
    return [item["string"] for item in messages if isinstance(item, dict) and isinstance(item.get("string"), str)]


def critical_flags(value):
    """The names of the critical warning bits set in ``value`` (the log page's byte)."""
    if value is None:
        return []
    return [name for bit, name in enumerate(CRITICAL_BITS) if value & (1 << bit)]


def parse_drive(text, device=None, warn=None):
    """One drive's facts from ``smartctl -j -a`` output. Raises ParseError when the text is not smartctl's JSON or
    smartctl could not read the device (exit status bits 0-2, or no NVMe health log); ``warn(msg)`` is told about a
    field of an unexpected type (it is left out)."""
    data = load_json(text, TOOL, "the output of smartctl -j is not JSON: %s")
    if not isinstance(data, dict) or not isinstance(data.get("smartctl"), dict):
        raise ParseError(TOOL, "the output has no smartctl section: not the JSON of smartctl -j")
    status = _count(data["smartctl"].get("exit_status"))
    info = data.get("device") if isinstance(data.get("device"), dict) else {}
    # the device asked for (what smartctl opened), else the one the report names
    name = device or text_or_none(info.get("name"))
    log = data.get("nvme_smart_health_information_log")
    if (status is not None and status & READ_FAILED_BITS) or not isinstance(log, dict):
        said = "; ".join(_messages(data)) or "no NVMe SMART/Health log in the report"
        raise ParseError(TOOL, "%s: smartctl could not read the drive (exit status %s): %s" % (name, status, said))
    facts = {
        "device": name,
        "protocol": text_or_none(info.get("protocol")),
        "model": text_or_none(data.get("model_name")),
        "firmware": text_or_none(data.get("firmware_version")),
        "exit_status": status,
    }
    for field in _LOG_FIELDS:
        value = _count(log.get(field))
        if value is None and log.get(field) is not None and warn is not None:
            warn("smartctl: %s: %s is %r, not a count; please report" % (name, field, log.get(field)))
        facts[field] = value
    smart = data.get("smart_status") if isinstance(data.get("smart_status"), dict) else {}
    facts["smart_passed"] = smart.get("passed") if isinstance(smart.get("passed"), bool) else None
    facts["critical_flags"] = critical_flags(facts["critical_warning"])
    return facts
