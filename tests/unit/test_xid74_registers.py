# SPDX-License-Identifier: GPL-3.0-or-later
"""Xid 74 decoded by its register bits (issue 24 item 7; NVIDIA's WORKFLOW_NVLINK_ERR, data/xid_catalog.yml
``nvlink_error_registers``): the real GH200 line (tests/fixtures/kernel-log/dmesg-xid74-nvlink-registers-gh200.log)
and edits of its register values; a GPU the table does not apply to keeps the catalog row's verdict."""

from __future__ import annotations

import copy
import os

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import xid
from ansible_collections.zhisuan.ops.plugins.module_utils._judge.xid import judge_xid
from ansible_collections.zhisuan.ops.plugins.plugin_utils._xid_catalog import CatalogError, load_catalog

HERE = os.path.dirname(__file__)
CAPTURE = os.path.join(HERE, os.pardir, "fixtures", "kernel-log", "dmesg-xid74-nvlink-registers-gh200.log")
CATALOG = load_catalog()
REGISTERS = "(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)"
GH200 = {"gpus": [{"index": 0, "pci_bus_id": "0003:00:00.0", "uuid": "GPU-1", "name": "NVIDIA GH200 480GB"}]}
A100 = {"gpus": [{"index": 0, "pci_bus_id": "0003:00:00.0", "uuid": "GPU-1", "name": "NVIDIA A100-SXM4-80GB"}]}


def read():
    with open(CAPTURE, encoding="utf-8") as handle:
        return handle.read()


def with_registers(registers, times=1, gap_s=60):
    """The real line with its register values edited, repeated ``times`` (``gap_s`` apart in its uptime stamp)."""
    line = read().rstrip("\n").replace(REGISTERS, registers)
    assert registers in line
    stamp = 449410.332316
    return "\n".join(line.replace("[449410.332316]", "[%.6f]" % (stamp + n * gap_s)) for n in range(times)) + "\n"


def xid74(text, gpu_facts=GH200, catalog=CATALOG):
    log = xid.LogFilter()
    for raw in text.splitlines():
        log.feed(raw)
    facts = log.facts()
    facts.update(source="file", since=None, outside_window=0, command=None, fallback=None)
    checks = [check for check in judge_xid("gh01", facts, catalog, gpu_facts=gpu_facts) if check["id"] == "xid.74.events"]
    assert len(checks) == 1, checks
    return checks[0]


def test_the_real_line_gives_the_link_and_the_seven_registers():
    events = xid.parse(read())["events"]
    assert [(event["code"], event["pci_bus_id"], event["nvlink_error"]) for event in events] == [
        (74, "0003:00:00.0", {"link": 14, "registers": [0, 0, 0x10000, 0, 0, 0, 0]})]


def test_a_line_naming_the_link_alone_has_no_registers_and_other_codes_no_key():
    event = xid.parse_line(read().rstrip("\n").replace(REGISTERS, ""))
    assert event["nvlink_error"] == {"link": 14, "registers": None}
    other = xid.parse_line(read().rstrip("\n").replace("): 74,", "): 79,"))
    assert other["code"] == 79 and "nvlink_error" not in other


def test_the_real_line_third_register_bit_16_once_is_watched():
    check = xid74(read())
    assert (check["status"], check["remedy"]) == ("warn", "monitor")
    assert "register 3 bit 16 on link 14 (1 line)" in check["message"]
    assert "registers decoded for NVIDIA GH200 480GB" in check["message"]


def test_the_same_bit_repeated_asks_for_field_diagnostics():
    check = xid74(with_registers(REGISTERS, times=2))
    assert (check["status"], check["remedy"]) == ("warn", "investigate")
    assert "run field diagnostics" in check["message"]


@pytest.mark.parametrize("registers, status, remedy, words", [
    ("(0x10000, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0)", "fail", "reseat", "mechanical connections"),
    ("(0x1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0)", "pass", "none", "can be safely ignored"),
    ("(0x0, 0x0, 0x0, 0x40000, 0x0, 0x0, 0x0)", "fail", "reset_gpu", "reset of the fabric"),
    ("(0x2, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0)", "warn", "investigate", "seen alone, report it"),
    ("(0x400000, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0)", "warn", "reseat", "signal-integrity"),
    ("(0x0, 0x0, 0x2000, 0x0, 0x0, 0x0, 0x0)", "warn", "investigate", "not expected in production"),
    ("(0x0, 0x0, 0x0, 0x0, 0x100000, 0x0, 0x0)", "pass", "none", "continue operation"),
    ("(0x400, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0)", "warn", "investigate", "register 1 bit 10 on link 14: not in NVIDIA"),
    # the second, sixth and seventh registers are not read on Hopper: a value there decides nothing
    ("(0x0, 0xffff, 0x0, 0x0, 0x0, 0x1, 0x1)", "pass", "none", "no bit that asks for action"),
])
def test_each_bit_group_has_its_verdict(registers, status, remedy, words):
    check = xid74(with_registers(registers))
    assert (check["status"], check["remedy"]) == (status, remedy), check["message"]
    assert words in check["message"], check["message"]


def test_a_sympathetic_bit_beside_a_mechanical_one_is_secondary():
    check = xid74(with_registers("(0x10002, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0)"))
    assert (check["status"], check["remedy"]) == ("fail", "reseat")
    assert "secondary here" in check["message"]


def test_ecc_parity_bits_fail_only_past_twice_on_one_link():
    twice = xid74(with_registers("(0x10, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0)", times=2))
    assert (twice["status"], twice["remedy"]) == ("warn", "monitor")
    thrice = xid74(with_registers("(0x10, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0)", times=3))
    assert (thrice["status"], thrice["remedy"]) == ("fail", "investigate")
    assert "ECC/parity" in thrice["message"]


@pytest.mark.parametrize("gpu_facts", [A100, None], ids=["a100", "no-gpu-facts"])
def test_a_gpu_the_table_does_not_apply_to_keeps_the_rows_verdict(gpu_facts):
    check = xid74(with_registers("(0x1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0)"), gpu_facts=gpu_facts)
    assert (check["status"], check["remedy"]) == ("fail", "reset_gpu")
    assert "registers decoded" not in check["message"]


def test_a_line_without_registers_keeps_the_rows_verdict():
    check = xid74(read().replace(REGISTERS, ""))
    assert (check["status"], check["remedy"]) == ("fail", "reset_gpu")


def test_a_site_can_replace_the_table_and_a_bad_one_names_its_group():
    table = copy.deepcopy(CATALOG["nvlink_error_registers"])
    for group in table["groups"]:
        group.pop("secondary"), group.pop("repeat_over")
    table["groups"][0] = dict(table["groups"][0], severity="fail", remedy="rma")
    catalog = load_catalog(overrides={"version": "site1", "nvlink_error_registers": table})
    check = xid74(with_registers("(0x1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0)"), catalog=catalog)
    assert (check["status"], check["remedy"]) == ("fail", "rma")
    table["groups"][1] = dict(table["groups"][1], register=2)
    with pytest.raises(CatalogError, match="group 2: register 2 is not one of registers"):
        load_catalog(overrides={"nvlink_error_registers": table})
