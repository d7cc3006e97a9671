# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""nccl_test's work: run one nccl-tests binary on this node, or over several nodes through ``mpirun``, and parse it.

Single node: ``<op> -b MIN -e MAX -f FACTOR -g GPUS -c 0|1 -n ITERS`` (one process drives every GPU).
Multi-node: ``mpirun --hostfile F -np NODES*GPUS [-x VAR=value ...] [mpirun_args] <op> ... -g 1`` (one rank per
GPU), with the hostfile written from ``hosts`` (``<host> slots=<gpus per node>``, Open MPI's format) into a
private temporary directory that is removed afterwards.
"""

import os
import re
import shutil
import tempfile

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import OptionError, ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._net import nccl
from ansible_collections.zhisuan.ops.plugins.module_utils._runner import attach, first_line, run, tool_failed

_SIZE_RE = re.compile(r"^[1-9]\d*[KMGkmg]?$")
_ENV_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_HOST_RE = re.compile(r"^[A-Za-z0-9_.:\[\]-]+$")


def test_args(params, gpus):
    for key in ("min_bytes", "max_bytes"):
        if not _SIZE_RE.match(str(params[key])):
            raise ValueError("%s must be a byte count with an optional K, M or G suffix (e.g. 8G), got %r" % (key, params[key]))
    return ["-b", params["min_bytes"], "-e", params["max_bytes"], "-f", params["step_factor"], "-g", gpus,
            "-c", 1 if params["check"] else 0, "-n", params["iters"]] + (
                ["-w", params["warmup_iters"]] if params.get("warmup_iters") is not None else [])


def hostfile_text(hosts, slots):
    for host in hosts:
        if not _HOST_RE.match(host):
            raise ValueError("host %r is not a host name or address" % host)
    if len(set(hosts)) != len(hosts):
        raise ValueError("hosts lists a node twice: %s" % ", ".join(hosts))
    return "".join("%s slots=%d\n" % (host, slots) for host in hosts)


def build_argv(params, hostfile=None):
    """The command line of the run (``hostfile``: path of the written hostfile for a multi-node run)."""
    for name in params.get("env") or {}:
        if not _ENV_RE.match(name):
            raise ValueError("env: %r is not an environment variable name" % name)
    if params["gpus_per_node"] < 1:
        raise ValueError("gpus_per_node must be at least 1, got %s" % params["gpus_per_node"])
    program = params["nccl_tests_path"] or params["op"]
    if not hostfile:
        return [program] + test_args(params, params["gpus_per_node"])
    argv = [params["mpirun_path"], "--hostfile", hostfile, "-np", len(params["hosts"]) * params["gpus_per_node"]]
    for name in sorted(params.get("env") or {}):
        argv += ["-x", "%s=%s" % (name, params["env"][name])]
    return argv + list(params.get("mpirun_args") or []) + [program] + test_args(params, 1)


def _failed(tool, result, op):
    why = nccl.failure(result.stdout + "\n" + result.stderr) or first_line(result.stderr, result.stdout)
    return tool_failed(result, tool, "%s exited with rc %s: %s" % (op, result.rc, why))


def run_test(params, warn=None):
    """Run the test and return the ``nccl`` facts. Raises ToolNotFound/ToolTimeout/ToolFailed/ParseError."""
    hosts = list(params.get("hosts") or [])
    op = params["op"]
    workdir = None
    try:
        if len(hosts) > 1:
            text = hostfile_text(hosts, params["gpus_per_node"])
            workdir = tempfile.mkdtemp(prefix="zhisuan-nccl-")
            hostfile = os.path.join(workdir, "hostfile")
            with open(hostfile, "w") as handle:
                handle.write(text)
            argv, tool, env = build_argv(params, hostfile), "mpirun", None
        else:
            argv, tool, env = build_argv(params), nccl.TOOL, dict(params.get("env") or {})
        result = run(argv, timeout=params["timeout"], tool=tool, ok_rcs=None, env=env)
    finally:
        if workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    if result.rc != 0:
        raise _failed(tool, result, op)
    try:
        facts = nccl.parse(result.stdout, op=op, warn=warn)
    except ParseError as exc:
        raise attach(exc, result)
    facts["op"] = op
    facts["hosts_printed"] = facts["nodes"]
    if hosts:
        facts["nodes"] = hosts
    facts["gpus_per_node"] = params["gpus_per_node"]
    facts["command"] = " ".join(str(arg) for arg in result.argv)
    return facts


def collect_nccl(module):
    try:
        return {"nccl": run_test(module.params, warn=module.warn)}
    except ValueError as exc:
        raise OptionError("nccl_test", str(exc)) from exc  # an option the argspec cannot check (a size, a host, ...)
