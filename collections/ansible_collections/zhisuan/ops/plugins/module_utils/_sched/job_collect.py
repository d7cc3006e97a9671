# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""The runner of zhisuan.ops.job_log: find a job's log, read its end, parse it (joblog.parse_log).

* Slurm: ``scontrol -o show job <id>`` gives the state, the nodes and ``StdOut=``; the file is read where the task
  runs (a login node or the controller that sees the shared file system); its modification time is the last log line.
* Kubernetes: ``kubectl get pods -n <ns> -l job-name=<id> -o json`` gives the job's pods and their nodes, and
  ``kubectl logs -n <ns> <pod> --all-containers --timestamps`` their logs; the newest time stamp is the last line.
* Slurm's accounting (``sacct_path``, or a saved output as ``sacct_src``): ``sacct --json -a -D -X -S <since>``
  (every attempt of every job in the window; an ``sacct`` without ``--json`` is asked ``-P`` instead) read by
  sacct.parse_sacct into ``job.accounting`` (the per-node counts of the job family) and, for this job, its attempts
  (the quality indicators). A failure of sacct is ``job.accounting_error``: the rest of the job is still read.
"""

import calendar
import os
import re
import time

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import (
    ParseError, ToolFailed, ToolNotFound, ZhisuanError)
from ansible_collections.zhisuan.ops.plugins.module_utils._runner import run
from ansible_collections.zhisuan.ops.plugins.module_utils._safe_parse import load_json, text_or_none
from ansible_collections.zhisuan.ops.plugins.module_utils._sched.joblog import parse_log
from ansible_collections.zhisuan.ops.plugins.module_utils._sched.sacct import parse_sacct
from ansible_collections.zhisuan.ops.plugins.module_utils._sched.slurm_nodes import parse_jobcomp, read_job

MAX_BYTES = 16 * 1024 * 1024
TAIL_LINES = 20
_STAMP = re.compile(r"^(?P<ts>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.\d+)?Z (?P<rest>.*)$")
RUNNING = ("RUNNING", "COMPLETING", "Running")


def read_tail(path, max_bytes=MAX_BYTES):
    """The last ``max_bytes`` of a file as text, and its modification time (epoch seconds)."""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - max_bytes))
            data = handle.read()
            mtime = os.fstat(handle.fileno()).st_mtime
    except (IOError, OSError) as exc:
        raise ToolFailed("job_log", "cannot read the job's output file %s: %s" % (path, exc))
    text = data.decode("utf-8", "replace")
    if size > max_bytes:
        text = text.split("\n", 1)[-1]
    return text, mtime, size


def _iso(epoch):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch)) if epoch else None


def _finish(job, text, last_epoch, now):
    parsed = parse_log(text)
    job.update(parsed)
    job["tail"] = [line[:300] for line in text.splitlines()[-TAIL_LINES:]]
    job["last_write"] = _iso(last_epoch)
    job["silent_s"] = round(max(0.0, now - last_epoch), 1) if last_epoch else None
    job["running"] = job.get("state") in RUNNING
    return job


def _from_jobcomp(job_id, records, exc):
    """A job slurmctld has forgotten (MinJobAge after its end) from its last completion record."""
    mine = [r for r in records if r["id"] == str(job_id)]
    if not mine:
        raise exc
    last = mine[-1]
    return {"id": last["id"], "name": last["name"], "state": last["state"], "reason": None, "nodes": last["nodes"],
            "batch_host": None, "start": last["start"], "end": last["end"], "run_s": None, "restarts": len(mine) - 1,
            "stdout": None, "stderr": None, "exit_code": None, "requeue": None, "source": "jobcomp"}


SACCT_FORMAT = "JobID,JobIDRaw,JobName,State,NodeList,Start,End,Submit,ElapsedRaw,ExitCode,Partition"
MAX_ACCOUNTING_JOBS = 20000


def _iso_utc(epoch):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(epoch)) if epoch else None


def read_sacct(sacct="sacct", since="now-7days", timeout=120, src=None, fields=None, delimiter=None):
    """``{form, version, jobs, warnings, truncated, window, source}`` of Slurm's accounting over the window, from
    ``sacct`` or a saved output (``src``: ``--json`` or ``-p``/``-P``, detected; ``fields``/``delimiter`` for a
    ``--noheader`` one)."""
    if src:
        text = read_tail(src, MAX_BYTES)[0]
        source = "file %s" % src
    else:
        base = [sacct, "-a", "-D", "-X", "-S", since, "-E", "now"]
        res = run(base + ["--json"], timeout=timeout, tool="sacct", ok_rcs=(0, 1, 2))
        if res.rc != 0 or not res.stdout.strip().startswith("{"):
            # an sacct built without the JSON data_parser (or older than 20.11): its -P table
            res = run(base + ["-P", "--format=" + SACCT_FORMAT], timeout=timeout, tool="sacct")
        text, source = res.stdout, "sacct"
    parsed = parse_sacct(text, fields, delimiter)
    if len(parsed["jobs"]) > MAX_ACCOUNTING_JOBS:
        parsed["warnings"].append("%d job records: the first %d are judged" % (len(parsed["jobs"]), MAX_ACCOUNTING_JOBS))
        parsed["jobs"] = parsed["jobs"][:MAX_ACCOUNTING_JOBS]
    parsed["window"] = {"since": None if src else since, "until": None}
    parsed["source"] = source
    return parsed


def _sacct_attempts(job_id, accounting):
    """This job's attempts in the accounting, as the quality indicators read completion records."""
    out = []
    for record in accounting["jobs"]:
        if str(job_id) in (record["id"], record["job_id"]):
            out.append({"id": str(job_id), "name": record["name"], "state": record["state"],
                        "start": _iso_utc(record["start"]), "end": _iso_utc(record["end"]), "nodes": record["nodes"],
                        "node_count": len(record["nodes"]) or None, "submit": _iso_utc(record["submit"])})
    return out


def _from_sacct(job_id, attempts, exc):
    """A job slurmctld has forgotten, from its last accounting record."""
    if not attempts:
        raise exc
    last = attempts[-1]
    return {"id": str(job_id), "name": last["name"], "state": last["state"], "reason": None, "nodes": last["nodes"],
            "batch_host": None, "start": last["start"], "end": last["end"], "run_s": None,
            "restarts": len(attempts) - 1, "stdout": None, "stderr": None, "exit_code": None, "requeue": None,
            "source": "sacct"}


def slurm_job(job_id, scontrol="scontrol", timeout=60, max_bytes=MAX_BYTES, now=None, jobcomp=None, log_path=None,
              accounting=None):
    """The job as slurmctld knows it; a job it has forgotten (its record is purged MinJobAge seconds after the end)
    from the completion log or the accounting, with its output file given as ``log_path``. Where there is no
    ``scontrol`` at all (an SRE judging the files a site sent: ``log_path`` and ``sacct_src``), the same."""
    records = parse_jobcomp(read_tail(jobcomp, max_bytes)[0]) if jobcomp else None
    attempts = _sacct_attempts(job_id, accounting) if accounting else None
    try:
        job = read_job(job_id, scontrol, timeout)
    except ToolFailed as exc:
        if "Invalid job id" not in (exc.stderr or "") + (exc.stdout or "") + exc.detail or (
                records is None and not attempts):
            raise
        job = _from_sacct(job_id, attempts, exc) if attempts else _from_jobcomp(job_id, records, exc)
    except ToolNotFound as exc:
        if records is None and not attempts:
            raise
        job = _from_sacct(job_id, attempts, exc) if attempts else _from_jobcomp(job_id, records, exc)
    if attempts:
        # the job's attempts in Slurm's accounting (sacct -D): the quality indicators' input
        job["attempts"] = attempts
    elif records is not None:
        # the attempts of this job in the completion log (jobcomp/filetxt): the quality indicators' accounting
        job["attempts"] = [r for r in records if r["id"] == job["id"]]
    if accounting:
        job["accounting"] = accounting
    job["scheduler"] = "slurm"
    path = log_path or job.get("stdout")
    if not path:
        raise ToolFailed("job_log", "job %s: slurmctld no longer knows it and no log_path was given (its StdOut= is "
                                    "only in slurmctld's record)" % job_id if job.get("source") == "jobcomp"
                         else "job %s has no StdOut= file (not a batch job?)" % job_id)
    text, mtime, size = read_tail(path, max_bytes)
    job["log"] = {"path": path, "bytes": size}
    return _finish(job, text, mtime, time.time() if now is None else now)


def _pods(text):
    doc = load_json(text, "kubectl", "'kubectl get pods -l job-name=' output is not JSON: %s")
    if not isinstance(doc, dict) or not isinstance(doc.get("items"), list):
        raise ParseError("kubectl", "'kubectl get pods -l job-name=' output has no 'items' list")
    pods = []
    for item in doc["items"]:
        item = item if isinstance(item, dict) else {}
        meta, spec, status = (item.get(k) if isinstance(item.get(k), dict) else {} for k in ("metadata", "spec", "status"))
        name = text_or_none(meta.get("name"))
        if name:
            pods.append({"name": name, "node": text_or_none(spec.get("nodeName")), "phase": text_or_none(status.get("phase"))})
    return pods


def k8s_job(job_id, namespace="default", kubectl="kubectl", kubeconfig=None, context=None, timeout=60, now=None):
    base = [kubectl] + (["--kubeconfig", kubeconfig] if kubeconfig else []) + (["--context", context] if context else [])
    pods = _pods(run(base + ["get", "pods", "-n", namespace, "-l", "job-name=" + str(job_id), "-o", "json"],
                     timeout=timeout, tool="kubectl").stdout)
    if not pods:
        raise ToolFailed("kubectl", "no pod of job %s in namespace %s (label job-name=%s)" % (job_id, namespace, job_id))
    lines, last = [], 0.0
    for pod in pods:
        out = run(base + ["logs", "-n", namespace, pod["name"], "--all-containers", "--timestamps"], timeout=timeout,
                  tool="kubectl").stdout
        for line in out.splitlines():
            match = _STAMP.match(line)
            if match:
                try:
                    last = max(last, calendar.timegm(time.strptime(match.group("ts"), "%Y-%m-%dT%H:%M:%S")))
                except ValueError:
                    pass
                line = match.group("rest")
            lines.append(line)
    phases = set(p["phase"] for p in pods)
    state = "Running" if "Running" in phases else ("Failed" if "Failed" in phases else sorted(p or "Unknown" for p in phases)[0])
    job = {"id": str(job_id), "name": str(job_id), "scheduler": "kubernetes", "state": {"Failed": "FAILED"}.get(state, state),
           "nodes": sorted(set(p["node"] for p in pods if p["node"])), "pods": pods, "log": {"pods": len(pods)}}
    return _finish(job, "\n".join(lines), last or None, time.time() if now is None else now)


def collect_job_facts(module):
    params = module.params
    if params["scheduler"] == "kubernetes":
        job = k8s_job(params["job"], params["namespace"], params["kubectl_path"], params.get("kubeconfig"),
                      params.get("context"), params["timeout"])
    else:
        accounting, error = None, None
        if params.get("sacct_src") or params.get("sacct_path"):
            try:
                accounting = read_sacct(params.get("sacct_path") or "sacct", params.get("sacct_since") or "now-7days",
                                        params["timeout"], params.get("sacct_src"), params.get("sacct_fields"),
                                        params.get("sacct_delimiter"))
            except ZhisuanError as exc:
                # the accounting is one input of several: its failure is reported, the job is still read
                error = str(exc)
                module.warn("sacct: %s" % error)
        job = slurm_job(params["job"], params["scontrol_path"], params["timeout"], params["max_bytes"],
                        jobcomp=params.get("jobcomp_path"), log_path=params.get("log_path"), accounting=accounting)
        if error:
            job["accounting_error"] = error
    return {"job": job}
