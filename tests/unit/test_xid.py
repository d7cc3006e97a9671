# SPDX-License-Identifier: GPL-3.0-or-later
"""The Xid parser on every real kernel log of tests/fixtures/kernel-log, and on the other log forms made by editing
those captures' time prefixes into the form the tool prints (each edit is described where it is made)."""

from __future__ import annotations

import collections
import os
import re
import time

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import nvidia_smi, xid

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "kernel-log")
LARGE = "dmesg-decode-iso-xid13-xid43-large.log"
CTIME_119 = "dmesg-ctime-xid119-gsp-rpc-timeout-xe9680.log"
KMSG = "dev-kmsg-nvswitch.log"

CTIME_119_TIMES = ["2025-02-23T16:24:18", "2025-02-23T16:24:24", "2025-02-23T16:24:30", "2025-02-23T16:27:12",
                   "2025-02-23T16:30:13"]
CTIME_119_PIDS = [2024380, 2024380, 2024380, 1263500, 1240590]
CTIME_119_PROCESSES = ["nvidia-smi", "nvidia-smi", "nvidia-smi", "cache_mgr_main", "gpud"]
CTIME_RE = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\] (.*)$")


def read(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        return handle.read()


def parse(text):
    warnings = []
    result = xid.parse(text, warn=warnings.append)
    return result, warnings


def codes(result):
    return dict(collections.Counter(event["code"] for event in result["events"]))


def as_journal_short_iso(ctime_text, host="xe9680", colon=False, precise=False):
    """Edit the ctime capture's prefixes into journalctl -o short-iso's (systemd 252: '%Y-%m-%dT%H:%M:%S%z host
    kernel: '; newer systemd prints the zone as +00:00). Checked when this test was written: for these 43 lines the
    result equals, byte for byte, what systemd 252's journalctl printed for a journal made of them (UTC)."""
    out = []
    for line in ctime_text.splitlines():
        stamp, message = CTIME_RE.match(line).groups()
        when = time.strftime("%Y-%m-%dT%H:%M:%S", time.strptime(stamp, "%a %b %d %H:%M:%S %Y"))
        if precise:
            when += ".000000"
        out.append("%s%s %s kernel: %s" % (when, "+00:00" if colon else "+0000", host, message))
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------------------------- the real captures

def test_large_dmesg_decode_iso_log():
    result, warnings = parse(read(LARGE))
    assert warnings == []
    assert result["lines"] == 636
    assert codes(result) == {13: 629, 43: 7}
    assert result["unparsed"] == []
    assert set(event["pci_bus_id"] for event in result["events"]) == {"0000:38:00.0"}


def test_large_log_first_and_last_events():
    events = parse(read(LARGE))[0]["events"]
    first, last = events[0], events[-1]
    assert first["time"] == "2025-01-21T02:21:33.498559+00:00"
    assert first["uptime_s"] is None
    assert (first["code"], first["pid"], first["process"]) == (13, None, None)
    assert first["text"] == "Graphics SM Warp Exception on (GPC 8, TPC 5, SM 0): Out Of Range Address"
    assert last["time"] == "2025-01-21T04:41:44.287197+00:00"
    assert (last["code"], last["pid"], last["process"], last["text"]) == (43, 2924364, "pt_main_thread", "Ch 00000008")
    assert last["line"] == ("kern  :warn  : 2025-01-21T04:41:44,287197+00:00 NVRM: Xid (PCI:0000:38:00): 43, "
                            "pid=2924364, name=pt_main_thread, Ch 00000008")
    assert [e["pid"] for e in events if e["code"] == 43] == [2815167, 2823801, 2839444, 2877200, 2886782, 2897677,
                                                             2924364]


def test_dmesg_ctime_xid119_capture():
    result, warnings = parse(read(CTIME_119))
    assert warnings == []
    assert result["lines"] == 43
    assert codes(result) == {119: 5}
    events = result["events"]
    assert [e["time"] for e in events] == CTIME_119_TIMES
    assert [e["pid"] for e in events] == CTIME_119_PIDS
    assert [e["process"] for e in events] == CTIME_119_PROCESSES
    assert set(e["pci_bus_id"] for e in events) == {"0000:9B:00.0"}
    assert events[0]["text"] == ("Timeout after 6s of waiting for RPC response from GPU4 GSP! Expected function 103 "
                                 "(GSP_RM_ALLOC) (0x2081 0x4).")
    assert all(e["recovery_action"] is None and e["nvlink5"] is None for e in events)


@pytest.mark.parametrize("name, lines", [
    (KMSG, 47),
    ("nvidia-fabricmanager.log", 101),
    ("syslog-ib-link-flap-ib6.txt", 14),
])
def test_logs_without_xid_lines(name, lines):
    result, warnings = parse(read(name))
    assert (result["lines"], result["events"], result["unparsed"], warnings) == (lines, [], [], [])


def test_kmsg_record_gives_uptime():
    # the first record of the real /dev/kmsg capture, its message replaced by the large log's first Xid message
    record = read(KMSG).splitlines()[0]
    message = read(LARGE).splitlines()[0].split("+00:00 ", 1)[1]
    assert record.startswith("6,3964,206764307,-;") and message.startswith("NVRM: Xid (PCI:0000:38:00): 13,")
    event = xid.parse_line(record.split(";", 1)[0] + ";" + message)
    assert (event["time"], event["uptime_s"], event["code"], event["pci_bus_id"]) == (None, 206.764307, 13, "0000:38:00.0")


# ----------------------------------------------------------------------------------- the journalctl forms

@pytest.mark.parametrize("colon, precise, first_time", [
    (False, False, "2025-02-23T16:24:18+00:00"),
    (True, False, "2025-02-23T16:24:18+00:00"),
    (False, True, "2025-02-23T16:24:18.000000+00:00"),
])
def test_journalctl_short_iso(colon, precise, first_time):
    result, warnings = parse(as_journal_short_iso(read(CTIME_119), colon=colon, precise=precise))
    assert warnings == []
    assert result["lines"] == 43
    assert codes(result) == {119: 5}
    events = result["events"]
    assert events[0]["time"] == first_time
    assert [e["time"][:19] for e in events] == CTIME_119_TIMES
    assert [(e["pid"], e["process"]) for e in events] == list(zip(CTIME_119_PIDS, CTIME_119_PROCESSES))
    assert events[0]["line"].startswith("2025-02-23T16:24:18")


def test_journalctl_short_form_has_no_year():
    # journalctl -o short / syslog: "Feb 23 16:24:18 xe9680 kernel: ..." (systemd's "%b %d %H:%M:%S")
    text = "\n".join("Feb 23 %s xe9680 kernel: %s" % (CTIME_RE.match(line).group(1)[11:19], CTIME_RE.match(line).group(2))
                     for line in read(CTIME_119).splitlines())
    result, warnings = parse(text)
    assert codes(result) == {119: 5}
    assert [(e["time"], e["uptime_s"]) for e in result["events"]] == [(None, None)] * 5


def test_dmesg_iso_without_decode():
    # dmesg --time-format=iso without --decode prints the same line without the "kern  :warn  : " prefix
    text = "\n".join(line[len("kern  :warn  : "):] for line in read(LARGE).splitlines())
    result, _ = parse(text)
    assert codes(result) == {13: 629, 43: 7}
    assert result["events"][0]["time"] == "2025-01-21T02:21:33.498559+00:00"


def test_plain_dmesg_uptime_and_rsyslog_forms():
    message = read(CTIME_119).splitlines()[2][27:]
    assert message.startswith("NVRM: Xid (PCI:0000:9b:00): 119,")
    plain = xid.parse_line("[57631.398464] " + message)
    rsyslog = xid.parse_line("Feb 23 16:24:18 xe9680 kernel: [57631.398464] " + message)
    for event in (plain, rsyslog):
        assert (event["uptime_s"], event["code"], event["pid"]) == (57631.398464, 119, 2024380)


# ------------------------------------------------------------------------------ fields of special codes

def edited(code, text, line_no=2):
    """A real Xid line of the ctime capture with its code and the text after the code replaced."""
    line = read(CTIME_119).splitlines()[line_no]
    head = line[:line.index("): 119, ") + 3]
    return "%s%d, %s" % (head, code, text)


@pytest.mark.parametrize("text, action", [
    # texts as printed by drivers in public reports (journal excerpts quoted in blog posts and issues)
    ("GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)",
     {"from_code": 0, "from": "None", "to_code": 2, "to": "Node Reboot Required"}),
    ("GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)",
     {"from_code": 0, "from": "None", "to_code": 1, "to": "GPU Reset Required"}),
    ("GPU recovery action changed from 0x0 (None) to 0x4 (Drain and Reset)",
     {"from_code": 0, "from": "None", "to_code": 4, "to": "Drain and Reset"}),
    ("GPU recovery action changed from 0x0 (None) to 0x2 (OS Reboot)",
     {"from_code": 0, "from": "None", "to_code": 2, "to": "OS Reboot"}),
    ("GPU recovery action changed from 0x0 (None) to 0x1 (PF FLR)",
     {"from_code": 0, "from": "None", "to_code": 1, "to": "PF FLR"}),
])
def test_xid_154_recovery_action(text, action):
    event = xid.parse_line(edited(154, text))
    assert event["code"] == 154
    assert event["recovery_action"] == action
    assert (event["pid"], event["process"], event["text"]) == (None, None, text)


def test_xid_154_without_action_text():
    assert xid.parse_line(edited(154, "something else"))["recovery_action"] is None


@pytest.mark.parametrize("code, text, fields", [
    # lines as printed on NVLink5 systems, quoted in leptonai/gpud components/accelerator/nvidia/xid/kmsg_extended_test.go
    (145, "pid=876767, name=ray::WorkerDict, RLW_RXPIPE Nonfatal XC0 i0 Link 13 "
          "(0x0409a0c2 0x00000008 0x00000001 0x00000000 0x00100000 0x00000004)",
     {"unit": "RLW_RXPIPE", "severity": "Nonfatal", "xc": "XC0", "instance": "i0", "link": 13,
      "intr_info": "0x0409a0c2", "error_status": "0x00000008",
      "words": ["0x0409a0c2", "0x00000008", "0x00000001", "0x00000000", "0x00100000", "0x00000004"]}),
    (149, "NETIR_LINK_EVT Fatal XC0 i0 Link 08 (0x004505c6 0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)",
     {"unit": "NETIR_LINK_EVT", "severity": "Fatal", "xc": "XC0", "instance": "i0", "link": 8,
      "intr_info": "0x004505c6", "error_status": "0x00000000", "words": ["0x004505c6"] + ["0x00000000"] * 5}),
    (149, "NETIR Fatal XC0 i0 Link -1 (0x000fe406 0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)",
     {"unit": "NETIR", "severity": "Fatal", "xc": "XC0", "instance": "i0", "link": -1,
      "intr_info": "0x000fe406", "error_status": "0x00000000", "words": ["0x000fe406"] + ["0x00000000"] * 5}),
])
def test_nvlink5_decode_fields(code, text, fields):
    event = xid.parse_line(edited(code, text))
    assert event["code"] == code
    assert event["nvlink5"] == fields


def test_nvlink5_line_without_fields():
    # cut after the first word, as a truncated line would be
    assert xid.parse_line(edited(149, "NETIR Fatal XC0 i0 Link -1 (0x000fe406"))["nvlink5"] is None


# ---------------------------------------------------------------------------------------- odd input

def test_bus_id_normalised_like_gpu_facts():
    for raw in ("00000000:19:00.0", "00000000:3B:00.0", "0000:4c:00.0"):
        assert xid.normalize_bus_id(raw) == nvidia_smi._bus_id(raw)
    assert xid.normalize_bus_id("PCI:0000:9b:00") == "0000:9B:00.0"
    assert xid.normalize_bus_id("0018:01:00") == "0018:01:00.0"
    assert xid.normalize_bus_id("9b:00") is None


def test_unparsable_xid_line_warns_and_is_kept():
    good = read(CTIME_119).splitlines()[2]
    bad = good.replace("): 119, ", "): abc, ")
    result, warnings = parse("\n".join([read(KMSG).splitlines()[0], good, bad]))
    assert [e["code"] for e in result["events"]] == [119]
    assert result["unparsed"] == [bad]
    assert result["lines"] == 3
    assert warnings == ["kernel log line 3 mentions 'NVRM: Xid' but is not an Xid line this collection can read; "
                        "please report: %s" % bad]


def test_empty_and_none_input():
    empty = {"lines": 0, "events": [], "unparsed": [], "sxid_events": [], "sxid_unparsed": []}
    assert xid.parse("") == empty
    assert xid.parse(None) == empty


def test_crlf_lines():
    text = read(CTIME_119).replace("\n", "\r\n")
    result, _ = parse(text)
    assert codes(result) == {119: 5}
    assert not result["events"][-1]["line"].endswith("\r")


def test_time_key():
    assert xid.time_key({"time": "2025-01-21T02:21:33.498559+00:00"}) == ("t", 1737426093.498559)
    assert xid.time_key({"time": "2025-01-21T03:21:33+01:00"}) == ("t", 1737426093.0)
    assert xid.time_key({"time": "2025-01-21T02:21:33"}) == ("t", 1737426093.0)
    assert xid.time_key({"time": None, "uptime_s": 12.5}) == ("u", 12.5)
    assert xid.time_key({"time": None, "uptime_s": None}) is None
