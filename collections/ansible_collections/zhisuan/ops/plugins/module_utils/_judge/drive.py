# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Drive health rules: the ``drive`` facts (every NVMe drive's SMART / Health log, ``smartctl -j -a``) -> checks.

Pure functions, no I/O. Per drive (``<dev>`` is the device name, ``nvme0``):

``drive.<dev>.critical_warning``  fail when the log's critical warning byte is not 0, each bit named; remedy
                                  ``replace_part``, or ``investigate`` when the temperature bit is the only one set
                                  (the cooling first).
``drive.<dev>.media_errors``      fail above ``media_errors_max`` (default 0: an unrecovered data integrity error
                                  is one too many); ``replace_part``.
``drive.<dev>.percentage_used``   the vendor's wear estimate: warn from ``wear_warn_pct`` (80), fail from
                                  ``wear_fail_pct`` (100: the rated endurance used up); ``monitor`` / ``replace_part``.
``drive.<dev>.available_spare``   fail below the drive's own threshold (``available_spare_threshold``), warn within
                                  ``spare_margin_pct`` (10) of it; ``replace_part`` / ``monitor``.
``drive.<dev>.temperature``       the composite temperature, Celsius: warn from ``temp_warn_c`` (70), fail from
                                  ``temp_fail_c`` (80); ``investigate`` (airflow, fans, the slot).
``drive.<dev>.readout``           error when smartctl could not read the drive (the others are judged).
``drive.devices.present``         skip when the node has no NVMe drive to read.

A field the drive does not report is a ``skip`` of its check. The site's limits are ``zhisuan_thresholds.drive``.
"""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._overrides import overridden

DEFAULTS = {"media_errors_max": 0, "wear_warn_pct": 80, "wear_fail_pct": 100, "spare_margin_pct": 10,
            "temp_warn_c": 70, "temp_fail_c": 80}
_TEMPERATURE_BIT = "temperature_above_or_below_threshold"


def _name(device):
    return str(device or "unknown").rsplit("/", 1)[-1].replace(".", "_") or "unknown"


def _component(drive):
    model = drive.get("model")
    return "drive %s%s" % (_name(drive.get("device")), " (%s)" % model if model else "")


def _skip(check_id, host, component, what):
    return make_check(check_id, host, "skip", component=component, message="the drive does not report %s" % what)


def _critical(check_id, host, component, drive):
    value = drive.get("critical_warning")
    if value is None:
        return _skip(check_id, host, component, "a critical warning")
    flags = list(drive.get("critical_flags") or [])
    if not value:
        return make_check(check_id, host, "pass", component=component, observed=0, expected=0,
                          message="no critical warning")
    remedy = "investigate" if flags == [_TEMPERATURE_BIT] else "replace_part"
    named = ", ".join(flag.replace("_", " ") for flag in flags) or "an unnamed bit"
    return make_check(check_id, host, "fail", component=component, observed=value, expected=0, remedy=remedy,
                      message="the drive raises a critical warning: %s" % named,
                      evidence="critical_warning: 0x%02x; smart_status passed: %s" % (value, drive.get("smart_passed")))


def _media(check_id, host, component, drive, limits):
    value = drive.get("media_errors")
    if value is None:
        return _skip(check_id, host, component, "its media errors")
    limit = limits["media_errors_max"]
    if value > limit:
        return make_check(check_id, host, "fail", component=component, observed=value, expected="<= %s" % limit,
                          remedy="replace_part",
                          message="%s unrecovered media and data integrity errors" % value,
                          evidence="media_errors: %s; num_err_log_entries: %s" % (
                              value, drive.get("num_err_log_entries")))
    return make_check(check_id, host, "pass", component=component, observed=value, expected="<= %s" % limit,
                      message="no media errors beyond the limit")


def _graded(check_id, host, component, value, expected, limits, remedies, texts, falling=False):
    """A reading graded against two limits (warn, fail): worse the higher it is (fail at or above ``limits[1]``,
    warn at or above ``limits[0]``), or with ``falling`` worse the lower it is (fail below ``limits[1]``, warn below
    ``limits[0]``); else pass. ``remedies`` (fail, warn) and ``texts`` (fail, warn, pass) are per grade, ``texts``
    formatted with the value."""
    for status, limit, remedy, text in (("fail", limits[1], remedies[0], texts[0]),
                                        ("warn", limits[0], remedies[1], texts[1])):
        if (value < limit) if falling else (value >= limit):
            return make_check(check_id, host, status, component=component, observed=value, expected=expected,
                              remedy=remedy, message=text % value)
    return make_check(check_id, host, "pass", component=component, observed=value, expected=expected,
                      message=texts[2] % value)


def _wear(check_id, host, component, drive, limits):
    value = drive.get("percentage_used")
    if value is None:
        return _skip(check_id, host, component, "its wear (percentage used)")
    return _graded(check_id, host, component, value, "< %s %%" % limits["wear_warn_pct"],
                   (limits["wear_warn_pct"], limits["wear_fail_pct"]), ("replace_part", "monitor"),
                   ("%s %% of the rated endurance used: worn out",
                    "%s %% of the rated endurance used: plan the replacement", "%s %% of the rated endurance used"))


def _spare(check_id, host, component, drive, limits):
    value, floor = drive.get("available_spare"), drive.get("available_spare_threshold")
    if value is None:
        return _skip(check_id, host, component, "its available spare")
    floor = floor or 0
    margin = floor + limits["spare_margin_pct"]
    threshold = " the drive's threshold %s %%%%" % floor
    return _graded(check_id, host, component, value, ">= %s %% (the drive's threshold %s %%)" % (margin, floor),
                   (margin, floor), ("replace_part", "monitor"),
                   ("available spare %s %% is below" + threshold, "available spare %s %% is close to" + threshold,
                    "available spare %s %%"), falling=True)


def _temperature(check_id, host, component, drive, limits):
    value = drive.get("temperature")
    if value is None:
        return _skip(check_id, host, component, "a temperature")
    return _graded(check_id, host, component, value, "< %s C" % limits["temp_warn_c"],
                   (limits["temp_warn_c"], limits["temp_fail_c"]), ("investigate", "investigate"),
                   ("the drive runs at %s C: check the airflow and the fans", "the drive runs warm at %s C", "%s C"))


def judge_drive(host, facts, thresholds=None):
    """Checks for one node's ``drive`` facts (``{devices, drives, errors}``). Raises ValueError (ThresholdError)
    for a site limit that is not a number."""
    limits = overridden(DEFAULTS, thresholds, where="zhisuan_thresholds.drive.%s")
    drives = facts.get("drives") or []
    errors = facts.get("errors") or []
    checks = []
    for drive in drives:
        prefix = "drive.%s." % _name(drive["device"])
        component = _component(drive)
        checks.append(_critical(prefix + "critical_warning", host, component, drive))
        checks.append(_media(prefix + "media_errors", host, component, drive, limits))
        checks.append(_wear(prefix + "percentage_used", host, component, drive, limits))
        checks.append(_spare(prefix + "available_spare", host, component, drive, limits))
        checks.append(_temperature(prefix + "temperature", host, component, drive, limits))
    for error in errors:
        checks.append(make_check("drive.%s.readout" % _name(error["device"]), host, "error",
                                 component="drive %s" % _name(error["device"]), observed="unreadable",
                                 expected="smartctl reads the SMART / Health log", remedy="investigate",
                                 message=str(error.get("error") or "smartctl could not read the drive"),
                                 evidence="rc: %s" % error.get("rc")))
    if not drives and not errors:
        checks.append(make_check("drive.devices.present", host, "skip", component="drives",
                                 message="no NVMe drive to read on this node (none under /sys/class/nvme, none given)"))
    return checks


def summarize_drive(facts, profile=None):
    """The node's report facts for the family: how many drives, their models, the worst wear and temperature
    (``profile``: the registry passes the GPU profile to every summary; drives have none)."""
    del profile
    drives = facts.get("drives") or []
    worn = [drive["percentage_used"] for drive in drives if drive.get("percentage_used") is not None]
    warm = [drive["temperature"] for drive in drives if drive.get("temperature") is not None]
    return {
        "count": len(drives),
        "unreadable": len(facts.get("errors") or []),
        "models": sorted(set(drive.get("model") or "unknown" for drive in drives)),
        "percentage_used_max": max(worn) if worn else None,
        "temperature_max_c": max(warm) if warm else None,
    }
