# SPDX-License-Identifier: GPL-3.0-or-later
"""The delivery run's BMC checks against Redfish services we did not write (issue 11): OpenStack's sushy-tools.

- ``sushy-static`` serves each captured tree of tests/fixtures/redfish over TLS (a throwaway CA made here with
  openssl; the client checks the certificate against it through ``bmc_ca_path``). It is, as it stands, a service
  without session tokens (POST …/Sessions answers 204 and no X-Auth-Token) and with a broken ``$expand`` (the
  captured roots advertise it, sushy-static looks the query up as a file name and answers 404).
- ``sushy-emulator`` with its fake driver (htpasswd bcrypt basic authentication, no SessionService): power on after
  its random 1-11 s delay, a boot override, and BIOS, which it does not offer.
- Every ``bmc_address`` carries its own port (``https://127.0.0.1:PORT``) and no ``bmc_port`` is set.
- Injected: a GPU member removed from a copy of the DGX tree, a BMC that does not answer, ``bmc_auth: session``
  on a service without tokens. Nothing else may be an ``error``; no password reaches any output.
"""

from __future__ import annotations

import os
import shutil
import socket
import ssl
import subprocess
import sys
import time

import bcrypt
import pytest
import yaml

from ansible_collections.zhisuan.ops.plugins.plugin_utils._results import validate

from .conftest import BIN, REPO, run_playbook

FIXTURES = os.path.join(REPO, "tests", "fixtures", "redfish")
USER = "delivery"
PASSWORD = "Sushy-7q!Lw2#vB9"
EMULATOR_PASSWORD = "Emu-3x$Tn8@pR4"
EMULATOR_UUID = "27946b59-9e44-4fa7-8e91-f3527a1ef094"
GPU3 = "Systems/HGX_Baseboard_0/Processors/GPU_SXM_3"

# node -> (tree, zhisuan_expected); the counts are the captures' own (the GB200 capture lists 4 GPUs and holds 1)
STATIC = {
    "dgx-h100": ("nvidia-dgx-h100-viking", {"gpu_count": 8}),
    "dell-r750": ("dell-poweredge-r750-h100-pcie", {"gpu_count": 1, "psu_count": 2}),
    "gb200": ("nvidia-gb200-nvl", {}),
    "dmtf": ("dmtf-public-rackmount1", {"gpu_count": 0}),
}


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def openssl(*args):
    subprocess.run(["openssl"] + list(args), check=True, capture_output=True, timeout=60)


def make_ca(folder):
    """A throwaway CA and a server certificate for IP:127.0.0.1 signed by it."""
    ca_key, ca, key, csr, cert = (str(folder / name) for name in ("ca.key", "ca.pem", "bmc.key", "bmc.csr", "bmc.pem"))
    ext = folder / "ext.cnf"
    ext.write_text("basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
                   "extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1\n")
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_key, "-out", ca, "-days", "2",
            "-subj", "/CN=zhisuan test CA", "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr, "-subj", "/CN=127.0.0.1")
    openssl("x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial", "-out", cert, "-days", "2",
            "-extfile", str(ext))
    return ca, cert, key


def start_logged(folder, processes, name, argv, env=None):
    """A server process in its own session, its output in ``folder/<name>.log``; appended to ``processes``."""
    log = open(str(folder / ("%s.log" % name)), "w")
    process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    processes.append((process, log))
    return process


def sushy_static_argv(port, tree_dir, cert, key):
    return [os.path.join(BIN, "sushy-static"), "-i", "127.0.0.1", "-p", str(port), "-m", tree_dir,
            "--ssl-certificate", cert, "--ssl-key", key]


def stop_all(processes):
    """Stop what start_logged started (SIGTERM, then SIGKILL after 10 s) and close the logs."""
    for process, log in processes:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        log.close()


def wait_tls(port, ca, process, timeout=30.0):
    context = ssl.create_default_context(cafile=ca)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("the Redfish server on port %d exited with %s" % (port, process.returncode))
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as raw:
                with context.wrap_socket(raw, server_hostname="127.0.0.1"):
                    return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("the Redfish server on port %d did not answer over TLS" % port)


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """Every sushy-static and the sushy-emulator, started; yields node -> inventory host vars."""
    folder = tmp_path_factory.mktemp("sushy")
    ca, cert, key = make_ca(folder)
    processes, hosts = [], {}

    def start(name, argv, env=None):
        return start_logged(folder, processes, name, argv, env)

    def static(name, tree_dir, expected, **extra):
        port = free_port()
        process = start(name, sushy_static_argv(port, tree_dir, cert, key))
        wait_tls(port, ca, process)
        hosts[name] = dict({"bmc_address": "https://127.0.0.1:%d" % port, "bmc_password": PASSWORD,
                            "zhisuan_expected": expected}, **extra)

    for name, (tree, expected) in STATIC.items():
        static(name, os.path.join(FIXTURES, tree), expected)
    # a GPU the BMC lists but cannot serve: the DGX capture with one GPU's resource removed
    missing = folder / "dgx-missing-gpu"
    shutil.copytree(os.path.join(FIXTURES, STATIC["dgx-h100"][0]), str(missing))
    shutil.rmtree(str(missing / GPU3))
    static("dgx-missing-gpu", str(missing), {"gpu_count": 8})
    # sessions demanded of a service that has none with tokens
    static("dmtf-session-only", os.path.join(FIXTURES, STATIC["dmtf"][0]), {}, bmc_auth="session")

    # sushy-emulator, fake driver, basic auth from an htpasswd file with a bcrypt digest
    port = free_port()
    htpasswd = folder / "htpasswd"
    htpasswd.write_text("%s:%s\n" % (USER, bcrypt.hashpw(EMULATOR_PASSWORD.encode(), bcrypt.gensalt(rounds=5)).decode()))
    config = folder / "emulator.conf"
    config.write_text("\n".join([
        "SUSHY_EMULATOR_LISTEN_IP = '127.0.0.1'", "SUSHY_EMULATOR_LISTEN_PORT = %d" % port,
        "SUSHY_EMULATOR_SSL_CERT = %r" % cert, "SUSHY_EMULATOR_SSL_KEY = %r" % key,
        "SUSHY_EMULATOR_AUTH_FILE = %r" % str(htpasswd), "SUSHY_EMULATOR_FAKE_DRIVER = True",
        "SUSHY_EMULATOR_STATE_DIR = %r" % str(folder / "emulator-state"),
        "SUSHY_EMULATOR_FAKE_SYSTEMS = [{'uuid': %r, 'name': 'node-e1', 'power_state': 'Off', "
        "'nics': [{'mac': '00:5c:52:31:3a:9c', 'ip': '172.22.0.100'}]}]" % EMULATOR_UUID, ""]))
    process = start("emulator", [os.path.join(BIN, "sushy-emulator"), "--config", str(config)])
    wait_tls(port, ca, process)
    hosts["emulator"] = {"bmc_address": "https://127.0.0.1:%d" % port, "bmc_password": EMULATOR_PASSWORD,
                         "zhisuan_expected": {}}
    # a BMC that does not answer: a port nothing listens on
    hosts["dead"] = {"bmc_address": "https://127.0.0.1:%d" % free_port(), "bmc_password": PASSWORD,
                     "zhisuan_expected": {}}
    for values in hosts.values():
        values.update({"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                       "bmc_protocol": "redfish", "bmc_username": USER, "bmc_ca_path": ca})
    try:
        yield folder, hosts
    finally:
        stop_all(processes)


@pytest.fixture(scope="module")
def delivery(servers, tmp_path_factory):
    folder, hosts = servers
    tmp_path = tmp_path_factory.mktemp("delivery-sushy")
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(yaml.safe_dump({"all": {"children": {"gpu_nodes": {"hosts": hosts}}}}))
    runner, document = run_playbook(tmp_path, "delivery.yml", str(inventory), tags="bmc")
    return tmp_path, hosts, runner, document


def by_status(document, host, *statuses):
    return sorted((c["id"], c["status"]) for c in document["hosts"][host]["checks"] if c["status"] in statuses)


def check(document, host, check_id):
    found = [c for c in document["hosts"][host]["checks"] if c["id"] == check_id]
    assert len(found) == 1, (host, check_id, found)
    return found[0]


def test_the_run_is_recorded_for_every_node(delivery):
    _, hosts, runner, document = delivery
    assert runner.rc == 0, runner.stdout.read()
    assert document is not None and validate(document) == []
    assert sorted(document["hosts"]) == sorted(hosts)


@pytest.mark.parametrize("node", sorted(STATIC))
def test_each_captured_tree_served_by_sushy_static_is_judged_without_error(delivery, node):
    _, hosts, _, document = delivery
    record = document["hosts"][node]
    bmc_checks = [c for c in record["checks"] if c["id"].startswith("bmc.")]
    assert len(bmc_checks) >= 8
    # Since issue 22 every event log is read, and a log that cannot be read is an error, never a pass over an unread
    # log. The captured subsets (tests/fixtures/PROVENANCE.md) left some LogServices collections out, so such an error
    # is right - but only naming the LogServices the subset lacks.
    errors = by_status(document, node, "error")
    assert [item for item in errors if item[0] != "bmc.readout.log"] == []
    for item in [c for c in record["checks"] if c["id"] == "bmc.readout.log" and c["status"] == "error"]:
        assert "LogServices" in " ".join(str(item.get(key) or "") for key in ("component", "message", "evidence")), item
    assert check(document, node, "bmc.power.state")["status"] == "pass"
    facts = record["facts"]["bmc"]
    # the port came from bmc_address, basic authentication was chosen because sushy-static returns no token
    assert facts["address"] == hosts[node]["bmc_address"].split("//", 1)[1]
    assert facts["auth"] == "basic" and facts["protocol"] == "redfish"


def test_the_bill_of_materials_is_checked_on_the_real_trees(delivery):
    _, _, _, document = delivery
    assert check(document, "dgx-h100", "bmc.gpu.count")["status"] == "pass"
    assert check(document, "dell-r750", "bmc.gpu.count")["status"] == "pass"
    assert check(document, "dell-r750", "bmc.psu.count")["status"] == "pass"
    assert check(document, "dmtf", "bmc.gpu.count")["status"] == "pass"
    assert document["hosts"]["dell-r750"]["facts"]["bmc"]["model"] == "PowerEdge R750"
    assert document["hosts"]["dgx-h100"]["facts"]["bmc"]["serial"]


def test_the_quirks_are_warned_about(delivery):
    _, _, runner, _ = delivery
    runner.stdout.seek(0)
    output = runner.stdout.read()
    assert "but returned no X-Auth-Token; using basic authentication" in output
    assert "advertises $expand but answered GET" in output
    assert "has no SessionService; using basic authentication" in output  # sushy-emulator


def test_a_missing_gpu_member_is_one_error_naming_it(delivery):
    _, _, _, document = delivery
    assert by_status(document, "dgx-missing-gpu", "error") == [("bmc.gpu.count", "error")]
    gpu = check(document, "dgx-missing-gpu", "bmc.gpu.count")
    assert "GPU_SXM_3" in gpu["message"] and gpu["observed"] == 7
    assert check(document, "dgx-missing-gpu", "bmc.power.state")["status"] == "pass"


def test_a_dead_bmc_is_one_collect_error(delivery):
    _, _, _, document = delivery
    assert by_status(document, "dead", "error") == [("bmc.collect.bmc", "error")]


def test_session_only_auth_on_a_service_without_tokens_says_what_to_set(delivery):
    _, _, _, document = delivery
    error = check(document, "dmtf-session-only", "bmc.collect.bmc")
    assert error["status"] == "error" and "set auth (bmc_auth) to basic or auto" in error["message"]


def test_the_emulator_is_powered_on_and_its_missing_bios_is_a_clear_error(delivery):
    _, _, _, document = delivery
    # the fake driver starts Off; delivery powers it on and waits out the emulator's delay
    assert check(document, "emulator", "bmc.power.state")["status"] == "pass"
    assert by_status(document, "emulator", "error") == [("bmc.readout.bios", "error")]
    assert "has no Bios resource" in check(document, "emulator", "bmc.readout.bios")["message"]
    assert document["hosts"]["emulator"]["facts"]["bmc"]["auth"] == "basic"


def test_no_password_in_any_output(delivery):
    tmp_path, _, runner, _ = delivery
    runner.stdout.seek(0)
    outputs = [runner.stdout.read()]
    for base in (tmp_path / "out", tmp_path / "runner" / "artifacts"):
        for folder, _, files in os.walk(str(base)):
            for name in files:
                with open(os.path.join(folder, name), errors="replace") as handle:
                    outputs.append(handle.read())
    assert len(outputs) > 3 and any("results.json" in name for _, _, names in os.walk(str(tmp_path / "out"))
                                    for name in names)
    assert [secret for secret in (PASSWORD, EMULATOR_PASSWORD) for text in outputs if secret in text] == []


BOOT_PLAY = """
- name: Power, boot and BIOS on sushy-emulator
  hosts: emulator
  gather_facts: false
  module_defaults:
    group/zhisuan.ops.redfish:
      bmc_address: "{{ bmc_address }}"
      bmc_username: "{{ bmc_username }}"
      bmc_password: "{{ bmc_password }}"
      ca_path: "{{ bmc_ca_path }}"
  tasks:
    - name: Power on first (the delivery run may have done it already)
      zhisuan.ops.redfish_power:
        state: "on"
        poll_interval: 1
      delegate_to: localhost
    - name: Power off
      zhisuan.ops.redfish_power:
        state: force_off
        poll_interval: 1
      delegate_to: localhost
      register: power_off
    - name: Boot from the network once
      zhisuan.ops.redfish_boot:
        target: Pxe
        enabled: Once
      delegate_to: localhost
      register: boot
    - name: Power on
      zhisuan.ops.redfish_power:
        state: "on"
        poll_interval: 1
      delegate_to: localhost
      register: power_on
    - name: Read the BIOS
      zhisuan.ops.redfish_bios:
      delegate_to: localhost
      register: bios
      ignore_errors: true
    - name: Keep the results
      ansible.builtin.copy:
        content: "{{ {'off': power_off, 'boot': boot, 'on': power_on, 'bios': bios} | to_json }}"
        dest: "{{ out }}"
        mode: "0600"
      delegate_to: localhost
"""


def test_power_boot_and_bios_actions_on_the_emulator(servers, tmp_path):
    folder, hosts = servers
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(yaml.safe_dump({"all": {"children": {"gpu_nodes": {"hosts": {"emulator": hosts["emulator"]}}}}}))
    play = tmp_path / "play.yml"
    play.write_text(BOOT_PLAY)
    out = tmp_path / "result.json"
    runner, _ = run_playbook(tmp_path, str(play), str(inventory), extravars={"out": str(out)})
    assert runner.rc == 0, runner.stdout.read()
    import json
    result = json.loads(out.read_text())
    assert result["off"]["changed"] is True and result["off"]["after"] == {"power_state": "Off"}
    assert result["on"]["changed"] is True and result["on"]["after"] == {"power_state": "On"}
    assert result["boot"]["changed"] is True and result["boot"]["boot"]["target"] == "Pxe"
    assert result["bios"]["failed"] is True and "has no Bios resource" in result["bios"]["msg"]
    runner.stdout.seek(0)
    assert EMULATOR_PASSWORD not in runner.stdout.read()
