# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""The stability watch on the node: GPU facts sampled every ``sample_s`` seconds while gpu_burn runs.

The sampler runs in a thread of the gpu_burn module itself, so it starts with the burn, samples for the whole burn
whatever the controller's ``forks`` is (the module runs under ``async``), and ends with it. Each sample is the
``gpu`` facts of one ``nvidia-smi -q -x`` (through the one subprocess seam, with its own timeout), cut down to what
the stability rules read (``slim_gpu_facts``), with the time it was taken. Every sample is also appended, one JSON
object a line, to ``samples_path`` when given, so a burn that is cut off still leaves its samples on the node.

A sample that timed out stops the watch: nvidia-smi is not called again in this run, and the watch says why
(``stopped``). Other failures are kept as samples with an ``error`` and sampling goes on.

Python 3.6 compatible (node side).
"""

import json
import threading
import time

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ToolTimeout, ZhisuanError

# The parts of one GPU's facts the stability rules (_judge/_stability.py) read; the rest is left out of the samples
# so an hours-long burn sampled every 30 s stays a small result.
# At most this many samples are kept in memory (and so in the result): past it every second one is dropped, the
# first and the newest kept, so an hours-long burn still has samples spread over all of it (the samples_path file
# keeps them all).
MAX_SAMPLES = 2000

GPU_KEYS = ("index", "name", "uuid", "pci_bus_id", "ecc", "remapped_rows", "retired_pages", "temperature",
            "throttle", "clocks")


def slim_gpu_facts(facts):
    """``gpu`` facts (docs/gpu-facts.md) -> the same shape with only the GPU_KEYS of each GPU."""
    gpus = []
    for gpu in (facts or {}).get("gpus") or []:
        if isinstance(gpu, dict):
            gpus.append(dict((key, gpu[key]) for key in GPU_KEYS if key in gpu))
    return {"gpus": gpus}


def iso(epoch):
    """An epoch time as ISO 8601 UTC with milliseconds (``2026-12-03T17:40:01.250Z``)."""
    # rounded to the millisecond as a whole, so .9996 s carries into the next second instead of reading .000 of this one
    whole, millis = divmod(int(round(epoch * 1000)), 1000)
    return "%s.%03dZ" % (time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)), millis)


class Sampler(object):
    """Calls ``read()`` (-> ``gpu`` facts) every ``interval`` seconds from ``start()`` until ``stop()``.

    ``clock`` gives epoch seconds; ``path`` (optional) receives each sample as a JSON line.
    """

    def __init__(self, read, interval, path=None, clock=time.time, tool="nvidia-smi", max_samples=MAX_SAMPLES):
        if interval <= 0:
            raise ValueError("the sampling interval must be a positive number of seconds, got %s" % interval)
        self.read = read
        self.interval = interval
        self.path = path
        self.clock = clock
        self.tool = tool
        self.samples = []
        self.max_samples = max(int(max_samples), 2)
        self.thinned = 0
        self.stopped = None
        self.started = None
        self.ended = None
        self.write_error = None
        self._halt = threading.Event()
        # held while the end is stamped and while a sample is stamped, so no sample starts after the watch ended
        self._lock = threading.Lock()
        self._thread = None

    def start(self):
        self.started = self.clock()
        self._thread = threading.Thread(target=self._loop, name="burn-watch")
        self._thread.daemon = True
        self._thread.start()

    def stop(self, wait=None):
        """End the watch; ``wait`` seconds at most for a sample being taken (default: none left hanging forever)."""
        with self._lock:
            self.ended = self.clock()
            self._halt.set()
        if self._thread is not None:
            self._thread.join(wait)

    def _loop(self):
        while not self._halt.wait(self.interval):
            if not self.sample_once():
                return

    def sample_once(self):
        """Take one sample; False when the watch must stop (the tool timed out, or the watch was stopped)."""
        with self._lock:
            if self._halt.is_set():
                # the interval ran out just as the burn ended: a sample now would be taken after the burn
                return False
            taken = self.clock()
        try:
            facts = self.read()
        except ToolTimeout as exc:
            self._keep({"t": round(taken, 3), "at": iso(taken), "error": exc.message, "error_kind": "timed_out"})
            self.stopped = ("%s timed out at sample %d (%s); it is not called again in this run"
                            % (self.tool, len(self.samples), exc.message))
            return False
        except ZhisuanError as exc:
            self._keep({"t": round(taken, 3), "at": iso(taken), "error": exc.message,
                        "error_kind": exc.kind})
            return True
        except Exception as exc:  # pylint: disable=broad-except
            # a bug in reading must not end the watch silently: it is kept as a failed sample and sampling goes on
            self._keep({"t": round(taken, 3), "at": iso(taken), "error": "%s: %s" % (self.tool, exc),
                        "error_kind": "failed"})
            return True
        self._keep({"t": round(taken, 3), "at": iso(taken), "gpu": slim_gpu_facts(facts)})
        return True

    def _keep(self, sample):
        self.samples.append(sample)
        if len(self.samples) > self.max_samples:
            newest = self.samples[-1]
            kept = self.samples[:-1:2]
            self.thinned += len(self.samples) - len(kept) - 1
            self.samples = kept + [newest]
        if not self.path:
            return
        try:
            with open(self.path, "a") as handle:
                handle.write(json.dumps(sample, sort_keys=True) + "\n")
        except (IOError, OSError) as exc:
            if self.write_error is None:
                self.write_error = "could not write the samples to %s: %s" % (self.path, exc)

    def facts(self):
        """The ``watch`` facts: the burn's start and end, the interval, every sample, why it stopped early."""
        return {
            "sample_s": self.interval,
            "started": round(self.started, 3) if self.started is not None else None,
            "started_at": iso(self.started) if self.started is not None else None,
            "ended": round(self.ended, 3) if self.ended is not None else None,
            "ended_at": iso(self.ended) if self.ended is not None else None,
            "samples": list(self.samples),
            "stopped": self.stopped,
            "samples_path": self.path,
            "write_error": self.write_error,
            "thinned": self.thinned,
        }


def coverage(watch):
    """How well the samples of a ``watch`` cover its burn: ``{"samples", "first_s", "last_s", "max_gap_s"}`` in
    seconds from the burn's start (the gaps include start -> first sample and last sample -> end); None values
    when there is no sample or no start/end."""
    watch = watch or {}
    start, end = watch.get("started"), watch.get("ended")
    times = sorted(sample["t"] for sample in watch.get("samples") or [] if isinstance(sample, dict)
                   and isinstance(sample.get("t"), (int, float)) and "gpu" in sample)
    result = {"samples": len(times), "first_s": None, "last_s": None, "max_gap_s": None}
    if start is None or end is None or not times:
        return result
    points = [start] + times + [end]
    result["first_s"] = round(times[0] - start, 1)
    result["last_s"] = round(times[-1] - start, 1)
    result["max_gap_s"] = round(max(later - earlier for earlier, later in zip(points, points[1:])), 1)
    return result
