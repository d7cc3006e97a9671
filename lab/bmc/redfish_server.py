#!/usr/bin/env python3
"""The lab's Redfish BMCs: one process serving N BMCs, each on its own HTTPS port on 127.0.0.1.

    redfish_server.py --config RUN_DIR/bmc/redfish.json

Each BMC serves a captured vendor tree (tests/fixtures/redfish/<tree>/) with its faults applied, basic and
session authentication and stateful actions (lab/bmc/redfish_bmc.py). TLS uses a certificate for IP:127.0.0.1
signed by a lab CA made with ``openssl`` at the first start (``ca.pem`` next to the config; kept across restarts).
Every request is logged as ``<time> <node> <client> <METHOD> <path> <status>`` -- never a header or a body, so
never a password or a token. Normally started by lab/bmc/redfish_lab.py. Standard library only.

Config (JSON): ``{"schema": 1, "started": ISO time, "power_delay_s": 1.0, "tls_dir": DIR, "log": FILE,
"bmcs": [{"node", "port", "tree", "username", "password", "faults": [...], "state_file"}]}``.
"""

import argparse
import datetime
import http.server
import json
import os
import secrets
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import traceback

try:
    from . import redfish_bmc as rb
    from . import redfish_tree as rt
    from .redfish_messages import error
except ImportError:  # run as a script (python -I) or loaded by path
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import redfish_bmc as rb
    import redfish_tree as rt
    from redfish_messages import error

CONFIG_SCHEMA = 1
BMC_KEYS = {"node", "port", "tree", "username", "password", "faults", "state_file", "inventory_password",
            "node_state", "index"}
OPENSSL_TIMEOUT = 30
MAX_BODY = 1 << 20
OPENSSL_CNF = """\
[req]
distinguished_name = dn
[dn]
[v3_ca]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
[v3_server]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid,issuer
"""


# ---------------------------------------------------------------------------------------------------- TLS

def _openssl(argv, step):
    try:
        res = subprocess.run(argv, capture_output=True, text=True, timeout=OPENSSL_TIMEOUT, check=False)
    except FileNotFoundError:
        raise rt.BmcLabError("openssl not found (needed to make the lab CA); install it or put it on PATH") from None
    except subprocess.TimeoutExpired:
        raise rt.BmcLabError(f"openssl {step} did not finish within {OPENSSL_TIMEOUT} s") from None
    if res.returncode != 0:
        raise rt.BmcLabError(f"openssl {step} failed (rc {res.returncode}): {res.stderr.strip()[-500:]}")


def ensure_certs(tls_dir, openssl="openssl"):
    """(ca.pem, server.pem, server.key) in ``tls_dir``: made once (EC P-256, 825 days), then reused."""
    names = ("ca.pem", "server.pem", "server.key")
    paths = tuple(os.path.join(tls_dir, name) for name in names)
    if all(os.path.isfile(path) for path in paths):
        return paths
    with tempfile.TemporaryDirectory(dir=tls_dir) as tmp:
        cnf, csr = os.path.join(tmp, "openssl.cnf"), os.path.join(tmp, "server.csr")
        with open(cnf, "w", encoding="utf-8") as fh:
            fh.write(OPENSSL_CNF)
        key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        _openssl([openssl, "req", "-x509", "-new", "-config", cnf, "-extensions", "v3_ca", *key, "-days", "825",
                  "-subj", "/O=zhisuan lab/CN=zhisuan lab BMC CA", "-keyout", os.path.join(tmp, "ca.key"),
                  "-out", os.path.join(tmp, "ca.pem")], "req (CA)")
        _openssl([openssl, "req", "-new", "-config", cnf, *key, "-subj", "/O=zhisuan lab/CN=127.0.0.1",
                  "-keyout", os.path.join(tmp, "server.key"), "-out", csr], "req (server)")
        _openssl([openssl, "x509", "-req", "-in", csr, "-CA", os.path.join(tmp, "ca.pem"), "-CAkey", os.path.join(tmp, "ca.key"),
                  "-set_serial", str(secrets.randbits(63)), "-days", "825", "-extfile", cnf, "-extensions", "v3_server",
                  "-out", os.path.join(tmp, "server.pem")], "x509 (sign server)")
        for name in ("ca.key", "server.key"):
            os.chmod(os.path.join(tmp, name), 0o600)
        for name in ("ca.key", "server.key", "server.pem", "ca.pem"):  # ca.pem last: its presence means "done"
            os.replace(os.path.join(tmp, name), os.path.join(tls_dir, name))
    return paths


# --------------------------------------------------------------------------------------------------- HTTP

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "zhisuan-lab-bmc"
    sys_version = ""
    timeout = 30

    def setup(self):
        self.request.settimeout(self.timeout)
        self.request.do_handshake()
        super().setup()

    def _serve(self):
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0 or length > MAX_BODY:
            reply = error(400, "MalformedJSON")
            self.close_connection = True
        else:
            body = self.rfile.read(length) if length else b""
            try:
                reply = self.server.bmc.handle(self.command, self.path, self.headers, body)
            except Exception:  # pylint: disable=broad-except  # a lab bug must not kill the BMC
                self.server.log("%s internal error on %s %s:\n%s" % (self.server.bmc.node, self.command, self.path,
                                                                     traceback.format_exc().rstrip()))
                reply = error(500, "InternalError")
        if isinstance(reply.body, bytes):
            data = reply.body
        else:
            data = (json.dumps(reply.body, indent=2) + "\n").encode() if reply.body is not None else b""
        self.send_response(reply.status)
        if reply.body is not None:
            self.send_header("Content-Type", reply.content_type or "application/json; charset=utf-8")
        self.send_header("OData-Version", "4.0")
        self.send_header("Content-Length", str(len(data)))
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        self.server.log("%s %s %s %s %d" % (self.server.bmc.node, self.client_address[0], self.command, self.path, reply.status))

    do_GET = do_HEAD = do_POST = do_PATCH = do_DELETE = do_PUT = _serve

    def log_request(self, code="-", size="-"):
        """Requests are logged by _serve (one line, with the BMC's node)."""

    def log_message(self, format, *args):  # pylint: disable=redefined-builtin
        self.server.log("%s %s %s" % (self.server.bmc.node, self.client_address[0], format % args))


class BmcServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, bmc, port, context, log):
        self.bmc, self.log = bmc, log
        super().__init__(("127.0.0.1", port), Handler)
        self.socket = context.wrap_socket(self.socket, server_side=True, do_handshake_on_connect=False)

    def handle_error(self, request, client_address):
        exc = sys.exc_info()[1]
        self.log("%s %s connection error: %s: %s" % (self.bmc.node, client_address[0], type(exc).__name__, exc))


# --------------------------------------------------------------------------------------------- the process

class Log:
    def __init__(self, path):
        self.fh = open(path, "a", encoding="utf-8", buffering=1)  # pylint: disable=consider-using-with
        self.lock = threading.Lock()

    def __call__(self, text):
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        with self.lock:
            self.fh.write(f"{stamp} {text}\n")


def load_config(path):
    try:
        with open(path, encoding="utf-8") as fh:
            cfg = json.load(fh)
    except (OSError, ValueError) as exc:
        raise rt.BmcLabError(f"cannot read config {path}: {exc}") from None
    if not isinstance(cfg, dict) or cfg.get("schema") != CONFIG_SCHEMA:
        raise rt.BmcLabError(f"config {path}: not a schema {CONFIG_SCHEMA} Redfish lab config")
    for key in ("started", "tls_dir", "log", "bmcs"):
        if key not in cfg:
            raise rt.BmcLabError(f"config {path}: missing {key!r}")
    for i, spec in enumerate(cfg["bmcs"]):
        missing = sorted({"node", "port", "tree", "username", "password", "state_file"} - set(spec))
        unknown = sorted(set(spec) - BMC_KEYS)
        if missing or unknown:
            raise rt.BmcLabError(f"config {path}: bmcs[{i}]: missing {missing}, unknown {unknown}")
    return cfg


def build_bmcs(cfg, log=None):
    """The Bmc of every listening node (a ``bmc_down`` node has none)."""
    out = []
    for spec in cfg["bmcs"]:
        where = f"bmc {spec['node']}: faults"
        faults = rt.normalize_faults(spec.get("faults"), where)
        if any(fault["kind"] == "bmc_down" for fault in faults):
            continue
        docs = rt.apply_faults(rt.load_tree(spec["tree"]), spec["tree"], faults, cfg["started"], where)
        if spec.get("index") is not None:  # each node its own serial numbers (redfish_tree.set_identity)
            docs = rt.set_identity(docs, spec["index"])
        bmc = rb.Bmc(spec["node"], spec["tree"], docs, spec["username"], spec["password"], spec["state_file"],
                     cfg.get("power_delay_s", 1.0))
        if spec.get("node_state") and log is not None:
            bmc.on_boot = _boot_hook(spec["node"], spec["node_state"], log)
        out.append((spec, bmc))
    return out


def _boot_hook(node, node_state, log):
    """After a boot the BMC drove (power cycle, restart, on): the node's power-cycle faults are gone (lab/README.md)."""
    def hook(when):
        try:
            cleared = rt._common.power_cycle(node_state, when)  # pylint: disable=protected-access
        except (OSError, ValueError, rt._common.LabError) as exc:  # pylint: disable=protected-access
            log(f"{node} power cycle: cannot update the node state {node_state}: {exc}")
            return
        log(f"{node} power cycle: the node booted at {when}; faults cleared: {', '.join(cleared) or 'none'}")
    return hook


def serve(cfg, log, stop_event):
    bmcs = build_bmcs(cfg, log)
    _ca, cert, key = ensure_certs(cfg["tls_dir"])
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert, key)
    servers = [BmcServer(bmc, spec["port"], context, log) for spec, bmc in bmcs]
    threads = [threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True) for srv in servers]
    for thread in threads:
        thread.start()
    for spec, _bmc in bmcs:
        log(f"{spec['node']} listening on https://127.0.0.1:{spec['port']}/redfish/v1 (tree {spec['tree']})")
    for spec in cfg["bmcs"]:
        if not any(spec is listening for listening, _bmc in bmcs):
            log(f"{spec['node']} bmc_down: no listener on port {spec['port']}")
    while not stop_event.wait(0.5):
        pass
    for srv in servers:
        srv.shutdown()
        srv.server_close()
    log("stopped")


def main(argv=None):
    parser = argparse.ArgumentParser(description="The zhisuan lab's Redfish BMCs (see lab/README.md).")
    parser.add_argument("--config", required=True, help="the JSON config written by lab/bmc/redfish_lab.py")
    args = parser.parse_args(argv)
    try:
        cfg = load_config(args.config)
        log = Log(cfg["log"])
    except (rt.BmcLabError, OSError) as exc:
        sys.stderr.write(f"redfish_server: error: {exc}\n")
        return 2
    stop_event = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop_event.set())
    log(f"starting {len(cfg['bmcs'])} BMC(s), pid {os.getpid()}")
    try:
        serve(cfg, log, stop_event)
    except (rt.BmcLabError, OSError, ssl.SSLError) as exc:
        log(f"redfish_server: error: {exc}")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
