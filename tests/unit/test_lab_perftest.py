"""The lab's ib_write_bw / ib_write_lat: server and client meet over real TCP, exchange node names and fault
factors, and print their half of a real capture with only values edited; the real error outputs; through labctl."""

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from ansible_collections.zhisuan.ops.plugins.module_utils._net import perftest as parser

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "lab" / "sim"))
import perftest as sim  # noqa: E402

LABCTL = REPO / "lab" / "labctl.py"
FIXTURES = REPO / "tests" / "fixtures" / "perftest"
SCENARIO = {
    "name": "pairs-unit",
    "nodes": {
        "n1": {},
        "n2": {"faults": [{"kind": "rdma_slow_link", "peer": "n3", "factor": 0.5}]},
        "n3": {"faults": [{"kind": "rdma_slow_node", "factor": 0.8}]},
        "nodev": {"faults": ["rdma_no_device"]},
    },
}


def labctl(*args):
    return subprocess.run([sys.executable, str(LABCTL), *map(str, args)], capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("perftestlab")
    scenario = tmp / "pairs.yml"
    scenario.write_text(yaml.safe_dump(SCENARIO))
    run_dir, inv = tmp / "run", tmp / "hosts.yml"
    res = labctl("up", "--scenario", scenario, "--dir", run_dir, "--inventory", inv)
    assert res.returncode == 0, res.stderr
    hosts = yaml.safe_load(inv.read_text())["all"]["children"]["gpu_nodes"]["hosts"]
    yield hosts
    labctl("down", "--dir", run_dir)


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def pair(lab, server, client, tool="ib_write_bw", args=()):
    port = str(free_port())
    server_proc = subprocess.Popen([lab[server]["zhisuan_tools"][tool], "-p", port, *args],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    for _attempt in range(100):  # until the server listens
        client_proc = subprocess.run([lab[client]["zhisuan_tools"][tool], "-p", port, *args, "127.0.0.1"],
                                     capture_output=True, timeout=30)
        if client_proc.returncode == 0:
            break
        time.sleep(0.05)
    else:
        server_proc.kill()
        server_proc.communicate(timeout=30)
        raise AssertionError("the %s client never reached the server: %s" % (tool, client_proc.stderr.decode()))
    out, err = server_proc.communicate(timeout=30)
    assert server_proc.returncode == 0, err
    return out.decode(), client_proc.stdout.decode()


def test_unedited_halves_reprint_the_capture_byte_for_byte():
    capture = (FIXTURES / "ib_write_bw-loopback-server+client-8M-hdr.log").read_text()
    opts = {"flags": set(), "size": "8388608"}
    client, server = sim.render_bw("client", opts, 1.0), sim.render_bw("server", opts, 1.0)
    assert client + server == capture
    for side in ("client", "server"):
        capture = (FIXTURES / ("ib_write_lat-rxe-%s.txt" % side)).read_text()
        assert sim.render_lat(side, {"flags": set()}, 1.0) == capture


def test_healthy_pair_over_tcp(lab):
    server, client = pair(lab, "n1", "n1", args=("-s", "8388608"))
    assert parser.parse(server)["result"]["bw_average_gbps"] == 201.802
    parsed = parser.parse(client)
    assert parsed["result"]["bw_average_gbps"] == 201.802 and parsed["waited_for_client"] is False


def test_slow_link_only_with_its_peer_and_slow_node_with_everyone(lab):
    server, client = pair(lab, "n3", "n2", args=("-s", "8388608"))
    # min(0.8, 1.0) slow node x 0.5 link = 0.4
    assert parser.parse(client)["result"]["bw_average"] == round(24056.72 * 0.4, 2)
    assert parser.parse(server)["result"]["bw_average"] == round(24056.72 * 0.4, 2)
    server, client = pair(lab, "n1", "n2", args=("-s", "8388608"))
    assert parser.parse(client)["result"]["bw_average"] == 24056.72
    server, client = pair(lab, "n1", "n3", args=("-s", "8388608"))
    assert parser.parse(client)["result"]["bw_average"] == round(24056.72 * 0.8, 2)


def test_size_iterations_device_and_gbits_are_edited_values(lab):
    _server, client = pair(lab, "n1", "n1", args=("-s", "65536", "-n", "500", "-d", "mlx5_3", "--report_gbits", "-F"))
    parsed = parser.parse(client)
    assert (parsed["unit"], parsed["device"]) == ("Gb/sec", "mlx5_3")
    assert (parsed["result"]["bytes"], parsed["result"]["iterations"]) == (65536, 500)
    assert parsed["result"]["bw_average"] == round(24056.72 * 1048576 / 125e6, 2)
    assert parsed["result"]["msg_rate_mpps"] == round(24056.72 * 1048576 / 65536 / 1e6, 6)


def test_latency_is_divided_by_the_factor(lab):
    _server, client = pair(lab, "n3", "n1", tool="ib_write_lat", args=("-s", "2"))
    parsed = parser.parse(client, tool="ib_write_lat")
    assert parsed["result"]["t_typical_us"] == round(23.95 / 0.8, 2)
    assert parsed["kind"] == "lat" and parsed["link_type"] == "Ethernet"


def test_no_device_and_no_server_are_the_real_outputs(lab):
    res = subprocess.run([lab["nodev"]["zhisuan_tools"]["ib_write_bw"], "-p", "18515"], capture_output=True, timeout=30)
    assert (res.returncode, res.stdout) == (1, b"")
    assert res.stderr == (FIXTURES / "ib_write_bw-no-device-4.5-debian12.err").read_bytes()
    port = free_port()
    res = subprocess.run([lab["n1"]["zhisuan_tools"]["ib_write_bw"], "-p", str(port), "127.0.0.1"],
                         capture_output=True, timeout=30)
    assert res.returncode == 1
    assert res.stderr.decode() == (FIXTURES / "ib_write_bw-rxe-no-server.err").read_text().replace(
        "127.0.0.1:18600", "127.0.0.1:%d" % port)
    assert parser.error_of(res.stderr.decode())[0] == "connect"


def test_unsupported_arguments(lab):
    res = subprocess.run([lab["n1"]["zhisuan_tools"]["ib_write_bw"], "--bogus"], capture_output=True, timeout=30)
    assert res.returncode == 2
    assert res.stderr.decode().startswith("lab ib_write_bw: unsupported arguments: --bogus")


def test_fault_factor_is_checked_at_up(tmp_path):
    scenario = tmp_path / "bad.yml"
    scenario.write_text(yaml.safe_dump({"nodes": {"n1": {"faults": [{"kind": "rdma_slow_node", "factor": 1.5}]}}}))
    res = labctl("up", "--scenario", scenario, "--dir", tmp_path / "run", "--inventory", tmp_path / "hosts.yml")
    assert res.returncode != 0
    assert "faults[0]: fault 'rdma_slow_node' 'factor' must be in (0, 1], got 1.5" in res.stderr
    assert not os.path.exists(tmp_path / "hosts.yml")
