# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""gpu-burn (github.com/wilicc/gpu-burn) output -> per-GPU throughput, compare errors and verdicts.

What gpu_burn prints (gpu_burn-drv.cpp, ``listenClients``), and what this parser relies on:

* ``nvidia-smi -L`` lines first (``GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-…)``);
* newer builds: ``Using compare file: compare.ptx`` and ``Burning for 900 seconds.``;
* one progress record per event, separated by ``\\r`` (a terminal overwrites the line)::

      100.0%  proc'd: 6783 (16942 Gflop/s) - 4522 (17177 Gflop/s) - …   errors: 0 - 0 - …   temps: 62 C - 59 C - …

  newer builds append ``  power: 402 W - …``. ``proc'd`` is the GPU's cumulative count of matrix multiplications;
  the Gflop/s beside it is the rate of the GPU's LAST report and changes only when that count changes, so a new
  count is a new sample. ``errors`` are compare errors since the last ``Summary at:`` line (the tool zeroes them
  there), with `` (WARNING!)`` after a non-zero count and `` (DIED!)`` when the GPU's worker died; ``--`` is an
  unknown temperature or power;
* every ~10 % a ``\\tSummary at:   <date>`` line;
* at the end ``Killing processes..`` (newer: ``Killing processes with SIGTERM (soft kill)``), ``done``,
  ``Tested N GPUs:`` and one ``\\tGPU n: OK`` / ``\\tGPU n: FAULTY`` line per GPU. FAULTY means compare errors were
  seen at some point; **OK says nothing about speed** — a GPU that did no work at all still prints OK, so the numbers
  are kept for the rules to judge.

Pure functions, standard library only. ``warn(msg)`` reports a line the parser does not know.
"""

import re

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError, ToolFailed

TOOL = "gpu_burn"
# Per-GPU samples kept in the facts (evenly spaced, first and last kept); the median uses all of them.
MAX_SAMPLES = 120
_MAX_WARNINGS = 5

_PROGRESS_RE = re.compile(
    r"^(?P<pct>[0-9]{1,15}(?:\.[0-9]{1,9})?)%\s+proc'd:\s*(?P<procd>.*?)\s+errors:\s*(?P<errors>.*?)"
    r"\s+temps:\s*(?P<temps>.*?)(?:\s+power:\s*(?P<power>.*?))?\s*$", re.ASCII)
_PROCD_ITEM_RE = re.compile(r"^(-?[0-9]{1,15}) \((-?[0-9]{1,15}(?:\.[0-9]{1,9})?) Gflop/s\)$", re.ASCII)
_ERRORS_ITEM_RE = re.compile(r"^(-?[0-9]{1,15})\s*(?:\((WARNING|DIED)!\))?$", re.ASCII)
_TEMP_ITEM_RE = re.compile(r"^(?:(-?[0-9]{1,4}) C|--)$", re.ASCII)
_POWER_ITEM_RE = re.compile(r"^(?:(-?[0-9]{1,6}) W|--)$", re.ASCII)
_LIST_RE = re.compile(r"^GPU ([0-9]{1,4}): (.+?) \(UUID: ([^)]+)\)$", re.ASCII)
_INIT_RE = re.compile(
    r"Initialized device ([0-9]{1,4}) with ([0-9]{1,9}) MB of memory \(([0-9]{1,9}) MB available, using ([0-9]{1,9}) MB of it\), "
    r"using (DOUBLES|FLOATS)(, using Tensor Cores)?", re.ASCII)
_TESTED_RE = re.compile(r"^Tested ([0-9]{1,4}) GPUs:$", re.ASCII)
_VERDICT_RE = re.compile(r"^GPU ([0-9]{1,4}): (OK|FAULTY)$", re.ASCII)
_SUMMARY_RE = re.compile(r"^Summary at:\s*(.*)$", re.ASCII)
_BURNING_RE = re.compile(r"Burning for ([0-9]{1,9}) seconds\.", re.ASCII)
_COMPARE_RE = re.compile(r"Using compare file: (\S+)", re.ASCII)
# Lines gpu_burn prints that carry nothing the facts need.
_QUIET_RE = re.compile(
    r"^(?:Results are \d+ bytes each, thus performing \d+ iterations|Freed memory for dev \d+|Uninitted cublas"
    r"|done|Killing processes.*|Run length not specified in the command line\..*|cuInit returned .*)$")

# What gpu_burn prints on stderr when it cannot run or a GPU worker fails (gpu_burn-drv.cpp), and what an uncaught
# C++ exception prints in builds that do not catch it. The first match is the reason given to the user.
_FAILURE_RES = (
    re.compile(r"Couldn't init CUDA: .*"),
    re.compile(r"No CUDA devices"),
    re.compile(r"No CUDA capable GPUs found\..*"),
    re.compile(r"Not enough devices for USEDEV"),
    re.compile(r"Couldn't init a GPU test: .*"),
    re.compile(r"Failure during compute: .*"),
    re.compile(r"No clients are alive!\s+Aborting"),
    re.compile(r"Low mem for result\. aborting\."),
    re.compile(r"Syntax error near -\w+"),
    re.compile(r"what\(\):\s+.*"),
)


def _records(text):
    """Progress records and lines, in order: the tool separates records with \\r, lines with \\n."""
    for piece in re.split(r"\r\n|\r|\n", text):
        piece = piece.strip()
        if piece:
            yield piece


def failure_reason(*texts):
    """The first line of gpu_burn's own error reporting found in ``texts`` (stderr, stdout), or ``None``."""
    for text in texts:
        for line in _records(text or ""):
            for regex in _FAILURE_RES:
                found = regex.search(line)
                if found:
                    return found.group(0).strip()
    return None


def _median(values):
    ordered = sorted(values)
    count = len(ordered)
    if not count:
        return None
    middle = count // 2
    if count % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2.0


def _thin(values, limit=MAX_SAMPLES):
    """At most ``limit`` values, evenly spaced, first and last kept."""
    if len(values) <= limit:
        return list(values)
    step = (len(values) - 1) / float(limit - 1)
    return [values[int(round(position * step))] for position in range(limit)]


def _number(text):
    value = float(text)
    return int(value) if value == int(value) else value


def _split_items(section, regex, what, record_no):
    """Split ``a - b - c`` into items matched by ``regex``; a negative count keeps its sign (``0 - -1``)."""
    items = [item.strip() for item in re.split(r"(?:(?<=\s)|(?<=\)))-\s+", section.strip())]
    matches = []
    for item in items:
        found = regex.match(item)
        if not found:
            raise ParseError(TOOL, "progress record %d: cannot read %s item %r" % (record_no, what, item[:40]))
        matches.append(found)
    return matches


class _Gpu(object):
    __slots__ = ("index", "processed", "gflops", "samples", "errors_total", "errors_period", "died", "temps",
                 "powers")

    def __init__(self, index):
        self.index = index
        self.processed = 0
        self.gflops = 0
        self.samples = []
        self.errors_total = 0
        self.errors_period = 0
        self.died = False
        self.temps = []
        self.powers = []


class _State(object):
    def __init__(self, warn):
        self.warn = warn
        self.warnings = 0
        self.listed = {}
        self.init = {}
        self.gpus = None
        self.records = 0
        self.pct = None
        self.summaries = []
        self.tested = None
        self.verdicts = {}
        self.burn_seconds = None
        self.compare_file = None
        self.has_power = False

    def unknown(self, line):
        if self.warnings < _MAX_WARNINGS:
            self.warn("gpu_burn: unknown output line %r; please report" % line[:80])
        self.warnings += 1

    def progress(self, found):
        self.records += 1
        number = self.records
        procd = _split_items(found.group("procd"), _PROCD_ITEM_RE, "proc'd", number)
        errors = _split_items(found.group("errors"), _ERRORS_ITEM_RE, "errors", number)
        temps = _split_items(found.group("temps"), _TEMP_ITEM_RE, "temps", number)
        powers = None
        if found.group("power") is not None:
            powers = _split_items(found.group("power"), _POWER_ITEM_RE, "power", number)
            self.has_power = True
        if self.gpus is None:
            self.gpus = [_Gpu(index) for index in range(len(procd))]
        count = len(self.gpus)
        for what, items in (("proc'd", procd), ("errors", errors), ("temps", temps), ("power", powers)):
            if items is not None and len(items) != count:
                raise ParseError(TOOL, "progress record %d has %d %s values but the run has %d GPUs"
                                 % (number, len(items), what, count))
        self.pct = float(found.group("pct"))
        for gpu, item, error, temp in zip(self.gpus, procd, errors, temps):
            processed = int(item.group(1))
            if processed == -1:
                gpu.died = True
            elif processed != gpu.processed:
                gpu.samples.append(_number(item.group(2)))
                gpu.processed = processed
            gpu.gflops = _number(item.group(2))
            # A died worker adds -1 to its error count (gpu_burn-drv.cpp): count only real compare errors.
            gpu.errors_period = max(0, int(error.group(1)))
            if error.group(2) == "DIED":
                gpu.died = True
            if temp.group(1) is not None:
                gpu.temps.append(int(temp.group(1)))
        for gpu, power in zip(self.gpus, powers or ()):
            if power.group(1) is not None:
                gpu.powers.append(int(power.group(1)))

    def summary(self, when):
        self.summaries.append(when)
        # gpu_burn zeroes the error counters right after printing this line.
        for gpu in self.gpus or ():
            gpu.errors_total += gpu.errors_period
            gpu.errors_period = 0

    def line(self, line):
        found = _PROGRESS_RE.match(line)
        if found:
            self.progress(found)
            return
        found = _SUMMARY_RE.match(line)
        if found:
            self.summary(found.group(1).strip())
            return
        for regex in (_TESTED_RE, _VERDICT_RE):
            found = regex.match(line)
            if found:
                self.final(regex, found, line)
                return
        found = _LIST_RE.match(line)
        if found and self.gpus is None:
            self.listed[int(found.group(1))] = (found.group(2), found.group(3))
            return
        matched = False
        for found in _INIT_RE.finditer(line):
            # Old builds print a worker's start-up lines after "Killing processes.. " on the same line.
            self.init[int(found.group(1))] = found
            matched = True
        found = _BURNING_RE.search(line)
        if found:
            self.burn_seconds = int(found.group(1))
            matched = True
        found = _COMPARE_RE.search(line)
        if found:
            self.compare_file = found.group(1)
            matched = True
        if not matched and not _QUIET_RE.match(line) and failure_reason(line) is None:
            self.unknown(line)

    def final(self, regex, found, line):
        if regex is _TESTED_RE:
            if self.tested is not None:
                raise ParseError(TOOL, "two 'Tested N GPUs' lines in one run")
            self.tested = int(found.group(1))
            return
        if self.tested is None:
            self.unknown(line)
            return
        index = int(found.group(1))
        if index in self.verdicts:
            raise ParseError(TOOL, "two verdict lines for GPU %d" % index)
        self.verdicts[index] = found.group(2)


def _flag(init, group, value):
    """doubles / tensor cores as the workers printed them (``None`` when no worker printed its start-up line)."""
    seen = set(bool(found.group(group) == value) if value else bool(found.group(group)) for found in init.values())
    if not seen:
        return None
    return seen == {True}


def _gpu_facts(state, gpu):
    listed = state.listed.get(gpu.index)
    init = state.init.get(gpu.index)
    steady = gpu.samples[1:] or gpu.samples
    median = _median(steady)
    return {
        "index": gpu.index,
        "name": listed[0] if listed else None,
        "uuid": listed[1] if listed else None,
        "verdict": state.verdicts.get(gpu.index),
        "died": gpu.died,
        "errors": gpu.errors_total + gpu.errors_period,
        "processed": gpu.processed,
        "reports": len(gpu.samples),
        "gflops_final": gpu.gflops,
        "gflops_median": median if median is not None else 0,
        "gflops_min": min(steady) if steady else 0,
        "gflops_max": max(steady) if steady else 0,
        "gflops_samples": _thin(gpu.samples),
        "temperature_c_final": gpu.temps[-1] if gpu.temps else None,
        "temperature_c_max": max(gpu.temps) if gpu.temps else None,
        "power_w_max": max(gpu.powers) if gpu.powers else None,
        "memory_used_mb": int(init.group(4)) if init else None,
    }


def parse(stdout, stderr="", warn=None):
    """Facts from one gpu_burn run (see ``_parse``); any other error reading odd output is a ParseError."""
    try:
        return _parse(stdout, stderr, warn=warn)
    except (ParseError, ToolFailed):
        raise
    except (ValueError, TypeError, AttributeError, IndexError, KeyError, OverflowError, StopIteration) as exc:
        raise ParseError(TOOL, "unexpected output (%s: %s); please report" % (type(exc).__name__, str(exc)[:200]))


def _parse(stdout, stderr="", warn=None):
    """Facts from one gpu_burn run's stdout (and stderr). See the module docstring for the format.

    Raises ``ToolFailed`` when gpu_burn reports that it could not run (no CUDA device, compare kernel not found, no
    worker alive) and ``ParseError`` when the output is empty, truncated or not gpu_burn output.
    """
    warn = warn or (lambda msg: None)
    stdout = stdout or ""
    state = _State(warn)
    pieces = list(_records(stdout))
    for number, line in enumerate(pieces, 1):
        try:
            state.line(line)
        except ParseError:
            # The very last piece of a cut-off output may be half a record: the missing summary says more.
            if number < len(pieces) or stdout.endswith(("\n", "\r")):
                raise
    if state.tested is None:
        reason = failure_reason(stderr, stdout)
        if reason:
            raise ToolFailed(TOOL, "gpu_burn did not complete: %s" % reason)
        if not stdout.strip():
            raise ParseError(TOOL, "no output%s" % (" (stderr: %s)" % stderr.strip()[:200] if stderr.strip() else ""))
        if state.records == 0:
            first = next(_records(stdout))
            raise ParseError(TOOL, "no progress line and no 'Tested N GPUs' summary: not gpu_burn output "
                                   "(first line: %r)" % first[:80])
        raise ParseError(TOOL, "output is truncated: %d progress records (last at %s %%) but no 'Tested N GPUs' "
                               "summary" % (state.records, _number(state.pct)))
    if state.gpus is None:
        raise ParseError(TOOL, "'Tested %d GPUs' but no progress record: no GPU reported any work"
                         % state.tested)
    if state.tested != len(state.gpus):
        raise ParseError(TOOL, "'Tested %d GPUs' but the progress records have %d GPUs" % (state.tested, len(state.gpus)))
    missing = [str(index) for index in range(state.tested) if index not in state.verdicts]
    extra = sorted(index for index in state.verdicts if index >= state.tested)
    if missing or extra:
        raise ParseError(TOOL, "the final summary is truncated or inconsistent: no verdict for GPU %s%s"
                         % (", ".join(missing) or "-", "; verdicts for unknown GPU %s" % extra if extra else ""))
    return {
        "tested_gpus": state.tested,
        "doubles": _flag(state.init, 5, "DOUBLES"),
        "tensor_cores": _flag(state.init, 6, None),
        "burn_seconds": state.burn_seconds,
        "compare_file": state.compare_file,
        "progress_pct": _number(state.pct),
        "progress_records": state.records,
        "summaries": list(state.summaries),
        "failures": _failures(stderr),
        "gpus": [_gpu_facts(state, gpu) for gpu in state.gpus],
    }


def _failures(stderr):
    """gpu_burn's own error lines on stderr in a run that still completed (a worker that died)."""
    lines = []
    for line in _records(stderr or ""):
        reason = failure_reason(line)
        if reason and reason not in lines:
            lines.append(reason)
    return lines
