# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""``nvidia-smi nvlink -e`` (``--errorcounters``): per-GPU, per-link NVLink error counters, and their growth over a
window (two reads ``window_s`` apart).

What the driver prints, per GPU (tests/fixtures/nvidia-smi/nvlink-e-*):

* a header ``GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-…)``, then
* per link one line per counter: ``Link 0: Replay Errors: 0``, ``Link 0: Recovery Errors: 0`` and ``Link 0: CRC
  Errors: 0`` (one CRC counter) or ``CRC Flit Errors`` / ``CRC Data Errors`` (older drivers split it), blank lines
  between links;
* newer drivers (R580) fold links with equal counters: ``Links 0-2, 4-5: Replay/Recovery/CRC Errors: 0`` and
  ``Links 1-5: No errors``;
* a message instead of the links on a GPU without NVLink (``Device does not have or support Nvlink``).

Throughput counters (``Tx/Rx Throughput``) are not errors and are dropped. Lines this parser does not know (an
elision such as ``[...]`` in a pasted capture) are kept in ``unparsed``, never guessed at. A GPU's message is a line
printed instead of its links: a line after the GPU's links (the ``=== GPU 1 NVLink Errors ===`` a ``for i; do echo
...; nvidia-smi nvlink -e -i $i; done`` loop prints between blocks) or a banner of ``=`` / ``#`` / ``-`` is named in
``unparsed`` and the next GPU is read as usual. Every line is read alone: a line with control bytes (a damaged
capture) or a counter a link already has (a GPU header lost, its links running into the GPU before) is named in
``unparsed`` and the rest is read; only output with no GPU header at all is refused.
"""

import re

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError

TOOL = "nvidia-smi nvlink -e"

_HEADER_RE = re.compile(r"^GPU ([0-9]{1,4}): (.*?)(?: \(UUID: (GPU-[0-9A-Za-z-]+)\))?$", re.ASCII)
_LINK_RE = re.compile(r"^Links? ([0-9][0-9, -]{0,80}): (.*)$", re.ASCII)
_VALUE_RE = re.compile(r"^(.*?) Errors: ([0-9]{1,20})$", re.ASCII)
# A line a script or a paste puts between blocks (``=== GPU 1 NVLink Errors ===``, ``#####``, ``-----``), an elision.
_NOT_A_MESSAGE_RE = re.compile(r"^(?:={3,}|#|-{3,}|\[)", re.ASCII)
# The counter names the driver prints (lower-cased, without " Errors") and the fact key of each.
COUNTERS = {
    "replay": "replay",
    "recovery": "recovery",
    "crc": "crc",
    "crc flit": "crc_flit",
    "crc data": "crc_data",
    "ecc": "ecc",
    "data tx": "data_tx",
    "data rx": "data_rx",
}
# The largest count a counter holds: older GPUs stop at 16 bits (65535) and the value then says nothing about growth.
SATURATED = (0xFFFF, 0xFFFFFFFF)
_MAX_LINKS = 64
_MAX_COUNT = 10 ** 15


def _links(spec):
    """``0``, ``0-5`` or ``0-2, 4-5`` as a sorted list of link numbers; None when it is not such a list."""
    found = set()
    for part in spec.split(","):
        part = part.strip()
        bounds = part.split("-")
        if len(bounds) == 1 and bounds[0].isdigit():
            low = high = int(bounds[0])
        elif len(bounds) == 2 and bounds[0].strip().isdigit() and bounds[1].strip().isdigit():
            low, high = int(bounds[0]), int(bounds[1])
        else:
            return None
        if low > high or high >= _MAX_LINKS:
            return None
        found.update(range(low, high + 1))
    return sorted(found)


def _counters(text):
    """``Replay Errors: 3`` -> ``{"replay": 3}``; ``Replay/Recovery/CRC Errors: 0`` -> three counters at 0;
    ``No errors`` -> ``{}`` with ``clean`` set. None for anything else."""
    if text.strip().lower() == "no errors":
        return {}
    match = _VALUE_RE.match(text.strip())
    if not match:
        return None
    value = int(match.group(2))
    if value > _MAX_COUNT:
        return None
    keys = []
    for name in match.group(1).split("/"):
        key = COUNTERS.get(name.strip().lower())
        if key is None:
            return None
        keys.append(key)
    return dict((key, value) for key in keys)


def parse(text):
    """Parse ``nvidia-smi nvlink -e`` output. Returns ``{"gpus": [...], "unparsed": [...]}`` where each GPU is
    ``{"index", "name", "uuid", "links": [{"link": n, "counters": {name: count}}], "messages": [...]}``.

    Raises ParseError (tool ``nvidia-smi nvlink -e``) for output with no GPU header (binary data, other text).
    """
    if not isinstance(text, str):
        raise ParseError(TOOL, "expected text, got %s" % type(text).__name__)
    gpus, unparsed, current = [], [], None
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if any(ord(char) < 32 and char != "\t" for char in line):
            unparsed.append(repr(line[:60]))  # control bytes: a damaged line, never read as counters
            continue
        header = _HEADER_RE.match(line)
        if header:
            current = {"index": int(header.group(1)), "name": header.group(2).strip() or None,
                       "uuid": header.group(3), "links": [], "messages": []}
            gpus.append(current)
            continue
        link = _LINK_RE.match(line)
        numbers = _links(link.group(1)) if link else None
        counters = _counters(link.group(2)) if link else None
        if current is None or (link and (numbers is None or counters is None)):
            unparsed.append(line[:200])
            continue
        if not link:
            if current["links"] or _NOT_A_MESSAGE_RE.match(line) or len(current["messages"]) >= 8:
                unparsed.append(line[:200])  # after the links, an elision or a banner: not the GPU's message
            else:
                current["messages"].append(line[:200])
            continue
        by_number = dict((item["link"], item) for item in current["links"])
        if any(name in by_number[number]["counters"] for number in numbers if number in by_number
               for name in counters):
            unparsed.append(line[:200])  # a counter the link already has: never overwritten
            continue
        for number in numbers:
            entry = by_number.get(number)
            if entry is None:
                entry = {"link": number, "counters": {}}
                current["links"].append(entry)
                by_number[number] = entry
            entry["counters"].update(counters)
    if not gpus and text.strip():
        if any(ord(char) < 32 and char not in "\t\r\n" for char in text):
            raise ParseError(TOOL, "output contains binary data (NUL or control bytes), not nvidia-smi nvlink -e text")
        raise ParseError(TOOL, "no 'GPU n: <name>' header in the output (first line: %r)"
                         % text.strip().splitlines()[0][:80])
    for gpu in gpus:
        gpu["links"].sort(key=lambda item: item["link"])
    return {"gpus": gpus, "unparsed": unparsed[:50]}


def _key(gpu):
    return gpu.get("uuid") or "#%s" % gpu.get("index")


def growth(before, after, window_s):
    """The counters' growth between two parsed reads ``window_s`` seconds apart: per GPU of ``after`` the links whose
    counters are in both reads, as ``{"index", "name", "uuid", "links": [{"link", "counters": {name: {"before",
    "after", "delta", "per_s", "saturated", "cleared"}}}]}``.

    A counter that went down was cleared between the reads (``nvidia-smi nvlink -r``, a GPU reset): its growth is the
    new value. A counter at its maximum (``SATURATED``) cannot show growth and says so.
    """
    window_s = float(window_s) if window_s and window_s > 0 else None
    earlier = dict((_key(gpu), gpu) for gpu in before.get("gpus") or [])
    result = []
    for gpu in after.get("gpus") or []:
        old = earlier.get(_key(gpu))
        entry = {"index": gpu.get("index"), "name": gpu.get("name"), "uuid": gpu.get("uuid"), "links": [],
                 "messages": list(gpu.get("messages") or [])}
        result.append(entry)
        if old is None:
            continue
        old_links = dict((item["link"], item["counters"]) for item in old.get("links") or [])
        for link in gpu.get("links") or []:
            was = old_links.get(link["link"])
            if was is None:
                continue
            counters = {}
            for name, value in sorted(link["counters"].items()):
                if name not in was:
                    continue
                cleared = value < was[name]
                delta = value if cleared else value - was[name]
                counters[name] = {"before": was[name], "after": value, "delta": delta,
                                  "per_s": round(delta / window_s, 3) if window_s else None,
                                  "saturated": value in SATURATED, "cleared": cleared}
            entry["links"].append({"link": link["link"], "counters": counters})
    return result
