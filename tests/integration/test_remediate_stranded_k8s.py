# SPDX-License-Identifier: GPL-3.0-or-later
"""A stranded node on the Kubernetes path (issue 25), with the real kubectl against tests/lab/k8s_standin.py - a
STAND-IN for the API server, not a real cluster (none can run where this is built). node01 of the escalation lab
(healthy) is cordoned with our drain annotation, as a remediation run cut off after its action leaves it: the
default inspection reports remediate.stranded.node01, and the next remediate run verifies node01 and uncordons it
(annotation removed). node02 is cordoned by someone else and stays so. Two lab nodes, one acted on."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._remediate import history as remediation_history
from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import validate

from .conftest import REPO, start_lab
from .test_remediate_cutoff_lab import _run
from .test_remediate_lab import FAST, remediation

sys.path.insert(0, os.path.join(REPO, "tests", "lab"))
import k8s_standin as standin  # noqa: E402  pylint: disable=wrong-import-position

pytestmark = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
ANN = "zhisuan.ops/drain-reason"
MARK = "zhisuan:xid.48.events run cut-k8s"
OTHER = "kernel upgrade (ops)"


@pytest.fixture(scope="module")
def k8s_stranded(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("stranded-k8s")
    # kubectl's discovery cache (HOME stays: the playbooks' async jobs live under it)
    cache = os.environ.get("KUBECACHEDIR")
    os.environ["KUBECACHEDIR"] = str(tmp_path / "kube-cache")
    inventory = start_lab(tmp_path, "escalation.yml")
    server = standin.serve(nodes=[standin.node("node01", unschedulable=True, annotations={ANN: MARK}),
                                  standin.node("node02", unschedulable=True, annotations={ANN: OTHER})])
    kubeconfig = standin.write_kubeconfig(str(tmp_path / "kubeconfig"), server.url)
    extra = {"zhisuan_scheduler": "kubernetes", "zhisuan_kubeconfig": kubeconfig,
             "zhisuan_history_dir": str(tmp_path / "history")}
    try:
        inspected = _run(tmp_path, "inspect.yml", inventory, "inspect-k8s", extra, limit="node01,node02")
        remediated = _run(tmp_path, "remediate.yml", inventory, "next-k8s", dict(FAST, **extra), limit="node01,node02")
        yield tmp_path, server, inspected, remediated
    finally:
        server.close()
        subprocess.run([sys.executable, os.path.join(REPO, "lab", "labctl.py"), "down", "--dir", str(tmp_path / "lab")],
                       capture_output=True, timeout=120, check=False)
        if cache is None:
            os.environ.pop("KUBECACHEDIR", None)
        else:
            os.environ["KUBECACHEDIR"] = cache


def test_inspection_reports_the_node_cordoned_by_us_not_the_operators(k8s_stranded):
    _, _, (runner, document), _ = k8s_stranded
    assert runner.rc == 0, runner.stdout.read()[-3000:]
    assert validate(document) == []
    ids = sorted(c["id"] for c in document["cluster"]["checks"] if c["id"].startswith("remediate."))
    assert ids == ["remediate.stranded.node01"]
    check = [c for c in document["cluster"]["checks"] if c["id"] == "remediate.stranded.node01"][0]
    assert check["message"].startswith("node01 is drained by run cut-k8s for xid.48.events (reason '%s')" % MARK)


def test_the_next_remediation_uncordons_the_stranded_node_only(k8s_stranded):
    tmp_path, server, _, (runner, document) = k8s_stranded
    assert runner.rc == 0, runner.stdout.read()[-3000:]
    assert validate(document) == []
    data = document["cluster"]["remediation"]
    assert data["stranded"] == ["node01"] and data["order"] == ["node01"]
    done = remediation(document, "node01")
    assert (done["action"], done["outcome"]) == ("verify", "resumed")
    assert done["message"].endswith("the node is back in kubernetes")
    node01, node02 = server.nodes["node01"], server.nodes["node02"]
    assert not node01["spec"].get("unschedulable") and ANN not in node01["metadata"]["annotations"]
    assert node02["spec"]["unschedulable"] is True and node02["metadata"]["annotations"][ANN] == OTHER
    # node02 has an XID 48 but someone else's cordon: left alone
    assert remediation(document, "node02")["outcome"] == "skipped"
    records = remediation_history.read(str(tmp_path / "history" / remediation_history.FILE_NAME))
    assert sorted((r["node"], r["action"], r["outcome"]) for r in records) == [
        ("node01", "verify", "resumed"), ("node02", "none", "skipped")]


def test_a_history_that_cannot_be_written_is_reported_and_the_run_goes_on(tmp_path):
    """The history file cannot be written (here it is a directory: every append fails, as on a broken volume): the
    remediation still runs to its end, and the node's results say its history records are missing."""
    inventory = start_lab(tmp_path, "escalation.yml")
    history_dir = tmp_path / "history"
    (history_dir / remediation_history.FILE_NAME).mkdir(parents=True)
    try:
        runner, document = _run(tmp_path, "remediate.yml", inventory, "no-history",
                                dict(FAST, zhisuan_history_dir=str(history_dir)), limit="node01,node02")
    finally:
        subprocess.run([sys.executable, os.path.join(REPO, "lab", "labctl.py"), "down", "--dir", str(tmp_path / "lab")],
                       capture_output=True, timeout=120, check=False)
    assert runner.rc == 0, runner.stdout.read()[-3000:]
    assert validate(document) == []
    assert (remediation(document, "node02")["action"], remediation(document, "node02")["outcome"]) == (
        "reset_gpu", "repaired")
    written = [c for c in document["hosts"]["node02"]["checks"] if c["id"] == "remediate.history.write"]
    assert len(written) == 1
    assert (written[0]["status"], written[0]["remedy"], written[0]["observed"]) == ("error", "investigate",
                                                                                     "2 write(s) failed")
    assert written[0]["message"].startswith("the history lacks this node's remediation (escalation and the KPIs will "
                                            "not count it): zhisuan.ops.remediation_history: cannot append to ")
    assert "Is a directory" in written[0]["evidence"]
    assert not [c for c in document["hosts"]["node01"]["checks"] if c["id"] == "remediate.history.write"]
