# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The lab's `flood` fault: the named tool prints its real output and then the same again without end (a looping
tool). Through the project's runner it stops at the tool's output cap with the typed error; a healthy node's tool
and the node's other tools are untouched."""

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ansible_collections.zhisuan.ops.plugins.module_utils import _runner
from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ToolOutputTooLarge

REPO = Path(__file__).resolve().parents[2]
LABCTL = REPO / "lab" / "labctl.py"


def labctl(*args):
    return subprocess.run([sys.executable, str(LABCTL), *map(str, args)], capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("flood")
    scenario = tmp / "flood.yml"
    scenario.write_text(yaml.safe_dump({"name": "flood", "defaults": {"model": "a100"}, "nodes": {
        "flood01": {"faults": [{"kind": "flood", "tool": "nvidia-smi"}]},
        "flood02": {"faults": [{"kind": "flood", "tool": "journalctl"}]},
        "healthy01": {}}}))
    res = labctl("up", "--scenario", scenario, "--dir", tmp / "run", "--inventory", tmp / "hosts.yml")
    assert res.returncode == 0, res.stderr
    hosts = yaml.safe_load((tmp / "hosts.yml").read_text())["all"]["children"]["gpu_nodes"]["hosts"]
    yield hosts
    labctl("down", "--dir", tmp / "run")


def test_a_flooding_nvidia_smi_stops_at_its_cap_with_the_typed_error(lab):
    flooding = lab["flood01"]["zhisuan_tools"]["nvidia_smi"]
    with pytest.raises(ToolOutputTooLarge) as info:
        _runner.run([flooding, "-q", "-x"], timeout=60, tool="nvidia-smi", max_output=4 * _runner.MIB)
    assert str(info.value).startswith("nvidia-smi: output over 4 MiB (process group killed)")
    # what it printed is the real capture, again and again
    healthy = _runner.run([lab["healthy01"]["zhisuan_tools"]["nvidia_smi"], "-q", "-x"], timeout=60, tool="nvidia-smi")
    assert healthy.stdout.startswith("<?xml") and len(healthy.stdout) < 4 * _runner.MIB
    assert info.value.stdout.startswith(healthy.stdout[:1000])


def test_a_flooding_kernel_log_repeats_the_real_log_and_the_other_tools_are_untouched(lab):
    journalctl = lab["flood02"]["zhisuan_tools"]["journalctl"]
    lines = []
    with pytest.raises(ToolOutputTooLarge):
        # the lines are counted as they stream; the cap of a stream bounds one line, so a total cap is the test's
        _runner.run([journalctl, "_TRANSPORT=kernel", "-o", "short-iso", "--no-pager"], timeout=60, tool="journalctl",
                    on_line=lambda line: lines.append(line) if len(lines) < 5000 else _over())
    once = _runner.run([lab["healthy01"]["zhisuan_tools"]["journalctl"], "_TRANSPORT=kernel", "-o", "short-iso",
                        "--no-pager"], timeout=60, tool="journalctl").stdout.replace(" healthy01 ", " flood02 ").splitlines()
    assert len(once) > 10 and lines[:len(once)] == once and lines[len(once):2 * len(once)] == once
    # the flooding node's nvidia-smi is not flooding
    smi = _runner.run([lab["flood02"]["zhisuan_tools"]["nvidia_smi"], "-q", "-x"], timeout=60, tool="nvidia-smi")
    assert smi.stdout.startswith("<?xml") and smi.stdout.rstrip().endswith("</nvidia_smi_log>")


def _over():
    raise ToolOutputTooLarge("journalctl", "test: enough lines seen")
