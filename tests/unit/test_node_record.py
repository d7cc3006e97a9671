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
from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import (
    NODE_RECORD_FACT,
    encode_node_record,
    host_inputs,
    host_record,
    validate,
)
from ansible_collections.zhisuan.ops.plugins.plugin_utils._run_record import RunRecorder

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))


def check(check_id, host="node01", status="pass"):
    return make_check(check_id, host, status, component="GPUs", observed=8, expected=8, message="8 GPUs")


def node_record(run, checks, facts=None, unreachable=False):
    """The fact as zhisuan.ops.check keeps it: one JSON document."""
    return encode_node_record({"run": run, "checks": checks, "facts": facts or {}, "unreachable": unreachable})


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


def test_the_record_is_one_json_string_and_a_mapping_or_a_damaged_one_is_handled():
    kept = node_record("r1", [check("gpu.count.present")], {"gpu": {"count": 8}})
    assert isinstance(kept, str) and json.loads(kept)["checks"][0]["id"] == "gpu.count.present"
    # a mapping (a fact cache written before the record was a string) is still read
    as_mapping = {"ansible_facts": {NODE_RECORD_FACT: json.loads(kept)}}
    assert [c["id"] for c in host_inputs(as_mapping, "r1")[0]] == ["gpu.count.present"]
    # a damaged one (cut, or not a mapping) is not the node's record: the node then has no check, which is an error
    for damaged in (kept[:-1], "[]", "null", 7):
        assert host_inputs({"ansible_facts": {NODE_RECORD_FACT: damaged}}, "r1") == ([], {}, False)
    checks, facts, unreachable = host_inputs({"ansible_facts": {NODE_RECORD_FACT: kept[: len(kept) // 2]}}, "r1")
    assert [c["id"] for c in host_record("node01", checks, facts=facts, unreachable=unreachable)["checks"]] == [
        "run.host.tasks"]


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


# inventories the family roles' defaults and zhisuan.ops.check's own resolution must read alike
INVENTORIES = [
    {},
    {"zhisuan_tools": {"nvidia_smi": "/opt/lab/nvidia-smi", "dcgmi": "/opt/lab/dcgmi", "journalctl": "/bin/journalctl",
                       "dmesg": "/bin/dmesg", "nvbandwidth": "/opt/nvbandwidth", "lspci": "/sbin/lspci",
                       "ofed_info": "/usr/bin/ofed_info", "nv_fabricmanager": "/usr/bin/nv-fabricmanager"},
     "zhisuan_thresholds": {"gpu": {"nvlink_errors_window_s": 30, "temp_max_c": 80}, "xid": {"window_h": 2},
                            "dcgm": {"max_failures": 0}, "tuning": {"numa": "strict"}},
     "zhisuan_expected": {"gpu_count": 8, "tuning": {"sysctl": {"vm.swappiness": 1, "net.core.rmem_max": 1}}},
     "zhisuan_gpu_profile": "H100", "zhisuan_gpu_profile_overrides": {"h100": {"power_w": 650}},
     "zhisuan_xid_since": "-2h", "zhisuan_xid_catalog_overrides": "/etc/xid.yml", "zhisuan_dcgm_level": 3,
     "zhisuan_read_acs": False, "zhisuan_host_root": "/host"},
    # a mapping variable without the key the path names, and a tools table that is not a mapping
    {"zhisuan_tools": None, "zhisuan_thresholds": {"gpu": {}}, "zhisuan_expected": {"tuning": {}}, "zhisuan_gpu_profile": ""},
]


def trusted(value):
    """A template string as a role's file gives it: trusted on 2.19, any string is a template before it."""
    try:
        from ansible.template import trust_as_template
    except ImportError:
        return value
    return trust_as_template(value)


def load_defaults(path):
    """A role's defaults read as Ansible reads them: on 2.19 its templates trusted; before 2.19 (no data tagging)
    every string loaded may be templated."""
    from ansible.parsing.dataloader import DataLoader

    try:
        return DataLoader().load_from_file(path, trusted_as_template=True)
    except TypeError:
        return DataLoader().load_from_file(path)


def test_zhisuan_ops_check_reads_the_family_roles_variables_as_their_defaults_do():
    """check_node gives zhisuan.ops.check no options; the action resolves each from the family roles' variables
    (its table in _check_vars). Each family role's default, templated by Ansible, must equal what the table resolves
    from the same inventory, and a role variable a site sets must win over the inventory's."""
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar

    from ansible_collections.zhisuan.ops.plugins.plugin_utils import _check_vars, _hostvars

    by_variable = {}
    for table in (_check_vars.COLLECT, _check_vars.JUDGE):
        for family, options in table.items():
            for option, spec in options.items():
                # each family role's variable (after check_node's own, which a run sets and these inventories do not)
                for source in spec[0]:
                    if isinstance(source, str) and source.startswith("check_") and not source.startswith("check_node_"):
                        by_variable.setdefault(source, []).append(spec)
    compared = 0
    for role in ("check_gpu", "check_xid", "check_dcgm", "check_tuning"):
        # read as Ansible reads a role's defaults (its templates trusted)
        defaults = load_defaults(os.path.join(REPO, "roles", role, "defaults", "main.yml"))
        for name, value in defaults.items():
            if name in ("check_gpu_keep", "check_tuning_keep", "check_dcgm_diag", "check_gpu_bandwidth",
                        "check_dcgm_health"):
                continue  # chosen by check_node_families / check_node_dcgm_diag in the role's task
            assert name in by_variable, "zhisuan.ops.check does not read %s" % name
            for inventory in INVENTORIES:
                templar = Templar(loader=DataLoader(), variables=inventory)
                expected = templar.template(value)
                view = _hostvars.HostView(inventory, templar.template)
                for spec in by_variable[name]:
                    how = spec[2] if len(spec) > 2 else None
                    assert _check_vars.resolve(spec, view) == _check_vars._convert(expected, how), (name, inventory)
                    compared += 1
                # the role variable itself, set by a site, wins
                view = _hostvars.HostView(dict(inventory, **{name: "site-value"}), templar.template)
                for spec in by_variable[name]:
                    how = spec[2] if len(spec) > 2 else None
                    assert _check_vars.resolve(spec, view) == _check_vars._convert("site-value", how)
    assert compared >= 3 * 30


def test_options_given_to_the_task_win_and_null_ones_are_left_out():
    from ansible_collections.zhisuan.ops.plugins.plugin_utils import _check_vars, _hostvars

    view = _hostvars.HostView({"zhisuan_tools": {"nvidia_smi": "/inv/nvidia-smi"}, "check_gpu_timeout": None},
                               lambda value: value)
    options = _check_vars.family_options(_check_vars.COLLECT, ["gpu", "dcgm"],
                                         {"gpu": {"timeout": 5, "extra": 1}, "dcgm": {"level": None}}, view)
    assert options["gpu"] == {"nvidia_smi_path": "/inv/nvidia-smi", "timeout": 5, "extra": 1, "nvlink_errors_window": 0,
                              "throttle_window": 0, "nvlink_remote": False}
    # a null given option and a chain that ends in the empty default: the module's own default applies
    assert options["dcgm"] == {"dcgmi_path": "dcgmi"}


# What the check_node role's task computed in Jinja before zhisuan.ops.check read it from the variables itself
# (roles/check_node/tasks/main.yml at 08e0b95): the reference the action's selection must equal.
ROLE_FAMILIES = """{{ (['gpu'] if check_node_families | intersect(['gpu', 'xid', 'dcgm']) or check_node_gpu_facts | bool else [])
   + (['gpu_bandwidth'] if 'gpu' in check_node_families and check_gpu_bandwidth | default(false) | bool else [])
   + (['xid'] if 'xid' in check_node_families else [])
   + (['dcgm'] if 'dcgm' in check_node_families and check_node_dcgm_diag | bool else [])
   + (['dcgm_health'] if 'dcgm' in check_node_families and check_dcgm_health | default(true) | bool else [])
   + (['tuning'] if 'tuning' in check_node_families else []) }}"""
ROLE_KEEP = """{{ ['gpu', 'gpu_bandwidth', 'xid', 'dcgm', 'dcgm_health', 'tuning']
   | select('in', check_node_families + (['dcgm_health'] if 'dcgm' in check_node_families else [])
                   + (['gpu_bandwidth'] if 'gpu' in check_node_families else [])) | list }}"""


def test_the_node_selection_is_what_the_check_node_role_computed():
    import itertools

    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar

    from ansible_collections.zhisuan.ops.plugins.plugin_utils import _check_vars, _hostvars

    defaults = load_defaults(os.path.join(REPO, "roles", "check_node", "defaults", "main.yml"))
    selections = [["gpu", "xid", "dcgm"], ["gpu"], ["xid"], ["dcgm"], ["tuning"], ["gpu", "xid", "dcgm", "tuning"], []]
    seen = set()
    for families, gpu_facts, diag, bandwidth, health in itertools.product(
            selections, (False, "yes"), (True, False), (None, True), (None, False)):
        variables = dict(defaults, check_node_families=families, check_node_gpu_facts=gpu_facts,
                         check_node_dcgm_diag=diag, check_node_record="run-1")
        if bandwidth is not None:
            variables["check_gpu_bandwidth"] = bandwidth
        if health is not None:
            variables["check_dcgm_health"] = health
        templar = Templar(loader=DataLoader(), variables=variables)
        expected = (templar.template(trusted(ROLE_FAMILIES)), templar.template(trusted(ROLE_KEEP)))
        got = _check_vars.node_selection(_hostvars.HostView(variables, templar.template))
        assert (got[0], got[1]) == expected, variables
        assert got[2] == "run-1"
        seen.add(tuple(got[0]))
    assert len(seen) >= 12  # the combinations reach many different selections
    # without the role's variables: its defaults (gpu, xid, dcgm with the diagnostic and the health watches; a
    # bandwidth run with gpu would be kept), no record
    assert _check_vars.node_selection(_hostvars.HostView({}, lambda value: value)) == (
        ["gpu", "xid", "dcgm", "dcgm_health"], ["gpu", "gpu_bandwidth", "xid", "dcgm", "dcgm_health"], None)
