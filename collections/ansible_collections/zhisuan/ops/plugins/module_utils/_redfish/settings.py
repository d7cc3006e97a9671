# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""What redfish_bios and redfish_boot do: compare what is wanted with what the BMC holds (pending values
included) and PATCH only the difference, unless in check mode. BIOS values become pending settings that the next
reboot applies; nothing here reboots."""

import json

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import BMCError, BMCHTTPError, OptionError
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.service import RedfishService, connect
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.tasks import TaskMonitor, task_location
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.transform import link, odata_id, resource_id
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.wire import TOOL

BOOT_KEYS = (("target", "BootSourceOverrideTarget"), ("enabled", "BootSourceOverrideEnabled"), ("mode", "BootSourceOverrideMode"))
TASK_TIMEOUT = 300


def _as_bool(value):
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    return {"true": True, "false": False}.get(text)


def same(desired, actual):
    """Whether a wanted value equals the BMC's: booleans by truth (``"true"`` equals true), others by value or by
    text (``3`` equals ``"3"``)."""
    if isinstance(desired, bool) or isinstance(actual, bool):
        return _as_bool(desired) is not None and _as_bool(desired) == _as_bool(actual)
    return desired == actual or str(desired) == str(actual)


def coerce(desired, actual):
    """The wanted value in the type of the BMC's current one (what is sent)."""
    if isinstance(actual, bool):
        value = _as_bool(desired)
        return desired if value is None else value
    if isinstance(actual, int) and not isinstance(desired, bool):
        try:
            return int(str(desired).strip())
        except ValueError:
            return desired
    if isinstance(actual, str) and isinstance(desired, (int, float)) and not isinstance(desired, bool):
        return str(desired)
    return desired


def bios_changes(desired, current, pending):
    """``(unknown names, changes to send)``: a wanted value is a change unless it is what the BMC has, or already
    has pending."""
    unknown = sorted(name for name in desired if name not in current)
    changes = {}
    for name, value in desired.items():
        if name in unknown:
            continue
        effective = pending[name] if name in (pending or {}) else current[name]
        if not same(value, effective):
            changes[name] = coerce(value, current[name])
    return unknown, changes


def read_pending(client, uri, warn):
    """The pending BIOS attributes at ``uri`` ({} when the settings object lists none or does not exist)."""
    try:
        document = client.get(uri)
    except BMCHTTPError as exc:
        if exc.status != 404:
            raise
        warn("the BIOS settings object %s does not exist (HTTP 404); taking it that nothing is pending" % uri)
        return {}
    attributes = document.get("Attributes")
    return dict(attributes) if isinstance(attributes, dict) else {}


def _send(client, adapter, uri, body):
    response = client.patch(uri, body, headers=adapter.settings_headers(client, uri))
    location = task_location(response)
    if location:
        TaskMonitor(client, location, timeout=TASK_TIMEOUT).wait()


def _describe(uri, body):
    return "PATCH %s %s" % (uri, json.dumps(body, sort_keys=True))


def run_bios(module):
    """redfish_bios: current ``attributes``, ``pending`` settings, ``diff`` and the PATCH sent or planned."""
    desired = module.params.get("attributes") or {}
    with connect(module) as client:
        service = RedfishService(client)
        adapter, system = service.adapter, service.system
        if not link(system, "Bios"):
            raise BMCError(TOOL, "the system %s has no Bios resource" % odata_id(system), resource=odata_id(system))
        bios = service.get(link(system, "Bios"))
        current = bios.get("Attributes") if isinstance(bios.get("Attributes"), dict) else {}
        settings_uri, pending_uri = adapter.bios_settings_uri(bios), adapter.bios_pending_uri(bios)
        pending = read_pending(client, pending_uri, module.warn)
        unknown, changes = bios_changes(desired, current, pending)
        if unknown:
            raise BMCError(TOOL, "the BIOS of %s has no attribute %s (%s lists %d attributes)"
                           % (resource_id(system), ", ".join(unknown), link(system, "Bios"), len(current)),
                           resource=link(system, "Bios"))
        body = adapter.bios_patch_body(changes)
        before = dict((name, pending.get(name, current[name])) for name in changes)
        if changes and not module.check_mode:
            _send(client, adapter, settings_uri, body)
            pending = read_pending(client, pending_uri, module.warn)
        elif changes:
            pending = dict(pending, **changes)
        return {
            "changed": bool(changes),
            "system": resource_id(system),
            "vendor": adapter.name,
            "attributes": current,
            "pending": pending,
            "settings_uri": settings_uri,
            "reboot_required": bool(pending),
            "actions": [_describe(settings_uri, body)] if changes else [],
            "diff": {"before": before, "after": dict(changes)},
        }


def _boot_view(boot):
    return dict((name, boot.get(key)) for name, key in BOOT_KEYS)


def run_boot(module):
    """redfish_boot: the boot override before and after, ``diff`` and the PATCH sent or planned."""
    params = module.params
    if params["enabled"] != "Disabled" and not params.get("target"):
        raise OptionError("target", "target is required when enabled is %s" % params["enabled"])
    with connect(module) as client:
        service = RedfishService(client)
        adapter, system = service.adapter, service.system
        boot = system.get("Boot")
        if not isinstance(boot, dict):
            raise BMCError(TOOL, "the system %s has no Boot property" % odata_id(system), resource=odata_id(system))
        offered = boot.get("BootSourceOverrideTarget@Redfish.AllowableValues")
        if params.get("target") and isinstance(offered, list) and params["target"] not in offered:
            raise BMCError(TOOL, "the BMC does not offer boot target %s (it offers: %s)" % (params["target"], ", ".join(offered)),
                           resource=odata_id(system))
        wanted = dict((key, params[name]) for name, key in BOOT_KEYS if params.get(name) is not None)
        if params["enabled"] == "Disabled":
            wanted.pop("BootSourceOverrideTarget", None)
        uri = adapter.boot_uri(system)
        staged = uri != odata_id(system)
        effective = dict(boot)
        if staged:
            effective.update((service.try_get(uri) or {}).get("Boot") or {})
        changes = dict((key, value) for key, value in wanted.items() if effective.get(key) != value)
        body = {"Boot": wanted}
        actions = [_describe(uri, body)] if changes else []
        after = dict(effective, **wanted) if changes else effective
        if changes and not module.check_mode:
            try:
                _send(client, adapter, uri, body)
            except BMCHTTPError as exc:
                if not staged or exc.status not in (404, 405):
                    raise
                module.warn("the BMC refused the boot override on %s (HTTP %s); it was set on the system %s instead"
                            % (uri, exc.status, odata_id(system)))
                uri, staged = odata_id(system), False
                actions.append(_describe(uri, body))
                _send(client, adapter, uri, body)
            after = dict(boot)
            after.update(client.get(uri).get("Boot") or {})
        before_view, after_view = _boot_view(effective), _boot_view(after)
        return {
            "changed": bool(changes),
            "system": resource_id(system),
            "vendor": adapter.name,
            "boot": after_view,
            "staged": staged,
            "actions": actions,
            "diff": {"before": before_view, "after": after_view},
        }
