#!/usr/bin/env python3
"""Lab stand-in for perftest's ``ib_write_bw`` (and, through lab/sim/ib_write_lat.py, ``ib_write_lat``) on one
simulated node.

Server and client meet over a REAL TCP connection, as perftest's own ``Data ex. method : Ethernet`` does: the
server (no address on the command line) listens on ``-p PORT`` (every address of the node, as perftest does); the
client connects to the address given on its command line, retrying nothing (like perftest, it fails at once when no
server listens). They exchange one JSON line each way: the node's name, its ``rdma_slow_node`` factor and its
``rdma_slow_link`` factors per peer. With ``-D SECONDS`` both then hold the connection for that long (the per-pair
time of a schedule). Each side prints its half of a REAL capture with only values edited:

* bandwidth: tests/fixtures/perftest/ib_write_bw-loopback-server+client-8M-hdr.log (HDR IB, 24056.72 MB/sec =
  201.8 Gb/s): the client prints the lines before the server's "Waiting for client" banner, the server the rest;
  ``BW peak``/``BW average`` are multiplied by the pair's factor (``min`` of both nodes' ``rdma_slow_node`` factors
  times the ``rdma_slow_link`` factor either node declares for the other), ``MsgRate`` is recomputed, ``#bytes`` is
  the ``-s`` size (perftest's default 65536 without it), ``#iterations`` the ``-n`` count when given, ``Device``
  the ``-d`` name when given; with ``--report_gbits`` the unit reads ``Gb/sec`` and the values are converted
  (perftest's factors: MB/sec = 2^20 bytes/s, Gb/sec = 10^9 bit/s);
* latency (ib_write_lat): the real soft-RoCE capture ``ib_write_lat-rxe-{server,client}.txt``, latencies divided by
  the factor;
* a client whose server does not listen prints the real soft-RoCE capture of that case
  (``ib_write_bw-rxe-no-server.err``, address and port edited) and exits 1;
* fault ``rdma_no_device``: the real output of this build machine without an RDMA device
  (``ib_write_bw-no-device-4.5-debian12.err``), exit 1.

Invoked through the per-node wrapper written by ``lab/labctl.py up``: ``perftest.py --state STATE [perftest args]``.
Standard library only: the wrapper runs this file with ``python -I -S``.
"""

import json
import os
import re
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import FIXTURES_DIR, LabError, own_faults, run_sim, split_argv, unsupported  # noqa: E402

TOOLS = ("ib_write_bw",)
CAPTURES = os.path.join(FIXTURES_DIR, "perftest")
BW_CAPTURE = os.path.join(CAPTURES, "ib_write_bw-loopback-server+client-8M-hdr.log")
LAT_SERVER = os.path.join(CAPTURES, "ib_write_lat-rxe-server.txt")
LAT_CLIENT = os.path.join(CAPTURES, "ib_write_lat-rxe-client.txt")
NO_SERVER = os.path.join(CAPTURES, "ib_write_bw-rxe-no-server.err")
NO_DEVICE = os.path.join(CAPTURES, "ib_write_bw-no-device-4.5-debian12.err")
MIB = 1048576.0
GBIT = 125000000.0
# How long a server waits for its client before giving up (real perftest waits forever; the module's timeout kills
# it sooner).
ACCEPT_WAIT = 600

# Fault catalog: kind -> {param: type}. `hang` (tool ib_write_bw / ib_write_lat) is generic (lab/sim/_common.py).
FAULT_KINDS = {
    "rdma_slow_node": {"factor": float},
    "rdma_slow_link": {"peer": str, "factor": float},
    "rdma_no_device": {},
}

_OPTIONS = {"-d": "device", "-i": "ib_port", "-x": "gid", "-s": "size", "-q": "qps", "-n": "iters", "-D": "duration",
            "-p": "port"}
_FLAGS = ("-F", "--report_gbits")
_BW_ROW = re.compile(r"^(\s*)(\d+)(\s+)(\d+)(\s+)([\d.]+)(\s+)([\d.]+)(\s+)([\d.]+)(\s*)$")
_LAT_ROW = re.compile(r"^\s*(\d+)\s+(\d+)" + r"\s+([\d.]+)" * 7 + r"\s*$")
# perftest's own printf formats of a result row (perftest 4.5, read from the Debian binary with `strings`); on the
# unedited captures they re-print each row byte for byte (the tests check it).
BW_ROW_FORMAT = " %-7d    %-10d       %-7.2f            %-7.2f\t\t   %-7.6f"
LAT_ROW_FORMAT = " %-7d %d          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f"


def check_fault(fault, node, where="fault"):
    if "factor" in fault and not 0 < fault["factor"] <= 1:
        raise LabError(f"{where}: fault {fault['kind']!r} 'factor' must be in (0, 1], got {fault['factor']!r}")
    if fault["kind"] == "rdma_slow_link" and not fault["peer"]:
        raise LabError(f"{where}: fault 'rdma_slow_link' needs the peer node's name")


def parse_args(args):
    """perftest arguments the lab implements -> dict, or None."""
    out = {"flags": set(), "server": None}
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in _OPTIONS and i + 1 < len(args):
            out[_OPTIONS[arg]] = args[i + 1]
            i += 2
            continue
        if arg in _FLAGS:
            out["flags"].add(arg)
        elif arg.startswith("--use_cuda="):
            out["use_cuda"] = arg.split("=", 1)[1]
        elif not arg.startswith("-") and out["server"] is None:
            out["server"] = arg
        else:
            return None
        i += 1
    for key in ("size", "qps", "iters", "duration", "port", "ib_port", "gid"):
        if key in out and not re.match(r"^\d+$", out[key]):
            return None
    return out


def node_view(state):
    """What a node tells its peer in the handshake."""
    faults = own_faults(state, FAULT_KINDS, check_fault)
    slow = min([f["factor"] for f in faults if f["kind"] == "rdma_slow_node"] or [1.0])
    links = {}
    for fault in faults:
        if fault["kind"] == "rdma_slow_link":
            links[fault["peer"]] = min(links.get(fault["peer"], 1.0), fault["factor"])
    return {"node": state["node"], "slow": slow, "links": links}


def pair_factor(mine, theirs):
    link = min(mine["links"].get(theirs["node"], 1.0), theirs["links"].get(mine["node"], 1.0))
    return min(mine["slow"], theirs["slow"]) * link


def _read(path):
    with open(path, encoding="utf-8", newline="") as fh:
        return fh.read()


def _bw_halves():
    lines = _read(BW_CAPTURE).split("\n")
    banner = next(i for i, line in enumerate(lines) if line.startswith("****"))
    return "\n".join(lines[:banner]) + "\n", "\n".join(lines[banner:])


def _bw_row(found, opts, factor):
    size = int(opts.get("size", 65536))
    gbits = "--report_gbits" in opts["flags"]
    peak, average = float(found.group(6)) * factor, float(found.group(8)) * factor
    rate = average * MIB / size / 1e6
    if gbits:
        peak, average = peak * MIB / GBIT, average * MIB / GBIT
    iters = int(opts["iters"]) if opts.get("iters") and "duration" not in opts else int(found.group(4))
    return BW_ROW_FORMAT % (size, iters, peak, average, rate)


def render_bw(side, opts, factor):
    """One side's ib_write_bw output with the pair's factor applied."""
    text = _bw_halves()[0 if side == "client" else 1]
    out = []
    for line in text.split("\n"):
        found = _BW_ROW.match(line)
        if found:
            line = _bw_row(found, opts, factor)
        elif "BW peak[MB/sec]" in line and "--report_gbits" in opts["flags"]:
            line = line.replace("[MB/sec]", "[Gb/sec]")
        elif "Device         :" in line and opts.get("device"):
            line = re.sub(r"(Device         : )\S+", lambda m: m.group(1) + opts["device"], line)
        out.append(line)
    return "\n".join(out)


def render_lat(side, opts, factor):
    """One side's ib_write_lat output: latencies divided by the pair's factor (a slow pair is a slower pair)."""
    text = _read(LAT_CLIENT if side == "client" else LAT_SERVER)
    out = []
    for line in text.split("\n"):
        found = _LAT_ROW.match(line)
        if found:
            values = [float(value) / factor for value in found.groups()[2:]]
            size = int(opts.get("size", found.group(1)))
            iters = int(opts.get("iters", found.group(2)))
            line = LAT_ROW_FORMAT % tuple([size, iters] + values)
        elif "Device         :" in line and opts.get("device"):
            line = re.sub(r"(Device         : )\S+", lambda m: m.group(1) + opts["device"], line)
        out.append(line)
    return "\n".join(out)


def _exchange(conn, mine):
    conn.sendall((json.dumps(mine) + "\n").encode())
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(4096)
        if not chunk:
            raise LabError("the peer closed the connection during the handshake")
        data += chunk
    return json.loads(data.decode())


def serve(opts, mine):
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("", int(opts.get("port", 18515))))
    listener.listen(1)
    listener.settimeout(ACCEPT_WAIT)
    try:
        conn, _addr = listener.accept()
    finally:
        listener.close()
    with conn:
        theirs = _exchange(conn, mine)
        _hold(conn, opts)
    return theirs


def _hold(conn, opts):
    """With -D, the test runs for that long; both sides finish together (the client says when)."""
    if opts.get("duration"):
        time.sleep(int(opts["duration"]))


def connect(opts, mine):
    port = int(opts.get("port", 18515))
    conn = socket.create_connection((opts["server"], port), timeout=10)
    with conn:
        theirs = _exchange(conn, mine)
        _hold(conn, opts)
    return theirs


def no_server_text(opts):
    text = _read(NO_SERVER)
    return re.sub(r"(Couldn't connect to )\S+?:\d+", lambda m: "%s%s:%s" % (m.group(1), opts["server"], opts.get("port", 18515)), text)


def check_state(state):
    """Render once (labctl up) so a broken capture or fault fails at `up`."""
    mine = node_view(state)
    opts = {"flags": set()}
    render_bw("server", opts, pair_factor(mine, mine))
    render_bw("client", opts, 1.0)


def main(argv=None, tool="ib_write_bw"):
    state_path, args = split_argv(argv, tool)
    opts = parse_args(args)
    if opts is None:
        return unsupported(tool, args, "-d -i -x -s -q -n -D -p -F --report_gbits --use_cuda=N [server address]")

    def work(state):
        if any(f.get("kind") == "rdma_no_device" for f in own_faults(state, FAULT_KINDS, check_fault)):
            sys.stderr.write(_read(NO_DEVICE))
            return 1
        mine = node_view(state)
        side = "client" if opts["server"] else "server"
        if side == "server":
            theirs = serve(opts, mine)
        else:
            try:
                theirs = connect(opts, mine)
            except OSError:
                sys.stderr.write(no_server_text(opts))
                return 1
        factor = pair_factor(mine, theirs)
        return render_lat(side, opts, factor) if tool == "ib_write_lat" else render_bw(side, opts, factor)

    return run_sim(tool, state_path, work, errors=(OSError, ValueError, LabError, StopIteration))


if __name__ == "__main__":
    sys.exit(main())
