# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Slurm: parsers of ``scontrol -o show node`` and ``sinfo --json``, and the backend that drains and resumes.

A node read by either parser becomes one dict::

    {name, raw_state ("MIXED+DRAIN"), base ("mixed"), flags (["DRAIN"]), state, drain, down, responding,
     reason, reason_user, reason_time, cpus_alloc}

``state`` is the word ``sinfo -o %T`` prints, lower case: ``drained`` (drain flag, no job), ``draining`` (drain
flag, jobs still running: MIXED/ALLOCATED/COMPLETING + DRAIN), else the base state (``idle``, ``mixed``,
``allocated``, ``down``, ...); a trailing ``*`` when slurmctld gets no answer from the node's slurmd
(NOT_RESPONDING; a node reads ``idle*`` for about a second after a resume).
"""

import re
import time

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._runner import run, tool_failed
from ansible_collections.zhisuan.ops.plugins.module_utils._safe_parse import list_of_str, load_json, text_or_none, to_int

_KEY_RE = re.compile(r"(?:^|\s)([A-Za-z][A-Za-z0-9_:]*)=")
# the end of a Reason= value: " [user@2026-11-30T23:00:37]" (greedy text: the last such suffix)
_REASON_RE = re.compile(r"^(?P<text>.*) \[(?P<user>[^\[\]@\s]+)@(?P<time>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\](?P<rest>.*)$")
# sinfo's short and long words (man sinfo, NODE STATE CODES) -> the state word used here
_SINFO_WORDS = {
    "alloc": "allocated", "comp": "completing", "drain": "drained", "drng": "draining", "fail": "fail",
    "failg": "failing", "futr": "future", "inval": "inval", "maint": "maint", "mix": "mixed", "npc": "perfctrs",
    "pow_dn": "powered_down", "pow_up": "powering_up", "resv": "reserved", "unk": "unknown", "plnd": "planned",
    "blocked": "blocked", "boot": "boot", "drained": "drained", "draining": "draining",
}
# suffixes sinfo appends to a state (man sinfo): * not responding, ~ powered off, # powering up, % powering down,
# ! pending power down, $ maintenance, @ reboot pending, ^ reboot issued, - planned
_SUFFIXES = "*~#%!$@^-"
_BUSY = ("ALLOCATED", "MIXED")


def state_of(word):
    """Decode a Slurm state word: scontrol's ``IDLE+DRAIN``/``MIXED+DRAIN``/``IDLE+NOT_RESPONDING``, sinfo's
    ``drained``/``draining``/``drain``/``drng``/``idle*``/``mix``, or the JSON's ``state`` + ``state_flags``
    (as ``IDLE+DRAIN``). Returns ``{raw_state, base, flags, state, drain, down, responding}``.
    """
    raw = (word or "").strip()
    if not raw:
        raise ParseError("slurm", "empty node state")
    parts = raw.split("+")
    base, flags = parts[0], [flag.upper() for flag in parts[1:] if flag]
    if not base.isupper() and not flags:  # a sinfo word
        suffix = ""
        while base and base[-1] in _SUFFIXES:
            suffix, base = base[-1] + suffix, base[:-1]
        low = base.lower()
        word = _SINFO_WORDS.get(low, low)
        if "*" in suffix:
            flags.append("NOT_RESPONDING")
        if word in ("drained", "draining"):
            flags.append("DRAIN")
            base = "MIXED" if word == "draining" else "IDLE"
        else:
            base = word.upper()
    base = base.upper()
    if base in ("DRAIN", "DRAINED", "DRAINING"):  # scontrol of old Slurm versions, sinfo -o %T upper case
        flags.append("DRAIN")
        base = "MIXED" if base == "DRAINING" else "IDLE"
    if not re.match(r"^[A-Z_]+$", base):
        raise ParseError("slurm", "unknown node state %r" % raw)
    drain = "DRAIN" in flags
    busy = base in _BUSY or "COMPLETING" in flags
    if drain:
        state = "draining" if busy else "drained"
    else:
        state = base.lower()
    responding = "NOT_RESPONDING" not in flags
    if not responding:
        state += "*"
    return {"raw_state": raw, "base": base.lower(), "flags": flags, "state": state, "drain": drain,
            "down": base == "DOWN", "responding": responding}


def _fields(text):
    """``Key=value Key=value ...`` where values may hold spaces (OS=Linux 6.1 #1 SMP): split at each ``Key=``."""
    keys = list(_KEY_RE.finditer(text))
    out = {}
    for i, match in enumerate(keys):
        end = keys[i + 1].start() if i + 1 < len(keys) else len(text)
        out[match.group(1)] = text[match.end():end].strip()
    return out


def parse_scontrol_line(line):
    """One line of ``scontrol -o show node``. Reason (which may hold ``=``) is split off before the other fields."""
    head, sep, tail = line.partition(" Reason=")
    fields = _fields(head)
    reason = user = when = None
    if sep:
        match = _REASON_RE.match(tail)
        if match:
            reason, user, when = match.group("text"), match.group("user"), match.group("time")
            fields.update(_fields(match.group("rest")))
        else:
            reason = tail.strip()
    if "NodeName" not in fields or "State" not in fields:
        raise ParseError("scontrol", "no NodeName= or State= in a line of 'scontrol -o show node': %r" % line[:120])
    node = {"name": fields["NodeName"]}
    node.update(state_of(fields["State"]))
    node.update({"reason": reason or None, "reason_user": user, "reason_time": when,
                 "cpus_alloc": _int(fields.get("CPUAlloc"), "CPUAlloc"), "partitions": _list(fields.get("Partitions")),
                 "gres": fields.get("Gres") or None})
    return node


def _int(value, key):
    if value is None or value == "":
        return None
    number = to_int(value)
    if number is None or number < 0:
        raise ParseError("scontrol", "%s=%s is not a number" % (key, value[:40]))
    return number


def _list(value):
    if not value or value == "(null)":
        return []
    return value.split(",")


def parse_scontrol_nodes(text):
    """All nodes of ``scontrol -o show node`` output (one line per node)."""
    nodes = [parse_scontrol_line(line) for line in text.splitlines() if line.strip()]
    if not nodes:
        raise ParseError("scontrol", "no node in the output of 'scontrol -o show node'")
    return nodes


def parse_scontrol_node(text, name):
    """The node ``name`` from ``scontrol -o show node NAME``."""
    for node in parse_scontrol_nodes(text):
        if node["name"] == name:
            return node
    raise ParseError("scontrol", "node %s is not in the output of 'scontrol -o show node %s'" % (name, name))


def _number(value):
    """A JSON number of sinfo/slurmrestd: a plain integer (v0.0.38/39) or ``{"set", "infinite", "number"}``
    (v0.0.40 and later); None when unset, infinite or not a non-negative integer."""
    if isinstance(value, dict):
        if value.get("set") is False or value.get("infinite") is True:
            return None
        value = value.get("number")
    number = to_int(value) if not isinstance(value, str) else None
    return number if number is not None and number >= 0 else None


def _stamp(value):
    """A Unix time as local ISO 8601 (None for 0, unset, or a time no clock can show)."""
    seconds = _number(value)
    if not seconds:
        return None
    try:
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(seconds))
    except (OverflowError, OSError, ValueError):
        return None


def _state_words(state, flags):
    """``state`` is a word (v0.0.38: ``"idle"`` with ``state_flags``) or a list (v0.0.39+: ``["IDLE", "DRAIN"]``)."""
    if isinstance(state, str) and state:
        return [state.upper()] + [flag for flag in list_of_str(flags) if flag]
    words = [word for word in list_of_str(state) if word]
    return words + [flag for flag in list_of_str(flags) if flag] if words else None


def _node_of(name, words, entry_text):
    node = {"name": name}
    try:
        node.update(state_of("+".join(words)))
    except ParseError as exc:
        raise ParseError("sinfo", "node %s: %s" % (name, exc.detail))
    node.update(entry_text)
    return node


def _v38_nodes(doc):
    """Slurm 22.05 (openapi v0.0.38): ``nodes`` is a list of node objects."""
    out = {}
    for entry in doc["nodes"]:
        name = entry.get("name") if isinstance(entry, dict) else None
        words = _state_words(entry.get("state"), entry.get("state_flags")) if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name or not words:
            raise ParseError("sinfo", "a node of 'sinfo --json' has no name or no state: %s" % repr(entry)[:200])
        out[name] = _node_of(name, words, {
            "reason": text_or_none(entry.get("reason")), "reason_user": text_or_none(entry.get("reason_set_by_user")),
            "reason_time": _stamp(entry.get("reason_changed_at")), "cpus_alloc": _number(entry.get("alloc_cpus")),
            "partitions": list_of_str(entry.get("partitions")), "gres": text_or_none(entry.get("gres"))})
    return out


def _v39_nodes(doc):
    """Slurm 23.02 (data_parser v0.0.39) and later: ``sinfo`` is a list of groups, each ``{node: {state: [...]},
    nodes: {nodes: [names]}, reason: {description, time, user}, cpus: {allocated}, partition: {name}, gres: {total}}``
    (``sinfo -N --json``: one group per node and partition). A node in several partitions appears once per
    partition; its partitions are merged. The CPU count is kept only for a group of one node."""
    out = {}
    for entry in doc["sinfo"]:
        if not isinstance(entry, dict):
            raise ParseError("sinfo", "an entry of 'sinfo --json' is not an object: %s" % repr(entry)[:200])
        group = entry.get("nodes") if isinstance(entry.get("nodes"), dict) else {}
        names = [name for name in list_of_str(group.get("nodes")) if name]
        node_state = entry.get("node") if isinstance(entry.get("node"), dict) else {}
        words = _state_words(node_state.get("state"), None)
        if not names or not words:
            raise ParseError("sinfo", "an entry of 'sinfo --json' has no node names or no node state: %s"
                             % repr(entry)[:200])
        reason = entry.get("reason") if isinstance(entry.get("reason"), dict) else {}
        partition = entry.get("partition") if isinstance(entry.get("partition"), dict) else {}
        cpus = entry.get("cpus") if isinstance(entry.get("cpus"), dict) else {}
        gres = entry.get("gres") if isinstance(entry.get("gres"), dict) else {}
        part = text_or_none(partition.get("name"))
        for name in names:
            node = out.get(name)
            if node is None:
                node = out[name] = _node_of(name, words, {
                    "reason": text_or_none(reason.get("description")), "reason_user": text_or_none(reason.get("user")),
                    "reason_time": _stamp(reason.get("time")),
                    "cpus_alloc": _number(cpus.get("allocated")) if len(names) == 1 else None,
                    "partitions": [], "gres": text_or_none(gres.get("total"))})
            if part and part not in node["partitions"]:
                node["partitions"].append(part)
    return out


def parse_sinfo_json(text):
    """``sinfo --json`` -> {node name: node dict}. Reads Slurm 22.05 (openapi v0.0.38: a ``nodes`` list) and Slurm
    23.02+ (data_parser v0.0.39: a ``sinfo`` list of node groups, states as lists)."""
    doc = load_json(text, "sinfo", "'sinfo --json' output is not JSON: %s")
    if isinstance(doc, dict) and isinstance(doc.get("sinfo"), list):
        out = _v39_nodes(doc)
    elif isinstance(doc, dict) and isinstance(doc.get("nodes"), list):
        out = _v38_nodes(doc)
    else:
        raise ParseError("sinfo", "'sinfo --json' output has no 'nodes' list")
    if not out:
        raise ParseError("sinfo", "'sinfo --json' lists no node (read 0 nodes)")
    return out


def count_jobs(text):
    """``squeue -h -o %i`` output: one job id per line."""
    ids = [line.strip() for line in text.splitlines() if line.strip()]
    for job in ids:
        if not re.match(r"^[0-9]+(_[0-9]+|_\[[0-9,-]+\]|\+[0-9]+)?$", job):
            raise ParseError("squeue", "not a job id in 'squeue -h -o %%i' output: %r" % job)
    return len(ids)


class Slurm(object):
    """Drain and resume through scontrol; running jobs from squeue. Every call through _runner.run with a timeout."""

    tool = "scontrol"
    scheduler = "slurm"

    def __init__(self, scontrol="scontrol", squeue="squeue", timeout=60):
        self.scontrol = scontrol
        self.squeue = squeue
        self.timeout = timeout

    def read(self, name):
        res = run([self.scontrol, "-o", "show", "node", name], timeout=self.timeout, tool="scontrol", ok_rcs=(0, 1))
        if res.rc != 0:
            text = (res.stderr + res.stdout).strip()
            raise tool_failed(res, "scontrol", "node %s is not known to slurmctld (%s)" % (name, text) if "not found" in text
                              else None)
        node = parse_scontrol_node(res.stdout, name)
        jobs = run([self.squeue, "-h", "-w", name, "-t", "RUNNING,COMPLETING", "-o", "%i"], timeout=self.timeout, tool="squeue")
        node["jobs_running"] = count_jobs(jobs.stdout)
        node["scheduler"] = self.scheduler
        return node

    def drain(self, name, reason):
        run([self.scontrol, "update", "NodeName=" + name, "State=DRAIN", "Reason=" + reason], timeout=self.timeout, tool="scontrol")

    @staticmethod
    def evict(name, timeout):
        """Slurm evicts nothing: a drained node lets its jobs finish, scheduler_node waits for them. False: no change."""
        return False

    def resume(self, name):
        run([self.scontrol, "update", "NodeName=" + name, "State=RESUME"], timeout=self.timeout, tool="scontrol")

    @staticmethod
    def settled(node):
        """After a resume: slurmd answers again (not ``idle*``) and the drain flag is gone."""
        return node["responding"] and not node["drain"]

    @staticmethod
    def undrained_state(node):
        """The state once resumed (for a check-mode diff): the base state without the DRAIN flag (``idle``, ``mixed``)."""
        return node.get("base")
