# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Drain and resume a node in its scheduler, the same way for every scheduler (the contract of scheduler_node).

A backend (``slurm.Slurm``, ``k8s.Kubernetes``) reads a node into a plain dict and carries out one change; the
guards live here, once:

* a drain carries our tag (``<tag>: <reason>``); a node someone else drained keeps its reason and is reported
  ``drained_by_other`` (action ``refused``);
* a resume happens only when the current drain reason is ours; otherwise ``refused``;
* the node is read first: a drain of a node we drained, or a resume of a node that is not drained, is a no-op;
* check mode reads and decides, and changes nothing; its diff shows the state the change would leave
  (``predict``);
* a failure is a typed error (``Refused`` under ``strict``, ``ToolTimeout`` for a drain that did not finish) that
  carries what was read and done in ``result``; a warning goes to the ``warn`` callback (``module.warn``).
"""

import re
import time

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import Refused, ToolTimeout

DEFAULT_TAG = "zhisuan"
DEFAULT_REASON = "remediation by zhisuan.ops"
POLL_INTERVAL = 0.5
# remediation's drain reason after the tag: "<check id> run <run id>"
_MARK = re.compile(r"^(?P<cause>[A-Za-z0-9_][A-Za-z0-9_.:-]*) run (?P<run>\S+)$")


def tagged_reason(tag, reason):
    """The reason we set: ``<tag>: <reason>`` (kept as it is when it already starts with the tag)."""
    reason = (reason or DEFAULT_REASON).strip()
    prefix = tag + ":"
    if reason.startswith(prefix):
        return reason
    return "%s %s" % (prefix, reason)


def is_ours(reason, tag):
    return bool(reason) and reason.startswith(tag + ":")


def our_mark(reason, tag=DEFAULT_TAG):
    """What our drain reason says, or None when it is not ours: ``{cause, run_id, text}`` of remediation's
    ``<tag>:<check id> run <run id>`` (cause and run id None for another reason of ours, ``<tag>: <text>``). Pure."""
    if not is_ours(reason, tag):
        return None
    text = reason[len(tag) + 1:].strip()
    match = _MARK.match(text)
    if match is None:
        return {"cause": None, "run_id": None, "text": text}
    return {"cause": match.group("cause"), "run_id": match.group("run"), "text": text}


def held_text(name, tag, reason):
    """What a node drained with our mark waits for, in words (the platform checks say it): the remediation that
    drained it resumes it only when it verifies; a run cut off before that leaves it to the next one."""
    mark = our_mark(reason, tag) or {}
    by = "remediation run %s" % mark["run_id"] if mark.get("run_id") else "a remediation of %s" % tag
    cause = (" for %s" % mark["cause"]) if mark.get("cause") else ""
    return ("held by %s%s: it stays out of service until a remediate run verifies and resumes it; a run cut off "
            "before its resume leaves it drained, and the next remediate or inspect run reports it as "
            "remediate.stranded.%s" % (by, cause, name))


def annotate(node, tag):
    """Add ``drained_by_us``/``drained_by_other`` to a node dict read by a backend (a copy)."""
    node = dict(node)
    ours = is_ours(node.get("reason"), tag)
    node["drained_by_us"] = bool(node["drain"] and ours)
    node["drained_by_other"] = bool(node["drain"] and not ours)
    return node


def _who(node):
    reason = node.get("reason") or "none"
    text = "reason '%s'" % reason
    if node.get("reason_user"):
        text += " set by %s" % node["reason_user"]
    if node.get("reason_time"):
        text += " at %s" % node["reason_time"]
    return text


def plan(node, state, tag):
    """Decide what to do: ``(action, message)`` with action ``drain``, ``resume``, ``none`` or ``refused``. Pure."""
    name = node["name"]
    if state == "info":
        return "none", "%s is %s" % (name, node["state"])
    if state == "drained":
        if node["drained_by_us"]:
            return "none", "%s is already drained by %s (%s)" % (name, tag, _who(node))
        if node["drained_by_other"]:
            return "refused", ("%s is already drained by someone else (%s); left as it is, the reason is kept"
                               % (name, _who(node)))
        return "drain", "drain %s" % name
    # resumed
    if node["drained_by_us"]:
        return "resume", "resume %s" % name
    if node["drained_by_other"]:
        return "refused", ("refused to resume %s: it was drained by someone else (%s), not by %s; resume it by hand once "
                           "that work is done" % (name, _who(node), tag))
    if node.get("down"):
        return "refused", ("refused to resume %s: it is %s (%s), not drained by %s; find out why before resuming it"
                           % (name, node["state"], _who(node), tag))
    return "none", "%s is not drained (%s); nothing to resume" % (name, node["state"])


def predict(node, action, reason=None, wait=False, undrained_state=None):
    """The node as ``action`` (``drain``/``resume``/``none``) would leave it (a copy), for a check-mode diff. Pure.

    A drain sets our tagged ``reason``; the node is ``draining`` while jobs run (``drained`` when ``wait`` waits
    for them). A resume clears the drain and its reason; the state is then ``undrained_state`` (the backend's
    state of the node without the drain), else left as read.
    """
    after = dict(node)
    if action == "drain":
        after.update(drain=True, reason=reason, reason_user=None, reason_time=None, drained_by_us=True,
                     drained_by_other=False)
    elif action == "resume":
        after.update(drain=False, reason=None, reason_user=None, reason_time=None, drained_by_us=False,
                     drained_by_other=False)
        if undrained_state:
            after["state"] = undrained_state
        return after
    if after["drain"]:
        if wait:
            after["jobs_running"] = 0
        after["state"] = "draining" if after.get("jobs_running") else "drained"
    return after


def poll(read, done, timeout, sleep=time.sleep, clock=time.monotonic, interval=POLL_INTERVAL):
    """Call ``read()`` until ``done(node)`` or ``timeout`` seconds pass; return ``(node, done)``."""
    deadline = clock() + timeout
    while True:
        node = read()
        if done(node):
            return node, True
        if clock() >= deadline:
            return node, False
        sleep(min(interval, max(0.0, deadline - clock())))


class Request(object):
    """What the task asks for (the module's parameters that the logic needs)."""

    def __init__(self, name, state, reason=None, tag=DEFAULT_TAG, wait_drained=False, timeout=60, strict=False, check_mode=False):
        self.name = name
        self.state = state
        self.reason = reason
        self.tag = tag
        self.wait_drained = wait_drained
        self.timeout = timeout
        self.strict = strict
        self.check_mode = check_mode


def manage(backend, req, sleep=time.sleep, clock=time.monotonic, warn=None):
    """Read, decide, act (unless check mode), re-read. Returns the module result.

    Raises ``Refused`` for a refusal under ``strict`` and ``ToolTimeout`` for a ``wait_drained`` that ran out of time
    (the node stays drained), each with the result so far in ``result``. The backend's typed errors (ToolFailed,
    ParseError, ...) pass through. ``warn(text)`` gets what the task should know but does not fail it.
    """
    def read():
        return annotate(backend.read(req.name), req.tag)

    before = read()
    action, msg = plan(before, req.state, req.tag)
    if action == "refused":
        result = {"changed": False, "action": "refused", "msg": msg, "node": before}
        if req.strict:
            raise Refused(backend.tool, msg, result=result)
        return result
    wait = req.state == "drained" and req.wait_drained and before["state"] != "drained"
    if action == "none" and not wait:
        return {"changed": False, "action": "none", "msg": msg, "node": before}
    done = {"drain": "drained", "resume": "resumed"}.get(action, "none")
    if req.check_mode:
        if action != "none":
            msg = "check mode: would %s" % msg
        elif wait:
            msg += "; check mode: would wait until no jobs run on it"
        after = predict(before, action, tagged_reason(req.tag, req.reason), wait,
                        _undrained_state(backend, before) if action == "resume" else None)
        return {"changed": action != "none", "action": done, "msg": msg, "node": before,
                "diff": {"before": before, "after": after}}
    changed = action != "none"
    after = before
    if action == "drain":
        reason = tagged_reason(req.tag, req.reason)
        backend.drain(req.name, reason)
        msg = "drained %s (reason '%s')" % (req.name, reason)
        after = read()
    elif action == "resume":
        backend.resume(req.name)
        msg = "resumed %s" % req.name
        after, settled = poll(read, backend.settled, req.timeout, sleep, clock)
        if not settled and warn is not None:
            warn("%s was resumed but still reads %s after %s s" % (req.name, after["state"], req.timeout))
    if req.state == "drained" and req.wait_drained:
        if backend.evict(req.name, req.timeout):
            changed = True
        after, drained = poll(read, lambda node: node["state"] == "drained", req.timeout, sleep, clock)
        if not drained:
            raise ToolTimeout(backend.tool, "%s is still %s after %s s with %s job(s) running; it stays drained (no new work "
                                            "starts on it): wait longer or stop the jobs"
                              % (req.name, after["state"], req.timeout, after["jobs_running"]),
                              result={"changed": changed, "action": done, "node": after,
                                      "diff": {"before": before, "after": after}})
        msg += "; no jobs run on it"
    return {"changed": changed, "action": done, "msg": msg, "node": after, "diff": {"before": before, "after": after}}


def _undrained_state(backend, node):
    """The backend's state of ``node`` once its drain is lifted, when the backend can tell (else None)."""
    undrained = getattr(backend, "undrained_state", None)
    return undrained(node) if undrained is not None else None
