# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""CUDA samples' ``bandwidthTest`` output -> ``bandwidth`` facts (the shape ``nvbandwidth.parse`` gives).

The host<->device test most sites still run (tests/fixtures/nvbandwidth/bandwidthTest-*). Its forms::

    [CUDA Bandwidth Test] - Starting...
    Running on...

     Device 0: NVIDIA A100-SXM4-40GB
     Quick Mode                                    (or Range Mode, Shmoo Mode)

     Host to Device Bandwidth, 1 Device(s)
     PINNED Memory Transfers                       (or PAGEABLE)
       Transfer Size (Bytes)	Bandwidth(GB/s)    (older CUDA: MB/s)
       32000000			12.3
    ...
    Result = PASS

and with ``--csv`` (any mode) one line per transfer size::

    bandwidthTest-H2D-Pinned, Bandwidth = 12.4 GB/s, Time = 0.00549 s, Size = 68000000 bytes, NumDevsUsed = 1

``parse`` gives ``{tool: bandwidthTest, devices: [{index, name, bus_id}], mode, results: {h2d|d2h|d2d:
[{memory, bytes, gbs}]}, result: PASS|FAIL|None, verification_failures, warnings}``; ``Result = FAIL`` (the copy
failed its own check) is a verification failure. Every line is read alone: one it cannot read is a warning naming
it; output cut before ``Result =`` keeps what was read (``partial``). MB/s figures are turned into GB/s (/1000,
as the tool divides by 1e6 and 1e9). ``as_nvbandwidth`` lays the runs of several GPUs (one run per GPU,
``--device=N``) out as nvbandwidth's host testcases, so the same rules judge them. Pure functions.
"""

import re

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._safe_parse import to_float, to_int

TOOL = "bandwidthTest"

_DIRECTIONS = {"Host to Device": "h2d", "Device to Host": "d2h", "Device to Device": "d2d",
               "H2D": "h2d", "D2H": "d2h", "D2D": "d2d"}
_DEVICE_RE = re.compile(r"^\s*Device\s+([0-9]{1,3}):\s+(.*?)\s*$")
_MODE_RE = re.compile(r"^\s*(Quick|Range|Shmoo)\s+Mode\s*$")
_SECTION_RE = re.compile(r"^\s*(Host to Device|Device to Host|Device to Device) Bandwidth,\s*([0-9]{1,3}) Device\(s\)\s*$")
_MEMORY_RE = re.compile(r"^\s*(PINNED|PAGEABLE) Memory Transfers\s*$")
_UNIT_RE = re.compile(r"^\s*Transfer Size \(Bytes\)\s*Bandwidth\((GB/s|MB/s)\)\s*$")
_ROW_RE = re.compile(r"^\s*([0-9]{1,13})\s+([0-9]{1,9}(?:\.[0-9]{1,6})?)\s*$")
_CSV_RE = re.compile(r"^\s*bandwidthTest-(H2D|D2H|D2D)(?:-(Pinned|Paged|Pageable))?,\s*Bandwidth\s*=\s*"
                     r"([0-9]{1,9}(?:\.[0-9]{1,6})?)\s*(GB/s|MB/s),\s*Time\s*=\s*\S+\s*s,\s*Size\s*=\s*([0-9]{1,13})\s*"
                     r"bytes,\s*NumDevsUsed\s*=\s*([0-9]{1,3})\s*$")
_RESULT_RE = re.compile(r"^\s*Result\s*=\s*(PASS|FAIL|WAIVED)\s*$")
_KNOWN_RE = re.compile(r"^\s*(?:\[CUDA Bandwidth Test\].*|Running on\.\.\.|\.+|NOTE:.*|!+.*!+|"
                       r"\[bandwidthTest\].*|bandwidthTest.*Starting\.\.\.)\s*$")
_ERROR_RE = re.compile(r"(?:CUDA error|cudaError|error code|FAILED|no CUDA-capable device|Invalid device)",
                       re.IGNORECASE)


def _gbs(value, unit):
    number = to_float(value)
    if number is None:
        return None
    return round(number / 1000.0, 4) if unit == "MB/s" else number


def parse(text):
    """See the module docstring. Raises ParseError (tool ``bandwidthTest``) for output with no figure and no
    ``Result`` line."""
    if not isinstance(text, str):
        raise ParseError(TOOL, "expected text, got %s" % type(text).__name__)
    facts = {"tool": TOOL, "devices": [], "mode": None, "results": {"h2d": [], "d2h": [], "d2d": []},
             "result": None, "verification_failures": [], "warnings": [], "partial": False}
    section = memory = unit = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if not line.strip():
            continue
        match = _CSV_RE.match(line)
        if match:
            value = _gbs(match.group(3), match.group(4))
            if value is not None:
                facts["results"][_DIRECTIONS[match.group(1)]].append(
                    {"memory": "pageable" if match.group(2) in ("Paged", "Pageable") else "pinned",
                     "bytes": to_int(match.group(5)), "gbs": value})
            continue
        match = _ROW_RE.match(line)
        if match and section is not None and unit is not None:
            value = _gbs(match.group(2), unit)
            if value is not None:
                facts["results"][section].append({"memory": memory or "pinned", "bytes": to_int(match.group(1)),
                                                  "gbs": value})
            continue
        match = _SECTION_RE.match(line)
        if match:
            section, memory, unit = _DIRECTIONS[match.group(1)], None, None
            continue
        match = _MEMORY_RE.match(line)
        if match:
            memory = match.group(1).lower()
            continue
        match = _UNIT_RE.match(line)
        if match:
            unit = match.group(1)
            continue
        match = _DEVICE_RE.match(line)
        if match and len(facts["devices"]) < 64:
            facts["devices"].append({"index": int(match.group(1)), "name": match.group(2)[:80] or None,
                                     "bus_id": None})
            continue
        match = _MODE_RE.match(line)
        if match:
            facts["mode"] = match.group(1).lower()
            continue
        match = _RESULT_RE.match(line)
        if match:
            facts["result"] = match.group(1)
            if match.group(1) == "FAIL":
                facts["verification_failures"].append({"testcase": "bandwidthTest", "evidence": line.strip()})
            continue
        if _KNOWN_RE.match(line):
            continue
        if _ERROR_RE.search(line):
            facts["warnings"].append("bandwidthTest: error line %d %r" % (number, line.strip()[:200]))
            continue
        facts["warnings"].append("bandwidthTest: unread line %d %r; please report" % (number, line.strip()[:200]))
    figures = sum(len(items) for items in facts["results"].values())
    if not figures and facts["result"] is None:
        raise ParseError(TOOL, "no bandwidth figure and no 'Result =' line in the bandwidthTest output")
    if facts["result"] is None:
        facts["partial"] = True
        facts["warnings"].append("bandwidthTest: no 'Result =' line: the output was cut short, the figures read "
                                 "are kept")
    return facts


def best(facts, direction, memory="pinned"):
    """The highest figure of one direction (GB/s) at the largest transfers (the plateau of a shmoo or range run),
    or None: the mean of the figures at the top quarter of the sizes measured."""
    items = [item for item in (facts.get("results") or {}).get(direction) or []
             if item.get("memory") == memory and item.get("gbs") is not None]
    if not items:
        return None
    items = sorted(items, key=lambda item: item.get("bytes") or 0)
    top = items[-max(1, len(items) // 4):]
    return round(sum(item["gbs"] for item in top) / len(top), 2)


def as_nvbandwidth(runs):
    """``{gpu index: bandwidthTest facts}`` (one run per GPU) -> facts in nvbandwidth's shape (host testcases
    ``host_to_device_memcpy_ce`` / ``device_to_host_memcpy_ce``, one row, a column per GPU), with the runs'
    verification failures and warnings."""
    columns = sorted(runs)
    facts = {"tool": TOOL, "version": None, "devices": [], "testcases": {}, "waived": 0, "waived_testcases": [],
             "verification_failures": [], "aborted": [], "unparsed": [], "warnings": [], "numa": {}}
    for index in columns:
        run = runs[index] or {}
        name = next((device.get("name") for device in run.get("devices") or []), None)
        facts["devices"].append({"index": index, "name": name, "bus_id": None})
        for item in run.get("verification_failures") or []:
            facts["verification_failures"].append({"testcase": "bandwidthTest GPU %s" % index,
                                                   "evidence": item.get("evidence")})
        facts["warnings"].extend(run.get("warnings") or [])
        if run.get("numa") is not None:
            facts["numa"][index] = run.get("numa")
    for testcase, direction in (("host_to_device_memcpy_ce", "h2d"), ("device_to_host_memcpy_ce", "d2h")):
        values = [best(runs[index] or {}, direction) for index in columns]
        if all(value is None for value in values):
            continue
        facts["testcases"][testcase] = {"description": "bandwidthTest %s pinned (GB/s)" % direction,
                                        "columns": columns, "matrix": [{"row": 0, "values": values}], "sum": None}
    return facts
