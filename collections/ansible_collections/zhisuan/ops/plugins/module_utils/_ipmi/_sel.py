# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""``ipmitool sel elist`` -> SEL records, and the severity of an SEL event (pure functions).

Row forms read (all printed by real ipmitool versions):

* ``  54 | 08/06/2020 | 15:05:37 | System ACPI Power State ACPI_Stat | S4/S5: soft-off | Asserted`` (1.8.18)
* ``   4 | 11/30/26 | 21:44:41 UTC | Temperature GPU1 Temp | Upper Critical going high | Asserted | Reading 89 >
  Threshold 87 degrees C`` (1.8.19: two-digit year, time zone, threshold detail)
* ``  56 |  Pre-Init  |0000000085| …`` (logged before the BMC's clock was set: no date)
* `` 123 | 10/16/2020 | 10:41:22 | OEM record dc | 000137 | 00c378895f00`` (OEM timestamped record, types
  C0h-DFh: manufacturer IANA number and six bytes of vendor-defined data)
* ``   5 | OEM record e0 | 0102030405060708090a0b0c0d`` (OEM non-timestamped record, types E0h-FFh: 13 bytes)
* ``  7e | 05/28/2026 | 05:01:09 | Temperature #0x17 |  | Asserted`` (``sel list``: sensor number instead of name;
  an empty event text where the event type is unspecified or OEM)
* ``  33 | 12/08/2024 | 09:31:35 PM EST | Unknown #0xff |  | Asserted`` (12-hour clock with a zone)

OEM records are never decoded (their data is the vendor's): ``severity`` is None, ``oem`` True, and they carry
``record_type``, ``manufacturer_id``/``manufacturer`` (from the IANA number, where one is printed) and ``oem_data``.
Every record gets a ``class``: ``audit`` (Session Audit: logins), ``informational`` (records of the OS, the BIOS's
boot progress, the log itself, buttons, power states: what was done to the machine, not what broke in it; OEM
records written under an operating-system vendor's IANA number), else ``hardware``.
"""

import re

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError

TOOL = "ipmitool"

# ipmitool's sensor type names (sensor_type_desc), printed before the sensor's name in the sensor column.
SENSOR_TYPES = (
    "Temperature", "Voltage", "Current", "Fan", "Physical Security", "Platform Security", "Processor",
    "Power Supply", "Power Unit", "Cooling Device", "Other", "Memory", "Drive Slot / Bay", "POST Memory Resize",
    "System Firmwares", "Event Logging Disabled", "Watchdog1", "System Event", "Critical Interrupt", "Button",
    "Module / Board", "Microcontroller", "Add-in Card", "Chassis", "Chip Set", "Other FRU", "Cable / Interconnect",
    "Terminator", "System Boot Initiated", "Boot Error", "OS Boot", "OS Critical Stop", "Slot / Connector",
    "System ACPI Power State", "Watchdog2", "Platform Alert", "Entity Presence", "Monitor ASIC", "LAN",
    "Management Subsys Health", "Battery", "Session Audit", "Version Change", "FRU State", "Unknown",
    # other ipmitool versions' names of the same types, and the OEM range (sensor types C0h-FFh)
    "System Firmware Progress", "Management Subsystem Health", "Watchdog", "OEM reserved", "OEM",
    # sensor type 00h (sensor_type_desc[0] of lib/ipmi_sel.c): ``reserved #0xff |  | Asserted``
    "reserved",
)
# Sensor types whose records say what was done to the machine or by whom, not what broke in it.
_AUDIT_TYPES = ("Session Audit",)
_INFO_TYPES = ("Event Logging Disabled", "System Event", "System Boot Initiated", "OS Boot", "OS Critical Stop",
               "System ACPI Power State", "Button", "System Firmwares", "System Firmware Progress",
               "Version Change")
# IANA Private Enterprise Numbers printed in OEM records (registry names, shortened); OS vendors write OS records.
IANA = {0: None, 2: "IBM", 11: "HP", 311: "Microsoft", 343: "Intel", 674: "Dell", 2011: "Huawei", 5703: "NVIDIA",
        7244: "Quanta", 10876: "Supermicro", 19046: "Lenovo", 20974: "AMI", 37945: "Inspur", 47196: "HPE"}
_OS_VENDORS = (311,)
# an event text of an informational sensor type that is about something that broke
_FAILURE_EVENT_RE = re.compile(r"\b(?:failure|error)\b", re.IGNORECASE)
_TYPES_LONGEST_FIRST = sorted(SENSOR_TYPES, key=len, reverse=True)
_DATE = re.compile(r"^([0-9]{2})/([0-9]{2})/([0-9]{4}|[0-9]{2})$")
_TIME = re.compile(r"^([0-9]{1,2}):([0-9]{2}):([0-9]{2})(?:\s+([AaPp][Mm]))?(?:\s+([A-Za-z][A-Za-z0-9+:-]*))?$")
NO_ENTRIES = "SEL has no entries"
_UTC_NAMES = ("UTC", "GMT", "Z", "UCT")

# Severity of an asserted event, by its text (ipmitool's event strings). Checked in this order; the first match wins.
_SEVERITY_RULES = (
    ("Critical", re.compile(r"insufficient resources", re.I)),
    ("Warning", re.compile(r"predictive failure|non-critical|redundancy (lost|degraded)|non-redundant|"
                           r"(?<!un)correctable|intrusion|throttl|configuration error|limit reached", re.I)),
    ("Critical", re.compile(r"(?<!non-)critical going|non-recoverable|transition to critical|failure detected|"
                            r"\bac lost|uncorrectable|\bierr\b|thermal trip|machine check|\bfatal|serr|perr|"
                            r"critical stop|power supply .*lost|bus error|hardware failure|failed|fault", re.I)),
)


def _ignore(msg):
    pass


def split_sensor(column):
    """``Temperature GPU1 Temp`` -> (``Temperature``, ``GPU1 Temp``); ``OS Boot`` -> (``OS Boot``, None)."""
    column = column.strip()
    for name in _TYPES_LONGEST_FIRST:
        if column == name:
            return name, None
        if column.startswith(name + " "):
            return name, column[len(name) + 1:].strip() or None
    return None, column or None


def _created(date, time_, utc, warn, where):
    """ISO 8601 time of a row, or None (``Pre-Init``: logged before the clock was set)."""
    if date.lower().replace("-", "") == "preinit":
        return None
    d, t = _DATE.match(date), _TIME.match(time_)
    if not d or not t:
        warn("ipmitool sel elist: %s: unreadable time %r %r; please report" % (where, date, time_))
        return None
    year = int(d.group(3))
    year = year + 2000 if year < 100 else year
    hour = int(t.group(1))
    if t.group(4):                                   # 12-hour clock: 12:05 AM is 00:05, 12:05 PM is 12:05
        hour = hour % 12 + (12 if t.group(4).lower() == "pm" else 0)
    text = "%04d-%s-%sT%02d:%s:%s" % (year, d.group(1), d.group(2), hour, t.group(2), t.group(3))
    zone = t.group(5)
    if (zone and zone.upper() in _UTC_NAMES) or (zone is None and utc):
        return text + "+00:00"
    return text


def sel_severity(event, direction=None, oem=False):
    """``OK`` | ``Warning`` | ``Critical`` | None for one SEL event.

    A deasserted event (the condition ended) is OK; OEM records and events without text cannot be read: None.
    """
    if oem or not (event or "").strip():
        return None
    if (direction or "").strip().lower() == "deasserted":
        return "OK"
    for severity, pattern in _SEVERITY_RULES:
        if pattern.search(event):
            return severity
    return "OK"


def entry_class(sensor_type, oem=False, manufacturer_id=None, event=None):
    """``hardware`` | ``audit`` | ``informational`` of one SEL record (see the module's docstring). A record of an
    informational sensor type whose event names a failure or an error is hardware: the IPMI System Event offset 02h
    ``Undetermined system hardware failure``, the System Firmwares ``System Firmware Error``, ``Correctable memory
    error logging disabled`` (a DIMM past its correctable-error limit)."""
    if oem:
        return "informational" if manufacturer_id in _OS_VENDORS else "hardware"
    if sensor_type in _AUDIT_TYPES:
        return "audit"
    if sensor_type in _INFO_TYPES:
        return "hardware" if event and _FAILURE_EVENT_RE.search(event) else "informational"
    return "hardware"


def _oem_fields(record_type, rest, warn, where):
    """(record type, manufacturer id, OEM data) of an OEM record's columns; a column that does not fit is warned."""
    rtype = int(record_type, 16)
    if rtype < 0xE0 and len(rest) == 2 and re.match(r"^[0-9A-Fa-f]{6}$", rest[0]):
        return rtype, int(rest[0], 16), rest[1]
    if rtype >= 0xE0 and len(rest) == 1:
        return rtype, None, rest[0]
    warn("ipmitool sel elist: %s: unexpected OEM record columns %r; please report" % (where, " | ".join(rest)))
    return rtype, None, " | ".join(rest) or None


_OEM = re.compile(r"^OEM record ([0-9A-Fa-f]{2})$")


def parse_sel_elist(text, warn=_ignore, utc=False, stderr=None):
    """``ipmitool sel elist`` (and ``sel list``) -> records: id, created, timestamp, sensor_type, sensor, event,
    direction, detail, oem, severity, class, message (and record_type, manufacturer_id, manufacturer, oem_data for
    OEM records).

    ``utc``: the rows were printed in UTC (ipmitool ran with ``TZ=UTC``), so a time without a zone is UTC.
    An empty SEL is an empty list only when ipmitool said so: it prints ``SEL has no entries`` (on stderr, through
    its error log, in ipmitool 1.8.x: ``lprintf(LOG_ERR, ...)`` in lib/ipmi_sel.c), so pass ``stderr`` too. Output
    with no record and without that line is a ParseError: an empty stdout is not an empty SEL (a BMC that answered
    nothing, a killed ipmitool). A line that is no record (``Unable to send command: …`` between the rows, a row cut
    off) is warned and skipped: the rows around it are kept.
    """
    out = []
    said_empty = NO_ENTRIES in (text or "") or NO_ENTRIES in (stderr or "")
    for line in (text or "").splitlines():
        if not line.strip() or line.strip() == NO_ENTRIES:
            continue
        fields = [field.strip() for field in line.split("|")]
        if len(fields) >= 3 and re.match(r"^[0-9A-Fa-f]+$", fields[0]) and _OEM.match(fields[1]):
            fields = [fields[0], "", ""] + fields[1:]          # OEM non-timestamped record: no date, no time
        if len(fields) < 5 or not re.match(r"^[0-9A-Fa-f]+$", fields[0]):
            warn("ipmitool sel elist: unexpected line %r; please report" % line[:200])
            continue
        record_id, date, time_, sensor_column = fields[:4]
        rest = fields[4:]
        oem_match = _OEM.match(sensor_column)
        oem = bool(oem_match) or sensor_column.startswith("OEM record")
        sensor_type, sensor = (None, None) if oem else split_sensor(sensor_column)
        event = None if oem else (rest[0] or None)
        direction = None
        if not oem and len(rest) > 1 and rest[1] in ("Asserted", "Deasserted"):
            direction = rest[1]
        detail = " | ".join(rest[2:]) if direction else (" | ".join(rest[1:]) if not oem else " | ".join(rest))
        where = "record %s" % record_id
        record = {
            "id": record_id,
            "created": _created(date, time_, utc, warn, where) if date or time_ else None,
            "timestamp": ("%s %s" % (date, time_)).strip() or None,
            "sensor_type": sensor_type,
            "sensor": sensor,
            "event": event,
            "direction": direction,
            "detail": detail or None,
            "oem": oem,
            "severity": sel_severity(event, direction, oem),
            "message": " | ".join([sensor_column] + rest),
        }
        manufacturer_id = None
        if oem:
            if oem_match:
                rtype, manufacturer_id, data = _oem_fields(oem_match.group(1), rest, warn, where)
            else:
                warn("ipmitool sel elist: %s: unexpected OEM record type %r; please report" % (where, sensor_column))
                rtype, data = None, " | ".join(rest) or None
            record.update({"record_type": rtype, "manufacturer_id": manufacturer_id,
                           "manufacturer": IANA.get(manufacturer_id) if manufacturer_id is not None else None,
                           "oem_data": data})
        record["class"] = entry_class(sensor_type, oem, manufacturer_id, record.get("event"))
        out.append(record)
    if not out and not said_empty:
        if (text or "").strip():
            raise ParseError(TOOL, "no SEL record in the output of `ipmitool sel elist`: %r" % text[:120])
        raise ParseError(TOOL, "`ipmitool sel elist` printed nothing (read 0 lines) and not the '%s' it prints for "
                         "an empty SEL: the SEL was not read" % NO_ENTRIES)
    return out
