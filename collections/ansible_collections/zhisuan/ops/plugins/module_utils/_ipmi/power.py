# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""ipmi_power's work: read the power state, plan, act with ``chassis power <verb>`` (not in check mode), wait.

``on``, ``off`` and ``soft_off`` are idempotent (nothing is sent when the chassis is already in that state);
``reset`` and ``cycle`` always act, and refuse a chassis that is off (they would power it on).
"""

import time

from ansible_collections.zhisuan.ops.plugins.module_utils._base import positive
from ansible_collections.zhisuan.ops.plugins.module_utils._errors import Refused, ToolTimeout
from ansible_collections.zhisuan.ops.plugins.module_utils._ipmi import argv as ipmi_argv
from ansible_collections.zhisuan.ops.plugins.module_utils._ipmi.argv import TOOL, Connection
from ansible_collections.zhisuan.ops.plugins.module_utils._ipmi.collect import ipmitool, power_status

# state -> the power state it ends in
TARGET = {"on": "on", "soft_off": "off", "off": "off", "reset": "on", "cycle": "on"}
POLL_INTERVAL = 0.5
_WORDS = {"on": "On", "off": "Off"}


def plan(state, before):
    """``(act, message)``: whether ``state`` needs a command when the chassis power is ``before``."""
    verb = ipmi_argv.POWER_VERBS[state]
    if state in ("reset", "cycle"):
        if before == "off":
            return None, "the chassis power is off; state=%s needs it on (use state=on)" % state
        return True, "chassis power %s" % verb
    if before == TARGET[state]:
        return False, "the chassis power is already %s" % before
    return True, "chassis power %s" % verb


def wait_for(conn, target, wait_timeout, sleep=time.sleep, clock=time.monotonic):
    """Poll ``chassis power status`` until it reads ``target``; returns the states seen (changes only, in order)."""
    deadline = clock() + wait_timeout
    seen = []
    while True:
        state = power_status(conn)
        if not seen or seen[-1] != state:
            seen.append(state)
        if state == target:
            return seen
        if clock() >= deadline:
            raise ToolTimeout(TOOL, "the chassis power of the BMC at %s is still %s %s s after the command (expected %s)"
                              % (conn.target, state, wait_timeout, target))
        sleep(POLL_INTERVAL)


def set_power(module):
    params = module.params
    positive(params, "wait_timeout")
    conn = Connection.from_params(params)
    state = params["state"]
    before = power_status(conn, first=True)
    act, message = plan(state, before)
    result = {"changed": False, "power_state": _WORDS[before], "actions": [], "transitions": [], "msg": message}
    if act is None:
        raise Refused(TOOL, message, result=result)
    diff = {"before": {"power_state": _WORDS[before]}, "after": {"power_state": _WORDS[before]}}
    if act:
        command = message
        result.update(changed=True, actions=[command])
        diff["after"]["power_state"] = _WORDS[TARGET[state]]
        if module.check_mode:
            result.update(power_state=_WORDS[TARGET[state]], msg="would run " + command)
        else:
            ipmitool(conn, ("chassis", "power", ipmi_argv.POWER_VERBS[state]))
            if params["wait"]:
                seen = wait_for(conn, TARGET[state], params["wait_timeout"])
                result["transitions"] = [_WORDS[item] for item in seen]
                result["power_state"] = _WORDS[seen[-1]]
                result["msg"] = "ran %s; the chassis power is %s" % (command, seen[-1])
            else:
                result["power_state"] = None
                result["msg"] = "ran %s (not waited for)" % command
    result["diff"] = diff
    return result
