# SPDX-License-Identifier: GPL-3.0-or-later
"""zhisuan.ops.rdma_pair and its round runner, with the lab's perftest simulator behind the seam: real TCP between
a server and a client, real captures with the pair's factor edited in, the real error outputs."""

from __future__ import annotations

import json
import os
import socket
import stat
import sys
import threading
import time

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.zhisuan.ops.plugins.module_utils._net import pair_run
from ansible_collections.zhisuan.ops.plugins.modules import rdma_pair

pytestmark = pytest.mark.usefixtures("as_node")

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
SIM = os.path.join(REPO, "lab", "sim", "perftest.py")
HDR_GBPS = 201.802  # the HDR capture: 24056.72 MB/sec


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def node(tmp_path, name, faults=()):
    """A lab node's ib_write_bw: the simulator behind a wrapper, like labctl writes it."""
    base = tmp_path / name
    base.mkdir()
    state = base / "state.json"
    state.write_text(json.dumps({"schema": 1, "node": name, "index": 1, "gpus": 8, "faults": list(faults)}))
    prog = base / "ib_write_bw"
    prog.write_text("#!/bin/sh\nexec %s -I -S %s --state %s \"$@\"\n" % (sys.executable, SIM, state))
    prog.chmod(prog.stat().st_mode | stat.S_IXUSR)
    return str(prog)


def params(host, round_pairs, path, timeout=20, **extra):
    out = {"host": host, "round": round_pairs, "round_number": 1, "test": "ib_write_bw", "path": path,
           "addresses": {"a": "127.0.0.1", "b": "127.0.0.1"}, "timeout": timeout, "size": 8388608,
           "retry_delay": 0.2, "iterations": None, "duration": None, "device": None, "ib_port": None,
           "gid_index": None, "qps": None, "gpudirect": None, "extra_args": []}
    out.update(extra)
    return out


def run_pair(tmp_path, faults_a=(), faults_b=(), server_delay=0.0, timeout=20):
    port = free_port()
    pairs = [{"server": "a", "client": "b", "port": port}]
    prog_a, prog_b = node(tmp_path, "a", faults_a), node(tmp_path, "b", faults_b)
    holder = {}

    def server():
        time.sleep(server_delay)
        holder["a"] = pair_run.run_round(params("a", pairs, prog_a, timeout=timeout))

    thread = threading.Thread(target=server)
    thread.start()
    client = pair_run.run_round(params("b", pairs, prog_b, timeout=timeout))
    thread.join(60)
    return holder["a"], client, port


def test_a_pair_over_real_tcp(tmp_path):
    server, client, port = run_pair(tmp_path)
    assert (server["role"], server["peer"], server["status"], server["value"]) == ("server", "b", "ok", HDR_GBPS)
    assert (client["role"], client["peer"], client["status"], client["value"]) == ("client", "a", "ok", HDR_GBPS)
    assert (client["port"], client["address"], client["unit"]) == (port, "127.0.0.1", "Gb/s")
    assert client["attempts"] >= 1  # the client may start before its server listens
    assert client["result"]["bytes"] == 8388608 and client["device"] == "ib0"


def test_slow_link_and_slow_node_factors_reach_both_sides(tmp_path):
    server, client, _ = run_pair(tmp_path, faults_b=[{"kind": "rdma_slow_link", "peer": "a", "factor": 0.5}])
    assert server["value"] == client["value"] == round(12028.36 * 1048576 * 8 / 1e9, 3)
    slow = tmp_path / "slow"
    slow.mkdir()
    server, client, _ = run_pair(slow, faults_a=[{"kind": "rdma_slow_node", "factor": 0.25}])
    assert client["result"]["bw_average"] == 6014.18


def test_client_retries_until_the_server_listens(tmp_path):
    server, client, _ = run_pair(tmp_path, server_delay=1.0)
    assert client["status"] == "ok" and client["attempts"] >= 2
    assert server["status"] == "ok"


def test_no_server_is_a_timeout_after_retries(tmp_path):
    port = free_port()
    result = pair_run.run_round(params("b", [{"server": "a", "client": "b", "port": port}], node(tmp_path, "b"), timeout=2))
    assert (result["status"], result["error_kind"], result["value"]) == ("timeout", "timed_out", None)
    assert result["message"].startswith("ib_write_bw: no server answered at 127.0.0.1 port %d within 2 s (" % port)


def test_server_without_client_times_out(tmp_path):
    result = pair_run.run_round(params("a", [{"server": "a", "client": "b", "port": free_port()}], node(tmp_path, "a"), timeout=1))
    assert (result["status"], result["error_kind"]) == ("timeout", "timed_out")
    assert result["message"] == "ib_write_bw: timed out after 1 s (process group killed)"


def test_no_device_is_an_error_not_a_retry(tmp_path):
    prog = node(tmp_path, "b", [{"kind": "rdma_no_device"}])
    result = pair_run.run_round(params("b", [{"server": "a", "client": "b", "port": free_port()}], prog, timeout=5))
    assert (result["status"], result["error_kind"]) == ("error", "no_device")
    assert result["message"].startswith("ib_write_bw: no RDMA device found")
    assert "attempts" not in result


def test_host_not_in_the_round_is_idle(tmp_path):
    result = pair_run.run_round(params("c", [{"server": "a", "client": "b", "port": 1}], "/nonexistent"))
    assert (result["role"], result["status"], result["value"]) == ("idle", "idle", None)


def test_perftest_arguments():
    base = params("a", [], "x", device="mlx5_0", gid_index=3, qps=4, duration=10, iterations=500, gpudirect=0,
                  extra_args=["--perform_warm_up"])
    assert pair_run.test_args(base) == ["-d", "mlx5_0", "-x", "3", "-s", "8388608", "-q", "4", "-D", "10",
                                        "--use_cuda=0", "-F", "--perform_warm_up"]
    lat = params("a", [], "x", test="ib_write_lat", size=2, qps=4, iterations=1000)
    assert pair_run.test_args(lat) == ["-s", "2", "-n", "1000", "-F"]


def _module(args, capsys):
    with patch_module_args(args):
        with pytest.raises(SystemExit) as info:
            rdma_pair.main()
    return info.value.code, json.loads(capsys.readouterr().out)


def test_module_loopback_runs_both_sides(tmp_path, capsys):
    port = free_port()
    code, out = _module({"round": [{"server": "a", "client": "a", "port": port}], "round_number": 3, "host": "a",
                         "addresses": {"a": "127.0.0.1"}, "path": node(tmp_path, "a"), "size": 8388608,
                         "timeout": 20}, capsys)
    assert code == 0, out
    result = out["rdma_pair"]
    assert (result["role"], result["status"], result["value"], result["round"]) == ("loopback", "ok", HDR_GBPS, 3)
    assert result["server_side"]["status"] == "ok"
    assert out["changed"] is False


def test_module_refuses_a_node_twice_in_a_round(capsys):
    code, out = _module({"round": [{"server": "a", "client": "b", "port": 1}, {"server": "c", "client": "a", "port": 2}],
                         "host": "a"}, capsys)
    assert code == 1
    assert out["msg"] == "rdma_pair: host a is in 2 pairs of one round; a round runs each node once"
