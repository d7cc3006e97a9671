# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Total building blocks for the parsers of tool output: numbers and JSON that never raise anything but ParseError.

What damaged or odd outputs hold and these helpers turn into ``None`` (a number) or a ``ParseError`` (a document):

* Unicode digits (``٣٤``, ``²``, ``１２``) that ``str.isdigit()`` and ``re``'s ``\\d`` accept: only ASCII digits
  are numbers here;
* ``1.2.3``, ``1,5``, ``N/A``, ``ERR!``: not a number;
* ``nan``, ``inf``, ``1e999`` (infinite after ``float()``), and integers longer than any counter (``int()`` of
  thousands of digits is slow or refused): not a number;
* JSON with ``NaN``/``Infinity`` constants, nested deeper than any tool prints (``RecursionError``), or numbers
  Python refuses to convert: a ``ParseError`` naming the tool;
* times: ``iso_time`` reads an ISO 8601 time (``Z`` or an offset; none is UTC) or gives ``None``.

Pure functions, standard library only.
"""

import datetime
import json
import math
import re

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError

# More digits than any counter (2^64 has 20): such a "number" is damage, not a reading.
MAX_DIGITS = 24
# Deeper than any tool's JSON (lldpd, ip, fio, sinfo nest fewer than 12 levels).
MAX_DEPTH = 64

_INT_RE = re.compile(r"^[+-]?[0-9]{1,%d}$" % MAX_DIGITS)
_ASCII_DIGITS_RE = re.compile(r"[0-9]+")
# datetime.fromisoformat's forms of Python 3.7-3.10 (for Python 3.6, which has none)
_ISO_RE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})"
                     r"(?:.([0-9]{2})(?::([0-9]{2})(?::([0-9]{2})(?:\.([0-9]+))?)?)?"
                     r"(?:([+-])([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.([0-9]{6}))?)?)?)?", re.S)
_FLOAT_RE = re.compile(r"^[+-]?(?:[0-9]{1,%d}(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,3})?$" % MAX_DIGITS)


def to_int(text):
    """An ASCII decimal integer (optional sign, at most MAX_DIGITS digits) as int, else None."""
    if isinstance(text, bool):
        return None
    if isinstance(text, int):
        return text if abs(text) < 10 ** MAX_DIGITS else None
    if not isinstance(text, str):
        return None
    text = text.strip()
    return int(text) if _INT_RE.match(text) else None


def to_float(text):
    """An ASCII decimal number (``12``, ``-3.5``, ``1e3``) as a finite float, else None (``nan``, ``inf``,
    ``1e999``, ``1.2.3``, ``1,5``, Unicode digits)."""
    if isinstance(text, bool):
        return None
    if isinstance(text, (int, float)):
        return finite(text)
    if not isinstance(text, str):
        return None
    text = text.strip()
    if not _FLOAT_RE.match(text):
        return None
    value = float(text)
    return value if math.isfinite(value) else None


def finite(value):
    """``value`` when it is a finite int or float (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    return value if abs(value) < 10 ** MAX_DIGITS else None


def is_ascii_digits(text):
    """True for a non-empty run of ASCII digits (``str.isdigit()`` also accepts ``²`` and ``٣``)."""
    return isinstance(text, str) and 0 < len(text) <= MAX_DIGITS and ascii_digits(text)


def ascii_digits(text):
    """True when ``text`` is a non-empty run of the digits 0-9 only, of any length (``str.isascii()`` is Python
    3.7+; the node-side code keeps to 3.6)."""
    return _ASCII_DIGITS_RE.fullmatch(text) is not None


def fromisoformat(text):
    """``datetime.datetime.fromisoformat(text)`` (Python 3.7+); on Python 3.6 the same forms parsed here:
    ``YYYY-MM-DD[?HH[:MM[:SS[.f...]]][+HH:MM[:SS[.ffffff]]]]``, digits past microseconds cut as Python 3.11
    does. Raises ValueError like it."""
    native = getattr(datetime.datetime, "fromisoformat", None)
    return native(text) if native is not None else fromisoformat_py36(text)


def fromisoformat_py36(text):
    """What ``fromisoformat`` does where Python has no ``datetime.fromisoformat`` (3.6)."""
    match = _ISO_RE.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        raise ValueError("Invalid isoformat string: %r" % (text,))
    (year, month, day, hour, minute, second, fraction, sign, off_hour, off_minute, off_second,
     off_fraction) = match.groups()
    tzinfo = None
    if sign:
        offset = datetime.timedelta(hours=int(off_hour), minutes=int(off_minute), seconds=int(off_second or 0),
                                    microseconds=int((off_fraction or "0").ljust(6, "0")))
        tzinfo = datetime.timezone(-offset if sign == "-" else offset)
    return datetime.datetime(int(year), int(month), int(day), int(hour or 0), int(minute or 0), int(second or 0),
                             int((fraction or "0")[:6].ljust(6, "0")), tzinfo)


def _reject_constant(name):
    raise ValueError("%s is not a number JSON allows" % name)


def depth_ok(value, limit=MAX_DEPTH):
    """Whether a parsed document nests at most ``limit`` levels (iteratively: no recursion to run out of)."""
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if level > limit:
            return False
        if isinstance(item, dict):
            stack.extend((child, level + 1) for child in item.values() if isinstance(child, (dict, list)))
        elif isinstance(item, list):
            stack.extend((child, level + 1) for child in item if isinstance(child, (dict, list)))
    return True


def _depth(value, limit):
    """Raise ValueError when ``value`` nests deeper than ``limit``."""
    if not depth_ok(value, limit):
        raise ValueError("nested deeper than %d levels" % limit)


def iso_time(value):
    """An ISO 8601 time (``2024-05-01T10:00:00Z``, ``... 10:00:00+08:00``, a date) or a datetime as an aware
    datetime (a time without an offset is UTC: Ansible's ``now(utc=true)`` is naive); None for anything else."""
    if isinstance(value, datetime.datetime):
        return value if value.tzinfo else value.replace(tzinfo=datetime.timezone.utc)
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        parsed = fromisoformat(value.strip().replace("Z", "+00:00").replace(" ", "T", 1))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=datetime.timezone.utc)


def load_json(text, tool, message, max_depth=MAX_DEPTH):
    """``json.loads`` that raises only ParseError(tool, message % why): ``message`` holds one ``%s`` for the reason
    (not JSON, empty, ``NaN``/``Infinity``, nested too deeply)."""
    if not isinstance(text, str) or not text.strip():
        raise ParseError(tool, message % "empty output (read 0 lines)")
    try:
        data = json.loads(text, parse_constant=_reject_constant)
        _depth(data, max_depth)
    except RecursionError:
        raise ParseError(tool, message % "nested too deeply")
    except ValueError as exc:
        raise ParseError(tool, message % str(exc)[:200])
    return data


def text_or_none(value):
    """A non-empty string as it is, anything else (a number, a list, null, "") None."""
    return value if isinstance(value, str) and value else None


def list_of_str(value):
    """A JSON list of strings as a list; a list holding other types keeps only its strings; not a list: []."""
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, str)]
