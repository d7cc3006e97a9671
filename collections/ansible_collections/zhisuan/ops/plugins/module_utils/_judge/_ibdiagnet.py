# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""The subnet's own diagnosis (``ibdiagnet``, family ``cabling``): the summary ``_net/ibdiagnet.py`` reads, as cluster
checks (issue 23: the IB fabric checked as a whole, beside the per-link view of ``ibnetdiscover`` / ``iblinkinfo``).

- ``cabling.ibdiagnet.links``: the stages about links - ``Discovery``, ``Links Check``, ``Speed / Width checks``,
  ``Port Counters`` (a link's symbol and error counters). Any error there is ``fail``, remedy ``check_cable``, with
  the stage's first ``-E-`` lines (``Link: sw041/U1/P24<-->... Unexpected width, actual link width is 2x``) as
  evidence; warnings only are ``warn`` (``investigate``); none is ``pass``.
- ``cabling.ibdiagnet.subnet``: every other stage (LIDs, the subnet manager, partition keys, nodes information,
  routing, temperature ...): errors are ``fail`` (``investigate``), warnings ``warn``, else ``pass``.
- An output cut before its ``Summary`` table (``partial``) has no counts: a stage whose ``-E-`` lines were read
  still fails, and the rest is ``warn`` (``investigate``: run it again), never a pass.
- ``cabling.ibdiagnet.readout``: ``error`` when the output could not be read (the file or the tool's failure).

Pure functions, standard library only.
"""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check

LINK_STAGES = ("Discovery", "Links Check", "Speed / Width checks", "Port Counters")
MAX_EVIDENCE = 10
HOST = "cluster"


def _is_link_stage(stage):
    return (stage or "").strip() in LINK_STAGES


def _group(summary, links):
    stages = [row for row in summary.get("stages") or [] if _is_link_stage(row.get("stage")) == links]
    messages = [message for message in summary.get("messages") or [] if _is_link_stage(message.get("stage")) == links]
    return stages, messages


def _check(check_id, summary, links, where):
    stages, messages = _group(summary, links)
    errors = sum(row["errors"] for row in stages)
    warnings = sum(row["warnings"] for row in stages)
    seen_errors = [message for message in messages if message["level"] == "error"]
    staged = set(m["stage"] for m in seen_errors if m.get("stage"))
    failing = sorted(set(row["stage"] for row in stages if row["errors"]) | staged)
    evidence = "\n".join("line %d (%s): %s" % (m["line"], m["stage"], m["text"])
                         for m in (seen_errors or messages)[:MAX_EVIDENCE])
    what = "links" if links else "subnet"
    remedy = "check_cable" if links else "investigate"
    if errors or seen_errors:
        return make_check(check_id, HOST, "fail", component="InfiniBand fabric", remedy=remedy,
                          observed="%d error(s) in %s" % (errors or len(seen_errors), ", ".join(failing)),
                          expected="no error", evidence=evidence,
                          message="ibdiagnet%s found %d error(s) in the fabric's %s stages (%s)"
                          % (where, errors or len(seen_errors), what, ", ".join(failing)))
    if summary.get("partial"):
        return make_check(check_id, HOST, "warn", component="InfiniBand fabric", observed="output cut short",
                          expected="a complete ibdiagnet output", evidence="; ".join(summary.get("warnings") or []),
                          message="ibdiagnet%s: the output ends before its Summary table, so the %s stages could "
                          "not be confirmed; run it again" % (where, what))
    if warnings:
        named = ", ".join(row["stage"] for row in stages if row["warnings"])
        return make_check(check_id, HOST, "warn", component="InfiniBand fabric",
                          observed="%d warning(s) in %s" % (warnings, named), expected="no warning",
                          evidence=evidence,
                          message="ibdiagnet%s found %d warning(s) in the fabric's %s stages (%s)"
                          % (where, warnings, what, named))
    return make_check(check_id, HOST, "pass", component="InfiniBand fabric", observed="no error, no warning",
                      expected="no error",
                      message="ibdiagnet%s found no error in the fabric's %s stages (%s)"
                      % (where, what, ", ".join(row["stage"] for row in stages) or "none reported"))


def judge_ibdiagnet(summary, error=None, source=None):
    """Cluster checks from an ``ibdiagnet`` summary (``parse_ibdiagnet``'s), or the readout error."""
    where = " (%s)" % source if source else ""
    if error or not isinstance(summary, dict):
        return [make_check("cabling.ibdiagnet.readout", HOST, "error", component="InfiniBand fabric",
                           observed="not read", expected="an ibdiagnet output",
                           message="ibdiagnet%s: %s" % (where, error or "no summary"))]
    return [_check("cabling.ibdiagnet.links", summary, True, where),
            _check("cabling.ibdiagnet.subnet", summary, False, where)]
