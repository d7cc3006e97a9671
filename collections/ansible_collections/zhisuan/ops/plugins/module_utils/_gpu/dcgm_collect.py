# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""dcgm_diag's and dcgm_health's work: one dcgmi call each -> ``dcgm`` / ``dcgm_health`` facts.

``dcgmi diag`` exits non-zero when a test fails (rc 226 on DCGM 4.x) while still printing its JSON, so dcgmi runs
with any exit code accepted and the exit code only decides the error when there is no JSON to read.
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import OptionError, ParseError, ToolFailed, ZhisuanError
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import dcgm, dcgm_health
from ansible_collections.zhisuan.ops.plugins.module_utils._runner import attach, first_line, read_saved, run, tool_failed

# The options of zhisuan.ops.dcgm_diag and zhisuan.ops.dcgm_health; zhisuan.ops.node_collect takes the same for
# dcgm and dcgm_health. dcgm_diag's timeout has no default: it depends on the level.
DCGM_DIAG_ARGSPEC = dict(
    level=dict(type="int", default=1, choices=[1, 2, 3, 4]),
    gpus=dict(type="list", elements="int"),
    dcgmi_path=dict(type="str", default="dcgmi"),
    timeout=dict(type="int"),
    src=dict(type="path"),
)
DCGM_HEALTH_ARGSPEC = dict(
    dcgmi_path=dict(type="str", default="dcgmi"),
    src=dict(type="path"),
)

# Seconds per level: the nominal duration (shared/REFERENCE.md 1e: r1 seconds, r2 ~2 min, r3 ~15 min, r4 "extended",
# 1-2 h often quoted) with margin; dcgmi diag is known to hang, so every level has a hard limit.
DEFAULT_TIMEOUTS = {1: 120, 2: 600, 3: 1800, 4: 7200}


def _parse(result, parser):
    """Run ``parser`` on the output; a failure carries the command, rc and output, and a non-zero rc without a
    JSON document is the program failing (ToolFailed), not unreadable output."""
    try:
        return parser(result.stdout)
    except ZhisuanError as exc:
        if isinstance(exc, ParseError) and result.rc != 0:
            raise tool_failed(result, dcgm.TOOL, "exited with rc %s: %s" % (
                result.rc, first_line(result.stderr) if result.stderr.strip() else exc.detail))
        if isinstance(exc, ToolFailed) and result.rc != 0:
            raise tool_failed(result, dcgm.TOOL, "exited with rc %s: %s" % (result.rc, exc.detail))
        raise attach(exc, result)


def diag_argv(dcgmi_path, level, gpus=None):
    argv = [dcgmi_path, "diag", "-r", str(level), "-j"]
    if gpus:
        argv += ["-i", ",".join(str(gpu) for gpu in gpus)]
    return argv


def collect_dcgm_diag(module):
    params = module.params
    level = params["level"]
    gpus = params["gpus"] or []
    bad = [gpu for gpu in gpus if gpu < 0]
    if bad:
        raise OptionError("gpus", "gpus must be DCGM GPU ids (0, 1, ...), got %s" % bad)
    if params.get("src"):
        # a saved dcgmi diag -j output (a file a site sent): the same reader, nothing runs; its exit code is unknown
        facts = dcgm.parse_diag(read_saved(params["src"], dcgm.TOOL), level=level, warn=module.warn)
        facts["rc"] = None
        return {"dcgm": facts}
    timeout = params["timeout"] or DEFAULT_TIMEOUTS[level]
    result = run(diag_argv(params["dcgmi_path"], level, gpus), timeout=timeout, tool=dcgm.TOOL, ok_rcs=None)
    facts = _parse(result, lambda text: dcgm.parse_diag(text, level=level, warn=module.warn))
    facts["rc"] = result.rc
    if result.rc != 0 and facts["overall"] != "Fail":
        module.warn("dcgmi diag exited with rc %s although no test reported Fail" % result.rc)
    return {"dcgm": facts}


def collect_dcgm_health(module):
    params = module.params
    if params.get("src"):
        facts = dcgm_health.parse_health(read_saved(params["src"], dcgm.TOOL), warn=module.warn)
        facts["rc"] = None
        return {"dcgm_health": facts}
    result = run([params["dcgmi_path"], "health", "-c", "-j"], timeout=params["timeout"], tool=dcgm.TOOL, ok_rcs=None)
    facts = _parse(result, lambda text: dcgm_health.parse_health(text, warn=module.warn))
    facts["rc"] = result.rc
    return {"dcgm_health": facts}
