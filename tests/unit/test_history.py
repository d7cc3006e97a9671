# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Run history (plugin_utils/_history.py) and O&M KPIs (plugin_utils/_kpi.py) on a sequence of runs in which faults
appear, persist and get repaired."""

from __future__ import annotations

import copy
import json
import os
import re

import pytest

from ansible_collections.zhisuan.ops.plugins.plugin_utils import _history as history
from ansible_collections.zhisuan.ops.plugins.plugin_utils import _kpi as kpi

from report_samples import check, rich_results


def host(name, failing=None, count=8):
    checks = [check("gpu.count.present", name, "pass", "node", count, "== 8", "8 GPUs"),
              check("xid.events.count", name, "pass", "kernel log", 0, "== 0", "no XID")]
    if failing:
        checks.append(failing)
    return {"status": "fail" if failing else "pass", "checks": checks, "facts": {"gpu": {"model": "A100", "count": count}}}


def down():
    return {"status": "unreachable", "checks": [], "facts": {}, "message": "Connection refused"}


def run(number, hour, hosts, kind="inspect"):
    started = "2026-11-30T%02d:00:00+00:00" % hour
    return {"schema": "zhisuan.ops/results/v1",
            "run": {"id": "r%d" % number, "kind": kind, "started": started, "finished": started, "playbook": "p",
                    "collection_version": "0.1.0", "ansible_version": "2.19.14", "hosts_total": len(hosts)},
            "hosts": hosts, "cluster": {"checks": []}, "summary": {"hosts": {}, "checks": {}}}


ECC = check("gpu.ecc.volatile_uncorrectable", "node02", "fail", "GPU 3 (GPU-5c1e, 0000:4E:00.0)", 2, "== 0",
            "GPU 3 has 2 uncorrectable ECC errors", "reset_gpu")


@pytest.fixture(name="sequence")
def fixture_sequence():
    """r1 (00:00) all pass; r2 (02:00) node02 ECC fail on GPU 3, node03 unreachable; r3 (04:00) node02 still
    failing, node03 back; r4 (10:00) all pass."""
    return [
        run(1, 0, {"node01": host("node01"), "node02": host("node02"), "node03": host("node03")}),
        run(2, 2, {"node01": host("node01"), "node02": host("node02", ECC), "node03": down()}),
        run(3, 4, {"node01": host("node01"), "node02": host("node02", ECC), "node03": host("node03")}),
        run(4, 10, {"node01": host("node01"), "node02": host("node02"), "node03": host("node03")}),
    ]


def keys(items):
    return [(item["host"], item["id"]) for item in items]


def test_compare_new_persisting_fixed(sequence):
    r1, r2, r3, r4 = sequence
    first = history.compare_runs(r1, r2)
    assert keys(first["new"]) == [("node02", "gpu.ecc.volatile_uncorrectable"), ("node03", "host.reachable")]
    assert first["new"][0]["components"] == ["GPU 3 (GPU-5c1e, 0000:4E:00.0)"]
    assert first["new"][0]["remedy"] == "reset_gpu"
    assert first["previous"] == {"id": "r1", "kind": "inspect", "started": "2026-11-30T00:00:00+00:00"}
    second = history.compare_runs(r2, r3)
    assert (keys(second["new"]), keys(second["persisting"]), keys(second["fixed"])) == (
        [], [("node02", "gpu.ecc.volatile_uncorrectable")], [("node03", "host.reachable")])
    third = history.compare_runs(r3, r4)
    assert keys(third["fixed"]) == [("node02", "gpu.ecc.volatile_uncorrectable")] and third["unchecked"] == []


def test_a_failure_not_looked_at_again_is_not_fixed(sequence):
    r3 = sequence[2]
    gone = run(5, 11, {"node01": host("node01"), "node02": down(), "node03": host("node03")})
    result = history.compare_runs(r3, gone)
    assert keys(result["unchecked"]) == [("node02", "gpu.ecc.volatile_uncorrectable")]
    assert keys(result["new"]) == [("node02", "host.reachable")] and result["fixed"] == []
    # a run of other families only (tags) does not close a gpu failure either
    other = run(6, 12, {"node01": host("node01"), "node02": {"status": "pass", "facts": {}, "checks": [
        check("tuning.sysctl.value", "node02", "pass", "vm.swappiness", 1, "== 1", "ok")]}, "node03": host("node03")})
    assert keys(history.compare_runs(r3, other)["unchecked"]) == [("node02", "gpu.ecc.volatile_uncorrectable")]


def test_previous_run_is_the_latest_earlier_run_of_the_same_kind(sequence):
    r1, r2, r3, dummy_r4 = sequence
    other_kind = run(9, 3, {"node01": host("node01")}, kind="acceptance")
    assert history.previous_run([r1, r2, other_kind, r3], r3)["run"]["id"] == "r2"
    assert history.previous_run([r1, r2, r3], r1) is None
    assert history.previous_run([r3], r3) is None  # not itself


def test_a_partial_run_is_never_the_run_compared_with(sequence):
    r1, r2, r3, dummy_r4 = sequence
    cut = copy.deepcopy(r2)
    cut["run"].update(partial=True, partial_reason="the run was stopped (SIGTERM: a cancel, a timeout or a hang-up)")
    # the cut run started after r1 and before r3: r3 is compared with r1, the last run that ran to its end
    assert history.previous_run([r1, cut, r3], r3)["run"]["id"] == "r1"
    assert history.previous_run([cut, r3], r3) is None


def test_kpis_over_the_sequence(sequence):
    result = kpi.kpis(list(reversed(sequence)))  # order of the input does not matter
    assert (result["runs"], result["span_h"], result["hosts"]) == (4, 10.0, 3)
    assert [(e["host"], e["class"], e["detected_run"], e["repaired_run"]) for e in result["episodes"]] == [
        ("node02", "gpu.ecc", "r2", "r4"), ("node03", "host.reachable", "r2", "r3")]
    # [0,2) 24 of 24 GPUs healthy; [2,4) 8 + 7 + 0 (unreachable) = 15; [4,10) 8 + 7 + 8 = 23 -> (48+30+138)/240
    assert result["availability"] == {"pct": 90.0, "gpu_hours_healthy": 216.0, "gpu_hours_total": 240.0,
                                      "span_h": 10.0, "runs": 4, "method": "time-weighted",
                                      "denominator": {"gpus": 24, "hosts": 3, "bom_hosts": 3}}
    # MTBF: 3 hosts x 10 h = 30 host-hours, less the hours in an episode of the class, per fault
    assert result["classes"] == [
        {"class": "gpu.ecc", "faults": 1, "open": 0, "repaired": 1, "mttr_h": 8.0, "mtbf_h": 22.0},
        {"class": "host.reachable", "faults": 1, "open": 0, "repaired": 1, "mttr_h": 2.0, "mtbf_h": 28.0},
    ]
    assert (result["faults_total"], result["faults_open"], result["mttr_h"]) == (2, 0, 5.0)
    assert [(r["host"], r["class"], r["hours"]) for r in result["repairs"]] == [
        ("node02", "gpu.ecc", 8.0), ("node03", "host.reachable", 2.0)]


def test_kpis_with_the_remediation_log_and_an_open_fault(sequence):
    log = [{"time": "2026-11-30T03:00:00+00:00", "run_id": "rem1", "node": "node02",
            "cause": "gpu.ecc.volatile_uncorrectable", "action": "reset_gpu", "outcome": "fixed",
            "detected": "2026-11-30T02:00:00+00:00", "repaired": "2026-11-30T03:00:00+00:00"},
           {"time": "x", "node": "node01", "cause": "xid.79.events", "action": "power_cycle", "outcome": "failed",
            "detected": "2026-11-30T02:00:00+00:00", "resumed": "2026-11-30T02:30:00+00:00"},
           # the shape zhisuan.ops.remediation_history writes: the node resumed after a repair
           {"schema": "zhisuan.ops/remediation-history/v1", "time": "2026-11-30T04:30:00+00:00", "run_id": "rem2",
            "node": "node03", "cause": "host.reachable", "action": "power_cycle", "outcome": "repaired",
            "detected": "2026-11-30T02:00:00+00:00", "started": "2026-11-30T02:10:00+00:00",
            "finished": "2026-11-30T02:20:00+00:00", "resumed": "2026-11-30T02:30:00+00:00",
            "durations": {"detect_to_action_s": 600.0, "action_s": 600.0, "detect_to_repair_s": 1800.0}}]
    result = kpi.kpis(sequence[:3], log)
    ecc = [c for c in result["classes"] if c["class"] == "gpu.ecc"][0]
    assert ecc == {"class": "gpu.ecc", "faults": 1, "open": 1, "repaired": 0, "mttr_h": 1.0, "mtbf_h": 10.0}
    assert result["repairs"][-2] == {"host": "node02", "class": "gpu.ecc", "detected": "2026-11-30T02:00:00+00:00",
                                     "repaired": "2026-11-30T03:00:00+00:00", "hours": 1.0, "source": "remediation",
                                     "action": "reset_gpu", "outcome": "fixed"}
    # the failed power cycle is no repair; the repaired one counts from detection to the node's return to service
    assert [(r["host"], r["class"], r["hours"], r["source"]) for r in result["repairs"]] == [
        ("node03", "host.reachable", 2.0, "runs"), ("node02", "gpu.ecc", 1.0, "remediation"),
        ("node03", "host.reachable", 0.5, "remediation")]
    assert [c["mttr_h"] for c in result["classes"]] == [1.0, 1.25]
    assert result["faults_open"] == 1


def test_single_run_availability_is_a_snapshot(sequence):
    result = kpi.kpis([sequence[1]])
    assert result["availability"]["method"] == "snapshot"
    assert (result["availability"]["gpus_healthy"], result["availability"]["gpus_total"]) == (15, 16)
    assert result["classes"][0]["mtbf_h"] is None  # no time observed
    assert kpi.kpis([]) is None


@pytest.mark.parametrize("component, unhealthy", [
    ("GPU 3 (GPU-5c1e, 0000:4E:00.0)", 1), ("GPUs", 8), ("node", 8)])
def test_unhealthy_gpus(component, unhealthy):
    record = host("n", check("gpu.pcie.width", "n", "fail", component, 8, "== 16", "narrow", "reseat"))
    assert kpi.unhealthy_gpus(record, 8) == unhealthy
    assert kpi.unhealthy_gpus(host("n", check("tuning.sysctl.value", "n", "fail", "node", 0, 1, "m", "tune")), 8) == 0


def test_fault_class():
    assert kpi.fault_class("gpu.ecc.volatile_uncorrectable") == "gpu.ecc"
    assert kpi.fault_class("host.reachable") == "host.reachable"


def test_fleet_outliers():
    results = rich_results()
    # the real fio capture on every node; edited: node02's seq_read at 82 % of it, node07's rand_write IOPS at 93 %
    results["hosts"]["node02"]["facts"]["storage"]["jobs"]["seq_read"]["bw_mib"] = round(1008.928 * 0.82, 3)
    results["hosts"]["node07"]["facts"]["storage"]["jobs"]["rand_write"]["iops"] = round(53690.619 * 0.93, 3)
    found = history.fleet_outliers(results)
    assert [(o["host"], o["metric"], o["pct_below"]) for o in found] == [
        ("node05", "RDMA pair bandwidth, node median (Gb/s)", 37.7),
        ("node06", "NCCL all_reduce_perf busbw (GB/s)", 20.0),
        ("node02", "storage seq_read MiB/s", 18.0),
    ]
    assert found[1]["value"] == 188.21 and found[1]["peer_median"] == 235.26
    assert history.fleet_outliers(results, pct=25) == found[:1]
    assert history.fleet_outliers(rich_results(nodes=3)) == []  # fewer than 3 peers: nothing is compared


def test_store_and_load_history(tmp_path, sequence):
    folder = str(tmp_path / "history")
    for doc in reversed(sequence):
        path, changed = history.store_run(folder, doc)
        assert changed and os.path.basename(path) == doc["run"]["id"] + ".json"
    assert history.store_run(folder, sequence[0]) == (os.path.join(folder, "r1.json"), False)
    (tmp_path / "history" / "broken.json").write_text("{", encoding="utf-8")
    (tmp_path / "history" / "list.json").write_text("[]", encoding="utf-8")
    (tmp_path / "history" / "notes.txt").write_text("x", encoding="utf-8")
    warnings = []
    loaded = history.load_history(folder, warn=warnings.append)
    assert [doc["run"]["id"] for doc in loaded] == ["r1", "r2", "r3", "r4"]  # oldest first
    assert loaded[1] == history.slim(sequence[1])
    assert history.load_history(folder, slimmed=False)[1] == sequence[1]
    assert len(warnings) == 2 and "broken.json skipped: Expecting property name" in warnings[0]
    assert warnings[1].endswith("list.json skipped: not a results document")
    assert history.load_history(str(tmp_path / "none")) == []
    odd = copy.deepcopy(sequence[0])
    odd["run"]["id"] = "../x y"
    # made safe (no folder, no hidden file) and marked with a hash of the id, so "_x_y" keeps a file of its own
    assert re.fullmatch(r"_x_y-[0-9a-f]{8}\.json", history.entry_name(odd))
    plain = copy.deepcopy(odd)
    plain["run"]["id"] = "_x_y"
    assert history.entry_name(plain) == "_x_y.json"


def test_each_kept_run_has_a_slim_index_entry_read_instead_of_the_run(tmp_path, sequence):
    folder = tmp_path / "history"
    for doc in sequence:
        history.store_run(str(folder), doc)
    assert sorted(p.name for p in (folder / "index").iterdir()) == ["r1.json", "r2.json", "r3.json", "r4.json"]
    assert json.loads((folder / "index" / "r2.json").read_text()) == history.slim(sequence[1])
    # the loader reads the entry, not the run: a mark put in the entry shows
    entry = json.loads((folder / "index" / "r2.json").read_text())
    entry["run"]["marked"] = True
    (folder / "index" / "r2.json").write_text(json.dumps(entry))
    loaded = history.load_history(str(folder))
    assert [doc["run"].get("marked") for doc in loaded] == [None, True, None, None]
    # a whole read (slimmed=False) still reads the run itself
    assert "marked" not in history.load_history(str(folder), slimmed=False)[1]["run"]
    # a run file newer than its entry (replaced by hand) is read itself; so is a run without an entry
    run_file = folder / "r2.json"
    os.utime(run_file, (os.stat(run_file).st_mtime + 10,) * 2)
    (folder / "index" / "r3.json").unlink()
    (folder / "index" / "r4.json").write_text("{")  # a damaged entry: the run is read
    loaded = history.load_history(str(folder))
    assert loaded == [history.slim(doc) for doc in sequence]
    # storing the same run again writes its missing entry back
    history.store_run(str(folder), sequence[2])
    assert (folder / "index" / "r3.json").is_file()


def test_store_run_error_names_the_folder(tmp_path, sequence):
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(history.HistoryError, match="cannot keep the run in the history folder .*/file/h"):
        history.store_run(str(blocker / "h"), sequence[0])


def test_slim_runs_give_the_same_comparison_and_kpis(sequence):
    slimmed = [history.slim(doc) for doc in sequence]
    assert kpi.kpis(slimmed) == kpi.kpis(sequence)
    for before, after in zip(sequence, sequence[1:]):
        assert history.compare_runs(history.slim(before), after) == history.compare_runs(before, after)
    full = rich_results()
    small = history.slim(full)
    # node03: its two failing checks kept whole, one check for each other family it ran
    assert [(c["id"], c["status"]) for c in small["hosts"]["node03"]["checks"]] == [
        ("gpu.count.present", "pass"), ("gpu.ecc.volatile_uncorrectable", "fail"), ("xid.events.count", "pass"),
        ("dcgm.diag.result", "pass"), ("burn.gflops.median", "pass"), ("burn.stability.temperature", "fail"),
        ("nic.link.speed", "pass"), ("storage.read.bandwidth", "pass")]
    assert small["hosts"]["node03"]["checks"][1] == full["hosts"]["node03"]["checks"][1]
    assert small["hosts"]["node08"] == {"status": "unreachable", "checks": [], "facts": {},
                                        "message": "Failed to connect to the host via ssh: Connection refused"}
    assert small["hosts"]["node01"]["facts"] == {"gpu": {"count": 8, "bom_count": 8}}  # seen, and the bill of materials
    assert len(json.dumps(small)) * 5 < len(json.dumps(full))
    changed = copy.deepcopy(full)
    changed["hosts"]["node03"]["checks"][1]["status"] = "pass"
    assert history.compare_runs(small, changed) == history.compare_runs(full, changed)


def test_nccl_curves_from_host_facts_and_failed_fio_jobs():
    results = rich_results(nodes=5)
    fabric = results["cluster"]["fabric"]
    per_node = [entry for entry in fabric["nccl"] if entry["scope"] != "cluster"]
    fabric["nccl"] = [entry for entry in fabric["nccl"] if entry["scope"] == "cluster"]
    for entry in per_node:  # summarize_nccl's shape kept as host facts; one without its scope
        results["hosts"][entry["scope"]]["facts"]["nccl"] = dict(entry, scope=None if entry["scope"] == "node02" else entry["scope"])
    assert [e["scope"] for e in history.nccl_entries(results)] == ["cluster", "node01", "node02", "node03", "node04", "node05"]
    results["hosts"]["node04"]["facts"]["storage"]["jobs"]["seq_read"].update(bw_mib=1.0, errors=["fio job error 5"])
    metrics = history.fleet_values(results)
    assert "node04" not in metrics["storage seq_read MiB/s"] and "node04" in metrics["storage rand_write MiB/s"]
    assert metrics["NCCL all_reduce_perf busbw (GB/s)"]["node02"] == 235.26
