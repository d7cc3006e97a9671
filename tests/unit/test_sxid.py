# SPDX-License-Identifier: GPL-3.0-or-later
"""NVSwitch SXid (issue 24 item 2) and event floods (item 8): the real HGX kernel log with Xid 79 and SXid 20034
(tests/fixtures/kernel-log/dmesg-xid79-sxid20034-hgx.log), faults made by editing it, the SXid catalog and its
site override, and a flood of one real Xid line that stays one check with a count, first and last seen."""

from __future__ import annotations

import os

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import xid
from ansible_collections.zhisuan.ops.plugins.module_utils._judge.xid import judge_xid
from ansible_collections.zhisuan.ops.plugins.plugin_utils._xid_catalog import CatalogError, load_catalog, load_sxid_catalog

HERE = os.path.dirname(__file__)
KERNEL_LOG = os.path.join(HERE, os.pardir, "fixtures", "kernel-log")
CAPTURE = "dmesg-xid79-sxid20034-hgx.log"
CATALOG = load_catalog()


def read(name):
    with open(os.path.join(KERNEL_LOG, name), encoding="utf-8") as handle:
        return handle.read()


def facts_of(text):
    log = xid.LogFilter()
    for raw in text.splitlines():
        log.feed(raw)
    out = log.facts()
    out.update(source="file", since=None, outside_window=0, command=None, fallback=None)
    return out


def sxid_checks(text, catalog=CATALOG):
    checks = judge_xid("hgx01", facts_of(text), catalog)
    return [check for check in checks if check["id"].startswith("xid.sxid.")], checks


def test_the_real_capture_parses_into_reports_and_detail_lines():
    parsed = xid.parse(read(CAPTURE))
    assert [event["code"] for event in parsed["events"]] == [79]
    assert parsed["sxid_unparsed"] == []
    events = parsed["sxid_events"]
    assert len(events) == 8 and set(event["code"] for event in events) == {20034}
    heads = [event for event in events if event["kind"] == "event"]
    assert [(event["switch"], event["pci_bus_id"], event["severity"], event["link"]) for event in heads] == [
        (1, "0000:06:00.0", "Fatal", 48), (0, "0000:05:00.0", "Fatal", 63), (2, "0000:07:00.0", "Fatal", 37),
        (0, "0000:05:00.0", "Fatal", 62)]
    assert heads[0]["text"] == "LTSSM Fault Up" and heads[0]["uptime_s"] == pytest.approx(6781753.400584)
    details = [event for event in events if event["kind"] == "detail"]
    assert details[0]["text"] == "Severity 1 Engine instance 60 Sub-engine instance 00"
    assert details[1]["text"].startswith("Data {0x10000000, ")


def test_the_real_capture_fails_each_nvswitch_and_pairs_it_with_xid_79():
    checks, everything = sxid_checks(read(CAPTURE))
    assert [(check["component"], check["status"], check["remedy"], check["observed"]) for check in checks] == [
        ("NVSwitch 0 at 0000:05:00.0", "fail", "power_cycle", 2), ("NVSwitch 1 at 0000:06:00.0", "fail", "power_cycle", 1),
        ("NVSwitch 2 at 0000:07:00.0", "fail", "power_cycle", 1)]
    assert all(check["id"] == "xid.sxid.20034" for check in checks)
    assert "beside Xid 79 on the GPU at 0000:91:00.0 within 300 s" in checks[0]["message"]
    assert "LTSSM Fault Up" in checks[0]["message"] and "catalog v1.0.0" in checks[0]["message"]
    assert "2 reports in all (and 2 lines of detail), first 6781753.404587 s after boot" in checks[0]["evidence"]
    readable = [check for check in everything if check["id"] == "xid.log.readable"][0]
    assert "4 NVSwitch SXid reports (SXid 20034)" in readable["message"]


def test_without_the_xid_79_a_fatal_sxid_resets_the_gpus_and_nvswitches():
    text = "\n".join(raw for raw in read(CAPTURE).splitlines() if "NVRM: Xid" not in raw)
    checks, _ = sxid_checks(text)
    assert set((check["status"], check["remedy"]) for check in checks) == {("fail", "reset_gpu")}
    assert "no Xid 74/79 on the host's GPUs within 300 s" in checks[0]["message"]


def test_beside_an_xid_74_the_two_are_one_nvlink_fault():
    text = read(CAPTURE).replace("): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
                                 "): 74, pid='<unknown>', name=<unknown>, NVLink: fatal error detected on link 5")
    checks, everything = sxid_checks(text)
    assert set((check["status"], check["remedy"]) for check in checks) == {("fail", "reset_gpu")}
    assert "beside Xid 74" in checks[0]["message"] and "one remedy for both" in checks[0]["message"]
    assert [check["id"] for check in everything if check["id"].startswith("xid.7")] == ["xid.74.events"]


def test_an_xid_outside_the_window_is_not_a_pair():
    text = read(CAPTURE).replace("[6781741.548779] NVRM: Xid", "[6780741.548779] NVRM: Xid")
    checks, _ = sxid_checks(text)
    assert set(check["remedy"] for check in checks) == {"reset_gpu"}


def test_an_always_fatal_sxid_reboots_the_host():
    text = read(CAPTURE).replace("): 20034, Fatal, Link 48 LTSSM Fault Up", "): 22003, Fatal, Link 48 Minion Halt")
    checks, _ = sxid_checks(text)
    halt = [check for check in checks if check["id"] == "xid.sxid.22003"]
    assert len(halt) == 1 and (halt[0]["status"], halt[0]["remedy"]) == ("fail", "reboot")
    assert "always fatal" in halt[0]["message"]


def test_a_corrected_or_ignorable_sxid_passes_and_a_non_fatal_one_warns():
    base = "\n".join(raw for raw in read(CAPTURE).splitlines() if "NVRM" not in raw and "Link 48" in raw)
    ignorable = base.replace("20034, Fatal, Link 48 LTSSM Fault Up", "22013, Non-fatal, Link 48 Minion Link DLREQ interrupt")
    (check,), _ = sxid_checks(ignorable)
    assert (check["id"], check["status"], check["remedy"]) == ("xid.sxid.22013", "pass", "none")
    replay = base.replace("20034, Fatal, Link 48 LTSSM Fault Up", "20001, Non-fatal, Link 48 TX Replay Error")
    (check,), _ = sxid_checks(replay)
    assert (check["status"], check["remedy"]) == ("warn", "monitor")
    marked = base.replace("20034, Fatal, Link 48 LTSSM Fault Up", "20001, Fatal, Link 48 TX Replay Error")
    (check,), _ = sxid_checks(marked)
    assert (check["status"], check["remedy"]) == ("fail", "reset_gpu") and "marked it Fatal" in check["message"]


def test_an_unknown_sxid_is_judged_by_the_drivers_word_and_named():
    base = "\n".join(raw for raw in read(CAPTURE).splitlines() if "Link 48" in raw)
    (check,), _ = sxid_checks(base.replace("20034, Fatal", "29999, Non-fatal"))
    assert (check["status"], check["remedy"]) == ("warn", "investigate")
    assert "SXid 29999 is not in SXid catalog v1.0.0" in check["message"]
    (check,), _ = sxid_checks(base.replace("20034, Fatal", "29999, Fatal"))
    assert (check["status"], check["remedy"]) == ("fail", "reset_gpu")


def test_an_unreadable_sxid_line_is_a_warning_not_silence():
    text = read(CAPTURE).replace("SXid (PCI:0000:06:00.0): 20034,", "SXid (PCI:0000:06:00.0): xyz,")
    warnings = []
    assert len(xid.parse(text, warn=warnings.append)["sxid_unparsed"]) == 1
    assert "not an NVSwitch SXid line" in warnings[0]
    checks, _ = sxid_checks(text)
    readable = [check for check in checks if check["id"] == "xid.sxid.readable"]
    assert len(readable) == 1 and readable[0]["status"] == "warn" and readable[0]["observed"] == 1


@pytest.mark.parametrize("name", sorted(n for n in os.listdir(KERNEL_LOG) if n.endswith((".log", ".txt")) and n != CAPTURE))
def test_the_captures_without_sxid_get_no_sxid_check(name):
    checks, _ = sxid_checks(read(name))
    assert checks == []


def test_the_site_override_changes_a_row_and_the_version():
    catalog = load_catalog(overrides={"version": "dc1", "sxid": {"version": "dc1", "codes": {20034: {"remedy": "reboot"}}}})
    assert catalog["sxid"]["version"] == "1.0.0+dc1"
    text = "\n".join(raw for raw in read(CAPTURE).splitlines() if "NVRM: Xid" not in raw)
    checks, _ = sxid_checks(text, catalog)
    assert set(check["remedy"] for check in checks) == {"reboot"}
    assert "SXid catalog v1.0.0+dc1" in checks[0]["message"]


@pytest.mark.parametrize("override, message", [
    ({"codes": {20034: {"class": "deadly"}}}, "SXid 20034: class is 'deadly'"),
    ({"codes": {20034: {"remedy": "pray"}}}, "remedy is 'pray'"),
    ({"codes": {30001: {"name": "new"}}}, "SXid 30001 is missing class, source"),
    ({"codez": {}}, "unknown key(s) codez"),
])
def test_a_bad_sxid_override_names_what_is_wrong(override, message):
    with pytest.raises(CatalogError) as info:
        load_catalog(overrides={"sxid": override})
    assert message in str(info.value) and "sxid" in str(info.value)


def test_the_shipped_sxid_catalog_keeps_nvidias_classes():
    catalog = load_sxid_catalog()
    rows = catalog["codes"]
    assert len(rows) >= 90
    assert (rows[20034]["class"], rows[20034]["pairs_with"]) == ("fatal", [74, 79])
    assert rows[12020]["class"] == "always_fatal" and rows[12020]["remedy"] == "reboot"
    assert rows[11012]["class"] == "corrected" and rows[11012]["severity"] == "info"
    assert rows[24007]["pairs_with"] == [74]


def test_a_flood_of_one_real_xid_line_is_one_check_with_its_count_first_and_last():
    line = read("dmesg-decode-iso-xid13-xid43-large.log").splitlines()[0]
    last = line.replace("2025-01-21T02:21:33,498559", "2025-01-21T09:00:00,000001")
    log = xid.LogFilter()
    total = 200000
    for number in range(total - 1):
        log.feed(line)
    log.feed(last)
    facts = log.facts()
    assert len(facts["events"]) == xid.MAX_XID_LINES
    assert facts["dropped_lines"] == [{
        "mark": "xid", "pci_bus_id": "0000:38:00.0", "code": 13, "lines": total - xid.MAX_XID_LINES,
        "first": {"time": "2025-01-21T02:21:33.498559+00:00", "uptime_s": None},
        "last": {"time": "2025-01-21T02:21:33.498559+00:00", "uptime_s": None}}]
    facts.update(source="dmesg", since=None, outside_window=0)
    checks = [check for check in judge_xid("node07", facts, CATALOG) if check["id"] == "xid.13.events"]
    assert len(checks) == 1 and checks[0]["observed"] == total
    assert ("200000 lines in all" in checks[0]["evidence"] and "196000 not kept by the node" in checks[0]["evidence"])
    assert "first 2025-01-21T02:21:33.498559+00:00, last 2025-01-21T09:00:00.000001+00:00" in checks[0]["evidence"]
    assert checks[0]["message"].startswith("200000 lines of Xid 13")


def test_an_sxid_flood_is_one_check_per_nvswitch():
    report = [raw for raw in read(CAPTURE).splitlines() if "Link 48" in raw][0]
    log = xid.LogFilter(keep=10)
    for _ in range(5000):
        log.feed(report)
    facts = log.facts()
    assert facts["sxid_lines_dropped"] == 4990 and len(facts["sxid_events"]) == 10
    facts.update(source="dmesg", since=None, outside_window=0)
    checks = [check for check in judge_xid("hgx01", facts, CATALOG) if check["id"].startswith("xid.sxid.")]
    assert len(checks) == 1 and checks[0]["observed"] == 5000 and checks[0]["remedy"] == "reset_gpu"
