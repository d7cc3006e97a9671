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
