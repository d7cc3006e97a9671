# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""``gpu.nvlink.capabilities``: what each NVLink of one GPU can do, from ``nvidia-smi nvlink -c`` (facts
``nvlink_capabilities``, docs/gpu-facts.md). Read with ``nvlink -R`` (``gpu_info``'s ``nvlink_remote``) or from a saved
file (``nvlink_capabilities_src``); judged only when it was read.

What is normal differs between drivers and boards (the real H800 capture reports ``Link is supported: false`` on
every link, the H100 one ``true``), so a link is judged against the set most links of the node report (``common``):

* a link that reports otherwise (``odd``: P2P, system memory access, atomics or SLI off where its siblings have them)
  -> ``fail``, ``reset_gpu``: the link trained without them, so P2P traffic over it fails or falls back to PCIe;
  reset the GPU to retrain its links, and if the link stays odd the baseboard, bridge or NVSwitch port is at fault;
* the GPU's block, or the output, read in part -> ``warn``, ``investigate`` (read ``nvidia-smi nvlink -c`` again);
* no links (``Device does not have or support Nvlink``) -> ``skip``;
* else ``pass``, naming the common set.
"""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._gpu_base import skipped_without_links, window_entry
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._util import evidence_of, plural

CHECK_ID = "gpu.nvlink.capabilities"


def _set_text(caps):
    if not caps:
        return "no common set"
    return ", ".join("%s=%s" % (name, "true" if value else "false") for name, value in sorted(caps.items()))


def nvlink_capability_checks(ctx, facts):
    """Add ``gpu.nvlink.capabilities`` for the GPU of ``ctx`` (a ``GpuChecks``) when ``nvlink -c`` was read."""
    found = window_entry(ctx, facts, "nvlink_capabilities", CHECK_ID, "nvidia-smi nvlink -c could not be read",
                         "uuid")
    if found is None:
        return
    data, entry = found
    label = ctx.label
    common = data.get("common")
    expected = "every link reports the node's common capabilities (%s)" % _set_text(common)
    if skipped_without_links(ctx, CHECK_ID, "nvlink_capabilities", "nvidia-smi nvlink -c", entry, expected):
        return
    odd = entry.get("odd") or []
    evidence = evidence_of(("links", entry.get("links")), ("common", _set_text(common)))
    if odd:
        said = ["link %s: %s" % (item.get("link"), _set_text(item.get("differs"))) for item in odd]
        ctx.add(CHECK_ID, "fail", observed=plural(len(odd), "odd link"), expected=expected,
                message="%s: %s of %s report(s) capabilities the node's other links do not (%s): the link trained "
                        "without them, so peer traffic over it fails or falls back to PCIe; drain the node, reset the "
                        "GPU (nvidia-smi -r) and read nvidia-smi nvlink -c again; if the link stays odd, the "
                        "baseboard, bridge or NVSwitch port is at fault" % (
                            label, plural(len(odd), "link"), entry.get("links"), "; ".join(said[:6])),
                remedy="reset_gpu", evidence=evidence + "; " + "; ".join(said[:12]))
        return
    if entry.get("partial") or data.get("partial"):
        unread = data.get("unparsed") or []
        ctx.add(CHECK_ID, "warn", observed=plural(entry.get("links") or 0, "link") + " read", expected=expected,
                message="%s: nvidia-smi nvlink -c was read in part (%s); the links read agree; read it again" % (
                    label, "; ".join(unread[:3]) or "a line could not be read"),
                remedy="investigate", evidence=evidence + "; partial")
        return
    if common is None:
        ctx.add(CHECK_ID, "warn", observed=plural(entry.get("links") or 0, "link"), expected=expected,
                message="%s: the node's NVLinks split evenly between two capability sets, so none is the norm; read "
                        "nvidia-smi nvlink -c on every GPU and compare with a healthy node of the model" % label,
                remedy="investigate", evidence=evidence)
        return
    ctx.add(CHECK_ID, "pass", observed=plural(entry.get("links") or 0, "link"), expected=expected,
            message="%s: %s report the node's common capabilities (%s)" % (
                label, plural(entry.get("links") or 0, "NVLink"), _set_text(common)),
            evidence=evidence)
