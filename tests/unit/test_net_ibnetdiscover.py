# SPDX-License-Identifier: GPL-3.0-or-later
"""Issue 23: the InfiniBand subnet as a whole, from ``ibnetdiscover`` (topology file and ``-p`` ports report).

Inputs are real captures (tests/fixtures/PROVENANCE.md): four topology files from jabl/ibtopotool's tests (the
infiniband-diags man page, an IBM support page's SDR fabric, an NVIDIA support article's UFM lab with a failed-MAD
error line before the output, an Oracle Sun DCS 36 QDR switch) and two ``-p`` reports from
treydock/infiniband_exporter's fixtures (an EDR cluster with a spine uplink and an idle port, an HDR leaf/spine
fabric with SHARP aggregation nodes and names with stray spaces). Faults are edits of those captures.
"""

from __future__ import annotations

import os

import pytest

from ansible_collections.zhisuan.ops.plugins.action.fabric_consistency import fabric_view, load_fabric_view
from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import _ib_cabling
from ansible_collections.zhisuan.ops.plugins.module_utils._net import ibnetdiscover

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "ib")
UFM = "ibnetdiscover-edr-switchib-ufm-nvidia-errline.topo"
IBM = "ibnetdiscover-sdr-mt43132-2ca-ibm.topo"
SUN = "ibnetdiscover-qdr-sun-dcs36-oracle.topo"
MAN = "ibnetdiscover-sdr-voltaire-manpage.topo"
P_EDR = "ibnetdiscover-p-edr-osc-exporter.txt"
P_HDR = "ibnetdiscover-p-hdr-leaf-spine-exporter.txt"
SX6012 = "MF0;switch-de779e:SX6012/U1"
SWITCHIB = "SwitchIB Mellanox Technologies"


def text(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return handle.read()


def links(facts):
    return dict(((link["host"], link["hca"], link["port"]), link) for link in facts["links"])


def by_id(checks):
    return dict((check["id"], check) for check in checks)


def test_topology_file_gives_every_hca_link_with_its_rate_and_the_error_line_is_a_warning():
    warnings = []
    facts = ibnetdiscover.fabric_facts(text(UFM), warn=warnings.append)
    assert facts["tool"] == "ibnetdiscover" and facts["format"] == "full" and facts["partial"] is False
    seen = links(facts)
    assert sorted(seen) == [("r-ufm100", "HCA-2", 1), ("r-ufm101", "HCA-1", 1), ("r-ufm101", "HCA-2", 1),
                            ("r-ufm111", "HCA-1", 2), ("r-ufm216", "HCA-2", 1), ("r-ufm96", "HCA-1", 1)]
    slow = seen[("r-ufm96", "HCA-1", 1)]
    assert (slow["switch"], slow["switch_guid"], slow["switch_port"], slow["width"], slow["speed"], slow["up"]) == (
        SX6012, "0xf4521403005764b0", 8, 4, "SDR", True)
    assert (seen[("r-ufm111", "HCA-1", 2)]["switch"], seen[("r-ufm111", "HCA-1", 2)]["switch_port"]) == (SWITCHIB, 35)
    # the libibumad error line before the output: named, the rest read
    assert len(warnings) == 1 and warnings[0].startswith("ibnetdiscover: unread line 1 'src/query_smp.c:195; umad")
    # the switch links: the SwitchIB's loopback cables and its FDR uplink to the SX6012 (a spine's view of a leaf)
    isl = dict(((l["switch"], l["port"]), l) for l in facts["switch_links"])
    assert (isl[(SWITCHIB, 3)]["peer"], isl[(SWITCHIB, 3)]["peer_port"], isl[(SWITCHIB, 3)]["speed"]) == (SX6012, 1, "FDR")
    assert len(facts["switch_links"]) == 4


@pytest.mark.parametrize("name, expected", [
    (IBM, {("compute-00-00", "HCA-1", 2): ("MT43132 Mellanox Technologies", 2, 4, "SDR"),
           ("compute-00-01", "HCA-1", 1): ("MT43132 Mellanox Technologies", 1, 4, "SDR")}),
    (SUN, {("nsn33-43", "HCA-1", 2): ("Sun DCS 36 QDR switch localhost", 23, 4, "QDR")}),
    (P_EDR, {("o0001", "HCA-1", 1): ("ib-i1l1s01", 10, 4, "EDR"), ("o0002", "HCA-1", 1): ("ib-i1l1s01", 11, 4, "EDR"),
             ("p0001", "HCA-1", 1): ("ib-i4l1s01", 35, 4, "EDR")}),
])
def test_every_capture_gives_its_links(name, expected):
    facts = ibnetdiscover.fabric_facts(text(name))
    got = dict((key, (l["switch"], l["switch_port"], l["width"], l["speed"])) for key, l in links(facts).items())
    assert got == expected


def test_ports_report_reads_names_with_stray_spaces_and_idle_ports():
    facts = ibnetdiscover.fabric_facts(text(P_HDR))
    assert facts["format"] == "ports"
    worker = links(facts)[("worker20", "mlx5_3", 1)]
    assert (worker["switch"], worker["switch_port"], worker["speed"], worker["source"]) == (
        "5FB0405-leaf-IB01", 79, "HDR", "ca")
    topo = ibnetdiscover.parse_ibnetdiscover(text(P_HDR))
    idle = [(n["name"], p["port"]) for n in topo["nodes"] for p in n["ports"] if p["peer_type"] is None]
    assert ("5FB0406-spine-IB02", 1) in idle and ("Infiniscale-IV Mellanox Technologies", 22) in idle


def test_ports_report_spine_uplink_and_idle_port():
    facts = ibnetdiscover.fabric_facts(text(P_EDR))
    [isl] = facts["switch_links"]
    assert (isl["switch"], isl["port"], isl["peer"], isl["peer_port"], isl["width"], isl["speed"]) == (
        "ib-i1l1s01", 1, "ib-i1l2s01", 1, 4, "EDR")


def test_cas_sharing_a_description_are_named_in_a_warning():
    warnings = []
    ibnetdiscover.fabric_facts(text(MAN), warn=warnings.append)
    assert any("share the NodeDescription 'MT23108 InfiniHost Mellanox Technologies'" in w for w in warnings)


def test_a_damaged_line_is_skipped_and_named_the_rest_is_read():
    lines = text(UFM).splitlines(True)
    index = next(i for i, line in enumerate(lines) if '"r-ufm101 HCA-2"' in line and line.startswith("[3]"))
    lines[index] = '[3] "H-0002c9030006ba5a"[1](2c9030006ba5b) # "r-ufm101 HC\ufffd\n'
    warnings = []
    facts = ibnetdiscover.fabric_facts("".join(lines), warn=warnings.append)
    assert any("unread line %d" % (index + 1) in w for w in warnings)
    # the CA's own block still gives its link; the other links are all there
    assert len(facts["links"]) == 6 and links(facts)[("r-ufm101", "HCA-2", 1)]["source"] == "ca"


def test_a_truncated_output_keeps_what_was_read_and_says_so():
    body = text(UFM)
    cut = body[:body.index('[8] "H-e41d2d03005cf1f8"') + 14]
    warnings = []
    facts = ibnetdiscover.fabric_facts(cut, warn=warnings.append)
    assert facts["partial"] is True and any("cut short" in w for w in warnings)
    assert ("r-ufm101", "HCA-1", 1) in links(facts) and ("r-ufm96", "HCA-1", 1) not in links(facts)


def test_no_node_at_all_is_a_parse_error_naming_the_tool():
    with pytest.raises(ParseError) as info:
        ibnetdiscover.fabric_facts("ibwarn: [3027] mad_rpc_open_port: can't open UMAD port ((null):0)\n")
    assert "ibnetdiscover" in str(info.value.message)


@pytest.mark.parametrize("width, speed, expected", [
    ("4X", "25.78125", (4, "EDR")), ("4x", "HDR", (4, "HDR")), ("1X", "2.5", (1, "SDR")), ("2", "NDR", (2, "NDR")),
    ("4X", "10.3125", (4, "FDR10")), ("4x", "ZDR", (4, None)), (None, None, (None, None)),
])
def test_rate_of_reads_both_tools_vocabularies(width, speed, expected):
    assert ibnetdiscover.rate_of(width, speed) == expected


UFM_PLAN = {"links": [{"node": "r-ufm96", "port": "HCA-1/1", "switch": "sx6012", "switch_port": 8},
                      {"node": "r-ufm101", "port": "HCA-1/1", "switch": "sx6012", "switch_port": 2},
                      {"node": "r-ufm100", "port": "HCA-2/1", "switch": "sx6012", "switch_port": 6},
                      {"node": "r-ufm216", "port": "HCA-2/1", "switch": "switchib", "switch_port": 34}],
            "switches": {"sx6012": {"guid": "0xf4521403005764b0"}, "switchib": {"guid": "0xe41d2d030003e470"}},
            "ib": {"rate": "4xQDR"},
            "ib_switch_links": [{"switch": "switchib", "switch_port": 3, "peer": "sx6012", "peer_port": 1}]}


def test_the_subnet_view_judges_presence_peer_and_rate_against_the_plan():
    facts = ibnetdiscover.fabric_facts(text(UFM))
    facts["error"] = None
    checks = _ib_cabling.judge_ib_cabling(facts, UFM_PLAN)
    slow = by_id(checks["r-ufm96"])
    assert slow["cabling.ib.hca_1_1.neighbor"]["status"] == "pass"
    rate = slow["cabling.ib.hca_1_1.rate"]
    assert (rate["status"], rate["remedy"], rate["observed"], rate["expected"]) == ("fail", "check_cable", "4xSDR",
                                                                                  ">= 4xQDR")
    assert "below the plan's 4xQDR (speed degraded)" in rate["message"]
    assert rate["evidence"] == "ibnetdiscover: %s port 8 4xSDR" % SX6012
    assert by_id(checks["r-ufm101"])["cabling.ib.hca_1_1.rate"]["status"] == "pass"
    # r-ufm101's second HCA is on the fabric but not in the plan
    assert by_id(checks["r-ufm101"])["cabling.ib.hca_2_1.neighbor"]["status"] == "warn"
    isl = _ib_cabling.judge_ib_switch_links(facts, UFM_PLAN)
    assert by_id(isl)["cabling.ib.isl.neighbor"]["status"] == "pass"
    # the plan's rate is QDR: every switch link (EDR, FDR) is at or above it
    assert by_id(isl)["cabling.ib.isl.rate"]["status"] == "pass"


def _swap_and_pull(body):
    """The IBM capture with compute-00-00 and compute-00-01 swapped on the switch (both sides edited)."""
    lines = body.splitlines(True)
    out = []
    for line in lines:
        if line.startswith("[1]") and "compute-00-01" in line:
            line = line.replace("[1]", "[2]", 1)
        elif line.startswith("[2]") and "compute-00-00" in line:
            line = line.replace("[2]", "[1]", 1)
        elif '"S-000b8cffff0053ee"[1]' in line:
            line = line.replace('"S-000b8cffff0053ee"[1]', '"S-000b8cffff0053ee"[2]')
        elif '"S-000b8cffff0053ee"[2]' in line:
            line = line.replace('"S-000b8cffff0053ee"[2]', '"S-000b8cffff0053ee"[1]')
        out.append(line)
    return "".join(out)


IBM_PLAN = {"links": [{"node": "compute-00-00", "port": "HCA-1/2", "switch": "leaf", "switch_port": 2},
                      {"node": "compute-00-01", "port": "HCA-1/1", "switch": "leaf", "switch_port": 1}],
            "switches": {"leaf": {"guid": "0x000b8cffff0053ee"}}}


def test_swapped_cables_in_the_subnet_view_are_miswired():
    facts = ibnetdiscover.fabric_facts(_swap_and_pull(text(IBM)))
    facts["error"] = None
    checks = _ib_cabling.judge_ib_cabling(facts, IBM_PLAN)
    a = by_id(checks["compute-00-00"])["cabling.ib.hca_1_2.neighbor"]
    b = by_id(checks["compute-00-01"])["cabling.ib.hca_1_1.neighbor"]
    assert (a["status"], a["remedy"], b["status"]) == ("fail", "check_cable", "fail")
    assert a["message"].startswith("compute-00-00 HCA-1/2 is miswired: the fabric sees it on "
                                   "MT43132 Mellanox Technologies port 1")


def test_a_pulled_cable_is_missing_and_a_cut_view_only_warns():
    body = text(IBM)
    pulled = "".join(line for line in body.splitlines(True)
                     if not (line.startswith("[1]") and "compute-00-01" in line))
    # the CA block of the pulled node is gone too: ibnetdiscover reaches a CA only through its link
    pulled = pulled[:pulled.index("vendid=0x2c9\ndevid=0x5a44")]
    facts = ibnetdiscover.fabric_facts(pulled)
    facts["error"] = None
    check = by_id(_ib_cabling.judge_ib_cabling(facts, IBM_PLAN)["compute-00-01"])["cabling.ib.hca_1_1.neighbor"]
    assert (check["status"], check["remedy"], check["observed"]) == ("fail", "check_cable", "no live link")
    facts["partial"] = True
    check = by_id(_ib_cabling.judge_ib_cabling(facts, IBM_PLAN)["compute-00-01"])["cabling.ib.hca_1_1.neighbor"]
    assert (check["status"], check["remedy"]) == ("warn", "investigate")


def test_a_degraded_switch_link_without_a_planned_rate_warns_against_the_common_rate():
    # the EDR -p report with the spine uplink edited down to 1x
    body = text(P_EDR).replace("SW  1719  1 0x7cfe9003009ce5b0 4x EDR - SW", "SW  1719  1 0x7cfe9003009ce5b0 1x EDR - SW")
    extra = "SW  1719  2 0x7cfe9003009ce5b0 4x EDR - SW  1516  2 0x7cfe900300b07320 ( 'ib-i1l1s01' - 'ib-i1l2s01' )\n"
    extra += "SW  1719  3 0x7cfe9003009ce5b0 4x EDR - SW  1516  3 0x7cfe900300b07320 ( 'ib-i1l1s01' - 'ib-i1l2s01' )\n"
    facts = ibnetdiscover.fabric_facts(body + extra)
    [check] = _ib_cabling.judge_ib_switch_links(facts, {})
    assert (check["id"], check["status"], check["remedy"], check["observed"]) == (
        "cabling.ib.isl.rate", "warn", "check_cable", "1 of 3 below")
    assert "ib-i1l1s01 port 1 <-> ib-i1l2s01 port 1 at 1xEDR" in check["message"]
    planned = {"ib": {"rate": "4xEDR"},
               "ib_switch_links": [{"switch": "ib-i1l1s01", "switch_port": 1, "peer": "ib-i1l2s01", "peer_port": 2}]}
    checks = by_id(_ib_cabling.judge_ib_switch_links(facts, planned))
    assert checks["cabling.ib.isl.rate"]["status"] == "fail"
    assert (checks["cabling.ib.isl.neighbor"]["status"], checks["cabling.ib.isl.neighbor"]["observed"]) == (
        "fail", "ib-i1l2s01 port 1")


def test_saved_output_entry_point_and_view_choice(tmp_path):
    path = tmp_path / "customer-ibnetdiscover.txt"
    path.write_text(text(P_EDR))
    view = load_fabric_view(str(path), tool="ibnetdiscover")
    assert view["error"] is None and view["tool"] == "ibnetdiscover" and len(view["links"]) == 3
    missing = load_fabric_view(str(tmp_path / "absent.txt"), tool="ibnetdiscover")
    assert missing["error"].startswith("ibnetdiscover: cannot read ")
    bad = tmp_path / "bad.txt"
    bad.write_text("ibwarn: nothing here\n")
    assert "ibnetdiscover" in load_fabric_view(str(bad), tool="ibnetdiscover")["error"]
    # the subnet's view is taken before a node's iblinkinfo view
    facts = {"n01": {"ib_fabric": {"tool": "iblinkinfo", "links": []}},
             "n02": {"ib_subnet": {"tool": "ibnetdiscover", "links": []}}}
    assert fabric_view(facts)["tool"] == "ibnetdiscover"
    assert fabric_view({"n01": {"ib_fabric": {"links": []}, "ib_subnet": None}}) == {"links": []}
