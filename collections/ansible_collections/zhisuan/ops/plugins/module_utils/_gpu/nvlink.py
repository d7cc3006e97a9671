# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""``nvidia-smi nvlink -s`` (``--status``): per-GPU NVLink link states, and their place in the ``gpu`` facts.

What the driver prints, per GPU (all forms seen in real captures, tests/fixtures/nvidia-smi/):

* a header ``GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-…)`` (old drivers print no UUID part), then
* one line per link: ``Link 0: 26.562 GB/s`` (active, its speed) or ``Link 4: <inactive>``; or
* one message instead of the links: ``Device does not have or support Nvlink`` (a PCIe card: no NVLink),
  ``NVML: Unable to retrieve NVLink information as all links are inactive`` (every link down; also spelled
  ``inActive``), ``Nvlink queries are not supported for Devices in MIG mode``.

An empty output (older drivers on PCIe cards) means no GPU reports NVLink.

Every line is read alone (issue 23): a line that cannot be read - before the first GPU header, an elision mark
(``...``, ``[...]``), a damaged ``Link`` line, a link or a GPU listed twice - is a warning naming the line, and
the rest is read, so the inactive links of the other lines are still seen. A block with such a line is marked
``partial`` (its link count is not the GPU's whole count). Only text with no GPU header at all is refused.
"""

import re

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu._nvsmi_tree import warn_once

TOOL = "nvidia-smi nvlink"

_HEADER_RE = re.compile(r"^GPU ([0-9]{1,4}): (.*?)(?: \(UUID: (GPU-[0-9A-Za-z-]+)\))?$", re.ASCII)
_LINK_RE = re.compile(r"^Link ([0-9]{1,4}): (.*)$", re.ASCII)
# A link speed: ASCII digits, at most 10000 GB/s (NVLink 5 runs a link at 50 GB/s); anything else is an unknown state.
_SPEED_RE = re.compile(r"^([0-9]{1,5}(?:\.[0-9]{1,6})?) GB/s$", re.ASCII)
_MAX_SPEED_GBS = 10000.0
_INACTIVE = "<inactive>"
_ELISION_RE = re.compile(r"^(?:\.{3,}|\u2026|\[\s*\.{3}\s*\])$")
_LINKISH_RE = re.compile(r"^Link\b", re.IGNORECASE)

# Messages printed instead of the links, lower-cased.
_NO_NVLINK = "device does not have or support nvlink"
_ALL_INACTIVE = "nvml: unable to retrieve nvlink information as all links are inactive"
_MIG = "nvlink queries are not supported for devices in mig mode"


def _new_block(match, line_no):
    return {"index": int(match.group(1)), "name": match.group(2).strip() or None, "uuid": match.group(3),
            "links": [], "messages": [], "line": line_no, "partial": False}


def _link(block, match, line, emit):
    number = int(match.group(1))
    value = match.group(2).strip()
    if any(link["link"] == number for link in block["links"]):
        emit("nvidia-smi nvlink: GPU %d lists link %d twice (line %r): the repeat is skipped"
             % (block["index"], number, line[:80]))
        block["partial"] = True
        return
    speed = _SPEED_RE.match(value)
    if speed and float(speed.group(1)) <= _MAX_SPEED_GBS:
        block["links"].append({"link": number, "active": True, "speed_gbs": float(speed.group(1))})
        return
    if value.lower() != _INACTIVE:
        # A state this parser does not know is not evidence of a working link: counted as not active.
        emit("nvidia-smi nvlink: unknown state %r of GPU %d link %d, counted as not active; please report"
             % (value[:60], block["index"], number))
    block["links"].append({"link": number, "active": False, "speed_gbs": None})


def _status(block, emit):
    """The per-GPU ``nvlink`` fact of one parsed block (see docs/gpu-facts.md)."""
    links = block["links"]
    messages = block["messages"]
    if links:
        for text in messages:
            emit("nvidia-smi nvlink: unexpected line %r in the block of GPU %d; please report" % (text[:60], block["index"]))
        active = sum(1 for link in links if link["active"])
        result = {"links": sorted(links, key=lambda link: link["link"]), "active": active, "total": len(links),
                  "message": None}
        if block["partial"]:
            result["partial"] = True
        return result
    if not messages:
        emit("nvidia-smi nvlink: GPU %d printed no link; taken as no NVLink" % block["index"])
        return None
    message = messages[0]
    low = message.lower()
    if low == _NO_NVLINK:
        return None
    if low == _ALL_INACTIVE:
        return {"links": [], "active": 0, "total": None, "message": message}
    if low != _MIG:
        emit("nvidia-smi nvlink: unknown message %r for GPU %d; please report" % (message[:80], block["index"]))
    return {"links": [], "active": None, "total": None, "message": message}


def parse_status(text, warn=None):
    """Parse ``nvidia-smi nvlink -s`` output (see ``_parse_status``); any odd input is a ParseError naming the tool."""
    try:
        return _parse_status(text, warn=warn)
    except ParseError:
        raise
    except (ValueError, TypeError, AttributeError, IndexError, KeyError, OverflowError) as exc:
        raise ParseError(TOOL, "unexpected output (%s: %s); please report" % (type(exc).__name__, str(exc)[:200]))


def _parse_status(text, warn=None):
    """Parse ``nvidia-smi nvlink -s`` output into a list of ``{index, name, uuid, nvlink}`` (one per GPU header,
    in printed order). ``nvlink`` is ``None`` for a GPU without NVLink, else
    ``{links: [{link, active, speed_gbs}], active, total, message}``.

    Raises ParseError for output that is not ``nvlink -s`` output (text but no GPU header at all); every other
    line it cannot read is a warning (see the module docstring).
    """
    emit = warn_once(warn)
    blocks = []
    current = None
    skipped = []
    for line_no, raw in enumerate((text or "").splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        header = _HEADER_RE.match(line)
        if header and not raw[:1].isspace():
            current = _new_block(header, line_no)
            if any(block["index"] == current["index"] for block in blocks):
                emit("nvidia-smi nvlink: GPU %d appears twice (line %d): the repeated block is skipped"
                     % (current["index"], line_no))
                current["skip"] = True
                continue
            blocks.append(current)
            continue
        if current is None:
            skipped.append((line_no, line))
            continue
        if current.get("skip"):
            continue
        link = _LINK_RE.match(line)
        if link:
            _link(current, link, line, emit)
        elif _ELISION_RE.match(line):
            emit("nvidia-smi nvlink: skipped an elision line %r in the block of GPU %d: its links are listed in part"
                 % (line[:20], current["index"]))
            current["partial"] = True
        elif _LINKISH_RE.match(line) or current["links"]:
            emit("nvidia-smi nvlink: unread line %d %r in the block of GPU %d; please report"
                 % (line_no, line[:80], current["index"]))
            current["partial"] = True
        else:
            current["messages"].append(line)
    if skipped and not blocks:
        line_no, line = skipped[0]
        raise ParseError(TOOL, "line %d is not a 'GPU n: <name> (UUID: ...)' header, so this is not "
                               "nvidia-smi nvlink -s output: %r" % (line_no, line[:80]))
    for line_no, line in skipped[:5]:
        emit("nvidia-smi nvlink: unread line %d %r before the first GPU header; please report" % (line_no, line[:80]))
    return [{"index": block["index"], "name": block["name"], "uuid": block["uuid"], "nvlink": _status(block, emit)}
            for block in blocks]


def _counts(items):
    counts = {}
    for item in items:
        uuid = item.get("uuid")
        if uuid:
            counts[uuid] = counts.get(uuid, 0) + 1
    return counts


def attach(facts, status, warn=None):
    """Put each GPU's ``nvlink`` fact into ``facts["gpus"]`` (a copy of ``facts`` is returned).

    A header is matched to a GPU by UUID first (when the UUID is unique on both sides: masked captures print the
    same UUID for every GPU), then by its number, which is nvidia-smi's enumeration index: the GPU's position in
    the ``-q -x`` output. GPUs the nvlink output does not list get ``nvlink: None``.
    """
    emit = warn_once(warn)
    gpus = [dict(gpu) for gpu in facts.get("gpus") or []]
    result = dict(facts)
    result["gpus"] = gpus
    for gpu in gpus:
        gpu["nvlink"] = None
    q_count = _counts(gpus)
    s_count = _counts(status)
    paired = set(uuid for uuid in q_count if q_count[uuid] == 1 and s_count.get(uuid) == 1)
    by_uuid = dict((gpu["uuid"], gpu) for gpu in gpus if gpu.get("uuid") in paired)
    taken = set()
    for entry in status:
        uuid = entry.get("uuid")
        if uuid and q_count.get(uuid, 0) <= 1 and s_count[uuid] == 1:
            gpu = by_uuid.get(uuid)  # None: that GPU is not in the -q output
        else:  # no UUID printed, or the same (masked) UUID on several GPUs
            gpu = gpus[entry["index"]] if 0 <= entry["index"] < len(gpus) else None
            if gpu is not None and gpu.get("uuid") in paired:
                gpu = None  # that position belongs to a GPU matched by its own UUID
        if gpu is None or id(gpu) in taken:
            emit("nvidia-smi nvlink: GPU %d (%s) is not among the GPUs of nvidia-smi -q; its NVLink state is ignored"
                 % (entry["index"], uuid or entry.get("name") or "?"))
            continue
        taken.add(id(gpu))
        gpu["nvlink"] = entry["nvlink"]
    return result
