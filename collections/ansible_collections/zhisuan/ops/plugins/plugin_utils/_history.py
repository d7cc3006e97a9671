# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""Run history: every run's results.json kept in one folder, a run compared with the previous run of its kind
(new, fixed, persisting failures) and with the fleet's own distribution (a node well below its peers).

``store_run`` and ``load_history`` do the file work (each kept run has a slim index entry beside it, which the
history's readers load instead of the whole run); everything else is a pure function of results documents.
"""

from __future__ import annotations

import datetime
import filecmp
import json
import os
import re
import shutil
import statistics
import tempfile

from ansible_collections.zhisuan.ops.plugins.module_utils._safe_parse import iso_time
from ansible_collections.zhisuan.ops.plugins.module_utils._text import natural_key
from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import atomic_write
from ansible_collections.zhisuan.ops.plugins.plugin_utils._run_dir import safe_name

PROBLEM = ("fail", "error")
OUTLIER_PCT = 10.0
MIN_PEERS = 3
# numeric host facts compared across the fleet: (facts key, field, label); higher is better for each. Also compared:
# each fio job's bw_mib and iops (facts.storage.jobs), each node's NCCL curve and its median RDMA pair bandwidth.
FLEET_METRICS = (
    ("burn", "gflops_median", "burn Gflop/s (median GPU)"),
)


# the slim index beside the kept runs: <history_dir>/index/<entry name>, the ``slim`` form of each run (well under
# 1 MiB for 1,000 hosts), read instead of the run itself, so a long history costs little to load
INDEX_DIR = "index"

# retention: what the comparison and the KPIs read of the history, the newest runs first - at most KEEP_RUNS runs
# and none older than KEEP_DAYS days (a run's time is the one its id starts with, else its file's time); the runs
# beyond are left in the folder, unread. A 15-minute inspection makes ~96 runs a day: 1,000 runs are ~10 days of
# it, and a year of daily acceptance or remediation runs; a slim entry of 1,000 hosts is up to ~1 MiB, so a big
# fleet's history costs at most ~1 GiB to read (lower history_keep_runs there).
KEEP_RUNS = 1000
KEEP_DAYS = 365.0
_ID_TIME = re.compile(r"^(\d{8}T\d{6})Z")


class HistoryError(Exception):
    """The history folder could not be read or written; the message names the path."""


def parse_time(text):
    """An aware datetime from an ISO 8601 time (``Z`` accepted; no offset is UTC), or None."""
    if not text or not isinstance(text, str):
        return None
    return iso_time(text)


def run_key(results):
    """Sort key of a run: its start time, then its id."""
    run = results.get("run") or {}
    started = parse_time(run.get("started"))
    return (started.timestamp() if started else 0.0, str(run.get("id") or ""))


def entry_name(results):
    """The file name a run gets in the history folder: its id, made safe for a file name (``safe_name``, the rule
    every per-run and per-host file name follows)."""
    run_id = str((results.get("run") or {}).get("id") or "run")
    return safe_name(run_id, default="run") + ".json"


def index_path(history_dir, name):
    """The slim index entry of the kept run file ``name``."""
    return os.path.join(history_dir, INDEX_DIR, name)


def _write_index(history_dir, results):
    """Write the slim index entry of ``results`` (compact JSON, atomically)."""
    os.makedirs(os.path.join(history_dir, INDEX_DIR), exist_ok=True)
    text = json.dumps(slim(results), separators=(",", ":"), sort_keys=True, default=str) + "\n"
    atomic_write(index_path(history_dir, entry_name(results)), text)


def store_run(history_dir, results, src=None):
    """Keep ``results`` as ``<history_dir>/<run id>.json`` and its slim form as ``<history_dir>/index/<run id>.json``.
    Returns (path, changed); a run kept with the same content is left alone (its index entry written if missing).
    With ``src`` (the file ``results`` was read from), its bytes are kept as they are."""
    path, changed = _store_run(history_dir, results, src)
    try:
        if changed or not os.path.isfile(index_path(history_dir, os.path.basename(path))):
            _write_index(history_dir, results)
    except OSError as exc:
        raise HistoryError("zhisuan.ops.report: cannot write the history index in %s: %s" % (history_dir, exc))
    return path, changed


def _store_run(history_dir, results, src=None):
    path = os.path.join(history_dir, entry_name(results))
    try:
        os.makedirs(history_dir, exist_ok=True)
        if src:
            if os.path.isfile(path) and filecmp.cmp(src, path, shallow=False):
                return path, False
            fd, tmp = tempfile.mkstemp(dir=history_dir, prefix=".%s." % os.path.basename(path), suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as out, open(src, "rb") as into:
                    shutil.copyfileobj(into, out, 1 << 20)
                umask = os.umask(0)
                os.umask(umask)
                os.chmod(tmp, 0o666 & ~umask)
                os.replace(tmp, path)
            except BaseException:
                if os.path.exists(tmp):
                    os.unlink(tmp)
                raise
            return path, True
        # compact (one line): json's C encoder writes a 14 MiB run in a fraction of a second, its indenting one takes seconds
        text = json.dumps(results, separators=(",", ":"), sort_keys=True, default=str) + "\n"
        try:
            with open(path, "r", encoding="utf-8") as handle:
                if handle.read() == text:
                    return path, False
        except FileNotFoundError:
            pass
        atomic_write(path, text)
    except OSError as exc:
        raise HistoryError("zhisuan.ops.report: cannot keep the run in the history folder %s: %s" % (history_dir, exc))
    return path, True


def _slim_checks(checks):
    kept, seen = [], set()
    for check in checks or []:
        if not isinstance(check, dict):
            continue
        family = family_of(check.get("id"))
        if check.get("status") in PROBLEM:
            kept.append(check)
        elif family not in seen:
            kept.append({"id": check.get("id"), "status": check.get("status")})
        seen.add(family)
    return kept


def slim(results):
    """What the comparison and the KPIs read of a run, in the results shape: the run, each host's status, message,
    failing checks, one check per other family it ran (so "looked at" still holds) and its GPU count. A kept run of
    1,000 hosts x 60 checks shrinks from ~14 MiB to well under 1 MiB, so a long history fits in memory."""
    hosts = {}
    for name, record in (results.get("hosts") or {}).items():
        record = record or {}
        gpu = (record.get("facts") or {}).get("gpu")
        item = {"status": record.get("status"), "checks": _slim_checks(record.get("checks")),
                "facts": {"gpu": {"count": gpu.get("count")}} if isinstance(gpu, dict) and "count" in gpu else {}}
        bom = [c.get("expected") for c in record.get("checks") or [] if isinstance(c, dict) and c.get("id") == "gpu.count.present"]
        if bom and isinstance(bom[0], str) and bom[0].startswith("==") and bom[0][2:].strip().isdigit():
            item["facts"].setdefault("gpu", {})["bom_count"] = int(bom[0][2:].strip())
        if record.get("message"):
            item["message"] = record["message"]
        hosts[name] = item
    cluster = {"checks": _slim_checks((results.get("cluster") or {}).get("checks"))}
    # the escalation rule a remediation run worked by: the KPIs count repeat offenders by the newest one kept
    remediation = (results.get("cluster") or {}).get("remediation")
    if isinstance(remediation, dict) and isinstance(remediation.get("escalation"), dict):
        cluster["remediation"] = {"escalation": remediation["escalation"]}
    return {"schema": results.get("schema"), "run": dict(results.get("run") or {}), "hosts": hosts, "cluster": cluster}


def _read_json(path):
    with open(path, "r", encoding="utf-8") as handle:
        return json.load(handle)


def _indexed(history_dir, name, path):
    """The slim index entry of the run file ``name`` when it is there and not older than the run file, else None."""
    entry = index_path(history_dir, name)
    try:
        if os.stat(entry).st_mtime < os.stat(path).st_mtime:
            return None  # the run file was replaced after its entry was written: read the run itself
        data = _read_json(entry)
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if isinstance(data, dict) and isinstance(data.get("run"), dict) and isinstance(data.get("hosts"), dict):
        return data
    return None


def _file_time(name, path):
    """When the kept run ``name`` ran, as a UTC timestamp: the time its id starts with, else its file's time."""
    match = _ID_TIME.match(name)
    if match:
        try:
            return datetime.datetime.strptime(match.group(1), "%Y%m%dT%H%M%S").replace(
                tzinfo=datetime.timezone.utc).timestamp()
        except ValueError:
            pass
    return os.stat(path).st_mtime


def retained(history_dir, keep_runs=None, keep_days=None, now=None, skip=None):
    """The kept run files of ``history_dir`` (names) retention reads, newest first: at most ``keep_runs``
    (``KEEP_RUNS``; ``skip``, the current run, counts as one of them) and none older than ``keep_days`` days
    (``KEEP_DAYS``) before ``now``. Returns (names, passed over: the number of run files left unread)."""
    keep_runs = KEEP_RUNS if keep_runs is None else int(keep_runs)
    keep_days = KEEP_DAYS if keep_days is None else float(keep_days)
    if keep_runs < 1 or keep_days <= 0:
        raise HistoryError("zhisuan.ops.report: history retention must keep at least one run and a positive number "
                           "of days, got %s runs and %s days" % (keep_runs, keep_days))
    now = (now or datetime.datetime.now(datetime.timezone.utc)).timestamp()
    dated = []
    for name in os.listdir(history_dir):
        if not name.endswith(".json") or name.startswith(".") or name == skip:
            continue
        path = os.path.join(history_dir, name)
        try:
            if not os.path.isfile(path):
                continue
            dated.append((_file_time(name, path), name))
        except OSError:
            continue  # gone meanwhile (a file another run replaced)
    dated.sort(reverse=True)
    room = keep_runs - (1 if skip is not None else 0)
    names = [name for when, name in dated if now - when <= keep_days * 86400.0][:max(room, 0)]
    return names, len(dated) - len(names)


def load_history(history_dir, warn=None, slimmed=True, current=None, keep_runs=None, keep_days=None, now=None,
                 max_bytes=None):
    """The results documents in ``history_dir`` (``*.json``) retention keeps (``retained``: the newest
    ``keep_runs``, none older than ``keep_days``), oldest first, each ``slim``-med unless ``slimmed`` is false. A
    slim read takes each run's index entry (``index/<name>``, written by ``store_run``) when it is there and not
    older than the run, so only the small form is read; a run without one (kept by hand, or before the index) is
    read whole and slimmed, unless it is over ``max_bytes`` (then skipped with a warning). Unreadable files are
    skipped with a warning; a missing folder is an empty history. ``current`` (a run in memory, just kept there)
    is taken as it is instead of reading its file back."""
    if not os.path.isdir(history_dir):
        return []
    runs = []
    skip = entry_name(current) if current is not None else None
    if current is not None:
        runs.append(slim(current) if slimmed else current)
    names, dummy_passed_over = retained(history_dir, keep_runs, keep_days, now, skip)
    for name in sorted(names):
        path = os.path.join(history_dir, name)
        if not os.path.isfile(path):
            continue
        if slimmed:
            indexed = _indexed(history_dir, name, path)
            if indexed is not None:
                runs.append(indexed)
                continue
        try:
            size = os.stat(path).st_size
            if max_bytes is not None and size > max_bytes:
                if warn:
                    warn("zhisuan.ops.report: history file %s skipped: %.1f MiB, over the %.1f MiB a run may be read "
                         "at (it has no index entry; raise max_results_mib if it is really that large)"
                         % (path, size / 1048576.0, max_bytes / 1048576.0))
                continue
            data = _read_json(path)
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            if warn:
                warn("zhisuan.ops.report: history file %s skipped: %s" % (path, exc))
            continue
        if not isinstance(data, dict) or not isinstance(data.get("run"), dict) or not isinstance(data.get("hosts"), dict):
            if warn:
                warn("zhisuan.ops.report: history file %s skipped: not a results document" % path)
            continue
        runs.append(slim(data) if slimmed else data)
    runs.sort(key=run_key)
    return runs


def previous_run(history, results):
    """The latest run in ``history`` of the same kind as ``results`` that started before it (not itself) and ran to
    its end: a partial run (``run.partial``: cut off by a signal, or every node failed) judged only some nodes, so
    its missing failures would read as fixed; it is never the run compared with."""
    run = results.get("run") or {}
    key = run_key(results)
    earlier = [doc for doc in history
               if (doc.get("run") or {}).get("kind") == run.get("kind") and not (doc.get("run") or {}).get("partial")
               and (doc.get("run") or {}).get("id") != run.get("id") and run_key(doc) < key]
    return earlier[-1] if earlier else None


# ---------------------------------------------------------------------------------------------------------------
# comparison with the previous run


def family_of(check_id):
    return str(check_id).split(".", 1)[0]


def problems(results):
    """{(host, check id): {status, components, message, remedy}} for every fail/error check and unreachable host."""
    found = {}
    for host, record in (results.get("hosts") or {}).items():
        record = record or {}
        if record.get("status") == "unreachable":
            found[(host, "host.reachable")] = {"status": "unreachable", "components": [],
                                               "message": record.get("message") or "host was unreachable",
                                               "remedy": "investigate"}
            continue
        for check in record.get("checks") or []:
            if check.get("status") in PROBLEM:
                item = found.setdefault((host, check.get("id")), {"status": check["status"], "components": [],
                                                                  "message": check.get("message") or "",
                                                                  "remedy": check.get("remedy") or "investigate"})
                if check["status"] == "fail":
                    item["status"] = "fail"
                if check.get("component") and check["component"] not in item["components"]:
                    item["components"].append(check["component"])
    for check in (results.get("cluster") or {}).get("checks") or []:
        if check.get("status") in PROBLEM:
            found.setdefault(("cluster", check.get("id")), {"status": check["status"], "components": [check.get("component") or ""],
                                                            "message": check.get("message") or "",
                                                            "remedy": check.get("remedy") or "investigate"})
    return found


def checked_families(results, host):
    """The families that produced a check on ``host`` in this run (empty when it was unreachable or absent)."""
    if host == "cluster":
        return set(family_of(c.get("id")) for c in (results.get("cluster") or {}).get("checks") or [])
    record = (results.get("hosts") or {}).get(host) or {}
    if record.get("status") == "unreachable":
        return set()
    return set(family_of(c.get("id")) for c in record.get("checks") or [])


def _item(key, info):
    return dict(info, host=key[0], id=key[1])


def _order(key):
    """Hosts in natural order, cluster-wide failures last."""
    return (key[0] == "cluster", natural_key(key[0]), natural_key(key[1]))


def compare_runs(previous, current):
    """New, fixed and persisting failures (fail/error checks and unreachable hosts, per host and check id), and
    ``unchecked``: earlier failures the current run could not look at (host unreachable or family not run)."""
    before = problems(previous) if previous else {}
    now = problems(current)
    result = {"previous": None, "new": [], "fixed": [], "persisting": [], "unchecked": []}
    if previous:
        run = previous.get("run") or {}
        result["previous"] = {"id": run.get("id"), "kind": run.get("kind"), "started": run.get("started")}
    for key in sorted(now, key=_order):
        result["persisting" if key in before else "new"].append(_item(key, now[key]))
    for key in sorted(set(before) - set(now), key=_order):
        host, check_id = key
        families = checked_families(current, host)
        looked = (check_id == "host.reachable" and host in (current.get("hosts") or {}) and bool(families)) or \
            family_of(check_id) in families
        result["fixed" if looked else "unchecked"].append(_item(key, before[key]))
    return result


# ---------------------------------------------------------------------------------------------------------------
# the fleet's own distribution


def _number(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def fleet_values(results):
    """{metric label: {host: value}} for the numeric facts compared across the fleet, plus the per-node NCCL busbw
    (``cluster.fabric.nccl`` entries whose scope is one node) and each node's median RDMA pair bandwidth."""
    metrics = {}
    for host, record in (results.get("hosts") or {}).items():
        facts = (record or {}).get("facts") or {}
        for key, field, label in FLEET_METRICS:
            value = _number((facts.get(key) or {}).get(field)) if isinstance(facts.get(key), dict) else None
            if value is not None:
                metrics.setdefault(label, {})[host] = value
        jobs = (facts.get("storage") or {}).get("jobs") if isinstance(facts.get("storage"), dict) else None
        for name, job in (jobs or {}).items():
            if not isinstance(job, dict) or job.get("errors"):
                continue
            for field, unit in (("bw_mib", "MiB/s"), ("iops", "IOPS")):
                value = _number(job.get(field))
                if value is not None:
                    metrics.setdefault("storage %s %s" % (name, unit), {})[host] = value
    fabric = (results.get("cluster") or {}).get("fabric") or {}
    for entry in nccl_entries(results):
        scope = entry.get("scope")
        if not scope or scope == "cluster" or scope not in (results.get("hosts") or {}):
            continue
        value = judged_busbw(entry)
        if value is not None:
            metrics.setdefault("NCCL %s busbw (%s)" % (entry.get("op") or "", entry.get("unit") or "GB/s"), {})[scope] = value
    pairs = (fabric.get("rdma_pairs") or {}).get("pairs") or []
    per_node = {}
    for pair in pairs:
        value = _number(pair.get("value"))
        if value is None:
            continue
        for node in (pair.get("a"), pair.get("b")):
            per_node.setdefault(node, []).append(value)
    if per_node:
        unit = (fabric.get("rdma_pairs") or {}).get("unit") or "Gb/s"
        metrics["RDMA pair bandwidth, node median (%s)" % unit] = dict(
            (node, statistics.median(values)) for node, values in per_node.items())
    return metrics


def nccl_entries(results):
    """``cluster.fabric.nccl`` entries, plus the per-node curves kept as host facts ``nccl`` (summarize_nccl's shape)
    for nodes the cluster data has no entry of."""
    fabric = (results.get("cluster") or {}).get("fabric") or {}
    entries = [e for e in fabric.get("nccl") or [] if isinstance(e, dict) and e.get("points")]
    seen = set((e.get("op"), e.get("scope")) for e in entries)
    hosts = results.get("hosts") or {}
    for name in sorted(hosts, key=natural_key):
        entry = ((hosts[name] or {}).get("facts") or {}).get("nccl")
        if isinstance(entry, dict) and entry.get("points"):
            entry = dict(entry, scope=entry.get("scope") or name)
            if (entry.get("op"), entry["scope"]) not in seen:
                entries.append(entry)
                seen.add((entry.get("op"), entry["scope"]))
    return entries


def judged_busbw(entry):
    """The busbw of an NCCL entry at its judged size (else at its largest size)."""
    points = [p for p in entry.get("points") or [] if isinstance(p, dict) and _number(p.get("busbw")) is not None]
    if not points:
        return None
    judged = [p for p in points if p.get("bytes") == entry.get("judged_bytes")]
    point = judged[0] if judged else max(points, key=lambda p: p.get("bytes") or 0)
    return float(point["busbw"])


def fleet_outliers(results, pct=OUTLIER_PCT, min_peers=MIN_PEERS):
    """Nodes at least ``pct`` % below the median of their peers (the other nodes) on a metric, worst first.
    A metric needs ``min_peers`` other nodes with a value."""
    found = []
    for label, values in sorted(fleet_values(results).items()):
        for host, value in values.items():
            peers = [v for name, v in values.items() if name != host]
            if len(peers) < min_peers:
                continue
            median = statistics.median(peers)
            if median <= 0:
                continue
            below = (median - value) / median * 100.0
            if below >= pct:
                found.append({"host": host, "metric": label, "value": value, "peer_median": median,
                              "pct_below": round(below, 1)})
    found.sort(key=lambda item: (-item["pct_below"], natural_key(item["host"]), item["metric"]))
    return found
