# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""NVIDIA ``nvbandwidth`` text output -> ``bandwidth`` facts (docs/gpu-facts.md, "Bandwidth").

What nvbandwidth prints (tests/fixtures/nvbandwidth/): a preamble (``nvbandwidth Version: v0.2``, ``CUDA Runtime
Version``, ``Driver Version``, ``Device 0: NVIDIA H800`` lines, newer versions with the bus id in parentheses), then
per testcase::

    Running host_to_device_memcpy_ce.
    memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)
              0         1   ...
    0     55.28     55.30   ...
    SUM host_to_device_memcpy_ce 442.52

Host tests have one row (the CPU) and a column per GPU; device-to-device tests a row and a column per GPU with
``N/A`` on the diagonal. ``Waived:`` (v0.5 on) or ``Waiving <testcase>.`` (v0.1-v0.4) marks a testcase the system
cannot run: the testcase is kept with ``waived: true`` (names in ``waived_testcases``). Values are GB/s.

A copy whose data did not verify ends the run inside the testcase, with nvbandwidth's own lines::

    Running device_to_device_memcpy_read_ce.
     Invalid value when checking the pattern at 0x70a640000000
     Current offset : 11136
    ASSERT in expression h_errorFlag == 0 in void memcmpPatternHelper(...) : .../memcpy.cpp:165

(newer versions: ``ERROR: Read-only pattern mismatch ...``, ``... mismatched elements!``): ``verification_failures``
lists ``{testcase, evidence}`` - the copy moved wrong data, a hardware fault, not a testcase that did not run. Any
other ``ASSERT``/``CUDA_ERROR`` line is kept in ``aborted`` (the run stopped for another reason).
"""

import math
import re

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError

TOOL = "nvbandwidth"

_RUNNING_RE = re.compile(r"^Running ([a-z0-9_]{1,80})\.$", re.ASCII)
_SUM_RE = re.compile(r"^SUM ([a-z0-9_]{1,80}) ([0-9]{1,9}(?:\.[0-9]{1,6})?)$", re.ASCII)
_DEVICE_RE = re.compile(r"^Device ([0-9]{1,4}): (.*?)(?: \(([0-9A-Fa-f:.]{1,20})\))?$", re.ASCII)
_HEADER_RE = re.compile(r"^(?:[0-9]{1,4}\s+)*[0-9]{1,4}$", re.ASCII)
_ROW_RE = re.compile(r"^([0-9]{1,4})((?:\s+\S+){1,256})$", re.ASCII)
_VALUE_RE = re.compile(r"^[0-9]{1,9}(?:\.[0-9]{1,6})?$", re.ASCII)
_WAIVING_RE = re.compile(r"^Waiving ([a-z0-9_]{1,80})\.?$", re.ASCII)
_VERIFY_RE = re.compile(r"h_errorFlag\s*==\s*0|Invalid value when checking the pattern|pattern mismatch|"
                        r"mismatched elements|^Current offset\s*:", re.IGNORECASE)
_ABORT_RE = re.compile(r"^(?:ASSERT in expression|\[?CUDA_ERROR_|ERROR:)")
_PREAMBLE = (("nvbandwidth Version:", "version"), ("CUDA Runtime Version:", "cuda_runtime_version"),
             ("Driver Version:", "driver_version"))
# Preamble and closing notes that carry nothing the rules use (kept out of ``unparsed``).
_NOTES = ("Built from", "NOTE:", "Additional system-specific", "CUDA Driver Version", "Performance can vary")
# A GB/s figure beyond this is not a reading (NVLink-C2C measures ~1500 GB/s device to device).
_MAX_GBS = 100000.0


def _value(text):
    if text == "N/A":
        return None
    if not _VALUE_RE.match(text):
        raise ValueError(text)
    value = float(text)
    if not math.isfinite(value) or value > _MAX_GBS:
        raise ValueError(text)
    return value


def parse(text):
    """Parse nvbandwidth's text output. Returns ``{"version", "cuda_runtime_version", "driver_version", "devices":
    [{"index", "name", "bus_id"}], "testcases": {name: {"description", "columns", "matrix", "sum"}}, "waived",
    "unparsed"}`` where ``matrix`` is a list of ``{"row", "values"}`` (GB/s, ``None`` for N/A).

    Raises ParseError (tool ``nvbandwidth``) for binary data, or output with no testcase at all.
    """
    if not isinstance(text, str):
        raise ParseError(TOOL, "expected text, got %s" % type(text).__name__)
    if any(ord(char) < 32 and char not in "\t\r\n" for char in text):
        raise ParseError(TOOL, "output contains binary data (NUL or control bytes), not nvbandwidth text")
    facts = {"version": None, "cuda_runtime_version": None, "driver_version": None, "devices": [],
             "testcases": {}, "waived": 0, "waived_testcases": [], "verification_failures": [], "aborted": [],
             "unparsed": []}
    name = None
    current = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        running = _RUNNING_RE.match(line)
        if running:
            current = {"description": None, "columns": None, "matrix": [], "sum": None}
            name = running.group(1)
            facts["testcases"][name] = current
            continue
        waiving = _WAIVING_RE.match(line)
        if waiving:
            facts["waived"] += 1
            facts["waived_testcases"].append(waiving.group(1))
            facts["testcases"].setdefault(waiving.group(1), {"description": None, "columns": None, "matrix": [],
                                                             "sum": None})["waived"] = True
            current = None
            continue
        if _VERIFY_RE.search(line):
            _verification(facts, name, line)
            continue
        if _ABORT_RE.match(line):
            facts["aborted"].append({"testcase": name, "evidence": line[:300]})
            continue
        if _preamble(facts, line):
            continue
        total = _SUM_RE.match(line)
        if total:
            case = facts["testcases"].get(total.group(1))
            if case is not None:
                case["sum"] = float(total.group(2))
            else:
                facts["unparsed"].append(line[:200])
            continue
        if line.startswith("Waived"):
            facts["waived"] += 1
            # "Waived:" follows the testcase's own "Running NAME." only when it printed one (v0.5 on prints the
            # status alone): a testcase that already gave figures is not the waived one
            if current is not None and name is not None and not current["matrix"] and current["sum"] is None:
                current["waived"] = True
                facts["waived_testcases"].append(name)
            current = None
            continue
        if current is None or not _matrix_line(current, line):
            facts["unparsed"].append(line[:200])
    facts["unparsed"] = facts["unparsed"][:50]
    if not facts["testcases"]:
        first = text.strip().splitlines()[0][:80] if text.strip() else "empty output"
        raise ParseError(TOOL, "no 'Running <testcase>.' block in the output (first line: %r)" % first)
    return facts


def _verification(facts, name, line):
    """One line of a failed data verification, joined to the testcase's entry."""
    for item in facts["verification_failures"]:
        if item["testcase"] == name:
            if len(item["evidence"]) < 600:
                item["evidence"] = (item["evidence"] + " | " + line[:300])[:900]
            return
    facts["verification_failures"].append({"testcase": name, "evidence": line[:300]})


def _preamble(facts, line):
    if line.startswith(_NOTES):
        return True
    for prefix, key in _PREAMBLE:
        if line.startswith(prefix):
            facts[key] = line[len(prefix):].strip()[:40] or None
            return True
    device = _DEVICE_RE.match(line)
    if device and len(facts["devices"]) < 256:
        facts["devices"].append({"index": int(device.group(1)), "name": device.group(2).strip()[:80] or None,
                                 "bus_id": device.group(3)})
        return True
    return False


def _matrix_line(case, line):
    """Take one line of the current testcase's table; False when it is not one."""
    if case["description"] is None and "bandwidth" in line and "(" in line:
        case["description"] = line[:200]
        return True
    if case["columns"] is None and _HEADER_RE.match(line):
        case["columns"] = [int(item) for item in line.split()]
        return True
    row = _ROW_RE.match(line)
    if case["columns"] is None or not row:
        return False
    try:
        values = [_value(item) for item in row.group(2).split()]
    except ValueError:
        return False
    if len(values) != len(case["columns"]):
        return False
    case["matrix"].append({"row": int(row.group(1)), "values": values})
    return True


def per_gpu(facts, testcase):
    """``{gpu index: GB/s}`` of a host testcase (one row, a column per GPU); ``{}`` when it did not run."""
    case = (facts.get("testcases") or {}).get(testcase)
    if not case or not case.get("matrix") or not case.get("columns"):
        return {}
    values = case["matrix"][0]["values"]
    return dict((column, value) for column, value in zip(case["columns"], values) if value is not None)


def pairs(facts, testcase):
    """``[(row GPU, column GPU, GB/s)]`` of a device-to-device testcase, N/A cells left out."""
    case = (facts.get("testcases") or {}).get(testcase)
    if not case or not case.get("columns"):
        return []
    found = []
    for row in case.get("matrix") or []:
        for column, value in zip(case["columns"], row["values"]):
            if value is not None and column != row["row"]:
                found.append((row["row"], column, value))
    return found
