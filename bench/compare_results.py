#!/usr/bin/env python3
"""Compare two results.json files check by check, ignoring times and run ids (issue 29: "the same results.json as
before for the existing families").

    .venv/bin/python bench/compare_results.py BEFORE.json AFTER.json [--ignore-family drive] [--measured storage]

Compared: the run's kind, families and host count; per host its status and every check's id, status, remedy,
component, message, observed and expected (the value); the cluster's checks; the summary's counts; the hosts' facts
without their timings. Times, run folders, lab paths and the lab BMCs' ports are placeholders (the lab's kernel log
times and a BMC log's "since" are fixed when the lab starts; a diagnosis's evidence folder is the run's). Checks of
an ``--ignore-family`` (a family added since BEFORE) are left out of AFTER.
Prints each difference and exits 1 when there is one.
"""

import argparse
import json
import re
import sys

FIELDS = ("id", "status", "remedy", "component", "message", "observed", "expected")
# what changes from run to run by itself
VOLATILE_FACTS = ("timing",)
# in the facts' text: the lab's kernel log times (fixed when the lab starts), the run's folder and the checkout's path
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:[+-]\d\d:?\d\d|Z)?")
_RUN_DIR = re.compile(r"\S*/reports/out/[^/\s]+")
_CHECKOUT = re.compile(r"\S*/lab/run/")
# the lab's BMCs listen on ports chosen when it starts
_LAB_PORT = re.compile(r"127\.0\.0\.1:\d+")


def _normal(value):
    """``value`` with times, run folders and checkout paths replaced by placeholders."""
    text = json.dumps(value, sort_keys=True)
    text = _CHECKOUT.sub("<lab>/", _RUN_DIR.sub("<run>", _TIME.sub("<time>", text)))
    return _LAB_PORT.sub("127.0.0.1:<port>", text)


def _family(check):
    return str(check.get("id", "")).split(".", 1)[0]


# what a check of a measured family (fio on the machine the lab runs on) is compared by: not its measured value
MEASURED_FIELDS = ("id", "status", "remedy", "component")
_MEASURED = set()


def _checks(checks, ignored):
    return [tuple(_normal(check.get(field)) for field in (MEASURED_FIELDS if _family(check) in _MEASURED else FIELDS))
            for check in checks if _family(check) not in ignored]


def _facts(facts, ignored):
    return dict((key, _normal(value)) for key, value in (facts or {}).items()
                if key not in VOLATILE_FACTS and key not in ignored and key not in _MEASURED)


def compare(before, after, ignored=()):
    """The differences between two results documents, as lines."""
    out = []
    for key in ("kind", "families", "hosts_total"):
        if before["run"].get(key) != after["run"].get(key):
            out.append("run.%s: %r != %r" % (key, before["run"].get(key), after["run"].get(key)))
    hosts = sorted(set(before["hosts"]) | set(after["hosts"]))
    for host in hosts:
        one, two = before["hosts"].get(host), after["hosts"].get(host)
        if one is None or two is None:
            out.append("%s: only in %s" % (host, "after" if one is None else "before"))
            continue
        if one.get("status") != two.get("status"):
            out.append("%s: status %r != %r" % (host, one.get("status"), two.get("status")))
        a, b = _checks(one.get("checks") or [], ()), _checks(two.get("checks") or [], ignored)
        if a != b:
            missing = [row for row in a if row not in b]
            extra = [row for row in b if row not in a]
            out.append("%s: checks differ (%d before, %d after): %d only before, %d only after%s" % (
                host, len(a), len(b), len(missing), len(extra),
                "" if missing or extra else " (same checks, another order)"))
            out.extend("  - %s" % "|".join(row) for row in missing[:5])
            out.extend("  + %s" % "|".join(row) for row in extra[:5])
        if _facts(one.get("facts"), ()) != _facts(two.get("facts"), ignored):
            keys = sorted(set(_facts(one.get("facts"), ())) | set(_facts(two.get("facts"), ignored)))
            old, new = _facts(one.get("facts"), ()), _facts(two.get("facts"), ignored)
            changed = [key for key in keys if old.get(key) != new.get(key)]
            out.append("%s: facts differ: %s" % (host, ", ".join(changed)))
    if _checks(before["cluster"].get("checks") or [], ()) != _checks(after["cluster"].get("checks") or [], ignored):
        out.append("cluster: checks differ")
    if not ignored and before.get("summary") != after.get("summary"):  # the counts of every status
        out.append("summary: %r != %r" % (before.get("summary"), after.get("summary")))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--ignore-family", action="append", default=[])
    parser.add_argument("--measured", action="append", default=[],
                        help="a family measured for real on each run (storage: fio): its checks compared by id, "
                             "status, remedy and component, its facts left out")
    args = parser.parse_args(argv)
    _MEASURED.update(args.measured)
    with open(args.before) as handle:
        before = json.load(handle)
    with open(args.after) as handle:
        after = json.load(handle)
    differences = compare(before, after, tuple(args.ignore_family))
    for line in differences:
        print(line)
    checks = sum(len(host.get("checks") or []) for host in before["hosts"].values())
    print("%s: %d hosts, %d checks: %s" % (before["run"].get("kind"), len(before["hosts"]), checks,
                                          "%d differences" % len(differences) if differences else "identical"))
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
