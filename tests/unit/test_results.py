# SPDX-License-Identifier: GPL-3.0-or-later
"""results.json: host status rules, schema validity, atomic write and the latest link."""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.plugin_utils import _results

RUN = {"id": "20261130T210000Z-acceptance", "kind": "acceptance", "started": "2026-11-30T21:00:00+00:00",
       "finished": "2026-11-30T21:01:00+00:00", "playbook": "playbooks/acceptance.yml",
       "collection_version": "0.1.0", "ansible_version": "2.19.14"}


def _hosts():
    ok = make_check("gpu.count.present", "node01", "pass", observed=8, expected="== 8")
    warn = make_check("gpu.ecc.aggregate_uncorrectable", "node02", "warn", observed=1, expected="== 0", remedy="monitor")
    fail = make_check("gpu.ecc.volatile_uncorrectable", "node02", "fail", component="GPU 3", observed=2,
                      expected="== 0", message="GPU 3 has 2 uncorrectable ECC errors since the driver loaded",
                      remedy="reset_gpu", evidence="dram_uncorrectable=2")
    err = make_check("gpu.collect.nvidia_smi", "node03", "error", observed="timed out",
                     message="nvidia-smi: timed out after 60 s (process group killed)")
    return {
        "node01": _results.host_record("node01", [ok], facts={"gpu": {"count": 8}}),
        "node02": _results.host_record("node02", [ok, warn, fail]),
        "node03": _results.host_record("node03", [err]),
        "node04": _results.host_record("node04", [], unreachable=True),
        "node05": _results.host_record("node05", []),
    }


def test_host_status_is_the_worst_check():
    hosts = _hosts()
    assert [hosts[name]["status"] for name in sorted(hosts)] == ["pass", "fail", "error", "unreachable", "error"]
    assert hosts["node04"]["message"] == "host was unreachable; no checks ran"
    assert hosts["node04"]["checks"] == []
    # a targeted host without any check: its tasks failed before checks were kept
    assert [check["id"] for check in hosts["node05"]["checks"]] == ["run.host.tasks"]


def test_an_unreachable_host_keeps_the_connections_reason_and_the_checks_that_ran():
    reason = ("Failed to connect to the host via ssh: ssh: connect to host 127.0.0.1 port 9: Connection refused")
    lost = _results.host_record("node04", [], unreachable=reason)
    assert lost["status"] == "unreachable"
    assert lost["message"] == "host was unreachable (%s); no checks ran" % reason
    # a delivery node whose BMC checks ran before its OS was lost: they count, and the lost connection is an error
    bmc = make_check("bmc.power.state", "node05", "fail", observed="Off", expected="On", remedy="power_cycle")
    record = _results.host_record("node05", [bmc], unreachable=reason)
    assert record["status"] == "fail"
    assert [check["id"] for check in record["checks"]] == ["bmc.power.state", "run.host.unreachable"]
    assert record["checks"][1]["status"] == "error" and "port 9: Connection refused" in record["checks"][1]["message"]
    # without words (an older record), as before
    assert _results.host_record("node06", [], unreachable=True)["message"] == "host was unreachable; no checks ran"
    # the node record (zhisuan.ops.check's fact) carries the reason into the run's record
    node = _results.encode_node_record({"run": "r1", "checks": [], "facts": {}, "unreachable": reason})
    assert _results.host_inputs({"ansible_facts": {_results.NODE_RECORD_FACT: node}}, "r1")[2] == reason


def test_warn_only_host_is_warn():
    warn = make_check("gpu.readout.unreadable", "n", "warn", remedy="monitor")
    skip = make_check("gpu.nvlink.links", "n", "skip")
    assert _results.host_record("n", [skip, warn])["status"] == "warn"
    assert _results.host_record("n", [skip])["status"] == "pass"


def test_document_is_schema_valid_and_counts():
    doc = _results.build_results(RUN, _hosts())
    assert _results.validate(doc) == []
    assert doc["schema"] == "zhisuan.ops/results/v1"
    assert doc["run"]["hosts_total"] == 5
    assert doc["summary"]["hosts"] == {"pass": 1, "warn": 0, "fail": 1, "error": 2, "unreachable": 1}
    assert doc["summary"]["checks"] == {"skip": 0, "pass": 2, "warn": 1, "error": 2, "fail": 1}
    assert list(doc["hosts"]) == ["node01", "node02", "node03", "node04", "node05"]


def test_schema_rejects_what_breaks_the_contract():
    doc = _results.build_results(RUN, _hosts())
    doc["hosts"]["node01"]["status"] = "ok"
    doc["hosts"]["node02"]["checks"][0]["remedy"] = "pray"
    del doc["hosts"]["node03"]["checks"][0]["evidence"]
    doc["run"]["kind"] = "smoke"
    problems = _results.validate(doc)
    assert any(p.startswith("hosts/node01/status:") for p in problems)
    assert any(p.startswith("hosts/node02/checks/0/remedy:") for p in problems)
    assert any(p.startswith("hosts/node03/checks/0:") and "'evidence' is a required property" in p for p in problems)
    assert any(p.startswith("run/kind:") for p in problems)


def test_write_is_atomic_and_latest_follows(tmp_path):
    root = tmp_path / "out"
    first = root / "run1"
    second = root / "run2"
    doc = _results.build_results(RUN, _hosts())
    path = _results.write_results(doc, str(first), str(root / "latest"))
    assert json.loads(open(path).read()) == json.loads(json.dumps(doc))
    assert os.readlink(str(root / "latest")) == "run1"
    _results.write_results(doc, str(second), str(root / "latest"))
    assert os.readlink(str(root / "latest")) == "run2"
    assert sorted(os.listdir(str(root))) == ["latest", "run1", "run2"]
    assert sorted(os.listdir(str(second))) == ["results.json", "summary.txt"]  # no temp files left behind
    summary = (second / "summary.txt").read_text().splitlines()
    assert summary[1].split()[:2] == ["node02", "FAIL"]
    assert "gpu.ecc.volatile_uncorrectable fail (GPU 3) -> reset_gpu" in summary[1]
    assert summary[-1] == "hosts: pass 1, fail 1, error 2, unreachable 1"


def test_make_check_rejects_unknown_vocabulary():
    import pytest

    with pytest.raises(ValueError, match="unknown remedy 'pray'"):
        make_check("gpu.ecc.mode", "n", "fail", remedy="pray")
    with pytest.raises(ValueError, match="unknown check status 'ok'"):
        make_check("gpu.ecc.mode", "n", "ok")
    with pytest.raises(ValueError, match="must be <family>.<subject>.<metric>"):
        make_check("gpu.ecc", "n", "pass")


def _slice(run_id, names, started, finished, cluster_data=None):
    hosts = dict((name, record) for name, record in _hosts().items() if name in names)
    run = dict(RUN, id=run_id, started=started, finished=finished, families=["gpu"])
    return _results.build_results(run, hosts, cluster_data=cluster_data)


def test_cluster_data_sits_beside_the_cluster_checks():
    doc = _results.build_results(RUN, _hosts(), [], cluster_data={"fabric": {"nccl": []}, "checks": ["ignored"]})
    assert doc["cluster"] == {"fabric": {"nccl": []}, "checks": []}
    assert _results.validate(doc) == []


def test_slices_merge_into_one_run():
    one = _slice("s1", ("node01", "node02"), "2026-11-30T21:00:00+00:00", "2026-11-30T21:05:00+00:00",
                 {"fabric": {"nccl": [{"scope": "node01"}]}})
    two = _slice("s2", ("node03", "node04", "node05"), "2026-11-30T20:59:00+00:00", "2026-11-30T21:02:00+00:00",
                 {"fabric": {"nccl": [{"scope": "node03"}]}})
    merged = _results.merge_results([one, two], run_id="all")
    assert _results.validate(merged) == []
    assert merged["run"]["id"] == "all" and merged["run"]["merged_from"] == ["s1", "s2"]
    assert (merged["run"]["started"], merged["run"]["finished"]) == ("2026-11-30T20:59:00+00:00", "2026-11-30T21:05:00+00:00")
    assert merged["summary"]["hosts"] == {"pass": 1, "warn": 0, "fail": 1, "error": 2, "unreachable": 1}
    assert [entry["scope"] for entry in merged["cluster"]["fabric"]["nccl"]] == ["node01", "node03"]


def test_merge_refuses_overlapping_slices_and_mixed_kinds():
    one = _slice("s1", ("node01", "node02"), RUN["started"], RUN["finished"])
    two = _slice("s2", ("node02",), RUN["started"], RUN["finished"])
    with pytest.raises(ValueError) as exc:
        _results.merge_results([one, two])
    assert str(exc.value) == "host node02 is in more than one of the merged runs (s2)"
    other = _slice("s3", ("node03",), RUN["started"], RUN["finished"])
    other["run"]["kind"] = "inspect"
    with pytest.raises(ValueError) as exc:
        _results.merge_results([one, other])
    assert str(exc.value) == "cannot merge runs of different kinds: acceptance, inspect"


def test_a_partial_record_is_schema_valid_and_its_flag_typed():
    from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import build_results, host_record, validate

    run = {"id": "r", "kind": "inspect", "started": "2026-12-01T10:00:00+00:00", "finished": "2026-12-01T10:01:00+00:00",
           "playbook": "p", "collection_version": "0.1.0", "ansible_version": "2.19", "hosts_total": 1,
           "partial": True, "partial_reason": "the run was interrupted (SIGINT) before its record was written"}
    document = build_results(run, {"n1": host_record("n1", [], message="no check was kept")})
    assert validate(document) == []
    document["run"]["partial"] = "yes"
    assert any("partial" in problem for problem in validate(document))
