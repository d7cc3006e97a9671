# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Parser of perftest output (``ib_write_bw``, ``ib_read_bw``, ``ib_send_bw``, ``ib_write_lat``, ``ib_read_lat`` …),
server or client side.

* the settings block (``Key : Value`` pairs, two per line on some lines);
* the connection block: ``local address:`` / ``remote address:`` lines (LID, QPN, PSN, RKey, VAddr, OUT), one per
  QP, each optionally followed by a ``GID:`` line;
* the result table, whose **column header line decides the columns**: bandwidth tests print
  ``#bytes #iterations BW peak[<unit>] BW average[<unit>] MsgRate[Mpps]`` with ``MB/sec`` (2^20 bytes/s, perftest's
  ``format_factor`` 0x100000) or ``Gb/sec`` (10^9 bit/s, with ``--report_gbits``); latency tests print
  ``t_min``/``t_max``/``t_typical``/``t_avg``/``t_stdev``/``99%``/``99.9% percentile`` in usec.
* the errors perftest prints instead of a result: no RDMA device, a device name not found, a client that cannot
  reach its server, a server that cannot listen, completion errors — each a ``ToolFailed`` with a plain message.
"""

import re

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError, ToolFailed
from ansible_collections.zhisuan.ops.plugins.module_utils._runner import clip
from ansible_collections.zhisuan.ops.plugins.module_utils._safe_parse import to_float, to_int

# bytes per second of one unit of each bandwidth column unit
_BW_UNITS = {"MB/sec": 1048576.0, "Gb/sec": 125000000.0}
_COLUMN_RE = re.compile(r"#\w+|tps average|[A-Za-z0-9_.%]+(?: [A-Za-z]+)?\[[^\]]+\]")
_ROW_RE = re.compile(r"^\s*[0-9]+\s+[0-9]+(?:\s+-?[0-9.]+(?:e[+-]?[0-9]+)?)+\s*$")
_UNMEASURED_RE = re.compile(r"^\s*[0-9]+\s+[0-9]+\s+(?:-?inf|-?nan)\b")
_SETTING_RE = re.compile(r"(\S[^:\t]*?)\s*:\s*(\S+)")
_ADDRESS_RE = re.compile(r"^\s*(local|remote) address:\s*(.*)$")
_GID_RE = re.compile(r"^\s*GID:\s*(\S+)\s*$")
_SEPARATOR_RE = re.compile(r"^\s*-{10,}\s*$|^\s*\*+\s*$")
_TITLE_RE = re.compile(r"^\s*(\S.*\b(?:BW|Latency) Test)\s*$")

# perftest's error lines -> (error kind, plain message); the first match wins
_ERRORS = (
    (re.compile(r"IB device (\S+) not found"), "no_device",
     "RDMA device %s not found on this node; check the device name (ibv_devices lists them)"),
    (re.compile(r"Did not detect devices|Unable to find the Infiniband/RoCE device"), "no_device",
     "no RDMA device found (perftest: 'Did not detect devices'); check that the HCA is present and its driver is loaded"),
    (re.compile(r"Couldn't connect to (\S+)"), "connect",
     "could not connect to the server at %s (no server listening yet, a firewall, or the wrong address)"),
    (re.compile(r"Couldn't listen to port (\d+)"), "listen",
     "could not listen on port %s (another test or program holds it)"),
    (re.compile(r"Completion with error at (client|server)"), "completion",
     "an RDMA operation completed with an error at the %s (transport retries exceeded: a link or path problem)"),
    (re.compile(r"Failed to exchange data between server and clients"), "exchange",
     "server and client could not exchange their connection data"),
)


def _key(text):
    return re.sub(r"[^a-z0-9]+", "_", text.strip().lower()).strip("_")


def _number(text):
    """A result cell as int or finite float; None for what is not one (``1.2.3``, ``1e999``, 30 digits)."""
    value = to_int(text)
    return value if value is not None else to_float(text)


def error_of(text):
    """``(kind, message)`` of the first perftest error in ``text``, else ``None``."""
    for pattern, kind, message in _ERRORS:
        found = pattern.search(text or "")
        if found:
            return kind, (message % found.group(1)) if "%s" in message else message
    return None


def raise_for_error(tool, text, cmd=None, rc=None):
    """ToolFailed naming the perftest error found in ``text`` (nothing when there is none)."""
    found = error_of(text)
    if found:
        error = ToolFailed(tool, found[1], cmd=cmd, rc=rc, stdout=clip(text, tail=True) if text else None)
        error.perftest_error = found[0]
        raise error


def _column(name, warn):
    """A column header -> (key, unit)."""
    base, dummy, unit = name.partition("[")
    unit = unit.rstrip("]")
    base = base.strip()
    known = {
        "#bytes": "bytes", "#iterations": "iterations", "BW peak": "bw_peak", "BW average": "bw_average",
        "MsgRate": "msg_rate_mpps", "t_min": "t_min_us", "t_max": "t_max_us", "t_typical": "t_typical_us",
        "t_avg": "t_avg_us", "t_stdev": "t_stdev_us", "99% percentile": "p99_us", "99.9% percentile": "p999_us",
        "tps average": "tps_average",
    }
    if base in known:
        return known[base], unit or None
    if warn is not None:
        warn("perftest: unknown result column %r kept as %r; please report" % (name, _key(base)))
    return _key(base), unit or None


def _address(text):
    """``LID 0xd06 QPN 0x095f PSN … VAddr …`` (commas allowed) -> dict of lower-case keys."""
    tokens = text.replace(",", " ").split()
    out = {}
    for i in range(0, len(tokens) - 1, 2):
        out[_key(tokens[i])] = tokens[i + 1]
    return out


class _State(object):
    def __init__(self):
        self.titles = []
        self.settings = {}
        self.local = []
        self.remote = []
        self.columns = None
        self.units = {}
        self.rows = []
        self.waited = False
        self.last_address = None
        self.unmeasured = 0


def _settings_line(state, line):
    pairs = _SETTING_RE.findall(line)
    if not pairs:
        return False
    for key, value in pairs:
        state.settings.setdefault(_key(key), value)
    return True


def _row(state, line, warn):
    values = line.split()
    if len(values) != len(state.columns):
        if warn is not None:
            warn("perftest: result row with %d values under %d columns skipped: %r"
                 % (len(values), len(state.columns), line.strip()))
        return
    row = {}
    for (key, _unit), value in zip(state.columns, values):
        row[key] = _number(value)
        if row[key] is None or row[key] < 0:
            if warn is not None:
                warn("perftest: result row with an unreadable or negative %s (%r) skipped: %r" % (key, value, line.strip()))
            return
    state.rows.append(row)


def _line(state, line, warn):
    stripped = line.strip()
    if not stripped or _SEPARATOR_RE.match(line):
        return
    if "Waiting for client" in stripped:
        state.waited = True
        return
    address = _ADDRESS_RE.match(line)
    if address:
        record = _address(address.group(2))
        (state.local if address.group(1) == "local" else state.remote).append(record)
        state.last_address = record
        return
    gid = _GID_RE.match(line)
    if gid and state.last_address is not None:
        state.last_address["gid"] = gid.group(1)
        return
    if stripped.startswith("#bytes"):
        state.columns = [_column(name, warn) for name in _COLUMN_RE.findall(stripped)]
        state.units = dict((key, unit) for key, unit in state.columns if unit)
        return
    if state.columns is not None and _ROW_RE.match(line):
        _row(state, line, warn)
        return
    if state.columns is not None and _UNMEASURED_RE.match(line):
        state.unmeasured += 1
        return
    title = _TITLE_RE.match(line)
    if title:
        if title.group(1) not in state.titles:
            state.titles.append(title.group(1))
        return
    if ":" in stripped and _settings_line(state, line):
        return
    if warn is not None:
        warn("perftest: line not understood, ignored: %r" % stripped[:120])


def _settings_facts(settings):
    def integer(key):
        value = settings.get(key)
        if value is None:
            return None
        found = re.match(r"^([0-9]{1,9})", value)
        return int(found.group(1)) if found else None

    return {
        "device": settings.get("device"),
        "qps": integer("number_of_qps"),
        "transport": settings.get("transport_type"),
        "connection": settings.get("connection_type"),
        "link_type": settings.get("link_type"),
        "mtu": integer("mtu"),
        "data_exchange": settings.get("data_ex_method"),
    }


def _summary(kind, rows, unit):
    """The judged row: the largest message of a bandwidth test, the smallest of a latency test (the last such row
    printed), with the bandwidth also in Gb/s."""
    if kind == "bw":
        size = max(row["bytes"] for row in rows)
    else:
        size = min(row["bytes"] for row in rows)
    row = dict([row for row in rows if row["bytes"] == size][-1])
    if kind == "bw" and unit in _BW_UNITS:
        factor = _BW_UNITS[unit] * 8 / 1e9
        for key in ("bw_peak", "bw_average"):
            if key in row:
                row[key + "_gbps"] = row[key] if unit == "Gb/sec" else round(row[key] * factor, 3)
    return row


def parse(text, tool="ib_write_bw", warn=None):
    """Parse one perftest run's output (stdout and stderr together is fine).

    Returns ``{tool, test, kind: bw|lat, waited_for_client, settings, <settings facts>, local, remote, unit, rows,
    result}``. A perftest error line raises ToolFailed; output without a result table raises ParseError.
    """
    text = text or ""
    raise_for_error(tool, text)
    state = _State()
    for line in text.splitlines():
        _line(state, line, warn)
    if state.columns is None:
        raise ParseError(tool, "no result table (no '#bytes' column header) in the output")
    if not state.rows and state.unmeasured:
        raise ParseError(tool, "perftest printed inf/nan instead of measurements (it could not calibrate the CPU clock: "
                               "look for its 'Correlation coefficient' warning)")
    if not state.rows:
        raise ParseError(tool, "the result table has no rows")
    keys = [key for key, _unit in state.columns]
    kind = "bw" if "bw_average" in keys else "lat" if any(key.endswith("_us") for key in keys) else None
    if kind is None:
        raise ParseError(tool, "the result table has neither bandwidth nor latency columns: %s" % ", ".join(keys))
    unit = state.units.get("bw_average") if kind == "bw" else "usec"
    if kind == "bw" and unit not in _BW_UNITS:
        raise ParseError(tool, "unknown bandwidth unit %r (perftest prints MB/sec or Gb/sec)" % unit)
    result = {
        "tool": tool,
        "test": state.titles[0] if state.titles else None,
        "kind": kind,
        "waited_for_client": state.waited,
        "settings": state.settings,
        "local": state.local,
        "remote": state.remote,
        "unit": unit,
        "rows": state.rows,
        "result": _summary(kind, state.rows, unit),
    }
    result.update(_settings_facts(state.settings))
    return result
