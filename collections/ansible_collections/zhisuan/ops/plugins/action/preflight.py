# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.zhisuan.ops.plugins.plugin_utils._families import RUN_FAMILIES, SelectionError, select_families
from ansible_collections.zhisuan.ops.plugins.plugin_utils._hostvars import HostView, raw_host_vars
from ansible_collections.zhisuan.ops.plugins.plugin_utils._preflight import BMC_FAMILIES, HOST_VARIABLES, preflight, preflight_check
from ansible_collections.zhisuan.ops.plugins.plugin_utils._profiles import cached_profiles, warm_profiles

# the shipped profiles, read once in the main process and inherited by every forked worker
warm_profiles()

ARGUMENT_SPEC = dict(
    scope=dict(type="str", required=True, choices=["run", "host", "hosts"]),
    kind=dict(type="str", required=True, choices=sorted(RUN_FAMILIES)),
    variables=dict(type="dict", default={}),
    run_tags=dict(type="list", elements="str", default=[]),
    skip_tags=dict(type="list", elements="str", default=[]),
    site=dict(type="bool", default=False),
    families=dict(type="list", elements="str"),
    profiles_dir=dict(type="path"),
    hosts=dict(type="list", elements="str", default=[]),
)


class ActionModule(ActionBase):
    """Validate a run's family selection (scope run), one node's inventory inputs (scope host) or every node's of
    the run at once (scope hosts), on the controller."""

    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(ARGUMENT_SPEC)
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        dummy, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        variables = dict((key, value) for key, value in args["variables"].items() if value is not None)
        if args["scope"] == "run":
            try:
                selection = select_families(args["kind"], args["run_tags"], args["skip_tags"], variables,
                                            site=args["site"])
            except SelectionError as exc:
                raise AnsibleActionFail("zhisuan.ops.preflight: %s" % exc)
            result.update(changed=False, **selection)
            return result
        try:
            profiles = cached_profiles(args["profiles_dir"])
        except ValueError as exc:
            raise AnsibleActionFail("zhisuan.ops.preflight: %s" % exc)
        run_families = args["families"] if args["families"] is not None else list(RUN_FAMILIES[args["kind"]])
        if args["scope"] == "hosts":
            failed = self._preflight_hosts(args["kind"], args["hosts"], task_vars, profiles, run_families)
            # the mistakes on the console too, not only in the record: one line per node that is not tested
            if failed:
                result["warnings"] = ["%s: %s" % (name, checks[0]["message"]) for name, checks in sorted(failed.items())]
            result.update(changed=False, ok=not failed, failed_hosts=failed, hosts_checked=len(args["hosts"]),
                          families=run_families)
            return result
        host = task_vars.get("inventory_hostname", "unknown")
        found = preflight(args["kind"], variables, profiles)
        result.update(
            changed=False,
            ok=not found["problems"],
            problems=found["problems"],
            checks=[preflight_check(host, found["problems"])] if found["problems"] else [],
            profile=found["profile"],
            families=run_families,
        )
        return result

    def _preflight_hosts(self, kind, names, task_vars, profiles, families):
        """Every node's inventory, in this one task: ``{host: [its error check]}`` for the nodes with mistakes.

        Each node's variables are read from hostvars untemplated and templated in the node's own context, as a task
        on the node would see them; one that cannot be templated is a mistake of that node, not of the run."""
        hostvars = task_vars["hostvars"]
        failed = {}
        for name in names:
            unreadable = []
            view = HostView.of_host(raw_host_vars(hostvars, name), self._templar, errors=unreadable)
            wanted = HOST_VARIABLES + (("bmc_password",) if set(families) & set(BMC_FAMILIES) else ())
            variables = {key: value for key in wanted if (value := view.get(key)) is not None}
            problems = ["%s cannot be read: %s" % (key, message) for key, message in unreadable]
            problems.extend(preflight(kind, variables, profiles, families=families,
                                      unreadable=[key for key, dummy in unreadable])["problems"])
            if problems:
                failed[name] = [preflight_check(name, problems)]
        return failed
