# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""MIG (issue 24 item 6) on real captures: the MIG devices of nvidia-smi -q (text, H100 with 4 MIG devices, from
utkuozdemir/nvidia_gpu_exporter) and -q -x (XML, A100 with 4, from influxdata/telegraf) read the same way; a GPU in
MIG mode gets ``gpu.mig.mode`` (its MIG devices, against zhisuan_expected.mig_devices_per_gpu), a pending MIG change
asks for a GPU reset, MIG on with no MIG device is a warning; a GPU without MIG gets no MIG check. Faults are the real
captures edited."""

from __future__ import annotations

import os
import re

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import nvidia_smi
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import gpu as rules
from ansible_collections.zhisuan.ops.plugins.plugin_utils._profiles import load_profiles

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "nvidia-smi")
H100_TEXT = "excerpt-h100-mig-q-load.txt"
A100_XML = "q-x-a100-sxm4-80gb-mig-535.xml"
PROFILES = load_profiles()


def read(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        return handle.read()


def mig_checks(text, profile, expected=None):
    warnings = []
    facts = nvidia_smi.parse(text, warn=warnings.append)
    assert warnings == []
    checks = rules.judge_gpu("node01", facts, PROFILES[profile], expected=expected)
    return facts, [check for check in checks if check["id"] == "gpu.mig.mode"]


def test_mig_devices_read_from_text_and_xml():
    text = nvidia_smi.parse(read(H100_TEXT))["gpus"][0]
    assert text["mig_mode"] == {"current": "Enabled", "pending": "Enabled"}
    assert [(d["index"], d["gpu_instance_id"], d["memory_total_mib"], d["multiprocessors"])
            for d in text["mig_devices"]] == [(0, 2, 40448, 60), (1, 3, 20096, 32), (2, 9, 9984, 16), (3, 10, 9984, 16)]
    xml = nvidia_smi.parse(read(A100_XML))["gpus"][0]
    assert [(d["index"], d["gpu_instance_id"], d["compute_instance_id"], d["memory_total_mib"])
            for d in xml["mig_devices"]] == [(0, 3, 0, 19968), (1, 4, 0, 19968), (2, 5, 0, 19968), (3, 6, 0, 19968)]
    healthy = nvidia_smi.parse(read("excerpt-h100-80gb-hbm3-q-load.txt"))["gpus"][0]
    assert healthy["mig_devices"] is None and healthy["mig_mode"]["current"] == "Disabled"


@pytest.mark.parametrize("name, profile", [(H100_TEXT, "h100"), (A100_XML, "a100")])  # GPU 0; GPU 1 (minor number)
def test_a_gpu_in_mig_mode_passes_with_its_devices_named(name, profile):
    facts, [check] = mig_checks(read(name), profile)
    assert (check["status"], check["observed"], check["remedy"]) == ("pass", 4, "none")
    memory = ", ".join("%s MiB" % d["memory_total_mib"] for d in facts["gpus"][0]["mig_devices"])
    assert check["message"] == "GPU %s is in MIG mode with 4 MIG devices (%s)" % (facts["gpus"][0]["index"], memory)
    dummy, [check] = mig_checks(read(name), profile, expected={"mig_devices_per_gpu": 4})
    assert (check["status"], check["expected"]) == ("pass", "== 4")


def test_fewer_mig_devices_than_the_bill_of_materials_fails():
    dummy, [check] = mig_checks(read(H100_TEXT), "h100", expected={"mig_devices_per_gpu": 7})
    assert (check["status"], check["observed"], check["expected"], check["remedy"]) == ("fail", 4, "== 7",
                                                                                         "investigate")
    assert check["message"] == ("GPU 0 has 4 MIG devices (40448 MiB, 20096 MiB, 9984 MiB, 9984 MiB) where 7 per GPU "
                                "are expected (zhisuan_expected.mig_devices_per_gpu): the MIG layout differs")


def test_a_pending_mig_change_asks_for_a_gpu_reset():
    # the real text capture with MIG turned off but not yet applied (pending Disabled)
    text = re.sub(r"(MIG Mode\n\s+Current\s+: Enabled\n\s+Pending\s+: )Enabled", r"\1Disabled", read(H100_TEXT))
    assert text != read(H100_TEXT)
    dummy, [check] = mig_checks(text, "h100")
    assert (check["status"], check["remedy"], check["observed"]) == ("warn", "reset_gpu", "Enabled, Disabled pending")
    assert "takes effect only after a GPU reset" in check["message"]
    # and the other way: MIG asked for on a GPU that runs without it
    xml = read("q-x-a100-sxm4-80gb-mig-535.xml").replace("<current_mig>Enabled</current_mig>",
                                                           "<current_mig>Disabled</current_mig>")
    dummy, [check] = mig_checks(xml, "a100")
    assert (check["status"], check["remedy"]) == ("warn", "reset_gpu")


def test_mig_on_with_no_mig_device_warns():
    # the real XML capture with its <mig_device> elements removed (MIG on, no GPU instance created)
    xml = re.sub(r"<mig_devices>.*?</mig_devices>", "<mig_devices>\n        </mig_devices>", read(A100_XML),
                 flags=re.S)
    facts, [check] = mig_checks(xml, "a100")
    assert facts["gpus"][0]["mig_devices"] is None
    assert (check["status"], check["remedy"]) == ("warn", "investigate")
    assert "in MIG mode with no MIG device made" in check["message"]


def test_a_gpu_without_mig_gets_no_mig_check():
    dummy, checks = mig_checks(read("excerpt-h100-80gb-hbm3-q-load.txt"), "h100", expected={"mig_devices_per_gpu": 7})
    assert checks == []
