"""The lab's gpu_burn: the real 8x A100 gpu-burn log replayed at once, with value-edited faults, through labctl."""

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from ansible.module_utils.testing import patch_module_args

from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import gpu_burn as parser
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import burn as rules
from ansible_collections.zhisuan.ops.plugins.modules import gpu_burn as module

REPO = Path(__file__).resolve().parents[2]
LABCTL = REPO / "lab" / "labctl.py"
CAPTURE = REPO / "tests" / "fixtures" / "gpu-burn" / "gpu-burn-8xA100-80GB-all-OK.log"
SCENARIO = {
    "name": "burn",
    "defaults": {"model": "a100", "gpus": 8},
    "nodes": {
        "healthy01": {},
        "slow01": {"faults": [{"kind": "burn_slow", "gpu": 3, "gflops": 12000}]},
        "idle01": {"faults": [{"kind": "burn_slow", "gpu": 5, "gflops": 0}]},
        "faulty01": {"faults": [{"kind": "burn_errors", "gpu": 6, "errors": 12}]},
        "four01": {"gpus": 4, "faults": [{"kind": "burn_errors", "gpu": 3, "errors": 1}]},
        "hang01": {"faults": [{"kind": "hang", "tool": "gpu_burn"}]},
    },
}


def labctl(*args):
    return subprocess.run([sys.executable, str(LABCTL), *map(str, args)], capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("burnlab")
    scenario = tmp / "burn.yml"
    scenario.write_text(yaml.safe_dump(SCENARIO))
    run_dir, inv = tmp / "run", tmp / "hosts.yml"
    res = labctl("up", "--scenario", scenario, "--dir", run_dir, "--inventory", inv)
    assert res.returncode == 0, res.stderr
    hosts = yaml.safe_load(inv.read_text())["all"]["children"]["gpu_nodes"]["hosts"]
    yield {"dir": run_dir, "hosts": hosts}
    labctl("down", "--dir", run_dir)


def burn_of(lab, node):
    return lab["hosts"][node]["zhisuan_tools"]["gpu_burn"]


def run(wrapper, *args):
    return subprocess.run([wrapper, *args], capture_output=True, timeout=30)


def facts(lab, node, *args):
    res = run(burn_of(lab, node), *(args or ("-d", "-tc", "900")))
    assert res.returncode == 0, res.stderr
    return parser.parse(res.stdout.decode("utf-8"), res.stderr.decode("utf-8"))


def test_every_node_gets_a_gpu_burn_wrapper(lab):
    for name, hv in lab["hosts"].items():
        wrapper = Path(hv["zhisuan_tools"]["gpu_burn"])
        assert wrapper == lab["dir"] / "nodes" / name / "bin" / "gpu_burn"
        assert os.access(wrapper, os.X_OK)


UUID_RE = re.compile(rb"\(UUID: [^)]+\)")


def test_healthy_node_replays_the_capture_byte_for_byte_but_its_uuids(lab):
    res = run(burn_of(lab, "healthy01"), "-d", "-tc", "36000")
    assert res.returncode == 0 and res.stderr == b""
    assert UUID_RE.sub(b"(UUID: x)", res.stdout) == UUID_RE.sub(b"(UUID: x)", CAPTURE.read_bytes())
    # the GPUs are the node's own, as its nvidia-smi lists them
    xml = subprocess.run([lab["hosts"]["healthy01"]["zhisuan_tools"]["nvidia_smi"], "-q", "-x"], capture_output=True,
                         timeout=30, check=True).stdout.decode()
    assert [m.decode()[7:-1] for m in UUID_RE.findall(res.stdout)] == re.findall(r"<uuid>([^<]+)</uuid>", xml)


def test_precision_words_follow_the_flags(lab):
    out = run(burn_of(lab, "healthy01"), "60").stdout.decode()
    assert out.count("using FLOATS\n") == 8 and "DOUBLES" not in out and "Tensor Cores" not in out
    assert UUID_RE.sub(b"(UUID: x)", out.replace("using FLOATS\n", "using DOUBLES, using Tensor Cores\n").encode()) == \
        UUID_RE.sub(b"(UUID: x)", CAPTURE.read_bytes())
    tc = run(burn_of(lab, "healthy01"), "-tc", "60").stdout.decode()
    assert tc.count("using FLOATS, using Tensor Cores\n") == 8


def test_slow_gpu_stays_ok_and_is_caught_by_the_rules(lab):
    burned = facts(lab, "slow01")
    slow = burned["gpus"][3]
    assert (slow["gflops_samples"], slow["gflops_median"], slow["verdict"], slow["processed"]) == (
        [12000, 12000], 12000, "OK", 4522)
    assert burned["gpus"][2]["gflops_samples"] == [6255, 16990, 16957]
    checks = rules.judge_burn("slow01", burned, None)
    peers = [c for c in checks if c["id"] == "burn.gflops.peers"]
    assert [(c["status"], c["remedy"]) for c in peers][3] == ("fail", "investigate")
    assert [c["status"] for c in peers].count("pass") == 7


def test_idle_gpu_prints_ok_at_zero(lab):
    idle = facts(lab, "idle01")["gpus"][5]
    assert (idle["gflops_median"], idle["processed"], idle["reports"], idle["verdict"]) == (0, 0, 0, "OK")


def test_faulty_gpu(lab):
    burned = facts(lab, "faulty01")
    assert [(g["errors"], g["verdict"]) for g in burned["gpus"]][5:] == [(0, "OK"), (12, "FAULTY"), (0, "OK")]
    out = run(burn_of(lab, "faulty01"), "-d", "-tc", "60").stdout.decode()
    assert "errors: 0 - 0 - 0 - 0 - 0 - 0 - 12  (WARNING!)- 0   temps" in out


def test_fewer_gpus_are_removed_from_every_part(lab):
    out = run(burn_of(lab, "four01"), "-d", "-tc", "60").stdout.decode()
    assert "Tested 4 GPUs:" in out and "GPU 4:" not in out and "dev 5" not in out
    assert "Killing processes.. Initialized device 3 with" in out
    burned = parser.parse(out)
    assert burned["tested_gpus"] == 4
    assert [(g["index"], g["verdict"]) for g in burned["gpus"]] == [(0, "OK"), (1, "OK"), (2, "OK"), (3, "FAULTY")]
    assert burned["gpus"][0]["gflops_samples"] == [7150, 17039, 16942]


def test_hang_does_not_return(lab):
    proc = subprocess.Popen([burn_of(lab, "hang01"), "-d", "60"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            proc.communicate(timeout=2)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
    assert proc.returncode == -signal.SIGKILL


@pytest.mark.parametrize("args", [(), ("-d",), ("-d", "-d", "60"), ("60", "-d"), ("-m", "50%", "60"), ("0",),
                                  ("-i", "2", "60"), ("-l",)])
def test_unsupported_arguments(lab, args):
    res = run(burn_of(lab, "healthy01"), *args)
    assert res.returncode == 2 and res.stdout == b""
    assert res.stderr.decode() == "lab gpu_burn: unsupported arguments: %s (the lab implements only [-d] [-tc] SECONDS)\n" % (
        " ".join(args) or "(none)")


def test_the_module_runs_the_lab_tool(lab, capsys):
    args = {"gpu_burn_path": burn_of(lab, "faulty01"), "duration": 900, "doubles": True, "tensor_cores": True}
    with patch_module_args(args):
        with pytest.raises(SystemExit) as info:
            module.main()
    out = json.loads(capsys.readouterr().out)
    assert info.value.code == 0, out
    assert out["burn"]["cmd"][1:] == ["-d", "-tc", "900"]
    assert out["burn"]["workdir"] == str(lab["dir"] / "nodes" / "faulty01" / "bin")
    assert [g["verdict"] for g in out["burn"]["gpus"]].count("FAULTY") == 1


def test_the_module_times_out_on_a_hung_lab_tool(lab, capsys):
    with patch_module_args({"gpu_burn_path": burn_of(lab, "hang01"), "duration": 1, "timeout": 1}):
        with pytest.raises(SystemExit):
            module.main()
    out = json.loads(capsys.readouterr().out)
    assert (out["error_kind"], out["msg"]) == ("timed_out", "gpu_burn: timed out after 1 s (process group killed)")


@pytest.mark.parametrize("fault, message", [
    ({"kind": "burn_errors", "gpu": 0, "errors": 0}, "'errors' must be >= 1"),
    ({"kind": "burn_slow", "gpu": 8, "gflops": 100}, "fault 'burn_slow' names gpu 8, the node has GPUs 0..7"),
    ({"kind": "burn_slow", "gpu": 1, "gflops": -5}, "'gflops' must be >= 0"),
    ({"kind": "burn_slow", "gpu": 1}, "missing parameter(s) ['gflops']"),
])
def test_bad_faults_fail_at_up(tmp_path, fault, message):
    scenario = tmp_path / "bad.yml"
    scenario.write_text(yaml.safe_dump({"nodes": {"n1": {"faults": [fault]}}}))
    res = labctl("up", "--scenario", scenario, "--dir", tmp_path / "run", "--inventory", tmp_path / "hosts.yml")
    assert res.returncode == 1 and message in res.stderr, res.stderr
    assert not (tmp_path / "run").exists()
