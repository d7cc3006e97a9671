#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""make compat: the controller on the older ansible-core lines the collection supports (issue 27, item 1).

For each line (2.16, 2.17, 2.18) a venv under .compat/<line>/ is built from PyPI with the collection's runtime
dependencies at that line (cached: .compat/<line>/.installed is newer than pyproject.toml). In it run:

- the unit tests of the controller-side plugins (action, filter, callback and plugin_utils: the ones that import
  Ansible's controller code);
- playbooks on the lab, each run once with the line under test and once with the project's own ansible-core (2.19,
  .venv), on a fresh lab of the same scenario; their results.json must be equal check by check
  (bench/compare_results.py) and the run must end with rc 0 and no "does not support" warning.

2.16 runs every main playbook (acceptance, inspect, burnin, diagnose, delivery, remediate --check, a zh_CN report
re-render); 2.17 and 2.18 the lighter set (acceptance as in make demo, remediate --check, the report re-render).

    .venv/bin/python tests/compat/compat.py [--line 2.16] [--only acceptance,remediate] [--skip-unit]

Prints one line per step with its time and exits 1 when any step failed.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
sys.path.insert(0, os.path.join(REPO, "bench"))
import compare_results  # noqa: E402  (bench/ put on the path above)

COMPAT = os.path.join(REPO, ".compat")
REFERENCE_BIN = os.path.dirname(sys.executable)  # the project's venv (ansible-core 2.19)
LINES = {"2.16": "full", "2.17": "light", "2.18": "light"}
# test dependencies the controller unit tests import, pinned as in pyproject's dev extra
TEST_DEPS = ("pytest", "hypothesis", "babel", "xmlschema")
# and those that come with the dev tools (ansible-lint's rich), at the versions the project's venv has
TEST_EXTRA = ("markdown-it-py==4.3.0",)
# the unit tests that exercise controller code: action, filter and callback plugins and plugin_utils
UNIT_MARKERS = ("plugins.action", "plugins.filter", "plugins.callback", "plugins.lookup", "plugin_utils",
                "from ansible.template", "from ansible.playbook", "from ansible.executor", "from ansible.plugins",
                "from ansible.parsing", "from ansible.vars", "from ansible.inventory", "from ansible.errors")

FAST_GPU = {"zhisuan_burn_duration": 5, "check_burn_timeout": 8, "check_burn_poll_delay": 1, "check_burn_samples": 1,
            "check_dcgm_timeout": 4, "check_dcgm_health_timeout": 4}
FAST_REMEDIATE = {"zhisuan_verify_burn_duration": 2, "remediate_node_power_poll": 1,
                  "remediate_node_drain_timeout": 60,
                  "zhisuan_remediation_policy": {"limits": {"max_nodes": 6, "max_percent": 100}}}
REMEDIATE_NODES = "node02,node03,node04,node05,node06,node07,node08"


def _pins():
    """Project name -> requirement from pyproject.toml (runtime dependencies and the dev extra)."""
    with open(os.path.join(REPO, "pyproject.toml"), "rb") as handle:
        project = tomllib.load(handle)["project"]
    pins = {}
    for requirement in project["dependencies"] + project["optional-dependencies"]["dev"]:
        pins[requirement.split("==")[0].split(">")[0].strip().lower()] = requirement
    return pins


def ensure_venv(line):
    """The venv of an ansible-core line, built when missing or older than pyproject.toml; its bin directory."""
    venv = os.path.join(COMPAT, line)
    stamp = os.path.join(venv, ".installed")
    pyproject = os.path.join(REPO, "pyproject.toml")
    if os.path.exists(stamp) and os.path.getmtime(stamp) >= os.path.getmtime(pyproject):
        return os.path.join(venv, "bin")
    pins = _pins()
    requirements = ["ansible-core==%s.*" % line]
    requirements += [pin for pin in _pins_runtime() if not pin.startswith("ansible-core")]
    requirements += [pins[name] for name in TEST_DEPS] + list(TEST_EXTRA)
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", venv], check=True, timeout=120)
    subprocess.run([os.path.join(venv, "bin", "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
                   + requirements, check=True, timeout=900)
    with open(stamp, "w") as handle:
        handle.write("\n".join(requirements) + "\n")
    return os.path.join(venv, "bin")


def _pins_runtime():
    with open(os.path.join(REPO, "pyproject.toml"), "rb") as handle:
        return tomllib.load(handle)["project"]["dependencies"]


def unit_files():
    """The unit test files that import controller-side plugin code."""
    folder = os.path.join(REPO, "tests", "unit")
    files = []
    for name in sorted(os.listdir(folder)):
        if name.startswith("test_") and name.endswith(".py"):
            with open(os.path.join(folder, name)) as handle:
                text = handle.read()
            # module tests (ansible.module_utils.testing, 2.19's way of passing module arguments) are node side
            if any(marker in text for marker in UNIT_MARKERS) and "ansible.module_utils.testing" not in text:
                files.append(os.path.join("tests", "unit", name))
    return files


def run_unit(bin_dir):
    proc = subprocess.run([os.path.join(bin_dir, "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider"]
                          + unit_files(), cwd=REPO, capture_output=True, text=True, timeout=900, check=False)
    tail = proc.stdout.strip().splitlines()[-1:] or [proc.stderr.strip()[-400:]]
    return proc.returncode == 0, tail[0], proc.stdout[-6000:] + proc.stderr[-2000:]


class Lab:
    """A fresh lab of one scenario in a temporary folder (lab/labctl.py, run with the project's venv)."""

    def __init__(self, root, scenario):
        self.dir = os.path.join(root, "lab")
        self.inventory = os.path.join(root, "hosts.yml")
        subprocess.run([sys.executable, os.path.join(REPO, "lab", "labctl.py"), "up", "--scenario",
                        os.path.join(REPO, "lab", "scenarios", scenario), "--dir", self.dir,
                        "--inventory", self.inventory], check=True, capture_output=True, timeout=120)

    def down(self):
        subprocess.run([sys.executable, os.path.join(REPO, "lab", "labctl.py"), "down", "--dir", self.dir],
                       capture_output=True, timeout=120, check=False)


def playbook(bin_dir, name, inventory, out_root, extravars=None, limit=None, check=False):
    """ansible-playbook of one ansible-core line; (rc, output, results document or None)."""
    extra = {"results_out_root": out_root, "zhisuan_run_id": "compat"}
    extra.update(extravars or {})
    argv = [os.path.join(bin_dir, "ansible-playbook"), os.path.join(REPO, "playbooks", name), "-e", json.dumps(extra)]
    if inventory:
        argv += ["-i", inventory]
    if limit:
        argv += ["--limit", limit]
    if check:
        argv.append("--check")
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""))
    proc = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=600, check=False)
    with open(out_root.rstrip(os.sep) + ".log", "w") as handle:  # kept with --keep
        handle.write(proc.stdout + proc.stderr)
    path = os.path.join(out_root, "compat", "results.json")
    document = None
    if os.path.exists(path):
        with open(path) as handle:
            document = json.load(handle)
    return proc.returncode, proc.stdout + proc.stderr, document


def _problems(rc, output, document):
    problems = []
    if rc != 0:
        problems.append("rc %d: %s" % (rc, output[-3000:]))
    if "does not support" in output:
        problems.append("ansible-core warns the collection does not support it")
    if document is None:
        problems.append("no results.json")
    return problems


def _scenario_run(bin_dir, root, scenario, name, extravars=None, limit=None, check=False, before=None):
    """A fresh lab of ``scenario``, ``before(bin_dir, lab, root)`` (extra vars it returns are added), the playbook."""
    os.makedirs(root)
    lab = Lab(root, scenario)
    try:
        extra = dict(extravars or {})
        if before is not None:
            extra.update(before(bin_dir, lab, root))
        return playbook(bin_dir, name, lab.inventory, os.path.join(root, "out"), extra, limit, check)
    finally:
        lab.down()


def _diagnosis_first(bin_dir, lab, root):
    """remediate --check from a diagnosis of the same lab (tests/integration/test_remediate_lab.py)."""
    dummy, output, document = playbook(bin_dir, "diagnose.yml", lab.inventory, os.path.join(root, "diag"),
                                       {"zhisuan_diag_level": "custom", "zhisuan_diag_families": ["gpu", "xid"]},
                                       REMEDIATE_NODES)
    if document is None:
        raise RuntimeError("the diagnosis before remediate --check wrote no results: " + output[-2000:])
    return {"zhisuan_remediate_from": os.path.join(root, "diag", "compat", "results.json"),
            "zhisuan_history_dir": os.path.join(root, "history")}


# name -> (scenario, playbook, extra vars, limit, check mode, before)
RUNS = {
    "acceptance": ("default.yml", "acceptance.yml", None, None, False, None),
    "inspect": ("default.yml", "inspect.yml", None, None, False, None),
    "burnin": ("gpu-ops.yml", "burnin.yml", FAST_GPU, None, False, None),
    "diagnose": ("gpu-ops.yml", "diagnose.yml", dict(FAST_GPU, zhisuan_diag_level="deep"), None, False, None),
    "delivery": ("delivery.yml", "delivery.yml", None, None, False, None),
    "remediate": ("remediate.yml", "remediate.yml", FAST_REMEDIATE, None, True, _diagnosis_first),
}
FULL = ("acceptance", "inspect", "burnin", "diagnose", "delivery", "remediate", "report")
LIGHT = ("acceptance", "remediate", "report")


def _rerender(bin_dir, source, root):
    """playbooks/report.yml over a saved results.json, in Chinese; the re-rendered report.md."""
    os.makedirs(root)
    dest = os.path.join(root, "report")
    rc, output, dummy = playbook(bin_dir, "report.yml", None, os.path.join(root, "out"),
                                 {"report_src": source, "report_dest": dest, "report_language": "zh_CN"})
    path = os.path.join(dest, "report.md")
    text = None
    if os.path.exists(path):
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    return rc, output, text


def compare_run(line, bin_dir, name, work, saved):
    """Run ``name`` with ``line`` and with the reference; the list of problems (empty: equal)."""
    if name == "report":
        source = saved.get("acceptance")
        if source is None:
            return ["no acceptance results to re-render"]
        results = {}
        for label, binary in ((line, bin_dir), ("2.19", REFERENCE_BIN)):
            rc, output, text = _rerender(binary, source, os.path.join(work, "report-" + label))
            problems = [p for p in _problems(rc, output, {}) if p]
            if text is None:
                problems.append("no report.md")
            if problems:
                return ["%s: %s" % (label, p) for p in problems]
            results[label] = compare_results._normal(text)  # pylint: disable=protected-access
        return [] if results[line] == results["2.19"] else ["the zh_CN report.md differs from 2.19's"]
    scenario, book, extra, limit, check, before = RUNS[name]
    documents = {}
    for label, binary in ((line, bin_dir), ("2.19", REFERENCE_BIN)):
        root = os.path.join(work, "%s-%s" % (name, label))
        rc, output, document = _scenario_run(binary, root, scenario, book, extra, limit, check, before)
        problems = _problems(rc, output, document)
        if problems:
            return ["%s: %s" % (label, p) for p in problems]
        documents[label] = document
        if name == "acceptance" and label == "2.19":
            saved["acceptance"] = os.path.join(root, "out", "compat", "results.json")
    return compare_results.compare(documents["2.19"], documents[line])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--line", action="append", choices=sorted(LINES), help="only these lines (default: all)")
    parser.add_argument("--only", help="comma-separated runs (default: the line's set)")
    parser.add_argument("--skip-unit", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args(argv)
    failed = []
    start = time.monotonic()
    for line in args.line or sorted(LINES):
        step = time.monotonic()
        bin_dir = ensure_venv(line)
        print("compat %s: venv %s (%.0f s)" % (line, bin_dir, time.monotonic() - step), flush=True)
        if not args.skip_unit:
            step = time.monotonic()
            ok, summary, output = run_unit(bin_dir)
            print("compat %s: unit tests: %s (%.0f s)" % (line, summary, time.monotonic() - step), flush=True)
            if not ok:
                print(output)
                failed.append("%s unit" % line)
        names = args.only.split(",") if args.only else (FULL if LINES[line] == "full" else LIGHT)
        work = tempfile.mkdtemp(prefix="zhisuan-compat-%s-" % line)
        saved = {}
        try:
            for name in names:
                step = time.monotonic()
                try:
                    problems = compare_run(line, bin_dir, name, work, saved)
                except (subprocess.SubprocessError, RuntimeError, OSError) as exc:
                    problems = ["%s: %s" % (type(exc).__name__, exc)]
                verdict = "same results as 2.19" if not problems else "%d problems" % len(problems)
                print("compat %s: %s: %s (%.0f s)" % (line, name, verdict, time.monotonic() - step), flush=True)
                for problem in problems:
                    print("    " + problem)
                if problems:
                    failed.append("%s %s" % (line, name))
        finally:
            if args.keep:
                print("compat %s: work folder %s" % (line, work))
            else:
                shutil.rmtree(work, ignore_errors=True)
    print("compat: %s (%.0f s)" % ("failed: " + ", ".join(failed) if failed else "all passed",
                                   time.monotonic() - start))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
