# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""Alertmanager silences for a node under repair (API v2, through the one HTTP seam ``_http``), and the findings of
a run as CloudEvents 1.0 (structured mode) for a webhook.

A node's alerts carry its name in one of two labels, as the monitoring role's rules have them: ``Hostname``
(dcgm-exporter's series) or ``instance`` (node_exporter's, ``host:port``). Alertmanager ANDs the matchers of one
silence, so a node gets one silence per label: ``Hostname="node07"`` and ``instance=~"node07(:[0-9]+)?"``.
Each is made by ``zhisuan.ops`` (createdBy) with the cause and the run id in its comment; ``expire`` ends every
active or pending silence of ours whose matchers are a node's.
"""

from __future__ import annotations

import datetime
import re

from ansible_collections.zhisuan.ops.plugins.plugin_utils import _http

SERVICE = "zhisuan.ops alertmanager"
CREATED_BY = "zhisuan.ops"
LIVE = ("active", "pending")
FINDING_STATUSES = ("warn", "fail", "error")
CLOUDEVENTS_TYPE = "io.github.zhisuan-ops.finding"
CLOUDEVENTS_CONTENT_TYPE = "application/cloudevents+json; charset=utf-8"


def matcher_sets(node):
    """The matchers of each silence of ``node`` (a list of matcher lists)."""
    if not isinstance(node, str) or not node.strip():
        raise _http.HTTPError(SERVICE, "the node to silence must be a non-empty name, got %r" % (node,))
    return [
        [{"name": "Hostname", "value": node, "isRegex": False, "isEqual": True}],
        [{"name": "instance", "value": re.escape(node) + "(:[0-9]+)?", "isRegex": True, "isEqual": True}],
    ]


def _time(value):
    return value.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def silence_bodies(node, cause, run_id, duration_s, now):
    """The POST bodies of the node's silences (pure)."""
    if not isinstance(duration_s, int) or isinstance(duration_s, bool) or duration_s <= 0:
        raise _http.HTTPError(SERVICE, "the silence duration must be a positive number of seconds, got %r"
                              % (duration_s,))
    comment = "zhisuan.ops remediation run %s: %s drained for repair (%s)" % (run_id, node, cause)
    return [{
        "matchers": matchers,
        "startsAt": _time(now),
        "endsAt": _time(now + datetime.timedelta(seconds=duration_s)),
        "createdBy": CREATED_BY,
        "comment": comment,
    } for matchers in matcher_sets(node)]


def _same_matchers(left, right):
    def key(items):
        return sorted((item.get("name"), item.get("value"), bool(item.get("isRegex")), item.get("isEqual", True))
                      for item in items or [])
    return key(left) == key(right)


def ours(silences, node):
    """The live silences of ``node`` that zhisuan.ops made, from a GET /api/v2/silences answer."""
    wanted = matcher_sets(node)
    found = []
    for silence in silences if isinstance(silences, list) else []:
        if not isinstance(silence, dict) or silence.get("createdBy") != CREATED_BY:
            continue
        if (silence.get("status") or {}).get("state") not in LIVE:
            continue
        if any(_same_matchers(silence.get("matchers"), matchers) for matchers in wanted):
            found.append(silence)
    return found


def create(url, node, cause, run_id, duration_s, now=None, **http):
    """Create the node's silences; their ids."""
    ids = []
    now = now or datetime.datetime.now(datetime.timezone.utc)
    for body in silence_bodies(node, cause, run_id, duration_s, now):
        dummy, answer = _http.request_json(SERVICE, "POST", _http.join(url, "/api/v2/silences"), body=body, **http)
        if not isinstance(answer, dict) or not answer.get("silenceID"):
            raise _http.HTTPError(SERVICE, "POST /api/v2/silences answered no silenceID: %r" % (answer,))
        ids.append(answer["silenceID"])
    return ids


def expire(url, node, **http):
    """Expire every live silence of ours for ``node``; the ids expired."""
    dummy, silences = _http.request_json(SERVICE, "GET", _http.join(url, "/api/v2/silences"), **http)
    ids = []
    for silence in ours(silences, node):
        _http.request(SERVICE, "DELETE", _http.join(url, "/api/v2/silence/%s" % silence["id"]), **http)
        ids.append(silence["id"])
    return ids


def findings(doc, statuses=FINDING_STATUSES):
    """The CloudEvents (structured, as dicts) of a results document's findings: one per check record whose status
    is in ``statuses`` (hosts' and the cluster's), in host order (pure)."""
    run = doc.get("run") or {}
    run_id = run.get("id") or "unknown"
    kind = run.get("kind") or "unknown"
    time = run.get("finished") or run.get("started")
    records = []
    for host in sorted(doc.get("hosts") or {}):
        records.extend((doc["hosts"][host] or {}).get("checks") or [])
    records.extend((doc.get("cluster") or {}).get("checks") or [])
    events = []
    for index, check in enumerate(records):
        if not isinstance(check, dict) or check.get("status") not in statuses:
            continue
        event = {
            "specversion": "1.0",
            "id": "%s/%d" % (run_id, index),
            "source": "/zhisuan.ops/%s" % kind,
            "type": CLOUDEVENTS_TYPE,
            "subject": "%s/%s" % (check.get("host") or "cluster", check.get("id") or "unknown"),
            "datacontenttype": "application/json",
            "data": dict(check, run_id=run_id, kind=kind),
        }
        if time:
            event["time"] = time
        events.append(event)
    return events
