# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import json

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.zhisuan.ops.plugins.plugin_utils import _alertmanager, _http, _metrics

MAX_FINDINGS = 1000


class ActionModule(ActionBase):
    """Publish a run's verdicts where operators look: the Prometheus exposition text of each node (for the
    textfile collector, written on the nodes by the results role), a Pushgateway group, and one CloudEvent per
    finding to a webhook. A failed push or post is a warning, never a failed task."""

    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("results", "pushgateway_url", "pushgateway_job", "webhook_url", "webhook_statuses",
                             "max_findings", "timeout", "validate_certs", "ca_path"))

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        dummy, args = self.validate_argument_spec(argument_spec=dict(
            results=dict(type="path", required=True),
            pushgateway_url=dict(type="str"),
            pushgateway_job=dict(type="str", default="zhisuan"),
            webhook_url=dict(type="str"),
            webhook_statuses=dict(type="list", elements="str", default=list(_alertmanager.FINDING_STATUSES),
                                  choices=["pass", "warn", "fail", "error", "skip"]),
            max_findings=dict(type="int", default=MAX_FINDINGS),
            timeout=dict(type="int", default=_http.DEFAULT_TIMEOUT),
            validate_certs=dict(type="bool", default=True),
            ca_path=dict(type="path"),
        ))
        try:
            with open(args["results"], encoding="utf-8") as handle:
                doc = json.load(handle)
        except (IOError, OSError, ValueError) as exc:
            raise AnsibleActionFail("zhisuan.ops.publish: cannot read the results %s: %s" % (args["results"], exc))
        try:
            textfiles = dict((node, _metrics.render(doc, nodes=[node], cluster=False)) for node in doc["hosts"])
            name = _metrics.textfile_name(doc)
            everything = _metrics.render(doc)
        except _metrics.MetricsError as exc:
            raise AnsibleActionFail("zhisuan.ops.publish: %s: %s" % (args["results"], exc))
        http = dict(timeout=args["timeout"], validate_certs=args["validate_certs"], ca_path=args["ca_path"])
        warnings = []
        pushed = None
        if args["pushgateway_url"] and not self._task.check_mode:
            try:
                url = _http.join(args["pushgateway_url"], _metrics.pushgateway_path(doc, args["pushgateway_job"]))
                _http.request("zhisuan.ops pushgateway", "PUT", url, body=everything,
                              content_type="text/plain; version=0.0.4", **http)
                pushed = _http.shown(url)
            except (_http.HTTPError, _metrics.MetricsError) as exc:
                warnings.append("the run's metrics were not pushed: %s" % exc)
        sent, failed = 0, 0
        events = _alertmanager.findings(doc, statuses=tuple(args["webhook_statuses"])) if args["webhook_url"] else []
        if len(events) > args["max_findings"]:
            warnings.append("%d findings, only the first %d are sent to the webhook" % (len(events), args["max_findings"]))
            events = events[:args["max_findings"]]
        first_error = None
        for event in events if not self._task.check_mode else []:
            try:
                _http.request("zhisuan.ops findings webhook", "POST", args["webhook_url"], body=json.dumps(event),
                              content_type=_alertmanager.CLOUDEVENTS_CONTENT_TYPE, **http)
                sent += 1
            except _http.HTTPError as exc:
                failed += 1
                first_error = first_error or str(exc)
                if exc.status is None:  # no answer: the next post would wait as long for nothing
                    failed += len(events) - sent - failed
                    break
        if failed:
            warnings.append("%d of %d findings were not posted to the webhook: %s" % (failed, len(events), first_error))
        for text in warnings:
            self._display.warning("zhisuan.ops.publish: " + text)
        result.update(changed=bool(pushed or sent), textfile_name=name, textfiles=textfiles, pushed=pushed,
                      findings_sent=sent, findings_failed=failed, publish_warnings=warnings)
        return result
