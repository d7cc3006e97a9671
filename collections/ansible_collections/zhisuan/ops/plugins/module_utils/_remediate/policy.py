# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""The site's remediation policy (pure): which remedy runs by itself, which waits for approval, which only opens a
ticket; per-cause overrides by check id pattern; the blast-radius limits and the circuit breaker.

A policy is a mapping (the YAML of ``data/remediation/policy.yml`` or a site file of the same shape)::

    remedies: {reset_gpu: automatic, reboot: approval, power_cycle: automatic, rma: ticket, ...}
    causes:                         # first match wins; fnmatch patterns on the root cause's check id
      - {match: "xid.119.*", remedy: reboot, mode: approval}
    limits: {max_nodes: 2, max_percent: 10, breaker_failures: 3, breaker_percent: 20}
    act_on: [fail, error]           # diagnosis statuses that get a plan entry
    drain_on_ticket: true           # a ticket-only node is drained until someone fixes it
    escalation: {repeats: 3, window_days: 30, ladder: [reset_gpu, power_cycle, rma]}

``normalize(doc)`` checks it and fills in defaults; every mistake raises ``PolicyError`` naming the key.
"""

from __future__ import annotations

import fnmatch

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import REMEDIES

MODES = ("automatic", "approval", "ticket")
# Remedies the remediate_node role carries out on the machine; every other remedy is a ticket (evidence + record).
MACHINE_ACTIONS = ("reset_gpu", "reboot", "power_cycle")
# Remedies that are no node fault: no plan entry, whatever the policy says.
NO_ACTION = ("none", "monitor", "restart_app")

DEFAULTS = {
    "remedies": {
        "reset_gpu": "automatic",
        "power_cycle": "automatic",
        "reboot": "approval",
        "drain": "ticket",
        "reseat": "ticket",
        "replace_part": "ticket",
        "rma": "ticket",
        "check_cable": "ticket",
        "clean_optic": "ticket",
        "update_firmware": "ticket",
        "tune": "ticket",
        "investigate": "ticket",
    },
    "causes": [],
    "limits": {"max_nodes": 2, "max_percent": 10, "breaker_failures": 3, "breaker_percent": 20},
    "act_on": ["fail", "error"],
    "drain_on_ticket": True,
    # a node repaired `repeats` times for one cause within `window_days` gets the next remedy up the ladder
    "escalation": {"repeats": 3, "window_days": 30, "ladder": ["reset_gpu", "power_cycle", "rma"]},
}
_KEYS = frozenset(DEFAULTS) | frozenset(("schema", "description"))
_CAUSE_KEYS = frozenset(("match", "remedy", "mode", "why"))


class PolicyError(ValueError):
    """A policy file that cannot be used; the message names the key."""


def _number(value, where, minimum=0, maximum=None, integer=True):
    kinds = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds):
        raise PolicyError("%s must be %s, got %r" % (where, "an integer" if integer else "a number", value))
    if value < minimum or (maximum is not None and value > maximum):
        span = ">= %s" % minimum if maximum is None else "%s..%s" % (minimum, maximum)
        raise PolicyError("%s must be %s, got %r" % (where, span, value))
    return value


def _mode(value, where):
    if value not in MODES:
        raise PolicyError("%s must be one of %s, got %r" % (where, ", ".join(MODES), value))
    return value


def _remedy(value, where):
    if value not in REMEDIES:
        raise PolicyError("%s: unknown remedy %r (known: %s)" % (where, value, ", ".join(REMEDIES)))
    return value


def normalize(doc, overrides=None):
    """The policy ``doc`` (a mapping) with defaults filled in and ``overrides`` (a mapping of the same shape, e.g.
    from inventory) merged over it key by key; raises PolicyError."""
    out = {"remedies": dict(DEFAULTS["remedies"]), "causes": [], "limits": dict(DEFAULTS["limits"]),
           "act_on": list(DEFAULTS["act_on"]), "drain_on_ticket": DEFAULTS["drain_on_ticket"],
           "escalation": dict(DEFAULTS["escalation"], ladder=list(DEFAULTS["escalation"]["ladder"]))}
    for source_name, source in (("policy", doc), ("policy overrides", overrides)):
        if source is None:
            continue
        if not isinstance(source, dict):
            raise PolicyError("%s must be a mapping, got %s" % (source_name, type(source).__name__))
        unknown = sorted(set(source) - _KEYS)
        if unknown:
            raise PolicyError("%s: unknown key(s) %s; known: %s" % (source_name, ", ".join(unknown), ", ".join(sorted(_KEYS))))
        _merge(out, source, source_name)
    return out


def _merge(out, source, name):
    remedies = source.get("remedies") or {}
    if not isinstance(remedies, dict):
        raise PolicyError("%s: remedies must be a mapping of remedy -> mode" % name)
    for remedy, mode in remedies.items():
        _remedy(remedy, "%s: remedies" % name)
        out["remedies"][remedy] = _mode(mode, "%s: remedies.%s" % (name, remedy))
    if "causes" in source:
        causes = source["causes"] or []
        if not isinstance(causes, list):
            raise PolicyError("%s: causes must be a list" % name)
        out["causes"] = [_cause(cause, "%s: causes[%d]" % (name, i)) for i, cause in enumerate(causes)]
    limits = source.get("limits") or {}
    if not isinstance(limits, dict):
        raise PolicyError("%s: limits must be a mapping" % name)
    for key, value in limits.items():
        where = "%s: limits.%s" % (name, key)
        if key in ("max_nodes", "breaker_failures"):
            out["limits"][key] = _number(value, where)
        elif key in ("max_percent", "breaker_percent"):
            out["limits"][key] = _number(value, where, 0, 100, integer=False)
        else:
            raise PolicyError("%s: unknown limit %r; known: breaker_failures, breaker_percent, max_nodes, max_percent"
                              % (name, key))
    if "act_on" in source:
        act_on = source["act_on"]
        if not isinstance(act_on, list) or not act_on or any(s not in ("fail", "error", "warn") for s in act_on):
            raise PolicyError("%s: act_on must be a non-empty list of fail, error, warn, got %r" % (name, act_on))
        out["act_on"] = list(act_on)
    if "drain_on_ticket" in source:
        if not isinstance(source["drain_on_ticket"], bool):
            raise PolicyError("%s: drain_on_ticket must be true or false" % name)
        out["drain_on_ticket"] = source["drain_on_ticket"]
    if "escalation" in source:
        _escalation(out["escalation"], source["escalation"], name)


def _escalation(out, escalation, name):
    if not isinstance(escalation, dict):
        raise PolicyError("%s: escalation must be a mapping of repeats, window_days, ladder" % name)
    unknown = sorted(set(escalation) - set(("repeats", "window_days", "ladder")))
    if unknown:
        raise PolicyError("%s: escalation: unknown key(s) %s; known: ladder, repeats, window_days" % (name, ", ".join(unknown)))
    if "repeats" in escalation:
        out["repeats"] = _number(escalation["repeats"], "%s: escalation.repeats" % name, minimum=1)
    if "window_days" in escalation:
        out["window_days"] = _number(escalation["window_days"], "%s: escalation.window_days" % name, 0, 3650, integer=False)
    if "ladder" in escalation:
        ladder = escalation["ladder"]
        if not isinstance(ladder, list) or len(ladder) < 2 or len(set(ladder)) != len(ladder):
            raise PolicyError("%s: escalation.ladder must list two or more distinct remedies, got %r" % (name, ladder))
        out["ladder"] = [_remedy(remedy, "%s: escalation.ladder" % name) for remedy in ladder]


def _cause(cause, where):
    if not isinstance(cause, dict) or not isinstance(cause.get("match"), str) or not cause["match"]:
        raise PolicyError("%s: a cause is a mapping with a check id pattern in 'match'" % where)
    unknown = sorted(set(cause) - _CAUSE_KEYS)
    if unknown:
        raise PolicyError("%s: unknown key(s) %s; known: match, mode, remedy, why" % (where, ", ".join(unknown)))
    if "remedy" not in cause and "mode" not in cause:
        raise PolicyError("%s: give 'remedy', 'mode' or both" % where)
    out = {"match": cause["match"]}
    if "remedy" in cause:
        out["remedy"] = _remedy(cause["remedy"], where)
    if "mode" in cause:
        out["mode"] = _mode(cause["mode"], where + ".mode")
    if "why" in cause:
        out["why"] = str(cause["why"])
    return out


def decide(policy, check_id, remedy):
    """``(remedy, mode, rule)`` for a root cause: the first cause rule whose pattern matches ``check_id`` may change
    the remedy and the mode; otherwise the remedy's mode. ``rule`` is the matching pattern or None. Remedies the
    role cannot carry out on the machine are always ``ticket``."""
    rule = None
    for cause in policy["causes"]:
        if fnmatch.fnmatchcase(check_id, cause["match"]):
            rule = cause
            break
    if rule is not None and "remedy" in rule:
        remedy = rule["remedy"]
    if rule is not None and "mode" in rule:
        mode = rule["mode"]
    else:
        mode = policy["remedies"].get(remedy, "ticket")
    if remedy not in MACHINE_ACTIONS:
        mode = "ticket"
    return remedy, mode, (rule or {}).get("match")


def allowed_in_remediation(policy, fleet):
    """How many nodes may be in remediation at once: min(K, P % of the fleet), and at least 1 while K > 0 and
    P > 0 (otherwise a small cluster never heals). Returns ``(allowed, explanation)``."""
    limits = policy["limits"]
    by_percent = int(fleet * limits["max_percent"] // 100)
    if limits["max_nodes"] > 0 and limits["max_percent"] > 0:
        by_percent = max(by_percent, 1)
    allowed = min(limits["max_nodes"], by_percent)
    text = "at most %d node(s) in remediation at once (max_nodes %d, max_percent %s %% of %d nodes)" % (
        allowed, limits["max_nodes"], _fmt(limits["max_percent"]), fleet)
    return allowed, text


def breaker_threshold(policy, fleet):
    """The most nodes one failing check may hit before the breaker trips: the larger of breaker_failures and
    breaker_percent % of the fleet, at least 1 (the breaker trips beyond both: two nodes of a six-node lab are not
    a fleet-wide cause, nor are three ECC failures in 4,096 nodes)."""
    limits = policy["limits"]
    by_percent = int(fleet * limits["breaker_percent"] // 100)
    return max(limits["breaker_failures"], by_percent, 1)


def _fmt(number):
    return ("%d" % number) if float(number).is_integer() else ("%s" % number)
