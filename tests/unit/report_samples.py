# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Results documents for the report tests and the scale bench, in the exact shapes of docs/results.md.

The NCCL curve is the real all_reduce_perf capture (tests/fixtures/nccl-tests, 8x A100-40GB, out-of-place columns);
one node's copy has its busbw values edited down by 20 % (a slow node). RDMA pair values are around the real
ib_write_bw capture's 24056.72 MB/s average (192.45 Gb/s), one node's pairs edited below the floor. Storage facts
and the aggregate come from the real fio 3.33 capture through the collection's parser and storage summary.
NIC and RDMA host facts follow summarize_net / summarize_rdma's shapes with hand-set values.
"""

from __future__ import annotations

import copy
import os

from ansible_collections.zhisuan.ops.plugins.module_utils._judge import storage as storage_rules
from ansible_collections.zhisuan.ops.plugins.module_utils._storage import fio

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures")
NCCL_CAPTURE = os.path.join(FIXTURES, "nccl-tests", "all_reduce_perf-1node-8xA100-40GB.log")
RDMA_GBPS = 24056.72 * 8 / 1000.0  # the real capture's BW average, MB/s -> Gb/s
FIO_CAPTURE = os.path.join(FIXTURES, "fio", "fio-3.33-tmp-libaio-seqread-randwrite.json")


def fio_facts():
    """The real fio capture parsed (jobs seq_read 1008.928 MiB/s, rand_write 53690.619 IOPS)."""
    with open(FIO_CAPTURE, encoding="utf-8") as handle:
        return fio.parse_json(handle.read())


def nccl_points(scale=1.0):
    """Rows of the real capture: {bytes, algbw, busbw, time_us, wrong} (out-of-place), size 0 rows left out."""
    points = []
    with open(NCCL_CAPTURE, encoding="utf-8") as handle:
        for line in handle:
            fields = line.split()
            if len(fields) < 8 or not fields[0].isdigit() or int(fields[0]) == 0:
                continue
            points.append({"bytes": int(fields[0]), "time_us": float(fields[4]), "algbw": round(float(fields[5]) * scale, 2),
                           "busbw": round(float(fields[6]) * scale, 2), "wrong": 0})
    return points


def check(check_id, host, status, component="", observed=None, expected=None, message="", remedy=None, evidence=""):
    if remedy is None:
        remedy = "none" if status in ("pass", "skip") else "investigate"
    return {"id": check_id, "host": host, "component": component, "status": status, "observed": observed,
            "expected": expected, "message": message, "remedy": remedy, "evidence": evidence}


def _trace(hot=False):
    temps = (31, 64, 72, 75, 76, 58) if not hot else (33, 71, 83, 89, 90, 66)
    clocks = (1410, 1275, 1260, 1245, 1230, 1410) if not hot else (1410, 1260, 1050, 705, 690, 1410)
    return [{"t": t, "temp_max_c": temps[t], "sm_clock_min_mhz": clocks[t]} for t in range(6)]


def rich_results(nodes=8, run_id="20261130T220000Z-acceptance", started="2026-11-30T22:00:00+00:00", kind="acceptance"):
    """An acceptance run with data for every report section: node03 has an ECC failure and a hot burn, node05 a
    slow RDMA port and a miswired cable, node06 a slow NCCL all_reduce, node08 is unreachable (with 8+ nodes)."""
    names = ["node%02d" % i for i in range(1, nodes + 1)]
    unreachable = "node08" if nodes >= 8 else None
    parsed = fio_facts()
    fio_parsed = dict((name, copy.deepcopy(parsed)) for name in names)
    hosts = {}
    for name in names:
        if name == unreachable:
            hosts[name] = {"status": "unreachable", "checks": [], "facts": {},
                           "message": "Failed to connect to the host via ssh: Connection refused"}
            continue
        checks = [
            check("gpu.count.present", name, "pass", "node", 8, "== 8", "8 GPUs present"),
            check("gpu.ecc.volatile_uncorrectable", name, "pass", "GPU 3 (GPU-5c1e, 0000:4E:00.0)", 0, "== 0", "no ECC"),
            check("xid.events.count", name, "pass", "kernel log", 0, "== 0", "no XID events"),
            check("dcgm.diag.result", name, "pass", "node", "Pass", "Pass", "dcgmi diag level 3 passed"),
            check("burn.gflops.median", name, "pass", "node", 17500.0, ">= 15000", "burn rate above floor"),
            check("burn.stability.temperature", name, "pass", "GPU 0 (GPU-1a2b, 0000:07:00.0)", "13 C to slowdown",
                  "> 5 C to slowdown", "GPU 0 stayed cool"),
            check("nic.link.speed", name, "pass", "mlx5_0", 400, "== 400", "400 Gb/s"),
            check("storage.read.bandwidth", name, "pass", "/data", 6100.0, ">= 4000", "fio seq read"),
        ]
        facts = {
            "gpu": {"model": "NVIDIA A100-SXM4-80GB", "count": 8, "driver_version": "535.54.03", "cuda_version": "12.2",
                    "profile": "a100"},
            "burn": {"duration_s": 600, "mode": "double", "gpus": 8, "gflops_median": 17500.0, "gflops_min": 17380.0,
                     "gflops_max": 17610.0, "gflops_floor": 15000.0, "errors": 0, "faulty": [], "profile": "a100",
                     "stability": {"samples": 5, "gpus_before": 8, "gpus_lost": [], "max_temperature_c": 76,
                                   "new_xid_codes": [], "trace": _trace()}},
            "storage": storage_rules.summarize_storage(fio_parsed[name]),
            "nic": {"interfaces": dict(("eth%d" % port, {"link": True, "speed_mbps": 400000, "mtu": 9000,
                                                         "driver": "mlx5_core", "firmware": "28.39.1002",
                                                         "numa_node": port, "rx_power_dbm": -2.1})
                                       for port in range(2)),
                    "rdma_devices": 2, "lldp": {"eth0": "leaf01 swp1", "eth1": "leaf02 swp1"}},
            "rdma": {"devices": 2, "ports_active": 2, "ports": 2, "rates_gbps": [400], "firmware": ["28.39.1002"],
                     "no_device": None},
        }
        if name == "node03":
            checks[1] = check("gpu.ecc.volatile_uncorrectable", name, "fail", "GPU 3 (GPU-5c1e, 0000:4E:00.0)", 2, "== 0",
                              "GPU 3 has 2 uncorrectable ECC errors since the driver loaded", "reset_gpu",
                              "volatile dram_uncorrectable=2")
            checks[5] = check("burn.stability.temperature", name, "fail", "GPU 6 (GPU-9f9f, 0000:B7:00.0)",
                              "-1 C to slowdown", "> 5 C to slowdown",
                              "GPU 6 reached its slowdown limit under load <b>check cooling</b>", "investigate")
            facts["burn"]["stability"].update(max_temperature_c=90, trace=_trace(hot=True))
            facts["remediation"] = [{"action": "reset_gpu", "why": "gpu.ecc.volatile_uncorrectable on GPU 3",
                                     "outcome": "planned", "mode": "check"}]
        if name == "node04":
            checks.append(check("gpu.temperature.gpu", name, "warn", "GPU 1 (GPU-0b0b, 0000:0F:00.0)", 80, "< 78",
                                "GPU 1 at 80 C near slowdown", "monitor"))
        hosts[name] = {"status": "fail" if name == "node03" else ("warn" if name == "node04" else "pass"),
                       "checks": checks, "facts": facts}
    reachable = [n for n in names if n != unreachable]
    pairs, round_no = [], 0
    for i, a in enumerate(reachable):
        for b in reachable[i + 1:]:
            round_no += 1
            value = RDMA_GBPS - (i % 3) * 0.7
            if "node05" in (a, b):
                value = round(RDMA_GBPS * 0.62, 1)
            pairs.append({"a": a, "b": b, "round": round_no % 7 + 1, "value": round(value, 1),
                          "status": "fail" if value < 180.0 else "pass"})
    nccl = [{"op": "all_reduce_perf", "scope": "cluster", "nodes": reachable, "unit": "GB/s", "floor": 200.0,
             "judged_bytes": 8589934592, "points": nccl_points()}]
    for name in reachable:
        nccl.append({"op": "all_reduce_perf", "scope": name, "nodes": [name], "unit": "GB/s", "floor": 200.0,
                     "judged_bytes": 8589934592, "points": nccl_points(0.8 if name == "node06" else 1.0)})
    links = []
    for index, name in enumerate(reachable):
        for port in range(2):
            links.append({"node": name, "port": "eth%d" % port, "switch": "leaf%02d" % (port + 1),
                          "switch_port": "swp%d" % (index + 1), "status": "ok", "observed": "leaf%02d swp%d" % (port + 1, index + 1)})
    for link in links:
        if link["node"] == "node05" and link["port"] == "eth1":
            link.update(status="miswired", observed="leaf02 swp7")
    cluster_checks = [check("rdma.bandwidth.pairs", "cluster", "fail" if "node05" in reachable else "pass", "fabric",
                            "%d pairs below floor" % sum(1 for p in pairs if p["status"] == "fail"), "all >= 180",
                            "RDMA pairs below the floor involve node05", "check_cable")]
    host_counts = dict((s, sum(1 for h in hosts.values() if h["status"] == s))
                       for s in ("pass", "warn", "fail", "error", "unreachable"))
    check_counts = dict((s, 0) for s in ("skip", "pass", "warn", "error", "fail"))
    for record in hosts.values():
        for c in record["checks"]:
            check_counts[c["status"]] += 1
    for c in cluster_checks:
        check_counts[c["status"]] += 1
    return {
        "schema": "zhisuan.ops/results/v1",
        "run": {"id": run_id, "kind": kind, "started": started, "finished": started, "playbook": "playbooks/acceptance.yml",
                "collection_version": "0.1.0", "ansible_version": "2.19.14", "hosts_total": len(names),
                "families": ["gpu", "xid", "dcgm", "burn", "nic", "rdma", "nccl", "storage"]},
        "hosts": hosts,
        "cluster": {"checks": cluster_checks,
                    "fabric": {"rdma_pairs": {"test": "ib_write_bw", "unit": "Gb/s", "floor": 180.0, "schedule": "full_mesh",
                                              "rounds": 7, "nodes": reachable, "pairs": pairs},
                               "nccl": nccl, "cabling": {"links": links}},
                    "storage": {"aggregate": storage_rules.aggregate(dict((n, fio_parsed[n]) for n in reachable))}},
        "summary": {"hosts": host_counts, "checks": check_counts},
    }


def ops_results():
    """A diagnosis run built by the producers themselves (issues 15, 16, 17): the lab's real watchdog-timeout job log
    (parse_log, judge_job: node04 the suspect), node04's real ibstat capture with mlx5_4 port 1 edited down
    (judge_rdma_ports -> rdma.port.state fail, check_cable), the real Slurm node and partition captures
    (judge_cluster), the real jobcomp requeue capture (quality indicators), six of leaf03's eight nodes failing
    rdma.port.state (judge_fleet) and a node with three GPU resets for one cause in 30 days (make_plan's escalation).
    Returns the results document."""
    # pylint: disable=import-outside-toplevel
    import datetime

    from ansible_collections.zhisuan.ops.plugins.module_utils._judge import slurm as slurm_rules
    from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
    from ansible_collections.zhisuan.ops.plugins.module_utils._judge._rdma import judge_rdma_ports
    from ansible_collections.zhisuan.ops.plugins.module_utils._judge.fleet import judge_fleet, placement, shared_causes
    from ansible_collections.zhisuan.ops.plugins.module_utils._judge.job import judge_job
    from ansible_collections.zhisuan.ops.plugins.module_utils._net.ib import parse_ibstat
    from ansible_collections.zhisuan.ops.plugins.module_utils._remediate import history
    from ansible_collections.zhisuan.ops.plugins.module_utils._remediate.plan import make_plan
    from ansible_collections.zhisuan.ops.plugins.module_utils._remediate.policy import normalize
    from ansible_collections.zhisuan.ops.plugins.module_utils._sched import slurm_nodes
    from ansible_collections.zhisuan.ops.plugins.module_utils._sched.joblog import parse_log
    from ansible_collections.zhisuan.ops.plugins.plugin_utils import _quality, _results
    from ansible_collections.zhisuan.ops.plugins.plugin_utils._diagnosis import diagnose

    def text(*parts):
        with open(os.path.join(FIXTURES, *parts), encoding="utf-8") as handle:
            return handle.read()

    now = datetime.datetime(2026, 12, 1, 12, 0, tzinfo=datetime.timezone.utc)
    ibstat = text("rdma", "ibstat-h100-node-8x-ndr400-all-active.txt")
    head, sep, tail = ibstat.partition("CA 'mlx5_4'")
    down = head + sep + tail.replace("State: Active", "State: Down", 1).replace("Physical state: LinkUp",
                                                                                 "Physical state: Polling", 1)
    hosts, host_vars, links = {}, {}, []
    for index in range(24):
        name = "node%02d" % (index + 1)
        leaf = "leaf%02d" % (index // 8 + 1)
        links.append({"node": name, "port": "ib0", "switch": leaf, "switch_port": "swp%d" % (index % 8 + 1)})
        host_vars[name] = {"zhisuan_rack": "R%02d" % (index // 4 + 1)}
        bad = name == "node04" or (leaf == "leaf03" and index % 8 < 6)
        checks = judge_rdma_ports(name, parse_ibstat(down if bad else ibstat))
        if name == "node07":
            checks.append(make_check("gpu.ecc.volatile_uncorrectable", name, "fail", component="GPU 3", observed=2,
                                     expected=0, message="GPU 3 has 2 volatile uncorrectable ECC errors",
                                     remedy="reset_gpu"))
        record = _results.host_record(name, checks)
        record["status"] = "fail" if any(c["status"] == "fail" for c in checks) else "pass"
        record["facts"]["diagnosis"] = diagnose(record["checks"])
        hosts[name] = record
    where = placement(host_vars, {"links": links, "switches": dict(
        ("leaf%02d" % (i + 1), {"tier": "leaf", "uplink": "spine01"}) for i in range(3))})
    fleet_checks = judge_fleet(hosts, where)
    cause = "gpu.ecc.volatile_uncorrectable"
    records = []
    for index in range(3):
        finished = (now - datetime.timedelta(days=1, hours=index)).isoformat()
        records.append(history.make_record({"time": finished, "run_id": "r%d" % index, "node": "node07", "cause": cause,
                                            "remedy": "reset_gpu", "action": "reset_gpu", "outcome": "repaired",
                                            "finished": finished}))
    plan = make_plan(hosts, normalize({}), shared=shared_causes(hosts, where), history=records, now=now)

    # as tests/integration/test_platform_slurm.py: the IB line's host and peer edited to node01 and node04's address
    ib_line = text("joblog", "nccl-ib-completion-status12-nccl-1405.log").replace(
        "kp-ddp-worker-0", "node01").replace("10.216.210.236", "10.0.0.4")
    log = parse_log(text("joblog", "slurm-lab-job-watchdog-timeout.out") + ib_line)
    job = dict(log, id="4127", name="train", state="FAILED", nodes=["node01", "node04"], exit_code="1:0")
    job_checks, summary = judge_job(job, hostmap={"node01": "node01", "10.0.0.4": "node04"})

    nodes = slurm_nodes.parse_nodes(text("slurm", "scontrol-o-show-node-4-mixed-states.txt"))
    partitions = slurm_nodes.parse_partitions(text("slurm", "scontrol-o-show-partition.txt"))
    slurm_checks, slurm_data = slurm_rules.judge_cluster(nodes, partitions, {"node01": 8, "node02": 8, "node03": 8,
                                                                             "node04": 8})
    attempts = slurm_nodes.parse_jobcomp(text("slurm", "jobcomp-filetxt-requeue.txt"))
    quality = _quality.indicators([r for r in attempts if r["id"] == "2"], job="2", throughput=30000,
                                  flops_per_unit=4.2e10, gpus=8, peak_tflops=None,
                                  usable_gpus=slurm_data["gpus_usable"], installed_gpus=slurm_data["gpus_installed"],
                                  source="slurm")
    remediation = {"source": "results", "order": plan["order"], "deferred": plan["deferred"], "held": plan["held"],
                   "shared": plan["shared"], "repeat_offenders": plan["repeat_offenders"],
                   "breaker_tripped": plan["breaker"]["tripped"], "check_mode": False}
    run = {"id": "20261201T120000Z-diagnose", "kind": "diagnose", "started": "2026-12-01T12:00:00+00:00",
           "finished": "2026-12-01T12:20:00+00:00", "playbook": "playbooks/diagnose.yml", "collection_version": "0.1.0",
           "ansible_version": "2.19.14", "families": ["rdma", "job", "slurm"]}
    return _results.build_results(run, hosts, job_checks + slurm_checks + fleet_checks + plan["checks"],
                                  cluster_data={"job": summary, "quality": quality, "slurm": slurm_data,
                                                "remediation": remediation})
