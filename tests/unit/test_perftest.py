# SPDX-License-Identifier: GPL-3.0-or-later
"""perftest parser on real captures: HDR InfiniBand (MB/sec, server+client), soft-RoCE (Gb/sec, GID lines, 2 QPs,
duration mode, read bw/lat), and the real error outputs (no device, bad device name, no server)."""

from __future__ import annotations

import os

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError, ToolFailed
from ansible_collections.zhisuan.ops.plugins.module_utils._net import perftest

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "perftest")


def read(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        return handle.read()


def parse(name, tool="ib_write_bw"):
    warnings = []
    return perftest.parse(read(name), tool=tool, warn=warnings.append), warnings


def test_hdr_ib_server_and_client_mb_per_sec():
    parsed, warnings = parse("ib_write_bw-loopback-server+client-8M-hdr.log")
    assert warnings == []
    assert (parsed["test"], parsed["kind"], parsed["unit"], parsed["device"], parsed["qps"]) == (
        "RDMA_Write BW Test", "bw", "MB/sec", "ib0", 1)
    assert (parsed["link_type"], parsed["mtu"], parsed["connection"], parsed["transport"]) == ("IB", 4096, "RC", "IB")
    assert parsed["waited_for_client"] is True
    assert parsed["rows"] == [{"bytes": 8388608, "iterations": 20000, "bw_peak": 24056.74, "bw_average": 24056.72,
                               "msg_rate_mpps": 0.003007}] * 2
    # perftest's MB/sec is 2^20 bytes/s: 24056.72 * 1048576 * 8 / 1e9
    assert parsed["result"]["bw_average_gbps"] == 201.802
    assert parsed["local"][0] == {"lid": "0xd06", "qpn": "0x095f", "psn": "0x3c9e82", "rkey": "0x080359",
                                  "vaddr": "0x007f9fc479c000"}
    assert parsed["remote"][0]["qpn"] == "0x095e"


def test_all_sizes_interleaved_judges_the_largest_message():
    parsed, warnings = parse("ib_write_bw-loopback-all-sizes-interleaved.log")
    assert warnings == []
    assert len(parsed["rows"]) == 24
    assert [row["bytes"] for row in parsed["rows"][:3]] == [2, 4, 8]
    assert parsed["result"]["bytes"] == 8388608
    assert parsed["result"]["bw_average"] == 23240.68
    assert parsed["settings"]["cq_moderation"] == "100"


def test_soft_roce_gbits_with_gid_lines():
    parsed, warnings = parse("ib_write_bw-rxe-gbits-client.txt")
    assert warnings == []
    assert (parsed["unit"], parsed["link_type"], parsed["device"]) == ("Gb/sec", "Ethernet", "rxe0")
    assert parsed["settings"]["gid_index"] == "1"
    assert parsed["local"][0]["gid"] == "00:00:00:00:00:00:00:00:00:00:255:255:127:00:00:01"
    assert parsed["local"][0]["lid"] == "0000"
    assert parsed["result"] == {"bytes": 65536, "iterations": 50, "bw_peak": 0.29, "bw_average": 0.1,
                                "msg_rate_mpps": 0.000193, "bw_peak_gbps": 0.29, "bw_average_gbps": 0.1}
    assert parsed["waited_for_client"] is False
    server, _ = parse("ib_write_bw-rxe-gbits-server.txt")
    assert server["waited_for_client"] is True
    assert server["local"][0]["qpn"] == parsed["remote"][0]["qpn"] == "0x0013"


def test_soft_roce_mb_per_sec_and_two_qps_and_duration():
    mbsec, _ = parse("ib_write_bw-rxe-mbsec-client.txt")
    assert mbsec["result"]["bw_average_gbps"] == round(5.18 * 1048576 * 8 / 1e9, 3)
    two, _ = parse("ib_write_bw-rxe-2qp-client.txt")
    assert two["qps"] == 2 and len(two["local"]) == 2 and len(two["remote"]) == 2
    duration, _ = parse("ib_write_bw-rxe-duration-client.txt")
    assert duration["result"]["bw_peak"] == 0.0 and duration["result"]["bw_average_gbps"] == 0.033478


def test_read_bw_and_read_latency():
    read_bw, _ = parse("ib_read_bw-rxe-server.txt", tool="ib_read_bw")
    assert (read_bw["test"], read_bw["result"]["bw_average_gbps"]) == ("RDMA_Read BW Test", 0.15)
    lat, warnings = parse("ib_read_lat-rxe-client.txt", tool="ib_read_lat")
    assert warnings == []
    assert (lat["kind"], lat["unit"], lat["test"]) == ("lat", "usec", "RDMA_Read Latency Test")
    assert lat["result"] == {"bytes": 2, "iterations": 100, "t_min_us": 53.23, "t_max_us": 8600.63,
                             "t_typical_us": 67.67, "t_avg_us": 135.84, "t_stdev_us": 528.01, "p99_us": 8600.63,
                             "p999_us": 8600.63}


def test_latency_of_inf_is_unreadable():
    # real: soft-RoCE under an emulated CPU, perftest could not calibrate its clock ("Correlation coefficient")
    warnings = []
    with pytest.raises(ParseError) as info:
        perftest.parse(read("ib_write_lat-rxe-inf-client.txt"), tool="ib_write_lat", warn=warnings.append)
    assert info.value.message == ("ib_write_lat: perftest printed inf/nan instead of measurements (it could not "
                                  "calibrate the CPU clock: look for its 'Correlation coefficient' warning)")
    assert warnings == []
    with pytest.raises(ParseError) as info:
        perftest.parse(read("ib_read_lat-rxe-client.txt").replace(" 2       100", " 2 1 2", 1), tool="ib_read_lat")
    assert info.value.message == "ib_read_lat: the result table has no rows"


def test_write_latency_soft_roce():
    lat, warnings = parse("ib_write_lat-rxe-client.txt", tool="ib_write_lat")
    assert warnings == []
    assert (lat["test"], lat["result"]["t_typical_us"], lat["result"]["p999_us"]) == ("RDMA_Write Latency Test", 23.95, 29844.38)


@pytest.mark.parametrize("name, kind, message", [
    ("ib_write_bw-no-device-4.5-debian12.err", "no_device",
     "ib_write_bw: no RDMA device found (perftest: 'Did not detect devices'); check that the HCA is present and its driver is loaded"),
    ("ib_write_bw-rxe-bad-device.err", "no_device",
     "ib_write_bw: RDMA device mlx5_9 not found on this node; check the device name (ibv_devices lists them)"),
    ("ib_write_bw-rxe-no-server.err", "connect",
     "ib_write_bw: could not connect to the server at 127.0.0.1:18600 (no server listening yet, a firewall, or the wrong address)"),
])
def test_real_error_outputs_are_tool_failures(name, kind, message):
    with pytest.raises(ToolFailed) as info:
        perftest.parse(read(name))
    assert info.value.message == message
    assert info.value.perftest_error == kind
    assert perftest.error_of(read(name))[0] == kind


def test_edited_completion_error_and_unknown_unit():
    text = read("ib_write_bw-rxe-gbits-client.txt")
    edited = text.replace(" #bytes     #iterations", " Completion with error at client\n #bytes     #iterations")
    with pytest.raises(ToolFailed) as info:
        perftest.parse(edited)
    assert info.value.message == ("ib_write_bw: an RDMA operation completed with an error at the client "
                                  "(transport retries exceeded: a link or path problem)")
    with pytest.raises(ParseError) as info:
        perftest.parse(text.replace("[Gb/sec]", "[KB/sec]"))
    assert info.value.message == "ib_write_bw: unknown bandwidth unit 'KB/sec' (perftest prints MB/sec or Gb/sec)"


def test_output_without_a_table():
    with pytest.raises(ParseError) as info:
        perftest.parse(read("ib_write_bw-rxe-gbits-client.txt").split(" #bytes")[0])
    assert info.value.message == "ib_write_bw: no result table (no '#bytes' column header) in the output"
    with pytest.raises(ParseError):
        perftest.parse("")


def test_unknown_column_is_kept_with_a_warning():
    text = read("ib_write_bw-rxe-gbits-client.txt").replace("MsgRate[Mpps]", "Rate[Kpps]")
    warnings = []
    parsed = perftest.parse(text, warn=warnings.append)
    assert parsed["result"]["rate"] == 0.000193
    assert warnings == ["perftest: unknown result column 'Rate[Kpps]' kept as 'rate'; please report"]
