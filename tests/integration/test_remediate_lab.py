# SPDX-License-Identifier: GPL-3.0-or-later
"""Remediation on the lab with a real Slurm (issue 6): a fixable node goes drain -> action -> verify -> resume, a
persistent fault stays drained with its reason, an operator's drain is never touched, a node whose GPU runs a process
is not reset, the power cycle goes through the lab BMC and shows in its log, check mode changes nothing, the breaker
trips on a fleet-wide cause and the K=2 limit holds with ten faulty nodes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._remediate import history as remediation_history
from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import validate

from .conftest import REPO, run_playbook, start_lab

FAST = {"zhisuan_verify_burn_duration": 2, "remediate_node_power_poll": 1, "remediate_node_drain_timeout": 60}
OPERATOR_REASON = "maintenance: fan replacement"


class Lab:
    def __init__(self, tmp_path, scenario):
        self.tmp_path = tmp_path
        self.inventory = start_lab(tmp_path, scenario)
        self.dir = tmp_path / "lab"
        self.bin = self.dir / "slurm" / "bin"

    def scontrol(self, *args):
        return subprocess.run([str(self.bin / "scontrol")] + list(args), capture_output=True, text=True, timeout=30,
                              check=True).stdout

    def nodes(self):
        """node -> (state, reason) as sinfo prints them."""
        out = subprocess.run([str(self.bin / "sinfo"), "-h", "-N", "-o", "%N|%T|%E"], capture_output=True, text=True,
                             timeout=30, check=True).stdout
        return dict((line.split("|")[0], tuple(line.split("|")[1:])) for line in out.splitlines())

    def faults(self, node):
        with open(self.dir / "nodes" / node / "state.json") as handle:
            return json.load(handle)["faults"]

    def drained_by_slurmctld_log(self):
        with open(self.dir / "slurm" / "log" / "slurmctld.log") as handle:
            return sorted(set(line.split("update_node: node ")[1].split()[0] for line in handle
                              if "update_node: node " in line and " reason set to: zhisuan:" in line))

    def down(self):
        subprocess.run([sys.executable, os.path.join(REPO, "lab", "labctl.py"), "down", "--dir", str(self.dir)],
                       capture_output=True, timeout=120, check=False)


def run_check_mode(tmp_path, inventory, extravars):
    """run_playbook with --check (ansible-runner's cmdline)."""
    import ansible_runner

    out_root = tmp_path / "out"
    (tmp_path / "runner").mkdir(exist_ok=True)
    runner = ansible_runner.run(
        private_data_dir=str(tmp_path / "runner"), playbook=os.path.join(REPO, "playbooks", "remediate.yml"),
        inventory=inventory, extravars=dict(extravars, results_out_root=str(out_root), zhisuan_run_id="test-run"),
        cmdline="--check", quiet=True, timeout=600,
        envvars={"ANSIBLE_CONFIG": os.path.join(REPO, "ansible.cfg"), "PATH": os.environ["PATH"]})
    return runner, json.loads((out_root / "test-run" / "results.json").read_text())


def history(tmp_path):
    """The history as its readers see it (history.read: a node's final record supersedes the ``acted`` record the
    run wrote when the node's action returned)."""
    return remediation_history.read(str(tmp_path / "history" / "remediation.jsonl"))


def remediation(document, node):
    return document["hosts"][node]["facts"]["remediation"]


def checks(document, node, prefix):
    return dict((c["id"], c) for c in document["hosts"][node]["checks"] if c["id"].startswith(prefix))


@pytest.fixture(scope="module")
def repair_run(tmp_path_factory):
    """One run over the remediate scenario: node03 (reset fixes), node04 (XID 79, power cycle through the Redfish
    BMC), node05 (persistent), node06 (drained by an operator first), node08 (a process holds GPU 0)."""
    tmp_path = tmp_path_factory.mktemp("remediate")
    lab = Lab(tmp_path, "remediate.yml")
    try:
        lab.scontrol("update", "nodename=node06", "state=drain", "reason=" + OPERATOR_REASON)
        extra = dict(FAST, zhisuan_history_dir=str(tmp_path / "history"), zhisuan_remediate_batch=5,
                     zhisuan_remediation_policy={"limits": {"max_nodes": 6, "max_percent": 100}})
        runner, document = run_playbook(tmp_path, "remediate.yml", lab.inventory, extravars=extra,
                                        limit="node03,node04,node05,node06,node08")
        yield lab, runner, document
    finally:
        lab.down()


def test_the_run_ends_and_its_results_are_valid(repair_run):
    lab, runner, document = repair_run
    assert runner.rc == 0, runner.stdout.read()
    assert validate(document) == []
    assert document["run"]["kind"] == "remediate"
    data = document["cluster"]["remediation"]
    assert data["order"] == ["node03", "node04", "node05", "node08"]
    assert data["skipped"] == {"node06": "drained by someone else (%s): left alone, never resumed by remediation"
                                         % OPERATOR_REASON}
    breaker = [c for c in document["cluster"]["checks"] if c["id"] == "remediate.breaker.tripped"]
    assert [c["status"] for c in breaker] == ["pass"]


def test_a_fixable_node_is_drained_reset_verified_and_resumed(repair_run):
    lab, _, document = repair_run
    done = remediation(document, "node03")
    assert (done["action"], done["mode"], done["outcome"]) == ("reset_gpu", "automatic", "repaired")
    assert done["why"]["cause"] == "gpu.ecc.volatile_uncorrectable"
    verify = checks(document, "node03", "verify.")
    assert sorted(verify) == ["verify.gpu.result", "verify.memory.result", "verify.power.result",
                              "verify.stability.result", "verify.stress.result"]
    assert set(c["status"] for c in verify.values()) == {"pass"}
    assert checks(document, "node03", "remediate.")["remediate.reset_gpu.result"]["status"] == "pass"
    # the reset cleared the volatile count (it stays in the lifetime count); Slurm has the node back
    assert lab.faults("node03") == [{"kind": "ecc_aggregate_uncorrectable", "gpu": 3, "count": 2}]
    assert lab.nodes()["node03"] == ("idle", "none")
    with open(lab.dir / "slurm" / "log" / "slurmctld.log") as handle:
        log = handle.read()
    assert "update_node: node node03 reason set to: zhisuan:gpu.ecc.volatile_uncorrectable run test-run" in log


def test_power_cycle_goes_through_the_lab_bmc_and_shows_in_its_log(repair_run):
    lab, _, document = repair_run
    done = remediation(document, "node04")
    assert (done["action"], done["outcome"]) == ("power_cycle", "repaired")
    with open(lab.dir / "bmc" / "redfish.log") as handle:
        log = handle.read()
    assert "node04 127.0.0.1 POST /redfish/v1/Systems/DGX/Actions/ComputerSystem.Reset 204" in log
    assert "node04 power cycle: the node booted at " in log
    assert "; faults cleared: gpu_missing, xid" in log
    assert lab.faults("node04") == []
    assert checks(document, "node04", "verify.")["verify.power.result"]["observed"] == "power On, reachable"
    assert lab.nodes()["node04"] == ("idle", "none")


def test_a_persistent_fault_stays_drained_with_its_reason_and_a_ticket(repair_run):
    lab, _, document = repair_run
    done = remediation(document, "node05")
    assert (done["action"], done["outcome"]) == ("reset_gpu", "failed")
    assert done["message"] == ("reset_gpu did not fix it: verification failed at memory "
                               "(gpu.ecc.volatile_uncorrectable); the node stays drained for an RMA")
    assert checks(document, "node05", "verify.")["verify.memory.result"]["status"] == "fail"
    result = checks(document, "node05", "remediate.")["remediate.reset_gpu.result"]
    assert (result["status"], result["remedy"]) == ("fail", "rma")
    assert lab.faults("node05") == [{"kind": "ecc_volatile_uncorrectable", "gpu": 1, "count": 4, "persistent": True}]
    assert lab.nodes()["node05"] == ("drained", "zhisuan:gpu.ecc.volatile_uncorrectable run test-run")
    ticket = json.loads((lab.tmp_path / "out" / "test-run" / "tickets" / "node05.json").read_text())
    assert (ticket["remedy"], ticket["tried"], ticket["outcome"]) == ("rma", "reset_gpu", "failed")
    assert os.path.isfile(os.path.join(ticket["evidence"], "nvidia-smi-q.xml"))


def test_an_operator_drained_node_is_never_touched(repair_run):
    lab, _, document = repair_run
    done = remediation(document, "node06")
    assert (done["action"], done["outcome"]) == ("none", "skipped")
    assert lab.nodes()["node06"] == ("drained", OPERATOR_REASON)
    assert lab.faults("node06") == [{"kind": "xid", "gpu": 2, "code": 48, "text": "", "after_s": 1.0}]
    assert "node06" not in lab.drained_by_slurmctld_log()


def test_no_reset_on_a_node_whose_gpu_runs_a_process(repair_run):
    lab, _, document = repair_run
    done = remediation(document, "node08")
    assert (done["action"], done["outcome"]) == ("reset_gpu", "refused")
    assert done["message"] == ("refused reset_gpu: GPU processes still run (GPU 0: pid 4242 python); the node stays "
                               "drained until they are gone")
    assert [f["kind"] for f in lab.faults("node08")] == ["xid", "gpu_process"]
    assert lab.nodes()["node08"] == ("drained", "zhisuan:xid.119.events run test-run")


def test_every_action_is_in_the_history(repair_run):
    lab, _, _ = repair_run
    records = dict((r["node"], r) for r in history(lab.tmp_path))
    assert sorted((node, r["action"], r["outcome"]) for node, r in records.items()) == [
        ("node03", "reset_gpu", "repaired"), ("node04", "power_cycle", "repaired"), ("node05", "reset_gpu", "failed"),
        ("node06", "none", "skipped"), ("node08", "reset_gpu", "refused")]
    assert records["node03"]["durations"]["detect_to_repair_s"] >= 0
    assert records["node05"]["durations"]["detect_to_repair_s"] is None


@pytest.fixture
def lab_of(tmp_path):
    labs = []

    def start(scenario):
        labs.append(Lab(tmp_path, scenario))
        return labs[-1]
    yield start
    for lab in labs:
        lab.down()


def test_check_mode_from_a_diagnosis_changes_nothing(tmp_path, lab_of):
    lab = lab_of("remediate.yml")
    lab.scontrol("update", "nodename=node06", "state=drain", "reason=" + OPERATOR_REASON)
    before = (lab.scontrol("show", "node", "-o"), dict((n, lab.faults(n)) for n in lab.nodes()))
    runner, diagnosis = run_playbook(tmp_path, "diagnose.yml", lab.inventory,
                                     extravars={"zhisuan_diag_level": "custom", "zhisuan_diag_families": ["gpu", "xid"]},
                                     limit="node02,node03,node04,node05,node06,node07,node08")
    assert runner.rc == 0, runner.stdout.read()
    source = tmp_path / "diagnosis.json"
    source.write_text(json.dumps(diagnosis))
    extra = dict(FAST, zhisuan_history_dir=str(tmp_path / "history"), zhisuan_remediate_from=str(source),
                 zhisuan_remediation_policy={"limits": {"max_nodes": 6, "max_percent": 100}})
    runner, document = run_check_mode(tmp_path, lab.inventory, extra)
    assert runner.rc == 0, runner.stdout.read()
    after = (lab.scontrol("show", "node", "-o"), dict((n, lab.faults(n)) for n in lab.nodes()))
    assert after == before
    assert history(tmp_path) == []
    assert validate(document) == []
    assert document["cluster"]["remediation"]["source"] == {
        "path": str(source), "run_id": "test-run", "kind": "diagnose", "started": diagnosis["run"]["started"],
        "finished": diagnosis["run"]["finished"]}
    assert document["cluster"]["remediation"]["order"] == ["node03", "node04", "node05", "node07", "node08"]
    assert remediation(document, "node04")["message"] == "check mode: power_cycle would run (automatic, batch 2)"
    assert remediation(document, "node04")["outcome"] == "planned"


def test_the_breaker_trips_on_a_fleet_wide_cause(tmp_path, lab_of):
    lab = lab_of("remediate-fleet.yml")
    extra = dict(FAST, zhisuan_history_dir=str(tmp_path / "history"))
    runner, document = run_playbook(tmp_path, "remediate.yml", lab.inventory, extravars=extra)
    assert runner.rc == 0, runner.stdout.read()
    assert validate(document) == []
    breaker = [c for c in document["cluster"]["checks"] if c["id"] == "remediate.breaker.tripped"][0]
    assert (breaker["status"], breaker["observed"], breaker["remedy"]) == ("fail", 10, "investigate")
    assert breaker["message"].startswith("10 of 10 nodes fail xid.119.events at once")
    assert set(lab.nodes().values()) == {("idle", "none")}
    assert lab.drained_by_slurmctld_log() == []
    assert sorted(set(r["outcome"] for r in history(tmp_path))) == ["held"]


def test_the_limit_holds_with_ten_faulty_nodes_and_k2(tmp_path, lab_of):
    lab = lab_of("remediate-fleet.yml")
    extra = dict(FAST, zhisuan_history_dir=str(tmp_path / "history"), zhisuan_remediate_batch=2,
                 zhisuan_remediation_policy={"limits": {"max_nodes": 2, "max_percent": 100, "breaker_failures": 10,
                                                        "breaker_percent": 100}})
    runner, document = run_playbook(tmp_path, "remediate.yml", lab.inventory, extravars=extra)
    assert runner.rc == 0, runner.stdout.read()
    data = document["cluster"]["remediation"]
    assert data["order"] == ["node01", "node02"]
    assert data["deferred"] == ["node%02d" % i for i in range(3, 11)]
    # slurmctld saw our drain on two nodes only
    assert lab.drained_by_slurmctld_log() == ["node01", "node02"]
    outcomes = sorted((r["node"], r["outcome"]) for r in history(tmp_path))
    assert outcomes[:2] == [("node01", "repaired"), ("node02", "repaired")]
    assert set(outcome for _, outcome in outcomes[2:]) == {"deferred"}
    deferred = [c for c in document["cluster"]["checks"] if c["id"] == "remediate.limit.deferred"][0]
    assert (deferred["status"], deferred["observed"]) == ("warn", 8)


def test_an_approved_reboot_runs_and_a_reboot_does_not_fix_a_link(tmp_path, lab_of):
    lab = lab_of("remediate.yml")
    policy = {"causes": [{"match": "gpu.nvlink.*", "remedy": "reboot", "mode": "approval"}],
              "limits": {"max_nodes": 6, "max_percent": 100}}
    extra = dict(FAST, zhisuan_history_dir=str(tmp_path / "history"), zhisuan_remediation_policy=policy)
    runner, document = run_playbook(tmp_path, "remediate.yml", lab.inventory, extravars=extra, limit="node07")
    assert runner.rc == 0, runner.stdout.read()
    assert remediation(document, "node07")["outcome"] == "awaiting_approval"
    assert lab.nodes()["node07"] == ("idle", "none")
    runner, document = run_playbook(tmp_path, "remediate.yml", lab.inventory, limit="node07",
                                    extravars=dict(extra, zhisuan_remediate_approve=["node07"]))
    assert runner.rc == 0, runner.stdout.read()
    done = remediation(document, "node07")
    assert (done["action"], done["mode"], done["outcome"]) == ("reboot", "approval", "failed")
    # the lab's in-band reboot is simulated by the lab hook; a boot does not bring a downed NVLink back
    log = (lab.dir / "nodes" / "node07" / "reboot.log").read_text()
    assert log.endswith(" node07 reboot (simulated): the node booted; faults cleared: none\n")
    assert lab.nodes()["node07"] == ("drained", "zhisuan:gpu.nvlink.links run test-run")
    assert [(r["outcome"]) for r in history(tmp_path)] == ["awaiting_approval", "failed"]
