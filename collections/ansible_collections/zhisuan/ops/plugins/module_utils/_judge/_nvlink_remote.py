# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""``gpu.nvlink.remote``: where one GPU's NVLinks lead, from ``nvidia-smi nvlink -R`` (facts ``nvlink_remote``,
docs/gpu-facts.md). Only judged when it was read (``gpu_info``'s ``nvlink_remote`` or ``nvlink_remote_src``).

* links listed on one side only - this GPU lists N links to a GPU of the node that lists a different number back
  (``one_way``) -> ``fail``, ``reseat`` (the NVLink bridge between the two: reseat or replace it);
* a remote port (bus id and link) that two links claim (``shared``) and no ``one_way`` -> ``fail``, ``investigate``
  (a miswired or misreported NVSwitch tray);
* the GPU's block, or the output, read in part (``partial``: an elided, damaged or cut line) -> ``warn``,
  ``investigate`` (read ``nvidia-smi nvlink -R`` again): the rest was judged, nothing in it failed;
* no links (a message such as ``Device does not have or support Nvlink``) -> ``skip``;
* else ``pass``, naming the GPUs and other devices (NVSwitches) the links reach.
"""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._gpu_base import skipped_without_links, window_entry
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._util import evidence_of, plural

CHECK_ID = "gpu.nvlink.remote"


def _reach(entry):
    parts = ["GPU %s (%s)" % (peer.get("gpu"), plural(peer.get("links") or 0, "link"))
             for peer in entry.get("peers") or []]
    switches = entry.get("switches") or []
    if switches:
        parts.append("%s (%s)" % (plural(len(switches), "other device"),
                                  ", ".join("%s x%s" % (item.get("bus_id"), item.get("links")) for item in switches[:8])
                                  + (", ..." if len(switches) > 8 else "")))
    return "; ".join(parts) or "nothing"


def nvlink_remote_checks(ctx, facts):
    """Add ``gpu.nvlink.remote`` for the GPU of ``ctx`` (a ``GpuChecks``) when ``nvlink -R`` was read."""
    found = window_entry(ctx, facts, "nvlink_remote", CHECK_ID, "nvidia-smi nvlink -R could not be read", "uuid")
    if found is None:
        return
    data, entry = found
    label = ctx.label
    expected = "every link's far end lists it back; no remote port claimed twice"
    if skipped_without_links(ctx, CHECK_ID, "nvlink_remote", "nvidia-smi nvlink -R", entry, expected):
        return
    reach = _reach(entry)
    one_way = entry.get("one_way") or []
    shared = entry.get("shared") or []
    evidence = evidence_of(("links", entry.get("links")), ("reach", reach))
    if one_way or shared:
        problems = one_way[:4] + shared[:4]
        to_gpu = bool(one_way)  # one_way is only said of links to a GPU of the node
        ctx.add(CHECK_ID, "fail", observed=plural(len(one_way) + len(shared), "mismatch"), expected=expected,
                message="%s: its NVLinks and their far ends disagree (%s): %s" % (
                    label, "; ".join(problems),
                    "reseat the NVLink bridge between the two GPUs, or replace it, and read nvidia-smi nvlink -R "
                    "again" if to_gpu else "check the NVSwitch trays and the fabric manager's topology, then read "
                    "nvidia-smi nvlink -R again"),
                remedy="reseat" if to_gpu else "investigate", evidence=evidence + "; " + "; ".join(problems))
        return
    if entry.get("partial") or data.get("partial"):
        unread = data.get("unparsed") or []
        ctx.add(CHECK_ID, "warn", observed=plural(entry.get("links") or 0, "link") + " read", expected=expected,
                message="%s: nvidia-smi nvlink -R was read in part (%s), the links read reach %s and agree; read it "
                        "again" % (label, "; ".join(unread[:3]) or "a line could not be read", reach),
                remedy="investigate", evidence=evidence + "; partial")
        return
    ctx.add(CHECK_ID, "pass", observed=plural(entry.get("links") or 0, "link"), expected=expected,
            message="%s: %s reach %s, each listed back" % (label, plural(entry.get("links") or 0, "NVLink"), reach),
            evidence=evidence)
