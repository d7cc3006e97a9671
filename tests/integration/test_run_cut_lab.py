# SPDX-License-Identifier: GPL-3.0-or-later
"""Runs cut off on the lab, as a scheduler cuts them (issue 25): ``ansible-playbook`` itself gets SIGTERM (a job
timeout, a container stop, a CI cancel, ``timeout(1)``) or SIGHUP (a closed terminal or SSH session) in the middle
of the run, while a node's nvidia-smi hangs (the lab's ``hang`` fault). What must hold: the run exits 143 / 129, its
``results.json`` is written, marked partial, saying which signal cut it, the report is rendered, and no process of
the run is left (workers, modules, the hung tool). Also: two inspections started in the same second keep two runs;
a host named with ``../`` writes nothing outside the run folder and the other nodes' record is kept.

The playbook is started the way ansible-runner starts it (its own session, so the run's processes can be found),
but the signal goes to ``ansible-playbook`` alone: what is tested is the playbook's own handling."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest
import yaml

from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import validate

from .conftest import BIN, REPO, start_lab

LABCTL = os.path.join(REPO, "lab", "labctl.py")


def _env():
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"),
               PATH=BIN + os.pathsep + os.environ.get("PATH", ""))
    env.pop("ANSIBLE_STDOUT_CALLBACK", None)
    return env


def start_playbook(tmp_path, playbook, inventory, extra, limit=None, name="run"):
    """``ansible-playbook`` in a session of its own (as ansible-runner starts it); (process, log path)."""
    argv = [os.path.join(BIN, "ansible-playbook"), "-i", str(inventory), os.path.join(REPO, "playbooks", playbook),
            "-e", json.dumps(extra)]
    if limit:
        argv += ["--limit", limit]
    log = tmp_path / ("%s.log" % name)
    with open(log, "wb") as out:
        proc = subprocess.Popen(argv, cwd=REPO, env=_env(), stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    return proc, log


def _stat(pid):
    """(state, ppid) of a live process, or None."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    return fields[0], int(fields[1])


def descendants(root):
    """Pids of ``root`` and every live process below it (workers, connections, modules, tools)."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _stat(int(entry))
            if stat:
                children.setdefault(stat[1], []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def alive(pids):
    """Those of ``pids`` still running (zombies are not)."""
    return sorted(pid for pid in pids if (_stat(pid) or (b"Z",))[0] != b"Z")


def cmdline_pids(needle):
    """Pids whose command line contains ``needle``."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % entry, "rb") as handle:
                if needle.encode() in handle.read():
                    pids.append(int(entry))
        except OSError:
            continue
    return pids


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError("timed out after %d s waiting for %s" % (timeout, what))


def labctl(*args):
    subprocess.run([sys.executable, LABCTL] + [str(a) for a in args], check=True, capture_output=True, timeout=60)


def cut(tmp_path, signum, playbook="inspect.yml"):
    """An inspection of node01 and node02 cut by ``signum`` while node01's nvidia-smi hangs: a dict of what is seen."""
    inventory = start_lab(tmp_path, "default.yml", nodes=2)
    lab_dir = tmp_path / "lab"
    try:
        labctl("fault", "--dir", lab_dir, "node01", "add", "hang", "tool=nvidia-smi")
        run_id = "cut-%s" % signal.Signals(signum).name.lower()
        out_root = tmp_path / "out"
        extra = {"results_out_root": str(out_root), "zhisuan_run_id": run_id, "zhisuan_families": ["gpu", "xid"],
                 "zhisuan_history_dir": str(tmp_path / "history"), "check_gpu_timeout": 600}
        proc, log = start_playbook(tmp_path, playbook, inventory, extra, limit="node01,node02")
        state = str(lab_dir / "nodes" / "node01" / "state.json")
        before = []
        try:
            hung = wait_for(lambda: cmdline_pids(state), 300, "node01's nvidia-smi to hang")
            time.sleep(1)
            # the run's processes: the playbook, its workers, their modules and tools (each tool in a session of its
            # own, so found by descent, and the lab's tools by their command line)
            before = alive(set(descendants(proc.pid)) | set(cmdline_pids(str(lab_dir))))
            proc.send_signal(signum)
            rc = proc.wait(timeout=120)
            time.sleep(1)
            left = alive(before)
        finally:
            for pid in alive(before):
                os.kill(pid, signal.SIGKILL)
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)
        folder = out_root / run_id
        path = folder / "results.json"
        return {"rc": rc, "log": log.read_text(errors="replace"), "hung": hung, "state": state, "before": before,
                "left": left,
                "document": json.loads(path.read_text()) if path.exists() else None, "folder": folder,
                "history": tmp_path / "history"}
    finally:
        subprocess.run([sys.executable, LABCTL, "down", "--dir", str(lab_dir)], capture_output=True, timeout=60)


@pytest.fixture(scope="module", params=[signal.SIGTERM, signal.SIGHUP], ids=["sigterm", "sighup"])
def cut_inspection(request, tmp_path_factory):
    return request.param, cut(tmp_path_factory.mktemp("cut-" + signal.Signals(request.param).name), request.param)


def test_the_cut_run_exits_as_killed_by_the_signal(cut_inspection):
    signum, seen = cut_inspection
    assert seen["rc"] == 128 + signum, seen["log"][-3000:]
    # the run was mid-task: the playbook, a worker, the module and the hung tool were running when the signal came
    assert len(seen["before"]) >= 4 and set(seen["hung"]) <= set(seen["before"])


def test_no_process_of_the_cut_run_is_left(cut_inspection):
    dummy, seen = cut_inspection
    assert seen["left"] == [], "left running: %s" % [open("/proc/%d/cmdline" % p, "rb").read() for p in seen["left"]]
    # the hung tool is gone: no process of that pid still runs it (a zombie is not running, and on a busy machine
    # the pid may already be another process's: only one with the node's state file on its command line counts)
    assert not [p for p in alive(seen["hung"]) if p in cmdline_pids(seen["state"])]


def test_the_partial_record_says_the_run_was_cut_by_the_signal(cut_inspection):
    signum, seen = cut_inspection
    document = seen["document"]
    assert document is not None, seen["log"][-3000:]
    assert validate(document) == []
    run = document["run"]
    name = signal.Signals(signum).name
    assert run["partial"] is True
    assert run["partial_reason"].startswith("the run was stopped (%s: " % name)
    partial = [c for c in document["cluster"]["checks"] if c["id"] == "run.record.partial"]
    assert len(partial) == 1 and partial[0]["status"] == "error" and name in partial[0]["message"]
    # both nodes are in the record, neither passes: node01 was never judged (its nvidia-smi hung)
    assert sorted(document["hosts"]) == ["node01", "node02"]
    assert document["hosts"]["node01"]["status"] != "pass"


def test_the_report_of_the_cut_run_is_rendered_and_says_partial(cut_inspection):
    dummy, seen = cut_inspection
    report = seen["folder"] / "report.md"
    assert report.exists(), sorted(p.name for p in seen["folder"].iterdir())
    assert "run.record.partial" in report.read_text()
    assert not [p.name for p in seen["folder"].iterdir() if p.name.startswith(".")]


# --- a remediation cut by SIGTERM after its GPU reset --------------------------------------------------------------

@pytest.fixture(scope="module")
def cut_remediation(tmp_path_factory):
    """remediate.yml on node03 of the Slurm lab, SIGTERM as soon as the history holds its reset (before verify and
    resume); then an inspection of the gpu and xid families."""
    from ansible_collections.zhisuan.ops.plugins.module_utils._remediate import history as remediation_history

    from .test_remediate_lab import FAST, Lab

    tmp_path = tmp_path_factory.mktemp("cut-remediate")
    lab = Lab(tmp_path, "remediate.yml")
    history_dir = tmp_path / "history"
    log = history_dir / remediation_history.FILE_NAME
    out_root = tmp_path / "out"
    try:
        extra = dict(FAST, zhisuan_history_dir=str(history_dir), results_out_root=str(out_root),
                     zhisuan_run_id="cut-remediate")
        proc, out = start_playbook(tmp_path, "remediate.yml", lab.inventory, extra, limit="node03", name="remediate")
        try:
            wait_for(lambda: log.exists() and any(r["outcome"] == "acted" for r in remediation_history.read(
                str(log), raw=True)), 300, "the reset in the history")
            leases_at_cut = sorted(os.listdir(history_dir / "leases"))
            proc.send_signal(signal.SIGTERM)
            rc = proc.wait(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)
        path = out_root / "cut-remediate" / "results.json"
        cut_run = {"rc": rc, "log": out.read_text(errors="replace"),
                   "document": json.loads(path.read_text()) if path.exists() else None,
                   "node": lab.nodes()["node03"], "history": remediation_history.read(str(log), raw=True),
                   "leases_at_cut": leases_at_cut,
                   "leases": sorted(name for name in os.listdir(history_dir / "leases") if not name.startswith("."))}
        extra = {"zhisuan_history_dir": str(history_dir), "results_out_root": str(out_root),
                 "zhisuan_run_id": "after-cut", "zhisuan_families": ["gpu", "xid"]}
        proc, out = start_playbook(tmp_path, "inspect.yml", lab.inventory, extra, name="inspect")
        inspect_rc = proc.wait(timeout=600)
        inspected = {"rc": inspect_rc, "log": out.read_text(errors="replace"),
                     "document": json.loads((out_root / "after-cut" / "results.json").read_text())}
        yield cut_run, inspected
    finally:
        lab.down()


def test_the_cut_remediation_writes_its_partial_record_and_keeps_its_reset(cut_remediation):
    cut_run, dummy = cut_remediation
    assert cut_run["rc"] == 143, cut_run["log"][-3000:]
    document = cut_run["document"]
    assert document is not None and validate(document) == []
    assert document["run"]["partial"] is True and document["run"]["kind"] == "remediate"
    assert document["run"]["partial_reason"].startswith("the run was stopped (SIGTERM: ")
    # the node that was acted on is in the record of the cut run, and not PASS
    assert document["hosts"]["node03"]["status"] != "pass"
    # the reset, appended as it returned, is in the history; nothing after it (the run was cut before verify)
    assert [(r["run_id"], r["node"], r["action"], r["outcome"]) for r in cut_run["history"]] == [
        ("cut-remediate", "node03", "reset_gpu", "acted")]
    # and the node is left drained with our mark: stranded
    assert cut_run["node"][0] == "drained" and cut_run["node"][1].startswith("zhisuan:")


def test_the_cut_remediation_releases_its_node_leases(cut_remediation):
    # the run held node03's lease when the signal came; stopped, it holds none (another controller's next run, an
    # AWX job in its own container, would otherwise be kept off the node for a day)
    cut_run, dummy = cut_remediation
    assert "node03.json" in cut_run["leases_at_cut"]
    assert cut_run["leases"] == []
    assert "released the node leases of run cut-remediate: node03" in cut_run["log"]


def test_the_next_inspection_reports_the_node_the_cut_run_stranded(cut_remediation):
    dummy, inspected = cut_remediation
    assert inspected["rc"] == 0, inspected["log"][-3000:]
    document = inspected["document"]
    stranded = [c for c in document["cluster"]["checks"] if c["id"] == "remediate.stranded.node03"]
    assert len(stranded) == 1 and stranded[0]["status"] == "warn"
    assert "run cut-remediate" in stranded[0]["message"] and "never resumed" in stranded[0]["message"]
    assert document["cluster"]["stranded"] == ["node03"]


# --- two inspections started in the same second --------------------------------------------------------------------

@pytest.fixture(scope="module")
def same_second(tmp_path_factory):
    """Two inspections (no run id given) started at once, one of node01 (ECC fault added), one of node02."""
    tmp_path = tmp_path_factory.mktemp("same-second")
    inventory = start_lab(tmp_path, "default.yml", nodes=2)
    try:
        labctl("fault", "--dir", tmp_path / "lab", "node01", "add", "ecc_volatile_uncorrectable", "gpu=3", "count=2")
        out_root = tmp_path / "out"
        extra = {"results_out_root": str(out_root), "zhisuan_families": ["gpu"],
                 "zhisuan_history_dir": str(tmp_path / "history")}
        runs = [start_playbook(tmp_path, "inspect.yml", inventory, extra, limit=node, name=node)
                for node in ("node01", "node02")]
        rcs = [proc.wait(timeout=600) for proc, dummy in runs]
        yield {"rcs": rcs, "logs": [log.read_text(errors="replace") for dummy, log in runs], "out": out_root,
               "history": tmp_path / "history"}
    finally:
        subprocess.run([sys.executable, LABCTL, "down", "--dir", str(tmp_path / "lab")], capture_output=True,
                       timeout=60)


def test_two_runs_of_the_same_second_keep_two_records_each_its_own_verdict(same_second):
    assert same_second["rcs"] == [0, 0], [log[-2000:] for log in same_second["logs"]]
    folders = sorted(p for p in same_second["out"].iterdir() if p.is_dir() and not p.is_symlink())
    assert len(folders) == 2
    documents = [json.loads((folder / "results.json").read_text()) for folder in folders]
    ids = [doc["run"]["id"] for doc in documents]
    assert len(set(ids)) == 2 and [folder.name for folder in folders] == ids
    # <UTC time to the second>Z-<kind>-<microseconds><4 random hex>
    assert all(re.fullmatch(r"\d{8}T\d{6}Z-inspect-\d{6}[0-9a-f]{4}", run_id) for run_id in ids), ids
    verdicts = dict((list(doc["hosts"])[0], doc["hosts"][list(doc["hosts"])[0]]["status"]) for doc in documents)
    assert verdicts == {"node01": "fail", "node02": "pass"}
    # each job printed its own run's verdict and paths
    for doc, log in zip(sorted(documents, key=lambda d: list(d["hosts"])[0]), same_second["logs"]):
        assert "/%s/results.json" % doc["run"]["id"] in log


def test_two_runs_of_the_same_second_keep_two_history_entries(same_second):
    kept = sorted(p.name for p in same_second["history"].glob("*.json"))
    assert len(kept) == 2


# --- hosts named with ../ and / ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def odd_names(tmp_path_factory):
    """A diagnosis with an evidence bundle for every node, of an inventory whose first two nodes are named
    ``../../escape`` and ``../results.json``."""
    tmp_path = tmp_path_factory.mktemp("odd-names")
    inventory = start_lab(tmp_path, "default.yml", nodes=3)
    try:
        doc = yaml.safe_load(open(inventory, encoding="utf-8"))
        hosts = doc["all"]["children"]["gpu_nodes"]["hosts"]
        renamed = {"../../escape": hosts.pop("node01"), "../results.json": hosts.pop("node02")}
        renamed["node03"] = hosts.pop("node03")
        doc["all"]["children"]["gpu_nodes"]["hosts"] = renamed
        odd = tmp_path / "odd.yml"
        odd.write_text(yaml.safe_dump(doc))
        out_root = tmp_path / "runs" / "out"
        before = set(str(p) for p in tmp_path.rglob("*"))
        extra = {"results_out_root": str(out_root), "zhisuan_run_id": "odd", "zhisuan_diag_level": "custom",
                 "zhisuan_diag_families": ["gpu"], "diagnose_evidence_failing_only": False,
                 "zhisuan_history_dir": str(tmp_path / "runs" / "history")}
        proc, log = start_playbook(tmp_path, "diagnose.yml", odd, extra, name="diagnose")
        rc = proc.wait(timeout=600)
        after = set(str(p) for p in tmp_path.rglob("*"))
        yield {"rc": rc, "log": log.read_text(errors="replace"), "tmp": tmp_path, "new": sorted(after - before),
               "run": out_root / "odd"}
    finally:
        subprocess.run([sys.executable, LABCTL, "down", "--dir", str(tmp_path / "lab")], capture_output=True,
                       timeout=60)


def test_nothing_is_written_outside_the_runs_folders(odd_names):
    assert odd_names["rc"] in (0, 2), odd_names["log"][-3000:]
    allowed = (str(odd_names["tmp"] / "runs"), str(odd_names["tmp"] / "diagnose.log"))
    outside = [path for path in odd_names["new"] if not path.startswith(allowed)
               and not path.startswith(str(odd_names["tmp"] / "lab"))]
    assert outside == []
    assert not [path for path in odd_names["new"] if "escape" in os.path.basename(path) and "/evidence/" not in path]


def test_every_nodes_record_is_kept_and_the_evidence_stays_inside(odd_names):
    record = odd_names["run"] / "results.json"
    assert record.is_file(), odd_names["log"][-3000:]
    document = json.loads(record.read_text())
    assert validate(document) == []
    assert sorted(document["hosts"]) == ["../../escape", "../results.json", "node03"]
    assert document["hosts"]["node03"]["checks"]
    evidence = sorted(p.name for p in (odd_names["run"] / "evidence").iterdir())
    assert "node03" in evidence and len(evidence) == 3
    assert all("/" not in name and not name.startswith(".") for name in evidence)
