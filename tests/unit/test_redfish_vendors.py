# SPDX-License-Identifier: GPL-3.0-or-later
"""Vendor adapters: which one each captured service gets, their hooks on captured resources, and a guard that
shared code never branches on the vendor. HPE, Lenovo, Supermicro and Inspur have no captured tree in the fixtures;
their hooks are only run on resources of the captured trees (never on invented responses)."""

from __future__ import annotations

import ast
import json
import os
import re

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import BMCError
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish import transform
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.vendors import ADAPTERS, select_adapter
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.vendors.dell import DellAdapter
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.vendors.generic import GenericAdapter
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.vendors.hpe import HpeAdapter
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.vendors.inspur import InspurAdapter
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.vendors.lenovo import LenovoAdapter
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.vendors.nvidia import NvidiaAdapter, NvidiaDgxAdapter
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.vendors.supermicro import SupermicroAdapter

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "redfish")
REDFISH = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "collections", "ansible_collections", "zhisuan",
                       "ops", "plugins", "module_utils", "_redfish")
TREES = {"dgx": "nvidia-dgx-h100-viking", "gb200": "nvidia-gb200-nvl", "dell": "dell-poweredge-r750-h100-pcie",
         "dmtf": "dmtf-public-rackmount1"}
SYSTEMS = {"dgx": ["DGX", "HGX_Baseboard_0"], "gb200": ["System_0", "HGX_Baseboard_0"], "dell": ["System.Embedded.1"],
           "dmtf": ["437XR1138R2"]}
BIOS = {"dgx": "Systems/DGX/Bios", "gb200": "Systems/System_0/Bios", "dell": "Systems/System.Embedded.1/Bios",
        "dmtf": "Systems/437XR1138R2/Bios"}
DMTF_ALLOWED = ["On", "ForceOff", "GracefulShutdown", "GracefulRestart", "ForceRestart", "Nmi", "ForceOn", "PushPowerButton"]
DELL_ALLOWED = ["On", "ForceOff", "ForceRestart", "GracefulRestart", "GracefulShutdown", "PushPowerButton", "Nmi", "PowerCycle"]


def load(tree, path=""):
    with open(os.path.join(FIXTURES, TREES[tree], path, "index.json"), "rb") as handle:
        return json.loads(handle.read().decode("utf-8"))


def service_of(tree):
    return load(tree), [load(tree, "Systems/" + ident) for ident in SYSTEMS[tree]]


@pytest.mark.parametrize("tree, adapter, name", [
    ("dgx", NvidiaDgxAdapter, "nvidia"),
    ("gb200", NvidiaAdapter, "nvidia"),
    ("dell", DellAdapter, "dell"),
    ("dmtf", GenericAdapter, "generic"),
])
def test_each_captured_service_gets_its_adapter(tree, adapter, name):
    chosen = select_adapter(*service_of(tree))
    assert type(chosen) is adapter and chosen.name == name


@pytest.mark.parametrize("adapter", [HpeAdapter, LenovoAdapter, SupermicroAdapter, InspurAdapter])
@pytest.mark.parametrize("tree", sorted(TREES))
def test_adapters_without_a_capture_claim_none_of_the_captured_services(adapter, tree):
    assert adapter.matches(*service_of(tree)) is False


def test_generic_comes_last_and_every_adapter_has_a_distinct_name():
    assert ADAPTERS[-1] is GenericAdapter
    assert sorted(set(adapter.name for adapter in ADAPTERS)) == ["dell", "generic", "hpe", "inspur", "lenovo", "nvidia", "supermicro"]


def test_primary_system_and_gpu_systems_of_nvidia():
    root, systems = service_of("dgx")
    adapter = select_adapter(root, systems)
    primary = adapter.primary_system(list(reversed(systems)))
    assert transform.resource_id(primary) == "DGX"
    assert [transform.resource_id(item) for item in adapter.processor_systems(systems, primary)] == ["DGX", "HGX_Baseboard_0"]
    generic = GenericAdapter()
    assert [transform.resource_id(item) for item in generic.processor_systems(systems, systems[0])] == ["DGX"]


# -- settings hooks on captured Bios resources ----------------------------------------------------------------------

@pytest.mark.parametrize("adapter, tree, settings, pending", [
    (GenericAdapter(), "dmtf", "/redfish/v1/Systems/437XR1138R2/Bios/Settings", "/redfish/v1/Systems/437XR1138R2/Bios/Settings"),
    (NvidiaDgxAdapter(), "dgx", "/redfish/v1/Systems/DGX/Bios/SD", "/redfish/v1/Systems/DGX/Bios/SD"),
    (NvidiaAdapter(), "gb200", "/redfish/v1/Systems/System_0/Bios/Settings", "/redfish/v1/Systems/System_0/Bios/Settings"),
    (DellAdapter(), "dell", "/redfish/v1/Systems/System.Embedded.1/Bios/Settings", "/redfish/v1/Systems/System.Embedded.1/Bios/Settings"),
    # the hooks of adapters without a capture, on the DMTF Bios resource (a path is all they build)
    (LenovoAdapter(), "dmtf", "/redfish/v1/Systems/437XR1138R2/Bios/Pending", "/redfish/v1/Systems/437XR1138R2/Bios/Pending"),
    (SupermicroAdapter(), "dmtf", "/redfish/v1/Systems/437XR1138R2/Bios", "/redfish/v1/Systems/437XR1138R2/Bios/SD"),
    (HpeAdapter(), "dmtf", "/redfish/v1/Systems/437XR1138R2/Bios/Settings", "/redfish/v1/Systems/437XR1138R2/Bios/Settings"),
])
def test_bios_settings_locations(adapter, tree, settings, pending):
    bios = load(tree, BIOS[tree])
    assert adapter.bios_settings_uri(bios) == settings
    assert adapter.bios_pending_uri(bios) == pending


def test_bios_settings_object_is_followed_where_the_bios_names_one():
    bios = load("dgx", BIOS["dgx"])
    assert GenericAdapter().bios_settings_uri(bios) == "/redfish/v1/Systems/DGX/Bios/SD"
    del bios["@Redfish.Settings"]  # edited: a Bios resource that names no settings object
    assert GenericAdapter().bios_settings_uri(bios) == "/redfish/v1/Systems/DGX/Bios/Settings"


def test_bios_bodies():
    assert GenericAdapter().bios_patch_body({"A": 1}) == {"Attributes": {"A": 1}}
    assert DellAdapter().bios_patch_body({"A": 1}) == {"@Redfish.SettingsApplyTime": {"ApplyTime": "OnReset"}, "Attributes": {"A": 1}}


@pytest.mark.parametrize("adapter, tree, system, expected", [
    (GenericAdapter(), "dell", "System.Embedded.1", "/redfish/v1/Systems/System.Embedded.1"),
    (NvidiaDgxAdapter(), "dgx", "DGX", "/redfish/v1/Systems/DGX/SD"),
    (NvidiaAdapter(), "gb200", "System_0", "/redfish/v1/Systems/System_0/Settings"),
])
def test_boot_override_location(adapter, tree, system, expected):
    assert adapter.boot_uri(load(tree, "Systems/" + system)) == expected


# -- power ----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("adapter, state, allowed, expected", [
    (GenericAdapter(), "power_cycle", DMTF_ALLOWED, ["ForceOff", "On"]),
    (GenericAdapter(), "power_cycle", DELL_ALLOWED, ["PowerCycle"]),
    (GenericAdapter(), "power_cycle", None, ["ForceOff", "On"]),
    (DellAdapter(), "power_cycle", None, ["PowerCycle"]),
    (NvidiaDgxAdapter(), "power_cycle", None, ["ForceOff", "On"]),
    (GenericAdapter(), "graceful_off", DMTF_ALLOWED, ["GracefulShutdown"]),
    (GenericAdapter(), "on", ["ForceOn", "ForceOff"], ["ForceOn"]),
    (GenericAdapter(), "force_restart", None, ["ForceRestart"]),
])
def test_reset_types(adapter, state, allowed, expected):
    assert adapter.reset_types(state, allowed) == expected


def test_reset_type_not_offered():
    with pytest.raises(BMCError) as info:
        GenericAdapter().reset_types("power_cycle", ["On", "GracefulShutdown"])
    assert info.value.message == ("redfish: the BMC does not offer ResetType ForceOff for force_off "
                                  "(it offers: On, GracefulShutdown)")


# -- firmware and values --------------------------------------------------------------------------------------------

def test_dell_keeps_the_installed_images_only():
    collection = load("dell", "UpdateService/FirmwareInventory")
    items = [{"Id": member["@odata.id"].rsplit("/", 1)[1]} for member in collection["Members"]]
    kept = [item["Id"] for item in items if DellAdapter().keep_firmware(item, items)]
    assert len(items) == 29 and len(kept) == 21
    assert all(ident.startswith("Installed-") for ident in kept)
    assert GenericAdapter().keep_firmware(items[0], items) is True


def test_nvidia_drops_the_gb200_prefix_only():
    assert NvidiaAdapter().version("GB200Nvl-24.12-8") == "24.12-8"
    assert NvidiaAdapter().version("HGX-22.10-1-rc57") == "HGX-22.10-1-rc57"
    assert NvidiaAdapter().version(None) is None
    assert GenericAdapter().version("GB200Nvl-24.12-8") == "GB200Nvl-24.12-8"


def test_inspur_bios_version_without_build_time():
    """The DMTF system with its BiosVersion edited to the NF5280M5 value quoted in bb-Ricardo/check_redfish#72."""
    system = load("dmtf", "Systems/437XR1138R2")
    system["BiosVersion"] = "4.1.20 (2021/07/16 17:09:46)"
    assert InspurAdapter().system_facts(system)["bios_version"] == "4.1.20"
    assert GenericAdapter().system_facts(system)["bios_version"] == "4.1.20 (2021/07/16 17:09:46)"


# -- the shared code asks no vendor -------------------------------------------------------------------------------------

def test_shared_code_does_not_branch_on_the_vendor():
    """No comparison in the shared _redfish files (vendors/ excluded) involves a vendor's name."""
    vendors = re.compile(r"\b(dell|idrac|nvidia|dgx|hgx|gb200|hpe|ilo|lenovo|xcc|supermicro|inspur|ami)\b", re.IGNORECASE)
    offenders = []
    for name in sorted(os.listdir(REDFISH)):
        if not name.endswith(".py"):
            continue
        with open(os.path.join(REDFISH, name)) as handle:
            tree = ast.parse(handle.read())
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare):
                for operand in [node.left] + node.comparators:
                    for leaf in ast.walk(operand):
                        if isinstance(leaf, ast.Constant) and isinstance(leaf.value, str) and vendors.search(leaf.value):
                            offenders.append("%s:%d" % (name, node.lineno))
    assert offenders == []
    # and the guard does see such a branch
    sample = ast.parse("if vendor == 'Dell':\n    pass\n")
    assert any(isinstance(node, ast.Compare) and vendors.search(node.comparators[0].value) for node in ast.walk(sample))
