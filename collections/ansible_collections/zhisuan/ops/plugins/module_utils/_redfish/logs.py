# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""What redfish_log_info reads: the entries of the SEL and of the vendor event logs, as ``log`` facts."""

from __future__ import annotations

import datetime
import re

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.service import RedfishService, connect
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.transform import link, log_entry_facts, log_source, parse_time

CHOICES = ("sel", "events", "all")
_DURATION = re.compile(r"^\s*(\d+)\s*([smhdw])\s*$")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_since(value, now=None):
    """``since`` as an aware UTC datetime: an ISO 8601 time (no offset means UTC) or a duration back from ``now``
    (``90m``, ``24h``, ``7d``, ``2w``). None for an empty value; ParseError for anything else."""
    if value is None or not str(value).strip():
        return None
    match = _DURATION.match(str(value))
    if match:
        now = now or datetime.datetime.now(datetime.timezone.utc)
        return now - datetime.timedelta(seconds=int(match.group(1)) * _SECONDS[match.group(2)])
    moment = parse_time(value)
    if moment is None:
        raise ParseError("redfish_log_info", "since %r is neither an ISO 8601 time (2024-05-01T10:00:00Z) nor a "
                                             "duration (24h, 7d)" % (value,))
    return moment


def collect_log(service, which, since=None):
    """Entries of the log services the adapter names for ``which``, in the order the BMC lists them. With
    ``since``, entries created before it are left out; an entry whose time does not parse is kept."""
    entries = []
    for log_service in service.adapter.log_services(service, which):
        source = log_source(log_service)
        for item in service.members(link(log_service, "Entries")) or []:
            fact = log_entry_facts(item, source)
            moment = parse_time(fact["created"])
            if since is not None and moment is not None and moment < since:
                continue
            entries.append(fact)
    return entries


def run(module):
    """redfish_log_info: ``{"log": [...], "vendor": ..., "errors": [...]}``."""
    since = parse_since(module.params.get("since"))
    with connect(module) as client:
        service = RedfishService(client)
        log = collect_log(service, module.params["log_services"], since)
        return {"log": log, "vendor": service.adapter.name, "errors": list(service.errors)}
