# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

from ansible.plugins.action import ActionBase

from ansible_collections.zhisuan.ops.plugins.plugin_utils import _alertmanager, _http


class ActionModule(ActionBase):
    """Silence a node's alerts in Alertmanager while it is drained for repair (state present), or expire the
    silences zhisuan.ops made for it (state absent). An Alertmanager that cannot be reached is a warning and
    ``ok: false`` with the reason, never a failed task: the repair goes on."""

    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("url", "node", "state", "cause", "run_id", "duration", "timeout", "validate_certs",
                             "ca_path"))

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        dummy, args = self.validate_argument_spec(argument_spec=dict(
            url=dict(type="str", required=True),
            node=dict(type="str", required=True),
            state=dict(type="str", default="present", choices=["present", "absent"]),
            cause=dict(type="str", default="remediation"),
            run_id=dict(type="str", default="unknown"),
            duration=dict(type="int", default=86400),
            timeout=dict(type="int", default=_http.DEFAULT_TIMEOUT),
            validate_certs=dict(type="bool", default=True),
            ca_path=dict(type="path"),
        ))
        http = dict(timeout=args["timeout"], validate_certs=args["validate_certs"], ca_path=args["ca_path"])
        if self._task.check_mode:
            result.update(changed=False, ok=True, silences=[], expired=[], url=_http.shown(args["url"]))
            return result
        try:
            if args["state"] == "present":
                ids = _alertmanager.create(args["url"], args["node"], args["cause"], args["run_id"],
                                           args["duration"], **http)
                result.update(changed=True, ok=True, silences=ids, expired=[])
            else:
                ids = _alertmanager.expire(args["url"], args["node"], **http)
                result.update(changed=bool(ids), ok=True, silences=[], expired=ids)
        except _http.HTTPError as exc:
            self._display.warning("zhisuan.ops.alertmanager_silence: %s" % exc)
            result.update(changed=False, ok=False, msg=str(exc), silences=[], expired=[])
        result["url"] = _http.shown(args["url"])
        return result
