# SPDX-License-Identifier: GPL-3.0-or-later
"""bmc_discover against live lab BMCs: two Redfish services (our server over captured DGX H100 and Dell R750 trees)
and one ipmi_sim, all on 127.0.0.1 with their own ports; closed ports answer nothing."""

from __future__ import annotations

import json
import os
import socket
import sys

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.zhisuan.ops.plugins.module_utils._discover import parse_pong
from ansible_collections.zhisuan.ops.plugins.modules import bmc_discover

pytestmark = pytest.mark.usefixtures("as_node")

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
sys.path.insert(0, REPO)
from lab.bmc import ipmi_sim, redfish_lab  # noqa: E402


def _closed_port(kind):
    sock = socket.socket(socket.AF_INET, kind)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


@pytest.fixture(scope="module")
def bmcs(tmp_path_factory):
    run_dir = str(tmp_path_factory.mktemp("discover"))
    redfish = redfish_lab.start(run_dir, [{"node": "dgx01", "tree": "nvidia-dgx-h100-viking", "faults": []},
                                          {"node": "dell01", "tree": "dell-poweredge-r750-h100-pcie", "faults": []}])
    try:
        ipmi = ipmi_sim.start(run_dir, ["ipmi01"])
    except BaseException:
        redfish_lab.stop(run_dir)
        raise
    yield redfish, ipmi
    ipmi_sim.stop(run_dir)
    redfish_lab.stop(run_dir)


def _run(args, capsys):
    with patch_module_args(args):
        with pytest.raises(SystemExit) as info:
            bmc_discover.main()
    return info.value.code, json.loads(capsys.readouterr().out)


def test_finds_every_lab_bmc_and_nothing_else(bmcs, capsys):
    redfish, ipmi = bmcs
    dgx, dell = redfish["dgx01"], redfish["dell01"]
    args = {"cidr": ["127.0.0.1/32"], "ca_path": dgx["ca_path"], "timeout": 3,
            "redfish_ports": [dgx["port"], dell["port"], _closed_port(socket.SOCK_STREAM)],
            "ipmi_ports": [ipmi["ipmi01"]["port"], _closed_port(socket.SOCK_DGRAM)],
            "bmc_username": dgx["username"], "bmc_password": dgx["password"]}
    code, out = _run(args, capsys)
    assert code == 0, out
    assert out["probed"] == 1
    found = dict(((item["protocol"], item["port"]), item) for item in out["bmcs"])
    assert sorted(found) == sorted([("redfish", dgx["port"]), ("redfish", dell["port"]), ("ipmi", ipmi["ipmi01"]["port"])])
    assert found[("redfish", dgx["port"])]["model"] == "DGXH100"
    assert found[("redfish", dgx["port"])]["auth"] == "ok"
    assert found[("redfish", dell["port"])]["vendor"] == "Dell Inc."
    assert found[("redfish", dell["port"])]["serial"]
    assert found[("ipmi", ipmi["ipmi01"]["port"])]["protocol"] == "ipmi"
    assert dgx["password"] not in json.dumps(out)


def test_wrong_password_is_reported_not_hidden(bmcs, capsys):
    dgx = bmcs[0]["dgx01"]
    code, out = _run({"cidr": ["127.0.0.1"], "ca_path": dgx["ca_path"], "redfish_ports": [dgx["port"]],
                      "ipmi_ports": [], "bmc_username": "admin", "bmc_password": "wrong-one"}, capsys)
    assert code == 0
    assert [(item["protocol"], item["auth"]) for item in out["bmcs"]] == [("redfish", "failed")]
    assert "wrong-one" not in json.dumps(out)


def test_untrusted_certificate_is_reported_not_skipped(bmcs, capsys):
    dgx = bmcs[0]["dgx01"]
    code, out = _run({"cidr": ["127.0.0.1"], "redfish_ports": [dgx["port"]], "ipmi_ports": []}, capsys)
    # validate_certs is on by default: without the lab CA the TLS handshake fails, and the finding says so
    assert code == 0 and [item["port"] for item in out["bmcs"]] == [dgx["port"]]
    assert "certificate" in out["bmcs"][0]["tls_error"].lower()


def test_range_limits_and_bad_ranges(capsys):
    code, out = _run({"cidr": ["10.0.0.0/16"]}, capsys)
    assert code == 1 and out["msg"] == "bmc_discover: 10.0.0.0/16 has 65536 addresses, over max_addresses 4096"
    code, out = _run({"cidr": ["10.0.0.300/24"]}, capsys)
    assert code == 1 and out["msg"].startswith("bmc_discover: '10.0.0.300/24' is not an address range")


def test_pong_parser():
    # a Presence Pong as ipmi_sim answers it (captured in the lab): IANA 4542, type 0x40, IPMI supported
    pong = bytes.fromhex("0600ff06000011be40010010000011be000000008100000000000000")
    assert parse_pong(bytearray(pong)) == {"ipmi": True, "iana": 4542}
    assert parse_pong(bytearray(b"\x06\x00\xff\x07" + pong[4:])) is None
    assert parse_pong(bytearray(b"garbage")) is None
