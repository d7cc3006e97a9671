# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Property-based damage of the real host captures host_info reads (issue 12): /proc/meminfo, /proc/<pid>/limits,
``lspci -vvv``, ``ofed_info -s``, ``nvidia-smi topo -m``. Each parser is total, and parse -> judge_tuning neither
raises nor judges an empty or garbage output healthy."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzzing import FUZZ, assert_not_all_pass, assert_total, capped, fixture_text, json_mutations, text_mutations

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ZhisuanError
from ansible_collections.zhisuan.ops.plugins.module_utils._host import sysinfo
from ansible_collections.zhisuan.ops.plugins.module_utils._host.topo import parse_topo
from ansible_collections.zhisuan.ops.plugins.module_utils._judge.tuning import judge_tuning, summarize_tuning

pytestmark = pytest.mark.fuzz

TOPO = ("nvidia-smi/excerpt-h100-80gb-hbm3-topo-m.txt", "nvidia-smi/excerpt-h100-mig-topo-m.txt",
        "nvidia-smi/excerpt-l40s-topo-m.txt", "nvidia-smi/topo-m-asus-esc8000a-e12-4gpu-4nic.txt",
        "nvidia-smi/topo-m-h100x8-8nic.txt")
EXPECTED = {"tuning": {"acs": "disabled", "ulimits": {"memlock": "unlimited", "nofile": ">= 65536"},
                       "hugepages": {"total": ">= 0"}}}


def _damaged(paths):
    return st.sampled_from(paths).flatmap(lambda path: text_mutations(fixture_text(path)))


def _collected(source, parser, text):
    """What host_info keeps of one parsed source: (facts or None, errors) as HostReader.parsed records them."""
    try:
        return parser(text), []
    except ZhisuanError as exc:
        return None, [{"source": source, "error": exc.message}]


def _tuning(**facts):
    errors = facts.pop("errors", [])
    host = {"topo": None, "acs": None, "numa": {"nodes": [], "nics": []}, "sysctl": {}, "ulimits": None,
            "hugepages": None, "cpu_governor": None, "iommu": None, "kernel_cmdline": None, "software": None,
            "errors": errors}
    host.update(facts)
    return judge_tuning("node01", host, expected=EXPECTED)


@FUZZ
@given(_damaged(("host/proc-limits-procfs-26231.txt",)))
def test_limits_are_total_and_judged(text):
    limits, _ = assert_total("sysinfo.parse_limits", sysinfo.parse_limits, text)
    for item in (limits or {}).values():
        for key in ("soft", "hard"):
            assert item[key] == "unlimited" or (isinstance(item[key], int) and item[key] >= 0)
    facts, errors = _collected("/proc/self/limits", sysinfo.parse_limits, text)
    checks, _ = assert_total("judge_tuning", _tuning, ulimits=facts, errors=errors, allowed=())
    if facts is None:
        assert_not_all_pass("judge_tuning (limits unreadable)", checks)


@FUZZ
@given(_damaged(("host/meminfo-node-exporter.txt",)))
def test_meminfo_is_total_and_judged(text):
    hugepages, _ = assert_total("sysinfo.parse_meminfo", sysinfo.parse_meminfo, text)
    facts, errors = _collected("/proc/meminfo", sysinfo.parse_meminfo, text)
    checks, _ = assert_total("judge_tuning", _tuning, hugepages=facts, errors=errors, allowed=())
    if hugepages is None:
        assert_not_all_pass("judge_tuning (meminfo unreadable)", checks)


@FUZZ
@given(_damaged(("lspci/lspci-vvv-grep-acsctl-asus-esc8000a-e12.txt",)))
def test_lspci_acs_is_total_and_never_passes_nothing(text):
    acs, _ = assert_total("sysinfo.parse_acs", sysinfo.parse_acs, text)
    facts, errors = _collected("lspci", sysinfo.parse_acs, text)
    checks, _ = assert_total("judge_tuning", _tuning, acs=facts, errors=errors, allowed=())
    acs_checks = [check for check in checks if check["id"] == "tuning.acs.redirect"]
    if acs is None:
        assert acs_checks and acs_checks[0]["status"] == "error"


@FUZZ
@given(_damaged(("host/ofed_info-s-mlnx-ofed-23.07.txt",)))
def test_ofed_info_is_total(text):
    assert_total("sysinfo.parse_ofed_info", sysinfo.parse_ofed_info, text)


@FUZZ
@given(_damaged(TOPO))
def test_topo_is_total(text):
    topo, _ = assert_total("topo.parse_topo", parse_topo, text)
    for gpu in (topo or {}).get("gpus", []):
        assert gpu["numa_affinity"] is None or gpu["numa_affinity"] >= 0


@FUZZ
@given(st.text(max_size=200))
def test_small_host_parsers_are_total(text):
    for name, parser in (("parse_thp", sysinfo.parse_thp), ("parse_cmdline", sysinfo.parse_cmdline),
                         ("parse_nvidia_version", sysinfo.parse_nvidia_version),
                         ("parse_fabricmanager_version", sysinfo.parse_fabricmanager_version),
                         ("parse_dcgmi_version", sysinfo.parse_dcgmi_version), ("parse_cpulist", sysinfo.parse_cpulist)):
        assert_total("sysinfo." + name, parser, text)
    assert_total("sysinfo.nccl_version", sysinfo.nccl_version, text.split(), allowed=())


def test_empty_lspci_is_not_acs_off():
    """Issue 12: an empty ``lspci -vvv`` is an error "read 0 lines", not ACS off "on the 0 ports"."""
    facts, errors = _collected("lspci", sysinfo.parse_acs, "")
    assert facts is None
    assert errors == [{"source": "lspci", "error": "lspci: lspci -vvv printed nothing (read 0 lines): every node has "
                                                   "PCI devices"}]
    acs = [check for check in _tuning(acs=None, errors=errors) if check["id"] == "tuning.acs.redirect"]
    assert [check["status"] for check in acs] == ["error"]
    assert "read 0 lines" in acs[0]["message"]


HOST_FACTS = {
    "topo": parse_topo(fixture_text(TOPO[3])),
    "acs": sysinfo.parse_acs(fixture_text("lspci/lspci-vvv-grep-acsctl-asus-esc8000a-e12.txt")),
    "numa": {"nodes": [{"id": 0, "cpulist": "0-31"}], "nics": []},
    "sysctl": {"vm.swappiness": "10", "net.core.rmem_max": "4194304"},
    "ulimits": sysinfo.parse_limits(fixture_text("host/proc-limits-procfs-26231.txt")),
    "hugepages": dict(sysinfo.parse_meminfo(fixture_text("host/meminfo-node-exporter.txt")), transparent="madvise"),
    "cpu_governor": {"value": "performance", "counts": {"performance": 32}},
    "iommu": {"mode": "passthrough", "units": ["dmar0"], "group_types": {"identity": 10}, "cmdline_flags": {}},
    "kernel_cmdline": "ro quiet", "software": {"ofed": "23.07-0.5.1.2", "nvidia_driver": "535.129.03"}, "errors": [],
}
TUNING_EXPECTED = {"tuning": {"acs": "disabled", "iommu": "passthrough", "cpu_governor": "performance",
                              "sysctl": {"vm.swappiness": "<= 10"}, "ulimits": {"memlock": "unlimited"},
                              "hugepages": {"total": ">= 0", "transparent": "madvise"}}}


@FUZZ
@given(json_mutations(HOST_FACTS).map(capped))
def test_judge_tuning_never_raises_on_odd_facts(facts):
    assert_total("judge_tuning", judge_tuning, "node01", facts, None, TUNING_EXPECTED, allowed=(), finite=False)
    assert_total("summarize_tuning", summarize_tuning, facts, allowed=(), finite=False)
