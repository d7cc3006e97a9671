# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Xid judgement rules: ``xid`` facts (xid_info) + the Xid catalog (data/xid_catalog.yml) -> check records.

Pure functions, no I/O, standard library only. Checks, in this order:

``xid.log.readable`` (host)
    pass: the kernel log was read (how many lines, from where, which Xids); warn when lines carried ``NVRM: Xid`` but
    could not be read (a new driver message format); error when there are no Xid facts at all, and when the log read
    is empty or garbage (no line with a kernel log time stamp; journalctl's ``-- No entries --`` is a quiet window).
``xid.facts.readable`` (host)
    error, alone, when the facts have an unexpected type or shape (see ``_check.guarded``).
``xid.<code>.events`` (one per code and GPU, GPUs in bus order, codes ascending)
    the catalog row decides class, severity and remedy; then, keyed on companions and time:

    * application Xids (13, 31, 43, 137) alone are not a node fault: warn + ``restart_app``. They escalate to warn +
      ``investigate`` (``dcgmi diag -r 3``) when a hardware Xid of severity fail hits the same GPU within
      ``companion_window_s``; else NVIDIA's workflows decide from the line's context (``_xid_workflows``): Xid 13
      whose lines name GPC/TPC -> ``investigate`` when a GPC and TPC repeat over ``workflow_repeat_incidents``
      incidents (WORKFLOW_XID_13), the application when they do not; Xid 31 -> ``investigate`` when the MMU faults
      repeat on this GPU alone, the application when other GPUs fault too (WORKFLOW_XID_31); Xid 43 after an
      application Xid of the same GPU -> ``pass`` (the catalog's IGNORE, judged with that Xid). Without such context
      they escalate when the same GPU repeats them in ``repeat_incidents`` incidents or more;
    * a row with ``companions`` (48: 63/64) seen on the same GPU within the window is NVIDIA's DRAIN_AND_RESET;
    * 144-150 need decoding: always warn + ``investigate``, with the decode fields of the line as evidence;
    * 74 on a GPU the catalog's ``nvlink_error_registers`` applies to (Hopper) is decoded by its register bits
      (NVIDIA's WORKFLOW_NVLINK_ERR): each set bit's group gives severity and remedy (``reseat`` for mechanical
      bits, ``reset_gpu`` where the fabric needs a reset, ``investigate`` for ECC/parity seen more than twice on a
      link, ``monitor`` below that, none for bits to ignore), the worst decides; sympathetic bits count only alone;
      bits the table lacks warn + ``investigate``; other GPUs and lines without registers keep the row's verdict;
    * 154 carries its action (``recovery_actions`` of the catalog, keyed on NVML's number) and that action overrides
      the table's remedy for the other checks of the same GPU;
    * a code the catalog lacks: warn + ``investigate``, "not in catalog v<version>".

Thresholds a site may override (``thresholds``), with their defaults (our choices, [U]):

``companion_window_s`` (300) events closer than this are companions (48 with 63/64, app Xid with a hardware Xid).
``incident_gap_s`` (10) lines of one code on one GPU closer than this are one incident (a Xid 13 prints several).
``repeat_incidents`` (3) incidents of a warn-level code on one GPU that escalate it to ``investigate``.
``workflow_repeat_incidents`` (2) incidents that make a "repeat" in NVIDIA's WORKFLOW_XID_13 / _31 [NV].
``evidence_lines`` (3) raw lines quoted in a check's evidence.

Clearing (issue 24 item 8): the catalog's ``clearing`` (per class; a row's ``clears`` wins) says how long a finding
stays: ``sticky`` (hardware: until the log window no longer holds it; a repair is proven by a verify run on the log
since the repair) or seconds of quiet (application: 3600): when the log ran that long past the group's last line (to
the facts' ``log_end``), a ``warn`` that kept its row's remedy becomes a ``pass`` that says it cleared.
"""

from __future__ import annotations

import re

from ansible_collections.zhisuan.ops.plugins.module_utils._gpu.xid import NVLINK_ERROR_CODE, time_key
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import SEVERITY, guarded, make_check
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._gpu_base import gpu_component
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._overrides import overridden
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import _xid_workflows as workflows
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._util import clean_facts, plural
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._xid_log import log_check
from ansible_collections.zhisuan.ops.plugins.module_utils._judge.sxid import _tallies, flood_span, judge_sxid, when

DEFAULT_THRESHOLDS = {
    "companion_window_s": 300,
    "incident_gap_s": 10,
    "repeat_incidents": 3,
    "workflow_repeat_incidents": 2,
    "evidence_lines": 3,
}
CATALOG_URL = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html"
_STATUS_OF = {"fail": "fail", "warn": "warn", "info": "pass"}
_ESCALATE_FROM = ("restart_app", "monitor", "none")


def judge_xid(host, xid_facts, catalog, gpu_facts=None, thresholds=None):
    """Judge one host's ``xid`` facts (see ``_judge_xid``); facts of an unexpected shape give one ``error`` check."""
    return guarded(
        "xid.facts.readable", host, "kernel log", "xid", _judge_xid, host, clean_facts(xid_facts), catalog,
        gpu_facts=clean_facts(gpu_facts), thresholds=thresholds)


def _judge_xid(host, xid_facts, catalog, gpu_facts=None, thresholds=None):
    """Judge one host's ``xid`` facts against the catalog (``plugin_utils._xid_catalog.load_catalog()``).

    ``gpu_facts`` (the ``gpu`` facts of gpu_info) maps a bus id to the GPU's index and uuid for ``component``.
    Returns a list of check records; raises ValueError for a threshold that is not a number.
    """
    limits = overridden(DEFAULT_THRESHOLDS, thresholds)
    version = str(catalog.get("version") or "?")
    if not isinstance(xid_facts, dict) or not isinstance(xid_facts.get("events"), list):
        return [make_check(
            "xid.log.readable", host, "error", component="kernel log", observed=None, expected="xid facts",
            message="No Xid facts were collected for this host, so no Xid check could run", remedy="investigate",
            evidence="xid facts: %r" % (xid_facts,))]
    events = [event for event in xid_facts["events"] if isinstance(event, dict) and isinstance(event.get("code"), int)]
    gpus = _gpu_map(gpu_facts)
    groups = {}
    for event in events:
        groups.setdefault((event.get("pci_bus_id") or "unknown", event["code"]), []).append(event)
    # A flood: the lines the node counted but did not keep (xid_info keeps the first and last 2000) join their group,
    # so 800,000 lines of one Xid are one check that counts them all.
    tallies = _tallies(xid_facts, "xid")
    for key in tallies:
        groups.setdefault(key, [])
    checks = [log_check(host, xid_facts, events, version)]
    by_bus = {}
    for (bus, code) in sorted(groups, key=lambda key: (_gpu_order(gpus, key[0]), key[0], key[1])):
        ctx = _Group(host, bus, code, groups[(bus, code)], gpus, gpu_facts is not None, catalog, limits, version,
                     tally=tallies.get((bus, code)))
        check = ctx.cleared(ctx.judge([event for key, items in groups.items() if key[0] == bus for event in items],
                                      events), xid_facts.get("log_end"))
        checks.append(check)
        by_bus.setdefault(bus, []).append((code, check, ctx))
    for items in by_bus.values():
        _apply_154(items, catalog, version)
    checks.extend(judge_sxid(host, xid_facts, catalog.get("sxid"), events, limits))
    return checks


def summarize_xid(facts, profile=None):
    """What the report shows about a host's kernel log: source, window, lines read and Xid counts per code."""
    facts = facts if isinstance(facts, dict) else {}
    events = [event for event in facts.get("events") or [] if isinstance(event, dict)]
    counts = {}
    for event in events:
        counts[event.get("code")] = counts.get(event.get("code"), 0) + 1
    return {
        "source": facts.get("source"),
        "since": facts.get("since"),
        "lines": facts.get("lines"),
        "events": len(events),
        "codes": ", ".join("%s x%d" % (code, counts[code]) for code in sorted(counts, key=str)) or "none",
        "gpus": len(set(event.get("pci_bus_id") for event in events)),
    }


# ------------------------------------------------------------------------------------------------ helpers

def _near(first, second, window):
    """Within the window; True when either time is unknown or they are not comparable (cannot tell them apart)."""
    if first is None or second is None or first[0] != second[0]:
        return True
    return abs(first[1] - second[1]) <= window


def _gpu_map(gpu_facts):
    out = {}
    if isinstance(gpu_facts, dict):
        for position, gpu in enumerate(gpu_facts.get("gpus") or []):
            if isinstance(gpu, dict) and gpu.get("pci_bus_id"):
                index = gpu.get("index")
                out[str(gpu["pci_bus_id"]).upper()] = (index if index is not None else position, gpu)
    return out


def _gpu_order(gpus, bus):
    found = gpus.get(bus.upper())
    return (0, found[0]) if found else (1, 0)


def _label(gpus, bus, have_facts):
    found = gpus.get(bus.upper())
    if found:
        index, gpu = found
        return "GPU %s" % index, gpu_component("GPU %s" % index, gpu)
    label = "the GPU at %s" % bus
    if have_facts:
        return label, "GPU at %s (not listed by nvidia-smi)" % bus
    return label, "GPU at %s" % bus


def _incidents(events, gap):
    count, last = 0, None
    for event in events:
        when = time_key(event)
        if last is None or when is None or when[0] != last[0] or when[1] - last[1] > gap:
            count += 1
        last = when
    return count


class _Group(object):
    """The events of one code on one GPU and the check they make."""

    def __init__(self, host, bus, code, events, gpus, have_facts, catalog, limits, version, tally=None):
        self.count, self.first, self.last = flood_span(events, tally)
        self.kept = len(events)
        if not events:  # every line of the group was counted, none kept: its first and last time stand for them
            events = [dict(item, code=code, pci_bus_id=bus) for item in (self.first, self.last)]
        self.host, self.bus, self.code, self.events = host, bus, code, events
        self.label, self.component = _label(gpus, bus, have_facts)
        self.listed = bus.upper() in gpus or not have_facts
        self.catalog, self.limits, self.version = catalog, limits, version
        self.row = (catalog.get("codes") or {}).get(code)
        self.gpus_by_bus = gpus
        self.times = [time_key(event) for event in events]

    def evidence(self):
        keep = int(self.limits["evidence_lines"])
        lines = [event.get("line") or event.get("text") for event in self.events[:keep]]
        lines = [line for line in lines if line]
        kept = "" if self.count == self.kept else "; %d not kept by the node, incidents counted in the %d kept" % (
            self.count - self.kept, self.kept)
        lines.append("%s in all (%s%s), first %s, last %s" % (
            plural(self.count, "line"), plural(_incidents(self.events, self.limits["incident_gap_s"]), "incident"),
            kept, when(self.first), when(self.last)))
        return "\n".join(lines)

    def check(self, status, remedy, message, expected):
        return make_check("xid.%d.events" % self.code, self.host, status, component=self.component,
                          observed=self.count, expected=expected, message=message, remedy=remedy,
                          evidence=self.evidence())

    def head(self):
        row = self.row
        name = row.get("mnemonic") or ""
        what = "%s: %s" % (name, row["meaning"]) if name else row["meaning"]
        return "%s of Xid %d (%s) on %s" % (plural(self.count, "line"), self.code, what, self.label)

    def bucket(self):
        action = self.row.get("nvidia_action") or "none"
        meaning = ((self.catalog.get("buckets") or {}).get(action) or {}).get("meaning")
        return "catalog v%s bucket %s%s" % (self.version, action, " (%s)" % meaning if meaning else "")

    def companions_near(self, all_events, predicate):
        found = []
        for event in all_events:
            if event.get("code") == self.code or not predicate(event.get("code")):
                continue
            when = time_key(event)
            if any(_near(mine, when, self.limits["companion_window_s"]) for mine in self.times):
                found.append(event)
        return found

    def cleared(self, check, end):
        """``check``, or a ``pass`` when the code's clearing rule (the catalog's ``clearing`` by class, a row's
        ``clears``) says the finding has cleared: the log ran on ``N`` quiet seconds after the group's last line
        (measured to ``end``, the facts' ``log_end``). Only a ``warn`` that kept the row's remedy clears."""
        if self.row is None or check["status"] != "warn" or check["remedy"] != self.row.get("remedy"):
            return check
        rule = self.row.get("clears")
        if rule is None:
            rule = (self.catalog.get("clearing") or {}).get(self.row.get("class"), "sticky")
        last, stop = time_key(self.last or {}), time_key(end) if isinstance(end, dict) else None
        if rule == "sticky" or last is None or stop is None or last[0] != stop[0] or stop[1] - last[1] < rule:
            return check
        quiet = stop[1] - last[1]
        rule_text = "the row's" if self.row.get("clears") is not None else "the %s class's" % self.row.get("class")
        return make_check(
            check["id"], self.host, "pass", component=self.component, observed=self.count,
            expected=check["expected"], remedy="none",
            message=_sentence([self.head(), "last seen %s, then %s of quiet to the log's end (%s): cleared by %s "
                                            "clearing rule (%s of quiet, catalog v%s); no action" % (
                                                when(self.last), _duration(quiet), when(end), rule_text,
                                                _duration(rule), self.version)]),
            evidence=check["evidence"] + "\nquiet %s (clears after %s)" % (_duration(quiet), _duration(rule)))

    def _workflow(self, all_events, node_events):
        """``(verdict, words)`` of NVIDIA's workflow for this application Xid (``_xid_workflows``): ``hardware``,
        ``application``, ``sympathetic`` (Xid 43 after an application Xid of the same GPU), or None (no workflow, or
        the lines give no context for it)."""
        gap, repeat = self.limits["incident_gap_s"], int(self.limits["workflow_repeat_incidents"])
        if self.code == 13:
            return workflows.workflow_13(self.events, gap, repeat, time_key)
        if self.code == 31:
            others = set(event.get("pci_bus_id") for event in node_events
                         if event.get("code") == 31 and (event.get("pci_bus_id") or "unknown") != self.bus)
            return workflows.workflow_31(self.events, others, gap, repeat, time_key)
        if self.code == 43:
            codes = self.catalog.get("codes") or {}
            before = self.companions_near(all_events, lambda code: code != 43 and (codes.get(code) or {}).get(
                "class") == "application")
            if before:
                return "sympathetic", (
                    "the driver stopped the channel of the process that raised %s on this GPU within %s s: the "
                    "catalog's IGNORE, judged with that Xid's check, no action by itself" % (
                        ", ".join(sorted(set("Xid %d" % event["code"] for event in before))),
                        _num(self.limits["companion_window_s"])))
        return None, ""

    def judge(self, all_events, node_events=None):
        if self.row is None:
            return self.check(
                "warn", "investigate",
                "%s of Xid %d on %s: Xid %d is not in catalog v%s; look it up in NVIDIA's Xid catalog (%s) and add it "
                "to the site override file" % (plural(self.count, "line"), self.code, self.label, self.code,
                                               self.version, CATALOG_URL),
                "a code the catalog knows")
        if self.code == 154:
            return self._recovery()
        if self.code == NVLINK_ERROR_CODE:
            decoded = self._nvlink_error(all_events)
            if decoded is not None:
                return decoded
        kind = self.row["class"]
        if kind == "decode_required":
            return self._decode()
        status = _STATUS_OF[self.row["severity"]]
        remedy = self.row["remedy"] if status != "pass" else "none"
        notes = self.row.get("notes") or ""
        window = self.limits["companion_window_s"]
        if status == "pass":
            return self.check("pass", "none", _sentence(["%s: %s" % (self.head(), self.bucket()),
                                                         "informational, no action by itself"], notes), None)
        expected = "no Xid %d" % self.code
        parts = [self.head()]
        if kind == "application":
            parts.append("an application fault (%s): not a node fault by itself" % self.bucket())
            expected = "< %d incidents of an application Xid on one GPU" % self.limits["repeat_incidents"]
        else:
            parts.append(self.bucket())
        companions = self.companions_near(all_events, lambda code: code in (self.row.get("companions") or ()))
        if companions:
            codes = ", ".join(sorted(set("Xid %d" % event["code"] for event in companions)))
            parts.append("with %s on the same GPU within %s s: DRAIN_AND_RESET per the catalog: drain the node, reset "
                         "the GPU, then read its SRAM threshold and row-remap state (gpu.remap.*); RMA if the threshold "
                         "is set or it recurs" % (codes, _num(window)))
        elif self.row.get("companions"):
            parts.append("alone (no Xid %s within %s s): RESET_GPU" % (
                "/".join(map(str, self.row["companions"])), _num(window)))
        qualifiers = self.companions_near(all_events, lambda code: code in (171, 172) and self.code == 48)
        if qualifiers:
            parts.append("the driver qualifies it as %s" % " and ".join(sorted(set(
                "DRAM (Xid 171)" if event["code"] == 171 else "SRAM (Xid 172)" for event in qualifiers))))
        if self.code == 79 and not self.listed:
            parts.append("nvidia-smi no longer lists this GPU")
        incidents = _incidents(self.events, self.limits["incident_gap_s"])
        if status == "warn" and remedy in _ESCALATE_FROM:
            hardware = self.companions_near(all_events, self._is_hard_fault)
            verdict, words = (None, "") if hardware else self._workflow(all_events, node_events or all_events)
            if hardware:
                remedy = "investigate"
                parts.append("but hardware %s hit the same GPU within %s s: follow that check, then run dcgmi diag -r 3 "
                             "on this GPU" % (", ".join(sorted(set("Xid %d" % e["code"] for e in hardware))), _num(window)))
            elif verdict == "sympathetic":
                return self.check("pass", "none", _sentence([self.head(), words]), expected)
            elif verdict is not None:
                remedy = "investigate" if verdict == "hardware" else remedy
                parts.append(words)
            elif incidents >= self.limits["repeat_incidents"]:
                remedy = "investigate"
                parts.append("repeated in %s on this GPU (threshold %s): the GPU may be at fault; drain it and run "
                             "dcgmi diag -r 3" % (plural(incidents, "incident"), _num(self.limits["repeat_incidents"])))
        elif incidents > 1 and status == "fail":
            parts.append("seen in %s in this window" % plural(incidents, "incident"))
        if remedy == "restart_app":
            parts.append("restart the job")
        # The catalog's notes are whole sentences of their own (capitalised): they follow the finding, not a "; ".
        extra = notes if notes and not companions and kind != "application" else ""
        return self.check(status, remedy, _sentence(parts, extra), expected)

    def _nvlink_error(self, all_events):
        """Xid 74 decoded by its register bits (the catalog's ``nvlink_error_registers``, NVIDIA's WORKFLOW_NVLINK_ERR)
        on a GPU the table applies to; ``None`` (the row decides) for another GPU or lines without registers."""
        table = self.catalog.get("nvlink_error_registers") or {}
        found = self.gpus_by_bus.get(self.bus.upper())
        product = str((found[1] if found else {}).get("name") or "")
        if not table.get("groups") or not any(re.search(pattern, product, re.IGNORECASE)
                                              for pattern in table.get("applies_to") or ()):
            return None
        decoded = [event["nvlink_error"] for event in self.events if isinstance(event.get("nvlink_error"), dict)]
        lines = [(item["link"], item["registers"]) for item in decoded if isinstance(item.get("registers"), list)]
        if not lines:
            return None
        hits, unknown = decode_nvlink_error(lines, table)
        others = self.companions_near(all_events, lambda code: code != self.code)
        counted = []
        for group, link, times, bits in hits:
            severity = group["severity"]
            if group.get("repeat_over") is not None and times <= group["repeat_over"] and severity != "info":
                severity, remedy = "warn", "monitor"
                note = "%s on link %d (%s): %s; seen %s, not more than %d: watch the link" % (
                    _bits_text(group["register"], bits), link, plural(times, "line"), group["meaning"],
                    plural(times, "time"), group["repeat_over"])
            else:
                remedy = group["remedy"]
                note = "%s on link %d (%s): %s" % (_bits_text(group["register"], bits), link, plural(times, "line"),
                                                   group["meaning"])
            counted.append((severity, remedy, note, group.get("secondary")))
        primary = [item for item in counted if not item[3] and item[0] != "info"]
        judged = []
        for severity, remedy, note, secondary in counted:
            if secondary and (primary or others or unknown):
                severity, remedy = "info", "none"
                note += " (secondary here: the other bits or events carry the verdict)"
            judged.append((severity, remedy, note))
        for register, link, bits in unknown:
            judged.append(("warn", "investigate", "%s on link %d: not in NVIDIA's table for this GPU: report it to "
                                                  "NVIDIA" % (_bits_text(register, bits), link)))
        order = {"fail": 0, "warn": 1, "info": 2}
        worst = sorted(judged, key=lambda item: order[item[0]])[0] if judged else ("info", "none", "no bit set")
        status = _STATUS_OF[worst[0]]
        parts = [self.head(), "%s, registers decoded for %s" % (self.bucket(), product)]
        parts.extend(item[2] for item in sorted(judged, key=lambda item: order[item[0]]))
        if status == "pass":
            parts.append("no bit that asks for action: no action by itself")
        return self.check(status, worst[1] if status != "pass" else "none", _sentence(parts),
                          "no register bit that asks for action")

    def _is_hard_fault(self, code):
        row = (self.catalog.get("codes") or {}).get(code)
        return bool(row) and row["class"] == "hardware" and row["severity"] == "fail"

    def _decode(self):
        fields = [event.get("nvlink5") for event in self.events if isinstance(event.get("nvlink5"), dict)]
        if fields:
            decoded = sorted(set("%s %s link %s intrInfo %s errorStatus %s" % (
                item["unit"], item["severity"], item["link"], item["intr_info"], item["error_status"]) for item in fields))
            detail = "decode fields: %s" % "; ".join(decoded[:5])
            fatal = any(item["severity"] == "Fatal" for item in fields)
        else:
            detail, fatal = "the line carries no intrInfo/errorStatus to decode", False
        message = ("%s: %s; the resolution depends on intrInfo/errorStatus decoded against NVIDIA's 'Xid 144-150 Decode' "
                   "sheet, so no blanket verdict: decode them (%s)%s, then act on the decoded bucket" % (
                       self.head(), self.bucket(), detail, "; the driver marked it Fatal" if fatal else ""))
        return self.check("warn", "investigate", message, "decoded against the catalog's 144-150 sheet")

    def _recovery(self):
        latest = None
        for event in self.events:
            if isinstance(event.get("recovery_action"), dict):
                latest = event["recovery_action"]
        self.action = latest
        if latest is None:
            return self.check("warn", "investigate", "%s: %s, but the line does not name the recovery action; read it "
                              "with nvidia-smi -q (GPU Recovery Action)" % (self.head(), self.bucket()), "a named action")
        known = (self.catalog.get("recovery_actions") or {}).get(latest["to_code"])
        said = "0x%x (%s)" % (latest["to_code"], latest["to"])
        if known is None:
            return self.check("warn", "investigate", "%s: the driver set the recovery action to %s, which catalog v%s "
                              "does not know; read nvidia-smi -q and NVIDIA's Xid 154 notes" % (self.head(), said, self.version),
                              "a known recovery action")
        status = _STATUS_OF[known["severity"]]
        remedy = known["remedy"] if status != "pass" else "none"
        return self.check(status, remedy, "%s: the driver set the GPU's recovery action to %s: %s; this overrides the "
                          "catalog table for the GPU (catalog v%s, recovery action %d)" % (
                              self.head(), said, known["meaning"], self.version, latest["to_code"]),
                          "recovery action 0x0 (None)")


def _bits_text(register, bits):
    return "register %d bit%s %s" % (register, "" if len(bits) == 1 else "s", ", ".join(str(bit) for bit in bits))


def decode_nvlink_error(lines, table):
    """Xid 74 lines ``[(link, registers)]`` against the register table -> ``(hits, unknown)``: ``hits`` is
    ``[(group, link, lines on that link with the group's bits, bits seen)]`` in table order, ``unknown``
    ``[(register, link, bits)]`` of set bits that no group lists, on the registers the table reads."""
    seen = {}
    unknown = {}
    for link, registers in lines:
        for place in table.get("registers") or ():
            value = registers[place - 1] if len(registers) >= place else 0
            if not isinstance(value, int) or value <= 0:
                continue
            set_bits = [bit for bit in range(64) if value >> bit & 1]
            listed = set()
            for number, group in enumerate(table["groups"]):
                if group["register"] != place:
                    continue
                mine = [bit for bit in set_bits if bit in group["bits"]]
                listed.update(group["bits"])
                if mine:
                    entry = seen.setdefault((number, link), [0, set()])
                    entry[0] += 1
                    entry[1].update(mine)
            stray = [bit for bit in set_bits if bit not in listed]
            if stray:
                unknown.setdefault((place, link), set()).update(stray)
    hits = [(table["groups"][number], link, count, sorted(bits))
            for (number, link), (count, bits) in sorted(seen.items())]
    return hits, [(place, link, sorted(bits)) for (place, link), bits in sorted(unknown.items())]


def _apply_154(items, catalog, version):
    """The latest Xid 154 of a GPU that names an action overrides the remedy of the GPU's other non-pass checks."""
    recovery = [(check, ctx) for code, check, ctx in items if code == 154 and getattr(ctx, "action", None)]
    if not recovery:
        return
    check154, ctx154 = recovery[0]
    action = ctx154.action
    known = (catalog.get("recovery_actions") or {}).get(action["to_code"])
    if known is None or known["severity"] == "info":
        return
    for code, check, ctx in items:
        if code == 154 or check["status"] == "pass":
            continue
        if SEVERITY[_STATUS_OF[known["severity"]]] > SEVERITY[check["status"]]:
            check["status"] = _STATUS_OF[known["severity"]]
        if check["remedy"] != known["remedy"]:
            check["message"] += (" Overridden by Xid 154 on the same GPU: the driver set the recovery action to 0x%x "
                                 "(%s), so the remedy is %s, not %s (catalog v%s)." % (
                                     action["to_code"], action["to"], known["remedy"], check["remedy"], version))
            check["remedy"] = known["remedy"]


def _num(value):
    return "%g" % value


def _duration(seconds):
    if seconds >= 3600:
        return "%.1f h" % (seconds / 3600.0)
    if seconds >= 60:
        return "%d min" % (seconds // 60)
    return "%d s" % seconds


def _sentence(parts, notes=""):
    """The finding's parts joined by "; " into one sentence, then the catalog's notes as sentences of their own."""
    text = "; ".join(part.strip().rstrip(".") for part in parts if part and part.strip()) + "."
    notes = (notes or "").strip()
    if notes:
        text += " " + (notes if notes.endswith(".") else notes + ".")
    return text
