# SPDX-License-Identifier: GPL-3.0-or-later
"""net_info and the cabling rules against the REAL peers: a host namespace cabled by veth to a "leaf" namespace,
each with its own lldpd; the real ip, ethtool and lldpctl run for net_info (ip and ethtool inside the host
namespace). A renamed switch port is a miswire, a downed switch port a missing cable. Needs root (network
namespaces) and the apt packages iproute2, ethtool, lldpd."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import tempfile
import time

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.zhisuan.ops.plugins.module_utils._judge import _cabling, net
from ansible_collections.zhisuan.ops.plugins.modules import net_info

pytestmark = [pytest.mark.skipif(os.geteuid() != 0, reason="creates network namespaces: needs root"),
              pytest.mark.usefixtures("as_node")]

HOST_NS, LEAF_NS = "znt-host-%d" % os.getpid(), "znt-leaf-%d" % os.getpid()
PLAN = {"links": [{"node": "node01", "port": "eth0", "switch": "leaf01", "switch_port": "swp1"},
                  {"node": "node01", "port": "eth1", "switch": "leaf01", "switch_port": "swp2"}]}


def sh(*argv, check=True):
    return subprocess.run(argv, capture_output=True, text=True, timeout=30, check=check)


@pytest.fixture
def fabric():
    work = tempfile.mkdtemp(prefix="znt-")
    os.chmod(work, 0o755)  # lldpd drops to _lldpd: its socket directory must be reachable
    daemons = []
    try:
        sh("ip", "netns", "add", HOST_NS)
        sh("ip", "netns", "add", LEAF_NS)
        for port, swp in (("eth0", "swp1"), ("eth1", "swp2")):
            sh("ip", "link", "add", port, "netns", HOST_NS, "type", "veth", "peer", "name", swp, "netns", LEAF_NS)
            sh("ip", "-n", HOST_NS, "link", "set", port, "up")
            sh("ip", "-n", LEAF_NS, "link", "set", swp, "up")
        sh("ip", "-n", HOST_NS, "link", "set", "eth1", "mtu", "9000")
        sockets = {}
        for ns, name, ports in ((LEAF_NS, "leaf01", "swp*"), (HOST_NS, "node01", "eth*")):
            sock = os.path.join(work, name + ".sock")
            config = os.path.join(work, name + ".conf")
            with open(config, "w") as handle:
                handle.write("configure system hostname %s\nconfigure lldp tx-interval 1\n" % name)
                if name == "leaf01":
                    handle.write("configure lldp portidsubtype ifname\n")
            daemons.append(subprocess.Popen(["ip", "netns", "exec", ns, "lldpd", "-d", "-u", sock, "-p",
                                             os.path.join(work, name + ".pid"), "-I", ports, "-O", config],
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            sockets[name] = sock
        tools = {}
        for tool in ("ip", "ethtool"):
            path = os.path.join(work, tool)
            with open(path, "w") as handle:
                handle.write('#!/bin/sh\nexec ip netns exec %s %s "$@"\n' % (HOST_NS, shutil.which(tool)))
            os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
            tools[tool] = path
        yield {"tools": tools, "socket": sockets["node01"], "work": work}
    finally:
        for proc in daemons:
            proc.terminate()
        for proc in daemons:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        sh("ip", "netns", "del", HOST_NS, check=False)
        sh("ip", "netns", "del", LEAF_NS, check=False)
        shutil.rmtree(work, ignore_errors=True)


def collect(fabric, capsys):
    args = {"ip_path": fabric["tools"]["ip"], "ethtool_path": fabric["tools"]["ethtool"], "lldpctl_path": "lldpctl",
            "lldp_socket": fabric["socket"], "ib_source": "none", "link_flaps": False, "counter_window": 1,
            "root": fabric["work"]}
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            net_info.main()
    out = json.loads(capsys.readouterr().out)
    assert "failed" not in out, out
    return out["net"]


def wait_for(fabric, capsys, want):
    """Collect until the cabling statuses are ``want`` (lldpd needs a tx interval or two), at most 20 s."""
    deadline = time.monotonic() + 20
    while True:
        facts = collect(fabric, capsys)
        checks = _cabling.judge_cabling("node01", facts, PLAN)
        got = [(check["id"], check["status"], check["observed"]) for check in checks]
        if got == want or time.monotonic() > deadline:
            return facts, got


def test_real_lldpd_ok_miswire_missing(fabric, capsys):
    facts, got = wait_for(fabric, capsys, [("cabling.eth0.neighbor", "pass", "leaf01 swp1"),
                                           ("cabling.eth1.neighbor", "pass", "leaf01 swp2")])
    assert got == [("cabling.eth0.neighbor", "pass", "leaf01 swp1"), ("cabling.eth1.neighbor", "pass", "leaf01 swp2")]
    eth1 = facts["interfaces"]["eth1"]
    assert (eth1["driver"], eth1["speed_mbps"], eth1["link"], eth1["mtu"], eth1["operstate"]) == ("veth", 10000, True, 9000, "UP")
    assert eth1["optics"] is None and eth1["optics_reason"] == "no module EEPROM: netlink error: Operation not supported"
    assert eth1["counters_delta"]["errors"] == 0
    checks = net.judge_nic("node01", facts, expected={"mtu": {"eth0": 1500, "eth1": 9000}, "speed_mbps": 10000})
    assert [c["id"] for c in checks if c["status"] not in ("pass", "skip")] == []

    # a renamed switch port: the host's eth1 now reaches swp7
    sh("ip", "-n", LEAF_NS, "link", "set", "swp2", "down")
    sh("ip", "-n", LEAF_NS, "link", "set", "swp2", "name", "swp7")
    sh("ip", "-n", LEAF_NS, "link", "set", "swp7", "up")
    facts, got = wait_for(fabric, capsys, [("cabling.eth0.neighbor", "pass", "leaf01 swp1"),
                                           ("cabling.eth1.neighbor", "fail", "leaf01 swp7")])
    assert got[1] == ("cabling.eth1.neighbor", "fail", "leaf01 swp7")

    # a pulled cable: the switch port goes down, the neighbour is gone and the host port has no carrier
    sh("ip", "-n", LEAF_NS, "link", "set", "swp7", "down")
    facts, got = wait_for(fabric, capsys, [("cabling.eth0.neighbor", "pass", "leaf01 swp1"),
                                           ("cabling.eth1.neighbor", "fail", "no neighbour")])
    assert got[1] == ("cabling.eth1.neighbor", "fail", "no neighbour")
    link = [c for c in net.judge_nic("node01", facts, expected={"interfaces": ["eth0", "eth1"]})
            if c["id"] == "nic.link.state" and c["component"] == "eth1"][0]
    assert (link["status"], link["remedy"]) == ("fail", "check_cable")
