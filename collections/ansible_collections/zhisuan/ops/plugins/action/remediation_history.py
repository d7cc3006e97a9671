# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.zhisuan.ops.plugins.module_utils._remediate import history
from ansible_collections.zhisuan.ops.plugins.plugin_utils import _lease


# the parts of one node's record (history.build); records: records made already
PARTS = ("entry", "message", "cause", "source_run_id", "detected", "started", "finished", "resumed", "verification",
         "scheduler", "evidence", "ticket")


class ActionModule(ActionBase):
    """Append remediation records to the history file on the controller (one JSON object per line): one node's
    record, built here from its plan entry and what the run did (``node``, ``run_id``, ``outcome``, ...), as soon as
    it is known - or a list of records made already (``records``)."""

    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("dir", "records", "node", "run_id", "outcome", "release_leases") + PARTS)

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        dummy, args = self.validate_argument_spec(argument_spec=dict(
            dir=dict(type="path", required=True),
            records=dict(type="list", elements="dict"),
            node=dict(type="str"),
            run_id=dict(type="str"),
            outcome=dict(type="str"),
            entry=dict(type="dict"),
            message=dict(type="str"),
            cause=dict(type="str"),
            source_run_id=dict(type="str"),
            detected=dict(type="str"),
            started=dict(type="str"),
            finished=dict(type="str"),
            resumed=dict(type="str"),
            verification=dict(type="raw"),
            scheduler=dict(type="dict"),
            evidence=dict(type="raw"),
            ticket=dict(type="raw"),
            release_leases=dict(type="str"),
        ), mutually_exclusive=[("records", "node", "release_leases")],
            required_one_of=[("records", "node", "release_leases")], required_by={"node": ("run_id", "outcome")})
        if args["release_leases"] is not None:
            return self._release(result, args["dir"], args["release_leases"])
        try:
            if args["node"] is not None:
                records = [history.build(args["node"], args["run_id"], args["outcome"],
                                         **dict((key, args[key]) for key in PARTS))]
            else:
                records = [history.make_record(raw) for raw in args["records"]]
        except history.HistoryError as exc:
            raise AnsibleActionFail("zhisuan.ops.remediation_history: %s" % exc)
        if self._task.check_mode:
            result.update(changed=False, path=None, records=records)
            return result
        try:
            path = history.append(args["dir"], records)
        except history.HistoryError as exc:
            raise AnsibleActionFail("zhisuan.ops.remediation_history: %s" % exc)
        except (IOError, OSError) as exc:
            raise AnsibleActionFail("zhisuan.ops.remediation_history: cannot append to %s: %s" % (args["dir"], exc))
        result.update(changed=bool(records), path=path, records=records)
        return result

    def _release(self, result, directory, run_id):
        """Release the node leases ``run_id`` holds in ``directory``."""
        released = []
        if not self._task.check_mode:
            try:
                released = _lease.release(directory, run_id)
            except history.HistoryError as exc:
                raise AnsibleActionFail("zhisuan.ops.remediation_history: %s" % exc)
        result.update(changed=bool(released), path=None, records=[], released=released)
        return result
