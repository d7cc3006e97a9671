# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One task per node (issue 13): the node record zhisuan.ops.check keeps as a host fact, read by the record and by
the last-resort partial record beside what the results role keeps; a record of another run is never read."""

from __future__ import annotations

import json
import os

import yaml

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.plugin_utils._judging import judge_family
from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import NODE_RECORD_FACT, host_inputs, validate
from ansible_collections.zhisuan.ops.plugins.plugin_utils._run_record import RunRecorder

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))


def check(check_id, host="node01", status="pass"):
    return make_check(check_id, host, status, component="GPUs", observed=8, expected=8, message="8 GPUs")


def node_record(run, checks, facts=None, unreachable=False):
    return {"run": run, "checks": checks, "facts": facts or {}, "unreachable": unreachable}


def test_the_node_record_of_the_run_comes_first_then_what_the_role_kept():
    host_vars = {
        "results_checks": [check("nic.link.state")],
        "results_host_facts": {"net": {"ports": 2}},
        "results_unreachable": False,
        "ansible_facts": {NODE_RECORD_FACT: node_record("r2", [check("gpu.count.present"), check("xid.log.readable")],
                                                        {"gpu": {"count": 8}})},
    }
    checks, facts, unreachable = host_inputs(host_vars, "r2")
    assert [c["id"] for c in checks] == ["gpu.count.present", "xid.log.readable", "nic.link.state"]
    assert facts == {"gpu": {"count": 8}, "net": {"ports": 2}} and unreachable is False


def test_a_node_record_of_another_run_is_not_read():
    """site.yml runs three runs in one process; a fact cache may carry a record from a previous job."""
    host_vars = {"results_checks": [], "ansible_facts": {NODE_RECORD_FACT: node_record(
        "burnin-run", [check("gpu.count.present", status="fail")], {"gpu": {"count": 7}}, unreachable=True)}}
    assert host_inputs(host_vars, "acceptance-run") == ([], {}, False)


def test_an_unreachable_node_record_makes_the_host_unreachable():
    host_vars = {"ansible_facts": {NODE_RECORD_FACT: node_record("r1", [], unreachable=True)}}
    assert host_inputs(host_vars, "r1") == ([], {}, True)


def test_the_partial_record_keeps_the_node_records_of_its_run(tmp_path):
    recorder = RunRecorder(ansible_version="2.19", write_report=None)
    recorder.observe_facts("node01", {
        "results_run_started": "2026-12-01T10:00:00+00:00", "results_run_id": "r1", "results_run_kind": "acceptance",
        "results_run_playbook": "playbooks/acceptance.yml", "results_run_families": ["gpu"],
        "results_run_dir": str(tmp_path / "r1")})
    for host in ("node01", "node02"):
        recorder.observe_facts(host, {"results_targeted": True, "results_checks": [], "results_host_facts": {},
                                      "results_unreachable": False})
    recorder.observe_facts("node01", {"check_gpu_facts": {}, NODE_RECORD_FACT: node_record(
        "r1", [check("gpu.count.present", status="fail")], {"gpu": {"count": 7}})})
    recorder.observe_facts("node02", {NODE_RECORD_FACT: node_record("old-run", [check("gpu.count.present", "node02")])})
    path = recorder.finish("the run was interrupted (SIGINT) before its record was written")
    document = json.loads(open(path).read())
    assert validate(document) == []
    assert [c["id"] for c in document["hosts"]["node01"]["checks"]] == ["gpu.count.present"]
    assert document["hosts"]["node01"]["status"] == "fail" and document["hosts"]["node01"]["facts"]["gpu"] == {"count": 7}
    # node02's only record was another run's: nothing was kept for it in this one
    assert [c["id"] for c in document["hosts"]["node02"]["checks"]] == ["run.host.tasks"]
    assert "1 of 2 nodes have checks" in document["cluster"]["checks"][0]["message"]


def test_a_failed_collect_is_the_familys_error_check_as_the_judge_makes_it():
    collected = {"failed": True, "error_kind": "timeout", "msg": "nvidia-smi: timed out after 3 s (process group killed)",
                 "cmd": ["nvidia-smi", "-q", "-x"], "rc": -9}
    checks, summary, unreachable = judge_family("gpu", "hang01", collected)
    assert [(c["id"], c["status"], c["observed"], c["message"]) for c in checks] == [
        ("gpu.collect.nvidia_smi", "error", "timeout", "nvidia-smi: timed out after 3 s (process group killed)")]
    assert summary == {} and unreachable is False


def test_an_unreadable_xid_catalog_override_names_the_file(tmp_path):
    missing = str(tmp_path / "no-such-catalog.yml")
    try:
        judge_family("xid", "node01", {"xid": {"events": []}}, xid_catalog_overrides=missing)
    except ValueError as exc:
        assert "no-such-catalog.yml" in str(exc)
    else:
        raise AssertionError("an unreadable catalog override was accepted")


def test_the_check_node_role_falls_back_to_the_family_roles_defaults():
    """check_node passes each family role's variables with that role's own default: the two must not drift."""
    task = ""
    for part in ("tasks", "defaults"):
        with open(os.path.join(REPO, "roles", "check_node", part, "main.yml")) as handle:
            task += handle.read()
    for role in ("check_gpu", "check_xid", "check_dcgm", "check_tuning"):
        with open(os.path.join(REPO, "roles", role, "defaults", "main.yml")) as handle:
            defaults = yaml.safe_load(handle)
        for name, value in defaults.items():
            if name in ("check_gpu_keep", "check_tuning_keep", "check_dcgm_diag"):
                continue  # chosen by check_node_families / check_node_dcgm_diag
            assert name in task, "check_node does not pass %s" % name
            if isinstance(value, bool):
                assert "%s | default(%s)" % (name, str(value).lower()) in task, (name, value)
            elif isinstance(value, int) or (isinstance(value, str) and "{{" not in value and value):
                assert "%s | default(%s)" % (name, json.dumps(value).replace('"', "'")) in task, (name, value)
            elif isinstance(value, str) and "{{" in value:
                inner = value.strip()[2:-2].strip()
                assert "%s | default(%s)" % (name, inner) in task, (name, inner)
