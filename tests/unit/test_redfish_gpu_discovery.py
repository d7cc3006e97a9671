# SPDX-License-Identifier: GPL-3.0-or-later
"""GPUs found where each vendor puts them and firmware classed by data/firmware_classes.yml (issue 22), on the real
trees of tests/fixtures/redfish (replayed by test_redfish_wire.ReplayBMC)."""

from __future__ import annotations

import os

import pytest
import yaml

from ansible_collections.zhisuan.ops.plugins.module_utils._judge import _firmware_classes as classes
from ansible_collections.zhisuan.ops.plugins.module_utils._judge.baseline import gather_versions, judge_baseline
from ansible_collections.zhisuan.ops.plugins.module_utils._judge.bmc import judge_bmc
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.inventory import collect_bmc, collect_firmware
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.service import RedfishService
from ansible_collections.zhisuan.ops.plugins.plugin_utils._judging import FIRMWARE_TABLE, firmware_table
from test_redfish_wire import ReplayBMC, client_for


def read(tree):
    with ReplayBMC(tree) as bmc:
        with client_for(bmc, []) as client:
            facts = collect_bmc(RedfishService(client))
            firmware = collect_firmware(RedfishService(client))
    return facts, firmware


def gpu_check(facts, expected):
    return [check for check in judge_bmc("n1", facts, expected=expected) if check["id"] == "bmc.gpu.count"][0]


@pytest.mark.parametrize("tree, source, model", [
    ("supermicro-sys-821ge-tnhr-hgx-h100", "pcie_device", "H100 80GB HBM3"),     # HGX: GPUs as PCIe devices
    ("hpe-proliant-xl675d-gen10plus-a100", "oem_device", "NVIDIA A100-SXM4-40GB"),  # only in iLO Chassis/1/Devices
    ("lenovo-thinksystem-sr670-v2", "processor", "NVIDIA L40"),                  # model from the PCIe name
])
def test_an_hgx_or_oem_listed_system_meets_a_bom_of_eight_gpus(tree, source, model):
    facts, _ = read(tree)
    assert len(facts["gpus"]) == 8 and {gpu["source"] for gpu in facts["gpus"]} == {source}
    assert {gpu["model"] for gpu in facts["gpus"]} == {model}
    assert gpu_check(facts, {"gpu_count": 8})["status"] == "pass"
    assert gpu_check(facts, {"gpu_count": 9})["status"] == "fail"


def test_the_second_node_of_a_blade_is_read():
    facts, _ = read("hpe-cray-ex235n-a100")
    assert [system["id"] for system in facts["systems"]] == ["Node0", "Node1"]
    assert sorted(gpu["system"] for gpu in facts["gpus"]) == ["Node0"] * 4 + ["Node1"] * 4
    assert sorted(item["system"] for item in facts["memory"]) == ["Node0"] * 8 + ["Node1"] * 8


def test_the_shipped_table_compiles_and_a_bad_site_rule_is_named():
    with open(FIRMWARE_TABLE) as handle:
        table = yaml.safe_load(handle)
    assert table["schema"] == classes.SCHEMA
    compiled = classes.compile_table(table)
    assert compiled["rules"] and all(component in classes.COMPONENTS for component, _f, _p in compiled["rules"])
    with pytest.raises(ValueError, match=r"zhisuan_firmware_classes rules\[0\].*does not compile"):
        classes.compile_table(table, site={"rules": [{"component": "bios", "pattern": "("}]})
    with pytest.raises(ValueError, match="component must be one of"):
        classes.compile_table(table, site={"rules": [{"component": "bois", "pattern": "x"}]})


@pytest.mark.parametrize("tree, key, wrong", [
    ("lenovo-thinksystem-sr670-v2", "bios", "0.0.20.9"),         # Marvell "UEFI NVMe Driver & BIOS" is an option ROM
    ("lenovo-thinksystem-sr670-v2", "bmc", "-*"),               # BMC-Primary-Pending
    ("lenovo-thinksystem-sr670-v2", "gpu_vbios", "02.04.05.02"),  # the PCIe switch board
    ("hpe-proliant-xl675d-gen10plus-a100", "gpu_vbios", "3.00"),  # the HGX baseboard
    ("supermicro-sys-821ge-tnhr-hgx-h100", "bios", "BIOS Date: 05/04/2023 Ver 1.3"),  # Golden_BIOS
])
def test_firmware_that_is_not_the_part_is_not_its_version(tree, key, wrong):
    facts, firmware = read(tree)
    versions = gather_versions(firmware, bmc=facts, classes=firmware_table(), vendor=facts["vendor"])
    assert versions[key] and wrong not in [version for _label, version in versions[key]]


def test_system_rom_is_the_bios_and_amd_vbios_is_gpu_firmware():
    facts, firmware = read("hpe-proliant-xl675d-gen10plus-a100")
    versions = gather_versions(firmware, bmc=facts, classes=firmware_table(), vendor="hpe")
    assert versions["bios"] == [("System ROM", "A47 v2.58 (05/19/2022)")]
    assert len(versions["gpu_vbios"]) == 8 and versions["gpu_baseboard"] == [("NVIDIA HGX A100 8 GPU 40", "3.00")]
    facts, firmware = read("hpe-cray-ex235a-mi250x")
    versions = gather_versions(firmware, bmc=facts, classes=firmware_table(), vendor=facts["vendor"])
    assert versions["gpu_vbios"] == [("Node0.AccVBIOS", "113-D65201-Y36-592042")]


def test_bios_and_bmc_fall_back_to_the_bmc_facts_and_a_missing_version_says_where_it_looked():
    facts, _ = read("openbmc-stock-bmcweb")
    versions = gather_versions([], bmc=facts, classes=firmware_table(), vendor=facts["vendor"])
    assert versions["bmc"] == [("Manager.FirmwareVersion", facts["manager"]["firmware_version"])]
    check = judge_baseline("n1", versions, {"bios": "1.0"})[0]
    assert check["status"] == "error" and "BiosVersion" in check["message"]


def test_a_cpld_named_with_its_board_is_the_cpld():
    """DGX H100 (AMI BMC), as captured: FirmwareInventory CPLDMB_0 (motherboard) and CPLDMID_0 (midplane) join the
    board to the word CPLD; they are the node's CPLDs, not 'other' (corpus truth firmware:cpld, issue 22 item 8)."""
    facts, firmware = read("nvidia-dgx-h100-viking")
    versions = gather_versions(firmware, bmc=facts, classes=firmware_table(), vendor=facts["vendor"])
    assert versions["cpld"] == [("CPLDMB_0", "0.2.1.8"), ("CPLDMID_0", "0.2.1.1")]
    check = judge_baseline("n1", versions, {"cpld": ["0.2.1.8", "0.2.1.1"]})[0]
    assert check["status"] == "pass"
    assert judge_baseline("n1", versions, {"cpld": "0.2.1.8"})[0]["status"] == "fail"  # the midplane CPLD is compared


def test_a_dell_infiniband_adapter_is_nic_firmware():
    """Dell R750 (iDRAC9), as captured: the ConnectX-6 in slot 7 is the FQDD InfiniBand.Slot.7-1/-2
    (Installed-0-20.31.10.14__InfiniBand.Slot.7-1); its firmware is NIC firmware like NIC.Slot.5-1's."""
    facts, firmware = read("dell-poweredge-r750-h100-pcie")
    versions = gather_versions(firmware, bmc=facts, classes=firmware_table(), vendor=facts["vendor"])
    nics = [version for _label, version in versions["nic_firmware"]]
    assert nics.count("20.31.10.14") == 2 and "24.40.10.00" in nics and len(nics) == 7
    check = judge_baseline("n1", versions, {"nic_firmware": ["24.40.10.00", "21.80.16.95", "21.80.9"]})[0]
    assert check["status"] == "fail" and "20.31.10.14" in check["message"]


@pytest.mark.parametrize("tree, name, version", [
    ("hpe-proliant-dl385-gen10plus-v2", "Intel Eth Adptr I350T4 OCPv3", "1.3082.0"),
    ("hpe-proliant-xl675d-gen10plus-a40", "HPE Eth 10/25Gb 2p 621SFP28 Adptr", "08.35.43"),
])
def test_an_ilo_eth_adptr_is_nic_firmware(tree, name, version):
    """iLO 5, as captured: iLO abbreviates Ethernet adapters ("Eth ... Adptr"); their firmware is NIC firmware, so a
    drift on them is seen (it was 'other', never compared)."""
    facts, firmware = read(tree)
    versions = gather_versions(firmware, bmc=facts, classes=firmware_table(), vendor=facts["vendor"])
    assert (name, version) in versions["nic_firmware"]
    others = sorted(set(v for label, v in versions["nic_firmware"] if label != name))
    assert judge_baseline("n1", versions, {"nic_firmware": others})[0]["status"] == "fail"


@pytest.mark.parametrize("tree, check_id, expected, unread", [
    ("nvidia-dgx-h100-viking", "bmc.memory.count", {"dimm_count": 32}, "/redfish/v1/Systems/DGX/Memory"),
    ("dell-poweredge-r750-h100-pcie", "bmc.drive.count", {"drive_count": 3}, "/redfish/v1/Systems/System.Embedded.1/Storage"),
    ("dmtf-public-rackmount1", "bmc.memory.count", {"dimm_count": 4}, "/redfish/v1/Systems/437XR1138R2/Memory/DIMM1"),
    ("nvidia-dgx-h100-viking", "bmc.memory.size", {"memory_gib": 2048}, "/redfish/v1/Systems/DGX/Memory"),
])
def test_a_bill_of_materials_count_whose_list_cannot_be_read_is_an_error(tree, check_id, expected, unread):
    """As captured (the corpus' subsets): the DGX links Systems/DGX/Memory, the R750 its Storage, and neither is in
    the capture (HTTP 404); the DMTF mockup lists DIMM1..4, none there. The BMC reports them but they cannot be
    read: the bill of materials' count is an error naming what could not be read, never a skip that says the BMC
    does not report DIMMs or drives."""
    facts, _ = read(tree)
    check = [item for item in judge_bmc("n1", facts, expected=expected) if item["id"] == check_id][0]
    assert check["status"] == "error" and unread in check["message"] and "does not report" not in check["message"]
    # without a bill of materials it stays a skip, and says the list could not be read
    check = [item for item in judge_bmc("n1", facts, expected={}) if item["id"] == check_id][0]
    assert check["status"] == "skip" and "could not be read" in check["message"]
