# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""What redfish_log_info reads (the entries of the SEL and of the vendor event logs, as ``log`` facts) and what
redfish_log_clear does (``LogService.ClearLog`` on the logs that hold entries, unless in check mode)."""

import datetime
import json
import re

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import BMCError, ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.wire import TOOL, recordable
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.service import RedfishService, connect
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.tasks import TaskMonitor, task_location
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.vendors.generic import EVENTLESS, is_sel
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.transform import (
    link, log_entry_facts, log_source, odata_id, parse_time, resource_id, text,
)

CHOICES = ("sel", "events", "all")
_DURATION = re.compile(r"^\s*(\d+)\s*([smhdw])\s*$")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
CLEAR_ACTION = "#LogService.ClearLog"
CLEAR_BODY = {}
# The record a BMC writes into a log it has just cleared: the IPMI event "Event Logging Disabled: Log area
# reset/cleared" (sensor type 10h, offset 02h). It is entry 1 of the captured DGX H100 SEL ("Event_Type : Log Area
# Reset/Cleared"), and ipmitool prints it as "Log area reset/cleared". A log that holds nothing else is clear.
_CLEARED_RECORD = re.compile(r"log area reset/cleared", re.IGNORECASE)
MAX_CLEARED_RECORDS = 2


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


# Log services that hold no events: dumps, diagnostics, crash data, the BMC's own journal, host console and POST
# codes (OpenBMC ``Journal``, ``HostLogger``, ``PostCodes``; Lenovo ``DiagnosticLog``).
_NOT_EVENT_LOGS = re.compile("|".join(EVENTLESS + ("journal", "hostlogger", "console", "postcode")), re.IGNORECASE)
# Log services of audit, security and maintenance records (Lenovo/AMI/OpenBMC ``AuditLog``, iLO 5 ``SL`` "Security
# Log", Supermicro's "Maintenance Event Log" of logins, passwords and settings, Lenovo ``MaintenanceLog``).
_AUDIT_LOGS = re.compile(r"audit|security|maintenance", re.IGNORECASE)
# MessageIds of audit and security events (the last part of the id, any registry): ``Security.1.0.AccessDenied``,
# ``Base.1.8.AccessDenied``, ``OpenBMC.0.1.InvalidLoginAttempted``, session and account changes.
_AUDIT_MESSAGES = re.compile(
    r"(AccessDenied|InsufficientPrivilege|NoValidSession|SessionLimitExceeded|Session(Created|Deleted|Terminated|"
    r"Expired)|InvalidLogin\w*|Login\w*|Logout\w*|Authentication\w*|Account\w*|Password\w*|Privilege\w*|User\w*)$",
    re.IGNORECASE)
# Registries of management events that are not hardware: tasks, updates, the BMC's own resource bookkeeping.
_INFO_REGISTRIES = re.compile(r"^(TaskEvent|Update|UpdateService|HPEFirmwareUpdate|JobEvent|License)\.", re.IGNORECASE)
_AUDIT_WORDS = re.compile(r"\blog(?:in|on)\b.*\bfail|unauthori[sz]ed login|invalid (?:user|password|login)", re.IGNORECASE)
MAX_LOG_PAGES = 200
CLASSES = ("hardware", "audit", "informational")


def is_event_service(log_service):
    """Whether a LogService holds SEL, IML, event, fault or audit entries (not dumps, diagnostics, the BMC
    journal or the host console)."""
    words = " ".join(filter(None, [resource_id(log_service), text(log_service.get("Name")),
                                   (odata_id(log_service) or "").rstrip("/").rsplit("/", 1)[-1]]))
    return bool(words) and not _NOT_EVENT_LOGS.search(words) and not log_service.get("DiagnosticDataType")


def is_audit_service(log_service):
    words = " ".join(filter(None, [resource_id(log_service), text(log_service.get("Name"))]))
    return bool(_AUDIT_LOGS.search(words))


def classify_entry(entry, audit_service=False):
    """``hardware``, ``audit`` (security and access records) or ``informational`` for one log entry (the raw
    LogEntry). Audit: an entry of an audit/security log service, an HPE entry whose categories are Security only,
    a MessageId of the ``Security`` registry or of an access/session/account event, a failed-login message.
    Informational: Severity OK, or a MessageId of the task/update registries. Everything else is hardware, so
    an unknown Critical entry is never passed over."""
    message_id = text(entry.get("MessageId")) or ""
    registry = message_id.split(".", 1)[0]
    last = message_id.rsplit(".", 1)[-1]
    oem = entry.get("Oem") if isinstance(entry.get("Oem"), dict) else {}
    hpe = oem.get("Hpe") if isinstance(oem.get("Hpe"), dict) else {}
    categories = [str(item).lower() for item in hpe.get("Categories") or [] if isinstance(item, str)] \
        if isinstance(hpe.get("Categories"), list) else []
    if audit_service or registry.lower() == "security" or (message_id and _AUDIT_MESSAGES.search(last)):
        return "audit"
    if categories and "security" in categories and "hardware" not in categories:
        return "audit"
    if _AUDIT_WORDS.search(text(entry.get("Message")) or ""):
        return "audit"
    severity = (text(entry.get("Severity")) or "").lower()
    if severity == "ok" or _INFO_REGISTRIES.search(message_id):
        return "informational"
    return "hardware"


def log_services_for(service, which):
    """The LogServices to read for ``which``: those the vendor adapter names, then (``events``, ``all``) every
    other event log of every System, Manager and Chassis (a blade BMC keeps its event log under the Manager,
    where an adapter may not look); for ``sel``, when the adapter finds none, the SEL-typed (or IML) services
    found so. Dumps, diagnostics, journals and consoles are left out. Each service once, adapter's first."""
    listed = [item for item in service.adapter.log_services(service, which) or [] if isinstance(item, dict)]
    found = listed
    if which != "sel" or not listed:
        owners = list(service.systems) + list(service.managers) + list(service.chassis or [])
        discovered = []
        for owner in owners:
            uri = link(owner, "LogServices")
            if uri:
                discovered.extend(service.members(uri, keep=lambda member: not _NOT_EVENT_LOGS.search(
                    member.rstrip("/").rsplit("/", 1)[-1])) or [])
        if which == "sel":
            discovered = [item for item in discovered if is_sel(item) or (resource_id(item) or "").lower() == "iml"]
        found = listed + discovered
    result, seen = [], set()
    for item in found:
        key = odata_id(item) or id(item)
        if key in seen or not is_event_service(item):
            continue
        seen.add(key)
        result.append(item)
    return result


def read_logs(service, which, since=None, max_pages=MAX_LOG_PAGES):
    """``(entries, problems)``: the entries of every log service for ``which`` (``log_services_for``), in the order
    the BMC lists them, each with its ``class`` (``classify_entry``); with ``since``, entries created before it
    are left out (an entry whose time does not parse is kept). Pages are followed up to ``max_pages``; a page that
    cannot be read keeps the entries read before it. ``problems`` lists each log that could not be read whole,
    ``{log, source, resource, error, entries_read}``, and, when no log service could be found while reads
    failed, one entry with ``log`` None naming them."""
    entries, problems = [], []
    before = len(service.errors)
    services = log_services_for(service, which)
    if not services and len(service.errors) > before:
        failed = service.errors[before:]
        problems.append({"log": None, "source": None, "resource": failed[0]["resource"], "entries_read": 0,
                         "error": "no log service could be read: %s" % "; ".join(
                             "%s: %s" % (item["resource"], item["error"]) for item in failed[:5])})
    for log_service in services:
        source = log_source(log_service)
        audit = is_audit_service(log_service)
        uri = link(log_service, "Entries")
        if uri is None:
            continue
        items, failure = service.read_members(uri, max_pages)
        read = 0
        for item in items or []:
            fact = log_entry_facts(item, source)
            fact["class"] = classify_entry(item, audit)
            read += 1
            moment = parse_time(fact["created"])
            if since is not None and moment is not None and moment < since:
                continue
            entries.append(fact)
        if failure is not None:
            problems.append({"log": odata_id(log_service), "source": source, "resource": failure["resource"],
                             "error": failure["error"], "entries_read": read})
    return entries, problems


def collect_log(service, which, since=None):
    """The entries of ``read_logs`` (without the problems)."""
    return read_logs(service, which, since)[0]


def run(module):
    """redfish_log_info: ``{"log": [...], "log_errors": [...], "vendor": ..., "errors": [...]}``."""
    since = parse_since(module.params.get("since"))
    with connect(module) as client:
        service = RedfishService(client)
        log, problems = read_logs(service, module.params["log_services"], since)
        return {"log": log, "log_errors": problems, "vendor": service.adapter.name, "errors": list(service.errors)}


# -- redfish_log_clear ------------------------------------------------------------------------------------------------

def clear_target(log_service):
    """The URI of the service's ``LogService.ClearLog`` action, or None when it offers none."""
    action = (log_service.get("Actions") or {}).get(CLEAR_ACTION)
    if not isinstance(action, dict):
        return None
    return action.get("target") or (odata_id(log_service) or "").rstrip("/") + "/Actions/LogService.ClearLog"


def is_cleared_record(entry):
    """Whether a log entry is the record the BMC wrote when the log was cleared."""
    return bool(_CLEARED_RECORD.search(text((entry or {}).get("Message")) or ""))


def entry_count(service, log_service):
    """``(entries, only the cleared record)``: how many entries the log holds (its ``Members@odata.count``, else the
    members counted; None when the Entries collection cannot be read, noted in ``service.errors``), and whether the
    few it holds are all records of its last clearing."""
    uri = link(log_service, "Entries")
    page = service.try_get(uri) if uri else None
    if page is None:
        return None, False
    count = page.get("Members@odata.count")
    if isinstance(count, bool) or not isinstance(count, int):
        try:
            count = len(service.client.members(uri, expand=False))
        except BMCError as exc:
            if not recordable(exc):
                raise
            service.record(uri, exc)
            return None, False
    if 0 < count <= MAX_CLEARED_RECORDS:
        entries = service.members(uri) or []
        return count, len(entries) == count and all(is_cleared_record(entry) for entry in entries)
    return count, False


def plan_clear(service, which):
    """One ``{"service", "target", "entries", "clear", "reason"}`` per log service the adapter names for ``which``.

    ``clear`` is true for a log that holds entries (or whose entries cannot be counted) and offers ClearLog; a
    log that does not offer it has a ``reason``. BMCError when the adapter finds no log service at all."""
    services = service.adapter.log_services(service, which)
    if not services:
        detail = "the BMC at %s has no log service to clear for log_services=%s" % (service.client.address, which)
        if service.errors:
            detail += " (%s)" % "; ".join("%s: %s" % (item["resource"], item["error"]) for item in service.errors)
        raise BMCError(TOOL, detail)
    plan = []
    for log_service in services:
        count, cleared = entry_count(service, log_service)
        target = clear_target(log_service)
        step = {"service": odata_id(log_service), "target": target, "entries": count, "clear": False, "reason": None}
        if target is None:
            step["reason"] = "offers no LogService.ClearLog action"
        elif count is None or (count > 0 and not cleared):
            step["clear"] = True
        plan.append(step)
    return plan


def send_clear(client, target, wait_timeout):
    """POST ClearLog; a clear the BMC runs as a task (202) is followed until it is done."""
    response = client.post(target, CLEAR_BODY)
    location = task_location(response)
    if location:
        TaskMonitor(client, location, timeout=wait_timeout).wait()


def run_clear(module):
    """redfish_log_clear: ``cleared`` (service URIs), ``entries_before``, ``skipped``, ``actions`` and ``diff``."""
    with connect(module) as client:
        service = RedfishService(client)
        plan = plan_clear(service, module.params["log_services"])
        todo = [step for step in plan if step["clear"]]
        for step in plan:
            if step["reason"] and step["entries"]:
                module.warn("the log %s holds %d entries but %s; it is left as it is"
                            % (step["service"], step["entries"], step["reason"]))
        if not module.check_mode:
            for step in todo:
                send_clear(client, step["target"], module.params["wait_timeout"])
        before = dict((step["service"], step["entries"]) for step in plan)
        after = dict(before, **dict((step["service"], 0) for step in todo))
        return {
            "changed": bool(todo),
            "cleared": [step["service"] for step in todo],
            "entries_before": before,
            "skipped": [{"service": step["service"], "reason": step["reason"]} for step in plan if step["reason"]],
            "actions": ["POST %s %s" % (step["target"], json.dumps(CLEAR_BODY)) for step in todo],
            "vendor": service.adapter.name,
            "errors": list(service.errors),
            "diff": {"before": before, "after": after},
        }
