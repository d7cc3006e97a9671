# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Waiting for long Redfish operations: an action answered ``202 Accepted`` with a ``Location`` (a task monitor
per DSP0266, or a Task resource as iDRAC gives) is polled until it finishes, fails or runs out of time."""

import time

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import BMCError, BMCHTTPError
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.wire import TOOL

RUNNING = ("New", "Starting", "Running", "Pending", "Stopping", "Suspended", "Service", "Interrupted")
FAILED = ("Exception", "Killed", "Cancelled", "Cancelling")


def task_location(response):
    """The task monitor to poll after ``response``, or None when the operation finished at once."""
    if response.status != 202:
        return None
    return response.header("Location") or ((response.data or {}).get("@odata.id") if isinstance(response.data, dict) else None)


class TaskMonitor(object):
    """Poll ``location`` on ``client`` until the task is done. ``wait()`` returns the last document read (the
    operation's result or the finished Task, None for an empty answer) and raises BMCError when the task failed or
    is still running after ``timeout`` seconds."""

    def __init__(self, client, location, timeout=600, interval=2.0, sleep=time.sleep, clock=time.monotonic):
        self.client = client
        self.location = client.path_of(location)
        self.timeout = timeout
        self.interval = interval
        self._sleep = sleep
        self._clock = clock
        self.polls = 0

    def wait(self):
        deadline = self._clock() + self.timeout
        while True:
            try:
                response = self.client.request("GET", self.location)
            except BMCHTTPError as exc:
                if exc.status in (404, 410) and self.polls:
                    return None  # the service removed the monitor once the task had finished
                raise
            self.polls += 1
            document = response.data if isinstance(response.data, dict) else None
            state = (document or {}).get("TaskState")
            if state in FAILED:
                raise BMCError(TOOL, "task %s ended in state %s: %s" % (self.location, state, _messages(document)),
                               resource=self.location)
            if response.status != 202 and state not in RUNNING:
                return document
            if self._clock() >= deadline:
                raise BMCError(TOOL, "task %s is still running after %s s (state %s%s)"
                               % (self.location, self.timeout, state or "unknown", _percent(document)),
                               resource=self.location)
            self._sleep(_retry_after(response, self.interval))


def _retry_after(response, default):
    value = response.header("Retry-After")
    if value and str(value).strip().isdigit():
        return min(int(str(value).strip()), 60)
    return default


def _percent(document):
    value = (document or {}).get("PercentComplete")
    return ", %s%% done" % value if value is not None else ""


def _messages(document):
    texts = [item.get("Message") for item in (document or {}).get("Messages") or [] if isinstance(item, dict)]
    return "; ".join(text for text in texts if text) or "no message"
