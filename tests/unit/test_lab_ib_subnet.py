# SPDX-License-Identifier: GPL-3.0-or-later
"""The lab's subnet view (issue 23): lab/sim/ibnetdiscover.py replays the real ``ibnetdiscover -p`` capture
(treydock/infiniband_exporter's EDR fixture) with swapped and pulled cables edited in, read back by the collection's
own reader and judged against the plan labctl writes."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

from ansible_collections.zhisuan.ops.plugins.module_utils._judge import _ib_cabling
from ansible_collections.zhisuan.ops.plugins.module_utils._net import ibnetdiscover

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
SIM = os.path.join(REPO, "lab", "sim", "ibnetdiscover.py")
CAPTURE = os.path.join(REPO, "tests", "fixtures", "ib", "ibnetdiscover-p-edr-osc-exporter.txt")
NODES = ("o0001", "o0002", "p0001")


def _labctl():
    spec = importlib.util.spec_from_file_location("zhisuan_labctl_under_test", os.path.join(REPO, "lab", "labctl.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _states(tmp_path, faults_by_node):
    paths = []
    for index, node in enumerate(NODES, 1):
        folder = tmp_path / "nodes" / node
        folder.mkdir(parents=True)
        (folder / "state.json").write_text(json.dumps({"schema": 1, "node": node, "index": index, "gpus": 8,
                                                       "faults": faults_by_node.get(node, [])}))
        paths.append(folder / "state.json")
    return paths[0]


def _run(state, *args):
    return subprocess.run([sys.executable, "-I", "-S", SIM, "--state", str(state)] + list(args),
                          capture_output=True, text=True, timeout=30, check=False)


def test_healthy_subnet_is_the_capture_and_only_the_ports_report_is_served(tmp_path):
    state = _states(tmp_path, {})
    result = _run(state, "-p")
    with open(CAPTURE, encoding="utf-8") as handle:
        assert (result.returncode, result.stdout) == (0, handle.read())
    assert _run(state).returncode == 2 and "unsupported arguments" in _run(state).stderr


def test_swapped_and_pulled_cables_are_failed_against_the_labs_plan(tmp_path):
    # the faults are on o0001 (swapped with o0002) and p0001 (pulled); o0002 runs the tool and sees them all
    state = _states(tmp_path, {"o0001": [{"kind": "ib_swap", "peer": "o0002"}], "p0001": [{"kind": "ib_pull"}]})
    result = _run(tmp_path / "nodes" / "o0002" / "state.json", "-p")
    assert result.returncode == 0, result.stderr
    del state
    warnings = []
    view = ibnetdiscover.fabric_facts(result.stdout, warn=warnings.append)
    view["error"] = None
    assert warnings == []
    links, switches, extra = _labctl().ib_subnet_plan({"optional": ["ibnetdiscover"],
                                                       "nodes": [{"name": node} for node in NODES]})
    plan = dict({"links": links, "switches": switches}, **extra)
    checks = _ib_cabling.judge_ib_cabling(view, plan)
    got = dict((node, [(c["id"], c["status"], c["remedy"], c["observed"]) for c in checks[node]]) for node in checks)
    assert got["o0001"] == [("cabling.ib.hca_1_1.neighbor", "fail", "check_cable", "ib-i1l1s01 port 11")]
    assert got["o0002"] == [("cabling.ib.hca_1_1.neighbor", "fail", "check_cable", "ib-i1l1s01 port 10")]
    assert got["p0001"] == [("cabling.ib.hca_1_1.neighbor", "fail", "check_cable", "no live link")]
    [isl_neighbor, isl_rate] = _ib_cabling.judge_ib_switch_links(view, plan)
    assert (isl_neighbor["status"], isl_rate["status"]) == ("pass", "pass")


def test_faults_the_capture_cannot_carry_are_refused(tmp_path):
    sim = _labctl().OPTIONAL_SIMS["ibnetdiscover"]
    errors = []
    for fault, node in (({"kind": "ib_swap", "peer": "p0001"}, "o0001"), ({"kind": "ib_swap", "peer": "o0001"}, "o0001"),
                        ({"kind": "ib_pull"}, "n01")):
        try:
            sim.check_fault(fault, {"name": node})
        except Exception as exc:  # LabError of the lab's own _common module
            errors.append(str(exc))
    assert len(errors) == 3
    assert "different leaves" in errors[0] and "another node" in errors[1] and "not 'n01'" in errors[2]
