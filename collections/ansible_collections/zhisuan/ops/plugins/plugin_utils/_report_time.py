# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""The report's times in the site's zone (``zhisuan_timezone``, an IANA name such as ``Asia/Shanghai``; the report
action's default is the controller's zone: ``$TZ``, else ``/etc/localtime``, else UTC), each written as ISO 8601 with
its offset. The records keep their times as they were written; only the report shows them in the zone."""

from __future__ import annotations

import os
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ansible_collections.zhisuan.ops.plugins.module_utils._safe_parse import iso_time as aware_time
from ansible_collections.zhisuan.ops.plugins.plugin_utils._report_errors import ReportError
from ansible_collections.zhisuan.ops.plugins.plugin_utils._report_values import iso_time

_ZONES = {}


def zone(name):
    """The tzinfo of an IANA zone name; ReportError naming the option for an unknown one."""
    if name not in _ZONES:
        try:
            _ZONES[name] = ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ReportError("zhisuan.ops.report: timezone %r is not a known IANA time zone (for example "
                              "Asia/Shanghai or UTC): %s" % (name, exc))
    return _ZONES[name]


def controller_zone(environ=None, localtime="/etc/localtime"):
    """The controller's zone name: ``$TZ`` (without a leading ``:``), else the zone /etc/localtime links to, else
    ``UTC``."""
    environ = os.environ if environ is None else environ
    name = (environ.get("TZ") or "").lstrip(":")
    if name:
        return name
    try:
        target = os.path.realpath(localtime)
    except OSError:
        return "UTC"
    marker = "/zoneinfo/"
    return target.split(marker, 1)[1] if marker in target else "UTC"


def in_zone(value, name=None):
    """``value`` (an ISO 8601 time) in zone ``name`` with its offset; without a zone, as ``iso_time`` writes it
    (a time recorded without an offset is UTC); anything that is not a time as it is."""
    if not name:
        return iso_time(value)
    moment = aware_time(value) if isinstance(value, str) else None
    return iso_time(value) if moment is None else moment.astimezone(zone(name)).isoformat()
