# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Issue 12, the named cases: damaged copies of real captures (edits of tests/fixtures, never invented formats) that
once raised a Python exception or were judged healthy, and what they give now."""

from __future__ import annotations

import json
import os

import pytest

from fuzzing import fixture_text

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._ipmi import argv as ipmi_argv
from ansible_collections.zhisuan.ops.plugins.module_utils._ipmi import collect as ipmi_collect
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._rdma import judge_rdma_ports
from ansible_collections.zhisuan.ops.plugins.module_utils._judge.net import judge_nic
from ansible_collections.zhisuan.ops.plugins.module_utils._judge.storage import judge_storage
from ansible_collections.zhisuan.ops.plugins.module_utils._net import ethtool, ib, iplink, lldp, perftest, qos
from ansible_collections.zhisuan.ops.plugins.module_utils._storage import fio


def _links():
    return json.loads(fixture_text("ip/ip-j-link-veth-netns.json"))


def test_ip_link_flags_and_ifname_of_another_type():
    data = _links()
    data[1]["flags"] = 7                 # an int where ip prints a list
    data[2]["ifname"] = ["eth1"]         # a list where ip prints a string
    data[0]["mtu"] = 1e308
    warnings = []
    links = iplink.parse_links(json.dumps(data), warn=warnings.append)
    assert sorted(links) == ["eth0", "lo"]
    assert links["eth0"]["flags"] == [] and links["eth0"]["admin_up"] is False and links["eth0"]["carrier"] is False
    assert links["lo"]["mtu"] is None
    assert warnings == ["ip -j link: an entry without a readable 'ifname' was skipped: %s" % repr(data[2])[:200]]


@pytest.mark.parametrize("text,message", [
    ("[]", "ip: ip -j link listed no interface (not even the loopback)"),
    ("", "ip: ip -j link did not print JSON: empty output (read 0 lines)"),
    ('[{"ifname": "lo", "mtu": NaN}]', "ip: ip -j link did not print JSON: NaN is not a number JSON allows"),
    ("[" * 100 + "]" * 100, "ip: ip -j link did not print JSON: nested deeper than 64 levels"),
    ("[" * 100000 + "]" * 100000, "ip: ip -j link did not print JSON: nested too deeply"),
    ('[{"ifname": 1}]', "ip: ip -j link listed 1 entries and none has a readable 'ifname'"),
])
def test_ip_link_empty_nan_deep(text, message):
    with pytest.raises(ParseError) as info:
        iplink.parse_links(text)
    assert info.value.message == message


def test_lldp_json_shapes_of_another_type():
    doc = json.loads(fixture_text("lldp/lldpctl-json-1if.json"))
    body = doc["lldp"]["interface"]["eth0"]
    body["port"]["descr"] = {"value": 5}
    body["port"]["ttl"] = "four"
    body["chassis"]["leaf01"]["mgmt-ip"] = [None, "10.77.0.2", {"value": "fe80::1"}]
    neighbors = lldp.first_neighbors(lldp.parse_neighbors(json.dumps(doc)))
    item = neighbors["eth0"]
    # the port description is unreadable, so the switch port falls back to the port id (a MAC, as lldpd sends it)
    assert (item["switch"], item["port_descr"], item["switch_port"]) == ("leaf01", None, body["port"]["id"]["value"])
    assert item["ttl"] is None and item["mgmt_ip"] == ["10.77.0.2", "fe80::1"]


def test_ethtool_module_numbers_that_are_not_numbers():
    """``1.2.3`` matched by ``[\\d.]+`` used to reach float(); Unicode digits and huge values used to pass."""
    text = fixture_text("ethtool/ethtool-m-i40e-sfp-10g-sr-dom.txt")
    power = [line for line in text.splitlines() if line.strip().startswith("Receiver signal average optical power")][0]
    edited = text.replace(power, power.split(":")[0] + ": 1.2.3 mW / -inf dBm")
    optics = ethtool.parse_module(edited)
    assert optics["rx_power_mw"] is None and optics["rx_power_dbm"] is None
    settings = ethtool.parse_settings(fixture_text("ethtool/ethtool-bnxt-10g-settings.txt").replace(
        "10000Mb/s", "\u0661\u0660\u0660\u0660\u0660Mb/s"))
    assert settings["speed_mbps"] is None


def test_ethtool_stats_without_counters_is_an_error():
    with pytest.raises(ParseError) as info:
        ethtool.parse_stats("NIC statistics:\n")
    assert info.value.message == ("ethtool: the ethtool -S output has no readable counter (read 0 lines after "
                                  "'NIC statistics:')")


def test_ibstat_rate_too_large_is_unreadable_not_infinite():
    real = fixture_text("rdma/ibstat-h100-node-8x-ndr400-all-active.txt")

    def rates(text):
        return [port["rate_gbps"] for device in ib.parse_ibstat(text)["devices"].values()
                for port in device["ports"].values()]
    assert rates(real.replace("Rate: 400", "Rate: " + "9" * 400, 1)) == [None] + rates(real)[1:]
    assert rates(real)[:2] == [400.0, 400.0]


def test_mlnx_qos_unicode_digit_is_not_a_cable_length():
    text = fixture_text("qos/mlnx_qos-i-eth4-trust-dscp-pfc3.txt")
    line = [item for item in text.splitlines() if item.strip().startswith("Cable len:")][0]
    facts = qos.parse_mlnx_qos(text.replace(line, "Cable len: \u00b2"))
    assert facts["cable_len"] is None and facts["trust"] == "dscp"


def test_perftest_cell_1_2_3_and_1e999_rows_are_skipped():
    text = fixture_text("perftest/ib_write_bw-rxe-mbsec-client.txt")
    row = [line for line in text.splitlines() if line.strip() and line.split()[0] == "65536"][-1]
    cells = row.split()
    damaged = text.replace(row, row.replace(cells[3], "1.2.3", 1))
    warnings = []
    with pytest.raises(ParseError) as info:
        perftest.parse(damaged, warn=warnings.append)
    assert info.value.message == "ib_write_bw: the result table has no rows"
    assert any("unreadable or negative" in item for item in warnings)


def test_judge_never_passes_an_absurd_speed_or_a_nan_rate():
    settings = ethtool.parse_settings(fixture_text("ethtool/ethtool-bnxt-10g-settings.txt"))
    nic = {"present": True, "bus_info": "0000:01:00.0", "errors": {}, "mtu": 1500, "link": True,
           "speed_mbps": 1e30, "duplex": settings["duplex"], "port": settings["port"]}
    checks = judge_nic("node01", {"interfaces": {"eth0": nic}}, {"speed_mbps": 10000, "mtu": 1500})
    speed = [check for check in checks if check["id"] == "nic.link.speed"][0]
    assert speed["status"] == "error" and "1e+30" in speed["message"]
    facts = dict(ib.parse_ibstat(fixture_text("rdma/ibstat-h100-node-8x-ndr400-all-active.txt")), error=None)
    facts["devices"]["mlx5_0"]["ports"][1]["rate_gbps"] = float("nan")
    rate = [check for check in judge_rdma_ports("node01", facts, {"rate_gbps": 400})
            if check["id"] == "rdma.port.rate" and check["component"] == "mlx5_0 port 1"][0]
    assert rate["status"] == "error"


def test_storage_judge_never_passes_an_unreadable_iops():
    facts = fio.parse_json(fixture_text("fio/fio-3.33-tmp-libaio-seqread-randwrite.json"))
    facts["jobs"]["seq_read"]["iops"] = float("inf")
    checks = dict((check["id"], check) for check in judge_storage("node01", facts, {}))
    assert checks["storage.seq_read.iops"]["status"] == "error"
    assert checks["storage.seq_read.bandwidth"]["status"] == "pass"


def _ipmitool(directory, sel_out, sel_err):
    """An ipmitool in ``directory`` that prints the ipmi-sim captures, and ``sel elist`` as given."""
    fixtures = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "ipmitool")
    answers = (("mc info", "ipmi-sim-mc-info.txt"), ("chassis status", "ipmi-sim-chassis-status-on.txt"),
               ("fru print", "ipmi-sim-fru-print.txt"), ("sensor", "ipmi-sim-sensor-healthy.txt"),
               ("sdr elist", "ipmi-sim-sdr-elist-healthy.txt"))
    lines = ["#!/bin/sh", 'case " $* " in',
             '  *" sel elist "*) printf "%%s" "%s"; printf "%%s" "%s" >&2 ;;' % (sel_out, sel_err)]
    lines += ['  *" %s "*) cat "%s" ;;' % (words, os.path.abspath(os.path.join(fixtures, name))) for words, name in answers]
    lines.append("esac")
    path = os.path.join(str(directory), "ipmitool")
    with open(path, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    os.chmod(path, 0o755)
    return ipmi_argv.Connection("127.0.0.1", username="admin", password="pw", program=path, timeout=10)


def test_empty_sel_elist_stdout_is_not_an_empty_sel(tmp_path):
    """Issue 12, through the real runner: ``sel elist`` printing nothing is an error for the SEL (log null)."""
    result = ipmi_collect.collect(_ipmitool(tmp_path, "", ""))
    assert result["log"] is None
    assert result["bmc"]["errors"] == [{
        "resource": "ipmitool sel elist",
        "error": "ipmitool: `ipmitool sel elist` printed nothing (read 0 lines) and not the 'SEL has no entries' it "
                 "prints for an empty SEL: the SEL was not read"}]


def test_sel_has_no_entries_on_stderr_is_an_empty_sel(tmp_path):
    """ipmitool 1.8.x prints "SEL has no entries" through its error log (stderr), rc 0: an empty SEL."""
    result = ipmi_collect.collect(_ipmitool(tmp_path, "", "SEL has no entries\\n"))
    assert result["log"] == [] and result["bmc"]["errors"] == []
