# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""rdma_pair's work: this host's side of one round of perftest pairs.

The round lists ``{server, client, port}``. A server runs ``<test> -p PORT …`` and waits for its client; a client
runs ``<test> -p PORT … <server address>``, retrying while the server is not listening yet (perftest's client
gives up at once with "Couldn't connect to …"), until the per-pair timeout. A loopback pair (server = client) runs
both sides on this host. A host not in the round does nothing. Every run goes through ``_runner.run`` with what
is left of the per-pair timeout.

The outcome of a pair is data, not a module failure: ``status`` is ``ok``, ``timeout`` or ``error`` (with
``error_kind`` and ``message``), so one bad pair never stops the other rounds.
"""

import threading
import time

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import OptionError, ParseError, ToolFailed, ToolTimeout, ZhisuanError
from ansible_collections.zhisuan.ops.plugins.module_utils._net import perftest
from ansible_collections.zhisuan.ops.plugins.module_utils._runner import run, tool_failed

TESTS = ("ib_write_bw", "ib_write_lat", "ib_read_bw", "ib_read_lat", "ib_send_bw", "ib_send_lat")


def test_args(params):
    """The perftest options both sides share (perftest refuses a client whose settings differ)."""
    args = []
    if params.get("device"):
        args += ["-d", params["device"]]
    if params.get("ib_port"):
        args += ["-i", params["ib_port"]]
    if params.get("gid_index") is not None:
        args += ["-x", params["gid_index"]]
    if params.get("size"):
        args += ["-s", params["size"]]
    if params.get("qps") and not params["test"].endswith("_lat"):
        args += ["-q", params["qps"]]
    if params.get("duration"):
        args += ["-D", params["duration"]]
    elif params.get("iterations"):
        args += ["-n", params["iterations"]]
    if params.get("gpudirect") is not None:
        args.append("--use_cuda=%d" % params["gpudirect"])
    # -F: do not fail on a CPU frequency warning (the clock is not what is being measured)
    args.append("-F")
    args += list(params.get("extra_args") or [])
    return [str(arg) for arg in args]


def my_pairs(round_pairs, host):
    """This host's pairs of the round. A host in two pairs of one round is a ValueError."""
    mine = [pair for pair in round_pairs if host in (pair.get("server"), pair.get("client"))]
    if len(mine) > 1:
        raise ValueError("host %s is in %d pairs of one round; a round runs each node once" % (host, len(mine)))
    return mine


def _summary(parsed, test):
    result = parsed["result"]
    value = result.get("bw_average_gbps") if parsed["kind"] == "bw" else result.get("t_typical_us", result.get("t_avg_us"))
    return {
        "value": value,
        "unit": "Gb/s" if parsed["kind"] == "bw" else "usec",
        "result": result,
        "device": parsed.get("device"),
        "qps": parsed.get("qps"),
        "link_type": parsed.get("link_type"),
        "mtu": parsed.get("mtu"),
        "local": parsed.get("local"),
        "remote": parsed.get("remote"),
    }


def _outcome(exc):
    kind = getattr(exc, "perftest_error", None) or exc.kind
    status = "timeout" if isinstance(exc, ToolTimeout) else "error"
    out = {"status": status, "error_kind": kind, "message": exc.message, "value": None}
    if getattr(exc, "cmd", None):
        out["cmd"] = exc.cmd
    return out


def _run_side(argv, test, timeout):
    """Run one side once; parse. Raises a ZhisuanError (perftest's own errors as ToolFailed with perftest_error)."""
    result = run(argv, timeout=timeout, tool=test, ok_rcs=None)
    text = result.stdout + "\n" + result.stderr
    if result.rc != 0:
        perftest.raise_for_error(test, text, cmd=result.argv, rc=result.rc)
        raise tool_failed(result, test, "exited with rc %s" % result.rc, tail=True)
    return perftest.parse(text, tool=test)


def run_server(program, test, args, port, timeout):
    return _run_side([program] + args + ["-p", str(port)], test, timeout)


def run_client(program, test, args, port, address, timeout, retry_delay=0.5, clock=time.monotonic, sleep=time.sleep):
    """Connect to the server, retrying "Couldn't connect" until ``timeout`` seconds have passed.
    Returns (parsed, attempts)."""
    deadline = clock() + timeout
    attempts = 0
    while True:
        attempts += 1
        left = deadline - clock()
        if left <= 0:
            raise ToolTimeout(test, "no server answered at %s port %s within %s s (%d attempts)" % (address, port, timeout, attempts - 1))
        try:
            return _run_side([program] + args + ["-p", str(port), address], test, left), attempts
        except ToolTimeout:
            if attempts == 1:
                raise
            # the earlier attempts found no server; the last one used up the time that was left
            raise ToolTimeout(test, "no server answered at %s port %s within %s s (%d attempts)" % (address, port, timeout, attempts))
        except ToolFailed as exc:
            if getattr(exc, "perftest_error", None) != "connect":
                raise
            if deadline - clock() <= retry_delay:
                raise ToolTimeout(test, "no server answered at %s port %s within %s s (%d attempts)" % (address, port, timeout, attempts))
            sleep(retry_delay)


def _side(role, fn):
    try:
        parsed = fn()
    except (ZhisuanError, ParseError) as exc:
        return _outcome(exc)
    out = {"status": "ok", "error_kind": None, "message": None}
    out.update(_summary(parsed[0] if isinstance(parsed, tuple) else parsed, role))
    if isinstance(parsed, tuple):
        out["attempts"] = parsed[1]
    return out


def run_round(params, clock=time.monotonic, sleep=time.sleep):
    """This host's part of one round -> the ``rdma_pair`` result."""
    host = params["host"]
    test = params["test"]
    program = params["path"] or test
    mine = my_pairs(params["round"], host)
    base = {"host": host, "test": test, "round": params.get("round_number")}
    if not mine:
        return dict(base, role="idle", peer=None, port=None, status="idle", value=None)
    pair = mine[0]
    port = pair.get("port")
    if not port:
        raise ValueError("the pair %s-%s has no port (use the rounds of zhisuan.ops.rdma_pairs plan=...)"
                         % (pair.get("server"), pair.get("client")))
    args = test_args(params)
    timeout = params["timeout"]
    addresses = params.get("addresses") or {}
    address = addresses.get(pair["server"]) or pair["server"]
    retry = params.get("retry_delay", 0.5)
    base.update(port=port, server=pair["server"], client=pair["client"], address=address)
    if pair["server"] == pair["client"]:
        holder = {}
        thread = threading.Thread(target=lambda: holder.update(
            server=_side("server", lambda: run_server(program, test, args, port, timeout))))
        thread.start()
        client = _side("client", lambda: run_client(program, test, args, port, address, timeout, retry, clock, sleep))
        thread.join(timeout + 10)
        server = holder.get("server") or {"status": "timeout", "error_kind": "timed_out", "value": None,
                                          "message": "%s: the loopback server did not finish" % test}
        out = dict(base, role="loopback", peer=host)
        out.update(client)
        out["server_side"] = server
        if client["status"] == "ok" and server["status"] != "ok":
            out.update(status=server["status"], error_kind=server["error_kind"], message=server["message"])
        return out
    if pair["server"] == host:
        out = dict(base, role="server", peer=pair["client"])
        out.update(_side("server", lambda: run_server(program, test, args, port, timeout)))
        return out
    out = dict(base, role="client", peer=pair["server"])
    out.update(_side("client", lambda: run_client(program, test, args, port, address, timeout, retry, clock, sleep)))
    return out


def rdma_pair(module):
    params = dict(module.params)
    try:
        result = run_round(params)
    except ValueError as exc:
        raise OptionError("pairs", "rdma_pair: %s" % exc)
    return {"rdma_pair": result}
