# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Property-based damage of every GPU-side parser, judge and collect path (issue 12).

Every parser gets hypothesis mutations of each of its real captures (tests/fixtures/) and must be total: facts or a
typed ``ZhisuanError``, within the hang limit, no NaN/infinite float in the facts. The judges then run on whatever the
parser returned (or on ``None`` when it refused) and must neither raise nor judge empty or garbage input healthy. The
collect paths run a real subprocess through the real runner: a small shell script that prints the damaged output.

Budget: ``ZHISUAN_FUZZ_EXAMPLES`` examples per test (default 40, see fuzzing.py); ``make fuzz`` runs a long search.
"""

from __future__ import annotations

import os
import stat

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fuzzing import (
    FUZZ, CollectModule, assert_not_all_pass, assert_total, fixture_text, json_mutations, json_text_mutations,
    text_mutations,
)

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ZhisuanError
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import (
    burn_collect, collect, dcgm, dcgm_collect, dcgm_health, gpu_burn, nvidia_smi, nvlink, nvlink_errors, nvlink_info,
    xid, xid_collect,
)
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import _stability as stability
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import burn as burn_rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import dcgm as dcgm_rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import gpu as gpu_rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import nccl as nccl_rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import REMEDIES, STATUSES
from ansible_collections.zhisuan.ops.plugins.module_utils._judge.xid import judge_xid
from ansible_collections.zhisuan.ops.plugins.module_utils._net import nccl, nccl_run
from ansible_collections.zhisuan.ops.plugins.plugin_utils._profiles import load_profiles
from ansible_collections.zhisuan.ops.plugins.plugin_utils._xid_catalog import load_catalog

pytestmark = pytest.mark.fuzz

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures")
PROFILES = load_profiles()
CATALOG = load_catalog()
GARBAGE = ("", "\n", " \n\n", "\x00", "Segmentation fault (core dumped)\n",
           "Failed to initialize NVML: Driver/library version mismatch\n", "{}", "[]", "<html></html>\n", "null\n")


def _names(folder, predicate):
    return sorted(name for name in os.listdir(os.path.join(FIXTURES, folder)) if predicate(name))


NVSMI_XML = ["nvidia-smi/" + name for name in _names("nvidia-smi", lambda n: n.startswith("q-x-"))]
NVSMI_TEXT = ["nvidia-smi/" + name for name in _names(
    "nvidia-smi", lambda n: (n.startswith("q-") and not n.startswith("q-x-")) or n.endswith("-q-load.txt")
    or n.startswith("i0-q-"))]
NVLINK = ["nvidia-smi/" + name for name in _names(
    "nvidia-smi", lambda n: n.startswith("nvlink-s-") or n.endswith("-nvlink-s.txt"))]
# The other nvlink forms (issue 23), each with its reader.
NVLINK_FORMS = [("nvidia-smi/" + name, reader) for prefix, reader in (
    ("nvlink-R-", nvlink_info.parse_remote), ("nvlink-c-", nvlink_info.parse_capabilities),
    ("nvlink-gt-", nvlink_info.parse_throughput)) for name in _names("nvidia-smi", lambda n, p=prefix: n.startswith(p))]
# nvidia-smi nvlink -e (issue 16, a second project in issue 23).
NVLINK_ERRORS = ["nvidia-smi/" + name for name in _names("nvidia-smi", lambda n: n.startswith("nvlink-e-"))]
DCGM_DIAG = ["dcgm/" + name for name in _names("dcgm", lambda n: n.startswith("dcgmi-diag-"))]
DCGM_HEALTH = ["dcgm/" + name for name in _names("dcgm", lambda n: n.startswith("dcgmi-health-"))]
KERNEL_LOGS = ["kernel-log/" + name for name in _names("kernel-log", lambda n: True)]
BURN_LOGS = ["gpu-burn/" + name for name in _names("gpu-burn", lambda n: True)]
NCCL_LOGS = ["nccl-tests/" + name for name in _names("nccl-tests", lambda n: True)]


def well_formed(checks):
    for check in checks:
        assert check["status"] in STATUSES and check["remedy"] in REMEDIES, check
        assert isinstance(check["message"], str) and check["message"], check
    return checks


def _judge(name, func, *args, **kwargs):
    """A judge is total too: it never raises on what a parser returned (and returns well-formed checks)."""
    result, _error = assert_total(name, func, *args, allowed=(), finite=False, **kwargs)
    return well_formed(result)


def _gpu_profile(facts):
    gpus = (facts or {}).get("gpus") or [{}]
    return gpu_rules.select_profile(gpus[0].get("name"), PROFILES)


# --------------------------------------------------------------------------------------------------- nvidia-smi

def _judge_gpu_text(name, text, parser):
    facts, _error = assert_total(name, parser, text)
    if facts is not None:
        facts = nvlink.attach(facts, [])
        facts["nvlink_error"] = None
    checks = _judge("judge_gpu", gpu_rules.judge_gpu, "n1", facts, _gpu_profile(facts), expected={"gpu_count": 8})
    if text.strip() in GARBAGE or not text.strip():
        assert_not_all_pass(name, checks)
    return facts


@pytest.mark.parametrize("relpath", NVSMI_XML)
def test_nvidia_smi_xml_is_total(relpath):
    @FUZZ
    @given(text_mutations(fixture_text(relpath)))
    @example("")
    @example("<nvidia_smi_log>" * 100000)
    def run(text):
        _judge_gpu_text("nvidia_smi.parse_xml", text, nvidia_smi.parse_xml)
    run()


@pytest.mark.parametrize("relpath", NVSMI_TEXT)
def test_nvidia_smi_text_is_total(relpath):
    @FUZZ
    @given(text_mutations(fixture_text(relpath)))
    @example("")
    @example("==============NVSMI LOG==============\n\nAttached GPUs : 8\n")
    def run(text):
        _judge_gpu_text("nvidia_smi.parse_text", text, nvidia_smi.parse_text)
    run()


@pytest.mark.parametrize("text", GARBAGE + ("Timestamp : x\nDriver Version : 1\nAttached GPUs : 4\n",))
def test_nvidia_smi_without_a_gpu_block_is_never_healthy(text):
    _facts, error = assert_total("nvidia_smi.parse", nvidia_smi.parse, text)
    assert error is not None
    assert_not_all_pass("judge_gpu", well_formed(gpu_rules.judge_gpu("n1", None, None)))


@pytest.mark.parametrize("relpath", NVLINK)
def test_nvlink_status_is_total(relpath):
    base = nvidia_smi.parse_xml(fixture_text("nvidia-smi/q-x-a100-sxm4-80gb-mig-535.xml"))

    @FUZZ
    @given(text_mutations(fixture_text(relpath)))
    def run(text):
        status, _error = assert_total("nvlink.parse_status", nvlink.parse_status, text)
        facts, _error = assert_total("nvlink.attach", nvlink.attach, base, status or [])
        facts["nvlink_error"] = None
        _judge("judge_gpu", gpu_rules.judge_gpu, "n1", facts, PROFILES["a100"])
    run()


def _links_read(result):
    return sum(len(gpu["links"]) for gpu in result["gpus"])


def _well_formed_nvlink(name, result):
    assert set(result) == {"gpus", "unparsed", "partial"}, name
    for gpu in result["gpus"]:
        numbers = [link["link"] for link in gpu["links"]]
        assert numbers == sorted(set(numbers)), "%s: links of GPU %s not unique and sorted" % (name, gpu["index"])
    assert len(result["unparsed"]) <= 51, name


@pytest.mark.parametrize("relpath,reader", NVLINK_FORMS, ids=[path for path, _reader in NVLINK_FORMS])
def test_nvlink_forms_are_total(relpath, reader):
    gpus = [{"index": 0, "pci_bus_id": "0000:C2:00.0"}, {"index": 1, "pci_bus_id": "0000:D5:00.0"}]
    base = nvidia_smi.parse_xml(fixture_text("nvidia-smi/q-x-a100-sxm4-80gb-mig-535.xml"))

    @FUZZ
    @given(text_mutations(fixture_text(relpath)))
    def run(text):
        result, _error = assert_total(reader.__name__, reader, text)
        if result is None:
            return
        _well_formed_nvlink(reader.__name__, result)
        assert_total("remote_topology", nvlink_info.remote_topology, result, gpus)
        assert_total("throughput_rate", nvlink_info.throughput_rate, result, result, 10)
        assert_total("traffic_facts", nvlink_info.traffic_facts, result, result, 10)
        caps, _error = assert_total("capability_facts", nvlink_info.capability_facts, result)
        if reader is nvlink_info.parse_capabilities and caps is not None:
            facts = nvlink.attach(base, [])
            facts.update(nvlink_error=None, nvlink_capabilities_error=None, nvlink_capabilities=caps)
            _judge("judge_gpu", gpu_rules.judge_gpu, "n1", facts, PROFILES["a100"])
        if reader is nvlink_info.parse_remote:
            # the judge on what the damaged -R gave (the GPUs of a real -q capture): total, well-formed checks
            facts = nvlink.attach(base, [])
            facts.update(nvlink_error=None, nvlink_remote_error=None,
                         nvlink_remote=nvlink_info.remote_facts(result, facts["gpus"]))
            _judge("judge_gpu", gpu_rules.judge_gpu, "n1", facts, PROFILES["a100"])
    run()


@pytest.mark.parametrize("relpath", NVLINK_ERRORS)
def test_nvlink_errors_is_total(relpath):
    base = nvidia_smi.parse_xml(fixture_text("nvidia-smi/q-x-a100-sxm4-80gb-mig-535.xml"))
    good = nvlink_errors.parse(fixture_text(relpath))

    @FUZZ
    @given(text_mutations(fixture_text(relpath)))
    def run(text):
        parsed, _error = assert_total("nvlink_errors.parse", nvlink_errors.parse, text)
        if parsed is None:
            return
        assert set(parsed) == {"gpus", "unparsed"} and len(parsed["unparsed"]) <= 50
        for gpu in parsed["gpus"]:
            numbers = [link["link"] for link in gpu["links"]]
            assert numbers == sorted(set(numbers)), "links of GPU %s not unique and sorted" % gpu["index"]
        grown, _error = assert_total("nvlink_errors.growth", nvlink_errors.growth, good, parsed, 60)
        # the judge on the damaged read's growth (the GPUs of a real -q capture): total, well-formed checks
        facts = nvlink.attach(base, [])
        facts.update(nvlink_error=None, nvlink_errors_error=None,
                     nvlink_errors={"window_s": 60, "unparsed": parsed["unparsed"], "gpus": grown or []})
        _judge("judge_gpu", gpu_rules.judge_gpu, "n1", facts, PROFILES["a100"])
    run()


@pytest.mark.parametrize("relpath", NVLINK_ERRORS)
def test_nvlink_errors_one_damaged_line_costs_only_that_line(relpath):
    text = fixture_text(relpath)
    lines = text.splitlines()
    good = nvlink_errors.parse(text)
    candidates = [index for index, line in enumerate(lines) if line.strip().startswith("Link")]

    @FUZZ
    @given(st.sampled_from(candidates), st.text(max_size=40))
    def run(index, junk):
        damaged = lines[:index] + [junk] + lines[index + 1:]
        parsed, error = assert_total("nvlink_errors.parse", nvlink_errors.parse, "\n".join(damaged) + "\n")
        assert error is None, "one damaged link line refused the whole output: %s" % error
        assert [gpu["index"] for gpu in parsed["gpus"]] == [gpu["index"] for gpu in good["gpus"]]
        # the damaged line held one counter of one link: every other link keeps its counters
        kept = sum(len(link["counters"]) for gpu in parsed["gpus"] for link in gpu["links"])
        assert kept >= sum(len(link["counters"]) for gpu in good["gpus"] for link in gpu["links"]) - 1
    run()


@pytest.mark.parametrize("relpath,reader", NVLINK_FORMS, ids=[path for path, _reader in NVLINK_FORMS])
def test_nvlink_forms_one_damaged_line_costs_only_that_line(relpath, reader):
    text = fixture_text(relpath)
    lines = text.splitlines()
    good = reader(text)
    candidates = [index for index, line in enumerate(lines) if line.strip().startswith("Link")]

    @FUZZ
    @given(st.sampled_from(candidates), st.text(max_size=40))
    def run(index, junk):
        damaged = lines[:index] + [junk] + lines[index + 1:]
        result, error = assert_total(reader.__name__, reader, "\n".join(damaged) + "\n")
        assert error is None, "one damaged link line refused the whole output: %s" % error
        _well_formed_nvlink(reader.__name__, result)
        # every other link is still read (the damaged line held one link's item: at most that link is lost)
        assert _links_read(result) >= _links_read(good) - 1
        assert [gpu["index"] for gpu in result["gpus"]] == [gpu["index"] for gpu in good["gpus"]]
    run()


# --------------------------------------------------------------------------------------------------------- DCGM

@pytest.mark.parametrize("relpath", DCGM_DIAG)
def test_dcgm_diag_is_total(relpath):
    @FUZZ
    @given(json_text_mutations(fixture_text(relpath)))
    @example("{" * 100000)
    @example('{"DCGM GPU Diagnostic": {"test_categories": [1, "x", null]}}')
    def run(text):
        facts, _error = assert_total("dcgm.parse_diag", dcgm.parse_diag, text, level=3)
        checks = _judge("judge_dcgm_diag", dcgm_rules.judge_dcgm_diag, "n1", facts)
        if not text.strip() or text.strip() in GARBAGE:
            assert_not_all_pass("dcgm diag", checks)
    run()


@pytest.mark.parametrize("relpath", DCGM_HEALTH)
def test_dcgm_health_is_total(relpath):
    @FUZZ
    @given(json_text_mutations(fixture_text(relpath)))
    def run(text):
        facts, _error = assert_total("dcgm_health.parse_health", dcgm_health.parse_health, text)
        checks = _judge("judge_dcgm_health", dcgm_rules.judge_dcgm_health, "n1", facts)
        if not text.strip() or text.strip() in GARBAGE:
            assert_not_all_pass("dcgm health", checks)
    run()


# ---------------------------------------------------------------------------------------------------- kernel log

def _xid_facts(text):
    parsed = xid.parse(text)
    return dict(parsed, source="file", since=None, outside_window=0, command=None, fallback=None,
                **xid.log_shape(text))


@pytest.mark.parametrize("relpath", KERNEL_LOGS)
def test_kernel_log_is_total(relpath):
    @FUZZ
    @given(text_mutations(fixture_text(relpath)))
    @example("")
    def run(text):
        facts, _error = assert_total("xid.parse", _xid_facts, text)
        checks = _judge("judge_xid", judge_xid, "n1", facts, CATALOG)
        for event in facts["events"]:
            assert_total("xid.time_key", xid.time_key, event, finite=False)
        if not text.strip() or text.strip() in GARBAGE:
            assert_not_all_pass("judge_xid", checks)
    run()


@pytest.mark.parametrize("text", GARBAGE)
def test_empty_or_garbage_kernel_log_is_an_error(text):
    checks = well_formed(judge_xid("n1", _xid_facts(text), CATALOG))
    assert [(check["id"], check["status"]) for check in checks] == [("xid.log.readable", "error")]


# ------------------------------------------------------------------------------------------------------ gpu-burn

@pytest.mark.parametrize("relpath", BURN_LOGS)
def test_gpu_burn_is_total(relpath):
    @FUZZ
    @given(text_mutations(fixture_text(relpath)), st.sampled_from(("", "Couldn't init a GPU test: boom\n")))
    def run(text, stderr):
        facts, _error = assert_total("gpu_burn.parse", gpu_burn.parse, text, stderr)
        checks = _judge("judge_burn", burn_rules.judge_burn, "n1", facts, PROFILES["a100"])
        if not text.strip() or text.strip() in GARBAGE:
            assert_not_all_pass("judge_burn", checks)
    run()


# ---------------------------------------------------------------------------------------------------- nccl-tests

@pytest.mark.parametrize("relpath", NCCL_LOGS)
def test_nccl_tests_is_total(relpath):
    @FUZZ
    @given(text_mutations(fixture_text(relpath)))
    @example("")
    def run(text):
        facts, _error = assert_total("nccl.parse", nccl.parse, text, op="all_reduce_perf")
        checks = _judge("judge_nccl", nccl_rules.judge_nccl, "n1", facts, PROFILES["a100_40gb"])
        if facts is None or not text.strip():
            assert_not_all_pass("judge_nccl", checks)
    run()


# ------------------------------------------------------------------------------------------ stability (judge only)

def test_stability_judge_is_total_on_damaged_samples():
    good = nvidia_smi.parse_xml(fixture_text("nvidia-smi/q-x-a100-sxm4-80gb-mig-535.xml"))

    @FUZZ
    @given(text_mutations(fixture_text("nvidia-smi/q-x-a100-sxm4-80gb-mig-535.xml")))
    def run(text):
        damaged, _error = assert_total("nvidia_smi.parse_xml", nvidia_smi.parse_xml, text)
        _judge("judge_stability", stability.judge_stability, "n1", good, [damaged], damaged)
        _judge("judge_stability", stability.judge_stability, "n1", damaged, [good], good)
    run()


# ------------------------------------------------------------------------------ collect paths (real subprocesses)

def _script(tmp_path, name, outputs, rc=0):
    """An executable that prints ``outputs[first argument]`` (or ``outputs[None]``) and exits with ``rc``."""
    lines = ["#!/bin/sh", 'case "$1" in']
    for number, (arg, text) in enumerate(sorted(outputs.items(), key=lambda item: str(item[0]))):
        data = tmp_path / ("%s.%d.out" % (name, number))
        data.write_bytes(text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text)
        lines.append('  %s) cat "%s" ;;' % ("*" if arg is None else arg, data))
    lines += ["esac", "exit %d" % rc, ""]
    path = tmp_path / name
    path.write_text("\n".join(lines))
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


# A handful of examples for the subprocess cases (each one starts a process).
_few = settings(FUZZ, max_examples=min(8, FUZZ.max_examples))


def test_gpu_info_collect_path_is_total(tmp_path_factory):
    xml_text = fixture_text("nvidia-smi/q-x-a100-sxm4-80gb-mig-535.xml")
    links = fixture_text("nvidia-smi/nvlink-s-a100-sxm4-healthy.txt")

    @_few
    @given(text_mutations(xml_text), text_mutations(links))
    def run(xml_out, nvlink_out):
        tmp = tmp_path_factory.mktemp("nvsmi")
        program = _script(tmp, "nvidia-smi", {"nvlink": nvlink_out, None: xml_out})
        facts, _error = assert_total("collect.collect_facts", collect.collect_facts, program, 10, warn=lambda m: None)
        if facts is not None:
            _judge("judge_gpu", gpu_rules.judge_gpu, "n1", facts, PROFILES["a100"])
    run()


def test_dcgm_collect_paths_are_total(tmp_path_factory):
    diag = fixture_text("dcgm/dcgmi-diag-r3-j-tesla-t4-pass.json")
    health = fixture_text("dcgm/dcgmi-health-c-j-healthy.json")

    @_few
    @given(json_text_mutations(diag), json_text_mutations(health), st.sampled_from((0, 226)))
    def run(diag_out, health_out, rc):
        tmp = tmp_path_factory.mktemp("dcgmi")
        program = _script(tmp, "dcgmi", {"diag": diag_out, "health": health_out}, rc=rc)
        module = CollectModule({"dcgmi_path": program, "level": 3, "gpus": [], "timeout": 10})
        assert_total("dcgm_collect.collect_dcgm_diag", dcgm_collect.collect_dcgm_diag, module)
        assert_total("dcgm_collect.collect_dcgm_health", dcgm_collect.collect_dcgm_health, module)
    run()


def test_xid_collect_path_is_total(tmp_path_factory):
    log = fixture_text("kernel-log/dmesg-ctime-xid119-gsp-rpc-timeout-xe9680.log")

    @_few
    @given(text_mutations(log))
    @example("")
    def run(out):
        tmp = tmp_path_factory.mktemp("journal")
        program = _script(tmp, "journalctl", {None: out})
        module = CollectModule({"source": "journalctl", "since": "-24h", "src": None, "journalctl_path": program,
                          "dmesg_path": "/bin/false", "timeout": 10})
        result, _error = assert_total("xid_collect.collect_xid_facts", xid_collect.collect_xid_facts, module)
        checks = _judge("judge_xid", judge_xid, "n1", result["xid"], CATALOG)
        if not out.strip():
            assert_not_all_pass("judge_xid", checks)
    run()


def test_burn_collect_path_is_total(tmp_path_factory):
    log = fixture_text("gpu-burn/gpu-burn-8xA100-80GB-all-OK.log")

    @_few
    @given(text_mutations(log))
    def run(out):
        tmp = tmp_path_factory.mktemp("burn")
        program = _script(tmp, "gpu_burn", {None: out})
        facts, _error = assert_total("burn_collect.run_burn", burn_collect.run_burn, program, 5, timeout=10)
        _judge("judge_burn", burn_rules.judge_burn, "n1", facts, PROFILES["a100"])
    run()


def test_nccl_collect_path_is_total(tmp_path_factory):
    log = fixture_text("nccl-tests/all_reduce_perf-1node-8xA100-40GB.log")

    @_few
    @given(text_mutations(log))
    def run(out):
        tmp = tmp_path_factory.mktemp("nccl")
        program = _script(tmp, "all_reduce_perf", {None: out})
        params = {"op": "all_reduce_perf", "nccl_tests_path": program, "hosts": [], "gpus_per_node": 8,
                  "min_bytes": "8", "max_bytes": "8G", "step_factor": 2, "check": True, "iters": 20,
                  "warmup_iters": None, "env": {}, "mpirun_path": "mpirun", "mpirun_args": [], "timeout": 10}
        facts, _error = assert_total("nccl_run.run_test", nccl_run.run_test, params)
        _judge("judge_nccl", nccl_rules.judge_nccl, "n1", facts, PROFILES["a100_40gb"])
    run()


def test_typed_errors_name_their_tool():
    """The errors the fuzz suite accepts are the project's typed ones, and they say which tool and what."""
    for func, text in ((nvidia_smi.parse, ""), (dcgm.parse_diag, "x"), (gpu_burn.parse, ""), (nccl.parse, "")):
        with pytest.raises(ZhisuanError) as caught:
            func(text)
        assert caught.value.tool and caught.value.detail


# ------------------------------------------------------------------------- judges on odd facts (wrong types, inf)

def _facts_cases():
    gpu = nvidia_smi.parse_xml(fixture_text("nvidia-smi/q-x-a100-sxm4-80gb-mig-535.xml"))
    gpu = nvlink.attach(gpu, nvlink.parse_status(fixture_text("nvidia-smi/nvlink-s-a100-sxm4-healthy.txt")))
    gpu["nvlink_error"] = None
    burn = gpu_burn.parse(fixture_text("gpu-burn/gpu-burn-8xA100-80GB-all-OK.log"))
    return {
        "gpu": (gpu, lambda facts: gpu_rules.judge_gpu("n1", facts, PROFILES["a100"], expected={"gpu_count": 8})),
        "dcgm_diag": (dcgm.parse_diag(fixture_text("dcgm/dcgmi-diag-r3-j-tesla-t4-pass.json"), level=3),
                      lambda facts: dcgm_rules.judge_dcgm_diag("n1", facts)),
        "dcgm_health": (dcgm_health.parse_health(fixture_text("dcgm/dcgmi-health-c-j-healthy.json")),
                        lambda facts: dcgm_rules.judge_dcgm_health("n1", facts)),
        "xid": (_xid_facts(fixture_text("kernel-log/dmesg-decode-iso-xid13-xid43-large.log")),
                lambda facts: judge_xid("n1", facts, CATALOG)),
        "burn": (burn, lambda facts: burn_rules.judge_burn("n1", facts, PROFILES["a100"])),
        "nccl": (nccl.parse(fixture_text("nccl-tests/all_reduce_perf-1node-8xA100-40GB.log"), op="all_reduce_perf"),
                 lambda facts: nccl_rules.judge_nccl("n1", facts, PROFILES["a100_40gb"])),
        "stability": (gpu, lambda facts: stability.judge_stability("n1", gpu, [facts], facts)),
    }


FACTS_CASES = _facts_cases()


@pytest.mark.parametrize("family", sorted(FACTS_CASES))
def test_judges_never_crash_on_odd_facts(family):
    """Facts of the wrong type, NaN/inf, 10**40, nested lists: the judge says so in a check, it never raises."""
    good, judge = FACTS_CASES[family]

    @FUZZ
    @given(json_mutations(good))
    def run(facts):
        _judge("judge " + family, judge, facts)
    run()
