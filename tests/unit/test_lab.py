"""The lab: scenario -> simulated nodes whose nvidia-smi replays a real capture with value-edited faults."""

import json
import os
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
LABCTL = REPO / "lab" / "labctl.py"
SCENARIOS = REPO / "lab" / "scenarios"
CAPTURE = REPO / "tests" / "fixtures" / "nvidia-smi" / "q-x-a100-sxm4-80gb-mig-535.xml"
DGX_BUSES = ["07", "0F", "47", "4E", "87", "90", "B7", "BD"]
NO_DRIVER = (
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
    "Make sure that the latest NVIDIA driver is installed and running."
)

# Paths (relative to <gpu>) that the lab edits on a healthy node; everything else equals the capture.
IDENTITY_EDITS = {"serial", "uuid", "minor_number", "gpu_module_id", "pci/pci_bus", "pci/pci_bus_id"}


def labctl(*args):
    return subprocess.run([sys.executable, str(LABCTL), *map(str, args)], capture_output=True, text=True, timeout=60)


def up(tmp_path, scenario="default.yml", *extra):
    run_dir, inv = tmp_path / "run", tmp_path / "inv" / "hosts.yml"
    res = labctl("up", "--scenario", SCENARIOS / scenario, "--dir", run_dir, "--inventory", inv, *extra)
    assert res.returncode == 0, res.stderr
    return run_dir, inv, res


def smi(wrapper, *args, timeout=10):
    return subprocess.run([str(wrapper), *args], capture_output=True, timeout=timeout)


def flatten(elem, prefix=""):
    """{path: text} for every leaf under elem (paths made unique by sibling position)."""
    out, seen = {}, {}
    for child in elem:
        n = seen[child.tag] = seen.get(child.tag, -1) + 1
        path = f"{prefix}{child.tag}" + (f"[{n}]" if n else "")
        if len(child):
            out.update(flatten(child, path + "/"))
        else:
            out[path] = child.text
    return out


@pytest.fixture(scope="module")
def default_lab(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("default")
    run_dir, inv, res = up(tmp)
    hosts = yaml.safe_load(inv.read_text())["all"]["children"]["gpu_nodes"]["hosts"]
    xml = {}
    for name, hv in hosts.items():
        r = smi(hv["zhisuan_tools"]["nvidia_smi"], "-q", "-x")
        assert r.returncode == 0, r.stderr
        xml[name] = r.stdout
    return {"dir": run_dir, "inv": inv, "hosts": hosts, "xml": xml, "stdout": res.stdout}


@pytest.fixture(scope="module")
def faults_lab(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("faults")
    run_dir, inv, _ = up(tmp, "faults.yml")
    hosts = yaml.safe_load(inv.read_text())["all"]["children"]["gpu_nodes"]["hosts"]
    return {"dir": run_dir, "inv": inv, "hosts": hosts}


def wrapper_of(lab, node):
    return lab["hosts"][node]["zhisuan_tools"]["nvidia_smi"]


def test_up_writes_wrappers_and_inventory(default_lab):
    hosts = default_lab["hosts"]
    assert list(hosts) == [f"node0{i}" for i in range(1, 9)]
    for name, hv in hosts.items():
        wrapper = Path(hv["zhisuan_tools"]["nvidia_smi"])
        assert wrapper.is_absolute() and os.access(wrapper, os.X_OK)
        assert wrapper == default_lab["dir"] / "nodes" / name / "bin" / "nvidia-smi"
        assert hv["ansible_connection"] == "local"
        assert hv["ansible_python_interpreter"] == "{{ ansible_playbook_python }}"
        assert hv["zhisuan_expected"] == {"gpu_count": 8, "driver_version": "535.54.03",
                                          "tuning": {"ulimits": {"memlock": None, "nofile": None}}}
        assert hv["zhisuan_acceptance_families"] == ["gpu", "xid", "dcgm"]  # a local lab has no network of its own
        assert Path(hv["zhisuan_lab_state"]).is_file()
    assert hosts["node03"]["zhisuan_lab_faults"] == [{"kind": "ecc_volatile_uncorrectable", "gpu": 3, "count": 2}]
    assert hosts["node01"]["zhisuan_lab_faults"] == []
    assert len(default_lab["stdout"].splitlines()) >= 8 and "node08" in default_lab["stdout"]


def test_healthy_node_is_the_capture_replicated(default_lab):
    root = ET.fromstring(default_lab["xml"]["node01"])
    gpus = root.findall("gpu")
    assert len(gpus) == 8 and root.findtext("attached_gpus") == "8"
    assert root.findtext("driver_version") == "535.54.03"
    assert [g.findtext("pci/pci_bus") for g in gpus] == DGX_BUSES
    assert [g.get("id") for g in gpus] == [f"00000000:{b}:00.0" for b in DGX_BUSES]
    assert [g.findtext("pci/pci_bus_id") for g in gpus] == [g.get("id") for g in gpus]
    assert len({g.findtext("uuid") for g in gpus}) == 8 and len({g.findtext("serial") for g in gpus}) == 8
    assert [g.findtext("minor_number") for g in gpus] == [str(i) for i in range(8)]
    for g in gpus:
        assert g.findtext("mig_mode/current_mig") == "Disabled" == g.findtext("mig_mode/pending_mig")
        assert g.find("mig_devices").text.strip() == "None" and len(g.find("mig_devices")) == 0

    cap_raw = CAPTURE.read_text(encoding="utf-8")
    cap = ET.fromstring(cap_raw.encode())
    cap_gpu = flatten(cap.find("gpu"))
    for g in gpus:
        got = flatten(g)
        for path, text in cap_gpu.items():
            if path in IDENTITY_EDITS or path.startswith(("mig_devices/", "mig_mode/")):
                continue
            assert got[path] == text, path
        assert set(got) - set(cap_gpu) <= {"mig_devices"}
    # Top level and header: byte-identical apart from attached_gpus.
    out = default_lab["xml"]["node01"].decode()
    assert out.startswith(cap_raw[: cap_raw.index("<nvidia_smi_log>")])
    assert "<!DOCTYPE nvidia_smi_log SYSTEM" in out and out.endswith("</nvidia_smi_log>\n")
    for tag in ("timestamp", "driver_version", "cuda_version"):
        assert root.findtext(tag) == cap.findtext(tag)
    # uuids differ between nodes too
    other = ET.fromstring(default_lab["xml"]["node02"])
    assert not {g.findtext("uuid") for g in gpus} & {g.findtext("uuid") for g in other.findall("gpu")}


def test_default_faults(default_lab):
    n3 = ET.fromstring(default_lab["xml"]["node03"]).findall("gpu")
    assert n3[3].findtext("ecc_errors/volatile/dram_uncorrectable") == "2"
    assert n3[3].findtext("ecc_errors/aggregate/dram_uncorrectable") == "2"
    assert all(g.findtext("ecc_errors/volatile/dram_uncorrectable") == "0" for i, g in enumerate(n3) if i != 3)

    n6 = ET.fromstring(default_lab["xml"]["node06"]).findall("gpu")
    assert n6[5].findtext("pci/pci_gpu_link_info/link_widths/current_link_width") == "8x"
    assert n6[5].findtext("pci/pci_gpu_link_info/link_widths/max_link_width") == "16x"
    assert n6[4].findtext("pci/pci_gpu_link_info/link_widths/current_link_width") == "16x"

    n8 = ET.fromstring(default_lab["xml"]["node08"])
    assert len(n8.findall("gpu")) == 7 and n8.findtext("attached_gpus") == "7"
    assert [g.findtext("pci/pci_bus") for g in n8.findall("gpu")] == DGX_BUSES[:7]
    assert default_lab["xml"]["node08"].decode().endswith("    </gpu>\n</nvidia_smi_log>\n")


def test_argument_spellings_and_unsupported(default_lab):
    wrapper = wrapper_of(default_lab, "node01")
    ref = default_lab["xml"]["node01"]
    assert smi(wrapper, "-x", "-q").stdout == ref
    assert smi(wrapper, "--query", "--xml-format").stdout == ref
    for bad in ([], ["-L"], ["-q"], ["--query-gpu=name", "--format=csv"]):
        r = smi(wrapper, *bad)
        assert r.returncode == 2 and r.stdout == b""
        assert b"lab nvidia-smi: unsupported arguments:" in r.stderr


def test_hang_does_not_return(faults_lab):
    proc = subprocess.Popen([wrapper_of(faults_lab, "hang01"), "-q", "-x"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            proc.communicate(timeout=2)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
    assert proc.returncode == -signal.SIGKILL


def test_driver_not_loaded(faults_lab):
    r = smi(wrapper_of(faults_lab, "nodriver01"), "-q", "-x")
    assert r.returncode == 9
    assert r.stdout.decode().strip() == NO_DRIVER


def test_truncated_is_not_valid_xml(faults_lab):
    r = smi(wrapper_of(faults_lab, "trunc01"), "-q", "-x")
    assert r.returncode == 0 and len(r.stdout) == 4096
    with pytest.raises(ET.ParseError):
        ET.fromstring(r.stdout)


def test_thermal_and_driver_mismatch(faults_lab):
    g = ET.fromstring(smi(wrapper_of(faults_lab, "thermal01"), "-q", "-x").stdout).findall("gpu")[2]
    assert g.findtext("temperature/gpu_temp") == "91 C"
    assert g.findtext("temperature/gpu_temp_slow_threshold") == "89 C"
    reasons = g.find("clocks_event_reasons")
    assert reasons.findtext("clocks_event_reason_hw_power_brake_slowdown") == "Active"
    assert reasons.findtext("clocks_event_reason_hw_slowdown") == "Active"
    assert reasons.findtext("clocks_event_reason_hw_thermal_slowdown") == "Not Active"
    root = ET.fromstring(smi(wrapper_of(faults_lab, "drvmismatch01"), "-q", "-x").stdout)
    assert root.findtext("driver_version") == "535.129.03"
    assert faults_lab["hosts"]["drvmismatch01"]["zhisuan_expected"]["driver_version"] == "535.54.03"


def test_unreachable_inventory(faults_lab):
    hv = faults_lab["hosts"]["unreach01"]
    assert hv["ansible_connection"] == "ssh" and hv["ansible_host"] == "127.0.0.1"
    assert hv["ansible_port"] == 9 and hv["ansible_user"] == "zhisuan-lab"
    assert "port 9" in faults_lab["inv"].read_text()


def test_status_and_fault_change_running_lab(tmp_path):
    run_dir, inv, _ = up(tmp_path, "faults.yml")
    res = labctl("fault", "--dir", run_dir, "healthy01", "add", "pcie_width", "gpu=1", "width=4")
    assert res.returncode == 0, res.stderr
    hosts = yaml.safe_load(inv.read_text())["all"]["children"]["gpu_nodes"]["hosts"]
    assert hosts["healthy01"]["zhisuan_lab_faults"] == [{"kind": "pcie_width", "gpu": 1, "width": 4}]
    g = ET.fromstring(smi(hosts["healthy01"]["zhisuan_tools"]["nvidia_smi"], "-q", "-x").stdout).findall("gpu")[1]
    assert g.findtext("pci/pci_gpu_link_info/link_widths/current_link_width") == "4x"
    assert "pcie_width(gpu=1, width=4)" in labctl("status", "--dir", run_dir).stdout
    bad = labctl("fault", "--dir", run_dir, "healthy01", "add", "pcie_width", "gpu=9", "width=4")
    assert bad.returncode == 1 and "gpu 9" in bad.stderr
    assert labctl("fault", "--dir", run_dir, "healthy01", "clear").returncode == 0
    assert "healthy01      a100 x8  healthy" in labctl("status", "--dir", run_dir).stdout


def test_nodes_option_and_down(tmp_path):
    run_dir, inv, res = up(tmp_path, "default.yml", "--nodes", "12")
    hosts = yaml.safe_load(inv.read_text())["all"]["children"]["gpu_nodes"]["hosts"]
    assert list(hosts)[-4:] == ["node09", "node10", "node11", "node12"]
    assert hosts["node12"]["zhisuan_lab_faults"] == []
    assert len([line for line in res.stdout.splitlines() if line.startswith("node")]) == 12
    res = labctl("down", "--dir", run_dir)
    assert res.returncode == 0, res.stderr
    assert not run_dir.exists() and not inv.exists()


def test_down_refuses_unmarked_dir(tmp_path):
    keep = tmp_path / "precious"
    keep.mkdir()
    (keep / "file").write_text("x")
    res = labctl("down", "--dir", keep)
    assert res.returncode == 1 and "marker" in res.stderr and (keep / "file").exists()


@pytest.mark.parametrize("body, message", [
    ({"nodes": {"n1": {"faults": [{"kind": "melted", "gpu": 0}]}}},
     "node n1: faults[0]: unknown fault kind 'melted'"),
    ({"nodes": {"n1": {"fautls": []}}}, "node n1: unknown key(s) ['fautls']"),
    ({"defaults": {"capture": "nvidia-smi/nope.xml"}, "nodes": {"n1": {}}},
     "node n1: capture 'nvidia-smi/nope.xml' not found"),
    ({"nodes": {"n1": {"faults": [{"kind": "ecc_volatile_uncorrectable", "gpu": 8, "count": 1}]}}}, "names gpu 8"),
    ({"nodes": {"n1": {"faults": [{"kind": "throttle", "gpu": 0, "reason": "bogus"}]}}},
     "reason 'bogus' is not in the capture"),
    ({"nodes": {"n1": {"faults": [{"kind": "pcie_width", "gpu": 0}]}}}, "missing parameter(s) ['width']"),
    ({"nodes": []}, "'nodes' must be a non-empty mapping"),
    ({"nodes": {"n1": {}}, "extra": 1}, "unknown key(s) ['extra']"),
    ({"nodes": {"n1": {}}, "vars": {"ansible_user": "x"}}, "'vars' must be a mapping of inventory variables named zhisuan_*"),
])
def test_bad_scenario(tmp_path, body, message):
    scen = tmp_path / "bad.yml"
    scen.write_text(yaml.safe_dump({"name": "bad", **body}))
    res = labctl("up", "--scenario", scen, "--dir", tmp_path / "run", "--inventory", tmp_path / "hosts.yml")
    assert res.returncode == 1
    assert f"scenario {scen}" in res.stderr and message in res.stderr, res.stderr
    assert not (tmp_path / "run").exists() and not (tmp_path / "hosts.yml").exists()


def test_lab_code_reads_only_project_fixtures():
    for path in (REPO / "lab").rglob("*.py"):
        assert "/work/" + "shared" not in path.read_text() and "../" + "shared" not in path.read_text(), path


def test_up_refuses_foreign_inventory(tmp_path):
    inv = tmp_path / "hosts.yml"
    inv.write_text("all: {}\n")
    res = labctl("up", "--dir", tmp_path / "run", "--inventory", inv)
    assert res.returncode == 1 and "not written by labctl" in res.stderr
    assert inv.read_text() == "all: {}\n" and not (tmp_path / "run").exists()


# ------------------------------------------------------------------------ nvlink -s and --gpu-reset

NVLINK_CAPTURE = REPO / "tests" / "fixtures" / "nvidia-smi" / "nvlink-status-a100-sxm4-8gpu.txt"
PROCESS_CAPTURE = REPO / "tests" / "fixtures" / "nvidia-smi" / "q-x-a10g-515.xml"


def lab_node(tmp_path, faults, model="a100"):
    """One node with ``faults``: (wrapper path, state file path)."""
    scen = tmp_path / "one.yml"
    scen.write_text(yaml.safe_dump({"name": "one", "defaults": {"model": model}, "nodes": {"n1": {"faults": faults}}}))
    run_dir, inv, _ = up(tmp_path, scen)
    hv = yaml.safe_load(inv.read_text())["all"]["children"]["gpu_nodes"]["hosts"]["n1"]
    return hv["zhisuan_tools"]["nvidia_smi"], Path(hv["zhisuan_lab_state"])


def blocks(text):
    """[(header, [lines])] of nvlink -s output."""
    out = []
    for line in text.splitlines():
        if line.startswith("GPU "):
            out.append((line, []))
        else:
            out[-1][1].append(line)
    return out


def test_nvlink_status_replays_the_capture_with_the_node_uuids(default_lab):
    wrapper = wrapper_of(default_lab, "node01")
    r = smi(wrapper, "nvlink", "-s")
    assert r.returncode == 0 and r.stderr == b""
    assert smi(wrapper, "nvlink", "--status").stdout == r.stdout
    uuids = [g.findtext("uuid") for g in ET.fromstring(default_lab["xml"]["node01"]).findall("gpu")]
    got, cap = blocks(r.stdout.decode()), blocks(NVLINK_CAPTURE.read_text())
    assert [h for h, _ in got] == ["GPU %d: NVIDIA A100-SXM4-80GB (UUID: %s)" % (i, u) for i, u in enumerate(uuids)]
    assert [lines for _, lines in got] == [lines for _, lines in cap]  # link lines byte-identical to the capture
    assert r.stdout.decode().endswith("Link 11: 25 GB/s\n")


def test_nvlink_status_drops_a_missing_gpu_and_renumbers(default_lab):
    r = smi(wrapper_of(default_lab, "node08"), "nvlink", "-s")
    uuids = [g.findtext("uuid") for g in ET.fromstring(default_lab["xml"]["node08"]).findall("gpu")]
    got = blocks(r.stdout.decode())
    assert [h for h, _ in got] == ["GPU %d: NVIDIA A100-SXM4-80GB (UUID: %s)" % (i, u) for i, u in enumerate(uuids)]
    assert len(got) == 7


def test_nvlink_down_edits_one_link_line(tmp_path):
    wrapper, _ = lab_node(tmp_path, [{"kind": "nvlink_down", "gpu": 3, "link": 5}])
    got, cap = blocks(smi(wrapper, "nvlink", "-s").stdout.decode()), blocks(NVLINK_CAPTURE.read_text())
    assert got[3][1][5] == "         Link 5: <inactive>"
    assert cap[3][1][5] == "         Link 5: 25 GB/s"
    changed = [(g, n) for g in range(8) for n in range(12) if got[g][1][n] != cap[g][1][n]]
    assert changed == [(3, 5)]


def test_pcie_model_prints_the_no_nvlink_form(tmp_path):
    wrapper, _ = lab_node(tmp_path, [], model="t4")
    r = smi(wrapper, "nvlink", "-s")
    uuid = ET.fromstring(smi(wrapper, "-q", "-x").stdout).findall("gpu")[0].findtext("uuid")
    lines = r.stdout.decode().splitlines()
    assert lines[:2] == ["GPU 0: Tesla T4 (UUID: %s)" % uuid, "Device does not have or support Nvlink"]
    assert len(lines) == 16


def test_gpu_process_copies_the_real_process_info(tmp_path):
    wrapper, _ = lab_node(tmp_path, [{"kind": "gpu_process", "gpu": 2, "pid": 4242, "name": "python3"}])
    gpus = ET.fromstring(smi(wrapper, "-q", "-x").stdout).findall("gpu")
    (info,) = gpus[2].find("processes")
    real = ET.parse(str(PROCESS_CAPTURE)).getroot().find("gpu/processes/process_info")
    assert [c.tag for c in info] == [c.tag for c in real]
    edited = dict((c.tag, c.text) for c in info)
    assert edited == dict(dict((c.tag, c.text) for c in real), pid="4242", type="C", process_name="python3")
    assert all(len(g.find("processes")) == 0 for i, g in enumerate(gpus) if i != 2)


def test_gpu_reset_clears_volatile_faults(tmp_path):
    faults = [{"kind": "ecc_volatile_uncorrectable", "gpu": 3, "count": 2}, {"kind": "throttle", "gpu": 3,
              "reason": "hw_slowdown"}, {"kind": "pcie_width", "gpu": 3, "width": 8}, {"kind": "temperature", "gpu": 1,
              "gpu_temp_c": 95}]
    wrapper, state = lab_node(tmp_path, faults)
    r = smi(wrapper, "--gpu-reset", "-i", "3")
    assert (r.returncode, r.stdout.decode(), r.stderr) == (0, "GPU 00000000:4E:00.0 was successfully reset.\nAll done.\n", b"")
    assert json.loads(state.read_text())["faults"] == [
        {"kind": "ecc_aggregate_uncorrectable", "gpu": 3, "count": 2}, {"kind": "pcie_width", "gpu": 3, "width": 8},
        {"kind": "temperature", "gpu": 1, "gpu_temp_c": 95}]
    g = ET.fromstring(smi(wrapper, "-q", "-x").stdout).findall("gpu")[3]
    assert g.findtext("ecc_errors/volatile/dram_uncorrectable") == "0"
    assert g.findtext("ecc_errors/aggregate/dram_uncorrectable") == "2"
    assert g.findtext("clocks_event_reasons/clocks_event_reason_hw_slowdown") == "Not Active"
    r = smi(wrapper, "-i", "1", "-r")
    assert r.returncode == 0 and r.stdout.startswith(b"GPU 00000000:0F:00.0 was successfully reset.")
    assert json.loads(state.read_text())["faults"][-1]["kind"] == "pcie_width"


def test_gpu_reset_refused_while_a_process_holds_the_gpu(tmp_path):
    faults = [{"kind": "gpu_process", "gpu": 3, "pid": 4242, "name": "python3"},
              {"kind": "ecc_volatile_uncorrectable", "gpu": 3, "count": 2}]
    wrapper, state = lab_node(tmp_path, faults)
    before = state.read_text()
    r = smi(wrapper, "-r", "-i", "3")
    assert r.returncode == 255
    assert r.stdout.decode().startswith("\nThe following GPUs could not be reset:\n  GPU 00000000:4E:00.0: In use by "
                                        "another client\n\n1 device is currently being used")
    assert state.read_text() == before
    bad = smi(wrapper, "--gpu-reset", "-i", "8")
    assert bad.returncode == 3 and b"lab nvidia-smi: --gpu-reset -i 8: the node has GPUs 0..7" in bad.stderr
    for args in (["--gpu-reset"], ["--gpu-reset", "-i"], ["-r", "-i", "1", "-q"], ["nvlink"], ["nvlink", "-gt", "r"]):
        r = smi(wrapper, *args)
        assert r.returncode == 2 and b"lab nvidia-smi: unsupported arguments:" in r.stderr, args


@pytest.mark.parametrize("model, fault, message", [
    ("t4", {"kind": "nvlink_down", "gpu": 0, "link": 0}, "fault nvlink_down: a Tesla T4 has no NVLink"),
    ("a100", {"kind": "nvlink_down", "gpu": 0, "link": 12}, "fault nvlink_down: GPU 0 has no link 12 in the nvlink capture"),
    ("a100", {"kind": "gpu_process", "gpu": 0, "pid": 0, "name": "x"}, "'pid' must be > 0 and 'name' non-empty"),
])
def test_nvlink_and_process_faults_checked_at_up(tmp_path, model, fault, message):
    scen = tmp_path / "bad.yml"
    scen.write_text(yaml.safe_dump({"name": "bad", "defaults": {"model": model}, "nodes": {"n1": {"faults": [fault]}}}))
    res = labctl("up", "--scenario", scen, "--dir", tmp_path / "run", "--inventory", tmp_path / "hosts.yml")
    assert res.returncode == 1 and message in res.stderr, res.stderr


def test_driver_not_loaded_and_hang_apply_to_every_command(faults_lab):
    for args in (["nvlink", "-s"], ["--gpu-reset", "-i", "0"]):
        r = smi(wrapper_of(faults_lab, "nodriver01"), *args)
        assert r.returncode == 9 and r.stdout.decode().strip() == NO_DRIVER


def test_scenario_vars_reach_every_node_and_the_lab_keys_win(tmp_path):
    scen = tmp_path / "vars.yml"
    scen.write_text(yaml.safe_dump({"name": "vars", "vars": {"zhisuan_thresholds": {"rdma": {"floor_gbps": 150}},
                                                           "zhisuan_tools": {"nvidia_smi": "/nope"}},
                                    "nodes": {"n1": {}, "n2": {}}}))
    res = labctl("up", "--scenario", scen, "--dir", tmp_path / "run", "--inventory", tmp_path / "hosts.yml")
    assert res.returncode == 0, res.stderr
    hosts = yaml.safe_load((tmp_path / "hosts.yml").read_text())["all"]["children"]["gpu_nodes"]["hosts"]
    for hv in hosts.values():
        assert hv["zhisuan_thresholds"] == {"rdma": {"floor_gbps": 150}}
        assert hv["zhisuan_tools"]["nvidia_smi"].endswith("/bin/nvidia-smi")
    labctl("down", "--dir", tmp_path / "run")


def test_fabric_status_fault_is_one_gpu_failing_registration_and_a_reset_clears_it(tmp_path):
    # issue 24 item 1: every GPU's <fabric> reads Completed / Success (the A100 capture's N/A edited), GPU 2's status
    # is the one a real node printed (Azure/azhpc-images#506); the rules call it this GPU's fault (reset_gpu)
    from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import nvidia_smi as parser
    from ansible_collections.zhisuan.ops.plugins.module_utils._judge import gpu as rules

    wrapper, state = lab_node(tmp_path, [{"kind": "fabric_status", "gpu": 2, "status": "Insufficient Resources"}])
    out = smi(wrapper, "-q", "-x").stdout
    gpus = ET.fromstring(out).findall("gpu")
    assert [(g.findtext("fabric/state"), g.findtext("fabric/status")) for g in gpus] == [
        ("Completed", "Insufficient Resources" if i == 2 else "Success") for i in range(8)]
    checks = [c for c in rules.judge_gpu("n1", parser.parse(out.decode()), None) if c["id"] == "gpu.fabric.state"]
    assert [(c["status"], c["remedy"]) for c in checks] == [
        ("fail", "reset_gpu") if i == 2 else ("pass", "none") for i in range(8)]
    assert smi(wrapper, "--gpu-reset", "-i", "2").returncode == 0
    assert json.loads(state.read_text())["faults"] == []
    gpus = ET.fromstring(smi(wrapper, "-q", "-x").stdout).findall("gpu")
    assert [g.findtext("fabric/state") for g in gpus] == ["N/A"] * 8


# issue 24 item 3: row-remapper faults on the A10G capture (the A100 capture prints <remapped_rows>N/A)
def remap_lab(tmp_path, faults):
    scen = tmp_path / "one.yml"
    scen.write_text(yaml.safe_dump({"name": "one", "defaults": {"model": "a10g", "gpus": 2},
                                    "nodes": {"n1": {"faults": faults}}}))
    dummy, inv, _ = up(tmp_path, scen)
    host = yaml.safe_load(inv.read_text())["all"]["children"]["gpu_nodes"]["hosts"]["n1"]
    return host["zhisuan_tools"]["nvidia_smi"], host["zhisuan_lab_state"]


def test_lab_remap_faults_edit_the_a10g_capture_and_a_reset_completes_the_pending_remap(tmp_path):
    wrapper, state = remap_lab(tmp_path, [{"kind": "remap_pending", "gpu": 0}, {"kind": "remap_failure", "gpu": 1},
                                    {"kind": "remap_banks_exhausted", "gpu": 1, "banks": 3}])
    out = smi(wrapper, "-q", "-x").stdout
    rows = [g.find("remapped_rows") for g in ET.fromstring(out).findall("gpu")]
    assert [r.findtext("remapped_row_pending") for r in rows] == ["Yes", "No"]
    assert [r.findtext("remapped_row_failure") for r in rows] == ["No", "Yes"]
    assert rows[1].findtext("row_remapper_histogram/row_remapper_histogram_none") == "3 bank(s)"
    assert rows[1].findtext("row_remapper_histogram/row_remapper_histogram_max") == "189 bank(s)"
    from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import nvidia_smi
    from ansible_collections.zhisuan.ops.plugins.module_utils._judge import gpu as rules

    checks = rules.judge_gpu("n1", nvidia_smi.parse(out.decode()), None)
    failing = [(c["id"], c["component"].split(" (")[0], c["remedy"]) for c in checks
               if c["id"].startswith("gpu.remap.") and c["status"] == "fail"]
    assert failing == [("gpu.remap.pending", "GPU 0", "reset_gpu"), ("gpu.remap.failure", "GPU 1", "rma"),
                       ("gpu.remap.uncorrectable", "GPU 1", "rma")]
    assert smi(wrapper, "--gpu-reset", "-i", "0").returncode == 0
    with open(state, encoding="utf-8") as handle:
        assert [f["kind"] for f in json.load(handle)["faults"]] == ["remap_failure", "remap_banks_exhausted"]


def test_lab_remap_fault_on_a_capture_without_remapper_values_is_refused_at_up(tmp_path):
    scen = tmp_path / "one.yml"
    scen.write_text(yaml.safe_dump({"name": "one", "defaults": {"model": "a100"},
                                    "nodes": {"n1": {"faults": [{"kind": "remap_pending", "gpu": 0}]}}}))
    res = labctl("up", "--scenario", scen, "--dir", tmp_path / "run", "--inventory", tmp_path / "inv" / "hosts.yml")
    assert res.returncode == 1
    assert "fault remap_pending: the capture prints no row-remapper values" in res.stderr


# ----------------------------------------------------------------------- nvlink -R, -c and -gt d (issue 23)

def test_nvlink_topology_forms_edit_real_captures_and_carry_their_faults(tmp_path):
    """-R, -c and -gt d of an A100 node, read by the collection's own readers: every port claimed once, one common
    capability set, the counters grown by the lab's nvbandwidth - and each fault where it was put."""
    from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import nvidia_smi, nvlink_info

    faults = [{"kind": "nvlink_remote_port", "gpu": 2, "link": 3, "port": 30},
              {"kind": "nvlink_capability", "gpu": 4, "link": 1, "capability": "p2p"},
              {"kind": "nvlink_idle", "gpu": 6, "link": 7},
              {"kind": "nvlink_down", "gpu": 1, "link": 0}]
    wrapper, state = lab_node(tmp_path, faults)
    gpus = nvidia_smi.parse_xml(smi(wrapper, "-q", "-x").stdout.decode())["gpus"]
    remote = nvlink_info.remote_facts(nvlink_info.parse_remote(smi(wrapper, "nvlink", "-R").stdout.decode()), gpus)
    assert [gpu["links"] for gpu in remote["gpus"]] == [12, 11, 12, 12, 12, 12, 12, 12]  # GPU 1 link 0 is down
    assert [gpu["index"] for gpu in remote["gpus"] if gpu["shared"]] == [2]
    assert remote["gpus"][2]["shared"] == ["0005:00:00.0 link 30 is claimed by GPU 2 link 2, GPU 2 link 3"]
    assert all(len(gpu["switches"]) == 6 and not gpu["peers"] for gpu in remote["gpus"])
    caps = nvlink_info.capability_facts(nvlink_info.parse_capabilities(
        smi(wrapper, "nvlink", "-c").stdout.decode()))
    assert caps["common"]["p2p"] is True and caps["common"]["link"] is False  # the H800 capture's set
    assert [(gpu["index"], gpu["odd"]) for gpu in caps["gpus"] if gpu["odd"]] == [
        (4, [{"link": 1, "differs": {"p2p": False}}])]
    before = nvlink_info.parse_throughput(smi(wrapper, "nvlink", "-gt", "d").stdout.decode())
    nvbandwidth = os.path.join(os.path.dirname(wrapper), "nvbandwidth")  # the node's wrappers sit together
    ran = subprocess.run([nvbandwidth, "-t", "device_to_device_memcpy_read_ce"], capture_output=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    after = nvlink_info.parse_throughput(smi(wrapper, "nvlink", "--getthroughput", "d").stdout.decode())
    moved = nvlink_info.traffic_facts(before, after, 5)
    idle = [(gpu["index"], link["link"]) for gpu in moved["gpus"] for link in gpu["links"] if not link["tx_kib"]]
    assert idle == [(1, 0), (6, 7)]
    assert moved["gpus"][0]["links"][0] == {"link": 0, "tx_kib": 4194304, "rx_kib": 4194304, "reset": False}
    assert json.loads(state.read_text())["nvlink_traffic_kib"] == 4194304
