# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""results.json: build (pure), validate against the JSON Schema, write atomically, point ``latest`` at it."""

from __future__ import annotations

import json
import os
import re
import tempfile

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import SEVERITY, make_check, worst_status

SCHEMA_ID = "zhisuan.ops/results/v1"
SCHEMA_PATH = os.path.join(os.path.dirname(__file__), "..", "..", "data", "schema", "results-v1.json")
HOST_STATUSES = ("pass", "warn", "fail", "error", "unreachable")
CHECK_STATUSES = tuple(sorted(SEVERITY, key=SEVERITY.get))

_COLLECTION_ROOT = os.path.join(os.path.dirname(__file__), "..", "..")

try:
    import jsonschema
except ImportError:  # pragma: no cover - jsonschema ships with ansible-lint/molecule; validation is optional at run time
    jsonschema = None
HAS_JSONSCHEMA = jsonschema is not None


def unreachable_reason(unreachable):
    """The connection's own words of an unreachable node (``unreachable`` is true, or the reason as a string)."""
    if not isinstance(unreachable, str):
        return None
    text = " ".join(unreachable.split())
    return text if len(text) <= 400 else text[:400] + "..."


def host_record(name, checks, facts=None, unreachable=False, message=None):
    """One host's entry. ``unreachable`` wins; a host with no checks at all is an ``error`` (its tasks failed)."""
    record = {"status": "pass", "checks": list(checks), "facts": dict(facts or {})}
    reason = unreachable_reason(unreachable)
    if unreachable and not record["checks"]:
        record["status"] = "unreachable"
        record["message"] = message or ("host was unreachable (%s); no checks ran" % reason if reason
                                        else "host was unreachable; no checks ran")
        return record
    if unreachable:
        # checks ran before the node was lost (a delivery's BMC checks, read through the BMC): they are kept and
        # judged, and the connection that failed is one more error check with its own words
        record["checks"].append(make_check(
            "run.host.unreachable", name, "error", component="Ansible connection", observed="unreachable",
            expected="the node answers", remedy="investigate",
            message=("The node became unreachable (%s); the checks that need it did not run" % reason if reason
                     else "The node became unreachable; the checks that need it did not run"),
            evidence=reason or ""))
    if not record["checks"]:
        msg = message or ("no check was recorded for this host: the run kept none of its checks (it was targeted, "
                          "but no selected family ran on it)")
        record["checks"].append(make_check(
            "run.host.tasks", name, "error", component="Ansible run", observed="no checks", expected="checks recorded",
            message=msg, remedy="investigate"))
    record["status"] = worst_status([check["status"] for check in record["checks"]])
    if message:
        record["message"] = message
    return record


# The host fact where zhisuan.ops.check keeps a node's checks of one run (its ``run`` names the run): one task per
# node keeps them, with no set_fact. The record reads it beside results_checks, which set_fact-based roles keep.
NODE_RECORD_FACT = "results_node_record"


def encode_node_record(record):
    """The node record as the fact holds it: one JSON document (a string).

    Ansible deep-copies and walks every mapping fact an action returns: twice in the worker (``clean_facts``) and once
    in the main process for each callback that listens to results. For a record of ~250 checks that was ~35 ms of the
    controller a node, ~15 ms of it in the main process that every result passes through; a string costs none of it.
    """
    return json.dumps(record, separators=(",", ":"), sort_keys=False)


def node_record(value):
    """The node record a fact holds (the JSON string the check action keeps, or a mapping), else None."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return value if isinstance(value, dict) else None


def host_inputs(host_vars, run_id):
    """``(checks, facts, unreachable)`` a targeted host kept in run ``run_id``: its node record (the check action's
    fact, when it belongs to this run) first, then what the results role kept (preflight, rescues, other families)."""
    checks = list(host_vars.get("results_checks") or [])
    facts = dict(host_vars.get("results_host_facts") or {})
    # true, or the connection's own words (a string) where the role kept them
    unreachable = host_vars.get("results_unreachable") or False
    record = node_record((host_vars.get("ansible_facts") or {}).get(NODE_RECORD_FACT))
    if record is not None and record.get("run") == run_id:
        checks = list(record.get("checks") or []) + checks
        facts = dict(record.get("facts") or {}, **facts)
        # the node record keeps the connection's reason (a string) where it has one
        unreachable = record.get("unreachable") or unreachable
    return checks, facts, unreachable


def collection_version():
    """The collection's version, from MANIFEST.json (an installed collection) or galaxy.yml (a checkout)."""
    for name in ("MANIFEST.json", "galaxy.yml"):
        path = os.path.join(_COLLECTION_ROOT, name)
        if not os.path.exists(path):
            continue
        with open(path) as handle:
            for line in handle:
                stripped = line.strip().strip(",")
                if stripped.startswith(("version:", '"version":')):
                    return stripped.split(":", 1)[1].strip().strip('"')
    return "unknown"


def _tail(text, limit):
    text = text if isinstance(text, str) else ("" if text is None else str(text))
    text = text.strip()
    return text if len(text) <= limit else "..." + text[-limit:]


def failed_task_check(host, task, action, result, family="run"):
    """The ``error`` check of a task that failed unexpectedly: its own words (module, msg, rc, stderr tail).

    ``result`` is the task's result (a rescue's ``ansible_failed_result``); of a loop, the first failed item speaks.
    The task's arguments are never copied: they may hold secrets.
    """
    result = dict(result or {})
    items = [item for item in result.get("results") or [] if isinstance(item, dict) and item.get("failed")]
    if items and not result.get("rc") and not result.get("stderr"):
        result = dict(items[0], msg=items[0].get("msg") or result.get("msg"))
    msg = result.get("msg") or result.get("reason") or "the task failed without a message"
    msg = _tail(msg if isinstance(msg, str) else json.dumps(msg, default=str), 1000)
    module = action or "unknown module"
    message = "Task '%s' (%s) failed unexpectedly: %s" % (task or "unnamed", module, msg)
    evidence = ["task: %s" % (task or "unnamed"), "module: %s" % module, "msg: %s" % msg]
    if result.get("rc") is not None:
        message += " (rc %s)" % result["rc"]
        evidence.append("rc: %s" % result["rc"])
    stderr = _tail(result.get("stderr") or result.get("module_stderr"), 800)
    if stderr:
        message += "; stderr: %s" % _tail(stderr.splitlines()[-1], 300)
        evidence.append("stderr (tail): %s" % stderr)
    stdout = _tail(result.get("stdout") or result.get("module_stdout"), 400)
    if stdout:
        evidence.append("stdout (tail): %s" % stdout)
    if result.get("exception") and "traceback unavailable" not in str(result["exception"]):
        evidence.append("exception (tail): %s" % _tail(result["exception"], 800))
    family = re.sub(r"[^a-z0-9_]", "_", (family or "run").lower()) or "run"
    return make_check("%s.task.failed" % family, host, "error", component="Ansible task %s" % (task or module),
                      observed="failed", expected="the task completes", message=message, remedy="investigate",
                      evidence="\n".join(evidence))


# run.site (docs/report.md, "Operations appendix"): the site's name, service level and contacts from the inventory
# variables zhisuan_site_name, zhisuan_service_level and zhisuan_contacts; only these keys of a contact are copied.
SITE_CONTACT_KEYS = ("role", "name", "organisation", "phone", "email")


def _site_text(value):
    """The text of an inventory scalar (a phone number written as a YAML int is text); None for none or ""."""
    if value is None or isinstance(value, (dict, list, tuple, set)):
        return None
    text = str(value).strip()
    return text or None


def run_site(name=None, service_level=None, contacts=None):
    """``(site, problems)``: run.site built from the inventory (``zhisuan_site_name``, ``zhisuan_service_level``,
    ``zhisuan_contacts``), None when none of them is given. Pure; never raises. What is not understood is left out
    and named in ``problems`` (the callers warn): a value that is not text, a contact that is not a mapping or has
    no name, a contact key other than role, name, organisation, phone and email (nothing else is copied: the record
    must never carry a variable it was not meant to)."""
    problems = []
    site = {}
    for key, variable, value in (("name", "zhisuan_site_name", name),
                                 ("service_level", "zhisuan_service_level", service_level)):
        if value in (None, ""):
            continue
        text = _site_text(value)
        if text is None:
            problems.append("%s must be text, not %s" % (variable, type(value).__name__))
        else:
            site[key] = text
    if contacts not in (None, "", []):
        if not isinstance(contacts, (list, tuple)):
            problems.append("zhisuan_contacts must be a list of contacts (role, name, organisation, phone, email), "
                            "not %s" % type(contacts).__name__)
            contacts = []
        kept = []
        for index, contact in enumerate(contacts):
            where = "zhisuan_contacts[%d]" % index
            if not isinstance(contact, dict):
                problems.append("%s must be a mapping (role, name, organisation, phone, email), not %s"
                                % (where, type(contact).__name__))
                continue
            unknown = sorted(str(key) for key in contact if key not in SITE_CONTACT_KEYS)
            if unknown:
                problems.append("%s: %s left out (a contact has %s)"
                                % (where, ", ".join(unknown), ", ".join(SITE_CONTACT_KEYS)))
            entry = {}
            for key in SITE_CONTACT_KEYS:
                if contact.get(key) in (None, ""):
                    continue
                text = _site_text(contact[key])
                if text is None:
                    problems.append("%s.%s must be text, not %s" % (where, key, type(contact[key]).__name__))
                else:
                    entry[key] = text
            if "name" not in entry:
                problems.append("%s has no name; left out" % where)
                continue
            kept.append(entry)
        if kept:
            site["contacts"] = kept
    return (site or None), problems


def site_of(started):
    """``(site, problems)`` from the ``results_run_site`` fact the results role's start keeps on the controller
    (``{name, service_level, contacts}`` as the inventory gave them); (None, []) when the run has none."""
    if started is None:
        return None, []
    if not isinstance(started, dict):
        return None, ["results_run_site must be a mapping (name, service_level, contacts), not %s"
                      % type(started).__name__]
    return run_site(started.get("name"), started.get("service_level"), started.get("contacts"))


def build_results(run, hosts, cluster_checks=None, cluster_data=None):
    """Assemble the document. ``hosts`` maps name → host_record(); ``run`` carries the run metadata.

    ``cluster_data`` (e.g. ``{"fabric": {"rdma_pairs": ...}}``) sits beside the cluster checks; it cannot replace them.
    """
    host_counts = dict((status, 0) for status in HOST_STATUSES)
    check_counts = dict((status, 0) for status in CHECK_STATUSES)
    cluster_checks = list(cluster_checks or [])
    for record in hosts.values():
        host_counts[record["status"]] += 1
        for check in record["checks"]:
            check_counts[check["status"]] += 1
    for check in cluster_checks:
        check_counts[check["status"]] += 1
    run = dict(run)
    run.setdefault("hosts_total", len(hosts))
    return {
        "schema": SCHEMA_ID,
        "run": run,
        "hosts": dict(sorted(hosts.items())),
        "cluster": dict(cluster_data or {}, checks=cluster_checks),
        "summary": {"hosts": host_counts, "checks": check_counts},
    }


def load_schema(path=SCHEMA_PATH):
    with open(path) as handle:
        return json.load(handle)


_SIMPLE_KEYWORDS = {"type", "enum", "pattern", "minLength", "const"}


def _property_test(schema):
    """A predicate equivalent to a simple property schema (string type, enum, pattern, minLength, or ``{}``);
    None when the schema uses anything else (then jsonschema judges it)."""
    if not set(schema) <= _SIMPLE_KEYWORDS or schema.get("type", "string") != "string" or "const" in schema:
        return None
    if "enum" in schema:
        allowed = [value for value in schema["enum"] if isinstance(value, str)]
        if len(allowed) != len(schema["enum"]) or "pattern" in schema or "minLength" in schema:
            return None
        allowed = frozenset(allowed)
        return lambda value: isinstance(value, str) and value in allowed
    if "type" not in schema:
        return None if schema else (lambda value: True)
    pattern = re.compile(schema["pattern"]) if "pattern" in schema else None
    least = schema.get("minLength", 0)
    return lambda value: isinstance(value, str) and len(value) >= least and (pattern is None or pattern.search(value))


def _record_test(schema):
    """A predicate that accepts exactly the objects ``schema`` (an object schema of simple properties) accepts, or
    None when the schema is not that simple. Used for the check records, 60,000 in a 1,000-node run: jsonschema
    takes ~80 us a record, this ~2 us; any record it refuses goes to jsonschema for the exact error."""
    if schema.get("type") != "object" or schema.get("additionalProperties") is not False or \
            not set(schema) <= {"type", "required", "additionalProperties", "properties", "description"}:
        return None
    tests = {}
    for name, sub in (schema.get("properties") or {}).items():
        test = _property_test(sub)
        if test is None:
            return None
        tests[name] = test
    required = frozenset(schema.get("required") or ())
    allowed = frozenset(tests)
    items = list(tests.items())

    def accept(record):
        if not isinstance(record, dict) or not required <= record.keys() or not record.keys() <= allowed:
            return False
        return all(test(record[name]) for name, test in items if name in record)
    return accept


def _without_checks(results):
    """The document with every check list emptied (the records are checked apart)."""
    hosts = results.get("hosts")
    cluster = results.get("cluster")
    slim = dict(results)
    if isinstance(hosts, dict):
        slim["hosts"] = dict((name, dict(record, checks=[]) if isinstance(record, dict) and isinstance(record.get("checks"), list)
                              else record) for name, record in hosts.items())
    if isinstance(cluster, dict) and isinstance(cluster.get("checks"), list):
        slim["cluster"] = dict(cluster, checks=[])
    return slim


def _all_checks(results):
    for record in (results.get("hosts") or {}).values():
        if isinstance(record, dict) and isinstance(record.get("checks"), list):
            yield from record["checks"]
    cluster = results.get("cluster")
    if isinstance(cluster, dict) and isinstance(cluster.get("checks"), list):
        yield from cluster["checks"]


def schema_errors(results, schema):
    """jsonschema's errors of ``results`` against ``schema``, sorted by path; empty when it conforms.

    The document without its check records goes through jsonschema; the records themselves (60,000 in a 1,000-node
    run) through a predicate compiled from the schema's own ``$defs/check`` (same rules, a fortieth of the time); only
    when something fails does the whole document go through jsonschema, for its exact messages."""
    validator = jsonschema.Draft202012Validator(schema)
    check = _record_test((schema.get("$defs") or {}).get("check") or {})
    if check is not None and isinstance(results, dict) and validator.is_valid(_without_checks(results)) and \
            all(check(record) for record in _all_checks(results)):
        return []
    return sorted(validator.iter_errors(results), key=lambda err: [str(part) for part in err.absolute_path])


def validate(results, schema=None):
    """Return a list of schema violations (empty when valid, or when jsonschema is not installed)."""
    if jsonschema is None:
        return []
    problems = []
    for error in schema_errors(results, schema or load_schema()):
        where = "/".join(str(part) for part in error.absolute_path) or "(root)"
        problems.append("%s: %s" % (where, error.message))
    return problems


def atomic_write(path, text):
    """Write ``text`` to ``path`` through a temp file in the same directory and os.replace(). An OSError names
    ``path`` (a full disk's ENOSPC on write names no file of its own)."""
    try:
        _atomic_write(path, text)
    except OSError as exc:
        if exc.filename == path:
            raise
        raise OSError(exc.errno, exc.strerror or str(exc), path)


def _atomic_write(path, text):
    directory = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".%s." % os.path.basename(path), suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def point_latest(link, target_dir):
    """Make ``link`` a symlink to ``target_dir`` (relative when they share a parent), replaced atomically."""
    parent = os.path.dirname(link) or "."
    target = os.path.relpath(target_dir, parent)
    tmp = os.path.join(parent, ".%s.tmp%d" % (os.path.basename(link), os.getpid()))
    if os.path.lexists(tmp):
        os.unlink(tmp)
    os.symlink(target, tmp)
    os.replace(tmp, link)


def summary_lines(results):
    """A short per-node summary a terminal can show."""
    lines = []
    for name, record in results["hosts"].items():
        bad = [check for check in record["checks"] if check["status"] in ("fail", "error", "warn")]
        bad.sort(key=lambda check: -SEVERITY[check["status"]])
        detail = "; ".join("%s %s (%s) -> %s" % (check["id"], check["status"], check["component"] or "-", check["remedy"])
                           for check in bad[:3])
        if len(bad) > 3:
            detail += "; +%d more" % (len(bad) - 3)
        if record["status"] == "unreachable":
            detail = record.get("message", "")
        lines.append(("%-12s %-11s %s" % (name, record["status"].upper(), detail)).rstrip())
    counts = ", ".join("%s %d" % (status, count) for status, count in results["summary"]["hosts"].items() if count)
    lines.append("hosts: %s" % counts)
    return lines


def write_results(results, dest_dir, latest_link=None):
    """Write ``dest_dir/results.json`` and ``summary.txt`` atomically; point ``latest_link`` at ``dest_dir``."""
    if not os.path.isdir(dest_dir):
        os.makedirs(dest_dir)
    path = os.path.join(dest_dir, "results.json")
    atomic_write(path, json.dumps(results, indent=2, sort_keys=False, default=str) + "\n")
    atomic_write(os.path.join(dest_dir, "summary.txt"), "\n".join(summary_lines(results)) + "\n")
    if latest_link:
        point_latest(latest_link, dest_dir)
    return path


def merge_results(documents, run_id=None):
    """One document from several runs of the same kind over disjoint hosts (AWX job slices).

    A host found in two documents is an error (slices never overlap); cluster checks are concatenated and cluster data
    merged key by key (lists concatenated). The run spans the earliest start to the latest finish.
    """
    if not documents:
        raise ValueError("nothing to merge: no results documents were given")
    kinds = sorted(set(doc["run"]["kind"] for doc in documents))
    if len(kinds) > 1:
        raise ValueError("cannot merge runs of different kinds: %s" % ", ".join(kinds))
    hosts = {}
    cluster_checks = []
    cluster_data = {}
    for doc in documents:
        for name, record in doc["hosts"].items():
            if name in hosts:
                raise ValueError("host %s is in more than one of the merged runs (%s)" % (name, doc["run"]["id"]))
            hosts[name] = record
        cluster = dict(doc.get("cluster") or {})
        cluster_checks.extend(cluster.pop("checks", []))
        _merge_data(cluster_data, cluster)
    first = documents[0]["run"]
    run = dict(first)
    run["id"] = run_id or first["id"]
    run["started"] = min(doc["run"]["started"] for doc in documents)
    run["finished"] = max(doc["run"].get("finished") or doc["run"]["started"] for doc in documents)
    run["hosts_total"] = len(hosts)
    run["families"] = sorted(set(family for doc in documents for family in doc["run"].get("families") or []))
    run["merged_from"] = [doc["run"]["id"] for doc in documents]
    return build_results(run, hosts, cluster_checks, cluster_data=cluster_data)


def _merge_data(into, data):
    for key, value in data.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge_data(into[key], value)
        elif isinstance(value, list) and isinstance(into.get(key), list):
            into[key] = into[key] + value
        else:
            into[key] = value
