# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ``ibdiagnet`` summary reader (issue 23): two real console outputs (tests/fixtures/ib, PROVENANCE.md) - the
whole run of ibdiagnet 2.7.0 on a 42-node fabric (ydanzig/logParserTask, CRLF line ends) and the fabric summary and
Summary table of a routing dump run (kobibar/OpenAI.recipe.old) - read by _net/ibdiagnet.py. Damage is made by
editing the real lines in code."""

from __future__ import annotations

import pytest
from hypothesis import given

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError
from ansible_collections.zhisuan.ops.plugins.module_utils._net.ibdiagnet import parse_ibdiagnet
from fuzzing import FUZZ, assert_total, fixture_text, text_mutations

FULL = "ib/ibdiagnet-2.7.0-fabric-42-nodes-logparsertask.txt"
ROUTING = "ib/ibdiagnet-routing-dump-summary-openai-recipe.txt"


def test_the_whole_run_gives_every_stage_the_fabric_and_the_link_error():
    got = parse_ibdiagnet(fixture_text(FULL))
    assert got["version"] == "2.7.0.MLNX20210617.4883fca" and got["warnings"] == [] and not got["partial"]
    stages = dict((s["stage"], (s["warnings"], s["errors"])) for s in got["stages"])
    assert len(stages) == 11 and stages["Discovery"] == (3, 0) and stages["Nodes Information"] == (16, 0)
    assert stages["Speed / Width checks"] == (0, 15) and stages["Create IBNetDiscover File"] == (0, 0)
    assert got["totals"] == {"warnings": 19, "errors": 15}
    fabric = got["fabric"]
    assert (fabric["total_nodes"], fabric["switches"], fabric["cas"], fabric["aggregation_nodes"], fabric["routers"],
            fabric["links"]) == (42, 6, 31, 5, 0, 58)
    assert fabric["links_by_rate"] == {"4x2.5": 4, "4x14": 3, "4x25": 21, "4x50": 23, "4x100": 6, "2x50": 1}
    assert got["master_sm"] == {"lid": 10, "guid": "0x98039b0300952b30", "name": "smg-ib-svr43 mlx5_0"}
    errors = [m for m in got["messages"] if m["level"] == "error"]
    assert [m["stage"] for m in errors] == ["Speed / Width checks"] * 3
    assert errors[-1]["text"].startswith("Link: smg-ib-sw041/U1/P24<-->S900a840300308e40/N900a840300308e40/P49 - "
                                         "Unexpected width, actual link width is 2x")
    gmp = [m for m in got["messages"] if m["text"].startswith("S043f720300899a00/N043f720300899a08")]
    assert gmp and gmp[0]["level"] == "warning" and gmp[0]["stage"] == "Discovery"


def test_the_routing_run_summary_alone():
    got = parse_ibdiagnet(fixture_text(ROUTING))
    assert got["version"] is None and got["warnings"] == [] and got["messages"] == []
    assert [(s["stage"], s["warnings"], s["errors"]) for s in got["stages"]] == [
        ("Discovery", 3, 0), ("Virtualization", 0, 0), ("Routing", 0, 0)]
    assert got["fabric"]["total_nodes"] == 15 and got["fabric"]["switches"] == 3 and got["master_sm"] is None


def test_a_damaged_summary_row_is_a_warning_and_the_other_rows_are_read():
    text = fixture_text(FULL).replace("-I- Lids Check                          0          0",
                                      "-I- Lids Check                          0          ?")
    got = parse_ibdiagnet(text)
    assert len(got["stages"]) == 10 and "Lids Check" not in [s["stage"] for s in got["stages"]]
    assert len(got["warnings"]) == 1 and got["warnings"][0].startswith("line ") and "Lids Check" in got["warnings"][0]
    assert got["totals"]["errors"] == 15


def test_an_output_cut_before_the_summary_keeps_the_stages_read():
    text = fixture_text(FULL)
    got = parse_ibdiagnet(text[:text.index("Fabric Summary")])
    assert got["partial"] and got["stages"] == [] and "no Summary table" in got["warnings"][0]
    assert [m["stage"] for m in got["messages"] if m["level"] == "error"] == ["Speed / Width checks"] * 3


@pytest.mark.parametrize("text", ["", "   \n", "ibdiagnet: command not found\n"])
def test_nothing_readable_is_a_parse_error_naming_ibdiagnet(text):
    with pytest.raises(ParseError) as err:
        parse_ibdiagnet(text)
    assert "ibdiagnet" in str(err.value)


@FUZZ
@given(text_mutations(fixture_text(FULL)))
def test_ibdiagnet_is_total(text):
    assert_total("ibdiagnet.parse_ibdiagnet", parse_ibdiagnet, text)
