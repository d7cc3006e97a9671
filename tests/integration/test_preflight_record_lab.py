# SPDX-License-Identifier: GPL-3.0-or-later
"""Inventory mistakes found before any test runs, a record that is never lost, and families chosen by tag in every
run - on the local lab (4 nodes of the default scenario), through ansible-runner as AWX runs playbooks."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
import yaml

from ansible_collections.zhisuan.ops.plugins.plugin_utils._profiles import load_profiles
from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import validate

from .conftest import REPO, run_playbook, start_lab

KNOWN = ", ".join(sorted(load_profiles()))


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("preflight")
    inventory = start_lab(tmp_path, "default.yml", nodes=4)
    try:
        yield tmp_path, inventory
    finally:
        subprocess.run([sys.executable, os.path.join(REPO, "lab", "labctl.py"), "down", "--dir", str(tmp_path / "lab")],
                       capture_output=True, timeout=60)


def edited(lab_inventory, path, change):
    """A copy of the lab inventory with ``change(hosts)`` applied (an inventory a site could have written)."""
    with open(lab_inventory) as handle:
        doc = yaml.safe_load(handle)
    change(doc["all"]["children"]["gpu_nodes"]["hosts"])
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def errors(document, host):
    return [check for check in document["hosts"][host]["checks"] if check["status"] == "error"]


def families_of(document):
    return sorted(set(check["id"].split(".")[0] for record in document["hosts"].values() for check in record["checks"]))


def test_inventory_mistakes_skip_only_their_node(lab, tmp_path):
    _, lab_inventory = lab

    def mistakes(hosts):
        hosts["node01"]["zhisuan_gpu_profile"] = "h1OO"                          # a typo
        hosts["node02"]["zhisuan_gpu_profile"] = "A100"                          # as vendors write it: fine
        hosts["node03"]["zhisuan_tools"]["nvidia_smi"] = "bin/nvidia-smi"        # relative
        hosts["node04"]["zhisuan_tools"]["nvidia_smi"] = "/nonexistent/nvidia-smi"  # missing on the node

    inventory = edited(lab_inventory, tmp_path / "mistakes.yml", mistakes)
    runner, document = run_playbook(tmp_path, "acceptance.yml", inventory)
    assert runner.rc == 0, runner.stdout.read()[-3000:]
    assert validate(document) == []
    hosts = document["hosts"]
    assert sorted(hosts) == ["node01", "node02", "node03", "node04"]

    typo = errors(document, "node01")
    assert [check["id"] for check in typo] == ["run.preflight.inventory"] and hosts["node01"]["checks"] == typo
    assert "zhisuan_gpu_profile 'h1OO' is not a known GPU profile" in typo[0]["message"]
    assert "known profiles: %s" % KNOWN in typo[0]["message"]

    relative = errors(document, "node03")
    assert [check["id"] for check in relative] == ["run.preflight.inventory"] and len(hosts["node03"]["checks"]) == 1
    assert "zhisuan_tools.nvidia_smi 'bin/nvidia-smi' is a relative path" in relative[0]["message"]

    missing = errors(document, "node04")
    assert [(check["id"], check["observed"]) for check in missing] == [("gpu.collect.nvidia_smi", "not found")]
    assert "/nonexistent/nvidia-smi" in missing[0]["message"]

    # the capitalised profile is the a100 profile, and the node was judged with it
    assert hosts["node02"]["status"] == "pass", errors(document, "node02")
    assert hosts["node02"]["facts"]["gpu"]["profile"] == "a100"
    assert {"gpu", "xid", "dcgm"} <= set(check["id"].split(".")[0] for check in hosts["node02"]["checks"])
    assert (tmp_path / "out" / "test-run" / "report.html").exists()


def test_every_node_mistyped_still_writes_the_record_and_the_report(lab, tmp_path):
    _, lab_inventory = lab

    def all_typos(hosts):
        for name in hosts:
            hosts[name]["zhisuan_gpu_profile"] = "h1OO"

    inventory = edited(lab_inventory, tmp_path / "typos.yml", all_typos)
    runner, document = run_playbook(tmp_path, "inspect.yml", inventory, limit="node01,node02")
    assert runner.rc == 0, runner.stdout.read()[-3000:]
    assert document is not None and validate(document) == []
    assert document["summary"]["hosts"]["error"] == 2
    for host in ("node01", "node02"):
        assert [check["id"] for check in document["hosts"][host]["checks"]] == ["run.preflight.inventory"]
    run_dir = tmp_path / "out" / "test-run"
    assert "h1OO" in (run_dir / "report.html").read_text()
    assert (run_dir / "report.md").exists() and (run_dir / "junit.xml").exists()


def test_every_node_unreachable_still_writes_the_record_and_the_report(lab, tmp_path):
    _, lab_inventory = lab

    def unreachable(hosts):
        for name in hosts:  # ssh to the discard port, where nothing listens (as the lab's `unreachable` fault)
            hosts[name].update({"ansible_connection": "ssh", "ansible_host": "127.0.0.1", "ansible_port": 9,
                                "ansible_user": "zhisuan-lab", "ansible_ssh_common_args": "-o ConnectTimeout=5 -o BatchMode=yes"})

    inventory = edited(lab_inventory, tmp_path / "unreachable.yml", unreachable)
    runner, document = run_playbook(tmp_path, "inspect.yml", inventory, limit="node01,node02")
    assert runner.rc == 0, runner.stdout.read()[-3000:]
    assert validate(document) == []
    assert dict((name, record["status"]) for name, record in document["hosts"].items()) == {
        "node01": "unreachable", "node02": "unreachable"}
    # a clean inventory prints no per-node skip header (issue 26 item 7)
    out = runner.stdout.read()
    assert "Skip this node" not in out and "Say why this node is not tested" not in out
    # the connection's own words are kept: what refused, and where
    for name in ("node01", "node02"):
        message = document["hosts"][name]["message"]
        assert message.startswith("host was unreachable (") and "port 9: Connection refused" in message, message
    assert (tmp_path / "out" / "test-run" / "report.html").exists()


def test_a_group_name_typo_stops_the_run_naming_the_groups_found(lab, tmp_path):
    """`gpu_node:` for `gpu_nodes:` matched no host: the run ran nothing and ended with rc 0, no verdict, no report."""
    _, lab_inventory = lab
    with open(lab_inventory) as handle:
        doc = yaml.safe_load(handle)
    doc["all"]["children"]["gpu_node"] = doc["all"]["children"].pop("gpu_nodes")
    inventory = tmp_path / "typo.yml"
    inventory.write_text(yaml.safe_dump(doc))
    runner, document = run_playbook(tmp_path, "inspect.yml", str(inventory))
    out = " ".join(runner.stdout.read().split())
    assert runner.rc != 0, out[-2000:]
    assert "no host in gpu_nodes: the run has no node to check. The inventory (%s) has the groups gpu_node;" % inventory in out
    assert "put the GPU servers in the group gpu_nodes" in out
    assert document is None  # nothing pretends to be a record


def test_a_mistyped_nested_threshold_is_named_on_the_console_and_in_the_record(lab, tmp_path):
    _, lab_inventory = lab

    def typo(hosts):
        hosts["node01"]["zhisuan_thresholds"] = {"gpu": {"temprature_margin_c": 3}}

    inventory = edited(lab_inventory, tmp_path / "nested.yml", typo)
    runner, document = run_playbook(tmp_path, "inspect.yml", inventory, tags="gpu", limit="node01,node02")
    out = " ".join(runner.stdout.read().split())
    assert runner.rc == 0, out[-3000:]
    words = "zhisuan_thresholds.gpu has an unknown key 'temprature_margin_c' (did you mean temperature_margin_c?)"
    mistake = errors(document, "node01")
    assert [check["id"] for check in mistake] == ["run.preflight.inventory"] and words in mistake[0]["message"]
    # on the console too, with the node's name, not only "run.preflight.inventory error"
    assert "node01: Not tested: the inventory of this node has a mistake: " + words in out
    assert document["hosts"]["node02"]["status"] == "pass"  # node02 was tested
    assert any(check["id"].startswith("gpu.") for check in document["hosts"]["node02"]["checks"])
    # the node with the mistake says so where it is left out; the clean node prints no skip line
    assert "TASK [results : Say why this node is not tested (its inventory has mistakes)]" in out
    assert "skipping: [node02]" not in out


def test_a_delivery_without_the_bmc_password_names_it_and_never_tries_the_bmc(lab, tmp_path):
    """A missing bmc_password (node01) or one whose vault variable is not there (node02) is the node's preflight
    error; the BMC (a listener that counts every connection) is never reached."""
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    seen = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            try:
                connection, peer = listener.accept()
            except socket.timeout:
                continue
            seen.append(peer)
            connection.close()

    thread = threading.Thread(target=count, daemon=True)
    thread.start()
    _, lab_inventory = lab

    def no_password(hosts):
        for name in ("node01", "node02"):
            hosts[name].update({"bmc_protocol": "redfish", "bmc_address": "127.0.0.1:%d" % port,
                                "bmc_username": "admin"})
            hosts[name].pop("bmc_password", None)
        hosts["node02"]["bmc_password"] = "{{ vault_bmc_password }}"

    inventory = edited(lab_inventory, tmp_path / "nopass.yml", no_password)
    try:
        runner, document = run_playbook(tmp_path, "delivery.yml", inventory, tags="bmc", limit="node01,node02")
    finally:
        stop.set()
        thread.join(5)
        listener.close()
    out = " ".join(runner.stdout.read().split())
    assert runner.rc == 0, out[-3000:]
    assert validate(document) == []
    missing = errors(document, "node01")
    assert [check["id"] for check in missing] == ["run.preflight.inventory"]
    assert "bmc_password is missing: the BMC is not tried without it" in missing[0]["message"]
    undefined = errors(document, "node02")
    assert [check["id"] for check in undefined] == ["run.preflight.inventory"]
    assert "bmc_password cannot be read" in undefined[0]["message"] and "vault_bmc_password" in undefined[0]["message"]
    assert "node01: Not tested: the inventory of this node has a mistake: bmc_password is missing" in out
    assert seen == []  # the BMC was never tried


@pytest.mark.parametrize("playbook, tag", [("diagnose.yml", "gpu"), ("inspect.yml", "xid"), ("burnin.yml", "gpu")])
def test_a_tag_selects_its_family_in_every_run(lab, tmp_path, playbook, tag):
    _, inventory = lab
    runner, document = run_playbook(tmp_path, playbook, inventory, tags=tag, limit="node01,node03",
                                    extravars={"zhisuan_burn_duration": 5})
    assert runner.rc == 0, runner.stdout.read()[-3000:]
    assert validate(document) == []
    assert document["run"]["families"] == [tag]
    assert families_of(document) == [tag]
    assert all(record["checks"] for record in document["hosts"].values())
    if tag == "gpu":  # node03 carries the default scenario's ECC fault
        assert document["hosts"]["node03"]["status"] == "fail"


@pytest.mark.parametrize("playbook, tags, extravars, message", [
    ("diagnose.yml", "bmc", {}, "--tags bmc: bmc is not a family of the diagnose run (its families: gpu, xid, dcgm, burn, job)"),
    ("acceptance.yml", "nic", {},
     "the family selection of the acceptance run is empty: --tags nic within zhisuan_acceptance_families selects none"),
    ("diagnose.yml", None, {"zhisuan_diag_level": "fast"}, "zhisuan_diag_level must be one of quick, standard, deep"),
])
def test_a_selection_of_nothing_fails_and_says_so(lab, tmp_path, playbook, tags, extravars, message):
    _, inventory = lab
    runner, document = run_playbook(tmp_path, playbook, inventory, tags=tags, limit="node01", extravars=extravars)
    assert runner.rc != 0
    assert message in runner.stdout.read().replace("\n", " ").replace("    ", " ")
    assert document is None  # no run started: nothing pretends to be a record


def test_an_unexpected_task_failure_is_the_nodes_error_check(lab, tmp_path):
    _, inventory = lab
    runner, document = run_playbook(tmp_path, "inspect.yml", inventory, limit="node01,node02",
                                    extravars={"zhisuan_xid_catalog_overrides": str(tmp_path / "no-such-catalog.yml")})
    assert runner.rc == 0, runner.stdout.read()[-3000:]
    assert validate(document) == []
    for host in ("node01", "node02"):
        failed = errors(document, host)
        assert [check["id"] for check in failed] == ["xid.task.failed"]
        assert failed[0]["message"].startswith("Task 'Judge the XID events' (zhisuan.ops.judge) failed unexpectedly: ")
        assert "no-such-catalog.yml" in failed[0]["message"] and "Ansible log" not in failed[0]["message"]
        # the node's other families ran
        assert any(check["id"].startswith("gpu.") for check in document["hosts"][host]["checks"])
        assert any(check["id"].startswith("tuning.") for check in document["hosts"][host]["checks"])


def test_an_interrupted_run_writes_a_partial_record(tmp_path):
    """Ctrl-C (SIGINT to ansible-playbook) during the burn: what was judged is written, marked partial, with the
    report. The lab's burn runs in real time here, so the signal comes while the run waits for the burn."""
    inventory = start_lab(tmp_path, "default.yml", nodes=2, burn_realtime=True)
    out = tmp_path / "out"
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"),
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    log = open(str(tmp_path / "run.log"), "w+")
    proc = subprocess.Popen(
        [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", inventory,
         os.path.join(REPO, "playbooks", "burnin.yml"), "--limit", "node01,node02", "-e", "zhisuan_burn_duration=120",
         "-e", "results_out_root=%s" % out, "-e", "zhisuan_run_id=stopped"],
        cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + 240
        while time.time() < deadline and proc.poll() is None:
            log.seek(0)
            if "TASK [check_burn : Start the burn and its watch]" in log.read():
                break
            time.sleep(0.5)
        assert proc.poll() is None, "the run ended before it could be interrupted"
        time.sleep(5)
        assert proc.poll() is None, "the burn ended before it could be interrupted"
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
        subprocess.run([sys.executable, os.path.join(REPO, "lab", "labctl.py"), "down", "--dir", str(tmp_path / "lab")],
                       capture_output=True, timeout=60)
    log.seek(0)
    text = log.read()
    assert proc.returncode != 0
    document = json.loads((out / "stopped" / "results.json").read_text())
    assert validate(document) == []
    assert document["run"]["partial"] is True
    assert document["run"]["partial_reason"] == "the run was interrupted (SIGINT) before its record was written"
    assert [check["id"] for check in document["cluster"]["checks"]] == ["run.record.partial"]
    # the GPU checks judged before the burn are kept; the burn never was
    for host in ("node01", "node02"):
        ids = set(check["id"] for check in document["hosts"][host]["checks"])
        assert "gpu.count.present" in ids and not any(i.startswith("burn.") for i in ids)
    assert (out / "stopped" / "report.html").exists()
    assert "partial record of run stopped" in text


def test_the_record_templates_inventory_variables_in_each_hosts_context(lab, tmp_path):
    """results.json takes the run's own data (checks, node records) as it is and templates the inventory's variables
    (rack, U) in the host's own context, as hostvars would."""
    _, lab_inventory = lab

    def racks(hosts):
        for index, name in enumerate(sorted(hosts)):
            hosts[name]["site_row"] = "R%02d" % (index + 7)
            hosts[name]["zhisuan_rack"] = "{{ site_row }}-A"
            hosts[name]["zhisuan_u"] = 10 + index

    inventory = edited(lab_inventory, tmp_path / "racks.yml", racks)
    runner, document = run_playbook(tmp_path, "acceptance.yml", inventory, tags="gpu")
    assert runner.rc == 0, runner.stdout.read()[-3000:]
    assert validate(document) == []
    assert [(name, record["facts"]["location"]) for name, record in sorted(document["hosts"].items())] == [
        ("node01", {"rack": "R07-A", "u": 10}), ("node02", {"rack": "R08-A", "u": 11}),
        ("node03", {"rack": "R09-A", "u": 12}), ("node04", {"rack": "R10-A", "u": 13})]
    assert all(record["checks"] and all(c["id"].startswith("gpu.") for c in record["checks"])
               for record in document["hosts"].values())


def test_a_variable_that_cannot_be_templated_is_its_nodes_mistake_and_the_record_is_kept(lab, tmp_path):
    """The run start checks every node's inventory in one task, each node's variables templated in its own context:
    a template that fails on one node is that node's error check, the others are tested, the record is written."""
    _, lab_inventory = lab

    def broken(hosts):
        hosts["node02"]["zhisuan_thresholds"] = "{{ site_thresholds.gpu }}"       # a variable the site never set
        for index, name in enumerate(sorted(hosts)):
            hosts[name]["site_model"] = "H1OO" if name == "node03" else "A100"
            hosts[name]["zhisuan_gpu_profile"] = "{{ site_model }}"              # templated per node

    inventory = edited(lab_inventory, tmp_path / "broken.yml", broken)
    runner, document = run_playbook(tmp_path, "acceptance.yml", inventory, tags="gpu")
    assert runner.rc == 0, runner.stdout.read()[-3000:]
    assert validate(document) == []
    hosts = document["hosts"]
    unreadable = errors(document, "node02")
    assert [check["id"] for check in unreadable] == ["run.preflight.inventory"] and hosts["node02"]["checks"] == unreadable
    assert "zhisuan_thresholds cannot be read" in unreadable[0]["message"]
    assert "site_thresholds" in unreadable[0]["message"]
    typo = errors(document, "node03")
    assert [check["id"] for check in typo] == ["run.preflight.inventory"]
    assert "zhisuan_gpu_profile 'H1OO' is not a known GPU profile" in typo[0]["message"]
    for name in ("node01", "node04"):
        assert hosts[name]["status"] == "pass", errors(document, name)
        assert hosts[name]["facts"]["gpu"]["profile"] == "a100"
