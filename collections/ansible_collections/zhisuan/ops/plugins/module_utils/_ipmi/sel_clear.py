# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""ipmi_sel_clear's work: count the SEL's entries with ``sel info``, and clear it with ``sel clear`` (not in check
mode) unless it is clear already.

A SEL is clear when it holds no entry, or only the record real BMCs log right after a clear: "Event Logging Disabled
… | Log area reset/cleared | Asserted" (sensor type 10h, offset 02h). Without that second rule a BMC that logs it
would be cleared again on every run.
"""

import re

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._ipmi import argv as ipmi_argv
from ansible_collections.zhisuan.ops.plugins.module_utils._ipmi import parse
from ansible_collections.zhisuan.ops.plugins.module_utils._ipmi.argv import TOOL, Connection
from ansible_collections.zhisuan.ops.plugins.module_utils._ipmi.collect import ipmitool
from ansible_collections.zhisuan.ops.plugins.module_utils._safe_parse import is_ascii_digits

SEL_INFO = ("sel", "info")
SEL_CLEAR = ("sel", "clear")
# At most this many entries are read back to see whether they are all records of the last clear.
MAX_CLEARED_RECORDS = 2
_CLEARED = re.compile(r"^log area reset/cleared\b", re.IGNORECASE)
_LINE = re.compile(r"^\s*([^:]+?)\s*:\s*(.*?)\s*$")


def _ignore(msg):
    pass


def parse_sel_info(text):
    """``ipmitool sel info`` -> ``{"entries": int, "overflow": bool or None, "fields": {label: value}}``.

    ParseError when the output has no ``Entries`` line with a number.
    """
    fields = {}
    for line in (text or "").splitlines():
        match = _LINE.match(line)
        if match:
            fields[match.group(1)] = match.group(2)
    entries = fields.get("Entries")
    if entries is None or not is_ascii_digits(entries):
        raise ParseError(TOOL, "no 'Entries : <number>' line in the output of `ipmitool sel info`: %r" % (text or "")[:120])
    overflow = {"true": True, "false": False}.get((fields.get("Overflow") or "").lower())
    return {"entries": int(entries), "overflow": overflow, "fields": fields}


def is_cleared_record(record):
    """Whether an ``sel elist`` record (parse.parse_sel_elist) is the one a BMC logs when its SEL was cleared."""
    return record.get("sensor_type") == "Event Logging Disabled" and bool(_CLEARED.match(record.get("event") or ""))


def sel_state(conn, warn=_ignore):
    """``(entries, only cleared records)`` of the SEL of the BMC behind ``conn``."""
    entries = parse_sel_info(ipmitool(conn, SEL_INFO, first=True).stdout)["entries"]
    if not 0 < entries <= MAX_CLEARED_RECORDS:
        return entries, False
    listing = ipmitool(conn, ipmi_argv.SEL_ELIST)
    records = parse.parse_sel_elist(listing.stdout, warn=warn, utc=True, stderr=listing.stderr)
    return entries, len(records) == entries and all(is_cleared_record(record) for record in records)


def plan(entries, only_cleared):
    """``(act, message)`` for a SEL holding ``entries`` entries."""
    if entries == 0:
        return False, "the SEL is empty"
    if only_cleared:
        return False, "the SEL holds only the record of its last clear"
    return True, "sel clear"


def clear_sel(module):
    """ipmi_sel_clear: ``entries_before``, ``actions``, ``msg`` and ``diff``."""
    conn = Connection.from_params(module.params)
    entries, only_cleared = sel_state(conn, warn=module.warn)
    act, message = plan(entries, only_cleared)
    result = {"changed": act, "entries_before": entries, "actions": [message] if act else [], "msg": message,
              "diff": {"before": {"entries": entries}, "after": {"entries": 0 if act else entries}}}
    if act and module.check_mode:
        result["msg"] = "would run sel clear (%d entries)" % entries
    elif act:
        ipmitool(conn, SEL_CLEAR)
        result["msg"] = "ran sel clear (%d entries before)" % entries
    return result
