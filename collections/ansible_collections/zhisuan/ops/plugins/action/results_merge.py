# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import json
import os

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import (
    merge_results,
    summary_lines,
    validate,
    write_results,
)


def _load(path):
    if os.path.isdir(path):
        path = os.path.join(path, "results.json")
    try:
        with open(path) as handle:
            return json.load(handle)
    except (OSError, ValueError) as exc:
        raise AnsibleActionFail("zhisuan.ops.results_merge: cannot read %s: %s" % (path, exc))


class ActionModule(ActionBase):
    """Merge the results.json of several runs over disjoint hosts (AWX job slices) into one, on the controller."""

    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("src", "dest", "run_id", "latest_link"))

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        dummy, args = self.validate_argument_spec(argument_spec=dict(
            src=dict(type="list", elements="path", required=True),
            dest=dict(type="path", required=True),
            run_id=dict(type="str"),
            latest_link=dict(type="path"),
        ))
        documents = []
        for path in args["src"]:
            document = _load(path)
            problems = validate(document)
            if problems:
                raise AnsibleActionFail("zhisuan.ops.results_merge: %s is not a results document: %s"
                                        % (path, "; ".join(problems[:3])))
            documents.append(document)
        try:
            merged = merge_results(documents, run_id=args["run_id"] or os.path.basename(os.path.normpath(args["dest"])))
        except ValueError as exc:
            raise AnsibleActionFail("zhisuan.ops.results_merge: %s" % exc)
        problems = validate(merged)
        if problems:
            raise AnsibleActionFail("zhisuan.ops.results_merge: the merged document does not match its schema: %s"
                                    % "; ".join(problems[:5]))
        path = write_results(merged, args["dest"], args["latest_link"])
        result.update(changed=True, path=path, dest=args["dest"], summary=merged["summary"],
                      lines=summary_lines(merged), merged_from=merged["run"]["merged_from"])
        return result
