# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""``ethtool`` text -> facts: link settings (``ethtool IF``), driver (``-i``), counters (``-S``), optics (``-m``).

Pure functions over the C-locale text, standard library only. Lines ethtool prints besides the fields
(``netlink error: Operation not permitted`` when not root, the ``Current message level`` continuation) are skipped;
a line starting with ``#`` is a comment some capture tools add. Output without the one field a form must have
raises ``ParseError`` naming ``ethtool`` and the form.

``counter_deltas`` turns two ``-S`` readings into the increments over the window, grouped as errors, discards and
pause frames: lifetime totals say nothing about a link that is healthy today.
"""

import math
import re

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._safe_parse import to_float

TOOL = "ethtool"

# What ethtool -m prints on stderr (rc 1) for a port without a readable module EEPROM (veth, copper, empty cage).
NO_MODULE_MARKERS = ("Operation not supported", "Cannot get module EEPROM", "Module EEPROM not available",
                     "Input/output error")

# Plausible module readings (SFF-8472/8636 DOM): anything outside is a broken sensor or a bad EEPROM read.
TEMPERATURE_RANGE_C = (-40.0, 125.0)
RX_DARK_DBM = -40.0

_KV_RE = re.compile(r"^\s*([^:]+?)\s*:\s*(.*?)\s*$")
_SPEED_RE = re.compile(r"^([0-9]{1,9})\s*Mb/s$")
_STAT_RE = re.compile(r"^\s*(?:\[([0-9]{1,6})\]:\s*)?([^:]+?):\s*(-?[0-9]{1,24})\s*$")
_POWER_RE = re.compile(r"^(-?[0-9.]+)\s*mW\s*/\s*(-?[0-9.]+|-inf|inf)\s*dBm$")
_NUMBER_UNIT_RE = re.compile(r"^(-?[0-9.]+)\s*(mA|V|degrees C)\b")
_CHANNEL_RE = re.compile(r"\s*\((?:Channel|Chan) (\d+)\)\s*$", re.IGNORECASE)

# ethtool -m field names -> our metric names (SFP: ethtool's sff-8472 printer; QSFP: sff-8636, per channel).
_MODULE_METRICS = (
    ("laser bias current", "bias_ma"),
    ("laser tx bias current", "bias_ma"),
    ("laser output power", "tx_power"),
    ("laser tx power", "tx_power"),
    ("transmit avg optical power", "tx_power"),
    ("receiver signal average optical power", "rx_power"),
    ("rcvr signal avg optical power", "rx_power"),
    ("laser rx power", "rx_power"),
    ("module temperature", "temperature_c"),
    ("module voltage", "voltage_v"),
)
# Counter classes of counter_deltas: a name containing any of the words (and none of the excluded ones).
_COUNTER_CLASSES = (
    ("errors", ("err", "crc", "fcs", "symbol", "align")),
    ("discards", ("discard", "drop", "out_of_buffer", "no_buff")),
    ("pause", ("pause", "pfc", "xoff")),
)
_COUNTER_EXCLUDE = ("duration", "transition", "packets_ok", "bytes", "peer_ifindex")


def _lines(text):
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#") or line.startswith("netlink error"):
            continue
        yield line


def _yes_no(value):
    value = value.strip().lower()
    if value == "yes":
        return True
    if value == "no":
        return False
    return None


def parse_settings(text, warn=None):
    """``ethtool IF`` -> ``{interface, speed_mbps, duplex, link, port, auto_negotiation}``.

    ``speed_mbps``/``duplex`` are ``None`` when ethtool prints ``Unknown!`` (no link); ``link`` is the
    ``Link detected`` value (``None`` when not printed).
    """
    facts = {"interface": None, "speed_mbps": None, "duplex": None, "link": None, "port": None,
             "auto_negotiation": None}
    seen = False
    for line in _lines(text):
        if line.startswith("Settings for "):
            facts["interface"] = line[len("Settings for "):].rstrip(":").strip()
            seen = True
            continue
        match = _KV_RE.match(line)
        if not match:
            continue
        key, value = match.group(1).lower(), match.group(2)
        if key == "speed":
            speed = _SPEED_RE.match(value)
            facts["speed_mbps"] = int(speed.group(1)) if speed else None
            if not speed and not value.startswith("Unknown") and warn is not None:
                warn("ethtool: unexpected speed %r; please report" % value)
        elif key == "duplex":
            facts["duplex"] = None if value.startswith("Unknown") else value.lower()
        elif key == "link detected":
            facts["link"] = _yes_no(value)
            seen = True
        elif key == "port":
            facts["port"] = value
        elif key == "auto-negotiation":
            facts["auto_negotiation"] = value == "on"
    if not seen:
        raise ParseError(TOOL, "no 'Settings for' or 'Link detected' line in the link settings output")
    return facts


def parse_driver(text, warn=None):
    """``ethtool -i IF`` -> ``{driver, version, firmware_version, expansion_rom_version, bus_info, supports}``.

    Empty values (a veth has no firmware or bus) are ``None``.
    """
    fields = {}
    for line in _lines(text):
        match = _KV_RE.match(line)
        if match:
            fields[match.group(1).strip().lower()] = match.group(2) or None
        elif ":" in line:
            fields[line.split(":", 1)[0].strip().lower()] = None
        elif warn is not None:
            warn("ethtool -i: unreadable line %r; please report" % line.strip())
    if "driver" not in fields:
        raise ParseError(TOOL, "no 'driver:' line in the ethtool -i output")
    supports = dict((key[len("supports-"):].replace("-", "_"), _yes_no(value or ""))
                    for key, value in fields.items() if key.startswith("supports-"))
    return {
        "driver": fields.get("driver"),
        "version": fields.get("version"),
        "firmware_version": fields.get("firmware-version"),
        "expansion_rom_version": fields.get("expansion-rom-version"),
        "bus_info": fields.get("bus-info"),
        "supports": supports,
    }


def parse_stats(text, warn=None):
    """``ethtool -S IF`` -> ``{counter: int}``. Per-queue counters printed ``[N]: name: value`` (bnxt_en) become
    ``name[N]``."""
    lines = list(_lines(text))
    if not lines or lines[0].strip() != "NIC statistics:":
        raise ParseError(TOOL, "the ethtool -S output does not start with 'NIC statistics:'")
    counters = {}
    for line in lines[1:]:
        match = _STAT_RE.match(line)
        if not match:
            if warn is not None:
                warn("ethtool -S: unreadable line %r; please report" % line.strip())
            continue
        queue, name, value = match.groups()
        counters[name.strip() if queue is None else "%s[%s]" % (name.strip(), queue)] = int(value)
    if not counters:
        raise ParseError(TOOL, "the ethtool -S output has no readable counter (read %d lines after 'NIC statistics:')"
                         % (len(lines) - 1))
    return counters


def counter_class(name):
    """``errors``, ``discards``, ``pause`` or ``None`` for an ethtool -S counter name."""
    lower = name.lower()
    if any(word in lower for word in _COUNTER_EXCLUDE):
        return None
    for cls, words in _COUNTER_CLASSES:
        if any(word in lower for word in words):
            return cls
    return None


def counter_deltas(before, after, seconds, warn=None):
    """Increments of the error, discard and pause counters between two ``parse_stats`` readings.

    Returns ``{seconds, errors, discards, pause, pause_per_s, counters}`` where ``counters`` holds the non-zero
    increments by name. A counter that went down (driver reload, counter reset) is left out with a warning.
    """
    totals = {"errors": 0, "discards": 0, "pause": 0}
    changed = {}
    for name in sorted(after):
        cls = counter_class(name)
        if cls is None or name not in before:
            continue
        delta = after[name] - before[name]
        if delta < 0:
            if warn is not None:
                warn("ethtool -S: counter %s went down (%d -> %d); counter reset? left out" % (name, before[name], after[name]))
            continue
        if delta:
            totals[cls] += delta
            changed[name] = delta
    seconds = float(seconds)
    return {
        "seconds": seconds,
        "errors": totals["errors"],
        "discards": totals["discards"],
        "pause": totals["pause"],
        "pause_per_s": round(totals["pause"] / seconds, 3) if seconds > 0 else None,
        "counters": changed,
    }


def is_no_module(stderr):
    """True when ``ethtool -m`` failed because the port has no readable module (not a tool failure)."""
    return any(marker in (stderr or "") for marker in NO_MODULE_MARKERS)


def _power(value):
    """``0.5120 mW / -2.91 dBm`` -> (0.512, -2.91); ``-inf dBm`` (0 mW) and anything unreadable (``1.2.3``) -> None."""
    match = _POWER_RE.match(value)
    if not match:
        return None, None
    return to_float(match.group(1)), to_float(match.group(2))


def _number(value):
    match = _NUMBER_UNIT_RE.match(value)
    return to_float(match.group(1)) if match else None


def _metric(key):
    for prefix, metric in _MODULE_METRICS:
        if key.startswith(prefix):
            return metric, key[len(prefix):].strip()
    return None, key


def _store(optics, metric, value, channel):
    """Set a reading; per-channel readings (QSFP) become lists in channel order."""
    if metric in ("tx_power", "rx_power"):
        mw, dbm = _power(value)
        pairs = (("%s_mw" % metric, mw), ("%s_dbm" % metric, dbm))
    else:
        pairs = ((metric, _number(value)),)
    for name, reading in pairs:
        if channel is None:
            optics[name] = reading
        else:
            if not isinstance(optics.get(name), list):
                optics[name] = []
            optics[name].append(reading)


def parse_module(text, warn=None):
    """``ethtool -m IF`` (SFF-8472 / SFF-8636 with digital diagnostics) -> optics facts.

    ``{identifier, transceiver, vendor, part_number, serial, dom, temperature_c, voltage_v, bias_ma, tx_power_mw,
    tx_power_dbm, rx_power_mw, rx_power_dbm, flags: {name: bool}, alarms: [...], warnings: [...],
    thresholds: {name: number}}``. Per-channel (QSFP, SFF-8636) readings are lists in channel order, and a
    per-channel flag is On when it is On on any channel. ``-inf dBm`` (0 mW) reads ``None`` dBm. Only the SFP form is
    in the test captures; the channel forms follow ethtool's SFF-8636 printer (``(Channel N)`` / ``(Chan N)``).
    """
    optics = {"identifier": None, "transceiver": None, "vendor": None, "part_number": None, "serial": None,
              "dom": None, "temperature_c": None, "voltage_v": None, "bias_ma": None,
              "tx_power_mw": None, "tx_power_dbm": None, "rx_power_mw": None, "rx_power_dbm": None,
              "flags": {}, "alarms": [], "warnings": [], "thresholds": {}}
    seen = False
    for line in _lines(text):
        match = _KV_RE.match(line)
        if not match:
            if warn is not None:
                warn("ethtool -m: unreadable line %r; please report" % line.strip())
            continue
        key, value = match.group(1), match.group(2)
        lower = key.lower()
        if lower == "identifier":
            optics["identifier"] = re.sub(r"^0x[0-9a-fA-F]+\s*\((.*)\)$", r"\1", value)
            seen = True
        elif lower == "transceiver type" and optics["transceiver"] is None:
            optics["transceiver"] = value
        elif lower == "vendor name":
            optics["vendor"] = value
        elif lower == "vendor pn":
            optics["part_number"] = value
        elif lower == "vendor sn":
            optics["serial"] = value
        elif lower == "optical diagnostics support":
            optics["dom"] = _yes_no(value)
        elif _CHANNEL_RE.sub("", lower).endswith((" alarm", " warning")) and value in ("On", "Off"):
            # SFF-8636 prints one flag per channel ("... low alarm   (Chan 2)"): a flag is On when any channel's is
            base = _CHANNEL_RE.sub("", lower)
            name = _flag_name(base)
            optics["flags"][name] = optics["flags"].get(name, False) or value == "On"
            kind = "alarms" if base.endswith("alarm") else "warnings"
            if value == "On" and name not in optics[kind]:
                optics[kind].append(name)
        elif lower.endswith("threshold"):
            _threshold(optics["thresholds"], lower[:-len("threshold")].strip(), value)
        else:
            channel_match = _CHANNEL_RE.search(key)
            channel = int(channel_match.group(1)) if channel_match else None
            metric, rest = _metric(_CHANNEL_RE.sub("", lower))
            if metric is not None and not rest:
                _store(optics, metric, value, channel)
    if not seen:
        raise ParseError(TOOL, "no 'Identifier' line in the ethtool -m output")
    return optics


_BASE_NAMES = {"bias_ma": "bias", "temperature_c": "temperature", "voltage_v": "voltage"}


def _snake(text):
    return re.sub(r"[^a-z0-9]+", "_", text).strip("_")


def _flag_name(lower):
    """``laser rx power low alarm`` -> ``rx_power_low_alarm``; ``module temperature high warning`` ->
    ``temperature_high_warning``."""
    metric, rest = _metric(lower)
    if metric is None:
        return _snake(lower)
    return "%s_%s" % (_BASE_NAMES.get(metric, metric), _snake(rest))


def _threshold(thresholds, lower, value):
    """``laser rx power low alarm threshold : 0.0282 mW / -15.50 dBm`` -> ``rx_power_low_alarm_mw`` and ``_dbm``;
    ``module temperature high alarm threshold : 75.00 degrees C`` -> ``temperature_high_alarm`` (C)."""
    name = _flag_name(lower)
    metric, dummy = _metric(lower)
    if metric in ("tx_power", "rx_power"):
        mw, dbm = _power(value)
        thresholds[name + "_mw"] = mw
        thresholds[name + "_dbm"] = dbm
    elif metric is not None:
        thresholds[name] = _number(value)


def _values(reading):
    if reading is None:
        return []
    return reading if isinstance(reading, list) else [reading]


def implausible(optics, link=None):
    """Reasons a module's readings cannot be trusted (empty list when they look sane).

    A temperature outside -40..125 C, every power and bias reading at 0, or a dark receiver (Rx <= -40 dBm, or
    0 mW) on a link that is up: the sensor or the EEPROM read is wrong, not the optic.
    """
    reasons = []
    if not optics or optics.get("dom") is False:
        return reasons
    for temp in _values(optics.get("temperature_c")):
        if temp is not None and not TEMPERATURE_RANGE_C[0] <= temp <= TEMPERATURE_RANGE_C[1]:
            reasons.append("module temperature %s C is outside %s..%s C" % (temp, TEMPERATURE_RANGE_C[0], TEMPERATURE_RANGE_C[1]))
    readings = [value for key in ("tx_power_mw", "rx_power_mw", "bias_ma") for value in _values(optics.get(key))
                if value is not None]
    if readings and all(value == 0 for value in readings):
        reasons.append("Tx power, Rx power and bias all read 0")
    elif link:
        rx_mw = [value for value in _values(optics.get("rx_power_mw")) if value is not None]
        rx_dbm = [value for value in _values(optics.get("rx_power_dbm")) if value is not None]
        if (rx_mw and all(value == 0 for value in rx_mw)) or (rx_dbm and all(value <= RX_DARK_DBM for value in rx_dbm)):
            reasons.append("the receiver reads dark (%s) on a link that is up" % (
                "%s dBm" % min(rx_dbm) if rx_dbm else "0 mW"))
    for key in ("rx_power_dbm", "tx_power_dbm"):
        for value in _values(optics.get(key)):
            if value is not None and (math.isnan(value) or value > 20):
                reasons.append("%s %s is above any module's output" % (key, value))
    return reasons
