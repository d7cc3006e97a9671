# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""gpu_bandwidth's work: one nvbandwidth run (or a saved output) -> ``bandwidth`` facts."""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import OptionError, ToolNotFound, ZhisuanError
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import nvbandwidth
from ansible_collections.zhisuan.ops.plugins.module_utils._runner import attach, run, tool_failed

# The options of zhisuan.ops.gpu_bandwidth; zhisuan.ops.node_collect takes the same for gpu_bandwidth.
GPU_BANDWIDTH_ARGSPEC = dict(
    nvbandwidth_path=dict(type="str", default="nvbandwidth"),
    testcases=dict(type="list", elements="str"),
    src=dict(type="path"),
    timeout=dict(type="int", default=900),
)

# The testcases the rules judge: host<->device over PCIe (or C2C) and device<->device reads (NVLink or PCIe P2P).
DEFAULT_TESTCASES = ("host_to_device_memcpy_ce", "device_to_host_memcpy_ce", "device_to_device_memcpy_read_ce")


def build_argv(program, testcases):
    argv = [program]
    for testcase in testcases:
        argv += ["-t", testcase]
    return argv


def read_saved(path):
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", "replace")
    except (IOError, OSError) as exc:
        raise ToolNotFound(nvbandwidth.TOOL, "cannot read saved output %s: %s" % (path, exc.strerror or exc))


def run_nvbandwidth(program, testcases, timeout):
    """Run nvbandwidth once; its facts plus the command. Raises ToolNotFound / ToolTimeout / ToolFailed / ParseError."""
    result = run(build_argv(program, testcases), timeout=timeout, tool=nvbandwidth.TOOL, ok_rcs=None)
    try:
        facts = nvbandwidth.parse(result.stdout)
    except ZhisuanError as exc:
        if result.rc != 0:
            raise tool_failed(result, nvbandwidth.TOOL)
        raise attach(exc, result)
    if result.rc != 0:
        raise tool_failed(result, nvbandwidth.TOOL, tail=True)
    facts["cmd"] = result.argv
    return facts


def collect_bandwidth(module):
    params = module.params
    testcases = params["testcases"] or list(DEFAULT_TESTCASES)
    bad = [name for name in testcases if not name.replace("_", "").isalnum()]
    if bad:
        raise OptionError("testcases", "testcases must be nvbandwidth testcase names, got %s" % bad)
    if params["src"]:
        facts = nvbandwidth.parse(read_saved(params["src"]))
        facts["cmd"] = None
    else:
        facts = run_nvbandwidth(params["nvbandwidth_path"], testcases, params["timeout"])
    return {"bandwidth": facts}
