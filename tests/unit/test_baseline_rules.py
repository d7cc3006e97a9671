# SPDX-License-Identifier: GPL-3.0-or-later
"""Baseline rules: versions gathered from the Dell R750 firmware inventory (real Redfish values), GPU and host
software facts, against a site baseline; drift across a fleet; BIOS attributes of the Dell R750, DGX H100 and
GB200 captures against a BIOS baseline through data/bios_attributes.yml. Faults are edits of the captured values."""

from __future__ import annotations

import glob
import json
import os

import pytest
import yaml

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import REMEDIES
from ansible_collections.zhisuan.ops.plugins.module_utils._judge.baseline import (
    accepts,
    bios_names,
    gather_versions,
    judge_baseline,
    judge_bios,
    judge_fleet_baseline,
    summarize_baseline,
)

REDFISH = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "redfish")
DATA = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "collections", "ansible_collections", "zhisuan",
                    "ops", "data", "bios_attributes.yml")
# What the Redfish helper's component classification gives for Dell's ids (test-side, by Id prefix).
_COMPONENT = (("BIOS.", "bios"), ("iDRAC.", "bmc"), ("CPLD.", "cpld"), ("PSU.", "psu"), ("NIC.", "nic"),
              ("InfiniBand.", "nic"), ("Disk.", "drive"))


def _dell_firmware():
    items = []
    for path in sorted(glob.glob(os.path.join(REDFISH, "dell-poweredge-r750-h100-pcie", "UpdateService",
                                              "FirmwareInventory", "Installed-*", "index.json"))):
        with open(path, encoding="utf-8") as handle:
            item = json.load(handle)
        device = item["Id"].split("__", 1)[1]
        component = next((value for prefix, value in _COMPONENT if device.startswith(prefix)), "other")
        items.append({"id": item["Id"], "name": item["Name"], "version": item["Version"], "component": component,
                      "updateable": item["Updateable"]})
    return items


def _attributes(tree, system):
    with open(os.path.join(REDFISH, tree, "Systems", system, "Bios", "index.json"), encoding="utf-8") as handle:
        return json.load(handle)["Attributes"]


def _table():
    with open(DATA, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


GPU = {"driver_version": "535.161.08", "cuda_version": "12.2",
       "gpus": [{"index": index, "vbios_version": "96.00.89.00.01"} for index in range(8)]}
SOFTWARE = {"nvidia_driver": "535.161.08", "nccl": "2.21.5", "ofed": "23.07-0.5.1.2", "fabric_manager": "535.161.08",
            "dcgm": None, "kernel": "5.15.0-94-generic"}
BASELINE = {"bios": "1.8.2", "bmc": "6.00.30.00", "cpld": "1.0.5", "psu_firmware": "00.2A.2B",
            "gpu_vbios": {"regex": "^96\\.00\\.89\\."}, "driver": "535.161", "cuda": ["12.2", "12.4"], "nccl": "2.21.5",
            "ofed": "regex:^23\\.07-", "fabric_manager": "535.161.08"}


def _well_formed(checks):
    for check in checks:
        assert check["remedy"] in REMEDIES
        assert (check["remedy"] == "none") == (check["status"] in ("pass", "skip")), check


def test_gather_versions_from_firmware_gpu_and_software():
    versions = gather_versions(_dell_firmware(), GPU, SOFTWARE)
    assert versions["bios"] == [("BIOS", "1.8.2")]
    assert versions["bmc"] == [("Integrated Dell Remote Access Controller", "6.00.30.00")]
    assert versions["cpld"] == [("System CPLD", "1.0.5")]
    assert versions["psu_firmware"] == [("Power Supply.Slot.1", "00.2A.2B"), ("Power Supply.Slot.2", "00.2A.2B")]
    assert sorted(set(version for _, version in versions["nic_firmware"])) == ["20.31.10.14", "21.80.16.95", "21.80.9",
                                                                               "24.40.10.00"]
    assert versions["drive_firmware"] == [("PCIe SSD in Slot %d in Bay 1" % slot, "2.1.3") for slot in range(3)]
    assert versions["gpu_vbios"] == [("GPU %d" % index, "96.00.89.00.01") for index in range(8)]
    assert versions["driver"] == [("driver", "535.161.08")] and versions["cuda"] == [("cuda", "12.2")]
    assert versions["dcgm"] == [("dcgm", None)] and versions["kernel"] == [("kernel", "5.15.0-94-generic")]
    assert "other" not in versions
    assert summarize_baseline(versions)["versions"]["nic_firmware"] == "mixed (20.31.10.14, 21.80.16.95, 21.80.9, 24.40.10.00)"


def test_node_on_the_baseline():
    checks = judge_baseline("dell01", gather_versions(_dell_firmware(), GPU, SOFTWARE), BASELINE)
    _well_formed(checks)
    # and, after the baseline's own entries, the Fabric Manager against the driver (both 535.161.08)
    assert [(check["id"], check["status"]) for check in checks] == [
        ("baseline.%s.version" % key, "pass") for key in BASELINE] + [("baseline.fabric_manager.driver", "pass")]
    assert checks[4]["expected"] == "/^96\\.00\\.89\\./"
    assert checks[5]["message"] == "NVIDIA driver 535.161.08 matches the baseline 535.161"


def test_old_bios_one_gpu_vbios_off_missing_dcgm_and_uncollected_component():
    firmware = _dell_firmware()
    for item in firmware:
        if item["component"] == "bios":
            item["version"] = "1.2.4"  # the R750's previous BIOS (FirmwareInventory Previous-159-1.2.4)
    gpu = json.loads(json.dumps(GPU))
    gpu["gpus"][3]["vbios_version"] = "96.00.61.00.01"
    baseline = dict(BASELINE, dcgm="3.3.9", nic_firmware="20.31.10.14", gpu_vbios="96.00.89.00.01")
    versions = gather_versions(firmware, gpu, SOFTWARE)
    del versions["cpld"]
    checks = dict((check["id"], check) for check in judge_baseline("dell02", versions, baseline))
    _well_formed(checks.values())
    bios = checks["baseline.bios.version"]
    assert (bios["status"], bios["remedy"], bios["observed"], bios["message"]) == (
        "fail", "update_firmware", "1.2.4", "BIOS is 1.2.4 but the baseline is 1.8.2: bring it to the baseline")
    vbios = checks["baseline.gpu_vbios.version"]
    assert vbios["message"] == "1 of 8 GPU VBIOS entries are off the baseline 96.00.89.00.01: GPU 3 96.00.61.00.01"
    assert vbios["observed"] == "96.00.61.00.01, 96.00.89.00.01"
    dcgm = checks["baseline.dcgm.version"]
    assert (dcgm["status"], dcgm["message"]) == ("fail", "DCGM is not installed on the node; the baseline is 3.3.9")
    cpld = checks["baseline.cpld.version"]
    assert (cpld["status"], cpld["remedy"]) == ("error", "investigate")
    assert checks["baseline.nic_firmware.version"]["message"].startswith(
        "5 of 7 NIC firmware entries are off the baseline 20.31.10.14: Mellanox Network Adapter - B8:3F:D2:90:97:C4 24.40.10.00, ")


@pytest.mark.parametrize("spec, version, result", [
    ("535", "535.161.08", True), ("535.16", "535.161.08", False), (["1.2.4", "1.8.2"], "1.8.2", True),
    ({"regex": "^2\\.2[01]\\."}, "2.21.5", True), ("regex:^24\\.", "23.07-0.5.1.2", False), ("1.8.2", None, False),
])
def test_accepts(spec, version, result):
    assert accepts(spec, version) is result


def test_accepts_rejects_bad_specs():
    with pytest.raises(ValueError) as info:
        accepts({"pattern": "x"}, "1")
    assert str(info.value) == "a baseline entry given as a mapping needs a 'regex' key, got {'pattern': 'x'}"
    with pytest.raises(ValueError) as info:
        accepts("regex:(", "1")
    assert str(info.value).startswith("baseline regex '(' does not compile: ")


def test_fleet_drift_names_each_node():
    good = gather_versions(_dell_firmware(), GPU, SOFTWARE)
    old = gather_versions([dict(item, version="1.2.4") if item["component"] == "bios" else item
                           for item in _dell_firmware()], GPU, SOFTWARE)
    fleet = {"node%02d" % number: good for number in range(1, 6)}
    fleet["node07"] = old
    checks = dict((check["id"], check) for check in judge_fleet_baseline(fleet))
    _well_formed(checks.values())
    bios = checks["baseline.bios.drift"]
    assert (bios["host"], bios["status"], bios["remedy"], bios["observed"]) == (
        "cluster", "fail", "update_firmware", "2 versions")
    assert bios["message"] == "BIOS differs across nodes: 1.8.2 on 5 nodes; 1.2.4 on node07"
    assert bios["evidence"] == ("node01=1.8.2, node02=1.8.2, node03=1.8.2, node04=1.8.2, node05=1.8.2, "
                                "node07=1.2.4")
    assert checks["baseline.bmc.drift"]["message"] == "All 6 nodes run BMC firmware 6.00.30.00"
    assert "baseline.dcgm.drift" not in checks  # not installed anywhere: nothing to compare
    assert checks["baseline.nic_firmware.drift"]["status"] == "pass"  # the same mix on every node
    small = judge_fleet_baseline({"a": {"driver": "535.161.08"}, "b": {"driver": "550.90.07"}})
    assert small[0]["message"] == "NVIDIA driver differs across nodes: 535.161.08 on a; 550.90.07 on b"


def test_bios_baseline_on_dell_dgx_and_gb200():
    table = _table()
    expected = {"above_4g_decoding": True, "sr_iov": True, "iommu": True, "power_profile": ["PerfOptimized", "MaxPerf"],
                "c_states": False, "MemOpMode": "OptimizerMode"}
    dell = judge_bios("dell01", _attributes("dell-poweredge-r750-h100-pcie", "System.Embedded.1"), expected,
                      bios_names(table, "dell"))
    _well_formed(dell)
    assert [(check["id"], check["status"], check["evidence"]) for check in dell] == [
        ("baseline.bios.above_4g_decoding", "pass", "MmioAbove4Gb=Enabled"),
        ("baseline.bios.sr_iov", "pass", "SriovGlobalEnable=Enabled"),
        ("baseline.bios.iommu", "pass", "ProcVirtualization=Enabled"),
        ("baseline.bios.power_profile", "pass", "SysProfile=PerfOptimized"),
        ("baseline.bios.c_states", "pass", "ProcCStates=Disabled"),
        ("baseline.bios.memopmode", "pass", "MemOpMode=OptimizerMode"),
    ]
    edited = dict(_attributes("dell-poweredge-r750-h100-pcie", "System.Embedded.1"), SriovGlobalEnable="Disabled")
    sriov = judge_bios("dell01", edited, {"sr_iov": True}, bios_names(table, "dell"))[0]
    assert (sriov["status"], sriov["remedy"], sriov["message"]) == (
        "fail", "tune", "BIOS sr_iov is SriovGlobalEnable=Disabled but the baseline wants enabled: set "
                        "SriovGlobalEnable as a pending BIOS setting and reboot")
    dgx = judge_bios("dgx01", _attributes("nvidia-dgx-h100-viking", "DGX"), expected, bios_names(table, "nvidia"))
    assert [(check["id"], check["status"]) for check in dgx] == [
        ("baseline.bios.above_4g_decoding", "skip"), ("baseline.bios.sr_iov", "pass"), ("baseline.bios.iommu", "pass"),
        ("baseline.bios.power_profile", "skip"), ("baseline.bios.c_states", "fail"), ("baseline.bios.memopmode", "skip")]
    assert dgx[0]["message"] == "This BIOS has no attribute for above_4g_decoding (looked for above_4g_decoding)"
    assert dgx[4]["observed"] == "C6(Retention) state"
    gb200 = _attributes("nvidia-gb200-nvl", "System_0")
    acs = judge_bios("gb01", gb200, {"pcie_advertise_acs": False}, bios_names(table, "nvidia"))[0]
    assert (acs["status"], acs["observed"]) == ("fail", "True")
    assert acs["evidence"].startswith("Socket0Pcie0AdvertiseACS=True, Socket0Pcie1AdvertiseACS=True, ")
    assert acs["evidence"].endswith(" … 4 more")
    assert judge_bios("gb01", None, {"sr_iov": True})[0]["message"] == "The BIOS attributes were not collected"
    assert bios_names(table, "supermicro") == table["vendors"]["generic"]


def test_a_fabric_manager_of_another_driver_fails_whatever_the_baseline():
    software = dict(SOFTWARE, fabric_manager="535.129.03")  # FM left behind by a driver update to 535.161.08
    checks = judge_baseline("hgx01", gather_versions(_dell_firmware(), GPU, software), {})
    _well_formed(checks)
    [check] = checks
    assert (check["id"], check["status"], check["remedy"], check["observed"]) == (
        "baseline.fabric_manager.driver", "fail", "update_firmware", "535.129.03")
    assert check["message"].startswith("Fabric Manager 535.129.03 does not match the NVIDIA driver 535.161.08: it "
                                       "will not start")
    # a node without Fabric Manager (PCIe GPUs, no NVSwitch) or whose driver was not read: no such check
    assert judge_baseline("pcie01", gather_versions(_dell_firmware(), GPU, dict(SOFTWARE, fabric_manager=None)), {}) == []
    assert judge_baseline("n", gather_versions(_dell_firmware(), None, dict(SOFTWARE, nvidia_driver=None)), {}) == []
