# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""gpu_bandwidth's work: one nvbandwidth run, one CUDA samples ``bandwidthTest`` run per GPU, or a saved output of
either -> ``bandwidth`` facts (nvbandwidth's shape: the same rules judge both). With ``nvlink_traffic`` the NVLink
data counters (``nvidia-smi nvlink -gt d``) are read before and after the nvbandwidth run (``nvlink_traffic``, judged
as ``gpu.nvlink.traffic``); a failing read spoils that fact only (``nvlink_traffic_error``)."""

import time

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import OptionError, ZhisuanError
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import bandwidthtest, nvbandwidth, nvlink_info
from ansible_collections.zhisuan.ops.plugins.module_utils._runner import attach, read_saved, run, tool_failed

# The options of zhisuan.ops.gpu_bandwidth; zhisuan.ops.node_collect takes the same for gpu_bandwidth.
GPU_BANDWIDTH_ARGSPEC = dict(
    nvbandwidth_path=dict(type="str", default="nvbandwidth"),
    testcases=dict(type="list", elements="str"),
    src=dict(type="path"),
    timeout=dict(type="int", default=900),
    tool=dict(type="str", default="nvbandwidth", choices=["nvbandwidth", "bandwidthTest"]),
    bandwidthtest_path=dict(type="str", default="bandwidthTest"),
    devices=dict(type="list", elements="int"),
    nvlink_traffic=dict(type="bool", default=False),
    nvidia_smi_path=dict(type="str", default="nvidia-smi"),
)
# nvidia-smi nvlink -gt d answers at once; a read that takes longer than this is hung
_TRAFFIC_TIMEOUT = 60
_BANDWIDTHTEST_ARGS = ["--htod", "--dtoh", "--memory=pinned", "--mode=quick"]

# The testcases the rules judge: host<->device over PCIe (or C2C) and device<->device reads (NVLink or PCIe P2P).
DEFAULT_TESTCASES = ("host_to_device_memcpy_ce", "device_to_host_memcpy_ce", "device_to_device_memcpy_read_ce")


def build_argv(program, testcases):
    argv = [program]
    for testcase in testcases:
        argv += ["-t", testcase]
    return argv


def _facts_of(result, parser):
    """The facts of one run of a bandwidth tool (``parser``: the nvbandwidth or bandwidthtest module). Output it
    cannot read is a failed run when the exit is non-zero, else a ParseError; a non-zero exit is a failed run unless
    a copy did not verify: a copy whose data did not verify exits non-zero too, and that is a finding (judged fail),
    not a tool failure."""
    try:
        facts = parser.parse(result.stdout)
    except ZhisuanError as exc:
        if result.rc != 0:
            raise tool_failed(result, parser.TOOL)
        raise attach(exc, result)
    if result.rc != 0 and not facts.get("verification_failures"):
        raise tool_failed(result, parser.TOOL, tail=True)
    return facts


def run_nvbandwidth(program, testcases, timeout):
    """Run nvbandwidth once; its facts plus the command. Raises ToolNotFound / ToolTimeout / ToolFailed / ParseError."""
    result = run(build_argv(program, testcases), timeout=timeout, tool=nvbandwidth.TOOL, ok_rcs=None)
    facts = _facts_of(result, nvbandwidth)
    facts["rc"] = result.rc
    facts["cmd"] = result.argv
    return facts


def run_bandwidthtest(program, devices, timeout):
    """One ``bandwidthTest --device=N`` run per GPU; facts in nvbandwidth's shape. A run whose copy failed its own
    check (``Result = FAIL``, non-zero exit) is kept as a verification failure, not raised."""
    runs = {}
    for index in devices:
        result = run([program, "--device=%d" % index] + _BANDWIDTHTEST_ARGS, timeout=timeout, tool=bandwidthtest.TOOL,
                     ok_rcs=None)
        runs[index] = _facts_of(result, bandwidthtest)
    facts = bandwidthtest.as_nvbandwidth(runs)
    facts["cmd"] = [program] + _BANDWIDTHTEST_ARGS
    return facts


def saved_bandwidthtest(text):
    """A saved ``bandwidthTest`` output (one run, or several runs one after the other): each run's GPU is the
    ``Device N:`` it prints."""
    runs = {}
    chunks = [chunk for chunk in text.split("[CUDA Bandwidth Test]") if chunk.strip()]
    for position, chunk in enumerate(chunks):
        facts = bandwidthtest.parse(("[CUDA Bandwidth Test]" if position or text.lstrip().startswith("[CUDA") else "")
                                    + chunk)
        index = facts["devices"][0]["index"] if facts["devices"] else position
        runs[index] = facts
    return bandwidthtest.as_nvbandwidth(runs)


def _traffic_read(nvidia_smi_path, timeout):
    result = run([nvidia_smi_path, "nvlink", "-gt", "d"], timeout=min(timeout, _TRAFFIC_TIMEOUT),
                 tool=nvlink_info.TOOL_THROUGHPUT)
    try:
        return nvlink_info.parse_throughput(result.stdout)
    except ZhisuanError as exc:
        raise attach(exc, result)


def with_traffic(measure, nvidia_smi_path, timeout):
    """Run ``measure()`` (the nvbandwidth run, returning its facts) between two reads of the NVLink data counters;
    the facts with ``nvlink_traffic`` (``nvlink_info.traffic_facts``) and ``nvlink_traffic_error``."""
    before = error = None
    try:
        before = _traffic_read(nvidia_smi_path, timeout)
    except ZhisuanError as exc:
        error = "before the test: %s" % exc.message
    started = time.monotonic()
    facts = measure()
    elapsed = round(time.monotonic() - started, 1)
    facts["nvlink_traffic"] = None
    facts["nvlink_traffic_error"] = error
    if error is None:
        try:
            after = _traffic_read(nvidia_smi_path, timeout)
        except ZhisuanError as exc:
            facts["nvlink_traffic_error"] = "after the test: %s" % exc.message
            return facts
        facts["nvlink_traffic"] = nvlink_info.traffic_facts(before, after, elapsed)
    return facts


def collect_bandwidth(module):
    params = module.params
    if params.get("tool") == "bandwidthTest":
        if params["src"]:
            facts = saved_bandwidthtest(read_saved(params["src"], nvbandwidth.TOOL))
            facts["cmd"] = None
        else:
            if not params.get("devices"):
                raise OptionError("devices", "devices (the GPU indexes to measure) is required with "
                                  "tool=bandwidthTest")
            facts = run_bandwidthtest(params["bandwidthtest_path"], params["devices"], params["timeout"])
        return {"bandwidth": facts}
    testcases = params["testcases"] or list(DEFAULT_TESTCASES)
    bad = [name for name in testcases if not name.replace("_", "").isalnum()]
    if bad:
        raise OptionError("testcases", "testcases must be nvbandwidth testcase names, got %s" % bad)
    if params["src"]:
        facts = nvbandwidth.parse(read_saved(params["src"], nvbandwidth.TOOL))
        facts["cmd"] = None
    elif params.get("nvlink_traffic"):
        facts = with_traffic(lambda: run_nvbandwidth(params["nvbandwidth_path"], testcases, params["timeout"]),
                             params.get("nvidia_smi_path") or "nvidia-smi", params["timeout"])
    else:
        facts = run_nvbandwidth(params["nvbandwidth_path"], testcases, params["timeout"])
    return {"bandwidth": facts}
