# SPDX-License-Identifier: GPL-3.0-or-later
"""The render cache of the lab's simulated tools (lab/sim/_simcache.py, issue 13): a repeated call on an unchanged
node replays the stored rendering byte for byte; any change of the state file, of a simulator's code or of a capture
it reads makes the next call render again; calls that are not pure functions of the node never store anything.

A real lab through labctl in a temporary directory, no mocks. That a reply came from the cache is shown by editing
the stored entry's payload: the next call prints the edited bytes only if it replayed the entry."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
LABCTL = REPO / "lab" / "labctl.py"
SIM_DIR = REPO / "lab" / "sim"
CAPTURE = REPO / "tests" / "fixtures" / "nvidia-smi" / "q-x-a100-sxm4-80gb-mig-535.xml"
MARKER = b"replayed from the cache\n"

JOURNAL_24H = ("_TRANSPORT=kernel", "-o", "short-iso", "--no-pager", "--since=-24h")
# (tool, args, cache entry name): the calls the inspect run makes whose output is a pure function of the node
CACHED = [
    ("nvidia-smi", ("-q", "-x"), "nvidia_smi@-q@-x"),
    ("nvidia-smi", ("nvlink", "-s"), "nvidia_smi@nvlink@-s"),
    ("nvidia-smi", ("topo", "-m"), "nvidia_smi@topo@-m"),
    ("dcgmi", ("diag", "-r", "3", "-j"), "dcgmi@diag@-r@3@-j"),
    ("dcgmi", ("health", "-c", "-j"), "dcgmi@health@-c@-j"),
    ("dcgmi", ("--version",), "dcgmi@--version"),
    ("dmesg", ("--decode", "--time-format=iso"), "kernel_log@--decode@--time-format=iso"),
    ("journalctl", ("-k", "-o", "short-iso", "--no-pager"), "kernel_log@-k@-o@short-iso@--no-pager"),
    ("journalctl", ("-k", "-o", "short-iso", "--since", "2020-01-01 00:00"),
     "kernel_log@-k@-o@short-iso@--since@2020-01-01%2000%3A00"),
]


def labctl(*args):
    return subprocess.run([sys.executable, str(LABCTL), *map(str, args)], capture_output=True, text=True, timeout=60)


class Lab:
    def __init__(self, tmp_path, nodes):
        scenario = tmp_path / "scenario.yml"
        scenario.write_text(yaml.safe_dump({"name": "cache", "defaults": {"model": "a100", "gpus": 8},
                                            "nodes": nodes}))
        self.dir, inv = tmp_path / "run", tmp_path / "hosts.yml"
        res = labctl("up", "--scenario", scenario, "--dir", self.dir, "--inventory", inv)
        assert res.returncode == 0, res.stderr
        self.hosts = yaml.safe_load(inv.read_text())["all"]["children"]["gpu_nodes"]["hosts"]
        for node in self.hosts:
            self.age(node)

    def state(self, node):
        return self.dir / "nodes" / node / "state.json"

    def cache(self, node):
        return self.dir / "nodes" / node / "cache"

    def entries(self, node):
        return sorted(p.name for p in self.cache(node).iterdir()) if self.cache(node).is_dir() else []

    def age(self, node):
        """Date the state file 10 s back: a file changed within 50 ms before a render is not stored (a later write
        could carry the same timestamp), so the tests would otherwise depend on how fast labctl returned."""
        past = time.time_ns() - 10 * 10**9
        os.utime(self.state(node), ns=(past, past))

    def run(self, node, tool, *args, timeout=20):
        wrapper = self.dir / "nodes" / node / "bin" / tool
        return subprocess.run([str(wrapper), *args], capture_output=True, timeout=timeout)

    def fault(self, node, *args):
        res = labctl("fault", "--dir", self.dir, node, *args)
        assert res.returncode == 0, res.stderr
        self.age(node)


def tamper(entry):
    """Replace the stored stdout of an entry (its header kept): a call that prints MARKER replayed the entry."""
    head, sep, _ = entry.read_bytes().partition(b"\n\n")
    assert sep
    entry.write_bytes(head + sep + MARKER)


def direct(lab, node, sim, *args):
    """The simulator run as before the cache (no launcher): what the cached wrapper must reproduce."""
    return subprocess.run([sys.executable, "-I", "-S", str(SIM_DIR / f"{sim}.py"), "--state", str(lab.state(node)),
                           *args], capture_output=True, timeout=20)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    return Lab(tmp_path_factory.mktemp("simcache"), {"n1": {}})


def test_wrappers_go_through_the_launcher_only_for_cacheable_simulators(lab):
    bin_dir = lab.dir / "nodes" / "n1" / "bin"
    for tool in ("nvidia-smi", "dcgmi", "journalctl", "dmesg"):
        assert "/lab/sim/_launch.py " in (bin_dir / tool).read_text(), tool
    assert "/lab/sim/gpu_burn.py --state " in (bin_dir / "gpu_burn").read_text()


@pytest.mark.parametrize("tool, args, name", CACHED, ids=[" ".join((t,) + a) for t, a, _ in CACHED])
def test_a_repeated_call_replays_the_stored_rendering(lab, tool, args, name):
    entry = lab.cache("n1") / name
    if entry.exists():
        entry.unlink()
    first = lab.run("n1", tool, *args)
    assert (first.returncode, first.stderr) == (0, b"") and first.stdout
    assert entry.is_file()
    sim = name.split("@", 1)[0]
    assert first.stdout == direct(lab, "n1", sim, *args).stdout  # the stored rendering is the simulator's
    second = lab.run("n1", tool, *args)
    assert (second.returncode, second.stdout, second.stderr) == (0, first.stdout, b"")
    assert entry.read_bytes().endswith(b"\n\n" + first.stdout)
    tamper(entry)
    hit = lab.run("n1", tool, *args)
    assert (hit.returncode, hit.stdout, hit.stderr) == (0, MARKER, b"")
    entry.unlink()


def test_the_hit_path_imports_no_heavy_module(lab):
    args = ("-q", "-x")
    assert lab.run("n1", "nvidia-smi", *args).returncode == 0
    assert lab.run("n1", "nvidia-smi", *args).returncode == 0  # stored by now
    res = subprocess.run([sys.executable, "-X", "importtime", "-I", "-S", str(SIM_DIR / "_launch.py"), "nvidia_smi",
                          "--state", str(lab.state("n1")), *args], capture_output=True, timeout=20)
    assert res.returncode == 0 and res.stdout.startswith(b"<?xml")
    imported = [line.rsplit("|", 1)[-1].strip() for line in res.stderr.decode().splitlines()]
    assert "_simcache" in imported
    heavy = {"re", "json", "xml.etree.ElementTree", "copy", "calendar", "nvidia_smi", "_common", "os"}
    assert not heavy & set(imported), imported


def test_the_key_is_the_exact_arguments(lab):
    for args in (("-q", "-x"), ("-x", "-q"), ("--query", "--xml-format")):
        assert lab.run("n1", "nvidia-smi", *args).returncode == 0
    names = set(lab.entries("n1"))
    assert {"nvidia_smi@-q@-x", "nvidia_smi@-x@-q", "nvidia_smi@--query@--xml-format"} <= names
    tamper(lab.cache("n1") / "nvidia_smi@-x@-q")
    assert lab.run("n1", "nvidia-smi", "-q", "-x").stdout != MARKER
    assert lab.run("n1", "nvidia-smi", "-x", "-q").stdout == MARKER
    (lab.cache("n1") / "nvidia_smi@-x@-q").unlink()


def test_a_fault_added_through_labctl_changes_the_next_output(tmp_path):
    lab = Lab(tmp_path, {"n1": {}})
    before = {(tool, args): lab.run("n1", tool, *args) for tool, args, _ in CACHED[:4] + CACHED[6:7]}
    assert all(r.returncode == 0 for r in before.values())
    assert len(lab.entries("n1")) == 5

    lab.fault("n1", "add", "temperature", "gpu=1", "gpu_temp_c=95")
    xml = lab.run("n1", "nvidia-smi", "-q", "-x")
    assert xml.returncode == 0 and xml.stdout != before[("nvidia-smi", ("-q", "-x"))].stdout
    assert xml.stdout == direct(lab, "n1", "nvidia_smi", "-q", "-x").stdout
    assert xml.stdout.count(b"<gpu_temp>95 C</gpu_temp>") == 1

    lab.fault("n1", "add", "xid", "gpu=3", "code=79")
    dmesg = lab.run("n1", "dmesg", "--decode", "--time-format=iso")
    assert dmesg.returncode == 0 and b"NVRM: Xid (PCI:0000:4e:00): 79, " in dmesg.stdout
    assert b"Xid" not in before[("dmesg", ("--decode", "--time-format=iso"))].stdout

    lab.fault("n1", "add", "dcgm_fail", "test=memory", "gpu=2")
    diag = lab.run("n1", "dcgmi", "diag", "-r", "3", "-j")
    assert diag.returncode == 226 and b'"status" : "Fail"' in diag.stdout
    assert lab.run("n1", "dcgmi", "diag", "-r", "3", "-j").returncode == 226  # a failed diag is never replayed
    lab.fault("n1", "remove", "dcgm_fail")
    again = lab.run("n1", "dcgmi", "diag", "-r", "3", "-j")
    assert (again.returncode, again.stdout) == (0, before[("dcgmi", ("diag", "-r", "3", "-j"))].stdout)


def test_a_state_file_rewritten_in_place_changes_the_next_output(tmp_path):
    lab = Lab(tmp_path, {"n1": {"faults": [{"kind": "temperature", "gpu": 1, "gpu_temp_c": 95}]}})
    state = lab.state("n1")
    first = lab.run("n1", "nvidia-smi", "-q", "-x").stdout
    assert b"<gpu_temp>95 C</gpu_temp>" in first and lab.entries("n1") == ["nvidia_smi@-q@-x"]
    # same inode, same size, and the old modification time put back (what `cp -p` over it does): the change time
    # still tells the two states apart
    st = state.stat()
    text = state.read_text()
    with open(state, "r+", encoding="utf-8") as fh:
        fh.write(text.replace('"gpu_temp_c": 95', '"gpu_temp_c": 96'))
    os.utime(state, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = state.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (st.st_ino, st.st_size, st.st_mtime_ns)
    second = lab.run("n1", "nvidia-smi", "-q", "-x").stdout
    assert b"<gpu_temp>96 C</gpu_temp>" in second and b"<gpu_temp>95 C</gpu_temp>" not in second
    # rewritten like the other tests do (a new write, new size)
    state.write_text(json.dumps(dict(json.loads(text), faults=[])))
    lab.age("n1")
    third = lab.run("n1", "nvidia-smi", "-q", "-x").stdout
    assert b"<gpu_temp>9" not in third and third == direct(lab, "n1", "nvidia_smi", "-q", "-x").stdout


def test_a_gpu_reset_changes_the_next_output(tmp_path):
    lab = Lab(tmp_path, {"n1": {"faults": [{"kind": "ecc_volatile_uncorrectable", "gpu": 3, "count": 2}]}})

    def ecc():
        gpu = ET.fromstring(lab.run("n1", "nvidia-smi", "-q", "-x").stdout).findall("gpu")[3]
        return (gpu.findtext("ecc_errors/volatile/dram_uncorrectable"),
                gpu.findtext("ecc_errors/aggregate/dram_uncorrectable"))

    volatile, aggregate = ecc()
    assert volatile == "2" and ecc() == (volatile, aggregate)
    assert (lab.cache("n1") / "nvidia_smi@-q@-x").is_file()
    reset = lab.run("n1", "nvidia-smi", "--gpu-reset", "-i", "3")
    assert (reset.returncode, reset.stdout, reset.stderr) == (
        0, b"GPU 00000000:4E:00.0 was successfully reset.\nAll done.\n", b"")
    assert ecc() == ("0", aggregate)  # the volatile count is cleared, the errors stay in the lifetime count
    assert lab.entries("n1") == ["nvidia_smi@-q@-x"]  # the reset itself stored nothing


def test_calls_that_are_not_pure_never_store(tmp_path):
    lab = Lab(tmp_path, {
        "n1": {"faults": [{"kind": "nvlink_errors", "gpu": 0, "link": 0, "counter": "crc", "per_read": 5}]},
        "nojournal": {"faults": ["no_journal"]},
        "nodriver": {"faults": ["driver_not_loaded"]},
        "failing": {"faults": [{"kind": "dcgm_fail", "test": "memory", "gpu": 2}]},
    })
    # writes the state (GPU reset; nvlink -e counts its reads there)
    assert lab.run("n1", "nvidia-smi", "--gpu-reset", "-i", "0").returncode == 0
    reads = [lab.run("n1", "nvidia-smi", "nvlink", "-e").stdout for _ in range(2)]
    assert reads[0] != reads[1] and json.loads(lab.state("n1").read_text())["nvlink_e_reads"] == 2
    # depends on the clock: a --since relative to now
    for since in ("--since=-24h", "--since=today", "--since=-1h 30min"):
        res = lab.run("n1", "journalctl", *JOURNAL_24H[:-1], since)
        assert (res.returncode, res.stderr) == (0, b"") and res.stdout
    # errors and usage errors
    assert lab.run("n1", "nvidia-smi", "bogus").returncode == 2
    assert lab.run("n1", "journalctl", "-k", "-o", "short-iso", "--since", "bogus").returncode == 1
    assert lab.run("n1", "dcgmi", "diag", "-r", "3", "-j", "-i", "9").returncode == 2
    assert lab.entries("n1") == []
    # rc != 0 or anything on stderr
    nodriver = lab.run("nodriver", "nvidia-smi", "-q", "-x")
    assert nodriver.returncode == 9 and lab.run("nodriver", "nvidia-smi", "-q", "-x").stdout == nodriver.stdout
    assert lab.run("failing", "dcgmi", "diag", "-r", "3", "-j").returncode == 226
    journal = lab.run("nojournal", "journalctl", "-k", "-o", "short-iso")
    assert (journal.returncode, journal.stdout, journal.stderr) == (0, b"-- No entries --\n",
                                                                    b"No journal files were found.\n")
    assert lab.entries("nodriver") == lab.entries("failing") == lab.entries("nojournal") == []
    # a log placed relative to now (no `started` in the state)
    state = json.loads(lab.state("n1").read_text())
    del state["started"]
    lab.state("n1").write_text(json.dumps(state))
    lab.age("n1")
    assert lab.run("n1", "dmesg", "--decode", "--time-format=iso").returncode == 0
    assert lab.entries("n1") == []


def test_a_hung_tool_stores_nothing(tmp_path):
    lab = Lab(tmp_path, {"n1": {"faults": [{"kind": "hang", "tool": "nvidia-smi"}]}})
    wrapper = lab.dir / "nodes" / "n1" / "bin" / "nvidia-smi"
    proc = subprocess.Popen([str(wrapper), "-q", "-x"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    with pytest.raises(subprocess.TimeoutExpired):
        proc.communicate(timeout=1.5)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()
    assert lab.entries("n1") == []


def test_a_state_changed_just_before_the_render_is_not_stored(tmp_path):
    lab = Lab(tmp_path, {"n1": {}})
    # as if written this instant: a write after it could look the same. Dated ahead of now, not at now: the
    # wrapper's start-up before the render reads its clock can take longer than RACY_NS (50 ms) on a loaded machine,
    # and then "now" would no longer be "just before the render"; a time ahead of it stays racy however long it takes
    soon = time.time_ns() + 10 * 10**9
    os.utime(lab.state("n1"), ns=(soon, soon))
    first = lab.run("n1", "dcgmi", "health", "-c", "-j")
    assert first.returncode == 0 and lab.entries("n1") == []
    lab.age("n1")
    assert lab.run("n1", "dcgmi", "health", "-c", "-j").stdout == first.stdout
    assert lab.entries("n1") == ["dcgmi@health@-c@-j"]


@pytest.mark.parametrize("path", [SIM_DIR / "nvidia_smi.py", SIM_DIR / "_common.py", CAPTURE],
                         ids=["simulator", "_common", "capture"])
def test_editing_the_code_or_a_capture_invalidates(lab, path):
    entry = lab.cache("n1") / "nvidia_smi@-q@-x"
    real = lab.run("n1", "nvidia-smi", "-q", "-x").stdout
    lab.run("n1", "nvidia-smi", "-q", "-x")
    assert str(path) in entry.read_bytes().partition(b"\n\n")[0].decode()  # the entry names the file
    tamper(entry)
    assert lab.run("n1", "nvidia-smi", "-q", "-x").stdout == MARKER
    st = path.stat()
    try:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # what an editor's save does to the key
        assert lab.run("n1", "nvidia-smi", "-q", "-x").stdout == real
    finally:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_down_removes_the_cache(tmp_path):
    lab = Lab(tmp_path, {"n1": {}})
    assert lab.run("n1", "dcgmi", "--version").returncode == 0
    assert lab.entries("n1") == ["dcgmi@--version"]
    assert labctl("down", "--dir", lab.dir).returncode == 0
    assert not lab.dir.exists()
