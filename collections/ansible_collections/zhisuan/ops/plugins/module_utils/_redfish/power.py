# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""What redfish_power does: plan the ``ComputerSystem.Reset`` requests that bring the host to a power state (none when
it is there already), send them unless in check mode, and wait for the resulting ``PowerState``."""

import json
import time

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import BMCError
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.service import RedfishService, connect
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.tasks import TaskMonitor, task_location
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.transform import odata_id, power_state, resource_id
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.wire import TOOL

STATES = ("on", "graceful_off", "force_off", "graceful_restart", "force_restart", "power_cycle")
GOALS = {"on": "On", "graceful_off": "Off", "force_off": "Off"}
TURN_OFF = ("ForceOff", "GracefulShutdown")
RESET_ACTION = "#ComputerSystem.Reset"


def goal_of(state):
    """The PowerState ``state`` ends in: Off for the two offs, On for everything else."""
    return GOALS.get(state, "On")


def allowed_reset_types(service, system):
    """The ResetType values the BMC offers: inline ``ResetType@Redfish.AllowableValues``, else its ActionInfo's
    ``ResetType`` parameter, else None (not said, or the ActionInfo unreadable)."""
    action = (system.get("Actions") or {}).get(RESET_ACTION) or {}
    values = action.get("ResetType@Redfish.AllowableValues")
    if isinstance(values, list):
        return [str(value) for value in values]
    info = service.try_get(action.get("@Redfish.ActionInfo")) if action.get("@Redfish.ActionInfo") else None
    for parameter in (info or {}).get("Parameters") or []:
        if isinstance(parameter, dict) and parameter.get("Name") == "ResetType" and isinstance(parameter.get("AllowableValues"), list):
            return [str(value) for value in parameter["AllowableValues"]]
    return None


def reset_target(system):
    target = ((system.get("Actions") or {}).get(RESET_ACTION) or {}).get("target")
    if not target:
        raise BMCError(TOOL, "the system %s offers no ComputerSystem.Reset action" % odata_id(system), resource=odata_id(system))
    return target


def plan(adapter, state, current, allowed):
    """The ResetType values to POST, in order; empty when the system is already where ``state`` leads.

    ``on`` when On (or PoweringOn) and the offs when Off (or PoweringOff) plan nothing. A restart or power cycle of a
    system that is Off powers it on."""
    goal = goal_of(state)
    if goal == "On" and current in ("Off", "PoweringOff"):
        state = "on"
    elif state == "on" and current in ("On", "PoweringOn"):
        return []
    elif goal == "Off" and current in ("Off", "PoweringOff"):
        return []
    return adapter.reset_types(state, allowed)


def describe(target, reset_type):
    return "POST %s %s" % (target, json.dumps({"ResetType": reset_type}))


def wait_for(client, uri, goal, timeout, interval, sleep=time.sleep, clock=time.monotonic):
    """Read the system's PowerState until it is ``goal``; BMCError after ``timeout`` seconds."""
    deadline = clock() + timeout
    while True:
        current = power_state(client.get(uri).get("PowerState"))
        if current == goal:
            return current
        if clock() >= deadline:
            raise BMCError(TOOL, "%s reports PowerState %s %s s after the reset; expected %s" % (uri, current, timeout, goal),
                           resource=uri)
        sleep(interval)


def apply(client, uri, target, steps, goal, wait=True, timeout=300, interval=5.0):
    """POST each ResetType (following a task monitor when the BMC answers 202), wait for Off between a power-off
    and the next step, then, with ``wait``, for ``goal``. Returns the PowerState read last."""
    for index, reset_type in enumerate(steps):
        response = client.post(target, {"ResetType": reset_type})
        location = task_location(response)
        if location:
            TaskMonitor(client, location, timeout=timeout, interval=interval).wait()
        if index < len(steps) - 1:
            wait_for(client, uri, "Off" if reset_type in TURN_OFF else "On", timeout, interval)
    if wait:
        return wait_for(client, uri, goal, timeout, interval)
    return power_state(client.get(uri).get("PowerState"))


def run(module):
    """redfish_power: before/after PowerState, the planned or sent ``actions``, ``diff``."""
    params = module.params
    with connect(module) as client:
        service = RedfishService(client)
        system = service.system
        before = power_state(system.get("PowerState"))
        steps = plan(service.adapter, params["state"], before, allowed_reset_types(service, system))
        target = reset_target(system) if steps else None
        goal = goal_of(params["state"])
        if not steps:
            after = before
        elif module.check_mode:
            after = goal
        else:
            after = apply(client, odata_id(system), target, steps, goal, wait=params["wait"],
                          timeout=params["wait_timeout"], interval=params["poll_interval"])
        return {
            "changed": bool(steps),
            "system": resource_id(system),
            "vendor": service.adapter.name,
            "actions": [describe(target, reset_type) for reset_type in steps],
            "before": {"power_state": before},
            "after": {"power_state": after},
            "diff": {"before": {"power_state": before}, "after": {"power_state": after}},
            "errors": list(service.errors),
        }
