# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""The other ``nvidia-smi nvlink`` forms users paste (issue 23): ``-R`` / ``--remotelinkinfo`` (remote link info),
``-c`` / ``--capabilities`` and ``-gt d|r`` / ``--getthroughput`` (throughput counters). ``-s`` is read by
``nvlink.py``, ``-e`` by ``nvlink_errors.py``.

What the driver prints (tests/fixtures/nvidia-smi/nvlink-R-*, nvlink-c-*, nvlink-gt-*), per GPU a header
``GPU 0: NVIDIA H800 (UUID: GPU-...)`` (old drivers print no UUID part), then one line per link and item:

* ``-R``: ``Link 0: Remote Device 00000000:D5:00.0: Link 0`` - the PCI bus id of the device at the other end (a
  GPU joined by a bridge, or an NVSwitch on HGX boards) and that device's link (port) number;
* ``-c``: ``Link 0, P2P is supported: true`` - six capabilities a link, ``true`` or ``false``;
* ``-gt d``: ``Link 0: Data Tx: 5863784 KiB`` / ``Data Rx``; ``-gt r``: ``Raw Tx`` / ``Raw Rx`` (payload with
  protocol overhead); counters since the driver loaded (or their last reset), in KiB, a comma grouping accepted.

A GPU without NVLink prints one message instead of links (``Device does not have or support Nvlink``); it is kept
in the GPU's ``messages``. Every line is read alone: a line these readers cannot read (an elision such as ``...``,
a damaged or cut ``Link`` line, a line before the first header) is named in ``unparsed`` (``line N: text``) and the
rest is read; the GPU it sits in, or the whole output when it comes before any header or is the last line (a cut
output), is marked ``partial``. A banner a script prints between blocks (``=== GPU 1 ===``, ``# ...``, ``-----``) is
named too but is no part of a block: it marks nothing ``partial`` and is never a GPU's message. Only text with no GPU
header at all is refused (ParseError), as ``-s`` is.
"""

import re

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError

TOOL_REMOTE = "nvidia-smi nvlink -R"
TOOL_CAPABILITIES = "nvidia-smi nvlink -c"
TOOL_THROUGHPUT = "nvidia-smi nvlink -gt"

_HEADER_RE = re.compile(r"^GPU ([0-9]{1,4}): (.*?)(?: \(UUID: (GPU-[0-9A-Za-z-]+)\))?$", re.ASCII)
_LINK_START_RE = re.compile(r"^Links? ?[0-9]", re.ASCII)
_ELISION_RE = re.compile(r"^(?:\.{3,}|\u2026|\[\s*(?:\.{3}|snip)\s*\])$", re.IGNORECASE)
_BANNER_RE = re.compile(r"^(?:={3,}|#|-{3,}|\*{3,})", re.ASCII)
_BUS_ID = r"([0-9A-Fa-f]{4,8}):([0-9A-Fa-f]{2}):([0-9A-Fa-f]{2})\.([0-7])"
_REMOTE_RE = re.compile(r"^Link ([0-9]{1,3}): Remote Device " + _BUS_ID + r": Link ([0-9]{1,3})$", re.ASCII)
_CAPABILITY_RE = re.compile(r"^Link ([0-9]{1,3}), ([A-Za-z0-9 ]{1,60}): (true|false)$", re.ASCII | re.IGNORECASE)
_THROUGHPUT_RE = re.compile(r"^Link ([0-9]{1,3}): (Data|Raw) (Tx|Rx): ([0-9][0-9,]{0,24}) KiB$", re.ASCII)
_MAX_LINK = 63
_MAX_UNPARSED = 50
# The capability names the driver prints, and their fact keys (``is`` dropped: ppu-smi and later drivers add it).
CAPABILITIES = {
    "p2p supported": "p2p",
    "access to system memory supported": "sysmem_access",
    "p2p atomics supported": "p2p_atomics",
    "system memory atomics supported": "sysmem_atomics",
    "sli supported": "sli",
    "link supported": "link",
}


def bus_id(domain, bus, device, function):
    """A PCI bus id as the gpu facts write it (``pci_bus_id``): a 4-hex-digit domain, upper-case hex."""
    return "%04X:%s:%s.%s" % (int(domain, 16), bus.upper(), device.upper(), function)


def normal_bus_id(text):
    """``00000000:d5:00.0`` or ``0000:D5:00.0`` as ``0000:D5:00.0``; None for anything else."""
    match = re.match("^" + _BUS_ID + "$", (text or "").strip(), re.ASCII)
    if not match or int(match.group(1), 16) > 0xFFFF:
        return None
    return bus_id(*match.groups())


def _remote_line(match):
    number, remote_link = int(match.group(1)), int(match.group(6))
    if int(match.group(2), 16) > 0xFFFF or remote_link > _MAX_LINK:
        return None
    return number, {"remote_bus_id": bus_id(*match.group(2, 3, 4, 5)), "remote_link": remote_link}


def _capability_line(match):
    name = " ".join(word for word in match.group(2).lower().split() if word != "is")
    key = CAPABILITIES.get(name) or re.sub(r"[^a-z0-9]+", "_", name).strip("_")
    return int(match.group(1)), {"capabilities": {key: match.group(3).lower() == "true"}}


def _throughput_line(match):
    value = int(match.group(4).replace(",", ""))
    return int(match.group(1)), {"counters": {"%s_%s_kib" % (match.group(2).lower(), match.group(3).lower()): value}}


_FORMS = {
    TOOL_REMOTE: (_REMOTE_RE, _remote_line),
    TOOL_CAPABILITIES: (_CAPABILITY_RE, _capability_line),
    TOOL_THROUGHPUT: (_THROUGHPUT_RE, _throughput_line),
}


def _merge(gpu, number, fields):
    """Add one line's fields to link ``number`` of ``gpu``; False when the line repeats what is already there."""
    link = gpu["_by_number"].get(number)
    if link is None:
        link = {"link": number}
        gpu["_by_number"][number] = link
        gpu["links"].append(link)
    for key, value in fields.items():
        if isinstance(value, dict):
            have = link.setdefault(key, {})
            if any(name in have for name in value):
                return False
            have.update(value)
        elif key in link:
            return False
        else:
            link[key] = value
    return True


def _parse(text, tool):
    if not isinstance(text, str):
        raise ParseError(tool, "expected text, got %s" % type(text).__name__)
    line_re, convert = _FORMS[tool]
    gpus, unparsed = [], []
    result = {"gpus": gpus, "unparsed": unparsed, "partial": False}
    current = None
    last_unread = False
    for line_no, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        last_unread = False
        header = _HEADER_RE.match(line) if not raw[:1].isspace() else None
        if header:
            current = {"index": int(header.group(1)), "name": header.group(2).strip() or None,
                       "uuid": header.group(3), "links": [], "messages": [], "partial": False, "_by_number": {}}
            if any(gpu["index"] == current["index"] for gpu in gpus):
                unparsed.append("line %d: GPU %d listed twice, the repeat is skipped" % (line_no, current["index"]))
                current["skip"] = True
            else:
                gpus.append(current)
            continue
        if current is not None and current.get("skip"):
            continue
        match = line_re.match(line)
        converted = convert(match) if match else None
        if converted and converted[0] <= _MAX_LINK and current is not None:
            if _merge(current, converted[0], converted[1]):
                continue
            unparsed.append("line %d: %s (GPU %d link %d listed twice)" % (line_no, line[:120], current["index"],
                                                                           converted[0]))
            current["partial"] = True
            continue
        printable = not any(ord(char) < 32 and char != "\t" for char in line)
        if printable and _BANNER_RE.match(line):
            unparsed.append("line %d: %s" % (line_no, line[:120]))  # a script's banner between blocks
            continue
        if current is not None and printable and not current["links"] and not _LINK_START_RE.match(line) \
                and not _ELISION_RE.match(line) and len(current["messages"]) < 8:
            current["messages"].append(line[:200])  # printed instead of the links ("Device does not have ...")
            continue
        unparsed.append("line %d: %s" % (line_no, line[:120] if printable else repr(line[:60])))
        last_unread = True
        if current is None:
            result["partial"] = True
        else:
            current["partial"] = True
    if not gpus and text.strip():
        raise ParseError(tool, "no 'GPU n: <name> (UUID: ...)' header in the output, so this is not %s output "
                               "(first line: %r)" % (tool, text.strip().splitlines()[0][:80]))
    if last_unread:
        result["partial"] = True  # the output ends in a line that cannot be read: cut short
    for gpu in gpus:
        del gpu["_by_number"]
        gpu["links"].sort(key=lambda link: link["link"])
    if len(unparsed) > _MAX_UNPARSED:
        result["unparsed"] = unparsed[:_MAX_UNPARSED] + ["... %d more unread lines" % (len(unparsed) - _MAX_UNPARSED)]
    return result


def parse_remote(text):
    """``nvidia-smi nvlink -R`` output as ``{"gpus": [{index, name, uuid, links: [{link, remote_bus_id,
    remote_link}], messages, partial}], "unparsed": [...], "partial": bool}``."""
    return _parse(text, TOOL_REMOTE)


def parse_capabilities(text):
    """``nvidia-smi nvlink -c`` output; each link is ``{link, capabilities: {p2p: true, ...}}`` (``CAPABILITIES``;
    a capability name not listed there is kept under its own snake_case key)."""
    return _parse(text, TOOL_CAPABILITIES)


def parse_throughput(text):
    """``nvidia-smi nvlink -gt d`` or ``-gt r`` output; each link is ``{link, counters: {data_tx_kib, data_rx_kib}}``
    (or ``raw_tx_kib`` / ``raw_rx_kib``)."""
    return _parse(text, TOOL_THROUGHPUT)


def _key(gpu):
    return gpu.get("uuid") or "#%s" % gpu.get("index")


def throughput_rate(before, after, window_s):
    """The throughput counters' growth between two parsed ``-gt`` reads ``window_s`` seconds apart: per GPU of
    ``after`` that ``before`` has too, per link and counter ``{before, after, delta_kib, gbs}`` (``gbs``: GB/s,
    10^9 bytes, None without a window). A counter that went down was reset between the reads: ``reset`` is true and
    its growth is the new value."""
    window_s = float(window_s) if window_s and window_s > 0 else None
    earlier = dict((_key(gpu), gpu) for gpu in before.get("gpus") or [])
    result = []
    for gpu in after.get("gpus") or []:
        old = earlier.get(_key(gpu))
        if old is None:
            continue
        old_links = dict((link["link"], link.get("counters") or {}) for link in old.get("links") or [])
        links = []
        for link in gpu.get("links") or []:
            was = old_links.get(link["link"])
            if was is None:
                continue
            counters = {}
            for name, value in sorted((link.get("counters") or {}).items()):
                if name not in was:
                    continue
                reset = value < was[name]
                delta = value if reset else value - was[name]
                counters[name] = {"before": was[name], "after": value, "delta_kib": delta, "reset": reset,
                                  "gbs": round(delta * 1024.0 / window_s / 1e9, 3) if window_s else None}
            links.append({"link": link["link"], "counters": counters})
        result.append({"index": gpu.get("index"), "name": gpu.get("name"), "uuid": gpu.get("uuid"), "links": links})
    return result


def remote_topology(remote, gpus=None):
    """Judge-ready facts of a parsed ``-R`` output against the node's own GPUs (``gpus``: the gpu facts' ``gpus``,
    each with ``index`` and ``pci_bus_id``): per GPU of the output ``{index, name, uuid, links, messages, peers,
    switches, one_way, shared, partial}``.

    ``peers`` lists the GPUs of the node its links reach (``{gpu, bus_id, links}``), ``switches`` every other device
    they reach (NVSwitches: ``{bus_id, links}``). ``one_way`` names the peers that list fewer or more links back
    than this GPU lists to them (a bridge or cable fault; not said when either block was read in part). ``shared``
    names the remote ports (bus id and link) that two links of the output claim: on an NVSwitch board a miswired or
    misreported tray.

    The local link numbers of ``-R`` count the active links (0, 1, 2, ...) while the remote link numbers are the
    remote device's own (the H100 PCIe capture: local 4 -> remote 6), so links are paired by device, not by number.
    """
    by_bus = {}
    for gpu in gpus or []:
        bus = normal_bus_id(gpu.get("pci_bus_id") or gpu.get("bus_id")) if isinstance(gpu, dict) else None
        if bus:
            by_bus[bus] = gpu.get("index")
    own_bus = dict((index, bus) for bus, index in by_bus.items())
    listed = dict((gpu["index"], gpu) for gpu in remote.get("gpus") or [])
    claims = {}
    for gpu in remote.get("gpus") or []:
        for link in gpu["links"]:
            if link.get("remote_bus_id") is not None:
                port = (link["remote_bus_id"], link["remote_link"])
                claims.setdefault(port, []).append("GPU %d link %d" % (gpu["index"], link["link"]))
    result = []
    for gpu in remote.get("gpus") or []:
        peers, switches, shared = {}, {}, []
        for link in gpu["links"]:
            bus = link.get("remote_bus_id")
            if bus is None:
                continue
            peer = by_bus.get(bus)
            if peer is None:
                switches[bus] = switches.get(bus, 0) + 1
            else:
                peers[peer] = peers.get(peer, 0) + 1
            owners = claims.get((bus, link["remote_link"])) or []
            text = "%s link %d is claimed by %s" % (bus, link["remote_link"], ", ".join(owners))
            if len(owners) > 1 and text not in shared:
                shared.append(text)
        one_way = []
        mine = own_bus.get(gpu["index"])
        for peer, count in sorted(peers.items()):
            other = listed.get(peer)
            if other is None or mine is None or gpu.get("partial") or other.get("partial"):
                continue
            back = sum(1 for item in other["links"] if item.get("remote_bus_id") == mine)
            if back != count:
                one_way.append("%d link(s) to GPU %d (%s), which lists %d back" % (count, peer, own_bus[peer], back))
        result.append({"index": gpu["index"], "name": gpu.get("name"), "uuid": gpu.get("uuid"),
                       "links": len(gpu["links"]), "messages": list(gpu.get("messages") or []),
                       "peers": [{"gpu": peer, "bus_id": own_bus[peer], "links": count}
                                 for peer, count in sorted(peers.items())],
                       "switches": [{"bus_id": bus, "links": count} for bus, count in sorted(switches.items())],
                       "one_way": one_way, "shared": shared, "partial": bool(gpu.get("partial"))})
    return result


def remote_facts(remote, gpus=None):
    """The ``nvlink_remote`` gpu fact of a parsed ``-R`` output: ``{gpus: remote_topology(...), unparsed,
    partial}`` (docs/gpu-facts.md)."""
    return {"gpus": remote_topology(remote, gpus), "unparsed": list(remote.get("unparsed") or []),
            "partial": bool(remote.get("partial"))}


def _capability_key(link):
    return tuple(sorted((link.get("capabilities") or {}).items()))


def capability_facts(capabilities):
    """The ``nvlink_capabilities`` gpu fact of a parsed ``-c`` output (docs/gpu-facts.md): ``{gpus: [{index, name,
    uuid, links, odd, messages, partial}], common, unparsed, partial}``.

    ``common`` is the capability set most links of the node report (``{p2p: true, ...}``): what is normal differs
    between drivers and boards (an H800 HGX reports ``Link is supported: false`` on every link, an H100 HGX ``true``),
    but the links of one node agree. ``odd`` lists each link of the GPU that reports otherwise: ``{link, differs:
    {capability: what it reports}}`` (a capability the link does not report at all, read in part, is not a
    difference). With a tie between two sets, none is common and no link is odd."""
    counts = {}
    for gpu in capabilities.get("gpus") or []:
        for link in gpu.get("links") or []:
            key = _capability_key(link)
            if key:
                counts[key] = counts.get(key, 0) + 1
    ranked = sorted(counts.items(), key=lambda item: -item[1])
    common = dict(ranked[0][0]) if ranked and (len(ranked) == 1 or ranked[0][1] > ranked[1][1]) else None
    gpus = []
    for gpu in capabilities.get("gpus") or []:
        odd = []
        for link in gpu.get("links") or []:
            differs = dict((name, value) for name, value in sorted((link.get("capabilities") or {}).items())
                           if common is not None and name in common and common[name] != value)
            if differs:
                odd.append({"link": link["link"], "differs": differs})
        gpus.append({"index": gpu["index"], "name": gpu.get("name"), "uuid": gpu.get("uuid"),
                     "links": len(gpu.get("links") or []), "odd": odd, "messages": list(gpu.get("messages") or []),
                     "partial": bool(gpu.get("partial"))})
    return {"gpus": gpus, "common": common, "unparsed": list(capabilities.get("unparsed") or []),
            "partial": bool(capabilities.get("partial"))}


def traffic_facts(before, after, window_s):
    """The ``nvlink_traffic`` bandwidth fact: the ``-gt d`` data counters read before and after a bandwidth test
    ``window_s`` seconds apart (``throughput_rate``), per GPU ``{index, name, uuid, links: [{link, tx_kib, rx_kib,
    reset}], partial}`` (growth in KiB; ``reset``: a counter went down between the reads), plus ``unparsed`` and
    ``partial`` of both reads and ``window_s``."""
    gpus = []
    partial_gpus = set()
    for read in (before, after):
        for gpu in read.get("gpus") or []:
            if gpu.get("partial"):
                partial_gpus.add(_key(gpu))
    for gpu in throughput_rate(before, after, window_s):
        links = []
        for link in gpu["links"]:
            counters = link["counters"]
            tx = counters.get("data_tx_kib") or counters.get("raw_tx_kib") or {}
            rx = counters.get("data_rx_kib") or counters.get("raw_rx_kib") or {}
            links.append({"link": link["link"], "tx_kib": tx.get("delta_kib"), "rx_kib": rx.get("delta_kib"),
                          "reset": bool(tx.get("reset") or rx.get("reset"))})
        gpus.append({"index": gpu["index"], "name": gpu.get("name"), "uuid": gpu.get("uuid"), "links": links,
                     "partial": _key(gpu) in partial_gpus})
    return {"gpus": gpus, "window_s": window_s,
            "unparsed": list(before.get("unparsed") or []) + list(after.get("unparsed") or []),
            "partial": bool(before.get("partial") or after.get("partial"))}
