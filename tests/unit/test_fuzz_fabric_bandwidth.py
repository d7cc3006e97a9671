# SPDX-License-Identifier: GPL-3.0-or-later
"""Issue 23: the subnet and bandwidth readers are total on damaged real captures (tests/unit/fuzzing.py).

``ibnetdiscover`` (topology file and ``-p``) and its cabling judgement, CUDA samples' ``bandwidthTest`` (quick, shmoo
``--csv``) and nvbandwidth's verification-failure and waived forms with the bandwidth rules; each reader returns facts or raises the
project's typed error, never anything else, and a damaged output still gives checks.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzzing import FUZZ, assert_total, fixture_text, text_mutations

from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import nvbandwidth
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu.bandwidth_collect import saved_bandwidthtest
from ansible_collections.zhisuan.ops.plugins.module_utils._judge.bandwidth import judge_bandwidth
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._ib_cabling import (ib_cabling_map, judge_ib_cabling,
                                                                                   judge_ib_switch_links)
from ansible_collections.zhisuan.ops.plugins.module_utils._net import ibnetdiscover

pytestmark = pytest.mark.fuzz

IBNETDISCOVER = ("ib/ibnetdiscover-edr-switchib-ufm-nvidia-errline.topo", "ib/ibnetdiscover-sdr-mt43132-2ca-ibm.topo",
                 "ib/ibnetdiscover-qdr-sun-dcs36-oracle.topo", "ib/ibnetdiscover-sdr-voltaire-manpage.topo",
                 "ib/ibnetdiscover-p-edr-osc-exporter.txt", "ib/ibnetdiscover-p-hdr-leaf-spine-exporter.txt")
IB_PLAN = {"links": [{"node": "r-ufm96", "port": "HCA-1/1", "switch": "sx6012", "switch_port": 8},
                     {"node": "o0001", "port": "HCA-1/1", "switch": "ib-i1l1s01", "switch_port": 10},
                     {"node": "compute-00-01", "port": "HCA-1/1", "switch": "leaf", "switch_port": 1}],
           "switches": {"sx6012": {"guid": "0xf4521403005764b0"}, "leaf": {"guid": "0x000b8cffff0053ee"}},
           "ib": {"rate": "4xEDR"},
           "ib_switch_links": [{"switch": "ib-i1l1s01", "switch_port": 1, "peer": "ib-i1l2s01", "peer_port": 1}]}


def _damaged(paths, strategy=text_mutations):
    return st.sampled_from(paths).flatmap(lambda path: strategy(fixture_text(path)))


@FUZZ
@given(_damaged(IBNETDISCOVER))
def test_ibnetdiscover_is_total_and_judged(text):
    view, _ = assert_total("ibnetdiscover.fabric_facts", ibnetdiscover.fabric_facts, text)
    if view is None:
        return
    view["error"] = None
    assert_total("judge_ib_cabling", judge_ib_cabling, view, IB_PLAN, allowed=(), finite=False)
    assert_total("judge_ib_switch_links", judge_ib_switch_links, view, IB_PLAN, allowed=(), finite=False)
    assert_total("ib_cabling_map", ib_cabling_map, view, IB_PLAN, allowed=(), finite=False)


BANDWIDTHTEST = ("nvbandwidth/bandwidthTest-quick-a100-sxm4-40gb-cuda-demo.txt",
                 "nvbandwidth/bandwidthTest-shmoo-csv-h2d-v100-pcie-superbench.txt",
                 "nvbandwidth/bandwidthTest-shmoo-csv-d2h-v100-pcie-superbench.txt")
NVBANDWIDTH = ("nvbandwidth/nvbandwidth-v0.7-a100x8-550.127.08-d2d-verify-assert.txt",
               "nvbandwidth/nvbandwidth-v0.6-gh200-waived-superbench.txt")
PROFILE = {"name": "a100", "h2d_bw_floor_gbs": 21, "p2p_bw_floor_gbs": 235}


@FUZZ
@given(_damaged(BANDWIDTHTEST))
def test_bandwidthtest_is_total_and_judged(text):
    facts, _ = assert_total("bandwidth_collect.saved_bandwidthtest", saved_bandwidthtest, text)
    if facts is None:
        return
    assert_total("bandwidth.judge_bandwidth", judge_bandwidth, "n", facts, PROFILE, allowed=(), finite=False)


@FUZZ
@given(_damaged(NVBANDWIDTH))
def test_nvbandwidth_verification_and_waived_forms_are_total(text):
    facts, _ = assert_total("nvbandwidth.parse", nvbandwidth.parse, text)
    if facts is None:
        return
    assert_total("bandwidth.judge_bandwidth", judge_bandwidth, "n", facts, PROFILE, allowed=(), finite=False)
