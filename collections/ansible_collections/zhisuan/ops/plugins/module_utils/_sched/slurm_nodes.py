# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Slurm as the platform and the jobs on it: pure parsers of ``scontrol -o show node`` (through slurm.py, with the
GPU count of ``Gres=``), ``scontrol -o show partition``, ``scontrol -o show job`` and the job completion log of
``JobCompType=jobcomp/filetxt``; and the collectors of slurm_node_info and (for Slurm) job_log.

``gres_gpus("gpu:8")`` = 8, ``gres_gpus("gpu:a100:4(S:0-1),gpu:h100:4")`` = 8 (every ``gpu`` entry, typed or not).
"""

import re

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError, ToolFailed
from ansible_collections.zhisuan.ops.plugins.module_utils._runner import read_saved, run
from ansible_collections.zhisuan.ops.plugins.module_utils._sched.scontrol_text import one_line, records
from ansible_collections.zhisuan.ops.plugins.module_utils._sched.slurm import _fields, parse_scontrol_line

_GRES_GPU = re.compile(r"^gpu(?::[^:,()]+)?:(?P<count>\d+)(?:\([^)]*\))?$")
_DURATION = re.compile(r"^(?:(?P<d>\d+)-)?(?:(?P<h>\d+):)?(?P<m>\d+):(?P<s>\d+)$")


def gres_gpus(gres):
    """The GPUs a ``Gres=`` value configures (None when it names none)."""
    if not gres or gres == "(null)":
        return None
    total = None
    for part in re.split(r",(?![^()]*\))", gres):
        match = _GRES_GPU.match(part.strip())
        if match:
            total = (total or 0) + int(match.group("count"))
    return total


def parse_nodes(text, warnings=None):
    """``scontrol -o show node`` or the multi-line ``scontrol show node`` (scontrol_text.records) -> {name: node}
    (slurm.py's node dict plus ``gpus``). A record it cannot read is a warning naming its line (appended to
    ``warnings``), never the refusal of the others; only an output without one readable node raises."""
    out = {}
    problems = []
    for number, record in records(text or ""):
        try:
            node = parse_scontrol_line(record)
        except ParseError as exc:
            problems.append("line %d: %s" % (number, exc.detail))
            continue
        node["gpus"] = gres_gpus(node.get("gres"))
        out[node["name"]] = node
    if not out:
        raise ParseError("scontrol", "no node in the output of 'scontrol show node'%s"
                         % ("; %s" % problems[0] if problems else ""))
    if warnings is not None:
        warnings.extend(problems[:50])
    return out


def expand_hostlist(text):
    """``node[01-04,07],gpu1`` -> the names (Slurm's hostlist syntax, one bracket level)."""
    names = []
    for part in re.findall(r"[^,\[]+(?:\[[^\]]*\])?[^,]*", text or ""):
        match = re.match(r"^(?P<pre>[^\[]*)\[(?P<ranges>[^\]]*)\](?P<post>.*)$", part)
        if not match:
            names.append(part)
            continue
        for item in match.group("ranges").split(","):
            lo, dummy, hi = item.partition("-")
            if not lo.isdigit() or (hi and not hi.isdigit()):
                raise ParseError("scontrol", "not a Slurm host list: %r" % text[:120])
            end = int(hi) if hi else int(lo)
            if end - int(lo) > 100000:
                raise ParseError("scontrol", "host list range too large: %r" % item)
            for number in range(int(lo), end + 1):
                names.append("%s%0*d%s" % (match.group("pre"), len(lo), number, match.group("post")))
    return names


def parse_partitions(text):
    """``scontrol -o show partition`` -> {name: {state, nodes: [...], default}}."""
    out = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        fields = _fields(line)
        if "PartitionName" not in fields or "State" not in fields:
            raise ParseError("scontrol", "no PartitionName= or State= in a line of 'scontrol -o show partition': %r" % line[:120])
        out[fields["PartitionName"]] = {"state": fields["State"], "nodes": expand_hostlist(fields.get("Nodes")),
                                        "default": fields.get("Default") == "YES"}
    return out


def duration_s(text):
    """Slurm's ``[D-]HH:MM:SS`` / ``MM:SS`` -> seconds (None for UNLIMITED, Unknown...)."""
    match = _DURATION.match(text or "")
    if not match:
        return None
    parts = dict((key, int(value)) if value else (key, 0) for key, value in match.groupdict().items())
    return parts["d"] * 86400 + parts["h"] * 3600 + parts["m"] * 60 + parts["s"]


def _none(value):
    return None if value in (None, "", "(null)", "Unknown", "None", "N/A") else value


def parse_job(text):
    """``scontrol -o show job ID`` -> {id, name, state, reason, nodes, batch_host, start, end, run_s, restarts,
    stdout, stderr, exit_code, requeue}."""
    line = next((line for line in text.splitlines() if line.startswith("JobId=")), None)
    if line is None:
        raise ParseError("scontrol", "no JobId= line in 'scontrol -o show job': %r" % text[:120])
    fields = _fields(line)
    if "JobState" not in fields:
        raise ParseError("scontrol", "no JobState= in 'scontrol -o show job': %r" % line[:120])
    restarts = fields.get("Restarts")
    return {"id": fields["JobId"], "name": _none(fields.get("JobName")), "state": fields["JobState"],
            "reason": _none(fields.get("Reason")), "nodes": expand_hostlist(_none(fields.get("NodeList"))),
            "batch_host": _none(fields.get("BatchHost")), "start": _none(fields.get("StartTime")),
            "end": _none(fields.get("EndTime")), "run_s": duration_s(fields.get("RunTime")),
            "restarts": int(restarts) if restarts and restarts.isdigit() else None,
            "stdout": _none(fields.get("StdOut")), "stderr": _none(fields.get("StdErr")),
            "exit_code": _none(fields.get("ExitCode")), "requeue": fields.get("Requeue") == "1"}


def parse_jobcomp(text):
    """The job completion log of ``jobcomp/filetxt``: one record per attempt's end (a requeued attempt is written
    with ``JobState=PENDING``/``REQUEUED``) -> a list of {id, name, state, start, end, nodes, node_count}."""
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        fields = _fields(line)
        if "JobId" not in fields or "JobState" not in fields:
            raise ParseError("jobcomp", "line %d of the job completion log has no JobId= or JobState=: %r"
                             % (number, line[:120]))
        count = fields.get("NodeCnt")
        out.append({"id": fields["JobId"], "name": _none(fields.get("Name")), "state": fields["JobState"],
                    "start": _none(fields.get("StartTime")), "end": _none(fields.get("EndTime")),
                    "nodes": expand_hostlist(_none(fields.get("NodeList"))),
                    "node_count": int(count) if count and count.isdigit() else None,
                    "submit": _none(fields.get("SubmitTime"))})
    return out


def _scontrol(scontrol, args, timeout):
    res = run([scontrol, "-o"] + list(args), timeout=timeout, tool="scontrol", ok_rcs=(0, 1))
    if res.rc != 0:
        text = (res.stderr + res.stdout).strip()
        raise ToolFailed("scontrol", "'scontrol %s' exited with rc %s: %s" % (" ".join(args), res.rc, text.splitlines()[0] if text else "no output"),
                         cmd=res.argv, rc=res.rc, stdout=res.stdout, stderr=res.stderr)
    return res.stdout


def collect(scontrol="scontrol", timeout=60, src=None, partition_src=None):
    """``{nodes, partitions, warnings}`` of the whole cluster, through the seam, or from saved outputs (``src``: a
    ``scontrol show node`` either form; ``partition_src``: ``scontrol -o show partition``)."""
    warnings = []
    nodes = parse_nodes(read_saved(src, "scontrol", "the saved output", ToolFailed) if src else _scontrol(scontrol, ["show", "node"], timeout), warnings)
    if partition_src:
        partitions = parse_partitions(one_line(read_saved(partition_src, "scontrol", "the saved output", ToolFailed)))
    elif src:
        partitions = {}
    else:
        partitions = parse_partitions(_scontrol(scontrol, ["show", "partition"], timeout))
    return {"nodes": nodes, "partitions": partitions, "warnings": warnings}


def collect_slurm_facts(module):
    """The runner of zhisuan.ops.slurm_node_info."""
    params = module.params
    facts = collect(params["scontrol_path"], params["timeout"], params.get("src"), params.get("partition_src"))
    for warning in facts["warnings"][:10]:
        module.warn("scontrol show node: %s" % warning)
    return {"slurm": facts}


def read_job(job_id, scontrol="scontrol", timeout=60):
    return parse_job(_scontrol(scontrol, ["show", "job", str(job_id)], timeout))
