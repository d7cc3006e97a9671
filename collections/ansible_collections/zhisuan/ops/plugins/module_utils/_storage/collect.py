# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""fio_run's work: job specs → one fio command line (jobs one after another, ``stonewall``), one run through the
seam with a timeout longer than the jobs' runtimes, the JSON output parsed into ``storage`` facts."""

import os
import re

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import OptionError, ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._runner import attach, first_line, run, tool_failed
from ansible_collections.zhisuan.ops.plugins.module_utils._storage import fio

# The acceptance profile's default jobs: sequential read/write with 1 MiB blocks (bandwidth), random read/write with
# 4 KiB blocks (IOPS, latency) - the fio patterns of delivery guide 5.1. Sizes and depths are our choice [U].
DEFAULT_JOBS = (
    {"name": "seq_read", "rw": "read", "bs": "1M", "iodepth": 16},
    {"name": "seq_write", "rw": "write", "bs": "1M", "iodepth": 16},
    {"name": "rand_read", "rw": "randread", "bs": "4k", "iodepth": 32},
    {"name": "rand_write", "rw": "randwrite", "bs": "4k", "iodepth": 32},
)
JOB_DEFAULTS = {"size": "1G", "iodepth": 16, "numjobs": 1, "runtime": 30, "ioengine": "libaio", "direct": True}
JOB_KEYS = ("name", "rw", "bs", "size", "iodepth", "numjobs", "runtime", "ioengine", "direct", "directory",
            "filename", "options")
RW_MODES = ("read", "write", "randread", "randwrite", "rw", "readwrite", "randrw", "trim", "randtrim", "trimwrite")
# Seconds added per job (laying out the job's file before it runs) and once (fio start-up, JSON report).
JOB_MARGIN_S = 30
RUN_MARGIN_S = 60

_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
_VALUE = re.compile(r"^[^\s-][^\s]*$")


def normalize_jobs(jobs):
    """Job specs with the defaults filled in; raises ValueError naming the job and the bad key or value."""
    jobs = list(DEFAULT_JOBS) if jobs is None else jobs
    if not jobs:
        raise ValueError("jobs: at least one fio job is needed")
    result = []
    seen = set()
    for position, job in enumerate(jobs):
        if not isinstance(job, dict):
            raise ValueError("jobs[%d] must be a dict, got %r" % (position, job))
        unknown = sorted(set(job) - set(JOB_KEYS))
        if unknown:
            raise ValueError("jobs[%d]: unknown key(s) %s (known: %s)" % (position, ", ".join(unknown), ", ".join(JOB_KEYS)))
        spec = dict(JOB_DEFAULTS)
        spec.update(dict((key, value) for key, value in job.items() if value is not None))
        name = spec.get("name")
        if not isinstance(name, str) or not _NAME.match(name):
            raise ValueError("jobs[%d]: name %r must be letters, digits, '_', '.' or '-'" % (position, name))
        if name in seen:
            raise ValueError("jobs[%d]: job name %r is used twice" % (position, name))
        seen.add(name)
        if spec.get("rw") not in RW_MODES:
            raise ValueError("job %s: rw %r is not one of %s" % (name, spec.get("rw"), ", ".join(RW_MODES)))
        if not spec.get("bs"):
            raise ValueError("job %s: bs (block size, e.g. 4k or 1M) is required" % name)
        for key in ("iodepth", "numjobs", "runtime"):
            value = spec[key]
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError("job %s: %s must be a positive integer, got %r" % (name, key, value))
        for key in ("bs", "size", "ioengine", "directory", "filename"):
            if spec.get(key) is not None and not _VALUE.match(str(spec[key])):
                raise ValueError("job %s: %s %r must be one word that does not start with '-'" % (name, key, spec[key]))
        options = spec.get("options") or {}
        if not isinstance(options, dict):
            raise ValueError("job %s: options must be a dict of fio options, got %r" % (name, options))
        for key, value in options.items():
            if not _NAME.match(str(key)) or not _VALUE.match(str(value)):
                raise ValueError("job %s: option %s=%s is not a plain fio option" % (name, key, value))
        spec["options"] = options
        result.append(spec)
    return result


def default_timeout(jobs):
    """Every job's runtime plus a margin per job (file layout) and per run: always longer than the jobs run."""
    return sum(job["runtime"] + JOB_MARGIN_S for job in jobs) + RUN_MARGIN_S


def _flag(value):
    return "1" if value in (True, 1, "1", "true", "yes") else "0"


def build_argv(program, jobs, directory=None, cleanup=True):
    """fio's command line: global options, then one ``--name`` section per job (``directory`` is given to each job
    without a ``filename``, as fio prepends it to a filename); every job after the first waits
    for the previous one (``--stonewall``), so each measures the storage alone; ``group_reporting`` folds a job's
    ``numjobs`` clones into one result. With ``cleanup``, fio deletes the files it laid out (``--unlink=1``) - never
    for a job given an explicit ``filename`` (it may be a device)."""
    argv = [program, "--output-format=json", "--group_reporting"]
    for position, job in enumerate(jobs):
        argv.append("--name=%s" % job["name"])
        if position:
            argv.append("--stonewall")
        argv += ["--rw=%s" % job["rw"], "--bs=%s" % job["bs"], "--size=%s" % job["size"],
                 "--iodepth=%d" % job["iodepth"], "--numjobs=%d" % job["numjobs"],
                 "--runtime=%d" % job["runtime"], "--time_based", "--ioengine=%s" % job["ioengine"],
                 "--direct=%s" % _flag(job["direct"])]
        # fio prepends a directory to a filename, so the run's directory is never given to a job with a filename
        if job.get("directory"):
            argv.append("--directory=%s" % job["directory"])
        elif directory and not job.get("filename"):
            argv.append("--directory=%s" % directory)
        if job.get("filename"):
            argv.append("--filename=%s" % job["filename"])
        elif cleanup:
            argv.append("--unlink=1")
        for key in sorted(job["options"]):
            argv.append("--%s=%s" % (key, job["options"][key]))
    return argv


def leftover_files(directory, names):
    """Files fio lays out for job ``name`` (``<name>.<clone>.<file>``) still in ``directory``."""
    patterns = [re.compile(r"^%s\.\d+\.\d+$" % re.escape(name)) for name in names]
    try:
        entries = os.listdir(directory)
    except OSError:
        return []
    return sorted(os.path.join(directory, entry) for entry in entries if any(rx.match(entry) for rx in patterns))


def remove_leftovers(jobs, directory, warn=None):
    """Delete the job files a killed or failed fio left behind (cleanup); returns the paths removed."""
    removed = []
    by_dir = {}
    for job in jobs:
        if job.get("filename"):
            continue
        where = job.get("directory") or directory
        if where:
            by_dir.setdefault(where, []).append(job["name"])
    for where, names in sorted(by_dir.items()):
        for path in leftover_files(where, names):
            try:
                os.remove(path)
                removed.append(path)
            except OSError as exc:
                if warn is not None:
                    warn("could not remove fio's job file %s: %s" % (path, exc))
    return removed


def _first_message(*texts):
    for text in texts:
        errors, messages = fio.parse_errors(text)
        if errors:
            return fio.describe_error(errors[0])
        if messages:
            return messages[0][len("fio:"):].strip()
    return first_line(*texts)


def run_fio(program, jobs, directory=None, timeout=None, cleanup=True, warn=None):
    """Run the jobs in one fio invocation and return the ``storage`` facts.

    fio exits with rc 1 when a job hit an I/O error but still prints its JSON report: the facts are returned and
    the job's ``errors`` say what failed. Without a report (an option fio refused) it is a ToolFailed with fio's
    message. Raises ToolNotFound / ToolTimeout / ToolFailed / ParseError.
    """
    jobs = normalize_jobs(jobs)
    timeout = timeout or default_timeout(jobs)
    argv = build_argv(program, jobs, directory=directory, cleanup=cleanup)
    try:
        result = run(argv, timeout=timeout, tool=fio.TOOL, ok_rcs=None)
    finally:
        if cleanup:
            remove_leftovers(jobs, directory, warn=warn)
    if not re.search(r"^\{", result.stdout, re.MULTILINE):
        if result.rc != 0:
            raise tool_failed(result, fio.TOOL, "exited with rc %s: %s" % (result.rc, _first_message(result.stderr, result.stdout)))
    try:
        facts = fio.parse_json(result.stdout, warn=warn)
    except ParseError as exc:
        raise attach(exc, result)
    _errors, stderr_messages = fio.parse_errors(result.stderr)
    facts["messages"] += [line[len("fio:"):].strip() for line in stderr_messages]
    if result.rc != 0 and not any(job["errors"] for job in facts["jobs"].values()):
        reason = "fio exited with rc %s: %s" % (result.rc, _first_message(result.stderr, result.stdout))
        for job in facts["jobs"].values():
            job["errors"].append(reason)
    missing = [job["name"] for job in jobs if job["name"] not in facts["jobs"]]
    if missing:
        raise tool_failed(result, fio.TOOL, "no result for job(s) %s in fio's report" % ", ".join(missing), error=ParseError)
    facts.update({"directory": directory, "cmd": result.argv, "rc": result.rc})
    return facts


def collect_storage(module):
    params = module.params  # a timeout <= 0 is refused by run_module
    try:
        jobs = normalize_jobs(params["jobs"])
    except ValueError as exc:
        raise OptionError("jobs", str(exc))
    directory = params["directory"]
    if directory and not os.path.isdir(directory):
        raise OptionError("directory", "directory %s does not exist on the node (create it, or point fio at the storage "
                                       "under test)" % directory)
    facts = run_fio(params["fio_path"], jobs, directory=directory, timeout=params["timeout"], cleanup=params["cleanup"],
                    warn=module.warn)
    return {"storage": facts}
