# SPDX-License-Identifier: GPL-3.0-or-later
"""The corpus of real vendor Redfish trees (issue 22 item 8): each tree of tests/fixtures/redfish that
``CORPUS.yml`` describes is served by ``sushy-static`` over TLS and read by the real collector through the real
HTTP client: the functions the modules redfish_info, redfish_firmware_info and redfish_log_info run (``run_info``,
``run_firmware_info``, ``logs.run``, given the module's validated options), then judged as zhisuan.ops.judge does
it for check_bmc and check_baseline (``judge_family``): the ``bmc`` family (``judge_bmc``) with a bill of materials
that is the tree's own truths and the BMC log as context, the ``baseline`` family (``judge_baseline`` with the
shipped firmware classes) with a baseline that is the tree's own firmware versions, the vendor and the ``bmc``
facts as context. Every truth of CORPUS.yml is its own test id (``<tree>-<truth>``):

- ``collect``: the reads and the judges raise nothing;
- ``manufacturer``, ``model``, ``serial``, ``power_state``, ``bios_version``, ``bmc_firmware``, ``system_health``:
  the identity in ``bmc.system`` / ``bmc.manager`` (a value the tree does not hold must be null, not guessed);
- ``gpu_count``, ``gpu_model``, ``dimm_count``, ``drive_count``, ``psu_count``: the ``bmc.*.count`` /
  ``bmc.gpu.model`` check passes against the tree's own bill of materials (counts over every ComputerSystem);
- ``unhealthy:<path>``: some warn, fail or error check names the part (any of its ``names``, as a word);
- ``unreadable:<path>``: the facts say the resource could not be read;
- ``firmware:<key>``: ``baseline.<key>.version`` passes against the tree's own versions (no drift), and it compares
  as many items as the truth lists (none of them left out as ``other``, nothing extra);
- ``critical_events``: ``bmc.sel.critical`` counts exactly the Critical hardware entries (and is no pass where a
  log cannot be read whole);
- ``audit_not_hardware``: no audit/security/maintenance entry is among them.

One sushy-static per tree, all started together (each serves a read-only folder); the trees are read one after
the other, each once, and the results shared by its tests.
"""

from __future__ import annotations

import os
import re
import traceback

import pytest
import yaml

from ansible_collections.zhisuan.ops.plugins.module_utils._redfish import logs
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.inventory import run_firmware_info, run_info
from ansible_collections.zhisuan.ops.plugins.module_utils._judge.baseline import gather_versions
from ansible_collections.zhisuan.ops.plugins.plugin_utils._judging import firmware_table, judge_family

from .conftest import REPO
from .test_redfish_independent import free_port, make_ca, start_logged, stop_all, sushy_static_argv, wait_tls

FIXTURES = os.path.join(REPO, "tests", "fixtures", "redfish")
with open(os.path.join(FIXTURES, "CORPUS.yml")) as _handle:
    CORPUS = yaml.safe_load(_handle)["trees"]
USER = "delivery"
PASSWORD = "Corpus-5k!Vq8#zR2"
HOST = "corpus-node"
IDENTITY = (("manufacturer", "vendor"), ("model", "model"), ("serial", "serial"), ("power_state", "power_state"),
            ("bios_version", "bios_version"), ("health", "system_health"))
FLAGGED = ("warn", "fail", "error")
BOM = (("gpu_count", "gpus", "bmc.gpu.count"), ("dimm_count", "dimms", "bmc.memory.count"),
       ("drive_count", "drives", "bmc.drive.count"), ("psu_count", "psus", "bmc.psu.count"))


def expected_of(truths):
    """The bill of materials a delivery would give: the tree's own counts (and GPU model, matched whole)."""
    expected = {}
    for key, section, _ in BOM:
        if truths[section]["count"] is not None:
            expected[key] = truths[section]["count"]
    if truths["gpus"]["count"] and truths["gpus"]["model"]:
        expected["gpu_model"] = "^%s$" % re.escape(truths["gpus"]["model"])
    return expected


def accepted(version):
    """A baseline entry accepting the version as the tree gives it, or one of its version-like words (an adapter may
    report ``2.72`` for ``2.72 Sep 04 2022``)."""
    words = [version] + re.findall(r"[0-9][0-9A-Za-z._-]*", version)
    return "^(?:%s)$" % "|".join(re.escape(word) for word in dict.fromkeys(words))


def baseline_of(truths):
    return {key: [{"regex": accepted(item["version"])} for item in items]
            for key, items in (truths.get("firmware") or {}).items()}


def cases():
    for tree in sorted(CORPUS):
        truths = CORPUS[tree]
        found = ["collect"] + [name for name, _ in IDENTITY] + ["bmc_firmware"]
        found += [key for key, section, _ in BOM if truths[section]["count"] is not None]
        if truths["gpus"]["count"] and truths["gpus"]["model"]:
            found.append("gpu_model")
        found += ["unhealthy:%s" % part["path"] for part in truths.get("unhealthy") or []]
        found += ["unreadable:%s" % path for path in truths.get("unreadable") or []]
        found += ["firmware:%s" % key for key in truths.get("firmware") or {}]
        found.append("critical_events")
        if (truths.get("audit_entries") or {}).get("critical"):
            found.append("audit_not_hardware")
        for truth in found:
            yield pytest.param(tree, truth, id="%s-%s" % (tree, truth))


CASES = list(cases())


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """tree -> (address, CA path): one sushy-static per tree of the corpus."""
    folder = tmp_path_factory.mktemp("sushy-corpus")
    ca, cert, key = make_ca(folder)
    processes, addresses = [], {}
    try:
        for tree in sorted(CORPUS):
            port = free_port()
            process = start_logged(folder, processes, tree,
                                   sushy_static_argv(port, os.path.join(FIXTURES, tree), cert, key))
            addresses[tree] = (port, process)
        for tree, (port, process) in addresses.items():
            wait_tls(port, ca, process)
        yield {tree: ("https://127.0.0.1:%d" % port, ca) for tree, (port, _) in addresses.items()}
    finally:
        stop_all(processes)


class Module(object):
    """What run_module hands a Redfish module's function: its validated options and ``warn``."""

    def __init__(self, params, warnings):
        self.params = params
        self.warnings = warnings

    def warn(self, text):
        self.warnings.append(text)


def read_tree(address, ca, truths):
    """What delivery's check_bmc and check_baseline read and judge for one BMC (the modules' defaults:
    ``auth: auto``, ``log_services: events``); ``problem`` is the traceback of what raised."""
    result = {"warnings": [], "problem": None}
    params = {"bmc_address": address, "bmc_username": USER, "bmc_password": PASSWORD, "bmc_port": None,
              "auth": "auto", "validate_certs": True, "ca_path": ca, "timeout": 15, "log_services": "events",
              "since": None}
    try:
        module = Module(params, result["warnings"])
        info = run_info(module)
        result["facts"] = info["bmc"]
        result["firmware"] = run_firmware_info(module)["firmware"]
        read = logs.run(module)
        result["log"] = read["log"]
        result["checks"] = judge_family("bmc", HOST, info, expected=expected_of(truths), context={
            "log": read["log"], "log_errors": read.get("log_errors") or [], "since": None,
            "firmware": result["firmware"]})[0]
        # what the baseline judge compares, per key (the same firmware table and vendor as judge_family's)
        result["versions"] = gather_versions(firmware=result["firmware"], bmc=result["facts"], classes=firmware_table(),
                                             vendor=result["facts"].get("vendor"))
        result["baseline"] = judge_family("baseline", HOST, {"firmware": result["firmware"]}, context={
            "software": {}, "baseline": baseline_of(truths), "bios_attributes": {}, "bios_expected": {},
            "vendor": result["facts"].get("vendor"), "bmc": result["facts"]})[0]
    except Exception:  # noqa: BLE001 - the truth "collect" reports it; the others fail on it
        result["problem"] = traceback.format_exc()
    return result


@pytest.fixture(scope="module")
def readouts(served):
    cache = {}

    def get(tree):
        if tree not in cache:
            address, ca = served[tree]
            cache[tree] = read_tree(address, ca, CORPUS[tree])
        return cache[tree]
    return get


def text_of(check):
    return " ".join(str(check.get(field) or "") for field in ("component", "observed", "message", "evidence"))


def names_in(names, text):
    return any(re.search(r"(?<![A-Za-z0-9])%s(?![A-Za-z0-9])" % re.escape(name), text, re.IGNORECASE)
               for name in names)


def one_check(checks, check_id):
    found = [check for check in checks if check["id"] == check_id]
    assert len(found) == 1, "%s: %d checks (%s)" % (check_id, len(found), [c["id"] for c in checks])
    return found[0]


def shown(check):
    return "%s %s observed=%r expected=%r: %s | %s" % (check["id"], check["status"], check.get("observed"),
                                                        check.get("expected"), check.get("message"),
                                                        check.get("evidence"))


def test_the_corpus_has_the_trees_it_says():
    assert len(CORPUS) >= 8
    for tree, truths in CORPUS.items():
        assert os.path.isfile(os.path.join(FIXTURES, tree, "index.json")), tree
        for member in truths["systems"]["members"]:
            assert os.path.isfile(os.path.join(FIXTURES, tree, member, "index.json")), (tree, member)
        assert truths["systems"]["count"] == len(truths["systems"]["members"])
        for part in truths.get("unhealthy") or []:
            assert os.path.isfile(os.path.join(FIXTURES, tree, part["path"], "index.json")), (tree, part["path"])
        for items in (truths.get("firmware") or {}).values():
            for item in items:
                assert os.path.isfile(os.path.join(FIXTURES, tree, item["from"], "index.json")), (tree, item)


@pytest.mark.parametrize("tree,truth", CASES)
def test_truth(readouts, tree, truth):
    truths = CORPUS[tree]
    result = readouts(tree)
    if truth == "collect":
        assert result["problem"] is None, result["problem"]
        return
    assert result["problem"] is None, "the read or the judges raised:\n%s" % result["problem"]
    facts, checks = result["facts"], result["checks"]
    system, manager = facts.get("system") or {}, facts.get("manager") or {}
    identity = dict(IDENTITY)
    if truth in identity:
        want = truths[identity[truth]]
        # a list: the value of any of the ComputerSystems the BMC serves (multi-node blades)
        assert system.get(truth) in want if isinstance(want, list) else system.get(truth) == want, \
            "bmc.system.%s is %r, truth %r: from %s" % (truth, system.get(truth), want, truths[
                "system_health_from"] if truth == "health" else truths["identity_from"])
    elif truth == "bmc_firmware":
        assert manager.get("firmware_version") == truths["bmc_firmware"], manager
    elif truth in dict((key, check_id) for key, _, check_id in BOM):
        section, check_id = [(section, check_id) for key, section, check_id in BOM if key == truth][0]
        check = one_check(checks, check_id)
        assert check["status"] == "pass", "%s (truth: %s)" % (shown(check), truths[section]["where"])
    elif truth == "gpu_model":
        check = one_check(checks, "bmc.gpu.model")
        assert check["status"] == "pass", "%s (truth: %s)" % (shown(check), truths["gpus"]["where"])
    elif truth.startswith("unhealthy:"):
        part = [item for item in truths["unhealthy"] if item["path"] == truth.split(":", 1)[1]][0]
        naming = [check for check in checks + result["baseline"] if check["status"] in FLAGGED
                  and names_in(part["names"], text_of(check))]
        assert naming, "no warn, fail or error check names %s (%s %s: %s); flagged: %s" % (
            part["path"], part["health"], part["state"], part["what"],
            [check["id"] for check in checks if check["status"] in FLAGGED])
    elif truth.startswith("unreadable:"):
        path = truth.split(":", 1)[1]
        said = " ".join(str(item) for item in facts.get("errors") or []) + " " + str(facts.get("unreadable") or "")
        assert "/redfish/v1/" + path in said, "the facts do not say %s could not be read: errors=%r unreadable=%r" % (
            path, facts.get("errors"), facts.get("unreadable"))
    elif truth.startswith("firmware:"):
        key = truth.split(":", 1)[1]
        check = one_check(result["baseline"], "baseline.%s.version" % key)
        want = ", ".join("%s=%s" % (item["from"], item["version"]) for item in truths["firmware"][key])
        assert check["status"] == "pass", "%s (truth: %s)" % (shown(check), want)
        # every running item the truth keeps is compared, and nothing else: as many entries as the truth has
        compared = result["versions"].get(key) or []
        assert len(compared) == len(truths["firmware"][key]), "%s compares %d items: %s (truth: %d: %s)" % (
            check["id"], len(compared), compared, len(truths["firmware"][key]), want)
    elif truth == "critical_events":
        events = truths["critical_hardware_events"]
        check = one_check(checks, "bmc.sel.critical")
        if events.get("incomplete"):
            # a log with a next page that cannot be read: what was read is counted, but no pass
            assert check["observed"] == events["count"] and check["status"] != "pass", \
                "%s (truth: %d Critical hardware entries read; not whole: %s)" % (
                    shown(check), events["count"], events["incomplete"])
        else:
            assert check["observed"] == events["count"] and check["status"] == (
                "fail" if events["count"] else "pass"), "%s (truth: %d Critical hardware entries in %s)" % (
                    shown(check), events["count"], events["logs"])
    elif truth == "audit_not_hardware":
        audit = truths["audit_entries"]
        check = one_check(checks, "bmc.sel.critical")
        # the judge may say it left them out; it must not count them
        assert check["observed"] == truths["critical_hardware_events"]["count"], \
            "%s (truth: %d Critical audit entries in %s, none hardware: %s)" % (
                shown(check), audit["critical"], list(audit["logs"]), audit["note"])
    else:
        raise AssertionError("unknown truth %s" % truth)


def test_no_password_in_any_result(readouts):
    for tree in sorted(CORPUS):
        result = readouts(tree)
        assert PASSWORD not in repr(result), tree
