# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""gpu_info's work: one nvidia-smi round trip (or a saved dump) → normalised facts.

The same run also reads ``nvidia-smi nvlink -s`` (option ``nvlink``) into each GPU's ``nvlink`` fact and, with
``nvlink_errors_window`` > 0, ``nvidia-smi nvlink -e`` twice that many seconds apart into ``nvlink_errors`` (the
counters' growth over the window), and with ``throttle_window`` > 0 a second ``nvidia-smi -q -x`` that many seconds
after the first into ``throttle_window`` (the clocks event reasons counters' growth). The first ``-q -x`` call is the
one that must work: when only an nvlink call fails, the
facts are still returned, with the reason in ``nvlink_error`` / ``nvlink_errors_error``, so the judge turns that into
an ``error`` check for NVLink alone. With ``nvlink_remote`` (or ``nvlink_remote_src`` beside ``src``) it also reads
``nvidia-smi nvlink -R`` into ``nvlink_remote``: where each GPU's links lead (``nvlink_info.remote_facts``), and
``nvidia-smi nvlink -c`` into ``nvlink_capabilities`` (``nvlink_info.capability_facts``; ``nvlink_capabilities_src``
beside ``src``), each with the reason in its ``*_error`` when that read fails.
"""

import time

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import OptionError, ParseError, ZhisuanError
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import (
    nvidia_smi, nvlink, nvlink_errors, nvlink_info, nvml,
)
from ansible_collections.zhisuan.ops.plugins.module_utils._runner import attach, read_saved, run, tool_failed

# The options of zhisuan.ops.gpu_info (besides the shared timeout); zhisuan.ops.node_collect takes the same for gpu.
GPU_INFO_ARGSPEC = dict(
    nvidia_smi_path=dict(type="str", default="nvidia-smi"),
    src=dict(type="path"),
    nvlink_src=dict(type="path"),
    nvlink=dict(type="bool", default=True),
    nvlink_remote_src=dict(type="path"),
    nvlink_remote=dict(type="bool", default=False),
    nvlink_capabilities_src=dict(type="path"),
    nvlink_errors_window=dict(type="int", default=0),
    throttle_window=dict(type="int", default=0),
    source=dict(type="str", choices=["nvidia-smi", "nvml"], default="nvidia-smi"),
)


def read_nvlink(nvidia_smi_path, timeout, warn=None):
    """Run ``nvidia-smi nvlink -s`` and parse it. Raises a ZhisuanError (tool ``nvidia-smi nvlink``).

    A non-zero exit is accepted when the output still has a GPU block (the driver prints per-GPU refusals such as
    the MIG one as messages); otherwise it is a ToolFailed.
    """
    result = run([nvidia_smi_path, "nvlink", "-s"], timeout=timeout, tool=nvlink.TOOL, ok_rcs=None)
    if result.rc == 0:
        return nvlink.parse_status(result.stdout, warn=warn)
    try:
        status = nvlink.parse_status(result.stdout, warn=warn)
    except ParseError:
        status = []
    if status and warn is not None:
        warn("nvidia-smi nvlink -s exited with rc %s but printed the state of %d GPU(s); kept"
             % (result.rc, len(status)))
    if not status:
        raise tool_failed(result, nvlink.TOOL)
    return status


def with_nvlink(facts, nvidia_smi_path, timeout, warn=None):
    """``facts`` with each GPU's ``nvlink`` fact and ``nvlink_error`` (None, or why the nvlink call failed)."""
    try:
        status = read_nvlink(nvidia_smi_path, timeout, warn=warn)
    except ZhisuanError as exc:
        result = nvlink.attach(facts, [])
        result["nvlink_error"] = exc.message
        return result
    result = nvlink.attach(facts, status, warn=warn)
    result["nvlink_error"] = None
    return result


def _nvlink_errors_read(nvidia_smi_path, timeout):
    result = run([nvidia_smi_path, "nvlink", "-e"], timeout=timeout, tool=nvlink_errors.TOOL)
    try:
        return nvlink_errors.parse(result.stdout)
    except ZhisuanError as exc:
        raise attach(exc, result)


def _nvlink_errors_growth(first, second, window_s):
    return {"window_s": window_s, "gpus": nvlink_errors.growth(first, second, window_s),
            "unparsed": second["unparsed"]}


def _throttle_read(facts, nvidia_smi_path, timeout, window_s):
    second = run([nvidia_smi_path, "-q", "-x"], timeout=timeout, tool="nvidia-smi")
    try:
        later = nvidia_smi.parse_xml(second.stdout)
    except ZhisuanError as exc:
        raise attach(exc, second)
    return nvidia_smi.throttle_growth(facts, later, window_s)


def with_windows(facts, nvidia_smi_path, timeout, nvlink_window, throttle_window, sleep=time.sleep):
    """``facts`` with the two collect windows, which run at the same time (the longer one's length in all, not their
    sum): ``nvlink_errors`` (``nvidia-smi nvlink -e`` read at the start and ``nvlink_window`` s later) and
    ``throttle_window`` (a second ``nvidia-smi -q -x`` ``throttle_window`` s after the one that made ``facts``), each
    None when not read, with its ``*_error``. A window of 0 is not read; one read that fails spoils its window only."""
    result = dict(facts)
    result.update(nvlink_errors=None, nvlink_errors_error=None, throttle_window=None, throttle_window_error=None)
    first = None
    if nvlink_window:
        try:
            first = _nvlink_errors_read(nvidia_smi_path, timeout)
        except ZhisuanError as exc:
            result["nvlink_errors_error"] = exc.message
    windows = (("nvlink_errors", nvlink_window if first else 0), ("throttle_window", throttle_window))
    due = sorted((window, name) for name, window in windows if window)
    waited = 0
    for window, name in due:
        sleep(window - waited)
        waited = window
        try:
            if name == "nvlink_errors":
                result[name] = _nvlink_errors_growth(first, _nvlink_errors_read(nvidia_smi_path, timeout), window)
            else:
                result[name] = _throttle_read(facts, nvidia_smi_path, timeout, window)
        except ZhisuanError as exc:
            result[name + "_error"] = exc.message
    return result


def collect_facts(nvidia_smi_path, timeout, with_links=True, warn=None):
    """One ``nvidia-smi -q -x`` (fatal on failure) plus, with ``with_links``, ``nvidia-smi nvlink -s``."""
    result = run([nvidia_smi_path, "-q", "-x"], timeout=timeout, tool="nvidia-smi")
    facts = nvidia_smi.parse_xml(result.stdout, warn=warn)
    if with_links:
        return with_nvlink(facts, nvidia_smi_path, timeout, warn=warn)
    return _no_nvlink(facts)


def _no_nvlink(facts):
    facts = nvlink.attach(facts, [])
    facts["nvlink_error"] = None
    return facts


def saved_nvlink(facts, path, warn=None):
    """``facts`` with each GPU's ``nvlink`` fact from a saved ``nvidia-smi nvlink -s`` output (``nvlink_src``).
    A file that cannot be read or holds no GPU block is the ``nvlink_error`` (an ``error`` check for NVLink alone),
    as a failing ``nvlink -s`` call is."""
    try:
        status = nvlink.parse_status(read_saved(path, nvlink.TOOL), warn=warn)
    except ZhisuanError as exc:
        result = nvlink.attach(facts, [])
        result["nvlink_error"] = "%s (file %s)" % (exc.message, path)
        return result
    result = nvlink.attach(facts, status, warn=warn)
    result["nvlink_error"] = None
    return result


# The NVLink topology reads of nvlink_remote: fact -> (nvidia-smi nvlink flag, tool, parser, facts of the parsed output)
_TOPOLOGY = (
    ("nvlink_remote", "-R", nvlink_info.TOOL_REMOTE, nvlink_info.parse_remote,
     lambda parsed, facts: nvlink_info.remote_facts(parsed, facts.get("gpus"))),
    ("nvlink_capabilities", "-c", nvlink_info.TOOL_CAPABILITIES, nvlink_info.parse_capabilities,
     lambda parsed, facts: nvlink_info.capability_facts(parsed)),
)


def _topology_read(nvidia_smi_path, flag, tool, parse, timeout):
    result = run([nvidia_smi_path, "nvlink", flag], timeout=timeout, tool=tool)
    try:
        return parse(result.stdout)
    except ZhisuanError as exc:
        raise attach(exc, result)


def with_remote(facts, nvidia_smi_path=None, timeout=None, path=None, capabilities_path=None):
    """``facts`` with ``nvlink_remote`` (``nvidia-smi nvlink -R``) and ``nvlink_capabilities`` (``nvlink -c``), each
    run (``nvidia_smi_path``) or read from its saved file (``path`` / ``capabilities_path``), and their ``*_error``;
    None when not asked for. A failing read spoils its own fact only."""
    result = dict(facts)
    for (fact, flag, tool, parse, to_facts), saved in zip(_TOPOLOGY, (path, capabilities_path)):
        result[fact] = result[fact + "_error"] = None
        if not nvidia_smi_path and not saved:
            continue
        try:
            if saved:
                parsed = parse(read_saved(saved, tool))
            else:
                parsed = _topology_read(nvidia_smi_path, flag, tool, parse, timeout)
        except ZhisuanError as exc:
            result[fact + "_error"] = "%s (file %s)" % (exc.message, saved) if saved else exc.message
            continue
        result[fact] = to_facts(parsed, facts)
    return result


def collect_gpu_facts(module):
    params = module.params
    if params["src"]:
        facts = nvidia_smi.parse(read_saved(params["src"], "nvidia-smi"), warn=module.warn)
        facts = saved_nvlink(facts, params["nvlink_src"], warn=module.warn) if params.get("nvlink_src") \
            else _no_nvlink(facts)
        return {"gpu": with_remote(with_windows(facts, None, None, 0, 0), path=params.get("nvlink_remote_src"),
                                   capabilities_path=params.get("nvlink_capabilities_src"))}
    if params.get("source") == "nvml":
        return {"gpu": with_remote(with_windows(_no_nvlink(nvml.read_facts()), None, None, 0, 0))}
    window = params.get("nvlink_errors_window") or 0
    throttle_window = params.get("throttle_window") or 0
    for name, value in (("nvlink_errors_window", window), ("throttle_window", throttle_window)):
        if value < 0:
            raise OptionError(name, "%s must be 0 (off) or a number of seconds, got %s" % (name, value))
    facts = collect_facts(params["nvidia_smi_path"], params["timeout"], with_links=params["nvlink"], warn=module.warn)
    facts = with_windows(facts, params["nvidia_smi_path"], params["timeout"], window, throttle_window)
    if params.get("nvlink_remote"):
        return {"gpu": with_remote(facts, params["nvidia_smi_path"], params["timeout"])}
    return {"gpu": with_remote(facts)}
