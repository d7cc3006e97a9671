# SPDX-License-Identifier: GPL-3.0-or-later
"""The asset list: rows from results.json host facts and inventory vars, and its CSV text."""

from __future__ import annotations

import copy

from ansible_collections.zhisuan.ops.plugins.plugin_utils._assets import ASSET_COLUMNS, asset_rows, to_csv

RESULTS = {
    "schema": "zhisuan.ops/results/v1",
    "hosts": {
        "node10": {"status": "pass", "checks": [], "facts": {
            "bmc": {"protocol": "redfish", "address": "10.20.1.10", "vendor": "dell", "manufacturer": "Dell Inc.",
                    "model": "PowerEdge R750", "serial": "CNIVC0014M0388", "bios_version": "1.8.2",
                    "bmc_firmware": "6.00.30.00", "power_state": "On", "health": "OK"},
            "gpu": {"model": "NVIDIA H100 PCIe", "count": 2, "driver_version": "535.161.08", "cuda_version": "12.2"},
            "baseline": {"versions": {"cpld": "1.0.5", "psu_firmware": "00.2A.2B",
                                      "nic_firmware": "mixed (20.31.10.14, 21.80.9)"}}}},
        "node9": {"status": "fail", "checks": [], "facts": {
            "bmc": {"address": "10.20.1.9", "manufacturer": "NVIDIA", "model": "DGXH100", "serial": "1662923610124",
                    "bios_version": "1.1.3", "bmc_firmware": None},
            "gpu": {"model": "NVIDIA H100 80GB HBM3", "count": 8, "driver_version": "535.161.08"},
            "baseline": {"versions": {"bmc": "24.09.17", "gpu_vbios": "96.00.89.00.01"}}}},
        "node11": {"status": "unreachable", "checks": [], "facts": {}, "message": "host was unreachable"},
    },
}
HOSTVARS = {
    "node9": {"zhisuan_rack": "A01", "zhisuan_u": 31, "bmc_address": "10.20.1.9"},
    "node10": {"zhisuan_rack": "A01", "zhisuan_u": "7"},
    "node11": {"zhisuan_rack": "A02", "zhisuan_u": 7, "bmc_address": "10.20.2.11"},
    "spare01": {},
}


def test_rows_sorted_by_rack_and_u_with_firmware_and_bmc_address():
    before = copy.deepcopy(RESULTS)
    rows = asset_rows(RESULTS, HOSTVARS)
    assert RESULTS == before
    assert [(row["node"], row["rack"], row["u"], row["status"]) for row in rows] == [
        ("node10", "A01", "7", "pass"), ("node9", "A01", "31", "fail"), ("node11", "A02", "7", "unreachable"),
        ("spare01", "", "", "not run")]
    assert rows[0] == {
        "node": "node10", "rack": "A01", "u": "7", "status": "pass", "manufacturer": "Dell Inc.",
        "model": "PowerEdge R750", "serial": "CNIVC0014M0388", "bmc_address": "10.20.1.10", "bios_version": "1.8.2",
        "bmc_firmware": "6.00.30.00", "cpld_firmware": "1.0.5", "gpu_vbios": "", "nic_firmware": "mixed (20.31.10.14, 21.80.9)",
        "psu_firmware": "00.2A.2B", "gpu_model": "NVIDIA H100 PCIe", "gpu_count": "2", "driver_version": "535.161.08"}
    assert (rows[1]["bmc_firmware"], rows[1]["gpu_vbios"]) == ("24.09.17", "96.00.89.00.01")  # from the baseline versions
    assert rows[2]["bmc_address"] == "10.20.2.11" and rows[2]["serial"] == ""
    assert list(rows[0]) == list(ASSET_COLUMNS)


def test_csv_text():
    rows = asset_rows(RESULTS, {"node10": HOSTVARS["node10"]})
    assert to_csv(rows[:1]) == (
        "node,rack,u,status,manufacturer,model,serial,bmc_address,bios_version,bmc_firmware,cpld_firmware,gpu_vbios,"
        "nic_firmware,psu_firmware,gpu_model,gpu_count,driver_version\n"
        "node10,A01,7,pass,Dell Inc.,PowerEdge R750,CNIVC0014M0388,10.20.1.10,1.8.2,6.00.30.00,1.0.5,,"
        "\"mixed (20.31.10.14, 21.80.9)\",00.2A.2B,NVIDIA H100 PCIe,2,535.161.08\n")
    assert to_csv([], columns=("node", "serial")) == "node,serial\n"


def test_csv_cells_are_not_spreadsheet_formulas():
    rows = [{"node": "=HYPERLINK(\"http://x\")", "serial": "-1234", "model": "-cmd", "rack": "+A1", "u": "@x"}]
    assert to_csv(rows, columns=("node", "serial", "model", "rack", "u")) == (
        "node,serial,model,rack,u\n\"'=HYPERLINK(\"\"http://x\"\")\",-1234,'-cmd,'+A1,'@x\n")


# --- the asset list from the facts the run judged (issue 26 item 6), on the real Redfish trees and captures --------

import os  # noqa: E402
import sys  # noqa: E402

import pytest  # noqa: E402

from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import nvidia_smi  # noqa: E402
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._parts import (  # noqa: E402
    hca_parts,
    net_parts,
    placeholder_serial,
)
from ansible_collections.zhisuan.ops.plugins.module_utils._judge.baseline import gather_versions, summarize_baseline  # noqa: E402
from ansible_collections.zhisuan.ops.plugins.module_utils._judge.bmc import summarize_bmc  # noqa: E402
from ansible_collections.zhisuan.ops.plugins.module_utils._net import ethtool, ib  # noqa: E402
from ansible_collections.zhisuan.ops.plugins.plugin_utils._assets import (  # noqa: E402
    COMPONENT_COLUMNS,
    component_rows,
    serial_duplicate_check,
)
from ansible_collections.zhisuan.ops.plugins.plugin_utils._judging import FAMILIES, Context, firmware_table  # noqa: E402

from test_redfish_gpu_discovery import read  # noqa: E402  (the real trees replayed at the wire)

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "lab", "bmc"))
import redfish_tree  # noqa: E402  (the lab's tree edits)

_TREES = {}


def tree_facts(tree):
    """``(bmc facts, firmware)`` of a real tree as the Redfish collector reads it (read once per tree)."""
    if tree not in _TREES:
        _TREES[tree] = read(tree)
    return copy.deepcopy(_TREES[tree])


def host(bmc, firmware, gpu=None, status="pass"):
    """A host record as the run keeps it: the families' summaries of the facts (no second reading)."""
    versions = gather_versions(firmware=firmware, bmc=bmc, classes=firmware_table(None), vendor=bmc.get("vendor"),
                               gpu_facts=gpu)
    facts = {"bmc": summarize_bmc(bmc, firmware=firmware), "baseline": summarize_baseline(versions)}
    if gpu is not None:
        facts["gpu"] = FAMILIES["gpu"].summarize(gpu, None, Context())
    return {"status": status, "checks": [], "facts": facts}


def h100_gpu_facts():
    with open(os.path.join(FIXTURES, "nvidia-smi", "q-h100x8-535.161.08-hw-power-brake-slowdown.txt")) as handle:
        return nvidia_smi.parse_text(handle.read())


def test_bios_is_what_the_baseline_check_compared_not_the_system_resource():
    # dgx04 of the delivery lab: HostBIOS_0 in the firmware inventory one version older (the lab's old_firmware edit)
    bmc, firmware = tree_facts("nvidia-dgx-h100-viking")
    edited = [dict(item, version=redfish_tree.older_version(item["version"])) if item["id"] == "HostBIOS_0" else item
              for item in firmware]
    results = {"hosts": {"dgx01": host(bmc, firmware), "dgx04": host(bmc, edited)}}
    rows = dict((row["node"], row) for row in asset_rows(results, {}))
    baseline = dict((name, results["hosts"][name]["facts"]["baseline"]["versions"]["bios"]) for name in rows)
    assert bmc["system"]["bios_version"] == "1.1.3"  # the same System.BiosVersion on both
    assert baseline["dgx04"] != baseline["dgx01"]
    assert (rows["dgx01"]["bios_version"], rows["dgx04"]["bios_version"]) == (baseline["dgx01"], baseline["dgx04"])


@pytest.mark.parametrize("tree, model", [
    ("nvidia-dgx-h100-viking", "H100 80GB HBM3"),
    ("hpe-proliant-xl675d-gen10plus-a100", "NVIDIA A100-SXM4-40GB"),   # GPUs only in the iLO device list
    ("lenovo-thinksystem-sr670-v2", "NVIDIA L40"),
])
def test_gpu_model_and_count_from_the_bmc_without_gpu_facts(tree, model):
    bmc, firmware = tree_facts(tree)
    row = asset_rows({"hosts": {"n1": host(bmc, firmware)}}, {})[0]
    assert (row["gpu_model"], row["gpu_count"]) == (model, "8")


def test_gpu_model_and_count_from_nvidia_smi_when_the_gpu_family_ran():
    bmc, firmware = tree_facts("nvidia-dgx-h100-viking")
    row = asset_rows({"hosts": {"n1": host(bmc, firmware, gpu=h100_gpu_facts())}}, {})[0]
    assert (row["gpu_model"], row["gpu_count"], row["driver_version"]) == ("NVIDIA H100 80GB HBM3", "8", "535.161.08")


def test_component_rows_of_a_supermicro_hgx_from_its_bmc():
    bmc, firmware = tree_facts("supermicro-sys-821ge-tnhr-hgx-h100")
    rows = component_rows({"hosts": {"smc01": host(bmc, firmware)}})
    kinds = dict((kind, sum(1 for row in rows if row["kind"] == kind)) for kind in set(row["kind"] for row in rows))
    assert kinds["gpu"] == 8 and kinds["cpu"] == 2 and kinds["dimm"] > 0 and kinds["drive"] > 0 and kinds["psu"] > 0
    assert list(rows[0]) == list(COMPONENT_COLUMNS)
    gpu = [row for row in rows if row["kind"] == "gpu"][0]
    assert (gpu["node"], gpu["slot"], gpu["model"], gpu["serial"], gpu["firmware"], gpu["source"]) == (
        "smc01", "GPU1", "H100 80GB HBM3", "1652323019599", "96.00.61.00.01", "bmc")
    dimms = [row for row in rows if row["kind"] == "dimm"]
    assert all(row["serial"] and row["part_number"] for row in dimms)
    text = to_csv(rows, COMPONENT_COLUMNS)
    assert text.splitlines()[0] == "node,kind,slot,manufacturer,model,part_number,serial,firmware,extra_id,source"
    assert len(text.splitlines()) == len(rows) + 1


def test_a_gpu_nvidia_smi_gave_is_one_row_not_two():
    bmc, firmware = tree_facts("nvidia-dgx-h100-viking")
    gpu = h100_gpu_facts()
    gpu["gpus"][0]["serial"] = bmc["gpus"][0]["serial"]  # the same GPU seen in-band and by its BMC
    rows = component_rows({"hosts": {"dgx01": host(bmc, firmware, gpu=gpu)}})
    gpus = [row for row in rows if row["kind"] == "gpu"]
    assert [row["source"] for row in gpus].count("nvidia-smi") == 8
    assert [row["source"] for row in gpus].count("bmc") == 7  # GPU_SXM_1 once, with its UUID from nvidia-smi
    assert [row["extra_id"] for row in gpus if row["serial"] == bmc["gpus"][0]["serial"]] == [gpu["gpus"][0]["uuid"]]


def test_optic_nic_and_hca_rows_from_the_real_captures():
    with open(os.path.join(FIXTURES, "ethtool", "ethtool-m-i40e-sfp-10g-sr-dom.txt")) as handle:
        optics = ethtool.parse_module(handle.read())
    parts = net_parts({"eth0": {"driver": "i40e", "firmware": "8.30 0x8000a4e8 1.2926.0", "address": "3c:fd:fe:a1:b2:c3",
                                "optics": optics}})
    assert parts[0] == {"kind": "nic", "slot": "eth0", "model": "i40e", "firmware": "8.30 0x8000a4e8 1.2926.0",
                        "extra_id": "3c:fd:fe:a1:b2:c3", "source": "ethtool"}
    assert (parts[1]["kind"], parts[1]["serial"], parts[1]["part_number"]) == ("optic", optics["serial"],
                                                                               optics["part_number"])
    assert optics["serial"]
    with open(os.path.join(FIXTURES, "rdma", "ibstat-h100-node-8x-ndr400-all-active.txt")) as handle:
        devices = ib.parse_ibstat(handle.read())
    hcas = hca_parts(devices)
    assert [part["slot"] for part in hcas] == ["mlx5_0", "mlx5_1", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7", "mlx5_8",
                                               "mlx5_9", "mlx5_bond_0"]
    assert len(hcas) == 9 and all(part["kind"] == "hca" and part["firmware"] and part["extra_id"] for part in hcas)


@pytest.mark.parametrize("value", ["", "N/A", "00000000000000", "CPLDSerialNumber", "01234567890123456789AB", "01",
                                   "To Be Filled By O.E.M.", "Not Specified", "0123456789", "Default string", None])
def test_placeholder_serials_of_the_real_trees_are_no_serial(value):
    assert placeholder_serial(value)


@pytest.mark.parametrize("value", ["1662923610124", "CNIVC0014M0388", "PFJHD0D52H60DG ", "12BBD2FD", "1Z0000001"])
def test_real_serials_are_serials(value):
    assert not placeholder_serial(value)


def _fleet(tree, count):
    bmc, firmware = tree_facts(tree)
    return dict(("dgx%02d" % (index + 1), host(copy.deepcopy(bmc), firmware)) for index in range(count))


def test_five_servers_sharing_one_serial_are_one_failing_cluster_check():
    hosts = _fleet("nvidia-dgx-h100-viking", 5)
    check = serial_duplicate_check(hosts)
    assert (check["id"], check["host"], check["status"], check["remedy"]) == (
        "assets.serial.duplicate", "cluster", "fail", "investigate")
    assert "1662923610124 on 5 nodes: dgx01 (system), dgx02 (system), dgx03 (system), dgx04 (system), dgx05 (system)" \
        in check["evidence"]
    assert "1652923003067 on 5 nodes: dgx01 (gpu SXM1)" in check["evidence"]  # the GPUs are shared too


def test_each_node_its_own_serials_passes_and_one_copied_serial_fails():
    bmc, firmware = tree_facts("nvidia-dgx-h100-viking")
    hosts = {}
    for index in (1, 2, 3):  # the lab's identity edit on the real tree: every serial the node's own
        docs = redfish_tree.set_identity(copy.deepcopy(redfish_tree.load_tree("nvidia-dgx-h100-viking")), index)
        node_bmc = copy.deepcopy(bmc)
        node_bmc["system"]["serial"] = docs["/redfish/v1/Systems/DGX"]["SerialNumber"]
        for gpu in node_bmc["gpus"]:
            gpu["serial"] = redfish_tree.node_serial(gpu["serial"], index)
        for psu in node_bmc["power_supplies"]:
            psu["serial"] = redfish_tree.node_serial(psu["serial"], index)
        hosts["dgx%02d" % index] = host(node_bmc, firmware)
    check = serial_duplicate_check(hosts)
    assert check["status"] == "pass", check
    assert check["message"] == "30 serial numbers read on 3 nodes, none on more than one node"
    # the real capture's facts edited: dgx03's second PSU carries dgx01's serial
    hosts["dgx03"]["facts"]["bmc"]["parts"][-1]["serial"] = hosts["dgx01"]["facts"]["bmc"]["parts"][-1]["serial"]
    check = serial_duplicate_check(hosts)
    assert check["status"] == "fail" and check["observed"] == "1 shared"
    assert check["evidence"] == "DTHTCT23070SP001 on 2 nodes: dgx01 (psu PSU0), dgx03 (psu PSU0)"


def test_placeholder_serials_shared_by_every_node_are_not_a_finding():
    # HPE Cray EX235a: eight GPUs with SerialNumber "00000000000000", a chassis with "01234567890123456789AB"
    bmc, firmware = tree_facts("hpe-cray-ex235a-mi250x")
    assert [gpu["serial"] for gpu in bmc["gpus"]].count("00000000000000") == 8
    hosts = {}
    for index in (1, 2):
        node_bmc = copy.deepcopy(bmc)
        for key in ("gpus", "processors", "memory", "drives", "power_supplies"):
            for item in node_bmc.get(key) or []:
                if item.get("serial"):
                    item["serial"] = redfish_tree.node_serial(item["serial"], index)
        node_bmc["system"]["serial"] = redfish_tree.node_serial(node_bmc["system"]["serial"], index)
        hosts["n%d" % index] = host(node_bmc, firmware)
    assert serial_duplicate_check(hosts)["status"] == "pass"
    assert "00000000000000" in [row["serial"] for row in component_rows({"hosts": hosts})]  # listed as the BMC says


def test_no_serial_at_all_is_a_skip_and_unreachable_nodes_are_left_out():
    assert serial_duplicate_check({})["status"] == "skip"
    hosts = _fleet("nvidia-dgx-h100-viking", 2)
    hosts["dgx02"]["status"] = "unreachable"
    assert serial_duplicate_check(hosts)["status"] == "pass"


def test_the_results_action_writes_both_files_and_the_cluster_check(tmp_path):
    import json
    from types import SimpleNamespace
    from unittest.mock import MagicMock

    from ansible_collections.zhisuan.ops.plugins.action.results import ActionModule as ResultsAction

    bmc, firmware = tree_facts("nvidia-dgx-h100-viking")
    facts = host(bmc, firmware)["facts"]
    hostvars = dict(("dgx%02d" % index, {"results_targeted": True, "results_checks": [], "results_host_facts": facts,
                                         "zhisuan_rack": "R01", "zhisuan_u": index})
                    for index in (1, 2))

    def record(assets):
        dest = tmp_path / ("on" if assets else "off")
        task = SimpleNamespace(args={"run_id": "r1", "kind": "delivery", "started": "2026-12-01T10:00:00+00:00",
                                     "dest": str(dest), "assets": assets},
                               check_mode=False, async_val=0, action="zhisuan.ops.results")
        connection = MagicMock()
        connection._shell.tmpdir = "/nonexistent"
        action = ResultsAction(task, connection, MagicMock(), MagicMock(), MagicMock(), MagicMock())
        action._display = MagicMock()  # pylint: disable=protected-access
        out = action.run(task_vars={"hostvars": hostvars})
        with open(out["path"], encoding="utf-8") as handle:
            return json.load(handle), dest

    document, dest = record(True)
    duplicate = [check for check in document["cluster"]["checks"] if check["id"] == "assets.serial.duplicate"]
    assert [check["status"] for check in duplicate] == ["fail"]
    assert "1662923610124 on 2 nodes: dgx01 (system), dgx02 (system)" in duplicate[0]["evidence"]
    import csv

    assets = list(csv.DictReader((dest / "assets.csv").open(encoding="utf-8")))
    assert list(assets[0]) == list(ASSET_COLUMNS) and len(assets) == 2
    assert (assets[0]["node"], assets[0]["gpu_model"], assets[0]["gpu_count"]) == ("dgx01", "H100 80GB HBM3", "8")
    components = (dest / "assets-components.csv").read_text().splitlines()
    assert components[0] == ",".join(COMPONENT_COLUMNS)
    assert len(components) == 1 + 2 * len(facts["bmc"]["parts"]) and components[1].startswith("dgx01,gpu,SXM1,")
    document, dest = record(False)
    assert not [check for check in document["cluster"]["checks"] if check["id"].startswith("assets.")]
    assert not (dest / "assets-components.csv").exists()


def test_the_net_and_rdma_summaries_keep_the_parts_for_the_asset_list():
    from ansible_collections.zhisuan.ops.plugins.module_utils._judge._rdma import summarize_rdma
    from ansible_collections.zhisuan.ops.plugins.module_utils._judge.net import summarize_net

    with open(os.path.join(FIXTURES, "ethtool", "ethtool-m-i40e-sfp-10g-sr-dom.txt")) as handle:
        optics = ethtool.parse_module(handle.read())
    with open(os.path.join(FIXTURES, "rdma", "ibstat-h100-node-8x-ndr400-all-active.txt")) as handle:
        ib_facts = ib.parse_ibstat(handle.read())
    net = {"interfaces": {"eth0": {"present": True, "driver": "i40e", "address": "3c:fd:fe:a1:b2:c3", "optics": optics},
                          "eth9": {"present": False}},
           "ib": ib_facts}
    results = {"hosts": {"n1": {"status": "pass", "checks": [], "facts": {
        "net": summarize_net(net), "rdma": summarize_rdma(ib_facts)}}}}
    rows = component_rows(results)
    assert [(row["kind"], row["slot"]) for row in rows[:2]] == [("nic", "eth0"), ("optic", "eth0")]
    assert rows[1]["serial"] == optics["serial"] == "GJ2308161004"
    hcas = [row for row in rows if row["kind"] == "hca"]
    assert len(hcas) == 9 and hcas[0]["extra_id"] == ib_facts["devices"]["mlx5_0"]["node_guid"]


def test_the_check_reads_in_chinese_in_a_zh_cn_report():
    from ansible_collections.zhisuan.ops.plugins.plugin_utils import _report_i18n

    tr = _report_i18n.translations("zh_CN")
    failing = serial_duplicate_check(_fleet("nvidia-dgx-h100-viking", 2))
    passing = serial_duplicate_check(dict(list(_fleet("nvidia-dgx-h100-viking", 1).items())))
    text = _report_i18n.check_message(tr, dict(failing, family="assets", observed_text=failing["observed"]))
    assert text.startswith("10 个序列号出现在多台节点上：1662923610124 on 2 nodes: dgx01 (system), dgx02 (system)")
    assert text.endswith("资产清单移交前，请厂商为每台节点写入其自身的序列号")
    assert _report_i18n.check_message(tr, dict(passing, family="assets", observed_text=passing["observed"])) == \
        "已读取 1 台节点的 10 个序列号，没有序列号出现在多台节点上"
