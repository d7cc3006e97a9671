# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""ipmi_info's work: ipmitool against one BMC -> the ``bmc`` facts of docs/bmc-facts.md, ``firmware`` and ``log``.

Every call goes through ``_runner.run`` with the password in the environment (argv.py). When ipmitool cannot open
a session ("Unable to establish IPMI v2 / RMCP+ session", the same words for a wrong password and for a BMC that
never answers), one short verbose probe tells the two apart: a BMC that rejected the login is a ``BMCAuthError``
(``auth_failed``) naming the user, a BMC that did not answer a ``BMCUnreachable``
(``unreachable``), as on the Redfish side. So is a first call (``mc info``, ``chassis power status``) that runs
out of time; a later call that does is a ``ToolTimeout``.
"""

import re

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import (
    BMCAuthError, BMCError, BMCUnreachable, ParseError, ToolFailed, ToolTimeout,
)
from ansible_collections.zhisuan.ops.plugins.module_utils._ipmi import argv as ipmi_argv
from ansible_collections.zhisuan.ops.plugins.module_utils._ipmi import facts, parse
from ansible_collections.zhisuan.ops.plugins.module_utils._ipmi.argv import TOOL, Connection
from ansible_collections.zhisuan.ops.plugins.module_utils._runner import first_line, run, tool_failed

_NO_SESSION = re.compile(r"Unable to establish (IPMI v2 / RMCP\+|LAN) session|Unable to establish IPMI v1\.5")
# What `ipmitool -v` says when the BMC answered but refused the login (lanplus RAKP, lan activate session).
_REJECTED = re.compile(r"RAKP \d[^\n]*(invalid|error[^\n]*)|unauthorized name|invalid (user ?name|password)|"
                       r"insufficient resources for session|Activate Session error[^\n]*", re.I)
_PROBE_TIMEOUT = 10


def _ignore(msg):
    pass


def _classify(conn, exc, command):
    """A ToolFailed that says "Unable to establish … session" -> the BMC refused the login, or did not answer."""
    argv, env = ipmi_argv.command(conn, ipmi_argv.MC_INFO, extra=("-v", "-N", "1", "-R", "1"))
    try:
        probe = run(argv, timeout=min(conn.timeout, _PROBE_TIMEOUT), tool=TOOL, env=env, ok_rcs=None)
        said = probe.stdout + "\n" + probe.stderr
    except ToolTimeout:
        said = ""
    rejected = _REJECTED.search(said)
    if rejected:
        return BMCAuthError(TOOL, "the BMC at %s refused the session for user %r: %s (check bmc_username and "
                            "bmc_password)" % (conn.target, conn.username, rejected.group(0).strip()),
                            cmd=exc.cmd, rc=exc.rc, stdout=exc.stdout, stderr=exc.stderr)
    if "Get Auth Capabilities error" in said or "No response" in said or not said.strip():
        return BMCUnreachable(TOOL, "no answer from the BMC at %s (ipmitool %s: %s)" % (conn.target, command, exc.detail),
                              cmd=exc.cmd)
    return BMCError(TOOL, "could not open a session with the BMC at %s: %s" % (conn.target, exc.detail),
                    cmd=exc.cmd, rc=exc.rc, stdout=exc.stdout, stderr=exc.stderr)


def ipmitool(conn, args, ok_rcs=(0,), first=False):
    """Run ``ipmitool <connection> <args>``; returns the CmdResult.

    Raises BMCAuthError / BMCUnreachable / BMCError when no session could be opened, BMCUnreachable when the
    ``first`` call runs out of time (ToolTimeout for a later one), ToolFailed for a command the BMC refused.
    """
    argv, env = ipmi_argv.command(conn, args)
    command = " ".join(args)
    try:
        return run(argv, timeout=conn.timeout, tool=TOOL, env=env, ok_rcs=ok_rcs)
    except ToolTimeout as exc:
        error = BMCUnreachable if first else ToolTimeout
        raise error(TOOL, "no answer from the BMC at %s within %s s (ipmitool %s; process group killed)"
                    % (conn.target, conn.timeout, command), cmd=exc.cmd)
    except ToolFailed as exc:
        if _NO_SESSION.search((exc.stderr or "") + (exc.stdout or "")):
            raise _classify(conn, exc, command)
        raise


def power_status(conn, first=False):
    """``on`` | ``off`` from ``chassis power status``."""
    return parse.parse_power_status(ipmitool(conn, ipmi_argv.POWER_STATUS, first=first).stdout)


MAX_NAMED = 5


def not_understood(command, messages):
    """The ``errors`` entry for the lines and fields of one command's output that its reader could not read (each
    warned): how many, and the first ones named. None when there were none."""
    if not messages:
        return None
    more = len(messages) - MAX_NAMED
    named = "; ".join(messages[:MAX_NAMED]) + ("; … %d more" % more if more > 0 else "")
    return {"resource": "ipmitool " + command,
            "error": "%d %s of the output not read (the rest was): %s"
                     % (len(messages), "line or field" if len(messages) == 1 else "lines or fields", named)}


def _read(conn, args, parser, errors, warn, ok_rcs=(0,)):
    """Run and parse one secondary command; a failure or unreadable output is recorded in ``errors`` (None).

    ``parser(result, warn)``: what it warns (a line it could not read, a field it did not understand) is passed on
    to ``warn`` and counted in one ``errors`` entry for the command, so the facts say that part of the output was
    not read; the records it read are kept.
    """
    seen = []

    def tally(message):
        seen.append(message)
        warn(message)

    try:
        result = ipmitool(conn, args, ok_rcs=ok_rcs)
        parsed = parser(result, tally)
    except (BMCError, ToolTimeout):
        raise
    except (ToolFailed, ParseError) as exc:
        errors.append({"resource": "ipmitool " + " ".join(args), "error": exc.message})
        return None
    entry = not_understood(" ".join(args), seen)
    if entry:
        errors.append(entry)
    return parsed


def collect(conn, warn=_ignore):
    """One BMC's facts: ``{"bmc": …, "firmware": […], "log": […]}`` (docs/bmc-facts.md, protocol ipmi)."""
    mc = parse.parse_mc_info(ipmitool(conn, ipmi_argv.MC_INFO, first=True).stdout, warn=warn)
    errors = []
    chassis = _read(conn, ipmi_argv.CHASSIS_STATUS, lambda r, w: parse.parse_chassis_status(r.stdout, warn=w), errors,
                    warn)
    fru = _read(conn, ipmi_argv.FRU_PRINT, _fru, errors, warn, ok_rcs=None)
    sensors = _read(conn, ipmi_argv.SENSOR, lambda r, w: parse.parse_sensor(r.stdout, warn=w), errors, warn)
    sdr = _read(conn, ipmi_argv.SDR_ELIST, lambda r, w: parse.parse_sdr_elist(r.stdout, warn=w), errors, warn)
    sel = _read(conn, ipmi_argv.SEL_ELIST,
                lambda r, w: parse.parse_sel_elist(r.stdout, warn=w, utc=True, stderr=r.stderr), errors, warn)
    bmc = facts.build(conn.address, mc, chassis, fru, sensors, sdr, errors)
    return {"bmc": bmc, "firmware": facts.firmware(mc), "log": facts.log(sel)}


def _fru(result, warn):
    """``fru print`` exits 1 when one FRU device cannot be read, after printing the others: keep what it printed."""
    devices = parse.parse_fru_print(result.stdout, warn=warn)
    if result.rc != 0 and not any(device["fields"] for device in devices):
        raise tool_failed(result, TOOL, "fru print exited with rc %s: %s" % (result.rc, first_line(result.stderr, result.stdout)))
    return devices


def collect_ipmi_facts(module):
    return collect(Connection.from_params(module.params), warn=module.warn)
