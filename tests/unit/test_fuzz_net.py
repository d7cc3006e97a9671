# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Property-based damage of the real network, RDMA, storage, IPMI and Slurm captures (issue 12).

Every parser of those tools gets hypothesis's damaged copies of each of its real fixtures and must be total: facts
or the project's typed error, never another exception, never a hang, never a NaN/inf in the facts. Parse -> judge
must not raise either and must not judge an empty or garbage output healthy.
"""

from __future__ import annotations

import os
import tempfile

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from fuzzing import (
    EXAMPLES, FUZZ, CollectModule, assert_not_all_pass, assert_total, capped, fixture_text, json_mutations,
    json_text_mutations, text_mutations,
)

from ansible_collections.zhisuan.ops.plugins.module_utils._ipmi import argv as ipmi_argv
from ansible_collections.zhisuan.ops.plugins.module_utils._ipmi import collect as ipmi_collect
from ansible_collections.zhisuan.ops.plugins.module_utils._ipmi import facts as ipmi_facts
from ansible_collections.zhisuan.ops.plugins.module_utils._ipmi import parse as ipmi
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import baseline as baseline_judge
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import rdma_pairs as rdma_pairs_judge
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._cabling import cabling_map, judge_cabling
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._fabric import judge_fabric_consistency
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._ib_cabling import ib_cabling_map, judge_ib_cabling
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._rdma import judge_rdma_ports
from ansible_collections.zhisuan.ops.plugins.module_utils._judge.net import judge_nic
from ansible_collections.zhisuan.ops.plugins.module_utils._judge.storage import judge_storage
from ansible_collections.zhisuan.ops.plugins.module_utils._net import collect as net_collect
from ansible_collections.zhisuan.ops.plugins.module_utils._net import ecn, iblinkinfo
from ansible_collections.zhisuan.ops.plugins.module_utils._net import ethtool, ib, iplink, linkflap, lldp, pair_run, perftest, qos
from ansible_collections.zhisuan.ops.plugins.module_utils._sched import slurm
from ansible_collections.zhisuan.ops.plugins.module_utils._storage import collect as fio_collect
from ansible_collections.zhisuan.ops.plugins.module_utils._storage import fio

pytestmark = pytest.mark.fuzz

ETHTOOL_SETTINGS = ("ethtool/ethtool-bnxt-10g-settings.txt", "ethtool/ethtool-eth0-e1000e-1G-settings.txt",
                    "ethtool/ethtool-veth-eth0-settings.txt", "ethtool/ethtool-veth-eth1-nocarrier-settings.txt")
ETHTOOL_DRIVER = ("ethtool/ethtool-i-bnxt_en.txt", "ethtool/ethtool-i-eth0-e1000e.txt", "ethtool/ethtool-i-veth-eth0.txt")
ETHTOOL_STATS = ("ethtool/ethtool-S-bnxt_en.txt", "ethtool/ethtool-S-i40e.txt", "ethtool/ethtool-S-veth-eth0.txt")
ETHTOOL_MODULE = ("ethtool/ethtool-m-i40e-sfp-10g-sr-dom.txt",)
IP_LINK = ("ip/ip-j-link-veth-netns.json", "ip/ip-j-link-veth-nocarrier.json")
LLDP = ("lldp/lldpcli-json-show-neighbors-1if.json", "lldp/lldpcli-json-show-neighbors-2if-portid-ifname.json",
        "lldp/lldpcli-json-show-neighbors-2if-renamed-swp7.json", "lldp/lldpcli-json-show-neighbors-2if.json",
        "lldp/lldpcli-json-show-neighbors-none.json", "lldp/lldpctl-json-1if.json", "lldp/lldpctl-json-2if.json")
IBSTAT = ("rdma/ibstat-a100-azure-ibpanic-missing-mlx5_8.txt", "rdma/ibstat-h100-node-8x-ndr400-all-active.txt")
IBSTATUS = ("rdma/ibstatus-a100-all-active.txt",)
PERFTEST = ("perftest/ib_read_bw-rxe-server.txt", "perftest/ib_read_lat-rxe-client.txt",
            "perftest/ib_write_bw-loopback-all-sizes-interleaved.log",
            "perftest/ib_write_bw-loopback-server+client-8M-hdr.log", "perftest/ib_write_bw-rxe-2qp-client.txt",
            "perftest/ib_write_bw-rxe-gbits-client.txt", "perftest/ib_write_bw-rxe-mbsec-client.txt",
            "perftest/ib_write_lat-rxe-client.txt", "perftest/ib_write_lat-rxe-inf-client.txt")
QOS = ("qos/mlnx_qos-i-eth4-trust-dscp-pfc3.txt",)
IBLINKINFO = ("ib/iblinkinfo-edr-sb7700-2ca-1switch.txt",)
ECN_REPORT = ("qos/rdma-qos-q-eth0-mlx5_0-ecn-all-prios.txt",)
IB_PLAN = {"links": [{"node": "n01", "port": "HCA-1/1", "switch": "leaf01", "switch_port": 18},
                     {"node": "n02", "port": "HCA-1/1", "switch": "leaf01", "switch_port": 17}],
           "switches": {"leaf01": {"guid": "0x506b4b0300820910"}}}
KERNEL_LOG = ("kernel-log/syslog-ib-link-flap-ib6.txt",)
FIO = ("fio/fio-3.16-nvme-randrw-libaio.json", "fio/fio-3.33-tmp-libaio-seqread-randwrite.json",
       "fio/fio-readwrite.json", "fio/fio-2.1.11-storperf-random-read-4jobs.json")
FIO_TEXT = ("fio/fio-3.33-dev-full-enospc.stdout",)
IPMI_SENSOR = ("ipmitool/ipmi-sim-sensor-faults.txt", "ipmitool/ipmi-sim-sensor-healthy.txt",
               "ipmitool/sensor-hpe-proliant-ilo-discrete-and-thresholds.txt", "ipmitool/sensor-supermicro-style-ok.txt")
IPMI_SDR = ("ipmitool/ipmi-sim-sdr-elist-faults.txt", "ipmitool/ipmi-sim-sdr-elist-healthy.txt")
IPMI_SEL = ("ipmitool/ipmi-sim-sel-elist-faults.txt", "ipmitool/ipmi-sim-sel-elist-log-cleared.txt",
            "ipmitool/sel-elist-acpi-power-states-long.txt", "ipmitool/sel-elist-chassis-intrusion.txt")
SCONTROL = ("slurm/scontrol-o-show-node-down.txt", "slurm/scontrol-o-show-node-drained-operator.txt",
            "slurm/scontrol-o-show-node-drained.txt", "slurm/scontrol-o-show-node-draining.txt",
            "slurm/scontrol-o-show-node-idle.txt", "slurm/scontrol-o-show-node-resumed-not-responding.txt")
SINFO_JSON = ("slurm/sinfo-json-mixed-states.json", "slurm/sinfo-json-23.02.5-dataparser-v0.0.39.json")


def _damaged(paths, strategy=text_mutations):
    """One damaged copy of one of ``paths`` (hypothesis picks the fixture, then the damage)."""
    return st.sampled_from(paths).flatmap(lambda path: strategy(fixture_text(path)))


def _nic_facts(settings=None, driver=None, optics=None, link=None, stats=None):
    """net facts of one interface as collect_net_facts builds them from parsed outputs."""
    link = link or {}
    nic = {"present": True, "bus_info": (driver or {}).get("bus_info") or "0000:01:00.0", "errors": {},
           "speed_mbps": None, "duplex": None, "link": None, "port": None, "mtu": link.get("mtu"),
           "operstate": link.get("operstate"), "admin_up": link.get("admin_up"), "carrier": link.get("carrier"),
           "optics": optics, "optics_reason": None if optics else "no module", "counters_delta": stats}
    if settings is None:
        nic["errors"]["settings"] = "ethtool: unreadable"
    else:
        nic.update((key, settings[key]) for key in ("speed_mbps", "duplex", "link", "port"))
    return {"interfaces": {"eth0": nic}, "link_flaps": None, "link_flaps_error": None, "counter_window": 5}


def _judge_nic(nic_facts):
    checks = judge_nic("node01", nic_facts, expected={"speed_mbps": 10000, "mtu": 9000, "interfaces": ["eth0"]})
    assert checks
    return checks


@FUZZ
@given(_damaged(ETHTOOL_SETTINGS))
def test_ethtool_settings_is_total_and_judged(text):
    settings, error = assert_total("ethtool.parse_settings", ethtool.parse_settings, text)
    checks, _ = assert_total("judge_nic", _judge_nic, _nic_facts(settings=settings), allowed=())
    if error is not None:
        link = [check for check in checks if check["id"] == "nic.link.state"][0]
        assert link["status"] == "error", link


@FUZZ
@given(_damaged(ETHTOOL_DRIVER))
def test_ethtool_driver_is_total(text):
    assert_total("ethtool.parse_driver", ethtool.parse_driver, text)


@FUZZ
@given(_damaged(ETHTOOL_STATS), _damaged(ETHTOOL_STATS))
def test_ethtool_stats_and_deltas_are_total(before_text, after_text):
    before, _ = assert_total("ethtool.parse_stats", ethtool.parse_stats, before_text)
    after, _ = assert_total("ethtool.parse_stats", ethtool.parse_stats, after_text)
    if before is not None and after is not None:
        delta, _ = assert_total("ethtool.counter_deltas", ethtool.counter_deltas, before, after, 5, allowed=())
        assert_total("judge_nic", _judge_nic, _nic_facts(settings={"speed_mbps": 10000, "duplex": "full",
                                                                   "link": True, "port": "FIBRE"}, stats=delta),
                     allowed=())


@FUZZ
@given(_damaged(ETHTOOL_MODULE))
def test_ethtool_module_is_total_and_judged(text):
    optics, _ = assert_total("ethtool.parse_module", ethtool.parse_module, text)
    if optics is not None:
        optics["implausible"] = assert_total("ethtool.implausible", ethtool.implausible, optics, True, allowed=())[0]
        assert_total("judge_nic", _judge_nic, _nic_facts(settings={"speed_mbps": 10000, "duplex": "full",
                                                                   "link": True, "port": "FIBRE"}, optics=optics),
                     allowed=())


@FUZZ
@given(_damaged(IP_LINK, json_text_mutations))
def test_ip_link_is_total(text):
    links, _ = assert_total("iplink.parse_links", iplink.parse_links, text)
    for name, link in (links or {}).items():
        assert isinstance(name, str) and isinstance(link["flags"], list)
        assert all(isinstance(flag, str) for flag in link["flags"])
        assert link["mtu"] is None or (isinstance(link["mtu"], int) and link["mtu"] > 0)
        assert_total("iplink.is_loopback", iplink.is_loopback, link, allowed=())
        assert_total("judge_nic", _judge_nic, _nic_facts(link=link), allowed=())


@FUZZ
@given(_damaged(LLDP, json_text_mutations))
def test_lldp_is_total(text):
    neighbors, _ = assert_total("lldp.parse_neighbors", lldp.parse_neighbors, text)
    if neighbors is not None:
        summary, _ = assert_total("lldp.first_neighbors", lldp.first_neighbors, neighbors, allowed=())
        for item in summary.values():
            for key in ("switch", "switch_port", "chassis_id", "port_id", "port_descr"):
                assert item[key] is None or isinstance(item[key], str), (key, item[key])


def _rdma_checks(facts):
    return judge_rdma_ports("node01", dict(facts, source="ibstat", error=None),
                            expected={"devices": 8, "rate_gbps": 400})


@FUZZ
@given(_damaged(IBSTAT))
def test_ibstat_is_total_and_judged(text):
    facts, _ = assert_total("ib.parse_ibstat", ib.parse_ibstat, text)
    if facts is not None:
        checks, _ = assert_total("judge_rdma_ports", _rdma_checks, facts, allowed=())
        if not facts["devices"]:
            assert_not_all_pass("judge_rdma_ports", checks)


@FUZZ
@given(_damaged(IBSTATUS))
def test_ibstatus_is_total_and_judged(text):
    facts, _ = assert_total("ib.parse_ibstatus", ib.parse_ibstatus, text)
    if facts is not None:
        checks, _ = assert_total("judge_rdma_ports", _rdma_checks, facts, allowed=())
        if not facts["devices"]:
            assert_not_all_pass("judge_rdma_ports", checks)


@FUZZ
@given(_damaged(PERFTEST))
def test_perftest_is_total(text):
    parsed, _ = assert_total("perftest.parse", perftest.parse, text, "ib_write_bw")
    if parsed is not None:
        for key, value in parsed["result"].items():
            if key.endswith(("_gbps", "_us")) or key.startswith("bw_"):
                assert value is None or value >= 0, (key, value)


@FUZZ
@given(_damaged(QOS))
def test_mlnx_qos_is_total(text):
    assert_total("qos.parse_mlnx_qos", qos.parse_mlnx_qos, text)


@FUZZ
@given(_damaged(IBLINKINFO))
def test_iblinkinfo_is_total_and_judged(text):
    view, _ = assert_total("iblinkinfo.fabric_facts", iblinkinfo.fabric_facts, text)
    if view is None:
        return
    view["error"] = None
    checks, _ = assert_total("judge_ib_cabling", judge_ib_cabling, view, IB_PLAN, allowed=(), finite=False)
    assert_total("ib_cabling_map", ib_cabling_map, view, IB_PLAN, allowed=(), finite=False)
    if not view["links"]:
        assert_not_all_pass("judge_ib_cabling", [check for host in checks.values() for check in host])


@FUZZ
@given(_damaged(ECN_REPORT))
def test_ecn_sysfs_from_damaged_report_is_total_and_judged(text):
    import re
    with tempfile.TemporaryDirectory() as root:
        for path, value in re.findall(r"(/sys/class/net/eth0/ecn/[a-z_]{1,12}(?:/enable/[0-7])?) = (\S{0,20})", text):
            target = os.path.join(root, path.lstrip("/"))
            try:  # a damaged path may put a file where a folder is: the layout is the test's, not the reader's
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with open(target, "w") as handle:
                    handle.write(value)
            except OSError:
                continue
        facts, _ = assert_total("ecn.read_ecn", ecn.read_ecn, root, "eth0", allowed=())
    hosts = dict((name, {"interfaces": {"eth0": {"mtu": 9000, "ecn": facts}}}) for name in ("node01", "node02"))
    assert_total("judge_fabric_consistency", judge_fabric_consistency, hosts, {"fabric": {"ecn_priorities": [3]}},
                 allowed=(), finite=False)


@FUZZ
@given(st.text(max_size=12))
def test_ecn_enable_file_is_total(text):
    value, _ = assert_total("ecn.parse_enable", ecn.parse_enable, text)
    assert value is None or value == (text.strip() == "1")


@FUZZ
@given(_damaged(KERNEL_LOG))
def test_link_flap_events_are_total(text):
    events, _ = assert_total("linkflap.parse_events", linkflap.parse_events, text)
    assert_total("linkflap.count_flaps", linkflap.count_flaps, events, allowed=())


def _storage_checks(facts):
    return judge_storage("node01", facts, thresholds={"read_bw_mib_min": 100, "iops_min": 1000})


@FUZZ
@given(_damaged(FIO, json_text_mutations) | _damaged(FIO_TEXT))
def test_fio_is_total_and_judged(text):
    facts, _ = assert_total("fio.parse_json", fio.parse_json, text)
    if facts is not None:
        for job in facts["jobs"].values():
            assert job["bw_mib"] >= 0 and job["iops"] >= 0
            for value in job["lat_us"].values():
                assert value is None or value >= 0
        assert_total("judge_storage", _storage_checks, facts, allowed=())


@FUZZ
@given(_damaged(IPMI_SENSOR))
def test_ipmi_sensor_is_total(text):
    sensors, _ = assert_total("ipmi.parse_sensor", ipmi.parse_sensor, text)
    if sensors is not None:
        assert_total("ipmi.sensor_facts", ipmi_facts.sensor_facts, sensors, allowed=())


@FUZZ
@given(_damaged(IPMI_SDR))
def test_ipmi_sdr_is_total(text):
    sdr, _ = assert_total("ipmi.parse_sdr_elist", ipmi.parse_sdr_elist, text)
    if sdr is not None:
        assert_total("ipmi.psu_facts", ipmi_facts.psu_facts, sdr, allowed=())


@FUZZ
@given(_damaged(IPMI_SEL))
def test_ipmi_sel_is_total(text):
    records, _ = assert_total("ipmi.parse_sel_elist", ipmi.parse_sel_elist, text, utc=True)
    if records is not None:
        assert_total("ipmi.log", ipmi_facts.log, records, allowed=())


@FUZZ
@given(_damaged(("ipmitool/ipmi-sim-mc-info.txt",)), _damaged(("ipmitool/ipmi-sim-chassis-status-on.txt",
                                                               "ipmitool/ipmi-sim-chassis-status-off.txt")),
       _damaged(("ipmitool/ipmi-sim-fru-print.txt",)))
def test_ipmi_mc_chassis_fru_are_total_and_build(mc_text, chassis_text, fru_text):
    mc, _ = assert_total("ipmi.parse_mc_info", ipmi.parse_mc_info, mc_text)
    chassis, _ = assert_total("ipmi.parse_chassis_status", ipmi.parse_chassis_status, chassis_text)
    fru, _ = assert_total("ipmi.parse_fru_print", ipmi.parse_fru_print, fru_text)
    if mc is not None:
        assert_total("ipmi.build", ipmi_facts.build, "10.0.0.1", mc, chassis, fru, None, None, [], allowed=())
        assert_total("ipmi.firmware", ipmi_facts.firmware, mc, allowed=())


@FUZZ
@given(_damaged(("ipmitool/ipmi-sim-chassis-power-status-on.txt", "ipmitool/ipmi-sim-chassis-power-status-off.txt")))
def test_ipmi_power_status_is_total(text):
    state, _ = assert_total("ipmi.parse_power_status", ipmi.parse_power_status, text)
    assert state in (None, "on", "off")


@FUZZ
@given(_damaged(SCONTROL))
def test_scontrol_is_total(text):
    nodes, _ = assert_total("slurm.parse_scontrol_nodes", slurm.parse_scontrol_nodes, text)
    for node in nodes or []:
        assert node["cpus_alloc"] is None or node["cpus_alloc"] >= 0


@FUZZ
@given(_damaged(SINFO_JSON, json_text_mutations))
def test_sinfo_json_is_total(text):
    nodes, _ = assert_total("slurm.parse_sinfo_json", slurm.parse_sinfo_json, text)
    for name, node in (nodes or {}).items():
        assert isinstance(name, str) and node["state"]


@FUZZ
@given(_damaged(("slurm/squeue-h-w-node03-running.txt",)))
def test_squeue_count_is_total(text):
    count, _ = assert_total("slurm.count_jobs", slurm.count_jobs, text)
    assert count is None or count >= 0


# ------------------------------------------------------------------------------------------------------------------
# Collect paths: the module's collector runs each tool through the real runner (a real subprocess); the tool is a tiny
# script that prints a real capture, one of them damaged. A handful of examples: each one starts processes.

COLLECT = hypothesis_settings(FUZZ, max_examples=max(3, min(EXAMPLES, 8)))


def _tool(directory, name, cases):
    """An executable ``name`` in ``directory`` printing the text of the first case whose shell pattern matches its
    arguments: ``cases`` is ``[(pattern, stdout, stderr, rc)]``."""
    lines = ["#!/bin/sh", 'case " $* " in']
    for number, (pattern, out, err, rc) in enumerate(cases):
        for stream, text in (("out", out), ("err", err)):
            with open(os.path.join(directory, "%s.%d.%s" % (name, number, stream)), "w") as handle:
                handle.write(text)
        lines.append('  %s) cat "%s/%s.%d.out"; cat "%s/%s.%d.err" >&2; exit %d ;;'
                     % (pattern, directory, name, number, directory, name, number, rc))
    lines.append("esac")
    path = os.path.join(directory, name)
    with open(path, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    os.chmod(path, 0o755)
    return path


NET_OUTPUTS = {
    "ip": ("ip/ip-j-link-veth-netns.json", json_text_mutations),
    "settings": ("ethtool/ethtool-veth-eth0-settings.txt", text_mutations),
    "driver": ("ethtool/ethtool-i-veth-eth0.txt", text_mutations),
    "stats": ("ethtool/ethtool-S-veth-eth0.txt", text_mutations),
    "ibstat": ("rdma/ibstat-h100-node-8x-ndr400-all-active.txt", text_mutations),
    "lldp": ("lldp/lldpctl-json-1if.json", json_text_mutations),
    "log": ("kernel-log/syslog-ib-link-flap-ib6.txt", text_mutations),
}


@st.composite
def _net_outputs(draw):
    """The real outputs of every tool net_info runs, one of them damaged."""
    outputs = dict((key, fixture_text(path)) for key, (path, _strategy) in NET_OUTPUTS.items())
    key = draw(st.sampled_from(sorted(NET_OUTPUTS)))
    outputs[key] = draw(NET_OUTPUTS[key][1](outputs[key]))
    return key, outputs


@COLLECT
@given(_net_outputs())
def test_net_info_collect_path_is_total(damaged):
    key, out = damaged
    with tempfile.TemporaryDirectory() as directory:
        params = {
            "interfaces": ["eth0"], "counter_window": 0, "optics": True, "root": directory, "timeout": 10,
            "ip_path": _tool(directory, "ip", [("*", out["ip"], "", 0)]),
            "ethtool_path": _tool(directory, "ethtool", [
                ('*" -i "*', out["driver"], "", 0), ('*" -S "*', out["stats"], "", 0),
                ('*" -m "*', "", fixture_text("ethtool/ethtool-m-veth-stderr.txt"), 1), ("*", out["settings"], "", 0)]),
            "ib_source": "ibstat", "ibstat_path": _tool(directory, "ibstat", [("*", out["ibstat"], "", 0)]),
            "mlnx_qos_path": None, "lldp_socket": None,
            "lldpctl_path": _tool(directory, "lldpctl", [("*", out["lldp"], "", 0)]),
            "link_flaps": True, "journalctl_path": _tool(directory, "journalctl", [("*", out["log"], "", 0)]),
            "dmesg_path": None, "since": None,
        }
        facts, error = assert_total("net.collect_net_facts", net_collect.collect_net_facts, CollectModule(params))
    if error is not None:
        assert key == "ip", error  # only ip -j link is fatal to net_info; every other failure is kept in the facts
        return
    net = facts["net"]
    checks, _ = assert_total("judge_nic", judge_nic, "node01", net, {"interfaces": ["eth0"], "speed_mbps": 10000},
                             allowed=())
    rdma, _ = assert_total("judge_rdma_ports", judge_rdma_ports, "node01", net["ib"], {"devices": 8}, allowed=())
    if key == "settings" and not out["settings"].strip():
        # empty ethtool output: the link settings are unreadable, an error (ip's carrier may still say link up)
        assert [check["status"] for check in checks if check["id"] == "nic.link.speed"] == ["error"]
    if key == "ibstat" and not net["ib"]["devices"]:
        assert_not_all_pass("judge_rdma_ports", rdma)


@COLLECT
@given(_damaged(FIO, json_text_mutations) | _damaged(FIO_TEXT))
def test_fio_run_collect_path_is_total(text):
    with tempfile.TemporaryDirectory() as directory:
        program = _tool(directory, "fio", [("*", text, "", 0)])
        jobs = [{"name": "seq_read", "rw": "read", "bs": "1M", "runtime": 1}]
        facts, _ = assert_total("fio_collect.run_fio", fio_collect.run_fio, program, jobs, directory=directory,
                                timeout=10)
    if facts is not None:
        checks, _ = assert_total("judge_storage", _storage_checks, facts, allowed=())
        assert checks


IPMI_OUTPUTS = {
    "mc": ("ipmitool/ipmi-sim-mc-info.txt", '*" mc info "*'),
    "chassis": ("ipmitool/ipmi-sim-chassis-status-on.txt", '*" chassis status "*'),
    "fru": ("ipmitool/ipmi-sim-fru-print.txt", '*" fru print "*'),
    "sensor": ("ipmitool/ipmi-sim-sensor-faults.txt", '*" sensor "*'),
    "sdr": ("ipmitool/ipmi-sim-sdr-elist-faults.txt", '*" sdr elist "*'),
    "sel": ("ipmitool/ipmi-sim-sel-elist-faults.txt", '*" sel elist "*'),
}


@st.composite
def _ipmi_outputs(draw):
    outputs = dict((key, fixture_text(path)) for key, (path, _pattern) in IPMI_OUTPUTS.items())
    key = draw(st.sampled_from(sorted(IPMI_OUTPUTS)))
    outputs[key] = draw(text_mutations(outputs[key]))
    return key, outputs


@COLLECT
@given(_ipmi_outputs())
def test_ipmi_info_collect_path_is_total(damaged):
    key, out = damaged
    with tempfile.TemporaryDirectory() as directory:
        program = _tool(directory, "ipmitool", [(pattern, out[name], "", 0) for name, (_path, pattern)
                                                in IPMI_OUTPUTS.items()])
        conn = ipmi_argv.Connection("127.0.0.1", username="admin", password="secret", program=program, timeout=10)
        result, error = assert_total("ipmi_collect.collect", ipmi_collect.collect, conn)
    if error is not None:
        assert key == "mc", error  # mc info is the first call: without it there are no facts
        assert "secret" not in error.message
        return
    assert "secret" not in repr(result)
    if key == "sel" and not out["sel"].strip():
        assert result["log"] is None
        assert [item["resource"] for item in result["bmc"]["errors"]] == ["ipmitool sel elist"]


@COLLECT
@given(_damaged(SCONTROL))
def test_scheduler_node_slurm_read_is_total(text):
    with tempfile.TemporaryDirectory() as directory:
        scontrol = _tool(directory, "scontrol", [("*", text, "", 0)])
        squeue = _tool(directory, "squeue", [("*", fixture_text("slurm/squeue-h-w-node03-running.txt"), "", 0)])
        node, _ = assert_total("slurm.Slurm.read", slurm.Slurm(scontrol, squeue, timeout=10).read, "node03")
    assert node is None or node["name"] == "node03"


@COLLECT
@given(_damaged(PERFTEST))
def test_rdma_pair_server_side_is_total(text):
    with tempfile.TemporaryDirectory() as directory:
        program = _tool(directory, "ib_write_bw", [("*", text, "", 0)])
        side, _ = assert_total("pair_run.run_server", pair_run._side, "server",  # pylint: disable=protected-access
                               lambda: pair_run.run_server(program, "ib_write_bw", ["-F"], 18515, 10), allowed=())
    assert side["status"] in ("ok", "error")
    if side["status"] == "ok":
        assert side["value"] is None or side["value"] >= 0


# ------------------------------------------------------------------------------------------------------------------
# Judges on odd facts: the facts of real captures with values of the wrong type, NaN/inf, huge, negative or missing.
# A judge never raises on them, and a reading it cannot trust is never a pass.

def _real_net_facts():
    settings = ethtool.parse_settings(fixture_text("ethtool/ethtool-bnxt-10g-settings.txt"))
    optics = ethtool.parse_module(fixture_text("ethtool/ethtool-m-i40e-sfp-10g-sr-dom.txt"))
    optics["implausible"] = ethtool.implausible(optics, link=True)
    stats = ethtool.parse_stats(fixture_text("ethtool/ethtool-S-bnxt_en.txt"))
    delta = ethtool.counter_deltas(stats, stats, 5)
    facts = _nic_facts(settings=settings, optics=optics, stats=delta,
                       link=iplink.parse_links(fixture_text("ip/ip-j-link-veth-netns.json"))["eth0"])
    facts["link_flaps"] = linkflap.count_flaps(linkflap.parse_events(fixture_text(KERNEL_LOG[0])))
    facts["ib"] = dict(ib.parse_ibstat(fixture_text(IBSTAT[1])), source="ibstat", error=None)
    return facts


NET_FACTS = _real_net_facts()
NIC_EXPECTED = {"speed_mbps": 10000, "mtu": 1500, "interfaces": ["eth0"]}


def _odd_facts(facts):
    return json_mutations(facts).map(capped)


def _odd(value):
    """A value a judge must not take for a good reading."""
    return value is None or isinstance(value, (bool, str, list, dict)) or value != value or value in (
        float("inf"), float("-inf")) or abs(value) >= 10 ** 15 or value < 0


@FUZZ
@given(_odd_facts(NET_FACTS))
def test_judge_nic_and_rdma_never_raise_on_odd_facts(facts):
    checks, _ = assert_total("judge_nic", judge_nic, "node01", facts, NIC_EXPECTED, allowed=(), finite=False)
    interfaces = facts.get("interfaces") if isinstance(facts, dict) else None
    nic = interfaces.get("eth0") if isinstance(interfaces, dict) else None
    if isinstance(nic, dict) and _odd(nic.get("speed_mbps")):
        assert [check["status"] for check in checks if check["id"] == "nic.link.speed"] != ["pass"]
    if isinstance(facts, dict):
        assert_total("judge_rdma_ports", judge_rdma_ports, "node01", facts.get("ib"), {"hcas": 8, "rate_gbps": 400},
                     allowed=(), finite=False)


STORAGE_FACTS = fio.parse_json(fixture_text("fio/fio-3.33-tmp-libaio-seqread-randwrite.json"))


@FUZZ
@given(_odd_facts(STORAGE_FACTS))
def test_judge_storage_never_raises_on_odd_facts(facts):
    checks, _ = assert_total("judge_storage", _storage_checks, facts, allowed=(), finite=False)
    jobs = facts.get("jobs") if isinstance(facts, dict) else None
    for name, job in (jobs or {}).items() if isinstance(jobs, dict) else ():
        if isinstance(job, dict) and _odd(job.get("iops")):
            assert [check["status"] for check in checks if check["id"] == "storage.%s.iops" % name] != ["pass"]


def _fabric_inputs():
    first = dict(NET_FACTS, gpu_numa={"0000:18:00.0": 0}, lldp=lldp.first_neighbors(lldp.parse_neighbors(
        fixture_text("lldp/lldpctl-json-1if.json"))), lldp_error=None)
    first["interfaces"]["eth0"] = dict(first["interfaces"]["eth0"], numa_node=0,
                                       qos=qos.parse_mlnx_qos(fixture_text(QOS[0])))
    return {"node01": first, "node02": dict(first)}


FABRIC = _fabric_inputs()
CABLING_PLAN = {"links": [{"node": "node01", "port": "eth0", "switch": "leaf01", "switch_port": "swp1"}]}


@FUZZ
@given(_odd_facts(FABRIC))
def test_fabric_and_cabling_judges_never_raise_on_odd_facts(hosts):
    if not isinstance(hosts, dict):
        hosts = {"node01": hosts}
    assert_total("judge_fabric_consistency", judge_fabric_consistency, hosts, {"fabric": {"mtu": 1500}}, allowed=(),
                 finite=False)
    assert_total("cabling_map", cabling_map, hosts, CABLING_PLAN, allowed=(), finite=False)
    for host, facts in hosts.items():
        assert_total("judge_cabling", judge_cabling, host, facts, CABLING_PLAN, allowed=(), finite=False)


PAIRS = [dict(round=1, server="node01", client="node02", status="ok", value=391.2),
         dict(round=1, server="node03", client="node04", status="ok", value=150.5),
         dict(round=2, server="node01", client="node03", status="error", value=None, error_kind="connect"),
         dict(round=2, server="node02", client="node04", status="ok", value=388.0)]


@FUZZ
@given(_odd_facts(PAIRS))
def test_rdma_pairs_analysis_never_raises_on_odd_records(pairs):
    analysis, error = assert_total("rdma_pairs.analyze", rdma_pairs_judge.analyze, pairs, 300, allowed=(ValueError,),
                                   finite=False)
    if error is not None:
        assert "pair record" in str(error) or "not a mapping" in str(error)
        return
    assert_total("rdma_pairs.summarize", rdma_pairs_judge.summarize, analysis, allowed=(), finite=False)
    for pair in analysis["cluster_data"]["fabric"]["rdma_pairs"]["pairs"]:
        if pair["status"] == "pass":
            assert not _odd(pair["value"]) and pair["value"] >= 300


VERSIONS_INPUT = {
    "firmware": [{"id": "BMC", "name": "BMC Firmware", "version": "1.14.2", "component": "bmc", "updateable": None}],
    "gpu_facts": {"driver_version": "535.129.03", "cuda_version": "12.2",
                  "gpus": [{"index": 0, "vbios_version": "96.00.74.00.01"}]},
    "software": {"nvidia_driver": "535.129.03", "ofed": "23.07-0.5.1.2", "nccl": "2.18.3", "kernel": "6.1.0-13-amd64"},
}
BASELINE = {"driver": "535.129.03", "ofed": "regex:^23\\.07", "bmc": "1.14.2", "nccl": ["2.18.3", "2.19.3"]}


@FUZZ
@given(_odd_facts(VERSIONS_INPUT))
def test_baseline_never_raises_on_odd_versions(inputs):
    inputs = inputs if isinstance(inputs, dict) else {}
    versions, _ = assert_total("baseline.gather_versions", baseline_judge.gather_versions, inputs.get("firmware"),
                               inputs.get("gpu_facts"), inputs.get("software"), allowed=(), finite=False)
    assert_total("baseline.judge_baseline", baseline_judge.judge_baseline, "node01", versions, BASELINE, allowed=(),
                 finite=False)
    assert_total("baseline.judge_fleet_baseline", baseline_judge.judge_fleet_baseline,
                 {"node01": versions, "node02": VERSIONS_INPUT}, allowed=(), finite=False)
