# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""gpu_burn's work: build the command line gpu-burn accepts, run it once through the seam, parse its output."""

import os
import time

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import OptionError, ToolNotFound, ZhisuanError
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import burn_watch, gpu_burn
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu.collect import collect_facts
from ansible_collections.zhisuan.ops.plugins.module_utils._runner import attach, first_line, resolve, run, tool_failed

# Seconds added to the burn duration for the default timeout: CUDA start-up and memory allocation on every GPU,
# plus the 30 s newer gpu_burn builds always wait after SIGTERM before they check their workers
# (SIGTERM_TIMEOUT_THRESHOLD_SECS in gpu_burn-drv.cpp).
TIMEOUT_MARGIN_S = 120


def default_timeout(duration):
    """gpu_burn runs for ``duration`` seconds, plus start-up and the final report."""
    return duration + TIMEOUT_MARGIN_S


def build_argv(program, duration, doubles=False, tensor_cores=False):
    """gpu_burn's command line: flags first, the duration in seconds LAST (gpu_burn reads the run length from the
    argument after the flags it counted; ``-d`` doubles, ``-tc`` tensor cores — README/``showHelp``)."""
    argv = [program]
    if doubles:
        argv.append("-d")
    if tensor_cores:
        argv.append("-tc")
    argv.append(str(int(duration)))
    return argv


def run_burn(program, duration, doubles=False, tensor_cores=False, timeout=None, workdir=None, warn=None):
    """Run gpu_burn once and return the ``burn`` facts. Raises ToolNotFound / ToolTimeout / ToolFailed / ParseError.

    gpu_burn loads its compare kernel (``compare.ptx``, ``compare.fatbin`` in newer builds) from the current
    directory, so it runs in ``workdir`` (default: the directory that holds the program).
    """
    if duration <= 0:
        raise ValueError("duration must be a positive number of seconds, got %s" % duration)
    path = resolve(program, gpu_burn.TOOL)
    workdir = workdir or os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(workdir):
        raise ToolNotFound(gpu_burn.TOOL, "working directory %s does not exist (gpu_burn needs its compare kernel "
                                          "there)" % workdir)
    timeout = timeout or default_timeout(duration)
    argv = build_argv(path, duration, doubles, tensor_cores)
    started = time.monotonic()
    result = run(argv, timeout=timeout, tool=gpu_burn.TOOL, ok_rcs=None, cwd=workdir)
    elapsed = time.monotonic() - started
    if result.rc != 0:
        # gpu_burn prints its verdict last: the tail of its output is kept (splitlines also splits its \r progress)
        reason = gpu_burn.failure_reason(result.stderr, result.stdout) or first_line(result.stderr, result.stdout)
        raise tool_failed(result, gpu_burn.TOOL, "exited with rc %s: %s" % (result.rc, reason), tail=True)
    try:
        facts = gpu_burn.parse(result.stdout, result.stderr, warn=warn)
    except ZhisuanError as exc:
        raise attach(exc, result, tail=True)
    if facts["doubles"] is None:
        facts["doubles"] = bool(doubles)
    if facts["tensor_cores"] is None:
        facts["tensor_cores"] = bool(tensor_cores)
    facts.update({
        "duration_s": int(duration),
        "elapsed_s": round(elapsed, 1),
        "cmd": result.argv,
        "workdir": workdir,
    })
    return facts


def watch_reader(nvidia_smi_path, timeout, warn=None):
    """What the sampler calls: one ``nvidia-smi -q -x`` (no NVLink call) -> ``gpu`` facts."""
    def read():
        return collect_facts(nvidia_smi_path, timeout, with_links=False, warn=warn)
    return read


def collect_burn(module):
    params = module.params
    if params["duration"] <= 0:
        raise OptionError("duration", "duration must be a positive number of seconds, got %s" % params["duration"])
    sample_s = params.get("sample_s") or 0
    if sample_s < 0:
        raise OptionError("sample_s", "sample_s must be 0 (no watch) or a number of seconds, got %s" % sample_s)
    if params.get("sample_timeout") is not None and params["sample_timeout"] <= 0:
        raise OptionError("sample_timeout", "sample_timeout must be a positive number of seconds, got %s"
                          % params["sample_timeout"])
    sampler = None
    if sample_s:
        sampler = burn_watch.Sampler(watch_reader(params["nvidia_smi_path"], params["sample_timeout"] or 60),
                                     sample_s, path=params.get("samples_path"))
        sampler.start()
    try:
        facts = run_burn(params["gpu_burn_path"], params["duration"], doubles=params["doubles"],
                         tensor_cores=params["tensor_cores"], timeout=params["timeout"], workdir=params["workdir"],
                         warn=module.warn)
    except ZhisuanError as exc:
        if sampler is not None:
            # the samples taken until the burn failed or timed out are kept with the failure
            sampler.stop(wait=(params["sample_timeout"] or 60) + 5)
            exc.result = dict(exc.result or {}, watch=sampler.facts())
        raise
    result = {"burn": facts}
    if sampler is not None:
        sampler.stop(wait=(params["sample_timeout"] or 60) + 5)
        result["watch"] = sampler.facts()
    return result
